package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.StoredBlock;
import java.util.List;

/** One partition of {@code /dump}: its block size and every indexed block, replayable in order. */
public record PartitionDump(PartitionKey partition, Integer blockSize, List<StoredBlock> blocks) {}
