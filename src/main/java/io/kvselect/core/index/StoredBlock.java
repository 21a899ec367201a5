package io.kvselect.core.index;

/**
 * One (rank, tier, block) entry as emitted by {@link BlockIndex#dump()}: replaying the entries in
 * order through {@link BlockIndex#store} rebuilds the same index. {@code hasParent} is false for
 * a block at the root (position 0).
 */
public record StoredBlock(
    WorkerRank rank,
    StorageTier tier,
    boolean hasParent,
    long parentExternalHash,
    long externalHash,
    long localHash) {}
