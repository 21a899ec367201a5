package io.kvselect.core.events;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The field names and values every KV-event batch repeats, so the decoder returns a shared
 * constant instead of a new {@code String} per key when the payload bytes match one. Immutable
 * after class initialisation; any thread.
 */
final class KnownStrings {

  private static final String[] KNOWN = {
    "ts",
    "events",
    "data_parallel_rank",
    "attn_dp_rank",
    "dp_rank",
    "type",
    "block_hashes",
    "parent_block_hash",
    "token_ids",
    "block_size",
    "medium",
    "lora_name",
    "cache_salt",
    "cache_namespace",
    "extra_keys",
    "group_idx",
    "kv_cache_spec_kind",
    "locality",
    "kv_cache_spec_sliding_window",
    "lora_id",
    "BlockStored",
    "BlockRemoved",
    "AllBlocksCleared",
    "GPU",
    "CPU",
    "DISK",
    "LOCAL",
    "full_attention",
    "mla_attention",
    "sink_full_attention",
    "sliding_window"
  };

  /** {@link #KNOWN} by UTF-8 length: {@code BY_LENGTH[n]} holds the constants of n bytes. */
  private static final String[][] BY_LENGTH;

  private static final byte[][][] BYTES_BY_LENGTH;

  static {
    int max = 0;
    for (String k : KNOWN) {
      max = Math.max(max, k.length());
    }
    List<List<String>> lists = new ArrayList<>();
    for (int i = 0; i <= max; i++) {
      lists.add(new ArrayList<>());
    }
    for (String k : KNOWN) {
      lists.get(k.getBytes(StandardCharsets.UTF_8).length).add(k);
    }
    BY_LENGTH = new String[max + 1][];
    BYTES_BY_LENGTH = new byte[max + 1][][];
    for (int i = 0; i <= max; i++) {
      BY_LENGTH[i] = lists.get(i).toArray(String[]::new);
      BYTES_BY_LENGTH[i] = new byte[BY_LENGTH[i].length][];
      for (int j = 0; j < BY_LENGTH[i].length; j++) {
        BYTES_BY_LENGTH[i][j] = BY_LENGTH[i][j].getBytes(StandardCharsets.UTF_8);
      }
    }
  }

  private KnownStrings() {}

  /**
   * The constant whose UTF-8 bytes are the {@code n} bytes of {@code buf} at {@code from}, or null.
   * The caller has checked that those bytes exist.
   */
  static String match(byte[] buf, int from, int n) {
    if (n >= BY_LENGTH.length) {
      return null;
    }
    byte[][] candidates = BYTES_BY_LENGTH[n];
    for (int i = 0; i < candidates.length; i++) {
      if (sameBytes(buf, from, candidates[i])) {
        return BY_LENGTH[n][i];
      }
    }
    return null;
  }

  private static boolean sameBytes(byte[] buf, int from, byte[] c) {
    for (int k = 0; k < c.length; k++) {
      if (buf[from + k] != c[k]) {
        return false;
      }
    }
    return true;
  }
}
