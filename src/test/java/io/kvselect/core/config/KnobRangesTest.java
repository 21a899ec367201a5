package io.kvselect.core.config;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Each knob kind's range at its limits (the last accepted value and the first rejected one), and
 * how a request override replaces exactly the fields it sets.
 */
class KnobRangesTest {

  private static final List<String> NO_CHOICES = List.of();

  private static void rejected(KnobKind kind, Object value) {
    ConfigException e =
        assertThrows(
            ConfigException.class,
            () -> kind.fromJson("router.knob", value, NO_CHOICES),
            kind + " " + value);
    assertTrue(e.getMessage().startsWith("router.knob "), e.getMessage());
  }

  @Test
  void unitIntervalsIncludeBothEnds() {
    for (KnobKind k : new KnobKind[] {KnobKind.CREDIT, KnobKind.UNIT}) {
      assertEquals(0.0, k.fromJson("router.knob", 0, NO_CHOICES));
      assertEquals(1.0, k.fromJson("router.knob", 1.0, NO_CHOICES));
      rejected(k, Math.nextUp(1.0));
      rejected(k, -Double.MIN_VALUE);
      rejected(k, Double.NaN);
    }
  }

  @Test
  void nonNegativeIncludesZeroAndExcludesInfinity() {
    for (KnobKind k : new KnobKind[] {KnobKind.NON_NEGATIVE, KnobKind.OPTIONAL_NON_NEGATIVE}) {
      assertEquals(0.0, k.fromJson("router.knob", 0.0, NO_CHOICES));
      assertEquals(Double.MAX_VALUE, k.fromJson("router.knob", Double.MAX_VALUE, NO_CHOICES));
      rejected(k, -Double.MIN_VALUE);
      rejected(k, Double.POSITIVE_INFINITY);
      rejected(k, Double.NaN);
    }
  }

  @Test
  void positiveExcludesZeroAndInfinity() {
    for (KnobKind k : new KnobKind[] {KnobKind.POSITIVE, KnobKind.OPTIONAL_POSITIVE}) {
      assertEquals(Double.MIN_VALUE, k.fromJson("router.knob", Double.MIN_VALUE, NO_CHOICES));
      rejected(k, 0.0);
      rejected(k, Double.POSITIVE_INFINITY);
      rejected(k, Double.NaN);
    }
  }

  @Test
  void integerKindsAtTheirLimits() {
    assertEquals(1, KnobKind.POSITIVE_INT.fromJson("router.knob", 1, NO_CHOICES));
    rejected(KnobKind.POSITIVE_INT, 0);
    assertEquals(0, KnobKind.NON_NEGATIVE_INT.fromJson("router.knob", 0L, NO_CHOICES));
    rejected(KnobKind.NON_NEGATIVE_INT, -1);
    assertEquals(
        Integer.MAX_VALUE,
        KnobKind.NON_NEGATIVE_INT.fromJson("router.knob", (long) Integer.MAX_VALUE, NO_CHOICES));
    rejected(KnobKind.NON_NEGATIVE_INT, Integer.MAX_VALUE + 1L);
    rejected(KnobKind.NON_NEGATIVE_INT, Integer.MIN_VALUE - 1L);
    ConfigException min =
        assertThrows(
            ConfigException.class,
            () ->
                KnobKind.NON_NEGATIVE_INT.fromJson(
                    "router.knob", (long) Integer.MIN_VALUE, NO_CHOICES));
    assertTrue(min.getMessage().contains(">= 0"), min.getMessage());
    assertEquals(3, KnobKind.POSITIVE_INT.fromJson("router.knob", (short) 3, NO_CHOICES));
    rejected(KnobKind.POSITIVE_INT, 1.5);
  }

