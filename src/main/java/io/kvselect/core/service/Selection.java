package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;
import java.util.List;

/**
 * The answer to a selection. Booking fields ({@code sequenceHashes}, {@code islTokens},
 * {@code trackPrefillTokens}, {@code kvHint}) are set only when the selection was booked;
 * {@code workerLoad} only for advisory selects; {@code decodeBusy} only when a threshold and the
 * worker's capacity are known; {@code kvc} only for selections the KVC-Router dispatched.
 * {@code alternatives} are the other ranks the request could have landed on (after the filters),
 * best first by the policy's own cost ({@code SelectionPolicy.rankOthers}); empty when the
 * filters left one rank (a session's bound worker, a pinned worker) or the selection did not run
 * the pipeline. Immutable.
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
    io.kvselect.core.kvc.KvcAnswer kvc,
    List<WorkerRank> alternatives) {

  public Selection {
    // not copied: the selector passes an unmodifiable view that ranks the others only when read
    // (the endpoint picker's fallbacks), so a selection nobody asks for them never ranks them
    alternatives =
        alternatives == null ? List.of() : java.util.Collections.unmodifiableList(alternatives);
  }

  /** A selection without a {@code kvc} block. */
  public Selection(
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
      KvHint kvHint) {
    this(
        selectionId,
        booked,
        sequenceHashes,
        islTokens,
        trackPrefillTokens,
        partition,
        workerId,
        dpRank,
        endpoint,
        blockSize,
        overlap,
        effectivePrefillTokens,
        potentialDecodeBlocks,
        decodeBusy,
        workerLoad,
        kvHint,
        null,
        List.of());
  }

  /** This selection with a {@code kvc} block. */
  public Selection withKvc(io.kvselect.core.kvc.KvcAnswer k) {
    return new Selection(
        selectionId,
        booked,
        sequenceHashes,
        islTokens,
        trackPrefillTokens,
        partition,
        workerId,
        dpRank,
        endpoint,
        blockSize,
        overlap,
        effectivePrefillTokens,
        potentialDecodeBlocks,
        decodeBusy,
        workerLoad,
        kvHint,
        k,
        alternatives);
  }
}
