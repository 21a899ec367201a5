package io.kvselect.core.select;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The selection policies a service knows, by configuration name: a policy is one
 * {@link SelectionPolicy} class and one registration ({@link #with}). Every policy declares its
 * score-and-pick stage ({@link SelectionPolicy#choose}); a policy that needs a step before the
 * pipeline (the KVC-Router's dispatch) also implements that stage's interface, which the service
 * looks for on the resolved policy, so the service itself names no policy.
 *
 * <p>The standard registry holds {@code kv} (the default, also answered for an unknown name),
 * {@code kvc} (its synchronous Route form; the service registers its dispatching one over it),
 * {@code sticky}, {@code least_loaded} and {@code round_robin}. The accepted names of the
 * configuration are {@code core/config/PolicySettings.NAMES}; a test keeps the two in step.
 *
 * <p>Immutable and thread-safe: {@link #with} returns a new registry. A policy with state (the
 * {@code sticky} pins) keeps it behind its own synchronization, one instance per registry.
 */
public final class PolicyRegistry {

  private final Map<String, SelectionPolicy> byName;

  private PolicyRegistry(Map<String, SelectionPolicy> byName) {
    this.byName = Collections.unmodifiableMap(byName);
  }

  /** {@code kv}, {@code kvc} (Route form), {@code sticky}, {@code least_loaded}, {@code round_robin}. */
  public static PolicyRegistry standard() {
    return new PolicyRegistry(new LinkedHashMap<>())
        .with(new KvCostPolicy())
        .with(new KvcRoutePolicy())
        .with(new StickyPolicy())
        .with(new LeastLoadedPolicy())
        .with(new RoundRobinPolicy());
  }

  /** This registry with {@code policy} registered under its name (replacing one of that name). */
  public PolicyRegistry with(SelectionPolicy policy) {
    Map<String, SelectionPolicy> m = new LinkedHashMap<>(byName);
    m.put(policy.name(), policy);
    return new PolicyRegistry(m);
  }

  /** The policy registered under {@code name}; {@code kv} for an unknown or null name. */
  public SelectionPolicy resolve(String name) {
    SelectionPolicy p = name == null ? null : byName.get(name);
    return p != null ? p : byName.get(KvCostPolicy.NAME);
  }

  /** The registered names, in registration order. */
  public Set<String> names() {
    return byName.keySet();
  }

  /** The registered policies, in registration order. */
  public Collection<SelectionPolicy> policies() {
    return byName.values();
  }

  /** The registered policies that implement {@code stage} (a stage some policies declare). */
  public <T> List<T> stages(Class<T> stage) {
    List<T> out = new ArrayList<>();
    for (SelectionPolicy p : byName.values()) {
      if (stage.isInstance(p)) {
        out.add(stage.cast(p));
      }
    }
    return out;
  }
}
