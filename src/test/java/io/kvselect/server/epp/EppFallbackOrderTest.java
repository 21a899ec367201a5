package io.kvselect.server.epp;

import static io.kvselect.server.epp.EnvoyStream.setHeader;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The fallbacks after the pick in {@code x-gateway-destination-endpoint} are the other workers
 * ranked by the selection's own cost, best first, not the catalog's order: a real node
 * (approximate mode, block size 4, {@code --epp-fallbacks 3}), four workers registered in id
 * order, and a gRPC client from Envoy's protos. Each case is set up so that catalog order would
 * give another list.
 */
class EppFallbackOrderTest {

  private static EppNode node;

  @BeforeAll
  static void start() throws Exception {
    node = new EppNode(Map.of(), "--epp-fallbacks", "3");
  }

  @AfterAll
  static void stop() throws Exception {
    if (node != null) {
      node.close();
    }
  }

  private static String ids(int from, int toExclusive) {
    return IntStream.range(from, toExclusive)
        .mapToObj(Integer::toString)
        .collect(Collectors.joining(","));
  }

  private static void reserve(String model, String id, long worker, String tokenIds)
      throws Exception {
    var r =
        node.http(
            "POST",
            "/reservations",
            "{\"selection_id\":\""
                + id
                + "\",\"model_name\":\""
                + model
                + "\",\"worker_id\":"
                + worker
                + ",\"token_ids\":["
                + tokenIds
                + "]}");
    assertEquals(201, r.statusCode(), r.body());
  }

  /** The destinations the picker answers for a completion whose prompt is {@code tokenIds}; the stream then reset. */
  private static List<String> destinations(String model, String tokenIds) throws Exception {
    String body = "{\"model\":\"" + model + "\",\"max_tokens\":1,\"prompt\":[" + tokenIds + "]}";
    EnvoyStream s = node.stream();
    s.headers("/v1/completions", Map.of(), null, false).body(body, true);
    ProcessingResponse h = s.next();
    assertTrue(h.hasRequestHeaders(), h.toString());
    s.next();
    String dest = setHeader(h, "x-gateway-destination-endpoint");
    s.cancel();
    return List.of(dest.split(","));
  }

  @Test
  void theFallbacksFollowTheCachedPrefix() throws Exception {
    String model = "m-fallback-prefix";
    for (int w = 31; w <= 34; w++) {
      node.worker(w, model, "http://127.0.0.1:181" + w);
    }
    // approximate mode indexes each booking's prompt: 32 holds 12 blocks of the prompt, 33 eight,
    // 34 four, 31 none; freed again, so the load is the same everywhere
    reserve(model, "fo-32", 32, ids(1, 49));
    reserve(model, "fo-33", 33, ids(1, 33));
    reserve(model, "fo-34", 34, ids(1, 17));
    for (String id : List.of("fo-32", "fo-33", "fo-34")) {
      assertEquals(200, node.http("DELETE", "/reservations/" + id, null).statusCode());
    }
    List<String> got = destinations(model, ids(1, 65));
    assertEquals(
        List.of("127.0.0.1:18132", "127.0.0.1:18133", "127.0.0.1:18134", "127.0.0.1:18131"),
        got,
        "the pick holds the longest prefix, then the next longest (catalog order lists 31 right after the pick)");
    await().atMost(Duration.ofSeconds(10)).until(() -> node.active(model, 32) == 0);
  }

  @Test
  void theFallbacksFollowTheLoad() throws Exception {
    String model = "m-fallback-load";
    for (int w = 41; w <= 44; w++) {
      node.worker(w, model, "http://127.0.0.1:181" + w);
    }
    // open bookings of prompts unrelated to the request's: 41 carries three, 42 two, 43 one, 44
    // none
    int n = 0;
    for (long w = 41; w <= 43; w++) {
      for (int k = 0; k < 44 - w; k++) {
        n++;
        reserve(model, "fl-" + n, w, ids(1000 * n, 1000 * n + 32));
      }
    }
    List<String> got = destinations(model, ids(1, 33));
    assertEquals(
        List.of("127.0.0.1:18144", "127.0.0.1:18143", "127.0.0.1:18142", "127.0.0.1:18141"),
        got,
        "the least loaded first (catalog order lists 41 right after the pick)");
    for (int i = 1; i <= n; i++) {
      assertEquals(200, node.http("DELETE", "/reservations/fl-" + i, null).statusCode());
    }
  }
}
