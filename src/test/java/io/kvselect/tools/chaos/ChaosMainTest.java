package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The phases a command line selects and the flags it refuses; nothing is started. */
class ChaosMainTest {

  private static ChaosMain parse(String... args) {
    ChaosMain m = new ChaosMain();
    new CommandLine(m).parseArgs(args);
    return m;
  }

  private static List<String> names(ChaosMain m) {
    return m.phases().stream().map(PhaseRunner.Phase::name).toList();
  }

  @Test
  void theDefaultRunHasEveryPhaseButTheLongPartition() {
    assertEquals(List.of("baseline", "sigkill-restart", "sigstop", "partition"), names(parse()));
    assertEquals(
        List.of("baseline", "sigkill-restart", "sigstop", "partition", "long-partition"),
        names(parse("--long-partition")));
    assertEquals(List.of("baseline", "sigstop"), names(parse("--no-kill", "--no-partition")));
  }

  @Test
  void theShortRunHasNoPartitionAndShortPhases() {
    ChaosMain m = parse("--short", "--long-partition");
    ChaosOptions o = m.resolve();
    assertEquals(List.of("baseline", "sigkill-restart", "sigstop"), names(m));
    assertEquals(10, o.baselineSecs());
    assertEquals(6, m.phases().get(2).faultSecs());
    assertEquals(2, o.victim(), "the last of 3 nodes");
  }

  @Test
  void badFlagsAreRefusedNamingTheFlag() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> parse("--victim", "3").resolve());
    assertTrue(e.getMessage().contains("--victim"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse("--nodes", "1").resolve());
    assertTrue(e.getMessage().contains("--nodes"), e.getMessage());
    e = assertThrows(IllegalArgumentException.class, () -> parse("--pause-secs", "-1").resolve());
    assertTrue(e.getMessage().contains("--*-secs"), e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () -> parse("--sessions", "4", "--clients", "8").resolve());
    assertTrue(e.getMessage().contains("--sessions"), e.getMessage());
  }
}
