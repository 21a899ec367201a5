package io.kvselect.server.epp;

import static io.kvselect.server.epp.EnvoyStream.setHeader;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Prefill/decode disaggregation under the KVC policy: the destination is the decode worker and,
 * when KVC's answer names a prefill worker, {@code x-prefiller-host-port} (llm-d's header, read
 * by its routing sidecar) names it as {@code host:port}.
 */
class EppDisaggTest {

  @Test
  void theDecodeWorkerIsTheDestinationAndThePrefillWorkerIsNamed() throws Exception {
    try (RenderServer render = new RenderServer();
        EppNode node =
            new EppNode(
                Map.of("KVSELECT_ROUTER_POLICY", "kvc"),
                "--epp-render-url",
                render.url(),
                "--epp-fallbacks",
                "0")) {
      node.worker(1, "pd", "http://127.0.0.1:18201", "\"worker_type\":\"prefill\"");
      node.worker(2, "pd", "http://127.0.0.1:18202", "\"worker_type\":\"decode\"");
      EnvoyStream s = node.stream();
      String body =
          "{\"model\":\"pd\",\"messages\":[{\"role\":\"user\",\"content\":\"split me across two pods\"}]}";
      s.headers("/v1/chat/completions", Map.of("x-session-id", "conv-1"), null, false)
          .body(body, true);
      ProcessingResponse h = s.next();
      assertTrue(h.hasRequestHeaders(), h.toString());
      assertEquals(
          "127.0.0.1:18202", setHeader(h, "x-gateway-destination-endpoint"), "decode worker");
      assertEquals("127.0.0.1:18201", setHeader(h, "x-prefiller-host-port"), "prefill worker");
      s.cancel();
    }
  }
}
