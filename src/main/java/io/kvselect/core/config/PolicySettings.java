package io.kvselect.core.config;

import io.kvselect.core.kvc.KvcParams;
import java.util.List;
import java.util.Objects;

/**
 * The selection policy of a partition ({@code policy}: {@code kv} by default, {@code kvc},
 * {@code sticky}, {@code least_loaded}, {@code round_robin}) and the KVC-Router's parameters
 * (used when the policy is {@code kvc}). Immutable.
 */
public record PolicySettings(String name, KvcParams kvc) {

  /** Every accepted policy name. */
  public static final List<String> NAMES =
      List.of("kv", "kvc", "sticky", "least_loaded", "round_robin");

  public PolicySettings {
    Objects.requireNonNull(kvc, "kvc");
    if (!NAMES.contains(name)) {
      throw new IllegalArgumentException("policy must be one of " + NAMES + ", got " + name);
    }
  }

  public static PolicySettings defaults() {
    return new PolicySettings("kv", KvcParams.defaults());
  }

  public PolicySettings withName(String n) {
    return new PolicySettings(n, kvc);
  }

  public PolicySettings withKvc(KvcParams k) {
    return new PolicySettings(name, k);
  }
}
