package io.kvselect.core.config;

import com.fasterxml.jackson.databind.JsonMappingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads {@link RouterConfig} knobs from Dynamo's environment variables and from the {@code
 * router} and {@code tracking} sections of {@code conf/kvselect.json}. The loader decides
 * precedence and checks each value, naming its variable or dotted field; Jackson then binds the
 * checked layer onto a {@link RouterConfigBuilder} by the knobs' config-file names.
 *
 * <p>Every {@code DYN_ROUTER_*} variable of Dynamo's knob table is read, plus the aliases {@code
 * DYN_USE_KV_EVENTS}, {@code DYN_OVERLAP_SCORE_WEIGHT}, {@code DYN_USE_REMOTE_INDEXER} and {@code
 * DYN_SHARED_CACHE_*}. Where a knob has two variables the first listed in {@link RouterKnob}
 * wins. The deprecated {@code overlap_score_weight} sets {@code prefill_load_scale} (a zero also
 * zeroes the credit) and is applied after the explicit knobs, as Dynamo does. Setting a shared
 * cache type in a layer without a multiplier raises a zero multiplier to 0.5.
 *
 * <p>Deviation from Dynamo, on purpose: an unparseable or out-of-range value throws {@link
 * ConfigException} naming the variable or dotted field instead of silently keeping the default.
 * Blank environment values are treated as unset. Booleans accept 1/0, true/false, yes/no, on/off
 * in any case. Config sections reject unknown keys and values of the wrong JSON type.
 *
 * <p>Stateless and thread-safe; each call is O(number of knobs).
 */
public final class RouterConfigLoader {

  private static final double SHARED_CACHE_DEFAULT_MULTIPLIER = 0.5;
  private static final ObjectMapper BINDER = new ObjectMapper();

  private RouterConfigLoader() {}

  /** Applies every recognised variable of {@code env} on top of {@code base}. */
  public static RouterConfig fromEnv(RouterConfig base, Map<String, String> env) {
    Map<String, Object> layer = new LinkedHashMap<>();
    for (RouterKnob knob : RouterKnob.values()) {
      for (String name : knob.envNames) {
        String text = env.get(name);
        if (text != null && !text.isBlank()) {
          layer.put(knob.jsonName, knob.read(name, text, true));
          break;
        }
      }
    }
    return bind(base, layer);
  }

  /** Applies a {@code router} section (snake_case knob names) found at {@code "router"}. */
  public static RouterConfig fromJson(RouterConfig base, Map<String, ?> router) {
    return fromJson(base, router, "router");
  }

  /**
   * Applies a {@code router} section found at dotted path {@code path}; any subset of knobs may be
   * present, and a JSON null unsets a nullable knob.
   */
  public static RouterConfig fromJson(RouterConfig base, Map<String, ?> router, String path) {
    return applySection(base, router, path, RouterKnob.Section.ROUTER);
  }

  /** Applies a {@code tracking} section ({@code hash}, {@code key_file}, {@code key_id}). */
  public static RouterConfig trackingFromJson(
      RouterConfig base, Map<String, ?> tracking, String path) {
    return applySection(base, tracking, path, RouterKnob.Section.TRACKING);
  }

  /** The {@code router} section holding every knob of {@code cfg}, in table order. */
  public static Map<String, Object> routerJson(RouterConfig cfg) {
    return sectionJson(cfg, RouterKnob.Section.ROUTER);
  }

  /** The {@code tracking} section of {@code cfg}. */
  public static Map<String, Object> trackingJson(RouterConfig cfg) {
    return sectionJson(cfg, RouterKnob.Section.TRACKING);
  }

  /**
   * Dynamo knobs that kvselect parses and validates but does not act on yet (remote indexer, shared-cache credit, AIC prefill model, LRU approximate
   * cache, event thread count, minimum initial workers, active/output block tracking switches).
   */
  private static final java.util.Set<RouterKnob> NOT_ACTED_ON =
      java.util.EnumSet.of(
          RouterKnob.EVENT_THREADS,
          RouterKnob.USE_REMOTE_INDEXER,
          RouterKnob.SHARED_CACHE_MULTIPLIER,
          RouterKnob.SHARED_CACHE_TYPE,
          RouterKnob.PREFILL_LOAD_MODEL,
          RouterKnob.APPROXIMATE_CACHE_POLICY,
          RouterKnob.MIN_INITIAL_WORKERS,
          RouterKnob.TRACK_ACTIVE_BLOCKS,
          RouterKnob.TRACK_OUTPUT_BLOCKS);

  /**
   * The config names of the knobs of {@code cfg} that differ from Dynamo's defaults but that
   * kvselect does not act on yet, in table order; a node names them in a start-up warning so that
   * a setting is never silently ignored.
   */
  public static List<String> knobsNotActedOn(RouterConfig cfg) {
    RouterConfig d = RouterConfig.DEFAULTS;
    List<String> out = new java.util.ArrayList<>();
    for (RouterKnob k : RouterKnob.values()) {
      if (NOT_ACTED_ON.contains(k)
          && k.getter != null
          && !java.util.Objects.equals(k.getter.apply(cfg), k.getter.apply(d))) {
        out.add(k.jsonName);
      }
    }
    return out;
  }

