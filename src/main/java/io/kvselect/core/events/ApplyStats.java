package io.kvselect.core.events;

/**
 * What {@link EventApplier#apply} did with one batch.
 *
 * @param storedBlocks blocks handed to successful {@code store} calls (re-stores of known blocks
 *     included: they are idempotent in the index)
 * @param removedBlocks hashes handed to {@code remove} (hashes the rank did not hold are counted
 *     too; the index skips them)
 * @param cleared {@code AllBlocksCleared} events applied
 * @param rejectedStores stores rejected by the index because the parent hash was unknown
 * @param droppedEvents events not applied: non-local locality, a non-main KV-cache group, duplicate
 *     hashes in one store, or a store with no block left to index
 * @param droppedBlocks blocks of otherwise applied or dropped stores that could not be indexed
 *     (block size differs from the registered one, or token_ids too short)
 */
public record ApplyStats(
    long storedBlocks,
    long removedBlocks,
    long cleared,
    long rejectedStores,
    long droppedEvents,
    long droppedBlocks) {

  public static final ApplyStats NONE = new ApplyStats(0, 0, 0, 0, 0, 0);

  /** Component-wise sum, for running totals. */
  public ApplyStats plus(ApplyStats o) {
    return new ApplyStats(
        storedBlocks + o.storedBlocks,
        removedBlocks + o.removedBlocks,
        cleared + o.cleared,
        rejectedStores + o.rejectedStores,
        droppedEvents + o.droppedEvents,
        droppedBlocks + o.droppedBlocks);
  }
}
