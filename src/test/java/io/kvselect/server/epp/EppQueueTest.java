package io.kvselect.server.epp;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse.ServingStatus;
import io.grpc.health.v1.HealthGrpc;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The picker in front of the router queue: a request shed after waiting is an immediate 429 with
 * the queue's details; a client that goes away while queued leaves the queue; readiness follows
 * the node's (no worker: NOT_SERVING).
 */
class EppQueueTest {

  /** 40 characters of prompt at 16 batched tokens: one booking makes the worker busy at threshold 1.0. */
  private static final String BODY = "{\"model\":\"q\",\"prompt\":\"" + "z".repeat(40) + "\"}";

  @Test
  void aShedRequestIs429WithTheQueuesDetails() throws Exception {
    try (RenderServer render = new RenderServer();
        EppNode node =
            new EppNode(
                Map.of("DYN_ROUTER_QUEUE_THRESHOLD", "1.0"),
                "--epp-render-url",
                render.url(),
                "--router-queue-timeout-secs",
                "0.3")) {
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> readiness(node) == ServingStatus.NOT_SERVING);
      node.worker(1, "q", "http://127.0.0.1:18001", "\"max_num_batched_tokens\":16");
      await().atMost(Duration.ofSeconds(10)).until(() -> readiness(node) == ServingStatus.SERVING);
      EnvoyStream first = node.stream();
      first.headers("/v1/completions", Map.of(), null, false).body(BODY, true);
      assertTrue(first.next().hasRequestHeaders());
      EnvoyStream shed = node.stream();
      shed.headers("/v1/completions", Map.of(), null, false).body(BODY, true);
      ProcessingResponse r = shed.next();
      EppProtocolTest.assertImmediate(r, 429, "");
      JsonNode body = EppNode.JSON.readTree(r.getImmediateResponse().getBody().toByteArray());
      assertEquals("timeout", body.get("details").get("limit_kind").asText(), body.toString());

      EnvoyStream leaving = node.stream();
      leaving.headers("/v1/completions", Map.of(), null, false).body(BODY, true);
      await().atMost(Duration.ofSeconds(5)).until(() -> pending(node) == 1);
      leaving.cancel();
      await().atMost(Duration.ofSeconds(5)).until(() -> pending(node) == 0);
      first.cancel();
      await().atMost(Duration.ofSeconds(10)).until(() -> node.active("q", 1) == 0);
    }
  }

  private static ServingStatus readiness(EppNode node) {
    return HealthGrpc.newBlockingStub(node.channel)
        .withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS)
        .check(HealthCheckRequest.newBuilder().setService("readiness").build())
        .getStatus();
  }

  private static int pending(EppNode node) throws Exception {
    for (JsonNode part : EppNode.JSON.readTree(node.http("GET", "/loads", null).body())) {
      if (part.get("model_name").asText().equals("q")) {
        return part.get("pending_count").asInt();
      }
    }
    return 0;
  }
}
