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

  /**
   * One applied catalog change, with the version it was made at ({@link CatalogVersion}): a
   * receiver applies it only when it is newer than what it holds for the worker.
   */
  sealed interface CatalogChange {

    long workerId();

    CatalogVersion version();

    /** A worker record was inserted or replaced (POST or PATCH); {@code spec} is the new one. */
    record Upserted(WorkerSpec spec, CatalogVersion version) implements CatalogChange {

      /** An unstamped upsert ({@link CatalogVersion#ZERO}: older than every stamped change). */
      public Upserted(WorkerSpec spec) {
        this(spec, CatalogVersion.ZERO);
      }

      @Override
      public long workerId() {
        return spec.workerId();
      }
    }

    /** A worker was removed. */
    record Removed(long workerId, CatalogVersion version) implements CatalogChange {

      /** An unstamped removal ({@link CatalogVersion#ZERO}'s stamp, the removal tie). */
      public Removed(long workerId) {
        this(workerId, new CatalogVersion(0, CatalogVersion.REMOVAL_TIE));
      }
    }
  }
}
