package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.index.WorkerRank;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ResidentModelTest {

  static final WorkerRank D = new WorkerRank(7, 0);
  static final long K = 100_000;

  /**
   * Worker D holds session "s" with {@code own} tokens and others with {@code others} tokens;
   * {@code waiting} tokens promised to unfinished requests. rho 0.95: the limit is 95,000.
   */
  static Stream<Arguments> cases() {
    return Stream.of(
        // name, accounting, countWaiting, own, others, waiting, turn, input, append, expected
        Arguments.of(
            "resident, small: direct",
            "literal",
            false,
            10_000,
            20_000,
            0,
            3,
            10_500,
            500,
            "direct"),
        Arguments.of(
            "literal counts the own prefix twice",
            "literal",
            false,
            45_000,
            0,
            0,
            3,
            50_500,
            500,
            "reject:no-d-capacity"),
        Arguments.of("net counts it once", "net", false, 45_000, 0, 0, 3, 50_500, 500, "direct"),
        Arguments.of(
            "net: others plus input exactly at rho*K",
            "net",
            false,
            45_000,
            44_500,
            0,
            3,
            50_500,
            500,
            "direct"),
        Arguments.of(
            "net: one token over",
            "net",
            false,
            45_000,
            44_501,
            0,
            3,
            50_500,
            500,
            "reject:no-d-capacity"),
        Arguments.of(
            "large append is refused first",
            "net",
            false,
            1_000,
            0,
            0,
            3,
            10_193,
            9_193,
            "reject:real-large-append"),
        Arguments.of(
            "append at tau_append is fine", "net", false, 1_000, 0, 0, 3, 9_192, 8_192, "direct"),
        Arguments.of(
            "not resident, turn 0: seed",
            "literal",
            false,
            0,
            50_000,
            0,
            0,
            45_000,
            45_000,
            "seed"),
        Arguments.of(
            "not resident, later turn: reseed",
            "net",
            false,
            0,
            50_000,
            0,
            4,
            45_000,
            600,
            "reseed"),
        Arguments.of(
            "not resident, no room",
            "net",
            false,
            0,
            50_001,
            0,
            4,
            45_000,
            600,
            "reject:session-not-resident-no-capacity"),
        Arguments.of(
            "refinement counts promised KV",
            "net",
            true,
            0,
            30_000,
            85_000,
            3,
            10_500,
            500,
            "reject:session-not-resident-no-capacity"),
        Arguments.of(
            "without the refinement promised KV is not counted",
            "net",
            false,
            0,
            30_000,
            85_000,
            3,
            10_500,
            500,
            "reseed"),
        Arguments.of(
            "refinement: idle caches are evictable",
            "literal",
            true,
            45_000,
            49_000,
            0,
            3,
            50_500,
            500,
            "direct"),
        Arguments.of(
            "refinement: a resident session is direct up to K_d",
            "net",
            true,
            90_000,
            0,
            60_000,
            3,
            100_000,
            500,
            "direct"),
        Arguments.of(
            "refinement: but not past K_d",
            "net",
            true,
            90_000,
            0,
            0,
            3,
            100_001,
            500,
            "reject:no-d-capacity"),
        Arguments.of(
            "refinement: promised plus input exactly at rho*K",
            "net",
            true,
            0,
            90_000,
            44_500,
            4,
            50_500,
            500,
            "reseed"),
        Arguments.of(
            "refinement: one token over",
            "net",
            true,
            0,
            90_000,
            44_501,
            4,
            50_500,
            500,
            "reject:session-not-resident-no-capacity"));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void admitFollowsAlgorithmTwo(
      String name,
      String accounting,
      boolean countWaiting,
      long own,
      long others,
      long waiting,
      int turn,
      long input,
      long append,
      String expected) {
    ResidentModel m = new ResidentModel();
    m.put(D, "s", own);
    if (others > 0) {
      m.put(D, "other-a", others / 2);
      m.put(D, "other-b", others - others / 2);
    }
    m.addWaiting(D, waiting);
    m.put(new WorkerRank(8, 0), "elsewhere", 90_000);
    KvcParams p =
        KvcParams.defaults()
            .withAccounting(AdmitAccounting.parse(accounting))
            .withCountWaiting(countWaiting);
    AdmitDecision d = m.decide(D, new KvcRequest("s", turn, input, append), K, p);
    String got = d.admitted() ? d.mode().wire() : "reject:" + d.reason();
    assertEquals(expected, got, name);
  }
}
