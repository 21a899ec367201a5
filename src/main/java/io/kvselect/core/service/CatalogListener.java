package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;

/**
 * Observes catalog changes, so adapters (KV-event ingestion, replication) can follow the set of
 * workers. Called under the service lock, in order; implementations must only hand off work.
 */
public interface CatalogListener {

  /** A worker was added or replaced; {@code previous} is null for a new worker. */
  default void workerUpserted(WorkerRecord previous, WorkerRecord current) {}

  /** A worker left the catalog (deleted, or moved out of its partition before re-adding). */
  default void workerRemoved(WorkerRecord removed) {}
}
