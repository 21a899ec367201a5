package io.kvselect.core.queue;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.kvselect.core.config.ConfigException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The queue's policy classes and ISL tiers, from {@code DYN_ROUTER_POLICY_CONFIG}. Immutable.
 *
 * <p>YAML schema (every key optional; unknown keys are an error):
 *
 * <pre>{@code
 * classes:                                 # served by deficit round robin, in this order
 *   - name: interactive                    # required, unique, non-blank
 *     quantum: 4                           # integer >= 1, default 1 (requests per turn)
 *     queue_policy: fcfs                   # fcfs | lcfs | wspt, default router_queue_policy
 *     prefill_busy_threshold: 1.5          # number >= 0, default router_queue_threshold
 *     request_queue_limit_per_worker: 8    # integer >= 0, default unbounded
 * router_queue_by_incoming_missing_isl:    # default: no tiers (unbounded)
 *   - min_missing_isl_tokens: 0            # integer >= 0, required, unique
 *     max_queue_depth: 64                  # integer >= 0, required; cap = this x workers
 * }</pre>
 *
 * <p>The class named {@value #DEFAULT_CLASS} serves requests without a class or with a class not
 * in the list; when the YAML does not define it, an unbounded {@value #DEFAULT_CLASS} class with
 * quantum 1 and {@code defaultPolicy} is appended to the classes. A YAML {@code null} value means
 * the key's default. Tiers are kept sorted by ascending floor.
 *
 * @param defaultPolicy the router's {@code router_queue_policy}: the policy of classes that set
 *     none
 * @param classes the classes in round-robin order; always contains {@value #DEFAULT_CLASS}
 * @param islTiers tiers by ascending {@code minMissingIslTokens}
 */
public record QueueConfig(String defaultPolicy, List<QueueClass> classes, List<IslTier> islTiers) {

  /** Name of the class that serves requests without a (known) class. */
  public static final String DEFAULT_CLASS = "default";

  private static final String ROOT = "router_policy_config";
  private static final Set<String> TOP_KEYS =
      Set.of("classes", "router_queue_by_incoming_missing_isl");
  private static final Set<String> CLASS_KEYS =
      Set.of(
          "name",
          "quantum",
          "queue_policy",
          "prefill_busy_threshold",
          "request_queue_limit_per_worker");
  private static final Set<String> TIER_KEYS = Set.of("min_missing_isl_tokens", "max_queue_depth");

  public QueueConfig {
    QueuePolicy.of(defaultPolicy);
    Objects.requireNonNull(classes, "classes");
    Objects.requireNonNull(islTiers, "islTiers");
    List<QueueClass> all = new ArrayList<>(classes);
    Set<String> names = new HashSet<>();
    for (QueueClass c : all) {
      if (!names.add(c.name())) {
        throw new IllegalArgumentException("duplicate class name: " + c.name());
      }
    }
    if (!names.contains(DEFAULT_CLASS)) {
      all.add(QueueClass.unbounded(DEFAULT_CLASS, defaultPolicy));
    }
    List<IslTier> tiers = new ArrayList<>(islTiers);
    tiers.sort(Comparator.comparingLong(IslTier::minMissingIslTokens));
    for (int i = 1; i < tiers.size(); i++) {
      if (tiers.get(i).minMissingIslTokens() == tiers.get(i - 1).minMissingIslTokens()) {
        throw new IllegalArgumentException(
            "duplicate tier floor: " + tiers.get(i).minMissingIslTokens());
      }
    }
    classes = List.copyOf(all);
    islTiers = List.copyOf(tiers);
  }

  /** One unbounded {@value #DEFAULT_CLASS} class with {@code routerQueuePolicy}, no tiers. */
  public static QueueConfig defaults(String routerQueuePolicy) {
    return new QueueConfig(routerQueuePolicy, List.of(), List.of());
  }

  /**
   * Parses {@code DYN_ROUTER_POLICY_CONFIG} YAML (schema in the class Javadoc). Blank or {@code
   * null} text gives {@link #defaults}. O(size of the text).
   *
   * @throws ConfigException naming the dotted field (e.g. {@code
   *     router_policy_config.classes[1].quantum}) for invalid YAML, unknown keys, wrong types or
   *     out-of-range values
   */
  public static QueueConfig parse(String yaml, String routerQueuePolicy) {
    if (yaml == null || yaml.isBlank()) {
      return defaults(routerQueuePolicy);
    }
    JsonNode root;
    try {
      YAMLMapper mapper = new YAMLMapper();
      mapper.enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);
      root = mapper.readTree(yaml);
    } catch (JsonProcessingException e) {
      throw fail(ROOT, "invalid YAML: " + e.getOriginalMessage().lines().findFirst().orElse(""));
    }
    if (root == null || root.isNull() || root.isMissingNode()) {
      return defaults(routerQueuePolicy);
    }
    if (!root.isObject()) {
      throw fail(ROOT, "must be a mapping");
    }
    checkKeys(root, ROOT, TOP_KEYS);
    List<QueueClass> classes = new ArrayList<>();
    JsonNode classList = root.get("classes");
    String classesPath = ROOT + ".classes";
    if (present(classList)) {
      if (!classList.isArray()) {
        throw fail(classesPath, "must be a list");
      }
      Set<String> names = new HashSet<>();
      for (int i = 0; i < classList.size(); i++) {
        String path = classesPath + "[" + i + "]";
        QueueClass c = parseClass(classList.get(i), path, routerQueuePolicy);
        if (!names.add(c.name())) {
          throw fail(path + ".name", "duplicate class name '" + c.name() + "'");
        }
        classes.add(c);
      }
    }
    List<IslTier> tiers = new ArrayList<>();
    JsonNode tierList = root.get("router_queue_by_incoming_missing_isl");
    String tiersPath = ROOT + ".router_queue_by_incoming_missing_isl";
    if (present(tierList)) {
      if (!tierList.isArray()) {
        throw fail(tiersPath, "must be a list");
      }
      Set<Long> floors = new HashSet<>();
      for (int i = 0; i < tierList.size(); i++) {
        String path = tiersPath + "[" + i + "]";
        JsonNode t = tierList.get(i);
        if (!t.isObject()) {
          throw fail(path, "must be a mapping");
        }
        checkKeys(t, path, TIER_KEYS);
        long floor = requiredLong(t, path, "min_missing_isl_tokens");
        long depth = requiredLong(t, path, "max_queue_depth");
        if (!floors.add(floor)) {
          throw fail(path + ".min_missing_isl_tokens", "duplicate tier floor " + floor);
        }
        tiers.add(new IslTier(floor, depth));
      }
    }
    return new QueueConfig(routerQueuePolicy, classes, tiers);
  }

  /** The class named {@code policyClass}; {@code null} or unknown gives the default class. O(c). */
  public QueueClass classFor(String policyClass) {
    QueueClass fallback = null;
    for (QueueClass c : classes) {
      if (c.name().equals(policyClass)) {
        return c;
      }
      if (c.name().equals(DEFAULT_CLASS)) {
        fallback = c;
      }
    }
    return fallback;
  }

  /**
   * The tier with the highest floor {@code <= missingIslTokens}, or {@code null} when none matches
   * (no cap). O(t).
   */
  public IslTier tierFor(long missingIslTokens) {
    IslTier best = null;
    for (IslTier t : islTiers) {
      if (t.minMissingIslTokens() <= missingIslTokens) {
        best = t;
      }
    }
    return best;
  }

  private static QueueClass parseClass(JsonNode node, String path, String routerQueuePolicy) {
    if (!node.isObject()) {
      throw fail(path, "must be a mapping");
    }
    checkKeys(node, path, CLASS_KEYS);
    JsonNode nameNode = node.get("name");
    if (!present(nameNode)) {
      throw fail(path + ".name", "is required");
    }
    if (!nameNode.isTextual() || nameNode.asText().isBlank()) {
      throw fail(path + ".name", "must be a non-blank string");
    }
    String name = nameNode.asText().trim();
    Long quantum = optionalLong(node, path, "quantum", 1);
    String policy = routerQueuePolicy;
    JsonNode policyNode = node.get("queue_policy");
    if (present(policyNode)) {
      try {
        if (!policyNode.isTextual()) {
          throw new IllegalArgumentException("not a string");
        }
        QueuePolicy.of(policyNode.asText());
      } catch (IllegalArgumentException e) {
        throw fail(path + ".queue_policy", "must be one of fcfs, lcfs, wspt, got " + policyNode);
      }
      policy = policyNode.asText();
    }
    Double threshold = null;
    JsonNode thresholdNode = node.get("prefill_busy_threshold");
    if (present(thresholdNode)) {
      if (!thresholdNode.isNumber()
          || !Double.isFinite(thresholdNode.asDouble())
          || thresholdNode.asDouble() < 0) {
        throw fail(
            path + ".prefill_busy_threshold", "must be a finite number >= 0, got " + thresholdNode);
      }
      threshold = thresholdNode.asDouble();
    }
    Long limit = optionalLong(node, path, "request_queue_limit_per_worker", 0);
    if (limit != null && limit > Integer.MAX_VALUE) {
      throw fail(
          path + ".request_queue_limit_per_worker",
          "must be at most " + Integer.MAX_VALUE + ", got " + limit);
    }
    return new QueueClass(
        name,
        quantum == null ? 1 : quantum,
        policy,
        threshold,
        limit == null ? null : limit.intValue());
  }

  private static boolean present(JsonNode node) {
    return node != null && !node.isNull();
  }

  private static void checkKeys(JsonNode node, String path, Set<String> allowed) {
    Iterator<Map.Entry<String, JsonNode>> fields = node.fields();
    while (fields.hasNext()) {
      String key = fields.next().getKey();
      if (!allowed.contains(key)) {
        throw fail(path + "." + key, "unknown key");
      }
    }
  }

  private static long requiredLong(JsonNode node, String path, String key) {
    Long value = optionalLong(node, path, key, 0);
    if (value == null) {
      throw fail(path + "." + key, "is required");
    }
    return value;
  }

  private static Long optionalLong(JsonNode node, String path, String key, long min) {
    JsonNode value = node.get(key);
    if (!present(value)) {
      return null;
    }
    if (!value.isIntegralNumber() || !value.canConvertToLong() || value.asLong() < min) {
      throw fail(path + "." + key, "must be an integer >= " + min + ", got " + value);
    }
    return value.asLong();
  }

  private static ConfigException fail(String field, String problem) {
    return new ConfigException("config field " + field + ": " + problem);
  }
}
