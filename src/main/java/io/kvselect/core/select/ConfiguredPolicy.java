package io.kvselect.core.select;

import java.util.List;

/**
 * The score-and-pick stage that follows each request's effective configuration ({@code policy},
 * or {@code router_config_override.policy}): the policy a {@link PolicyRegistry} holds under that
 * name ({@code kv} for an unknown one). The service's default pick stage. Thread-safe: the
 * registry is immutable and every policy in it is thread-safe.
 */
public final class ConfiguredPolicy implements SelectionPolicy {

  public static final String NAME = "configured";

  private final PolicyRegistry registry;

  /** Over {@link PolicyRegistry#standard()}. */
  public ConfiguredPolicy() {
    this(PolicyRegistry.standard());
  }

  public ConfiguredPolicy(PolicyRegistry registry) {
    this.registry = registry;
  }

  @Override
  public String name() {
    return NAME;
  }

  /** The delegate for a policy name ({@code kv} for an unknown one). */
  public SelectionPolicy delegate(String policyName) {
    return registry.resolve(policyName);
  }

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    return delegate(ctx.config().selectionPolicy().name()).choose(candidates, ctx);
  }

  @Override
  public int[] rankOthers(List<Candidate> candidates, int chosen, PolicyContext ctx) {
    return delegate(ctx.config().selectionPolicy().name()).rankOthers(candidates, chosen, ctx);
  }
}
