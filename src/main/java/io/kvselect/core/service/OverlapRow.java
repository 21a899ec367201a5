package io.kvselect.core.service;

/**
 * One {@code /overlap_scores} row, in blocks. {@code hostPinnedBlocks} and {@code diskBlocks}
 * are cumulative (device + extensions); {@code diskExtensionBlocks} includes the external tier.
 */
public record OverlapRow(
    long workerId,
    int dpRank,
    int deviceBlocks,
    int hostPinnedBlocks,
    int diskBlocks,
    int hostPinnedExtensionBlocks,
    int diskExtensionBlocks,
    double routerCreditBlocks) {}
