package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.testing.FatJar;
import io.kvselect.testing.Ports;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Three {@code bin/kvselect --cluster} processes on 127.0.0.1, run from the fat jar that
 * {@code package} built (integration-test phase; nothing is built here): sessions are bound
 * through all three, one process is killed with SIGKILL by its PID, and the two survivors must
 * keep serving and route every session to the worker it was bound to; their {@code /loads}
 * converge to the bookings they hold themselves (the dead node's are released after the grace),
 * and a booking made on one survivor is freed through the other. Every process is stopped by PID
 * afterwards.
 */
class ClusterProcessesIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private static final Duration START = Duration.ofSeconds(120);
  private static final int SESSIONS = 30;

  /** A started node: its process, HTTP port and log file. */
  private record Node(Process process, int port, Path log) {
    String tail() {
      try {
        List<String> lines = Files.readAllLines(log);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
      } catch (IOException e) {
        return "(no log: " + e + ")";
      }
    }
  }

  private final List<Node> nodes = new ArrayList<>();

  @AfterEach
  void stopEveryProcess() throws Exception {
    for (Node n : nodes) {
      ProcessHandle.of(n.process().pid()).ifPresent(ProcessHandle::destroy);
    }
    for (Node n : nodes) {
      if (!n.process().waitFor(20, TimeUnit.SECONDS)) {
        ProcessHandle.of(n.process().pid()).ifPresent(ProcessHandle::destroyForcibly);
        n.process().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /**
   * One member paused (SIGSTOP: a long GC pause, a frozen VM) must not stall the others: every
   * session-bound booking on the two running nodes is answered within the call budget's fallback
   * (bounded here by a 3 s client timeout; it waited up to 15 s before), on the session's worker
   * for the node that served it before; the paused member is removed after the failure timeout and,
   * woken, comes back, and every node agrees on every binding again. The frees of its own bookings
   * sent to the others while it was out reach it once it is back: no booking is left anywhere.
   */
  @Test
  void aPausedMemberDoesNotStallSessionTrafficOnTheOthers() throws Exception {
    startThree();
    Map<String, Long> bound = bindSessions();
    Node paused = nodes.get(2);
    List<Node> running = List.of(nodes.get(0), nodes.get(1));
    assertEquals(
        0,
        new ProcessBuilder("kill", "-STOP", Long.toString(paused.process().pid()))
            .start()
            .waitFor());
    long stoppedAt = System.nanoTime();
    int kept = 0;
    long worstNanos = 0;
    int turns = 0;
    try {
      // traffic goes on through the pause, past the failure timeout (5 s) and at least two turns
      for (int turn = 0;
          turn < 10 && (turn < 2 || System.nanoTime() - stoppedAt < 8_000_000_000L);
          turn++) {
        turns++;
        for (var e : bound.entrySet()) {
          int s = Integer.parseInt(e.getKey().substring("conv-".length()));
          Node n = running.get((s + turn) % 2);
          String id = "paused-" + turn + "-" + s;
          long t0 = System.nanoTime();
          Reply r =
              call(
                  n,
                  "POST",
                  "/select_and_reserve",
                  Map.of(
                      "session_id",
                      e.getKey(),
                      "token_ids",
                      ClusterSharedStateTest.tokens(s, 32 + turn * 4),
                      "selection_id",
                      id),
                  Duration.ofSeconds(3));
          worstNanos = Math.max(worstNanos, System.nanoTime() - t0);
          assertEquals(
              200, r.status(), e.getKey() + " via " + n.port() + " while a member is paused: " + r);
          if (r.body().path("worker_id").asLong() == e.getValue()) {
            kept++;
          }
          assertEquals(
              200, call(n, "DELETE", "/reservations/" + id, null, Duration.ofSeconds(3)).status());
        }
      }
      // the paused member's own bookings (pre-2, pre-5, ...), freed through the others while it is
      // out of the membership: they cannot be applied now (404 or 503), and must not stay booked
      // once it is back: the frees are kept and delivered to it when it answers again
      for (int i = 2; i < SESSIONS; i += 3) {
        int status =
            call(
                    running.get(i % 2),
                    "DELETE",
                    "/reservations/pre-" + i,
                    null,
                    Duration.ofSeconds(10))
                .status();
        assertTrue(
            status == 404 || status == 503,
            "DELETE pre-" + i + " while its node is paused -> " + status);
      }
    } finally {
      new ProcessBuilder("kill", "-CONT", Long.toString(paused.process().pid())).start().waitFor();
    }
    System.out.printf(
        "member paused for %.1f s: %d session-bound bookings on the other two, worst %.0f ms,"
            + " %d on the session's worker%n",
        (System.nanoTime() - stoppedAt) / 1e9, turns * SESSIONS, worstNanos / 1e6, kept);
    long wokenAt = System.nanoTime();
    // woken after more than the failure timeout, it is fenced: no new selection, /ready 503, until
    // it merged back
    String[] fenced = {null};
    await("the woken member answers /ready 503 as fenced")
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(100))
        .until(
            () -> {
              Reply r = call(paused, "GET", "/ready", null, Duration.ofSeconds(2));
              if (r.status() == 503 && r.body().path("reason").asText().contains("paused for")) {
                fenced[0] = r.body().path("reason").asText();
                return true;
              }
              return false;
            });
    Reply refused =
        call(
            paused,
            "POST",
            "/select",
            Map.of("session_id", "conv-0", "token_ids", ClusterSharedStateTest.tokens(0, 32)),
            Duration.ofSeconds(5));
    assertTrue(
        refused.status() == 503 || refused.status() == 200,
        "fenced, or already merged back: " + refused);
    await("the woken member is ready again")
        .atMost(Duration.ofSeconds(60))
        .pollInterval(Duration.ofMillis(250))
        .until(() -> call(paused, "GET", "/ready", null, Duration.ofSeconds(2)).status() == 200);
    System.out.printf(
        "the woken member was fenced (%s) and ready again %.1f s after SIGCONT%n",
        fenced[0], (System.nanoTime() - wokenAt) / 1e9);
    for (Node n : nodes) {
      await("node " + n.port() + " back in a cluster of three")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(250))
          .until(
              () -> {
                JsonNode c = getOrNull(n, "/cluster");
                return c != null && c.path("members").size() == 3;
              });
    }
    System.out.printf(
        "the woken member and the others saw 3 members again %.1f s after SIGCONT%n",
        (System.nanoTime() - wokenAt) / 1e9);
    for (var e : bound.keySet()) {
      await(e + " bound to one worker on every node")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(250))
          .until(
              () -> {
                java.util.Set<Long> seen = new java.util.HashSet<>();
                for (Node n : nodes) {
                  Reply r =
                      call(
                          n,
                          "POST",
                          "/select",
                          Map.of(
                              "session_id",
                              e,
                              "token_ids",
                              ClusterSharedStateTest.tokens(1000, 32)));
                  if (r.status() != 200) {
                    return false;
                  }
                  seen.add(r.body().path("worker_id").asLong());
                }
                return seen.size() == 1;
              });
    }
    // the other bookings made before the pause, freed through any node; the paused member's were
    // freed during the pause (above) and are not sent again: then no node counts a booking
    for (int i = 0; i < SESSIONS; i++) {
      if (i % 3 == 2) {
        continue;
      }
      int status = call(nodes.get(i % 3), "DELETE", "/reservations/pre-" + i, null).status();
      assertEquals(200, status, "DELETE pre-" + i);
    }
    for (Node n : nodes) {
      await("no booking left on " + n.port())
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> activeRequests(n) == 0);
    }
    // the same story in the cluster meters: whole again, nobody fenced, the kept frees delivered
    double delivered = 0;
    for (Node n : nodes) {
      String metrics =
          HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + "/metrics"))
                      .timeout(Duration.ofSeconds(10))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      assertEquals(3.0, metric(metrics, "kvselect_cluster_members"), metrics);
      assertEquals(0.0, metric(metrics, "kvselect_cluster_fenced"), metrics);
      delivered += metric(metrics, "kvselect_cluster_deferred_frees_delivered_total");
    }
    assertTrue(
        delivered >= SESSIONS / 3,
        "the frees of the paused member's bookings were delivered: " + delivered);
  }

  /** The value of an unlabelled sample {@code name} in a Prometheus scrape. */
  private static double metric(String scrape, String name) {
    return scrape
        .lines()
        .filter(l -> l.startsWith(name + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(name.length() + 1).trim()))
        .findFirst()
        .orElseThrow(() -> new AssertionError(name + " not exported"));
  }

  /** Starts three clustered processes from the fat jar, registers workers 1..3 on each. */
  private void startThree() throws Exception {
    Path jar = FatJar.path();
    String name = "kvs-test-" + UUID.randomUUID();
    int base = Ports.freeRange(3);
    String members = "127.0.0.1:" + base + ",127.0.0.1:" + (base + 1) + ",127.0.0.1:" + (base + 2);
    Path logs = Files.createDirectories(Path.of("target", "cluster-it"));
    long launched = System.nanoTime();
    for (int i = 0; i < 3; i++) {
      Path log = logs.resolve("node" + i + ".log");
      ProcessBuilder pb =
          new ProcessBuilder(
                  "./bin/kvselect",
                  "--cluster",
                  "--cluster-name",
                  name,
                  "--cluster-members",
                  members,
                  "--cluster-port",
                  Integer.toString(base),
                  "--host",
                  "127.0.0.1",
                  "--port",
                  "0",
                  "--session-affinity-ttl-secs",
                  "600",
                  "--cluster-reconcile-secs",
                  "1")
              .redirectErrorStream(true)
              .redirectOutput(log.toFile());
      pb.environment().keySet().removeIf(k -> k.startsWith("DYN_") || k.startsWith("KVSELECT_"));
      pb.environment().put("KVSELECT_JAR", jar.toString());
      pb.environment().put("DYN_ROUTER_USE_KV_EVENTS", "false");
      // tests only: no 5 s pause before joining; a small heap for three JVMs on one machine
      pb.environment().put("KVSELECT_JAVA_OPTS", "-Xmx384m -Dhazelcast.wait.seconds.before.join=0");
      nodes.add(new Node(pb.start(), -1, log));
    }
    // --port 0: the node binds a port of its own choosing and logs it. A port probed free here and
    // passed in could be taken meanwhile (a member connection's ephemeral port) before the node
    // binds it, which happens only after the cluster join.
    for (int i = 0; i < nodes.size(); i++) {
      Node started = nodes.get(i);
      int[] port = {-1};
      await("node" + i + " logs its HTTP port")
          .atMost(START)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                assertTrue(started.process().isAlive(), "exited:\n" + started.tail());
                port[0] = listeningPort(started.log());
                return port[0] > 0;
              });
      nodes.set(i, new Node(started.process(), port[0], started.log()));
    }
    for (Node n : nodes) {
      await("node on " + n.port())
          .atMost(START)
          .pollInterval(Duration.ofMillis(300))
          .until(
              () -> {
                assertTrue(n.process().isAlive(), "exited:\n" + n.tail());
                JsonNode c = getOrNull(n, "/cluster");
                return c != null && c.path("members").size() == 3;
              });
    }
    System.out.printf(
        "three processes launched together saw 3 members after %.1f s%n",
        (System.nanoTime() - launched) / 1e9);
    for (Node n : nodes) {
      for (int w = 1; w <= 3; w++) {
        Reply r =
            call(
                n,
                "POST",
                "/workers",
                Map.of(
                    "worker_id", w, "endpoint", "http://worker-" + w + ":8000", "block_size", 16));
        assertEquals(201, r.status(), r.toString());
      }
    }
  }

  private static final java.util.regex.Pattern LISTENING =
      java.util.regex.Pattern.compile("kvselect listening on http://127\\.0\\.0\\.1:(\\d+)");

  /** The port of the node's "kvselect listening on" line, or -1 before it is logged. */
  private static int listeningPort(Path log) throws IOException {
    if (!Files.exists(log)) {
      return -1;
    }
    java.util.regex.Matcher m =
        LISTENING.matcher(Files.readString(log, java.nio.charset.StandardCharsets.ISO_8859_1));
    return m.find() ? Integer.parseInt(m.group(1)) : -1;
  }

  /** Binds sessions conv-0..29 through the three nodes in turn (each booking held); checks every node agrees. */
  private Map<String, Long> bindSessions() throws Exception {
    Map<String, Long> bound = new LinkedHashMap<>();
    for (int s = 0; s < SESSIONS; s++) {
      Reply r =
          call(
              nodes.get(s % 3),
              "POST",
              "/select_and_reserve",
              Map.of(
                  "session_id",
                  "conv-" + s,
                  "token_ids",
                  ClusterSharedStateTest.tokens(s, 32),
                  "selection_id",
                  "pre-" + s));
      assertEquals(200, r.status(), r.toString());
      bound.put("conv-" + s, r.body().path("worker_id").asLong());
    }
    for (var e : bound.entrySet()) {
      for (Node n : nodes) {
        Reply r =
            call(
                n,
                "POST",
                "/select",
                Map.of(
                    "session_id",
                    e.getKey(),
                    "token_ids",
                    ClusterSharedStateTest.tokens(1000, 32)));
        assertEquals(
            e.getValue(),
            r.body().path("worker_id").asLong(),
            e.getKey() + " via " + n.port() + ": " + r);
      }
    }
    return bound;
  }

  @Test
  void survivorsOfASigkilledNodeKeepServingAndKeepEveryBinding() throws Exception {
    startThree();
    Map<String, Long> bound = bindSessions();
    Node killed = nodes.get(2);
    long killedAt = System.nanoTime();
    ProcessHandle.of(killed.process().pid()).orElseThrow().destroyForcibly();
    assertTrue(
        killed.process().waitFor(30, TimeUnit.SECONDS),
        "SIGKILL did not end " + killed.process().pid());
    List<Node> survivors = nodes.subList(0, 2);
    for (Node n : survivors) {
      await("survivor " + n.port() + " sees 2 members")
          .atMost(Duration.ofSeconds(90))
          .pollInterval(Duration.ofMillis(500))
          .until(
              () -> {
                JsonNode c = getOrNull(n, "/cluster");
                return c != null && c.path("members").size() == 2;
              });
      assertEquals(200, call(n, "GET", "/health", null).status());
    }
    System.out.printf(
        "survivors saw 2 members %.1f s after the SIGKILL%n", (System.nanoTime() - killedAt) / 1e9);
    // sessions s % 3 == 2 were booked on the dead node: released after the grace, the others stay
    int held = SESSIONS - SESSIONS / 3;
    for (Node n : survivors) {
      await("survivor " + n.port() + " releases the dead node's bookings")
          .atMost(Duration.ofSeconds(60))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> activeRequests(n) == held);
    }
    System.out.printf(
        "survivors' /loads held only their own %d bookings %.1f s after the SIGKILL%n",
        held, (System.nanoTime() - killedAt) / 1e9);
    Reply deadOne = call(survivors.get(0), "DELETE", "/reservations/pre-2", null);
    assertEquals(404, deadOne.status(), "a booking of the dead node died with it: " + deadOne);
    for (var e : bound.entrySet()) {
      for (Node n : survivors) {
        Reply r =
            call(
                n,
                "POST",
                "/select_and_reserve",
                Map.of(
                    "session_id",
                    e.getKey(),
                    "token_ids",
                    ClusterSharedStateTest.tokens(2000, 32)));
        assertEquals(200, r.status(), e.getKey() + " via " + n.port() + ": " + r + "\n" + n.tail());
        assertEquals(
            e.getValue(),
            r.body().path("worker_id").asLong(),
            e.getKey() + " via " + n.port() + ": " + r);
      }
    }
    Reply fresh =
        call(
            survivors.get(0),
            "POST",
            "/select_and_reserve",
            Map.of(
                "session_id", "after-kill", "token_ids", ClusterSharedStateTest.tokens(3000, 32)));
    assertEquals(200, fresh.status(), fresh.toString());
    Reply same =
        call(
            survivors.get(1),
            "POST",
            "/select",
            Map.of(
                "session_id", "after-kill", "token_ids", ClusterSharedStateTest.tokens(3001, 32)));
    assertEquals(fresh.body().path("worker_id").asLong(), same.body().path("worker_id").asLong());

    // a booking made on one survivor is freed through the other (forwarded to the one that booked)
    int before = held + 2 * SESSIONS + 1;
    for (Node n : survivors) {
      await()
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> activeRequests(n) == before);
    }
    Reply booked =
        call(
            survivors.get(0),
            "POST",
            "/select_and_reserve",
            Map.of(
                "token_ids",
                ClusterSharedStateTest.tokens(4000, 32),
                "selection_id",
                "freed-elsewhere"));
    assertEquals(200, booked.status(), booked.toString());
    Reply freed = call(survivors.get(1), "DELETE", "/reservations/freed-elsewhere", null);
    assertEquals(200, freed.status(), freed.toString());
    assertEquals(
        404, call(survivors.get(0), "DELETE", "/reservations/freed-elsewhere", null).status());
    Reply alsoFreed = call(survivors.get(1), "DELETE", "/reservations/pre-0", null);
    assertEquals(200, alsoFreed.status(), "pre-0 was booked on the first survivor: " + alsoFreed);
    for (Node n : survivors) {
      await("survivor " + n.port() + " after the forwarded frees")
          .atMost(Duration.ofSeconds(30))
          .pollInterval(Duration.ofMillis(250))
          .until(() -> activeRequests(n) == before - 1);
    }
  }

  /** The active requests {@code /loads} of {@code n} counts over every partition and rank (-1 when unreachable). */
  private static int activeRequests(Node n) {
    JsonNode loads = getOrNull(n, "/loads");
    if (loads == null) {
      return -1;
    }
    int total = 0;
    for (JsonNode p : loads) {
      for (JsonNode l : p.path("loads")) {
        total += l.path("active_requests").asInt();
      }
    }
    return total;
  }

  private record Reply(int status, JsonNode body) {}

  private static Reply call(Node n, String method, String path, Object body) throws Exception {
    return call(n, method, path, body, Duration.ofSeconds(30));
  }

  private static Reply call(Node n, String method, String path, Object body, Duration timeout)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.port() + path)).timeout(timeout);
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("content-type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    }
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body().isEmpty() ? null : JSON.readTree(r.body()));
  }

  private static JsonNode getOrNull(Node n, String path) {
    try {
      Reply r = call(n, "GET", path, null);
      return r.status() == 200 ? r.body() : null;
    } catch (Exception notYet) {
      return null;
    }
  }
}
