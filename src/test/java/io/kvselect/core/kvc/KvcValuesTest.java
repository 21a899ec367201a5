package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The KVC value types at their edges: every parameter bound of {@link KvcParams} (the last value
 * accepted and the first refused), the probe budget, the {@code with*} copies, the request and
 * decision invariants, and the wire names of the enums.
 */
class KvcValuesTest {

  private static final KvcParams D = KvcParams.defaults();

  private static KvcParams params(
      double alpha, int tauReject, long tauAppend, double rho, Integer epsilon) {
    return new KvcParams(
        alpha,
        tauReject,
        tauAppend,
        rho,
        epsilon,
        AdmitAccounting.LITERAL,
        ResetScope.WINNER,
        false);
  }

  /** name, alpha, tau_reject, tau_append, rho, epsilon, accepted. */
  static Stream<Arguments> bounds() {
    return Stream.of(
        Arguments.of("alpha 0 (no sticky bonus)", 0.0, 3, 8192L, 0.95, null, true),
        Arguments.of("alpha just below 0", -1e-9, 3, 8192L, 0.95, null, false),
        Arguments.of("alpha NaN", Double.NaN, 3, 8192L, 0.95, null, false),
        Arguments.of("alpha +infinity", Double.POSITIVE_INFINITY, 3, 8192L, 0.95, null, false),
        Arguments.of("alpha large but finite", 1e300, 3, 8192L, 0.95, null, true),
        Arguments.of("tau_reject 1", 1.0, 1, 8192L, 0.95, null, true),
        Arguments.of("tau_reject 0", 1.0, 0, 8192L, 0.95, null, false),
        Arguments.of("tau_append 0", 1.0, 3, 0L, 0.95, null, true),
        Arguments.of("tau_append -1", 1.0, 3, -1L, 0.95, null, false),
        Arguments.of("rho 1", 1.0, 3, 8192L, 1.0, null, true),
        Arguments.of("rho just above 1", 1.0, 3, 8192L, Math.nextUp(1.0), null, false),
        Arguments.of("rho just above 0", 1.0, 3, 8192L, Double.MIN_VALUE, null, true),
        Arguments.of("rho 0", 1.0, 3, 8192L, 0.0, null, false),
        Arguments.of("rho NaN", 1.0, 3, 8192L, Double.NaN, null, false),
        Arguments.of("epsilon 0", 1.0, 3, 8192L, 0.95, 0, true),
        Arguments.of("epsilon -1", 1.0, 3, 8192L, 0.95, -1, false));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("bounds")
  void paramsAcceptExactlyTheirDocumentedRanges(
      String name,
      double alpha,
      int tauReject,
      long tauAppend,
      double rho,
      Integer epsilon,
      boolean accepted) {
    if (accepted) {
      KvcParams p =
          assertDoesNotThrow(() -> params(alpha, tauReject, tauAppend, rho, epsilon), name);
      assertEquals(alpha, p.alpha(), name);
      assertEquals(rho, p.rho(), name);
    } else {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> params(alpha, tauReject, tauAppend, rho, epsilon),
              name);
      assertTrue(e.getMessage().startsWith("kvc "), e.getMessage());
    }
  }

  @Test
  void paramsNeedAnAccountingAndAResetScope() {
    assertThrows(
        NullPointerException.class,
        () -> new KvcParams(1, 3, 8192, 0.95, null, null, ResetScope.WINNER, false));
    assertThrows(
        NullPointerException.class,
        () -> new KvcParams(1, 3, 8192, 0.95, null, AdmitAccounting.NET, null, false));
  }

  @Test
  void theDefaultsAreTheOriginals() {
    assertEquals(
        new KvcParams(1.0, 3, 8192, 0.95, null, AdmitAccounting.LITERAL, ResetScope.WINNER, false),
        D);
  }

  /** decode workers, epsilon, probes. */
  static Stream<Arguments> probeBudgets() {
    return Stream.of(
        Arguments.of(1, null, 1),
        Arguments.of(2, null, 1),
        Arguments.of(3, null, 2),
        Arguments.of(8, null, 7),
        Arguments.of(1, 0, 0),
        Arguments.of(8, 0, 0),
        Arguments.of(2, 5, 5));
  }

