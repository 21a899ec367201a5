package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.readme.ReadmeBlocks.Block;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.FatJar;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the commands of {@code examples/README.md}, as written there (only the node's port is
 * changed from 8092 to this test's ephemeral one), from the repository root against a live node
 * with one registered worker, with the fat jar that {@code package} built. Integration-test phase:
 * the commands name {@code target/kvselect-*-fat.jar}.
 */
class ExamplesCommandsIT {

  private static final Path EXAMPLES_README = Path.of("examples/README.md").toAbsolutePath();
  private static final Pattern PRINTS = Pattern.compile("//\\s*prints:\\s*(.+?)\\s*$");
  private static final long COMMAND_SECONDS = 120;

  private static KvselectNode node;

  @BeforeAll
  static void startNode() throws Exception {
    FatJar.path();
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "0"},
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + "/workers"))
                    .header("content-type", "application/json")
                    .POST(
                        HttpRequest.BodyPublishers.ofString(
                            "{\"worker_id\": 1, \"endpoint\": \"http://worker-1:8000\", \"block_size\": 16}"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(201, r.statusCode(), r.body());
  }

  @AfterAll
  static void stopNode() throws Exception {
    if (node != null) {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  record Ran(int exit, String out) {}

  /** The {@code bash} block under the heading that starts with {@code heading}. */
  private static String command(String heading) {
    List<Block> blocks =
        ReadmeBlocks.read(EXAMPLES_README).stream()
            .filter(b -> b.info().equals("bash") && b.heading().startsWith(heading))
            .toList();
    assertEquals(1, blocks.size(), "one bash block under '" + heading + "' in " + EXAMPLES_README);
    return blocks.get(0).text();
  }

  private static Ran run(String script) throws Exception {
    String adapted = script.replace("127.0.0.1:8092", "127.0.0.1:" + node.port());
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-euo", "pipefail", "-c", adapted)
            .directory(Path.of("").toAbsolutePath().toFile())
            .redirectErrorStream(true);
    Process p = pb.start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(COMMAND_SECONDS, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new AssertionError("did not finish in " + COMMAND_SECONDS + " s: " + adapted);
    }
    return new Ran(p.exitValue(), new String(out, StandardCharsets.UTF_8));
  }

  @Test
  void everyExampleHasOneCommandAndItRunsAsWritten() {
    for (String h : List.of("Python", "Vert.x web client", "The README's embedding blocks")) {
      command(h);
    }
  }

  @Test
  void thePythonClientRunsAsDocumented() throws Exception {
    Ran r = run(command("Python"));
    assertEquals(0, r.exit(), r.out());
    ObjectMapper json = new ObjectMapper();
    List<String> steps = new ArrayList<>();
    for (String l : r.out().strip().split("\n")) {
      steps.add(json.readTree(l).get("step").asText());
    }
    assertEquals(List.of("selected", "prefill_complete", "freed"), steps, r.out());
  }

  @Test
  void theVertxClientRunsOnTheDocumentedClassPath() throws Exception {
    String cmd = command("Vert.x web client");
    assertTrue(
        cmd.contains("vertx-web-client/" + vertxVersion() + "/"),
        "the pom's Vert.x version: " + cmd);
    Ran r = run(cmd);
    assertEquals(0, r.exit(), r.out());
    assertTrue(
        r.out().strip().startsWith("worker 1 rank 0 at http://worker-1:8000, cached "), r.out());
  }

  @Test
  void theReadmeEmbeddingBlocksRunWithTheFatJarAlone(@TempDir Path dir) throws Exception {
    String cmd = command("The README's embedding blocks");
    List<Block> javaBlocks =
        ReadmeBlocks.read(ReadmeBlocks.readme()).stream()
            .filter(b -> b.info().equals("java") && b.notRun() == null)
            .toList();
    assertTrue(javaBlocks.size() >= 2, "the Embedding blocks: " + javaBlocks.size());
    for (Block b : javaBlocks) {
      Path embed = Files.createDirectories(dir.resolve("b" + b.line())).resolve("Embed.java");
      StringBuilder imports = new StringBuilder();
      StringBuilder body = new StringBuilder();
      List<String> printed = new ArrayList<>();
      for (String l : b.lines()) {
        (l.startsWith("import ") ? imports : body).append(l).append('\n');
        Matcher m = PRINTS.matcher(l);
        if (m.find()) {
          printed.add(m.group(1));
        }
      }
      Files.writeString(
          embed,
          imports
              + "public class Embed {\n  public static void main(String[] args) throws Exception {\n"
              + body
              + "  }\n}\n");
      Ran r = run(cmd.replace(" Embed.java", " '" + embed + "'"));
      assertEquals(0, r.exit(), b.where() + ": " + r.out());
      List<String> out =
          r.out().lines().filter(l -> printed.stream().anyMatch(p -> l.strip().equals(p))).toList();
      assertEquals(printed, out, b.where() + " prints what its comments say: " + r.out());
    }
  }

  private static String vertxVersion() throws Exception {
    Matcher m =
        Pattern.compile("<vertx.version>([^<]+)</vertx.version>")
            .matcher(Files.readString(Path.of("pom.xml")));
    assertTrue(m.find());
    return m.group(1);
  }
}
