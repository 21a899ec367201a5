package io.kvselect.core.catalog;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where the selection service publishes a catalog change it applied (a worker registered,
 * replaced, patched or removed): the asynchronous seam of a cluster-wide worker catalog. The
 * service applies the change to its own catalog first and answers once the change is published;
 * peers apply it through the same service call. {@link #LOCAL} is the single node.
 *
 * <p>Threading: called from any thread, after the catalog writer released its lock; must not
 * block.
 */
@FunctionalInterface
public interface CatalogSync {

  /** The single-node implementation: every change is complete on return. */
  CatalogSync LOCAL = c -> CompletableFuture.completedFuture(null);

  CompletionStage<Void> publish(CatalogChange change);

  /** One applied catalog change. */
  sealed interface CatalogChange {

    /** A worker record was inserted or replaced (POST or PATCH); {@code spec} is the new one. */
    record Upserted(WorkerSpec spec) implements CatalogChange {}

    /** A worker was removed. */
    record Removed(long workerId) implements CatalogChange {}
  }
}
