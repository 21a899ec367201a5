package io.kvselect.core.select;

import java.util.List;

/**
 * The policy named by the request's effective configuration ({@code policy}, or
 * {@code router_config_override.policy}): one instance of each of {@code kv}, {@code sticky},
 * {@code least_loaded}, {@code round_robin} and {@code kvc} (its synchronous Route form, for
 * requests the KVC dispatcher does not take). The service's default policy. Thread-safe: every
 * delegate is.
 */
public final class ConfiguredPolicy implements SelectionPolicy {

  public static final String NAME = "configured";

  private final KvCostPolicy kv = new KvCostPolicy();
  private final StickyPolicy sticky = new StickyPolicy();
  private final LeastLoadedPolicy leastLoaded = new LeastLoadedPolicy();
  private final RoundRobinPolicy roundRobin = new RoundRobinPolicy();
  private final KvcRoutePolicy kvc = new KvcRoutePolicy();

  @Override
  public String name() {
    return NAME;
  }

  /** The delegate for a policy name ({@code kv} for an unknown one). */
  public SelectionPolicy delegate(String policyName) {
    return switch (policyName) {
      case StickyPolicy.NAME -> sticky;
      case LeastLoadedPolicy.NAME -> leastLoaded;
      case RoundRobinPolicy.NAME -> roundRobin;
      case KvcRoutePolicy.NAME -> kvc;
      default -> kv;
    };
  }

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    return delegate(ctx.config().selectionPolicy().name()).choose(candidates, ctx);
  }
}
