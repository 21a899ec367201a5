package io.kvselect.core.config;

/**
 * How this router replica runs among others. Immutable; values are checked by {@link
 * RouterConfigLoader}.
 *
 * @param sync {@code router_replica_sync}: share active-load bookings with the other replicas
 * @param minInitialWorkers {@code min_initial_workers}: workers to wait for before routing
 */
public record ReplicaSettings(boolean sync, int minInitialWorkers) {

  /** Dynamo's defaults. */
  public static final ReplicaSettings DEFAULTS = new ReplicaSettings(false, 0);
}
