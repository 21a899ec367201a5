package io.kvselect.server.workers;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.WorkerSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The workers-file format: the shipped example and the documented one parse; errors name the entry. */
class WorkersFileFormatTest {

  private static List<WorkerSpec> parse(String name, String content) {
    return WorkersFileFormat.parse(name, content.getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void theExampleInConfParses() throws Exception {
    List<WorkerSpec> specs =
        parse("workers.example.yaml", Files.readString(Path.of("conf/workers.example.yaml")));
    assertEquals(2, specs.size());
    assertEquals("http://127.0.0.1:8001/health", specs.get(0).healthUrl());
    assertEquals(8192L, specs.get(1).maxNumBatchedTokens());
  }

  @Test
  void theYamlBlockOfTheOperationsGuideParses() throws Exception {
    Matcher m =
        Pattern.compile("```yaml\n(.*?)```", Pattern.DOTALL)
            .matcher(Files.readString(Path.of("docs/operations.md")));
    assertTrue(m.find(), "docs/operations.md has no yaml block");
    List<WorkerSpec> specs = parse("w.yaml", m.group(1));
    assertEquals(2, specs.size());
    assertEquals(
        Map.of(0, "tcp://10.0.0.12:5557", 1, "tcp://10.0.0.12:5558"),
        specs.get(1).kvEventsEndpoints());
    assertEquals("llama-70b", specs.get(1).modelName());
  }

  @Test
  void errorsNameTheEntryAndTheField() {
    assertEquals(
        "must be a list of worker registrations (POST /workers bodies)",
        assertThrows(IllegalArgumentException.class, () -> parse("w.json", "{\"worker_id\": 1}"))
            .getMessage());
    assertEquals(
        "entry 0 must be an object",
        assertThrows(IllegalArgumentException.class, () -> parse("w.json", "[1]")).getMessage());
    String m =
        assertThrows(
                IllegalArgumentException.class,
                () -> parse("w.yaml", "- worker_id: 4\n  kv_events_endpoint: nonsense\n"))
            .getMessage();
    assertTrue(m.startsWith("entry 0 (worker_id 4): ") && m.contains("kv_events_endpoint"), m);
    m =
        assertThrows(
                IllegalArgumentException.class, () -> parse("w.yaml", "- endpoint: http://x\n"))
            .getMessage();
    assertTrue(m.startsWith("entry 0: ") && m.contains("worker_id"), m);
    assertTrue(
        assertThrows(IllegalArgumentException.class, () -> parse("w.json", "[{]"))
            .getMessage()
            .startsWith("not valid JSON: "));
    assertEquals(List.of(), parse("w.yml", "[]"));
  }
}
