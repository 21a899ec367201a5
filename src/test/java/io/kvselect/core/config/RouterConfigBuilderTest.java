package io.kvselect.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import org.junit.jupiter.api.Test;

/** {@link RouterConfig}'s builder: its defaults, its copies and its per-concern setters. */
class RouterConfigBuilderTest {

  private static final RouterConfig D = RouterConfig.DEFAULTS;

  @Test
  void theBuilderStartsFromTheDefaultsAndCopiesEveryKnob() {
    assertEquals(D, RouterConfig.builder().build());
    RouterConfig c =
        RouterConfigLoader.fromEnv(
            D,
            java.util.Map.of(
                "DYN_ROUTER_QUEUE_THRESHOLD",
                "2",
                "DYN_ROUTER_TRACKING_KEY_ID",
                "k",
                "KVSELECT_ROUTER_POLICY",
                "kvc",
                "KVSELECT_KVC_RHO",
                "0.5"));
    assertEquals(c, c.toBuilder().build());
    assertEquals(2.0, c.queue().threshold());
    assertEquals("k", c.tracking().keyId());
    assertEquals(0.5, c.selectionPolicy().kvc().rho());
  }

  @Test
  void aConcernSetterReplacesOnlyThatConcern() {
    CostWeights w = new CostWeights(0.5, 1, 2, 3, 0.1, 0.2, 0.3, 0.4, "hicache");
    RouterConfig c = D.toBuilder().cost(w).build();
    assertEquals(w, c.cost());
    assertEquals(D.index(), c.index());
    assertEquals(D.load(), c.load());
    assertEquals(D.queue(), c.queue());
    assertEquals(D.replica(), c.replica());
    assertEquals(D.tracking(), c.tracking());
    assertEquals(
        new QueueSettings(3.0, "wspt", null),
        D.toBuilder().queue(new QueueSettings(3.0, "wspt", null)).build().queue());
  }

  @Test
  void theDeprecatedWeightSetsTheScaleAndAZeroAlsoTheCredit() {
    RouterConfig two = RouterConfig.builder().overlapScoreWeight(2).build();
    assertEquals(2.0, two.cost().prefillLoadScale());
    assertEquals(D.cost().overlapScoreCredit(), two.cost().overlapScoreCredit());
    assertEquals(
        0.0, RouterConfig.builder().overlapScoreWeight(0).build().cost().overlapScoreCredit());
  }

  @Test
  void aNullConcernStandsForItsDefaults() {
    RouterConfig c = new RouterConfig(null, null, null, null, null, null, null);
    assertEquals(D, c);
    assertNull(c.queue().threshold());
    assertSame(D, D.with(RouterConfigOverride.NONE));
  }
}
