package io.kvselect.server;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.server.config.NodeSettings;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * {@link KvselectNode#drain}: {@code /ready} and new selections answer 503 at once, a request
 * parked in the router queue is answered 503, an in-flight request (a body still uploading) is
 * answered normally, and only then does the node close; bounded by the timeout.
 */
class DrainTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newHttpClient();
  static final String LATE_WORKER =
      "{\"worker_id\": 2, \"endpoint\": \"http://w2\", \"block_size\": 4}";

  private static KvselectNode start() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "0"},
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false", "DYN_ROUTER_QUEUE_THRESHOLD", "1.0"));
    KvselectNode node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    HttpResponse<String> w =
        send(
                node,
                "POST",
                "/workers",
                "{\"worker_id\": 1, \"endpoint\": \"http://w1\", \"block_size\": 4, \"max_num_batched_tokens\": 16}")
            .get();
    assertEquals(201, w.statusCode(), w.body());
    return node;
  }

  static String prompt(String id, int base) {
    StringBuilder t = new StringBuilder();
    for (int i = 0; i < 32; i++) {
      t.append(i == 0 ? "" : ",").append(base + i);
    }
    return "{\"selection_id\":\"" + id + "\",\"token_ids\":[" + t + "]}";
  }

  private static CompletableFuture<HttpResponse<String>> send(
      KvselectNode node, String method, String path, String body) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .timeout(Duration.ofSeconds(60));
    if (body != null) {
      b.header("content-type", "application/json");
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    return CLIENT.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  /** A POST /workers whose headers and first half of the body are sent; {@link #finish} sends the rest. */
  static final class SlowUpload implements AutoCloseable {
    private final Socket socket;
    private final byte[] body;

    SlowUpload(int port, String json) throws IOException {
      body = json.getBytes(StandardCharsets.UTF_8);
      socket = new Socket("127.0.0.1", port);
      socket.setSoTimeout(30_000);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("POST /workers HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                  + body.length
                  + "\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.write(body, 0, body.length / 2);
      out.flush();
    }

    /** Sends the rest of the body and returns the status line of the answer. */
    String finish() throws IOException {
      OutputStream out = socket.getOutputStream();
      out.write(body, body.length / 2, body.length - body.length / 2);
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder line = new StringBuilder();
      for (int c; (c = in.read()) != -1 && c != '\n'; ) {
        line.append((char) c);
      }
      return line.toString().strip();
    }

    @Override
    public void close() throws IOException {
      socket.close();
    }
  }

  @Test
  void drainAnswersParkedRequests503LetsInFlightOnesFinishThenCloses() throws Exception {
    KvselectNode node = start();
    int port = node.port();
    ListAppender<ILoggingEvent> log = capture();
    try (SlowUpload upload = new SlowUpload(port, LATE_WORKER)) {
      assertEquals(
          200, send(node, "POST", "/select_and_reserve", prompt("first", 0)).get().statusCode());
      CompletableFuture<HttpResponse<String>> parked =
          send(node, "POST", "/select_and_reserve", prompt("parked", 100));
      await().atMost(20, TimeUnit.SECONDS).until(() -> node.inFlightRequests() == 2);

      CompletableFuture<Void> drained =
          node.drain(Duration.ofSeconds(60)).toCompletionStage().toCompletableFuture();

      HttpResponse<String> p = parked.get(20, TimeUnit.SECONDS);
      assertEquals(503, p.statusCode(), p.body());
      assertEquals(
          "node is draining; retry on another node", JSON.readTree(p.body()).get("error").asText());
      HttpResponse<String> ready = send(node, "GET", "/ready", null).get(20, TimeUnit.SECONDS);
      assertEquals(503, ready.statusCode(), ready.body());
      HttpResponse<String> select =
          send(node, "POST", "/select", prompt("new", 200)).get(20, TimeUnit.SECONDS);
      assertEquals(503, select.statusCode(), select.body());
      assertEquals(
          "selection service is shutting down", JSON.readTree(select.body()).get("error").asText());
      assertEquals(200, send(node, "GET", "/health", null).get(20, TimeUnit.SECONDS).statusCode());
      // reservations already booked can still be completed while the node drains
      assertEquals(
          200,
          send(node, "POST", "/reservations/first/prefill_complete", "")
              .get(20, TimeUnit.SECONDS)
              .statusCode());
      assertFalse(drained.isDone(), "the drain ended while a request was still in flight");

      assertEquals("HTTP/1.1 201 Created", upload.finish());
      drained.get(30, TimeUnit.SECONDS);
      assertTrue(node.service().worker(2) != null, "the in-flight registration was applied");
      assertThrows(
          ConnectException.class, () -> new Socket("127.0.0.1", port).close(), "still listening");
      assertTrue(
          log.list.stream().anyMatch(e -> e.getFormattedMessage().startsWith("draining:")),
          log.list.toString());
    } finally {
      detach(log);
    }
  }

  @Test
  void theTimeoutBoundsTheDrain() throws Exception {
    KvselectNode node = start();
    ListAppender<ILoggingEvent> log = capture();
    try (SlowUpload upload = new SlowUpload(node.port(), LATE_WORKER)) {
      await().atMost(20, TimeUnit.SECONDS).until(() -> node.inFlightRequests() == 1);
      node.drain(Duration.ofMillis(300))
          .toCompletionStage()
          .toCompletableFuture()
          .get(30, TimeUnit.SECONDS);
      assertTrue(
          log.list.stream()
              .anyMatch(
                  e ->
                      e.getFormattedMessage()
                          .equals(
                              "drain timeout after 300 ms: closing with 1 request(s) still in flight")),
          log.list.toString());
      assertEquals(null, node.service().worker(2));
    } finally {
      detach(log);
    }
  }

  @Test
  void anIdleNodeDrainsAtOnceAndDrainIsIdempotent() throws Exception {
    KvselectNode node = start();
    var first = node.drain(Duration.ofSeconds(60));
    assertTrue(node.draining());
    assertTrue(first == node.drain(Duration.ofSeconds(1)), "a second drain starts another one");
    first.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static ListAppender<ILoggingEvent> capture() {
    ListAppender<ILoggingEvent> a = new ListAppender<>();
    a.start();
    Logger logger =
        ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(KvselectNode.class);
    logger.setLevel(ch.qos.logback.classic.Level.INFO);
    logger.addAppender(a);
    return a;
  }

  private static void detach(ListAppender<ILoggingEvent> a) {
    Logger logger = (Logger) LoggerFactory.getLogger(KvselectNode.class);
    logger.detachAppender(a);
    logger.setLevel(null);
  }
}
