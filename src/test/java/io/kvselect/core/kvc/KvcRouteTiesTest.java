package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Route's tie-breaks one key at a time: with the score equal, sticky decides; then (refinement
 * only) accounted KV; then in-flight; then assigned; then order. Each case differs in exactly the
 * key under test, and the loser is listed first so that "earlier wins" cannot pass it by accident.
 */
class KvcRouteTiesTest {

  private static final KvcParams ORIGINAL = KvcParams.defaults();
  private static final KvcParams REFINED = KvcParams.defaults().withCountWaiting(true);

  private static KvcRoute.Option opt(
      int id, long overlap, long inflight, long assigned, int rejects, boolean pinned, long kv) {
    return new KvcRoute.Option(
        new WorkerRank(id, 0), overlap, inflight, assigned, rejects, pinned, kv);
  }

  private static int route(KvcParams p, KvcRoute.Option... options) {
    return KvcRoute.route(List.of(options), p).index();
  }

  @Test
  void withTheScoreEqualTheStickyWorkerWinsEvenWhenBusier() {
    KvcParams noBonus = ORIGINAL.withAlpha(0);
    assertEquals(1, route(noBonus, opt(0, 4, 0, 0, 0, false, 0), opt(1, 4, 9, 9, 0, true, 0)));
    assertEquals(0, route(noBonus, opt(0, 4, 9, 9, 0, true, 0), opt(1, 4, 0, 0, 0, false, 0)));
  }

  @Test
  void aFractionalBonusIsComparedExactly() {
    KvcParams half = ORIGINAL.withAlpha(0.5);
    assertEquals(
        1, route(half, opt(0, 1, 0, 0, 0, true, 0), opt(1, 2, 0, 0, 0, false, 0)), "1.5 < 2");
    assertEquals(
        0, route(half, opt(0, 2, 0, 0, 0, true, 0), opt(1, 2, 0, 0, 0, false, 0)), "2.5 > 2");
    assertEquals(
        1,
        route(ORIGINAL.withAlpha(1.5), opt(0, 3, 0, 0, 0, false, 0), opt(1, 2, 5, 5, 0, true, 0)),
        "3.5 > 3");
  }

  @Test
  void theRefinementBreaksATieByAccountedKvBeforeInFlight() {
    assertEquals(1, route(REFINED, opt(0, 0, 0, 0, 0, false, 500), opt(1, 0, 7, 7, 0, false, 499)));
    assertEquals(
        0,
        route(ORIGINAL, opt(0, 0, 0, 0, 0, false, 500), opt(1, 0, 7, 7, 0, false, 499)),
        "the original ignores accounted KV");
    assertEquals(
        1,
        route(REFINED, opt(0, 0, 2, 0, 0, false, 500), opt(1, 0, 1, 9, 0, false, 500)),
        "equal accounted KV: in-flight decides");
  }

  @Test
  void inFlightThenAssignedThenOrder() {
    assertEquals(1, route(ORIGINAL, opt(0, 0, 2, 0, 0, false, 0), opt(1, 0, 1, 9, 0, false, 0)));
    assertEquals(1, route(ORIGINAL, opt(0, 0, 1, 3, 0, false, 0), opt(1, 0, 1, 2, 0, false, 0)));
    assertEquals(0, route(ORIGINAL, opt(0, 0, 1, 2, 0, false, 0), opt(1, 0, 1, 2, 0, false, 0)));
    assertEquals(
        2,
        route(
            ORIGINAL,
            opt(0, 0, 1, 2, 0, false, 0),
            opt(1, 0, 1, 2, 0, false, 0),
            opt(2, 0, 0, 2, 0, false, 0)),
        "a later option that is strictly better wins");
  }

  @Test
  void theBlacklistStartsExactlyAtTauReject() {
    KvcParams p = ORIGINAL.withTauReject(2);
    KvcRoute.Choice c =
        KvcRoute.route(List.of(opt(0, 9, 0, 0, 1, true, 0), opt(1, 0, 0, 0, 0, false, 0)), p);
    assertEquals(0, c.index(), "one reject below tau_reject: still a candidate");
    assertFalse(c.degenerate());
    c = KvcRoute.route(List.of(opt(0, 9, 0, 0, 2, true, 0), opt(1, 0, 0, 0, 0, false, 0)), p);
    assertEquals(1, c.index(), "at tau_reject: blacklisted");
    c = KvcRoute.route(List.of(opt(0, 9, 0, 0, 2, true, 0), opt(1, 0, 0, 0, 3, false, 0)), p);
    assertEquals(0, c.index(), "everyone blacklisted: the fewest rejects");
    assertTrue(c.degenerate());
    c =
        KvcRoute.route(
            List.of(
                opt(0, 9, 0, 0, 4, true, 0),
                opt(1, 0, 0, 0, 3, false, 0),
                opt(2, 0, 0, 0, 3, false, 0)),
            p);
    assertEquals(1, c.index(), "fewest rejects, the earlier of equals");
  }
}