  @ParameterizedTest(name = "|D| {0}, epsilon {1}: {2} probes")
  @MethodSource("probeBudgets")
  void theProbeBudgetIsEpsilonElseAllButOneAndAtLeastOne(int decode, Integer epsilon, int probes) {
    assertEquals(probes, D.withEpsilon(epsilon).epsilonFor(decode));
  }

  @Test
  void eachWithCopyChangesOnlyItsOwnField() {
    KvcParams base = new KvcParams(2.0, 4, 100, 0.5, 2, AdmitAccounting.NET, ResetScope.ALL, true);
    assertEquals(
        new KvcParams(7.0, 4, 100, 0.5, 2, AdmitAccounting.NET, ResetScope.ALL, true),
        base.withAlpha(7));
    assertEquals(
        new KvcParams(2.0, 9, 100, 0.5, 2, AdmitAccounting.NET, ResetScope.ALL, true),
        base.withTauReject(9));
    assertEquals(
        new KvcParams(2.0, 4, 55, 0.5, 2, AdmitAccounting.NET, ResetScope.ALL, true),
        base.withTauAppend(55));
    assertEquals(
        new KvcParams(2.0, 4, 100, 0.25, 2, AdmitAccounting.NET, ResetScope.ALL, true),
        base.withRho(0.25));
    assertEquals(
        new KvcParams(2.0, 4, 100, 0.5, null, AdmitAccounting.NET, ResetScope.ALL, true),
        base.withEpsilon(null));
    assertEquals(
        new KvcParams(2.0, 4, 100, 0.5, 2, AdmitAccounting.LITERAL, ResetScope.ALL, true),
        base.withAccounting(AdmitAccounting.LITERAL));
    assertEquals(
        new KvcParams(2.0, 4, 100, 0.5, 2, AdmitAccounting.NET, ResetScope.NONE, true),
        base.withResetScope(ResetScope.NONE));
    assertEquals(
        new KvcParams(2.0, 4, 100, 0.5, 2, AdmitAccounting.NET, ResetScope.ALL, false),
        base.withCountWaiting(false));
  }

  @Test
  void aWithCopyIsValidatedLikeANewValue() {
    assertThrows(IllegalArgumentException.class, () -> D.withRho(0));
    assertThrows(IllegalArgumentException.class, () -> D.withTauReject(0));
    assertThrows(IllegalArgumentException.class, () -> D.withAlpha(-1));
    assertThrows(IllegalArgumentException.class, () -> D.withTauAppend(-1));
    assertThrows(IllegalArgumentException.class, () -> D.withEpsilon(-1));
  }

  @Test
  void aRequestKeepsItsAppendWithinItsInput() {
    assertDoesNotThrow(() -> new KvcRequest("s", 0, 0, 0));
    assertDoesNotThrow(() -> new KvcRequest("s", 0, 10, 10));
    assertThrows(IllegalArgumentException.class, () -> new KvcRequest("s", -1, 10, 1));
    assertThrows(IllegalArgumentException.class, () -> new KvcRequest("s", 0, -1, 0));
    assertThrows(IllegalArgumentException.class, () -> new KvcRequest("s", 0, 10, -1));
    assertThrows(IllegalArgumentException.class, () -> new KvcRequest("s", 0, 10, 11));
    assertThrows(NullPointerException.class, () -> new KvcRequest(null, 0, 10, 1));
  }

  @Test
  void anAdmissionHasAServingModeAndARejectHasNone() {
    for (KvcMode m : List.of(KvcMode.DIRECT, KvcMode.SEED, KvcMode.RESEED)) {
      AdmitDecision d = AdmitDecision.admit(m);
      assertTrue(d.admitted());
      assertEquals(m, d.mode());
      assertNull(d.reason());
    }
    AdmitDecision r = AdmitDecision.reject(AdmitDecision.NO_CAPACITY);
    assertFalse(r.admitted());
    assertNull(r.mode());
    assertEquals("no-d-capacity", r.reason());
    assertThrows(IllegalArgumentException.class, () -> AdmitDecision.admit(KvcMode.FALLBACK));
    assertThrows(IllegalArgumentException.class, () -> AdmitDecision.admit(null));
    assertThrows(
        IllegalArgumentException.class, () -> new AdmitDecision(false, KvcMode.DIRECT, "x"));
  }

