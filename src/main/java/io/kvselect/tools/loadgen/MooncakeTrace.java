package io.kvselect.tools.loadgen;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A Mooncake FAST'25 request trace: one JSON object per line with {@code timestamp}
 * (milliseconds from the start), {@code hash_ids} (prefix-block ids: equal ids at equal positions
 * mean a reusable prefix), {@code input_length} and {@code output_length}. Stateless reader.
 */
final class MooncakeTrace {

  /** One request of the trace, in file order. */
  record Request(long timestampMs, long[] hashIds, long inputLength, long outputLength) {}

  private static final ObjectMapper JSON = new ObjectMapper();

  private MooncakeTrace() {}

  /** Reads every non-blank line of {@code file}; a malformed line fails with its line number. */
  static List<Request> read(Path file) throws IOException {
    try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      List<Request> out = new ArrayList<>();
      String line;
      int n = 0;
      while ((line = in.readLine()) != null) {
        n++;
        if (line.isBlank()) {
          continue;
        }
        out.add(parse(line, n));
      }
      return out;
    }
  }

  private static Request parse(String line, int n) throws IOException {
    JsonNode o = JSON.readTree(line);
    JsonNode ts = o.get("timestamp");
    JsonNode ids = o.get("hash_ids");
    if (ts == null || !ts.canConvertToLong() || ids == null || !ids.isArray()) {
      throw new IOException("line " + n + ": needs a numeric timestamp and a hash_ids array");
    }
    long[] h = new long[ids.size()];
    for (int i = 0; i < h.length; i++) {
      h[i] = ids.get(i).asLong();
    }
    return new Request(
        ts.asLong(), h, o.path("input_length").asLong(0), o.path("output_length").asLong(0));
  }
}
