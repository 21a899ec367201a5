package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The baseline policies (least_loaded, round_robin, sticky), kvc's Route form, and the configured switch. */
class BaselinePoliciesTest {

  /** {device overlap, active requests, potential decode blocks, active prefill tokens} per candidate. */
  static List<Candidate> cands(long[][] rows) {
    List<Candidate> out = new ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      long[] r = rows[i];
      out.add(
          new Candidate(
              new WorkerRank(i, 0),
              new RankOverlap((int) r[0], 0, 0, 0),
              true,
              r[3],
              r[2],
              (int) r[1],
              0));
    }
    return out;
  }

  static PolicyContext ctx(String policy, String session) {
    RouterConfig c =
        RouterConfig.DEFAULTS.withSelectionPolicy(PolicySettings.defaults().withName(policy));
    return new PolicyContext(c, new CostRequest(4, 64, true, false), new Random(1), session);
  }

  static Stream<Arguments> leastLoaded() {
    return Stream.of(
        Arguments.of(
            "fewest active requests", new long[][] {{9, 3, 0, 0}, {0, 1, 50, 50}, {0, 2, 0, 0}}, 1),
        Arguments.of("then fewest decode blocks", new long[][] {{0, 1, 9, 0}, {0, 1, 4, 90}}, 1),
        Arguments.of("then fewest prefill tokens", new long[][] {{0, 1, 4, 9}, {0, 1, 4, 3}}, 1),
        Arguments.of("exact tie: first", new long[][] {{0, 1, 4, 3}, {0, 1, 4, 3}}, 0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("leastLoaded")
  void leastLoadedTable(String name, long[][] rows, int expected) {
    assertEquals(
        expected, new LeastLoadedPolicy().choose(cands(rows), ctx("least_loaded", null)), name);
  }

  static Stream<Arguments> kvcRoute() {
    return Stream.of(
        Arguments.of("most device overlap", new long[][] {{1, 0, 0, 0}, {5, 9, 0, 0}}, 1),
        Arguments.of("then fewest active", new long[][] {{5, 3, 0, 0}, {5, 2, 0, 0}}, 1),
        Arguments.of("tie: first", new long[][] {{5, 2, 0, 0}, {5, 2, 0, 0}}, 0));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("kvcRoute")
  void kvcRouteFormTable(String name, long[][] rows, int expected) {
    assertEquals(expected, new KvcRoutePolicy().choose(cands(rows), ctx("kvc", null)), name);
  }

  @Test
  void roundRobinCyclesOverTheCandidates() {
    RoundRobinPolicy p = new RoundRobinPolicy();
    List<Candidate> c = cands(new long[][] {{0, 0, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}});
    List<Integer> got = new ArrayList<>();
    for (int i = 0; i < 7; i++) {
      got.add(p.choose(c, ctx("round_robin", null)));
    }
    assertEquals(List.of(0, 1, 2, 0, 1, 2, 0), got);
  }

  @Test
  void stickyPinsASessionToItsFirstChoiceRegardlessOfLoad() {
    StickyPolicy p = new StickyPolicy();
    List<Candidate> first = cands(new long[][] {{0, 2, 0, 0}, {0, 0, 0, 0}, {0, 1, 0, 0}});
    assertEquals(1, p.choose(first, ctx("sticky", "s")), "first sight: least loaded");
    List<Candidate> later = cands(new long[][] {{9, 0, 0, 0}, {0, 30, 0, 0}, {0, 0, 0, 0}});
    assertEquals(1, p.choose(later, ctx("sticky", "s")), "then pinned, however loaded");
    assertEquals(0, p.choose(later, ctx("sticky", "t")), "another session: least loaded");
    List<Candidate> gone = cands(new long[][] {{0, 4, 0, 0}}).subList(0, 1);
    assertEquals(0, p.choose(gone, ctx("sticky", "s")), "pin gone: re-placed");
    assertEquals(new WorkerRank(0, 0), p.pin("s"));
    assertEquals(
        0, p.choose(later, ctx("sticky", null)), "no session: least loaded (first of the tie)");
  }

  @Test
  void theConfiguredPolicyFollowsTheRequestsConfig() {
    ConfiguredPolicy p = new ConfiguredPolicy();
    List<Candidate> c = cands(new long[][] {{8, 5, 0, 0}, {0, 0, 0, 0}});
    assertEquals(0, p.choose(c, ctx("kvc", null)), "kvc: overlap");
    assertEquals(1, p.choose(c, ctx("least_loaded", null)), "least loaded");
    assertEquals("kv", p.delegate("kv").name());
    for (String n : PolicySettings.NAMES) {
      assertEquals(n, p.delegate(n).name());
    }
  }
}
