package io.kvselect.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.kvc.AdmitAccounting;
import io.kvselect.core.kvc.ResetScope;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The {@code policy} and {@code kvc_*} router knobs: read, validated, overridden per request. */
class PolicyKnobsTest {

  @Test
  void theKnobsReadIntoThePolicySettings() {
    RouterConfig c =
        RouterConfigLoader.fromJson(
            RouterConfig.DEFAULTS,
            Map.of(
                "policy",
                "kvc",
                "kvc_alpha",
                2.0,
                "kvc_tau_reject",
                5,
                "kvc_tau_append",
                4096,
                "kvc_rho",
                0.9,
                "kvc_epsilon",
                1,
                "kvc_admit_accounting",
                "net",
                "kvc_reset_scope",
                "all",
                "kvc_admit_waiting",
                true));
    PolicySettings p = c.selectionPolicy();
    assertEquals("kvc", p.name());
    assertEquals(2.0, p.kvc().alpha());
    assertEquals(5, p.kvc().tauReject());
    assertEquals(4096, p.kvc().tauAppend());
    assertEquals(0.9, p.kvc().rho());
    assertEquals(1, p.kvc().epsilon());
    assertEquals(AdmitAccounting.NET, p.kvc().accounting());
    assertEquals(ResetScope.ALL, p.kvc().resetScope());
    assertTrue(p.kvc().countWaiting());
    assertEquals(
        c,
        RouterConfigLoader.fromJson(RouterConfig.DEFAULTS, RouterConfigLoader.routerJson(c)),
        "round trip");
  }

  @Test
  void badValuesNameTheField() {
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () -> RouterConfigLoader.fromJson(RouterConfig.DEFAULTS, Map.of("policy", "fastest")));
    assertTrue(e.getMessage().contains("policy"), e.getMessage());
    e =
        assertThrows(
            ConfigException.class,
            () -> RouterConfigLoader.fromJson(RouterConfig.DEFAULTS, Map.of("kvc_rho", 0.0)));
    assertTrue(e.getMessage().contains("kvc_rho"), e.getMessage());
    e =
        assertThrows(
            ConfigException.class,
            () ->
                RouterConfigLoader.fromJson(
                    RouterConfig.DEFAULTS, Map.of("kvc_reset_scope", "none")));
    assertTrue(e.getMessage().contains("kvc_reset_scope"), e.getMessage());
    e =
        assertThrows(
            ConfigException.class,
            () -> RouterConfigLoader.fromJson(RouterConfig.DEFAULTS, Map.of("kvc_epsilon", 1.5)));
    assertTrue(e.getMessage().contains("kvc_epsilon"), e.getMessage());
  }

  @Test
  void aRequestOverridesThePolicyOnly() {
    RouterConfig c = RouterConfig.DEFAULTS;
    assertEquals("kv", c.selectionPolicy().name());
    RouterConfigOverride o =
        new RouterConfigOverride(null, null, null, null, null, null, null, "round_robin");
    assertEquals("round_robin", c.with(o).selectionPolicy().name());
    assertEquals(c.selectionPolicy().kvc(), c.with(o).selectionPolicy().kvc());
  }
}
