package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Hand-computed logits; block size 4 and a 16-token (4-block) prompt unless a row says so. */
class CostFunctionTest {

  private static final RouterConfig DEFAULTS = RouterConfig.DEFAULTS;
  private static final CostRequest TRACKED = new CostRequest(4, 16, true, false);

  private static Candidate loaded(
      RankOverlap overlap, long activePrefill, long decodeBlocks, int requests, double taint) {
    return new Candidate(
        new WorkerRank(1, 0), overlap, true, activePrefill, decodeBlocks, requests, taint);
  }

  private static Candidate loaded(RankOverlap overlap, long activePrefill, long decodeBlocks) {
    return loaded(overlap, activePrefill, decodeBlocks, 0, 0.0);
  }

  private static RankOverlap device(int blocks) {
    return new RankOverlap(blocks, 0, 0, 0);
  }

  private static RouterConfig override(
      Double credit, Double scale, Double decay, Double requestWeight) {
    RouterConfig base = DEFAULTS;
    if (decay != null || requestWeight != null) {
      base =
          base.toBuilder()
              .overlapScoreCreditDecay(
                  decay != null ? decay : base.cost().overlapScoreCreditDecay())
              .decodeActiveRequestWeight(
                  requestWeight != null ? requestWeight : base.cost().decodeActiveRequestWeight())
              .build();
    }
    return base.with(new RouterConfigOverride(credit, scale, null, null, null, null, null, null));
  }

