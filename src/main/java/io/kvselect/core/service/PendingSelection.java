package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;

/**
 * What a {@code /select} with a {@code selection_id} captured for a later replayed booking:
 * exactly the inputs the booking will use, so the replay is pure.
 */
record PendingSelection(
    WorkerRank rank,
    NormalizedPrompt prompt,
    long effectivePrefillTokens,
    Long expectedOutputTokens,
    boolean trackPrefillTokens,
    String sessionId) {

  /** Approximate resident size, as Dynamo counts it (hash arrays plus identifying strings). */
  long approximateBytes(String selectionId, PartitionKey key) {
    long n = 8L * prompt.numBlocks() + 8L * prompt.sequenceHashes().length;
    if (prompt.trackingHashes() != prompt.sequenceHashes()) {
      n += 8L * prompt.trackingHashes().length;
    }
    n += selectionId.length() + key.modelName().length() + key.routingGroup().length();
    if (prompt.loraName() != null) {
      n += prompt.loraName().length();
    }
    return n + (sessionId == null ? 0 : sessionId.length());
  }
}
