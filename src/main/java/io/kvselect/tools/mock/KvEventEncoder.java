package io.kvselect.tools.mock;

import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePacker;

/**
 * Encodes a {@link KvEventBatch} as vLLM's msgpack payload {@code [ts, events, rank]}, byte for byte
 * as msgspec writes it (kv_events_wire.md 1.4 and the vectors of section 4): float64 timestamp,
 * shortest integer forms, block hashes as unsigned 64-bit.
 *
 * <p>Array form ({@link WireFormat#ARRAY}): {@code BlockStored} = {@code [tag, block_hashes,
 * parent_block_hash, token_ids, block_size, lora_id, medium, lora_name, extra_keys]},
 * {@code BlockRemoved} = {@code [tag, block_hashes, medium]}, {@code AllBlocksCleared} =
 * {@code [tag]}. Map form ({@link WireFormat#MAP}, vLLM 0.26): the same fields by name after
 * {@code "type"}, plus {@code group_idx} and {@code kv_cache_spec_kind} on stores and
 * {@code group_idx} on removals.
 *
 * <p>{@code extra_keys} has one entry per block: nil, or the list of the block's extra keys (the
 * LoRA name, then the cache salt on the first block of a chain), as vLLM's block hash inputs.
 * Stateless and thread-safe.
 */
public final class KvEventEncoder {

  private KvEventEncoder() {}

  /** The msgpack payload of {@code batch} in {@code wire} form. */
  public static byte[] encode(KvEventBatch batch, WireFormat wire) {
    try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
      p.packArrayHeader(batch.dpRank() == null ? 2 : 3);
      p.packDouble(batch.timestamp());
      p.packArrayHeader(batch.events().size());
      for (KvEvent e : batch.events()) {
        if (wire == WireFormat.MAP) {
          packMap(p, e);
        } else {
          packArray(p, e);
        }
      }
      if (batch.dpRank() != null) {
        p.packInt(batch.dpRank());
      }
      return p.toByteArray();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void packArray(MessagePacker p, KvEvent e) throws IOException {
    if (e instanceof BlockStored s) {
      p.packArrayHeader(9);
      p.packString("BlockStored");
      packHashes(p, s.blockHashes());
      packParent(p, s);
      packTokens(p, s.tokenIds());
      p.packInt(s.blockSize());
      p.packNil();
      packNullable(p, s.medium());
      packNullable(p, s.loraName());
      packExtraKeys(p, s);
    } else if (e instanceof BlockRemoved r) {
      p.packArrayHeader(3);
      p.packString("BlockRemoved");
      packHashes(p, r.blockHashes());
      packNullable(p, r.medium());
    } else if (e instanceof AllBlocksCleared) {
      p.packArrayHeader(1);
      p.packString("AllBlocksCleared");
    }
  }

  private static void packMap(MessagePacker p, KvEvent e) throws IOException {
    if (e instanceof BlockStored s) {
      p.packMapHeader(s.kvCacheSpecKind() == null ? 10 : 11);
      key(p, "type").packString("BlockStored");
      packHashes(key(p, "block_hashes"), s.blockHashes());
      packParent(key(p, "parent_block_hash"), s);
      packTokens(key(p, "token_ids"), s.tokenIds());
      key(p, "block_size").packInt(s.blockSize());
      key(p, "lora_id").packNil();
      packNullable(key(p, "medium"), s.medium());
      packNullable(key(p, "lora_name"), s.loraName());
      packExtraKeys(key(p, "extra_keys"), s);
      key(p, "group_idx").packInt(s.groupIdx() == null ? 0 : s.groupIdx());
      if (s.kvCacheSpecKind() != null) {
        key(p, "kv_cache_spec_kind").packString(s.kvCacheSpecKind());
      }
    } else if (e instanceof BlockRemoved r) {
      p.packMapHeader(4);
      key(p, "type").packString("BlockRemoved");
      packHashes(key(p, "block_hashes"), r.blockHashes());
      packNullable(key(p, "medium"), r.medium());
      key(p, "group_idx").packInt(r.groupIdx() == null ? 0 : r.groupIdx());
    } else if (e instanceof AllBlocksCleared) {
      p.packMapHeader(1);
      key(p, "type").packString("AllBlocksCleared");
    }
  }

  private static MessagePacker key(MessagePacker p, String k) throws IOException {
    return p.packString(k);
  }

  private static void packHashes(MessagePacker p, long[] hashes) throws IOException {
    p.packArrayHeader(hashes.length);
    for (long h : hashes) {
      packHash(p, h);
    }
  }

  /** A hash as msgpack unsigned int (uint64 {@code 0xcf} when the top bit is set). */
  static void packHash(MessagePacker p, long h) throws IOException {
    if (h >= 0) {
      p.packLong(h);
    } else {
      p.packBigInteger(new BigInteger(Long.toUnsignedString(h)));
    }
  }

  private static void packParent(MessagePacker p, BlockStored s) throws IOException {
    if (s.hasParent()) {
      packHash(p, s.parentHash());
    } else {
      p.packNil();
    }
  }

  private static void packTokens(MessagePacker p, int[] tokens) throws IOException {
    p.packArrayHeader(tokens.length);
    for (int t : tokens) {
      p.packLong(Integer.toUnsignedLong(t));
    }
  }

  private static void packNullable(MessagePacker p, String s) throws IOException {
    if (s == null) {
      p.packNil();
    } else {
      p.packString(s);
    }
  }

  private static void packExtraKeys(MessagePacker p, BlockStored s) throws IOException {
    int blocks = s.blockHashes().length;
    p.packArrayHeader(blocks);
    for (int i = 0; i < blocks; i++) {
      List<String> keys = new ArrayList<>(2);
      if (s.loraName() != null) {
        keys.add(s.loraName());
      }
      if (s.cacheSalt() != null && i == 0 && !s.hasParent()) {
        keys.add(s.cacheSalt());
      }
      if (keys.isEmpty()) {
        p.packNil();
        continue;
      }
      p.packArrayHeader(keys.size());
      for (String k : keys) {
        p.packString(k);
      }
    }
  }
}
