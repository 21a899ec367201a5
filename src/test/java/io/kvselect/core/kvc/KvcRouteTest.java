package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class KvcRouteTest {

  /** {overlap, inflight, assigned, rejects, pinned(0/1)} per worker. */
  static Stream<Arguments> cases() {
    return Stream.of(
        Arguments.of(
            "overlap wins",
            new long[][] {{0, 0, 0, 0, 0}, {5, 9, 9, 0, 0}, {3, 0, 0, 0, 0}},
            1,
            false),
        Arguments.of(
            "alpha breaks an overlap tie toward the pin",
            new long[][] {{4, 0, 0, 0, 0}, {4, 5, 5, 0, 1}},
            1,
            false),
        Arguments.of(
            "any hash hit beats plain stickiness at alpha 1 (tie goes to sticky)",
            new long[][] {{1, 0, 0, 0, 0}, {0, 0, 0, 0, 1}},
            1,
            false),
        Arguments.of(
            "two hits beat plain stickiness",
            new long[][] {{2, 0, 0, 0, 0}, {0, 0, 0, 0, 1}},
            0,
            false),
        Arguments.of(
            "fewer in-flight breaks a score tie",
            new long[][] {{0, 3, 0, 0, 0}, {0, 1, 7, 0, 0}},
            1,
            false),
        Arguments.of(
            "fewer assigned breaks the next tie",
            new long[][] {{0, 1, 7, 0, 0}, {0, 1, 2, 0, 0}},
            1,
            false),
        Arguments.of(
            "exact tie keeps the first", new long[][] {{0, 1, 2, 0, 0}, {0, 1, 2, 0, 0}}, 0, false),
        Arguments.of(
            "blacklisted pin with full overlap is skipped",
            new long[][] {{9, 0, 0, 3, 1}, {0, 4, 4, 2, 0}},
            1,
            false),
        Arguments.of(
            "all blacklisted: the least rejected (degenerate)",
            new long[][] {{9, 0, 0, 5, 1}, {0, 0, 0, 3, 0}, {0, 0, 0, 4, 0}},
            1,
            true),
        Arguments.of(
            "all blacklisted, tie on rejects: the first",
            new long[][] {{0, 0, 0, 3, 0}, {9, 0, 0, 3, 1}},
            0,
            true));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void routeChoosesTheLexicographicMaximum(
      String name, long[][] rows, int expected, boolean degenerate) {
    List<KvcRoute.Option> options = new ArrayList<>();
    for (int i = 0; i < rows.length; i++) {
      long[] r = rows[i];
      options.add(
          new KvcRoute.Option(new WorkerRank(i, 0), r[0], r[1], r[2], (int) r[3], r[4] == 1));
    }
    KvcRoute.Choice c = KvcRoute.route(options, KvcParams.defaults());
    assertEquals(expected, c.index(), name);
    assertEquals(degenerate, c.degenerate(), name);
  }

  @org.junit.jupiter.api.Test
  void theRefinementSeedsWhereLeastKvIsAccounted() {
    List<KvcRoute.Option> options =
        List.of(
            new KvcRoute.Option(new WorkerRank(0, 0), 0, 0, 0, 0, false, 80_000),
            new KvcRoute.Option(new WorkerRank(1, 0), 0, 2, 9, 0, false, 10_000),
            new KvcRoute.Option(new WorkerRank(2, 0), 0, 1, 1, 0, false, 50_000));
    assertEquals(
        0, KvcRoute.route(options, KvcParams.defaults()).index(), "original: fewest in-flight");
    assertEquals(
        1,
        KvcRoute.route(options, KvcParams.defaults().withCountWaiting(true)).index(),
        "refinement: least accounted KV first");
    List<KvcRoute.Option> withOverlap =
        List.of(
            options.get(1), new KvcRoute.Option(new WorkerRank(3, 0), 4, 5, 5, 0, false, 90_000));
    assertEquals(
        1,
        KvcRoute.route(withOverlap, KvcParams.defaults().withCountWaiting(true)).index(),
        "overlap still comes first");
  }

  @ParameterizedTest(name = "alpha {0}")
  @MethodSource("alphas")
  void alphaWeighsStickinessAgainstOverlap(double alpha, int expected) {
    List<KvcRoute.Option> options =
        List.of(
            new KvcRoute.Option(new WorkerRank(0, 0), 3, 0, 0, 0, false),
            new KvcRoute.Option(new WorkerRank(1, 0), 0, 0, 0, 0, true));
    assertEquals(expected, KvcRoute.route(options, KvcParams.defaults().withAlpha(alpha)).index());
  }

  static Stream<Arguments> alphas() {
    return Stream.of(
        Arguments.of(1.0, 0), Arguments.of(3.0, 1), Arguments.of(10.0, 1), Arguments.of(0.0, 0));
  }
}