  static Stream<Arguments> rows() {
    CostRequest untracked = new CostRequest(4, 16, false, false);
    CostRequest decodePool = new CostRequest(4, 16, false, true);
    return Stream.of(
        // 16 raw tokens = 4 blocks, nothing cached.
        Arguments.of(
            "no cache",
            DEFAULTS,
            TRACKED,
            List.of(loaded(RankOverlap.NONE, 0, 0)),
            new double[] {4.0}),
        // raw = 8 active + 8 uncached + 8 cached = 6 blocks; credit 2; + 3 decode.
        Arguments.of(
            "device hit with load",
            DEFAULTS,
            TRACKED,
            List.of(loaded(device(2), 8, 3)),
            new double[] {7.0}),
        // credit = 1 + 0.75*2 + 0.25*(1+1) = 3 blocks; raw = 16 tokens = 4 blocks.
        Arguments.of(
            "host, disk and external extensions",
            DEFAULTS,
            TRACKED,
            List.of(loaded(new RankOverlap(1, 2, 1, 1), 0, 0)),
            new double[] {1.0}),
        // credit = 0.5*2 + 0.75*1 = 1.75 (Dynamo's overlap unit test); 4 - 1.75.
        Arguments.of(
            "credit override 0.5",
            override(0.5, null, null, null),
            TRACKED,
            List.of(loaded(new RankOverlap(2, 1, 0, 0), 0, 0)),
            new double[] {2.25}),
        // 2 * (4 - 1) + 1 decode.
        Arguments.of(
            "prefill_load_scale 2",
            override(null, 2.0, null, null),
            TRACKED,
            List.of(loaded(device(1), 0, 1)),
            new double[] {7.0}),
        // Credit 0: a device hit no longer lowers the cost.
        Arguments.of(
            "credit 0 ignores overlap",
            override(0.0, null, null, null),
            TRACKED,
            List.of(loaded(device(3), 0, 0)),
            new double[] {4.0}),
        // A: excess 8 tokens = 2 blocks over 4 request blocks -> decay 1/(1+0.5) = 2/3;
        // raw 24 tokens = 6 blocks; credit 2 * 2/3. B sits at the load floor: full credit.
        Arguments.of(
            "credit decay 1.0",
            override(null, null, 1.0, null),
            TRACKED,
            List.of(loaded(device(2), 8, 0), loaded(device(1), 0, 0)),
            new double[] {6.0 - 4.0 / 3.0, 3.0}),
        // Decay only applies when prefill is tracked.
        Arguments.of(
            "decay ignored without prefill tracking",
            override(null, null, 1.0, null),
            untracked,
            List.of(loaded(device(2), 8, 5)),
            new double[] {5.0}),
        // 4 + 10 decode + 0.5 * 3 requests.
        Arguments.of(
            "active request weight",
            override(null, null, null, 0.5),
            TRACKED,
            List.of(loaded(RankOverlap.NONE, 0, 10, 3, 0.0)),
            new double[] {15.5}),
        // max(5 - 2, 0) + 0.5*2 and max(5 - 7, 0) + 0.5*2.
        Arguments.of(
            "decode pool",
            override(null, null, null, 0.5),
            decodePool,
            List.of(loaded(device(2), 0, 5, 2, 0.0), loaded(device(7), 0, 5, 2, 0.0)),
            new double[] {4.0, 1.0}),
        // With credit 0 the decode pool uses the normal form: no prefill, decode + requests.
        Arguments.of(
            "decode pool without credit",
            override(0.0, null, null, 0.5),
            decodePool,
            List.of(loaded(device(2), 0, 5, 2, 0.0)),
            new double[] {6.0}),
        // Not a decode pool: untracked prefill is 0 and the credit cannot go below 0.
        Arguments.of(
            "untracked prefill",
            DEFAULTS,
            untracked,
            List.of(loaded(device(2), 40, 5)),
            new double[] {5.0}),
        // 4 * exp(-tanh(1)) and 4 * exp(-tanh(-1)).
        Arguments.of(
            "preferred taints",
            DEFAULTS,
            TRACKED,
            List.of(
                loaded(RankOverlap.NONE, 0, 0, 0, 1.0), loaded(RankOverlap.NONE, 0, 0, 0, -1.0)),
            new double[] {1.8676859508897703, 8.5667507389974}),
        // 6 device blocks = 24 cached tokens > isl 16, credit 0 so the raw term shows:
        // a load row charges 0 + 0 + 24 tokens (6 blocks), no load row charges the isl (4).
        Arguments.of(
            "no load row charges the isl",
            override(0.0, null, null, null),
            TRACKED,
            List.of(loaded(device(6), 0, 0), Candidate.unloaded(new WorkerRank(2, 0), device(6))),
            new double[] {6.0, 4.0}),
        Arguments.of(
            "no load row, untracked",
            DEFAULTS,
            untracked,
            List.of(Candidate.unloaded(new WorkerRank(2, 0), RankOverlap.NONE)),
            new double[] {0.0}));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("rows")
  void logitsMatchHandComputedValues(
      String name, RouterConfig cfg, CostRequest req, List<Candidate> cands, double[] expected) {
    assertArrayEquals(expected, CostFunction.logits(cfg, req, cands), 1e-12, name);
  }

  @Test
  void intoArrayVariantLeavesTrailingSlotsAlone() {
    double[] out = {-1, -1, -1};
    CostFunction.logits(DEFAULTS, TRACKED, List.of(loaded(device(1), 0, 0)), out);
    assertArrayEquals(new double[] {3.0, -1, -1}, out);
    assertThrows(
        IllegalArgumentException.class,
        () ->
            CostFunction.logits(
                DEFAULTS,
                TRACKED,
                List.of(loaded(device(1), 0, 0), loaded(device(1), 0, 0)),
                new double[1]));
  }

  @Test
  void minimumDecayBaseIsOverAllCandidates() {
    RouterConfig cfg = override(null, null, 1.0, null);
    // Both ranks carry 8 active tokens: neither is above the floor, so no decay.
    double[] logits =
        CostFunction.logits(
            cfg, TRACKED, List.of(loaded(device(2), 8, 0), loaded(device(2), 8, 0)));
    assertArrayEquals(new double[] {4.0, 4.0}, logits, 1e-12);
  }

  @ParameterizedTest(name = "device {0} host {1} disk {2} external {3} bs {4} -> {5}")
  @CsvSource({
    "0, 0, 0, 0, 4, 0",
    "2, 0, 0, 0, 4, 8",
    "2, 1, 0, 0, 4, 11",
    "0, 0, 1, 1, 16, 8",
    "1, 1, 0, 0, 3, 5",
    "0, 0, 1, 0, 2, 1",
  })
  void effectiveCachedTokensWeighsTiers(
      int device, int host, int disk, int external, int bs, long expected) {
    RankOverlap o = new RankOverlap(device, host, disk, external);
    assertEquals(expected, CostFunction.effectiveCachedTokens(DEFAULTS, o, bs));
  }

  @ParameterizedTest(name = "isl {0} cached {1} -> {2}")
  @CsvSource({"4, 0, 4", "16, 8, 8", "16, 16, 0", "16, 24, 0", "0, 5, 0"})
  void effectivePrefillTokensClampsToIsl(long isl, long cached, long expected) {
    assertEquals(expected, CostFunction.effectivePrefillTokens(isl, cached));
  }

  @Test
  void candidateWithoutLoadRowMustCarryNoLoad() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new Candidate(new WorkerRank(1, 0), RankOverlap.NONE, false, 5, 0, 0, 0));
    assertThrows(IllegalArgumentException.class, () -> new CostRequest(0, 16, true, false));
  }
}
