package io.kvselect.core.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.config.ConfigException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** {@code DYN_ROUTER_POLICY_CONFIG} parsing and validation. */
class QueueConfigTest {

  private static final String FULL =
      """
      classes:
        - name: interactive
          quantum: 4
          queue_policy: wspt
          prefill_busy_threshold: 1.5
          request_queue_limit_per_worker: 8
        - name: batch
      router_queue_by_incoming_missing_isl:
        - min_missing_isl_tokens: 4096
          max_queue_depth: 2
        - min_missing_isl_tokens: 0
          max_queue_depth: 64
      """;

  @Test
  void parsesEveryField() {
    QueueConfig c = QueueConfig.parse(FULL, "lcfs");
    assertEquals(
        List.of(
            new QueueClass("interactive", 4, "wspt", 1.5, 8),
            new QueueClass("batch", 1, "lcfs", null, null),
            new QueueClass("default", 1, "lcfs", null, null)),
        c.classes());
    assertEquals(List.of(new IslTier(0, 64), new IslTier(4096, 2)), c.islTiers());
    assertEquals("lcfs", c.defaultPolicy());
    assertSame(c.classes().get(0), c.classFor("interactive"));
    assertSame(c.classes().get(2), c.classFor(null));
    assertSame(c.classes().get(2), c.classFor("other"));
    assertNull(new QueueConfig("fcfs", List.of(), List.of(new IslTier(10, 1))).tierFor(9));
    assertEquals(new IslTier(0, 64), c.tierFor(4095));
    assertEquals(new IslTier(4096, 2), c.tierFor(4096));
    assertEquals(128, c.tierFor(0).cap(2));
  }

  @Test
  void explicitDefaultClassIsKept() {
    QueueConfig c =
        QueueConfig.parse(
            "classes:\n  - name: default\n    quantum: 2\n    request_queue_limit_per_worker: 0\n",
            "fcfs");
    assertEquals(List.of(new QueueClass("default", 2, "fcfs", null, 0)), c.classes());
    assertEquals(0, c.classFor("x").requestQueueLimitPerWorker());
  }

  @Test
  void blankAndNullGiveDefaults() {
    QueueConfig d = QueueConfig.defaults("wspt");
    assertEquals(List.of(new QueueClass("default", 1, "wspt", null, null)), d.classes());
    assertEquals(List.of(), d.islTiers());
    assertEquals(d, QueueConfig.parse(null, "wspt"));
    assertEquals(d, QueueConfig.parse("  \n", "wspt"));
    assertEquals(d, QueueConfig.parse("# nothing\n", "wspt"));
    assertEquals(d, QueueConfig.parse("classes: null\n", "wspt"));
    assertEquals(
        d, QueueConfig.parse("classes: []\nrouter_queue_by_incoming_missing_isl: []\n", "wspt"));
  }

