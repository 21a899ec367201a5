package io.kvselect.core.events;

import java.io.IOException;

/**
 * The fields of one event while it is being decoded, shared by the array (by position) and map
 * (by name) layouts; {@link #toStored} and {@link #toRemoved} check what is required and build the
 * record. Map events are read key by key in wire order; {@code extra_keys} uses the
 * {@code lora_name} seen before it (vLLM writes {@code lora_name} first).
 *
 * <p>Not thread-safe; one instance per event.
 */
final class EventFields {

  /** Trailing metadata positions after {@code extra_keys} / {@code medium}, in wire order. */
  static final int TRAILING_FIELDS = 4;

  String type;
  long[] blockHashes;
  boolean hasParent;
  long parentHash;
  int[] tokenIds;
  boolean eagle;
  int blockSize = -1;
  String medium;
  String loraName;
  String cacheSalt;
  long[][] mmHashes;
  Integer groupIdx;
  String kvCacheSpecKind;
  String locality;

  /** Reads a map event (the reader is positioned on its map header). */
  static EventFields read(WireReader r) throws IOException, MalformedEventException {
    EventFields f = new EventFields();
    int n = r.mapHeader("event");
    for (int i = 0; i < n; i++) {
      String key = r.string("event key");
      switch (key) {
        case "type" -> f.type = r.string("type");
        case "block_hashes" -> f.blockHashes = r.hashes("block_hashes");
        case "parent_block_hash" -> f.parentHash(r);
        case "token_ids" -> f.tokenIds(r);
        case "block_size" -> f.blockSize(r);
        case "medium" -> f.medium = KvEventDecoder.emptyToNull(r.optionalString("medium"));
        case "lora_name" -> f.loraName = KvEventDecoder.emptyToNull(r.optionalString(key));
        case "cache_salt", "cache_namespace" ->
            f.cacheSalt = KvEventDecoder.emptyToNull(r.optionalString(key));
        case "extra_keys" -> f.mmHashes = r.extraKeys(f.loraName);
        case "group_idx" -> f.groupIdx = r.lenientIndex();
        case "kv_cache_spec_kind" -> f.kvCacheSpecKind = r.lenientString();
        case "locality" -> f.locality = r.lenientString();
        default -> r.skip();
      }
    }
    return f;
  }

  void parentHash(WireReader r) throws IOException, MalformedEventException {
    hasParent = !r.tryNil();
    parentHash = hasParent ? r.hash("parent_block_hash") : 0L;
  }

  void tokenIds(WireReader r) throws IOException, MalformedEventException {
    boolean[] bigram = new boolean[1];
    tokenIds = r.tokenIds(bigram);
    eagle = bigram[0];
  }

  void blockSize(WireReader r) throws IOException, MalformedEventException {
    blockSize = (int) r.integer("block_size", 0, Integer.MAX_VALUE);
  }

  /**
   * Reads up to {@link #TRAILING_FIELDS} positional fields (group_idx, kv_cache_spec_kind,
   * kv_cache_spec_sliding_window, locality) of the {@code available} elements left; returns how
   * many it consumed.
   */
  int trailingMetadata(WireReader r, int available) throws IOException, MalformedEventException {
    int n = Math.min(Math.max(available, 0), TRAILING_FIELDS);
    for (int i = 0; i < n; i++) {
      switch (i) {
        case 0 -> groupIdx = r.lenientIndex();
        case 1 -> kvCacheSpecKind = r.lenientString();
        case 3 -> locality = r.lenientString();
        default -> r.skip();
      }
    }
    return n;
  }

  /** The event, or null for an unknown {@code type} (dropped, the batch is kept). */
  KvEvent toEvent(WireReader r) throws MalformedEventException {
    if (type == null) {
      throw r.malformed("map event without \"type\"");
    }
    return switch (type) {
      case "BlockStored" -> toStored(r);
      case "BlockRemoved" -> {
        if (blockHashes == null) {
          throw r.malformed("BlockRemoved without block_hashes");
        }
        yield toRemoved();
      }
      case "AllBlocksCleared" -> new AllBlocksCleared();
      default -> null;
    };
  }

  BlockStored toStored(WireReader r) throws MalformedEventException {
    if (blockHashes == null || tokenIds == null || blockSize < 0) {
      throw r.malformed("BlockStored needs block_hashes, token_ids and block_size");
    }
    return new BlockStored(
        blockHashes,
        hasParent,
        parentHash,
        tokenIds,
        blockSize,
        medium,
        loraName,
        cacheSalt,
        mmHashes,
        groupIdx,
        kvCacheSpecKind,
        locality,
        eagle);
  }

  BlockRemoved toRemoved() {
    return new BlockRemoved(blockHashes, medium, groupIdx, locality, kvCacheSpecKind);
  }
}
