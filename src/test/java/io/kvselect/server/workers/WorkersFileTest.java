package io.kvselect.server.workers;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * {@code --workers-file}: applied at start, re-applied on every change (add, change, remove), a
 * bad file keeps the previous workers and is retried until fixed, HTTP registrations untouched.
 */
class WorkersFileTest {

  @TempDir Path dir;

  private final ListAppender<ILoggingEvent> log = new ListAppender<>();
  private final Logger logger =
      ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(WorkersFileVerticle.class);
  private KvselectNode node;

  @BeforeEach
  void capture() {
    log.start();
    logger.addAppender(log);
  }

  @AfterEach
  void stop() throws Exception {
    logger.detachAppender(log);
    if (node != null) {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  private void start(Path file) throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--workers-file",
              file.toString(),
              "--workers-file-poll-secs",
              "0.05"
            },
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
  }

  /** Worker id -> endpoint of the catalog. */
  private Map<Long, String> catalog() {
    Map<Long, String> out = new TreeMap<>();
    for (WorkerRecord w : node.service().listWorkers(null, null)) {
      out.put(w.workerId(), w.spec().endpoint());
    }
    return out;
  }

  private static String yamlWorker(long id, String endpoint) {
    return "- worker_id: " + id + "\n  endpoint: " + endpoint + "\n  block_size: 16\n";
  }

  private boolean logged(String part) {
    return log.list.stream().anyMatch(e -> e.getFormattedMessage().contains(part));
  }

  private void register(long id, String endpoint) throws Exception {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + "/workers"))
                    .header("content-type", "application/json")
                    .timeout(Duration.ofSeconds(20))
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"worker_id\": "
                                + id
                                + ", \"endpoint\": \""
                                + endpoint
                                + "\", \"block_size\": 16}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(201, r.statusCode(), r.body());
  }

  @Test
  void theFileIsAppliedAtStartAndEveryEditIsFollowed() throws Exception {
    Path file = dir.resolve("workers.yaml");
    Files.writeString(file, yamlWorker(1, "http://w1") + yamlWorker(2, "http://w2"));
    start(file);
    assertEquals(
        Map.of(1L, "http://w1", 2L, "http://w2"),
        catalog(),
        "applied before the node reports started");
    register(9, "http://http-registered");

    // add 3, change 2, remove 1
    Files.writeString(file, yamlWorker(2, "http://w2-moved") + yamlWorker(3, "http://w3"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                catalog()
                    .equals(
                        Map.of(
                            2L, "http://w2-moved", 3L, "http://w3", 9L, "http://http-registered")));

    // a file that lists the HTTP-registered worker does not take it over
    Files.writeString(file, yamlWorker(3, "http://w3") + yamlWorker(9, "http://from-file"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> catalog().equals(Map.of(3L, "http://w3", 9L, "http://http-registered")));
    assertTrue(logged("worker_id 9 registered over HTTP; left as it is"), log.list.toString());

    // emptied: every worker the file added goes, the HTTP one stays
    Files.writeString(file, "[]\n");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> catalog().equals(Map.of(9L, "http://http-registered")));
  }

  @Test
  void aBadFileKeepsThePreviousWorkersAndRecoversWhenFixed() throws Exception {
    Path file = dir.resolve("workers.yml");
    Files.writeString(file, yamlWorker(1, "http://w1") + yamlWorker(2, "http://w2"));
    start(file);
    Map<Long, String> before = catalog();
    assertEquals(2, before.size());

    // not YAML at all
    Files.writeString(file, "- worker_id: 1\n  endpoint: [unclosed\n");
    await().atMost(Duration.ofSeconds(20)).until(() -> logged("not valid YAML"));
    assertEquals(before, catalog());

    // YAML, but an entry with a bad field: nothing of the file is applied, the field is named
    Files.writeString(
        file,
        yamlWorker(1, "http://w1-new")
            + "- worker_id: 2\n  endpoint: http://w2\n  block_size: many\n");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> logged("entry 1 (worker_id 2): ") && logged("block_size"));
    assertEquals(before, catalog(), "a failed apply changed the catalog");

    // a duplicate id
    Files.writeString(file, yamlWorker(1, "http://w1") + yamlWorker(1, "http://w1b"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> logged("worker_id 1 is listed more than once"));
    assertEquals(before, catalog());

    // emptied (as a shell redirect does before writing): not read as "no workers"
    Files.writeString(file, "");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> logged("is empty (write [] to remove every worker it added)"));
    assertEquals(before, catalog());

    // the file disappears: logged, the workers stay
    Files.delete(file);
    await().atMost(Duration.ofSeconds(20)).until(() -> logged("cannot be read"));
    assertEquals(before, catalog());

    // fixed: applied on the next check
    Files.writeString(file, yamlWorker(2, "http://w2") + yamlWorker(4, "http://w4"));
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> catalog().equals(Map.of(2L, "http://w2", 4L, "http://w4")));
  }

  @Test
  void jsonFilesTakeTheSameBodies() throws Exception {
    Path file = dir.resolve("workers.json");
    Files.writeString(
        file,
        "[{\"worker_id\": 5, \"endpoint\": \"http://w5\", \"block_size\": 32,"
            + " \"model_name\": \"m\", \"routing_group\": \"g\", \"max_num_batched_tokens\": 8192}]");
    start(file);
    WorkerRecord w = node.service().worker(5);
    assertEquals("m", w.spec().modelName());
    assertEquals(8192L, w.spec().maxNumBatchedTokens());
    assertTrue(w.schedulable());
    Files.writeString(file, "{\"worker_id\": 5}");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> logged("must be a list of worker registrations"));
    assertEquals("http://w5", node.service().worker(5).spec().endpoint());
  }

  @Test
  void aMissingFileOrAnUnknownExtensionIsAStartupError() throws Exception {
    Path missing = dir.resolve("none.yaml");
    CliException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(new String[] {"--workers-file", missing.toString()}, Map.of()));
    assertEquals("--workers-file " + missing + " is not a readable file", e.getMessage());
    Path txt = dir.resolve("workers.txt");
    Files.writeString(txt, "[]");
    e =
        org.junit.jupiter.api.Assertions.assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(new String[0], Map.of("KVSELECT_WORKERS_FILE", txt.toString())));
    assertEquals("--workers-file " + txt + " must end in .json, .yaml or .yml", e.getMessage());
  }
}
