package io.kvselect.server.api;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.ReservationRequest;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.SessionContext;
import io.kvselect.server.api.RequestFields.Constraints;
import io.kvselect.server.api.RequestFields.Prompt;

/**
 * Decodes the selection-family request bodies ({@code /select}, {@code /select_and_reserve},
 * {@code /potential_loads}, {@code /overlap_scores}, {@code /reservations}) into core records in
 * one streaming pass. Unknown fields are ignored, as Dynamo's serde types do. This class says
 * which fields each body has; the rules of the fields they share are {@link RequestFields}'.
 * Stateless.
 */
final class RequestParsers {

  private RequestParsers() {}

  /**
   * Reads a root object whose prompt fields go to {@code prompt} and the rest to {@code rest};
   * with {@code scan}, a plain top-level {@code token_ids} array is decoded by
   * {@link TokenArrayScanner} and the general parser sees the body without it.
   */
  private static void readWithPrompt(
      BodyBytes raw, boolean scan, Prompt prompt, JsonReader.FieldHandler rest) {
    TokenArrayScanner.Found fast = scan ? TokenArrayScanner.find(raw) : null;
    byte[] body = fast == null ? raw.array() : fast.withoutArray(raw);
    int from = fast == null ? raw.offset() : 0;
    int length = fast == null ? raw.length() : body.length;
    try (JsonReader reader = new JsonReader(body, from, length)) {
      reader.readRootObject(
          (k, r) -> {
            if (!prompt.field(k, r)) {
              rest.field(k, r);
            }
          });
    }
    if (fast != null) {
      prompt.tokens = fast.values();
    }
  }

  /** Parses a selection-family body ({@code advisory} matters only to {@code /select}). */
  static SelectRequest select(byte[] raw) {
    return select(BodyBytes.of(raw), true);
  }

  /** As {@link #select(byte[])}, reading the body in place (valid only during the call). */
  static SelectRequest select(BodyBytes raw) {
    return select(raw, true);
  }

  static SelectRequest select(byte[] raw, boolean scan) {
    return select(BodyBytes.of(raw), scan);
  }

  /** {@code scan=false} decodes everything with the general parser (the reference in tests). */
  static SelectRequest select(BodyBytes raw, boolean scan) {
    Prompt prompt = new Prompt();
    String[] s = new String[4];
    Long[] expected = new Long[1];
    Object[] o = new Object[6];
    boolean[] advisory = new boolean[1];
    Object[] queue = new Object[2];
    readWithPrompt(
        raw,
        scan,
        prompt,
        (k, r) -> {
          switch (k) {
            case "model_name" -> s[0] = r.string(k);
            case "routing_group" -> s[1] = r.string(k);
            case "selection_id" -> s[2] = r.string(k);
            case "session_id" -> s[3] = r.string(k);
            case "expected_output_tokens" -> expected[0] = r.unsigned(k, 0xFFFF_FFFFL);
            case "router_config_override" -> o[0] = RequestFields.override(r);
            case "session_context" -> o[1] = RequestFields.sessionContext(r);
            case "affinity_target" -> o[2] = RequestFields.target(r, k, true);
            case "pinned_worker" -> o[3] = RequestFields.target(r, k, false);
            case "allowed_worker_ids" -> o[4] = r.u64Array(k);
            case "routing_constraints" -> o[5] = RequestFields.constraints(r);
            case "advisory" -> advisory[0] = Boolean.TRUE.equals(r.bool(k));
            case "priority_jump" -> queue[0] = r.number(k);
            case "strict_priority" -> queue[1] = r.unsigned(k, 0xFFFF_FFFFL);
            default -> r.skip();
          }
        });
    Constraints c = (Constraints) o[5];
    return new SelectRequest(
        new PartitionKey(s[0], s[1]),
        s[2],
        prompt.build(),
        (RouterConfigOverride) o[0],
        expected[0],
        s[3],
        (SessionContext) o[1],
        (WorkerRank) o[2],
        (WorkerRank) o[3],
        (long[]) o[4],
        c == null ? null : c.required(),
        c == null ? null : c.preferred(),
        advisory[0],
        null,
        (Double) queue[0],
        (Long) queue[1]);
  }

  /** Parses a {@code POST /reservations} body. */
  static ReservationRequest reservation(byte[] raw) {
    Prompt prompt = new Prompt();
    String[] s = new String[3];
    Long[] l = new Long[4];
    Boolean[] track = new Boolean[1];
    RouterConfigOverride[] ov = new RouterConfigOverride[1];
    readWithPrompt(
        BodyBytes.of(raw),
        true,
        prompt,
        (k, r) -> {
          switch (k) {
            case "model_name" -> s[0] = r.string(k);
            case "routing_group" -> s[1] = r.string(k);
            case "selection_id" -> s[2] = r.string(k);
            case "worker_id" -> l[0] = r.u64(k);
            case "dp_rank" -> l[1] = r.unsigned(k, Integer.MAX_VALUE);
            case "expected_output_tokens" -> l[2] = r.unsigned(k, 0xFFFF_FFFFL);
            case "effective_prefill_tokens" -> l[3] = r.unsigned(k, RequestFields.MAX_ISL_TOKENS);
            case "track_prefill_tokens" -> track[0] = r.bool(k);
            case "router_config_override" -> ov[0] = RequestFields.override(r);
            default -> r.skip();
          }
        });
    if (s[2] == null) {
      throw JsonReader.missing("selection_id");
    }
    PromptInput p = prompt.build();
    return new ReservationRequest(
        new PartitionKey(s[0], s[1]),
        s[2],
        l[0],
        l[1] == null ? null : l[1].intValue(),
        p.isEmpty() ? null : p,
        l[2],
        l[3],
        track[0],
        ov[0]);
  }
}
