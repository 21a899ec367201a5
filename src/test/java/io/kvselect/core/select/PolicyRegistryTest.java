package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.config.PolicySettings;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The policy registry: the standard names, resolution, registration, declared stages. */
class PolicyRegistryTest {

  /** A stage interface some policies declare (as the service's dispatch stage is declared). */
  interface Marker {}

  /** A policy that always picks the last candidate and declares {@link Marker}. */
  static final class Last implements SelectionPolicy, Marker {
    private final String name;

    Last(String name) {
      this.name = name;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public int choose(List<Candidate> candidates, PolicyContext ctx) {
      return candidates.size() - 1;
    }
  }

  @Test
  void theStandardRegistryHoldsEveryNameTheConfigurationAccepts() {
    PolicyRegistry r = PolicyRegistry.standard();
    assertEquals(Set.copyOf(PolicySettings.NAMES), Set.copyOf(r.names()));
    for (String n : PolicySettings.NAMES) {
      assertEquals(n, r.resolve(n).name());
    }
    assertInstanceOf(KvCostPolicy.class, r.resolve("nope"), "unknown: kv");
    assertInstanceOf(KvCostPolicy.class, r.resolve(null), "none: kv");
    assertTrue(r.stages(Marker.class).isEmpty(), "no standard policy declares the marker stage");
  }

  @Test
  void registeringReplacesByNameAndLeavesTheOriginalAlone() {
    PolicyRegistry std = PolicyRegistry.standard();
    Last last = new Last("least_loaded");
    PolicyRegistry r = std.with(last);
    assertSame(last, r.resolve("least_loaded"));
    assertInstanceOf(
        LeastLoadedPolicy.class, std.resolve("least_loaded"), "the original is unchanged");
    assertEquals(std.names(), r.names(), "same names, same order");
    assertEquals(
        List.of(last), r.stages(Marker.class), "the declared stage is found on the policy");
  }

  @Test
  void theConfiguredPickStageFollowsTheRegistry() {
    PolicyRegistry r = PolicyRegistry.standard().with(new Last("round_robin"));
    ConfiguredPolicy p = new ConfiguredPolicy(r);
    List<Candidate> c =
        BaselinePoliciesTest.cands(new long[][] {{8, 5, 0, 0}, {0, 0, 0, 0}, {0, 0, 0, 0}});
    assertEquals(
        2, p.choose(c, BaselinePoliciesTest.ctx("round_robin", null)), "the registered one");
    assertEquals(
        2, p.choose(c, BaselinePoliciesTest.ctx("round_robin", null)), "every time (no cursor)");
    assertEquals(0, p.choose(c, BaselinePoliciesTest.ctx("kvc", null)), "kvc Route form: overlap");
  }
}