  @Test
  void theReasonsAreTheOriginalsWireNames() {
    assertEquals("real-large-append", AdmitDecision.LARGE_APPEND);
    assertEquals("session-not-resident-no-capacity", AdmitDecision.NOT_RESIDENT_NO_CAPACITY);
    assertEquals("admission-timeout", AdmitDecision.TIMEOUT);
    assertEquals("admission-error", AdmitDecision.RPC_ERROR);
  }

  @Test
  void anAdmissionWithoutAModeIsSeedOnTheFirstTurnElseReseed() {
    assertEquals(KvcMode.SEED, AdmissionClient.modeFor(new KvcRequest("s", 0, 10, 10)));
    assertEquals(KvcMode.RESEED, AdmissionClient.modeFor(new KvcRequest("s", 1, 10, 10)));
    assertEquals(KvcMode.RESEED, AdmissionClient.modeFor(new KvcRequest("s", 40, 10, 1)));
  }

  @Test
  void enumsHaveLowerCaseWireNamesAndParseThemBack() {
    assertEquals(
        List.of("direct", "seed", "reseed", "fallback"),
        Stream.of(KvcMode.values()).map(KvcMode::wire).toList());
    for (AdmitAccounting a : AdmitAccounting.values()) {
      assertEquals(a, AdmitAccounting.parse(" " + a.wire().toUpperCase() + " "));
      assertEquals(a.name().toLowerCase(), a.wire());
    }
    for (ResetScope s : ResetScope.values()) {
      assertEquals(s, ResetScope.parse(" " + s.wire() + "\t"));
      assertEquals(s.name().toLowerCase(), s.wire());
    }
    assertEquals(ResetScope.ALL, ResetScope.parse("All"));
    assertThrows(IllegalArgumentException.class, () -> ResetScope.parse("some"));
    assertThrows(IllegalArgumentException.class, () -> AdmitAccounting.parse("gross"));
  }

  @Test
  void snapshotsOutcomesAndAnswersAreCopies() {
    WorkerRank a = new WorkerRank(1, 0);
    Map<WorkerRank, Integer> rejects = new HashMap<>(Map.of(a, 2));
    KvcSnapshot s = new KvcSnapshot(a, rejects, new HashMap<>(), new HashMap<>(), 3);
    rejects.put(a, 9);
    assertEquals(2, s.rejects().get(a), "the snapshot does not follow the caller's map");
    assertThrows(UnsupportedOperationException.class, () -> s.rejects().put(a, 1));
    assertEquals(new KvcSnapshot(null, Map.of(), Map.of(), Map.of(), 0), KvcSnapshot.EMPTY);

    List<KvcOutcome.Attempt> attempts = new ArrayList<>(List.of(new KvcOutcome.Attempt(a, "x")));
    KvcOutcome o = new KvcOutcome(KvcMode.RESEED, a, null, attempts, null, false);
    attempts.clear();
    assertEquals(1, o.attempts().size());
    assertThrows(
        NullPointerException.class, () -> new KvcOutcome(null, a, null, List.of(), null, false));
    assertThrows(
        NullPointerException.class,
        () -> new KvcOutcome(KvcMode.SEED, null, null, List.of(), null, false));

    List<KvcAnswer.Probe> probes = new ArrayList<>(List.of(new KvcAnswer.Probe(1, 0, "x")));
    KvcAnswer k = new KvcAnswer("seed", null, 5, probes);
    probes.clear();
    assertEquals(List.of(new KvcAnswer.Probe(1, 0, "x")), k.attempts());
  }

  @Test
  void anOptionNeedsARankAndDefaultsItsAccountedKvToZero() {
    assertThrows(NullPointerException.class, () -> new KvcRoute.Option(null, 0, 0, 0, 0, false));
    assertEquals(0, new KvcRoute.Option(new WorkerRank(1, 0), 3, 1, 1, 0, true).residentTokens());
    assertThrows(IllegalArgumentException.class, () -> KvcRoute.route(List.of(), D));
  }
}
