package io.kvselect.server.events;

import io.kvselect.core.index.WorkerRank;

/**
 * Receives the KV-event batches of every subscribed rank, still msgpack-encoded.
 *
 * <p>Threading contract: both methods are called on the ingest's poller threads
 * ({@code kvselect-zmq-<i>}), never on a Vert.x event loop: for a subscription opened under index
 * shard {@code s}, always on the poller that owns {@code s} (see {@link KvEventIngest}), so every
 * rank of one shard is delivered by one thread. Calls for one rank come one at a time, strictly in
 * sequence order: replayed batches before the live batch that revealed the gap, and
 * {@code onReset} before the first batch it precedes (after a publisher restart the numbering
 * starts again below the last delivered seq, right after the reset). Calls for ranks of different
 * shards may run concurrently on different poller threads, so an implementation that shares state
 * across shards must be thread-safe. A poller thread serves many ranks: the sink must hand off
 * quickly (decode and apply, or enqueue) and never block; a slow sink delays every rank on that
 * thread and lets the SUB receive buffers fill up. An exception thrown by the sink is logged and
 * the batch counts as delivered.
 */
public interface BatchSink {

  /**
   * One batch of rank {@code rank}: the publisher's sequence number and the opaque payload
   * (frame 2 of the live message, or the payload frame of a replay reply). The array is not
   * reused by the ingest; the sink may keep it.
   */
  void onBatch(WorkerRank rank, long seq, byte[] payload);

  /**
   * The rank's earlier batches can no longer be trusted (publisher restart, or lost batches that
   * no replay could recover): drop everything learnt from this rank before the next
   * {@link #onBatch}. {@code reason} is a short human-readable text, e.g. {@code "restart"}.
   */
  void onReset(WorkerRank rank, String reason);
}
