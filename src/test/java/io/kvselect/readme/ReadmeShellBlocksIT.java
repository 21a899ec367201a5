package io.kvselect.readme;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.readme.Processes.Started;
import io.kvselect.readme.ReadmeBlocks.Block;
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
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every shell block of the README, command by command, against real processes on
 * 127.0.0.1, with the fat jar that {@code package} built (passed to the launchers as
 * {@code KVSELECT_JAR}, so nothing is rebuilt here). Integration-test phase.
 *
 * <p>What a block may contain, and how it is adapted to a test machine:
 * <ul>
 *   <li>The README's fixed port 8092 becomes a free ephemeral port of the block, and so do 8093
 *       and 8094 (the clustered section's second and third node); its Hazelcast member ports
 *       5701..5703 become a free range of the block. Several nodes may start, each on its own
 *       port. {@code GET /cluster} must list as many members as the block started nodes, and a
 *       {@code session_id} must get the same worker from whichever node answers. What one node
 *       of a cluster applies reaches the others a moment later (catalog and load sync), so in a
 *       block that started several nodes a {@code GET} whose check fails is repeated, as a user
 *       would, until it passes within {@link #CLUSTER_CONVERGED}; nothing else is repeated.
 *   <li>{@code ./bin/kvselect --version} must print one line {@code kvselect VERSION} and exit 0.
 *   <li>{@code ./bin/kvselect} and {@code ./bin/kvselect-mocker} (without {@code --help}) are
 *       servers: started in the background whether or not the README writes {@code &} (the demo
 *       runs them in separate terminals), a node with {@code --host 127.0.0.1} and the block's
 *       port unless the command names them, and waited for: a node until {@code /health}
 *       answers, a fleet until it printed one ready line per engine.
 *   <li>The endpoint picker's port 9002 and the example gateway's port 8080 become free ports of
 *       the block. {@code java ... EppGateway.java PICKER PORT} is a server: started in the
 *       background and waited for until its port accepts connections. A {@code curl} of
 *       {@code /v1/chat/completions} through it reads the streamed answer: the engine that served
 *       (the mock's completion id {@code chatcmpl-<worker_id>-...}) and the usage chunk's
 *       {@code cached_tokens}; every later turn of the block must come from the first turn's
 *       engine with {@code cached_tokens} above 0 (before it is sent, the test waits, as a person
 *       typing would, until the node has indexed the earlier turn's blocks).
 *   <li>A {@code curl ... | grep PATTERN} pipeline must exit 0 (grep found its lines).
 *   <li>{@code ./bin/kvselect-demo} talks to the block's node; {@code PORT} in a {@code curl}
 *       command stands for the HTTP port of the first engine the block's fleet printed.
 *   <li>Every other command runs to completion within {@link #COMMAND_SECONDS} and must exit 0;
 *       {@code curl} must answer 2xx. Known routes are checked further (see {@link #checkCurl}),
 *       the demo must say that every repeat turn returned to the previous turn's worker.
 *   <li>Any other program fails the test unless the block's {@code not run} marker names it
 *       (see {@link ReadmeBlocks}).
 * </ul>
 * Every process a block started, and its descendants, ends when the block ends.
 */
class ReadmeShellBlocksIT {

  private static final long COMMAND_SECONDS = 90;
  private static final Duration START_LIMIT = Duration.ofSeconds(60);
  private static final Duration CLUSTER_CONVERGED = Duration.ofSeconds(30);
  private static final String NODE = "./bin/kvselect";
  private static final String MOCKER = "./bin/kvselect-mocker";
  private static final String DEMO = "./bin/kvselect-demo";
  private static final String SIM = "./bin/kvselect-sim";
  private static final String GATEWAY = "examples/java/io/kvselect/examples/EppGateway.java";
  private static final Pattern CHAT_ENGINE = Pattern.compile("\"id\"\\s*:\\s*\"chatcmpl-(\\d+)-");
  private static final Pattern SIM_OUT = Pattern.compile("--out[ =](\\S+)");
  private static final Pattern URL_PATH =
      Pattern.compile("(?:https?://)?(?:localhost|127\\.0\\.0\\.1):[0-9]+(/[^\\s'\"]*)");
  private static final Pattern METHOD = Pattern.compile("(?:^|\\s)-X\\s*([A-Z]+)");
  private static final Pattern REPEAT =
      Pattern.compile("repeat turns on the worker that served the previous turn: (\\d+) of (\\d+)");
  private static final Pattern ENGINES = Pattern.compile("--engines[ =](\\d+)");
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @TestFactory
  Stream<DynamicTest> everyShellBlockRunsAgainstRealProcesses() throws IOException {
    Path jar = FatJar.path();
    List<Block> blocks = ReadmeBlocks.runnable(ReadmeBlocks.SHELL);
    assertFalse(blocks.isEmpty(), "README.md has no shell block");
    return blocks.stream()
        .map(
            b ->
                dynamicTest(
                    b.where(),
                    () -> {
                      if (b.skippedWhole()) {
                        System.out.println(b.where() + ": not run (" + b.notRun() + ")");
                        return;
                      }
                      long t0 = System.nanoTime();
                      Path logs = Path.of("target", "readme-it", "line" + b.line());
                      try (Processes procs =
                          new Processes(
                              Path.of("").toAbsolutePath(),
                              logs,
                              Map.of("KVSELECT_JAR", jar.toString()))) {
                        new BlockRun(b, procs).run();
                      }
                      System.out.printf(
                          "%s: ran in %.1f s%n", b.where(), (System.nanoTime() - t0) / 1e9);
                    }));
  }

  /**
   * One block's run: its port, the servers it started, what its commands established. Owned by
   * the test thread running the block; Awaitility's poller only reads the started processes.
   */
  private static final class BlockRun {
    private final Block block;
    private final Processes procs;
    private final int port;
    private final List<Started> servers = new ArrayList<>();
    private final List<Integer> enginePorts = new ArrayList<>();
    private final Set<Long> registeredWorkers = new LinkedHashSet<>();
    private final Set<String> openReservations = new HashSet<>();
    private final Set<Integer> nodePorts = new HashSet<>();
    private final Map<String, Long> sessionWorkers = new java.util.HashMap<>();
    private Long chatEngine;
    private long indexedBeforeLastTurn;

    BlockRun(Block block, Processes procs) throws IOException {
      this.block = block;
      this.procs = procs;
      this.port = Ports.free();
    }

    void run() throws Exception {
      String text =
          block
              .text()
              .replaceAll("\\b8092\\b", Integer.toString(port))
              .replaceAll("\\b8093\\b", Integer.toString(Ports.free()))
              .replaceAll("\\b8094\\b", Integer.toString(Ports.free()))
              .replaceAll("\\b9002\\b", Integer.toString(Ports.free()))
              .replaceAll("\\b8080\\b", Integer.toString(Ports.free()));
      if (text.matches("(?s).*\\b570[1-3]\\b.*")) {
        int members = Ports.freeRange(3);
        for (int i = 0; i < 3; i++) {
          text = text.replaceAll("\\b570" + (i + 1) + "\\b", Integer.toString(members + i));
        }
      }
      List<String> commands = ShellText.commands(text);
      List<String> skip = block.skippedPrefixes();
      for (String prefix : skip) {
        assertTrue(
            commands.stream().anyMatch(c -> c.startsWith(prefix)),
            block.where()
                + ": the not-run marker names \""
                + prefix
                + "\", which starts no command");
      }
      int ran = 0;
      for (String c : commands) {
        if (skip.stream().anyMatch(c::startsWith)) {
          System.out.println(block.where() + ": not run: " + c + " (" + block.notRun() + ")");
          continue;
        }
        runCommand(c);
        ran++;
      }
      assertTrue(ran > 0, block.where() + ": a shell block that runs no command should be ```text");
      for (Started s : servers) {
        assertTrue(
            s.process().isAlive(),
            block.where()
                + ": server exited before the block ended: "
                + s.command()
                + "\nstderr:\n"
                + s.stderrTail());
      }
    }

    private void runCommand(String command) throws Exception {
      String program = ShellText.program(command);
      String c = ShellText.foreground(command);
      boolean help = c.matches(".*\\s(--help|-h)(\\s.*)?");
      boolean version = c.matches(".*\\s--version(\\s.*)?");
      switch (program) {
        case NODE -> {
          if (help) {
            checkHelp(c, "--port");
          } else if (version) {
            checkVersion(c);
          } else {
            startNode(c);
          }
        }
        case MOCKER -> {
          if (help) {
            checkHelp(c, "--engines");
          } else {
            startFleet(c);
          }
        }
        case DEMO -> {
          if (help) {
            checkHelp(c, "--kvselect");
          } else {
            runDemo(c);
          }
        }
        case SIM -> {
          if (help) {
            checkHelp(c, "--workload");
          } else {
            runSim(c);
          }
        }
        case "curl" -> runCurl(c);
        case "java" -> {
          if (!c.contains(GATEWAY)) {
            fail(block.where() + ": the test runs only the example gateway with java: " + command);
          }
          startGateway(c);
        }
        default ->
            fail(
                block.where()
                    + ": the test cannot run \""
                    + command
                    + "\"; mark it"
                    + " <!-- not run: \""
                    + program
                    + "\" reason --> before the block");
      }
    }

    /** The simulator runs to completion, prints its table and writes results.csv to its --out. */
    private void runSim(String c) throws Exception {
      Started s = procs.run(c, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + "\nstderr:\n" + s.stderrTail());
      assertTrue(s.stdout().contains("ttft_p99"), c + " printed no comparison:\n" + s.stdout());
      Matcher out = SIM_OUT.matcher(c);
      assertTrue(out.find(), c + ": the README's simulator command names its --out");
      assertTrue(
          Files.readString(Path.of(out.group(1), "results.csv"))
              .startsWith("policy,requests,direct,"),
          c + ": no results.csv in " + out.group(1));
    }

    private void checkHelp(String c, String mentions) throws Exception {
      Started s = procs.run(c, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + "\nstderr:\n" + s.stderrTail());
      assertTrue(
          s.stdout().startsWith("Usage:") && s.stdout().contains(mentions),
          c + " printed no usage naming " + mentions + ":\n" + s.stdout());
    }

    private void checkVersion(String c) throws Exception {
      Started s = procs.run(c, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + "\nstderr:\n" + s.stderrTail());
      assertTrue(
          s.stdout().matches("kvselect \\S+\\n"),
          c + " printed no one-line version:\n" + s.stdout());
    }

    private void startNode(String c) throws Exception {
      if (!c.contains("--host")) {
        c += " --host 127.0.0.1";
      }
      if (!c.contains("--port")) {
        c += " --port " + port;
      }
      Matcher pm = Pattern.compile("--port[ =](\\d+)").matcher(c);
      assertTrue(pm.find(), c);
      int nodePort = Integer.parseInt(pm.group(1));
      assertTrue(
          nodePorts.add(nodePort),
          block.where() + ": a second node on port " + nodePort + ": " + c);
      Started s = procs.start(c);
      servers.add(s);
      URI health = URI.create("http://127.0.0.1:" + nodePort + "/health");
      await("node of " + block.where())
          .atMost(START_LIMIT)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                assertAlive(s);
                try {
                  return HTTP.send(
                              HttpRequest.newBuilder(health).timeout(Duration.ofSeconds(2)).build(),
                              HttpResponse.BodyHandlers.discarding())
                          .statusCode()
                      == 200;
                } catch (IOException notYet) {
                  return false;
                }
              });
    }

    private void startFleet(String c) throws Exception {
      Matcher m = ENGINES.matcher(c);
      int engines = m.find() ? Integer.parseInt(m.group(1)) : 1;
      Started s = procs.start(c);
      servers.add(s);
      await("mock fleet of " + block.where())
          .atMost(START_LIMIT)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                assertAlive(s);
                return readyLines(s).size() >= engines;
              });
      for (String line : readyLines(s)) {
        JsonNode engine = JSON.readTree(line);
        enginePorts.add(URI.create(engine.path("endpoint").asText()).getPort());
        registeredWorkers.add(engine.path("worker_id").asLong());
      }
    }

    private void runDemo(String c) throws Exception {
      if (!c.contains("--kvselect")) {
        c += " --kvselect http://127.0.0.1:" + port;
      }
      Started s = procs.run(c, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + "\nstderr:\n" + s.stderrTail());
      Matcher m = REPEAT.matcher(s.stdout());
      assertTrue(m.find(), c + " printed no repeat-turn summary:\n" + s.stdout());
      int sticky = Integer.parseInt(m.group(1));
      int repeats = Integer.parseInt(m.group(2));
      assertTrue(repeats > 0, c + " played no repeat turn:\n" + s.stdout());
      assertEquals(
          repeats, sticky, "repeat turns that left the previous turn's worker:\n" + s.stdout());
    }

    /** The example gateway: a server on the port its last argument names. */
    private void startGateway(String c) throws Exception {
      String[] words = c.split("\\s+");
      int gatewayPort = Integer.parseInt(words[words.length - 1]);
      Started s = procs.start(c);
      servers.add(s);
      await("gateway of " + block.where())
          .atMost(START_LIMIT)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                assertAlive(s);
                try (java.net.Socket probe = new java.net.Socket()) {
                  probe.connect(new java.net.InetSocketAddress("127.0.0.1", gatewayPort), 1_000);
                  return true;
                } catch (IOException notYet) {
                  return false;
                }
              });
    }

    /** A curl piped into grep: the pipeline must succeed, that is grep found what it looks for. */
    private void runPipeline(String c) throws Exception {
      Started s = procs.run(c, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + " found nothing\nstderr:\n" + s.stderrTail());
      assertFalse(s.stdout().isBlank(), c + " printed nothing");
    }

    /**
     * A chat turn streamed through the gateway: which engine served it and what it found cached.
     * A later turn extends the earlier ones, so it must reach the first turn's engine and reuse
     * its prefix; before it is sent, the node has indexed the earlier turn's blocks (a person
     * typing the next command gives it that time).
     */
    private void runChatTurn(String c) throws Exception {
      if (chatEngine != null) {
        await(block.where() + ": the earlier turn's blocks indexed")
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(100))
            .until(() -> indexedBlocks() > indexedBeforeLastTurn);
      }
      long indexedBefore = indexedBlocks();
      Started s = procs.run(c, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + "\nstderr:\n" + s.stderrTail());
      long engine = -1;
      long cached = -1;
      for (String line : s.stdout().split("\n")) {
        if (!line.startsWith("data: {")) {
          continue;
        }
        JsonNode chunk = JSON.readTree(line.substring("data: ".length()));
        Matcher m = CHAT_ENGINE.matcher(line);
        if (m.find()) {
          engine = Long.parseLong(m.group(1));
        }
        JsonNode usage = chunk.path("usage").path("prompt_tokens_details").path("cached_tokens");
        if (usage.isNumber()) {
          cached = usage.asLong();
        }
      }
      String what = c + "\n-> " + s.stdout();
      assertTrue(
          registeredWorkers.contains(engine),
          "served by an engine the block did not start: " + what);
      assertTrue(cached >= 0, "no usage chunk with cached_tokens: " + what);
      if (chatEngine == null) {
        chatEngine = engine;
      } else {
        assertEquals(
            chatEngine.longValue(),
            engine,
            "a later turn left the engine holding its prefix: " + what);
        assertTrue(cached > 0, "a later turn reused nothing: " + what);
      }
      indexedBeforeLastTurn = indexedBefore;
    }

    /** Blocks in the node's KV-event index ({@code kvselect_index_blocks}). */
    private long indexedBlocks() throws IOException, InterruptedException {
      String text =
          HTTP.send(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/metrics"))
                      .timeout(Duration.ofSeconds(5))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .body();
      for (String line : text.split("\n")) {
        if (line.startsWith("kvselect_index_blocks")) {
          return (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
        }
      }
      return 0;
    }

    private void runCurl(String c) throws Exception {
      if (c.contains(" | ")) {
        runPipeline(c);
        return;
      }
      if (c.contains("/v1/chat/completions")) {
        runChatTurn(c);
        return;
      }
      Matcher mm = METHOD.matcher(c);
      boolean get = !mm.find() && !c.contains(" -d ") || "GET".equals(mm.group(1));
      if (get && nodePorts.size() > 1) {
        String command = c;
        await(block.where() + ": " + c)
            .atMost(CLUSTER_CONVERGED)
            .pollInterval(Duration.ofMillis(250))
            .untilAsserted(() -> curlOnce(command));
      } else {
        curlOnce(c);
      }
    }

    private void curlOnce(String c) throws Exception {
      if (c.contains("PORT")) {
        assertFalse(
            enginePorts.isEmpty(),
            block.where() + ": PORT stands for a mock engine, but the block started none: " + c);
        c = c.replace("PORT", Integer.toString(enginePorts.get(0)));
      }
      String withStatus = "curl -w '\\n%{http_code}'" + c.substring("curl".length());
      Started s = procs.run(withStatus, COMMAND_SECONDS);
      assertEquals(0, s.process().exitValue(), c + "\nstderr:\n" + s.stderrTail());
      String out = s.stdout();
      int nl = out.lastIndexOf('\n');
      int status = Integer.parseInt(out.substring(nl + 1).strip());
      String body = out.substring(0, Math.max(nl, 0));
      assertTrue(status >= 200 && status < 300, c + " answered " + status + ": " + body);
      checkCurl(c, status, body);
    }

    /** The checks of the routes the README calls, beyond "2xx". */
    private void checkCurl(String c, int status, String body) throws IOException {
      Matcher u = URL_PATH.matcher(c);
      assertTrue(u.find(), block.where() + ": no loopback URL in " + c);
      String path = u.group(1);
      Matcher mm = METHOD.matcher(c);
      String method = mm.find() ? mm.group(1) : (c.contains(" -d ") ? "POST" : "GET");
      String route = method + " " + path;
      JsonNode json = body.isBlank() ? JSON.nullNode() : JSON.readTree(body);
      String what = c + "\n-> " + status + " " + body;
      if (route.equals("POST /workers")) {
        assertEquals(201, status, what);
        assertEquals("schedulable", json.path("lifecycle").asText(), what);
        registeredWorkers.add(json.path("worker_id").asLong());
      } else if (route.equals("GET /ready")) {
        assertTrue(json.path("ready").asBoolean(), what);
        Set<Long> ready = new HashSet<>();
        json.path("workers").forEach(w -> ready.add(w.path("worker_id").asLong()));
        assertTrue(
            ready.containsAll(registeredWorkers),
            "ready lists no " + registeredWorkers + ": " + what);
      } else if (route.equals("GET /cluster")) {
        assertTrue(json.path("enabled").asBoolean(), what);
        assertEquals(nodePorts.size(), json.path("members").size(), "members of " + what);
      } else if (route.equals("POST /select_and_reserve") || route.equals("POST /select")) {
        long worker = json.path("worker_id").asLong(-1);
        assertTrue(
            registeredWorkers.contains(worker),
            "selected a worker the block did not register " + registeredWorkers + ": " + what);
        if (registeredWorkers.size() == 1) {
          assertEquals(registeredWorkers.iterator().next(), worker, what);
        }
        if (route.equals("POST /select_and_reserve")) {
          openReservations.add(json.path("selection_id").asText());
        }
        Matcher session = Pattern.compile("\"session_id\"\\s*:\\s*\"([^\"]+)\"").matcher(c);
        if (session.find()) {
          Long before = sessionWorkers.putIfAbsent(session.group(1), worker);
          assertTrue(
              before == null || before == worker,
              "session " + session.group(1) + " left worker " + before + ": " + what);
        }
      } else if (method.equals("POST") && path.matches("/reservations/[^/]+/prefill_complete")) {
        assertEquals("ok", json.path("status").asText(), what);
      } else if (method.equals("DELETE") && path.startsWith("/reservations/")) {
        assertEquals("ok", json.path("status").asText(), what);
        openReservations.remove(path.substring("/reservations/".length()));
      } else if (route.equals("GET /loads")) {
        checkLoads(json, what);
      } else if (route.equals("POST /generate")) {
        assertTrue(json.has("worker_id") && json.has("cached_tokens"), what);
      } else if (route.equals("GET /state")) {
        assertTrue(json.path("ranks").isArray() && json.path("ranks").size() > 0, what);
      } else if (route.equals("POST /clear")) {
        assertTrue(json.path("cleared").asBoolean(), what);
      } else if (route.equals("POST /restart")) {
        assertTrue(json.path("restarted").asBoolean(), what);
      }
    }

    /** Every rank of every registered worker is listed; with no booking left open, all load is zero. */
    private void checkLoads(JsonNode json, String what) {
      Set<Long> listed = new HashSet<>();
      for (JsonNode partition : json) {
        for (JsonNode rank : partition.path("loads")) {
          listed.add(rank.path("worker_id").asLong());
          if (openReservations.isEmpty()) {
            assertEquals(0, rank.path("potential_prefill_tokens").asLong(-1), what);
            assertEquals(0, rank.path("potential_decode_blocks").asLong(-1), what);
            assertEquals(0, rank.path("active_requests").asLong(-1), what);
          }
        }
      }
      assertTrue(
          listed.containsAll(registeredWorkers),
          "loads miss a registered worker " + registeredWorkers + ": " + what);
    }

    private static List<String> readyLines(Started s) {
      return s.stdout().lines().filter(l -> l.startsWith("{")).toList();
    }

    private void assertAlive(Started s) {
      if (!s.process().isAlive()) {
        fail(
            block.where()
                + ": exited with "
                + s.process().exitValue()
                + " while starting: "
                + s.command()
                + "\nstderr:\n"
                + s.stderrTail());
      }
    }
  }
}
