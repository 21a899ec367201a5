package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.examples.VertxSelectClient;
import io.kvselect.testing.ChildProcess;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.ext.web.client.WebClient;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The gateway examples of {@code docs/engines.md} against a live node: the standard-library
 * Python client ({@code examples/python/select_client.py}, run by {@code /usr/bin/python3} as a
 * child process) and the Vert.x web client ({@code examples/java}, compiled with the tests and
 * run here). Each selects and books, reports prefill and frees; the second request for the same
 * prompt lands on the same worker with a cached prefix; an unreachable node is one line naming it.
 */
class GatewayClientExamplesTest {

  static final Path PYTHON = Path.of("/usr/bin/python3");
  static final String TOKENS =
      IntStream.rangeClosed(1, 32).mapToObj(Integer::toString).collect(Collectors.joining(","));

  private NodeHarness node;
  private String base;

  @BeforeEach
  void start() throws Exception {
    node = NodeHarness.approximate();
    base = "http://127.0.0.1:" + node.node.port();
    assertEquals(201, node.worker(1).status());
    assertEquals(201, node.worker(2).status());
  }

  @AfterEach
  void stop() throws Exception {
    node.close();
  }

  private List<JsonNode> python(String nodeUrl, int expectedExit, StringBuilder stderr)
      throws Exception {
    try (ChildProcess p =
        ChildProcess.start(
            Path.of("."),
            Path.of("target/examples"),
            "select_client",
            List.of(
                PYTHON.toString(),
                "examples/python/select_client.py",
                "--node",
                nodeUrl,
                "--tokens",
                TOKENS))) {
      int code = p.await(60);
      stderr.append(p.stderr());
      assertEquals(
          expectedExit, code, "select_client.py (pid " + p.pid() + "): " + p.stdout() + p.stderr());
      List<JsonNode> lines = new java.util.ArrayList<>();
      for (String l : p.stdout().strip().split("\n")) {
        if (!l.isBlank()) {
          lines.add(NodeHarness.JSON.readTree(l));
        }
      }
      return lines;
    }
  }

  @Test
  void pythonClientBooksPrefillsAndFrees() throws Exception {
    List<JsonNode> first = python(base, 0, new StringBuilder());
    assertEquals(
        List.of("selected", "prefill_complete", "freed"),
        first.stream().map(j -> j.get("step").asText()).toList());
    long worker = first.get(0).get("worker_id").asLong();
    assertTrue(worker == 1 || worker == 2, first.toString());
    assertEquals("http://worker-" + worker + ":8000", first.get(0).get("endpoint").asText());
    assertEquals(0, node.node.service().bookingCount(), "the booking is freed");

    List<JsonNode> second = python(base, 0, new StringBuilder());
    assertEquals(
        worker, second.get(0).get("worker_id").asLong(), "the cached prefix draws the prompt back");
    assertTrue(second.get(0).get("overlap_tokens").asLong() > 0, second.toString());
    assertEquals(0, node.node.service().bookingCount());
  }

  @Test
  void pythonClientNamesAnUnreachableNodeInOneLine() throws Exception {
    String dead = "http://127.0.0.1:" + closedPort();
    StringBuilder err = new StringBuilder();
    assertEquals(List.of(), python(dead, 1, err));
    assertEquals(1, err.toString().strip().lines().count(), err.toString());
    assertTrue(err.toString().contains(dead + "/select_and_reserve"), err.toString());
  }

  @Test
  void javaClientBooksPrefillsAndFrees() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(
        0,
        VertxSelectClient.run(new String[] {base, TOKENS}, print(out), print(err)),
        err.toString());
    Matcher m =
        Pattern.compile("worker (\\d) rank 0 at http://worker-(\\d):8000, cached 0 tokens\\n")
            .matcher(out.toString(StandardCharsets.UTF_8));
    assertTrue(m.matches(), out.toString(StandardCharsets.UTF_8));
    assertEquals(m.group(1), m.group(2));
    assertEquals(0, node.node.service().bookingCount());

    out.reset();
    assertEquals(0, VertxSelectClient.run(new String[] {base, TOKENS}, print(out), print(err)));
    assertTrue(
        out.toString(StandardCharsets.UTF_8).startsWith("worker " + m.group(1) + " rank 0"),
        out.toString(StandardCharsets.UTF_8));
    assertTrue(
        out.toString(StandardCharsets.UTF_8).contains("cached 32 tokens"),
        out.toString(StandardCharsets.UTF_8));
  }

  @Test
  void javaClientFreesTheBookingWhenForwardingFailsAndNamesAnUnreachableNode() throws Exception {
    Vertx vertx = Vertx.vertx();
    try {
      VertxSelectClient client = new VertxSelectClient(WebClient.create(vertx), base);
      int[] tokens = IntStream.rangeClosed(1, 32).toArray();
      Executable failing =
          () ->
              client
                  .route(tokens, choice -> Future.failedFuture("engine down"))
                  .toCompletionStage()
                  .toCompletableFuture()
                  .get(30, TimeUnit.SECONDS);
      ExecutionException e =
          org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class, failing);
      assertEquals("engine down", e.getCause().getMessage());
      assertEquals(
          0, node.node.service().bookingCount(), "the booking is freed after a failed forward");

      ExecutionException missing =
          org.junit.jupiter.api.Assertions.assertThrows(
              ExecutionException.class,
              () ->
                  client
                      .prefillComplete("no-such-booking")
                      .toCompletionStage()
                      .toCompletableFuture()
                      .get(30, TimeUnit.SECONDS));
      VertxSelectClient.KvselectException k =
          assertInstanceOf(VertxSelectClient.KvselectException.class, missing.getCause());
      assertEquals(404, k.status);
    } finally {
      vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    String dead = "http://127.0.0.1:" + closedPort();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(
        1,
        VertxSelectClient.run(
            new String[] {dead, TOKENS}, print(new ByteArrayOutputStream()), print(err)));
    String line = err.toString(StandardCharsets.UTF_8);
    assertEquals(1, line.strip().lines().count(), line);
    assertTrue(line.contains(dead), line);
  }

  private static PrintStream print(ByteArrayOutputStream b) {
    return new PrintStream(b, true, StandardCharsets.UTF_8);
  }

  private static int closedPort() throws Exception {
    return io.kvselect.testing.Ports.free();
  }
}
