package io.kvselect.server.api;

import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.SessionContext;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The field rules that the selection-family bodies share, each written once: the flattened
 * prompt fields ({@link Prompt}), {@code router_config_override}, {@code session_context}, a
 * worker target ({@code affinity_target}, {@code pinned_worker}) and {@code routing_constraints},
 * with their bounds, their defaults and the messages naming the field. Which body has which
 * fields is {@link RequestParsers}'. Stateless; each {@link Prompt} is owned by the one parse
 * that creates it.
 */
final class RequestFields {

  /** Upper bound of {@code isl_tokens}: far above any context length, far below overflow of load sums. */
  static final long MAX_ISL_TOKENS = 100_000_000L;

  private RequestFields() {}

  /**
   * Mutable accumulator for the flattened prompt fields of one body. Owner: the route parser that
   * creates it, for the length of one parse (confined to the calling thread).
   */
  static final class Prompt {
    int[] tokens;
    int[] routingTokens;
    long[][] mmHashes;
    long[] blockHashes;
    long[] sequenceHashes;
    Long isl;
    String lora;
    String cacheSalt;
    Boolean eagle;

    boolean field(String name, JsonReader r) throws IOException {
      switch (name) {
        case "token_ids" -> tokens = r.u32Array(name);
        case "block_hashes" -> blockHashes = r.hashArray(name);
        case "sequence_hashes" -> sequenceHashes = r.hashArray(name);
        case "isl_tokens" -> isl = r.unsigned(name, MAX_ISL_TOKENS);
        case "lora_name" -> lora = r.string(name);
        case "cache_salt" -> cacheSalt = r.string(name);
        case "is_eagle" -> eagle = r.bool(name);
        case "block_mm_infos" -> mmHashes = mmInfos(r, name);
        case "mm_routing_info" ->
            r.object(
                name,
                (k, rr) -> {
                  switch (k) {
                    case "routing_token_ids" ->
                        routingTokens = rr.u32Array(name + ".routing_token_ids");
                    case "block_mm_infos" -> mmHashes = mmInfos(rr, name + ".block_mm_infos");
                    default -> rr.skip();
                  }
                });
        default -> {
          return false;
        }
      }
      return true;
    }

    PromptInput build() {
      int[] t = routingTokens != null && routingTokens.length > 0 ? routingTokens : tokens;
      return new PromptInput(
          t,
          blockHashes,
          sequenceHashes,
          isl,
          emptyToNull(lora),
          emptyToNull(cacheSalt),
          eagle,
          mmHashes);
    }
  }

  private static String emptyToNull(String s) {
    return s == null || s.isEmpty() ? null : s;
  }

  /**
   * {@code [ {"mm_objects": [{"mm_hash": u64}, ...]} | null, ... ]} into per-block hash arrays (a
   * null block has no multimodal objects). Every object needs its {@code mm_hash}.
   */
  private static long[][] mmInfos(JsonReader r, String field) throws IOException {
    if (r.isNull()) {
      return null;
    }
    List<long[]> blocks = new ArrayList<>();
    JsonArrays.forEach(
        r,
        field,
        (rr, block) -> {
          if (rr.isNull()) {
            blocks.add(null);
            return;
          }
          List<Long> hashes = new ArrayList<>();
          rr.object(
              block,
              (k, r3) -> {
                if (k.equals("mm_objects")) {
                  JsonArrays.forEach(
                      r3, block + ".mm_objects", (r4, obj) -> hashes.add(mmHash(r4, obj)));
                } else {
                  r3.skip();
                }
              });
          blocks.add(hashes.stream().mapToLong(Long::longValue).toArray());
        });
    return blocks.toArray(new long[0][]);
  }

  /** The {@code mm_hash} of one {@code {"mm_hash": u64, ...}} object at {@code path}. */
  private static long mmHash(JsonReader r, String path) throws IOException {
    if (!r.isObjectStart()) {
      throw JsonReader.type(path, "an object");
    }
    String field = path + ".mm_hash";
    Long[] hash = new Long[1];
    r.object(
        path,
        (k, rr) -> {
          if (k.equals("mm_hash")) {
            hash[0] = rr.u64(field);
            if (hash[0] == null) {
              throw JsonReader.type(field, "an unsigned 64-bit integer");
            }
          } else {
            rr.skip();
          }
        });
    if (hash[0] == null) {
      throw JsonReader.missing(field);
    }
    return hash[0];
  }