  /** Every environment variable this loader reads, in application order. */
  public static List<String> environmentVariables() {
    List<String> names = new ArrayList<>();
    for (RouterKnob knob : RouterKnob.values()) {
      names.addAll(knob.envNames);
    }
    return Collections.unmodifiableList(names);
  }

  /**
   * The {@code --help} entry of one variable.
   *
   * @param variable the environment variable
   * @param dflt the built-in default in brackets ({@code [unset]} when none)
   * @param note the choices of a choice knob, which variable an alias stands for, or what a
   *     deprecated knob sets; null when there is nothing to add
   */
  public record VariableHelp(String variable, String dflt, String note) {}

  /** The {@code --help} entries of every variable this loader reads, in application order. */
  public static List<VariableHelp> environmentHelp() {
    RouterConfig d = RouterConfig.DEFAULTS;
    List<VariableHelp> out = new ArrayList<>();
    for (RouterKnob knob : RouterKnob.values()) {
      Object dflt = knob.getter == null ? null : knob.getter.apply(d);
      for (int i = 0; i < knob.envNames.size(); i++) {
        List<String> notes = new ArrayList<>();
        if (!knob.choices.isEmpty()) {
          notes.add("one of " + String.join(", ", knob.choices));
        }
        if (knob.getter == null) {
          notes.add("deprecated: sets prefill_load_scale (0 also zeroes the credit)");
        }
        if (i > 0) {
          notes.add("alias of " + knob.envNames.get(0));
        }
        out.add(
            new VariableHelp(
                knob.envNames.get(i),
                "[" + (dflt == null ? "unset" : dflt) + "]",
                notes.isEmpty() ? null : String.join("; ", notes)));
      }
    }
    return Collections.unmodifiableList(out);
  }

  /**
   * Cross-knob checks Dynamo makes at startup: predicted TTL needs KV events, and the {@code lru}
   * approximate cache policy is rejected while KV events are on.
   *
   * @throws ConfigException naming both the config field and the variable
   */
  public static void validate(RouterConfig cfg) {
    if (cfg.index().predictedTtlSecs() != null && !cfg.index().useKvEvents()) {
      throw new ConfigException(
          "router.router_predicted_ttl_secs (DYN_ROUTER_PREDICTED_TTL_SECS)"
              + " requires use_kv_events=true");
    }
    if ("lru".equals(cfg.index().approximateCachePolicy()) && cfg.index().useKvEvents()) {
      throw new ConfigException(
          "router.router_approximate_cache_policy"
              + " (DYN_ROUTER_APPROXIMATE_CACHE_POLICY) lru requires use_kv_events=false");
    }
  }

  private static RouterConfig applySection(
      RouterConfig base, Map<String, ?> section, String path, RouterKnob.Section which) {
    for (String key : section.keySet()) {
      if (knob(which, key) == null) {
        throw new ConfigException(
            "config field "
                + path
                + "."
                + key
                + " is not a known "
                + which.name().toLowerCase(java.util.Locale.ROOT)
                + " setting");
      }
    }
    Map<String, Object> layer = new LinkedHashMap<>();
    for (RouterKnob knob : RouterKnob.values()) {
      if (knob.section == which && section.containsKey(knob.jsonName)) {
        String label = "config field " + path + "." + knob.jsonName;
        layer.put(knob.jsonName, knob.read(label, section.get(knob.jsonName), false));
      }
    }
    return bind(base, layer);
  }

  /**
   * Binds one layer's checked values, keyed by config-file name in table order, onto {@code
   * base} through {@link RouterConfigBuilder}'s Jackson names. A layer that sets a shared cache
   * type but no multiplier raises a zero multiplier to {@value #SHARED_CACHE_DEFAULT_MULTIPLIER}.
   */
  private static RouterConfig bind(RouterConfig base, Map<String, Object> layer) {
    String type = RouterKnob.SHARED_CACHE_TYPE.jsonName;
    String multiplier = RouterKnob.SHARED_CACHE_MULTIPLIER.jsonName;
    if (layer.get(type) != null
        && !layer.containsKey(multiplier)
        && base.cost().sharedCacheMultiplier() == 0.0) {
      layer.put(multiplier, SHARED_CACHE_DEFAULT_MULTIPLIER);
    }
    if (layer.isEmpty()) {
      return base;
    }
    try {
      return BINDER.updateValue(base.toBuilder(), layer).build();
    } catch (JsonMappingException e) {
      if (e.getCause() instanceof ConfigException c) {
        throw c;
      }
      throw new IllegalStateException("a checked knob did not bind: " + e.getOriginalMessage(), e);
    }
  }

  private static RouterKnob knob(RouterKnob.Section section, String jsonName) {
    for (RouterKnob knob : RouterKnob.values()) {
      if (knob.section == section && knob.jsonName.equals(jsonName)) {
        return knob;
      }
    }
    return null;
  }

  private static Map<String, Object> sectionJson(RouterConfig cfg, RouterKnob.Section section) {
    Map<String, Object> out = new LinkedHashMap<>();
    for (RouterKnob knob : RouterKnob.values()) {
      if (knob.section == section && knob.getter != null) {
        out.put(knob.jsonName, knob.getter.apply(cfg));
      }
    }
    return out;
  }
}
