package io.kvselect.core.service;

import java.util.SortedMap;

/**
 * Mooncake-style overlap of the selected worker, in tokens and cumulative over tiers:
 * {@code gpu} = device, {@code cpu} = device + host, {@code disk} = all tiers; each is the max over
 * the worker's ranks. {@code dp} maps every rank of the worker to its device tokens.
 */
public record OverlapSummary(
    long longestMatched, long gpu, SortedMap<Integer, Long> dp, long cpu, long disk) {}
