package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvselect.core.error.SelectionException;
import io.kvselect.core.service.SelectRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The token-array fast path decodes exactly what the general parser decodes, or steps aside. */
class TokenArrayScannerTest {

  /** Outcome of a parse: the tokens and session id, or the error code and message. */
  private static String outcome(String body, boolean scan) {
    try {
      SelectRequest r = RequestParsers.select(body.getBytes(StandardCharsets.UTF_8), scan);
      int[] t = r.prompt().tokenIds();
      return "ok "
          + (t == null ? "null" : java.util.Arrays.toString(t))
          + " "
          + r.sessionId()
          + " "
          + r.partition()
          + " "
          + r.selectionId();
    } catch (SelectionException e) {
      return "error " + e.code() + " " + e.getMessage();
    }
  }

  private static void same(String body) {
    assertEquals(outcome(body, false), outcome(body, true), body);
  }

  @Test
  void randomValidBodiesDecodeIdentically() {
    SplittableRandom rnd = new SplittableRandom(5);
    String[] ws = {"", " ", "\n", "\t ", "\r\n  "};
    for (int round = 0; round < 300; round++) {
      int n = rnd.nextInt(0, 300);
      StringBuilder arr = new StringBuilder("[").append(ws[rnd.nextInt(ws.length)]);
      int[] want = new int[n];
      for (int i = 0; i < n; i++) {
        long v = rnd.nextInt(4) == 0 ? rnd.nextLong(0, 0x1_0000_0000L) : rnd.nextInt(0, 50_000);
        want[i] = (int) v;
        arr.append(i == 0 ? "" : ws[rnd.nextInt(ws.length)] + "," + ws[rnd.nextInt(ws.length)])
            .append(v);
      }
      arr.append(ws[rnd.nextInt(ws.length)]).append("]");
      String body =
          "{\"session_id\":\"s\\\"x\","
              + ws[rnd.nextInt(ws.length)]
              + "\"token_ids\""
              + ws[rnd.nextInt(ws.length)]
              + ":"
              + ws[rnd.nextInt(ws.length)]
              + arr
              + ",\"selection_id\":\""
              + round
              + "\"}";
      TokenArrayScanner.Found f = TokenArrayScanner.find(body.getBytes(StandardCharsets.UTF_8));
      assertNotNull(f, body);
      assertArrayEquals(want, f.values());
      same(body);
    }
  }

  @Test
  void oddShapesFallBackToTheGeneralParser() {
    List<String> bodies =
        List.of(
            "{\"token_ids\":[1,2],\"token_ids\":[3]}",
            "{\"token_ids\":[01,2]}",
            "{\"token_ids\":[-1]}",
            "{\"token_ids\":[1.0]}",
            "{\"token_ids\":[1e3]}",
            "{\"token_ids\":[4294967296]}",
            "{\"token_ids\":null}",
            "{\"token_ids\":\"1,2\"}",
            "{\"token_ids\":[1,]}",
            "{\"token_ids\":[1 2]}",
            "{\"token_ids\":[1,2}",
            "{\"token_ids\":[[1]]}",
            "[{\"token_ids\":[1]}]",
            "{\"token_ids\":[1,2] \"x\"}",
            "{\"x\":\"\\\"token_ids\\\":[9]\",\"token_ids\":[1]}",
            "{\"mm_routing_info\":{\"token_ids\":[7],\"routing_token_ids\":[5]},\"token_ids\":[1]}",
            "{\"a\":[{\"token_ids\":[7]}],\"token_ids\":[4,5]}",
            "{\"token_ids\":[]}",
            "{\"token\\u005fids\":[3]}",
            "{\"token_ids\":[1,2,3]",
            "");
    for (String b : bodies) {
      same(b);
    }
    assertNull(
        TokenArrayScanner.find(
            "{\"token_ids\":[1],\"token_ids\":[2]}".getBytes(StandardCharsets.UTF_8)));
    assertNull(TokenArrayScanner.find("{\"token_ids\":[-1]}".getBytes(StandardCharsets.UTF_8)));
  }
}
