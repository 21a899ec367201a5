package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;

/**
 * A stage a policy may declare before the selection pipeline: it takes the requests it wants
 * (the {@code kvc} policy: a session and no hard target), decides first (which decode worker,
 * whether a prefill worker is needed) and then runs the ordinary pipeline on the request it
 * rewrote, answering with what it adds. A policy declares it by implementing this interface next
 * to {@link io.kvselect.core.select.SelectionPolicy}; {@link SelectionFlow} finds it on the
 * request's resolved policy, and {@link ReservationLifecycle} tells every registered stage when a
 * booking ends or a worker leaves.
 *
 * <p>Implementations own their state behind their own synchronization; they are called
 * concurrently and never with a partition lock held.
 */
interface DispatchStage {

  /** Whether this stage takes {@code req} (its policy is already the request's effective one). */
  boolean takes(SelectRequest req);

  /**
   * Decides and then runs {@code pipeline} (filter, pick, admission, queueing, binding) on the
   * request it rewrote; completes with the selection as answered. {@code reserve}: a booking.
   */
  CompletionStage<Selection> select(
      Partition p,
      RouterConfig cfg,
      SelectRequest req,
      boolean reserve,
      Function<SelectRequest, CompletionStage<Selection>> pipeline);

  /** Reservation {@code id} ended (freed, expired or dropped); unknown ids are ignored. */
  void released(String id);

  /** A worker left the catalog. */
  void removeWorker(WorkerRecord w);
}
