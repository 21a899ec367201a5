package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.liveness.RetryingListenerWatch;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Where a newcomer looks (the README's Quick start and mocker section, docs/engines.md's
 * "Register and check") says that a dead engine keeps its traffic unless {@code
 * --liveness-grace-secs} is set, with a flag and a warning grace that match the code.
 */
class LivenessDocsTest {

  static String section(String doc, String heading) {
    int start = doc.indexOf("\n" + heading + "\n");
    assertTrue(start >= 0, "no section " + heading);
    int end = doc.indexOf("\n## ", start + heading.length() + 2);
    return doc.substring(start, end < 0 ? doc.length() : end);
  }

  @Test
  void theLivenessFlagIsNamedWhereUsersLook() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    String engines = Files.readString(Path.of("docs/engines.md"));
    long grace = RetryingListenerWatch.GRACE.toSeconds();
    for (String s :
        new String[] {
          section(readme, "## Quick start"),
          section(readme, "## Mock engines (`bin/kvselect-mocker`)"),
          section(engines, "## Register and check")
        }) {
      assertTrue(s.contains("--liveness-grace-secs"), "names --liveness-grace-secs:\n" + s);
      assertTrue(s.contains("schedulable"), s);
    }
    assertTrue(
        section(readme, "## Quick start")
            .replace('\n', ' ')
            .contains("retrying for " + grace + " s"));
    assertTrue(
        section(engines, "## Register and check")
            .replace('\n', ' ')
            .contains("retrying for " + grace + " s"));
    NodeSettings s = NodeSettings.parse(new String[] {"--liveness-grace-secs", "10"}, Map.of());
    assertEquals(10.0, s.operations().livenessGraceSecs());
  }
}
