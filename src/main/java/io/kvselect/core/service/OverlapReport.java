package io.kvselect.core.service;

import java.util.List;

/** {@code /overlap_scores}: every schedulable rank of the partition, sorted by (worker, rank). */
public record OverlapReport(int blockSize, int numBlocks, List<OverlapRow> workers) {}
