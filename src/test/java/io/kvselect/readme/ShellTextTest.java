package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ShellTextTest {

  @Test
  void quotedTextSpansLinesAndCommentsAreDropped() {
    String block =
        """
        # a comment line
        ./bin/kvselect --port 8092 &   # trailing comment
        curl -s -XPOST localhost:8092/workers -d '{
          "worker_id": 1, "note": "# not a comment"}'
        echo a\\
          b "x
        y" c#d
        """;
    assertEquals(
        List.of(
            "./bin/kvselect --port 8092 &",
            "curl -s -XPOST localhost:8092/workers -d '{\n  \"worker_id\": 1, \"note\": \"# not a comment\"}'",
            "echo a   b \"x\ny\" c#d"),
        ShellText.commands(block));
  }

  @Test
  void anUnterminatedQuoteIsAnError() {
    assertThrows(IllegalArgumentException.class, () -> ShellText.commands("curl -d '{\n"));
  }

  @Test
  void backgroundAndProgram() {
    assertTrue(ShellText.background("./bin/kvselect &"));
    assertFalse(ShellText.background("a && b"));
    assertEquals("./bin/kvselect", ShellText.foreground("./bin/kvselect &"));
    assertEquals(
        "./bin/kvselect",
        ShellText.program("DYN_ROUTER_USE_KV_EVENTS=false ./bin/kvselect --port 1"));
    assertEquals("curl", ShellText.program("curl -s x"));
  }
}