  /** {@code router_config_override}: the per-request knobs; null when absent or JSON null. */
  static RouterConfigOverride override(JsonReader r) throws IOException {
    Double[] d = new Double[5];
    Boolean[] b = new Boolean[2];
    String[] policy = new String[1];
    boolean present =
        r.object(
            "router_config_override",
            (k, rr) -> {
              String f = "router_config_override." + k;
              switch (k) {
                case "overlap_score_credit" -> d[0] = rr.number(f);
                case "prefill_load_scale" -> d[1] = rr.number(f);
                case "router_temperature" -> d[2] = rr.number(f);
                case "shared_cache_multiplier" -> d[3] = rr.number(f);
                case "overlap_score_weight" -> d[4] = rr.number(f);
                case "assume_kv_reuse" -> b[0] = rr.bool(f);
                case "track_prefill_tokens" -> b[1] = rr.bool(f);
                case "policy" -> {
                  policy[0] = rr.string(f);
                  if (policy[0] != null && !PolicySettings.NAMES.contains(policy[0])) {
                    throw SelectionException.badRequest(
                        "router_config_override.policy must be one of "
                            + PolicySettings.NAMES
                            + ", got "
                            + policy[0]);
                  }
                }
                default -> rr.skip();
              }
            });
    if (!present) {
      return null;
    }
    if (d[0] != null && (d[0] < 0 || d[0] > 1)) {
      throw SelectionException.badRequest(
          "router_config_override.overlap_score_credit must be in [0, 1]");
    }
    if (d[2] != null && d[2] < 0) {
      throw SelectionException.badRequest(
          "router_config_override.router_temperature must not be negative");
    }
    return new RouterConfigOverride(d[0], d[1], d[2], b[0], b[1], d[3], d[4], policy[0]);
  }

  /** {@code session_context}: null when absent; {@code session_id} is required when present. */
  static SessionContext sessionContext(JsonReader r) throws IOException {
    String[] s = new String[3];
    Boolean[] fin = new Boolean[1];
    Map<String, List<String>> headers = new LinkedHashMap<>();
    boolean present =
        r.object(
            "session_context",
            (k, rr) -> {
              String f = "session_context." + k;
              switch (k) {
                case "session_id" -> s[0] = rr.string(f);
                case "parent_session_id" -> s[1] = rr.string(f);
                case "session_final" -> fin[0] = rr.bool(f);
                case "input_trigger" -> {
                  s[2] = rr.string(f);
                  if (s[2] != null
                      && !Set.of("user_message", "tool_result", "other").contains(s[2])) {
                    throw JsonReader.type(f, "one of user_message, tool_result, other");
                  }
                }
                case "agent_headers" ->
                    rr.object(
                        f,
                        (h, r3) -> {
                          List<String> values = r3.stringArray(f + "." + h);
                          if (values == null) {
                            throw JsonReader.type(f + "." + h, "an array of strings");
                          }
                          headers.put(h, values);
                        });
                default -> rr.skip();
              }
            });
    if (!present) {
      return null;
    }
    if (s[0] == null) {
      throw JsonReader.missing("session_context.session_id");
    }
    return new SessionContext(s[0], s[1], fin[0], s[2], headers);
  }

  /** {@code {"worker_id": u64, "dp_rank": u32?}}; a bare integer is accepted as a worker id. */
  static WorkerRank target(JsonReader r, String field, boolean rankOptional) throws IOException {
    if (r.isNull()) {
      return null;
    }
    Long[] v = new Long[2];
    if (!r.isObjectStart()) {
      Long id = r.u64(field);
      return new WorkerRank(id, -1);
    }
    r.object(
        field,
        (k, rr) -> {
          switch (k) {
            case "worker_id" -> v[0] = rr.u64(field + ".worker_id");
            case "dp_rank" -> v[1] = rr.unsigned(field + ".dp_rank", Integer.MAX_VALUE);
            default -> rr.skip();
          }
        });
    if (v[0] == null) {
      throw JsonReader.missing(field + ".worker_id");
    }
    if (v[1] == null && !rankOptional) {
      throw JsonReader.missing(field + ".dp_rank");
    }
    return new WorkerRank(v[0], v[1] == null ? -1 : v[1].intValue());
  }

  /** {@code routing_constraints}: the required taints and the preferred taints' weights. */
  record Constraints(Set<String> required, Map<String, Double> preferred) {}

  /** {@code routing_constraints}; null when absent or JSON null. */
  static Constraints constraints(JsonReader r) throws IOException {
    Set<String> required = new HashSet<>();
    Map<String, Double> preferred = new LinkedHashMap<>();
    boolean present =
        r.object(
            "routing_constraints",
            (k, rr) -> {
              switch (k) {
                case "required_taints" -> {
                  List<String> l = rr.stringArray("routing_constraints.required_taints");
                  if (l != null) {
                    required.addAll(l);
                  }
                }
                case "preferred_taints" ->
                    rr.object(
                        "routing_constraints.preferred_taints",
                        (t, r3) -> {
                          Double w = r3.number("routing_constraints.preferred_taints." + t);
                          if (w != null) {
                            preferred.put(t, w);
                          }
                        });
                default -> rr.skip();
              }
            });
    return present ? new Constraints(required, preferred) : null;
  }
}
