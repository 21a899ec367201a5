package io.kvselect.core.service;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.BlockIndex;
import java.util.function.Function;

/** The node's default read of the event index's shards, in place. */
class DirectIndexShardsTest extends IndexShardsContract {

  @Override
  protected IndexShards shards(Function<PartitionKey, BlockIndex> indexOf) {
    return IndexShards.direct(indexOf);
  }
}
