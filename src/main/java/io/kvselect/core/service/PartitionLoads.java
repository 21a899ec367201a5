package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import java.util.List;

/** One {@code /loads} row: every schedulable rank's current load, and the router queue (empty). */
public record PartitionLoads(
    PartitionKey partition, List<PotentialLoad> loads, int pendingCount, long pendingIslTokens) {}
