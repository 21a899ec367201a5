package io.kvselect.core.catalog;

/**
 * Observes catalog changes, so adapters (KV-event ingestion, replication) can follow the set of
 * workers. Called by the catalog writer while it holds the catalog lock, in the order changes
 * are applied (never under a partition lock); implementations must only hand off work and never
 * call back into the service.
 */
public interface CatalogListener {

  /** A worker was added or replaced; {@code previous} is null for a new worker. */
  default void workerUpserted(WorkerRecord previous, WorkerRecord current) {}

  /** A worker left the catalog (deleted, or moved out of its partition before re-adding). */
  default void workerRemoved(WorkerRecord removed) {}
}
