package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;

/**
 * The answer to a selection. Booking fields ({@code sequenceHashes}, {@code islTokens},
 * {@code trackPrefillTokens}, {@code kvHint}) are set only when the selection was booked;
 * {@code workerLoad} only for advisory selects; {@code decodeBusy} only when a threshold and the
 * worker's capacity are known; {@code kvc} only for selections the KVC-Router dispatched.
 */
public record Selection(
    String selectionId,
    boolean booked,
    long[] sequenceHashes,
    long islTokens,
    boolean trackPrefillTokens,
    PartitionKey partition,
    long workerId,
    int dpRank,
    String endpoint,
    int blockSize,
    OverlapSummary overlap,
    long effectivePrefillTokens,
    long potentialDecodeBlocks,
    Boolean decodeBusy,
    WorkerLoad workerLoad,
    KvHint kvHint,
    io.kvselect.core.kvc.KvcAnswer kvc) {

  /** A selection without a {@code kvc} block. */
  public Selection(String selectionId, boolean booked, long[] sequenceHashes, long islTokens,
      boolean trackPrefillTokens, PartitionKey partition, long workerId, int dpRank, String endpoint, int blockSize,
      OverlapSummary overlap, long effectivePrefillTokens, long potentialDecodeBlocks, Boolean decodeBusy,
      WorkerLoad workerLoad, KvHint kvHint) {
    this(selectionId, booked, sequenceHashes, islTokens, trackPrefillTokens, partition, workerId, dpRank, endpoint,
        blockSize, overlap, effectivePrefillTokens, potentialDecodeBlocks, decodeBusy, workerLoad, kvHint, null);
  }

  /** This selection with a {@code kvc} block. */
  public Selection withKvc(io.kvselect.core.kvc.KvcAnswer k) {
    return new Selection(selectionId, booked, sequenceHashes, islTokens, trackPrefillTokens, partition, workerId,
        dpRank, endpoint, blockSize, overlap, effectivePrefillTokens, potentialDecodeBlocks, decodeBusy, workerLoad,
        kvHint, k);
  }
}