  @Test
  void optionalChoicesAcceptNoneAndEmpty() {
    List<String> choices = List.of("fcfs", "lcfs");
    assertNull(KnobKind.OPTIONAL_CHOICE.fromJson("router.knob", "None", choices));
    assertNull(KnobKind.OPTIONAL_CHOICE.fromJson("router.knob", " ", choices));
    assertEquals("lcfs", KnobKind.OPTIONAL_CHOICE.fromJson("router.knob", "LCFS", choices));
    assertThrows(
        ConfigException.class, () -> KnobKind.CHOICE.fromJson("router.knob", "none", choices));
    assertThrows(
        ConfigException.class,
        () -> KnobKind.OPTIONAL_STRING.fromJson("router.knob", " ", choices));
    assertEquals("k", KnobKind.OPTIONAL_STRING.fromJson("router.knob", " k ", choices));
    assertNull(KnobKind.OPTIONAL_STRING.fromJson("router.knob", null, choices));
    assertThrows(
        ConfigException.class, () -> KnobKind.CHOICE.fromJson("router.knob", null, choices));
  }

  @Test
  void anOverrideReplacesOnlyTheFieldsItSets() {
    RouterConfig d = RouterConfig.DEFAULTS;
    assertSame(d, d.with(null));
    assertSame(d, d.with(RouterConfigOverride.NONE));
    RouterConfig c = d.with(new RouterConfigOverride(0.5, 2.0, 0.7, false, false, 3.0, null, null));
    assertEquals(0.5, c.cost().overlapScoreCredit());
    assertEquals(2.0, c.cost().prefillLoadScale());
    assertEquals(0.7, c.cost().temperature());
    assertFalse(c.load().assumeKvReuse());
    assertFalse(c.load().trackPrefillTokens());
    assertEquals(3.0, c.cost().sharedCacheMultiplier());
    assertEquals(d.cost().hostCacheHitWeight(), c.cost().hostCacheHitWeight());
    assertEquals(d.tracking().hash(), c.tracking().hash());

    RouterConfig weight =
        d.with(new RouterConfigOverride(null, null, null, null, null, null, 4.0, null));
    assertEquals(4.0, weight.cost().prefillLoadScale());
    assertEquals(d.cost().overlapScoreCredit(), weight.cost().overlapScoreCredit());
    RouterConfig zero =
        d.with(new RouterConfigOverride(null, null, null, null, null, null, 0.0, null));
    assertEquals(0.0, zero.cost().prefillLoadScale());
    assertEquals(0.0, zero.cost().overlapScoreCredit());
    RouterConfig both =
        d.with(new RouterConfigOverride(0.25, 5.0, null, null, null, null, 0.0, null));
    assertEquals(0.25, both.cost().overlapScoreCredit());
    assertEquals(5.0, both.cost().prefillLoadScale());
    RouterConfig single =
        d.with(new RouterConfigOverride(null, null, 0.3, null, null, null, null, null));
    assertEquals(0.3, single.cost().temperature());
    assertEquals(d.load().assumeKvReuse(), single.load().assumeKvReuse());
    assertEquals(d.load().trackPrefillTokens(), single.load().trackPrefillTokens());
    assertEquals(d.cost().sharedCacheMultiplier(), single.cost().sharedCacheMultiplier());
    assertEquals(d.cost().prefillLoadScale(), single.cost().prefillLoadScale());
  }

  @Test
  void anOverrideIsEmptyOnlyWithoutAnyField() {
    assertTrue(RouterConfigOverride.NONE.isEmpty());
    Object[] one = {0.5, 0.5, 0.5, true, true, 0.5, 0.5};
    for (int i = 0; i < one.length; i++) {
      Object[] f = new Object[7];
      f[i] = one[i];
      RouterConfigOverride o =
          new RouterConfigOverride(
              (Double) f[0],
              (Double) f[1],
              (Double) f[2],
              (Boolean) f[3],
              (Boolean) f[4],
              (Double) f[5],
              (Double) f[6],
              null);
      assertFalse(o.isEmpty(), "field " + i);
    }
  }

  @Test
  void trackingSettingsAndQueueing() {
    RouterConfig d = RouterConfig.DEFAULTS;
    assertFalse(d.queueingEnabled());
    RouterConfig t = d.withTracking("keyed-v1", "/keys/a", "a");
    assertEquals("keyed-v1", t.tracking().hash());
    assertEquals("/keys/a", t.tracking().keyFile());
    assertEquals("a", t.tracking().keyId());
    RouterConfig kept = t.withTracking(null, null, null);
    assertEquals(t, kept);
    assertEquals(d.cost().overlapScoreCredit(), t.cost().overlapScoreCredit());
  }
}
