package io.kvselect.tools.sim;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Mooncake FAST'25 trace ({@code {timestamp ms, input_length, output_length, hash_ids}} per
 * line, 512-token blocks). The trace has no session ids; sessions are rebuilt with the heuristic
 * of the trace's notes: request B continues request A when A's {@code hash_ids} minus its last
 * (possibly partial) block is a prefix of B's and that prefix has at least 2 blocks (the latest
 * such A wins). A continuation's prefix is that shared part; other requests start a session. Each
 * turn is sent at its timestamp, or when its predecessor in the session completes if later. Input
 * lengths above {@code inputCap} are cut to it (keeping the head). Deterministic.
 */
final class MooncakeWorkload {

  static final int BLOCK_TOKENS = 512;
  private static final ObjectMapper JSON = new ObjectMapper();

  private MooncakeWorkload() {}

  static Workload read(Path trace, long inputCap, long outputCap, int limit) throws IOException {
    List<long[]> hashes = new ArrayList<>();
    List<long[]> rows = new ArrayList<>();
    try (BufferedReader r = Files.newBufferedReader(trace, StandardCharsets.UTF_8)) {
      String line;
      int n = 0;
      while ((line = r.readLine()) != null && (limit <= 0 || n < limit)) {
        if (line.isBlank()) {
          continue;
        }
        JsonNode j = JSON.readTree(line);
        JsonNode h = j.get("hash_ids");
        if (h == null || !h.isArray() || !j.path("input_length").canConvertToLong()) {
          throw new IOException(
              trace
                  + " line "
                  + (n + 1)
                  + ": need timestamp, input_length, output_length, hash_ids");
        }
        long[] ids = new long[h.size()];
        for (int i = 0; i < ids.length; i++) {
          ids[i] = h.get(i).asLong();
        }
        hashes.add(ids);
        rows.add(
            new long[] {
              j.path("timestamp").asLong(),
              j.get("input_length").asLong(),
              j.path("output_length").asLong()
            });
        n++;
      }
    }
    Map<Long, Integer> chainEnd = new HashMap<>();
    int[] sessionOf = new int[rows.size()];
    long[] prefixTokens = new long[rows.size()];
    List<List<Integer>> sessions = new ArrayList<>();
    for (int i = 0; i < rows.size(); i++) {
      long[] h = hashes.get(i);
      long[] keys = prefixKeys(h);
      int parent = -1;
      int shared = 0;
      for (int k = h.length; k >= 2; k--) {
        Integer a = chainEnd.get(keys[k]);
        if (a != null && samePrefix(hashes.get(a), h, k)) {
          parent = a;
          shared = k;
          break;
        }
      }
      if (parent >= 0) {
        sessionOf[i] = sessionOf[parent];
        prefixTokens[i] = (long) shared * BLOCK_TOKENS;
      } else {
        sessionOf[i] = sessions.size();
        sessions.add(new ArrayList<>());
      }
      sessions.get(sessionOf[i]).add(i);
      if (h.length - 1 >= 2) {
        chainEnd.put(keys[h.length - 1], i);
      }
    }
    List<Workload.Session> out = new ArrayList<>();
    for (int s = 0; s < sessions.size(); s++) {
      List<Workload.Turn> turns = new ArrayList<>();
      List<Integer> idx = sessions.get(s);
      for (int t = 0; t < idx.size(); t++) {
        int i = idx.get(t);
        long[] row = rows.get(i);
        long input = Math.max(1, Math.min(inputCap, row[1]));
        long prefix = Math.min(prefixTokens[i], input - 1);
        long[] blocks = hashes.get(i);
        int keep = (int) Math.min(blocks.length, (input + BLOCK_TOKENS - 1) / BLOCK_TOKENS);
        if (keep < blocks.length) {
          blocks = java.util.Arrays.copyOf(blocks, keep);
        }
        turns.add(
            new Workload.Turn(
                s, t, input, prefix, Math.max(1, Math.min(outputCap, row[2])), 0, row[0], blocks));
      }
      out.add(new Workload.Session(s, rows.get(idx.get(0))[0], List.copyOf(turns)));
    }
    return new Workload("mooncake", BLOCK_TOKENS, List.copyOf(out));
  }

  /** keys[k] identifies the first k ids (a polynomial hash; a match is then checked id by id). */
  private static long[] prefixKeys(long[] h) {
    long[] keys = new long[h.length + 1];
    long v = 1469598103934665603L;
    for (int i = 0; i < h.length; i++) {
      v = (v ^ h[i]) * 1099511628211L + i;
      keys[i + 1] = v;
    }
    return keys;
  }

  private static boolean samePrefix(long[] a, long[] b, int k) {
    if (a.length < k || b.length < k) {
      return false;
    }
    for (int i = 0; i < k; i++) {
      if (a[i] != b[i]) {
        return false;
      }
    }
    return true;
  }
}
