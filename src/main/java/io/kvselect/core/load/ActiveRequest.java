package io.kvselect.core.load;

import io.kvselect.core.index.WorkerRank;
import it.unimi.dsi.fastutil.longs.LongArrayList;

/**
 * One admitted request: the blocks it holds on its rank and its outstanding prefill tokens.
 * Mutable, owned by the {@link ActiveLoad} that created it.
 */
final class ActiveRequest {

  private static final long[] NO_BLOCKS = new long[0];

  final String id;
  final WorkerRank rank;
  final long[] promptHashes;
  final long admittedAtMillis;
  final long islTokens;
  final Integer expectedOutputTokens;

  /** The node that booked it: null for this node, else the peer's node id. */
  final String origin;

  /** Output blocks, created on the first {@code addOutputBlock}. */
  LongArrayList outputHashes;

  /** Prefill tokens still counted on the rank; 0 once prefill completed or if never tracked. */
  long prefillTokens;

  ActiveRequest(
      String id,
      WorkerRank rank,
      long[] promptHashes,
      long admittedAtMillis,
      long islTokens,
      Integer expectedOutputTokens,
      long prefillTokens,
      String origin) {
    this.id = id;
    this.rank = rank;
    this.promptHashes = promptHashes == null ? NO_BLOCKS : promptHashes.clone();
    this.admittedAtMillis = admittedAtMillis;
    this.islTokens = islTokens;
    this.expectedOutputTokens = expectedOutputTokens;
    this.prefillTokens = prefillTokens;
    this.origin = origin;
  }

  int outputBlockCount() {
    return outputHashes == null ? 0 : outputHashes.size();
  }
}
