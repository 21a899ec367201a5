package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The checked inputs of {@link CostFunction} and the edge of the decode-pool form. */
class CostInputsTest {

  private static final WorkerRank R = new WorkerRank(1, 0);

  @Test
  void everyLoadCountMustBeNonNegative() {
    RankOverlap o = RankOverlap.NONE;
    assertThrows(IllegalArgumentException.class, () -> new Candidate(R, o, true, -1, 0, 0, 0.0));
    assertThrows(IllegalArgumentException.class, () -> new Candidate(R, o, true, 0, -1, 0, 0.0));
    assertThrows(IllegalArgumentException.class, () -> new Candidate(R, o, true, 0, 0, -1, 0.0));
    assertThrows(IllegalArgumentException.class, () -> new Candidate(R, o, false, 0, 0, 1, 0.0));
    assertEquals(0, new Candidate(R, o, true, 0, 0, 0, 0.0).activeRequests());
  }

  @Test
  void blockSizeAtLeastOneAndInputLengthAtLeastZero() {
    assertThrows(IllegalArgumentException.class, () -> new CostRequest(0, 16, true, false));
    assertThrows(IllegalArgumentException.class, () -> new CostRequest(4, -1, true, false));
    assertEquals(1, new CostRequest(1, 0, true, false).requestBlocks());
    assertEquals(3, new CostRequest(4, 9, true, false).requestBlocks());
  }

  @Test
  void aDecodePoolWithZeroCreditUsesThePrefillForm() {
    RouterConfig zeroCredit =
        RouterConfig.DEFAULTS.with(
            new RouterConfigOverride(0.0, null, null, null, null, null, null, null));
    assertTrue(RouterConfig.DEFAULTS.cost().hostCacheHitWeight() > 0.0);
    Candidate c = new Candidate(R, new RankOverlap(0, 4, 0, 0), true, 0, 10, 0, 0.0);
    CostRequest decodePool = new CostRequest(4, 16, false, true);
    assertEquals(10.0, CostFunction.logits(zeroCredit, decodePool, List.of(c))[0], 1e-9);
    RouterConfig positive =
        RouterConfig.DEFAULTS.with(
            new RouterConfigOverride(1.0, null, null, null, null, null, null, null));
    double hostW = RouterConfig.DEFAULTS.cost().hostCacheHitWeight();
    assertEquals(10.0 - 4 * hostW, CostFunction.logits(positive, decodePool, List.of(c))[0], 1e-9);
  }
}