  static Stream<Arguments> invalid() {
    return Stream.of(
        Arguments.of("classes: [", "router_policy_config: invalid YAML"),
        Arguments.of("- a\n- b\n", "router_policy_config: must be a mapping"),
        Arguments.of("clases: []\n", "router_policy_config.clases: unknown key"),
        Arguments.of("classes: 3\n", "router_policy_config.classes: must be a list"),
        Arguments.of("classes: [3]\n", "router_policy_config.classes[0]: must be a mapping"),
        Arguments.of(
            "classes:\n  - quantum: 2\n", "router_policy_config.classes[0].name: is required"),
        Arguments.of(
            "classes:\n  - name: 5\n",
            "router_policy_config.classes[0].name: must be a non-blank string"),
        Arguments.of(
            "classes:\n  - name: ' '\n",
            "router_policy_config.classes[0].name: must be a non-blank string"),
        Arguments.of(
            "classes:\n  - name: a\n  - name: a\n",
            "router_policy_config.classes[1].name: duplicate class name 'a'"),
        Arguments.of(
            "classes:\n  - name: a\n    quantum: 0\n",
            "router_policy_config.classes[0].quantum: must be an integer >= 1, got 0"),
        Arguments.of(
            "classes:\n  - name: a\n    quantum: 1.5\n",
            "router_policy_config.classes[0].quantum: must be an integer >= 1, got 1.5"),
        Arguments.of(
            "classes:\n  - name: a\n    quantum: '2'\n",
            "router_policy_config.classes[0].quantum: must be an integer >= 1"),
        Arguments.of(
            "classes:\n  - name: a\n    queue_policy: sjf\n",
            "router_policy_config.classes[0].queue_policy: must be one of fcfs, lcfs, wspt"),
        Arguments.of(
            "classes:\n  - name: a\n    queue_policy: 3\n",
            "router_policy_config.classes[0].queue_policy: must be one of fcfs, lcfs, wspt"),
        Arguments.of(
            "classes:\n  - name: a\n    prefill_busy_threshold: -1\n",
            "router_policy_config.classes[0].prefill_busy_threshold: must be a finite number >= 0"),
        Arguments.of(
            "classes:\n  - name: a\n    prefill_busy_threshold: high\n",
            "router_policy_config.classes[0].prefill_busy_threshold: must be a finite number >= 0"),
        Arguments.of(
            "classes:\n  - name: a\n    request_queue_limit_per_worker: -1\n",
            "router_policy_config.classes[0].request_queue_limit_per_worker: must be an integer >= 0, got -1"),
        Arguments.of(
            "classes:\n  - name: a\n    request_queue_limit_per_worker: 3000000000\n",
            "router_policy_config.classes[0].request_queue_limit_per_worker: must be at most 2147483647"),
        Arguments.of(
            "classes:\n  - name: a\n    weight: 2\n",
            "router_policy_config.classes[0].weight: unknown key"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl: {}\n",
            "router_policy_config.router_queue_by_incoming_missing_isl: must be a list"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl: [1]\n",
            "router_policy_config.router_queue_by_incoming_missing_isl[0]: must be a mapping"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl:\n  - max_queue_depth: 1\n",
            "router_policy_config.router_queue_by_incoming_missing_isl[0].min_missing_isl_tokens: is required"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl:\n  - min_missing_isl_tokens: 0\n",
            "router_policy_config.router_queue_by_incoming_missing_isl[0].max_queue_depth: is required"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl:\n  - min_missing_isl_tokens: 0\n    max_queue_depth: -2\n",
            "router_policy_config.router_queue_by_incoming_missing_isl[0].max_queue_depth: must be an integer >= 0, got -2"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl:\n  - min_missing_isl_tokens: 0\n    max_queue_depth: 1\n    depth: 1\n",
            "router_policy_config.router_queue_by_incoming_missing_isl[0].depth: unknown key"),
        Arguments.of(
            "router_queue_by_incoming_missing_isl:\n  - min_missing_isl_tokens: 5\n    max_queue_depth: 1\n  - min_missing_isl_tokens: 5\n    max_queue_depth: 2\n",
            "router_policy_config.router_queue_by_incoming_missing_isl[1].min_missing_isl_tokens: duplicate tier floor 5"),
        Arguments.of("classes: []\nclasses: []\n", "router_policy_config: invalid YAML"));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("invalid")
  void invalidConfigNamesTheField(String yaml, String messageStart) {
    ConfigException e = assertThrows(ConfigException.class, () -> QueueConfig.parse(yaml, "fcfs"));
    String message = e.getMessage();
    assertEquals(
        "config field " + messageStart,
        message.substring(0, Math.min(message.length(), ("config field " + messageStart).length())),
        message);
  }

  @Test
  void recordValidation() {
    assertThrows(IllegalArgumentException.class, () -> QueueConfig.defaults("sjf"));
    assertThrows(IllegalArgumentException.class, () -> QueueConfig.defaults(null));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            new QueueConfig(
                "fcfs",
                List.of(QueueClass.unbounded("a", "fcfs"), QueueClass.unbounded("a", "lcfs")),
                List.of()));
    assertThrows(
        IllegalArgumentException.class,
        () -> new QueueConfig("fcfs", List.of(), List.of(new IslTier(1, 1), new IslTier(1, 2))));
    assertThrows(IllegalArgumentException.class, () -> new IslTier(-1, 1));
    assertThrows(IllegalArgumentException.class, () -> new IslTier(0, -1));
    assertThrows(IllegalArgumentException.class, () -> new QueueClass(" ", 1, "fcfs", null, null));
    assertThrows(IllegalArgumentException.class, () -> new QueueClass("a", 0, "fcfs", null, null));
    assertThrows(IllegalArgumentException.class, () -> new QueueClass("a", 1, "x", null, null));
    assertThrows(IllegalArgumentException.class, () -> new QueueClass("a", 1, "fcfs", -0.1, null));
    assertThrows(
        IllegalArgumentException.class, () -> new QueueClass("a", 1, "fcfs", Double.NaN, null));
    assertThrows(
        IllegalArgumentException.class,
        () -> new QueueClass("a", 1, "fcfs", Double.POSITIVE_INFINITY, null));
    assertThrows(IllegalArgumentException.class, () -> new QueueClass("a", 1, "fcfs", null, -1));
    assertEquals(0.0, new QueueClass("a", 1, "FCFS", 0.0, 0).prefillBusyThreshold());
    assertEquals(Long.MAX_VALUE, QueueClass.unbounded("a", "fcfs").requestLimit(3));
    assertEquals(6, new QueueClass("a", 1, "fcfs", null, 2).requestLimit(3));
    assertEquals(Long.MAX_VALUE, new IslTier(0, Long.MAX_VALUE).cap(2));
  }
}
