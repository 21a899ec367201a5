package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SessionContext;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The shared field rules on their own, each given the value of one field of a body. */
class RequestFieldsTest {

  /** A rule applied to the value of {@code field} in {@code json}. */
  private interface Rule<T> {
    T read(JsonReader r, String field) throws IOException;
  }

  private static <T> T read(String json, String field, Rule<T> rule) {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    Object[] out = new Object[1];
    try (JsonReader reader = new JsonReader(b, 0, b.length)) {
      reader.readRootObject(
          (k, r) -> {
            if (k.equals(field)) {
              out[0] = rule.read(r, k);
            } else {
              r.skip();
            }
          });
    }
    @SuppressWarnings("unchecked")
    T t = (T) out[0];
    return t;
  }

  private static String error(String json, String field, Rule<?> rule) {
    return assertThrows(SelectionException.class, () -> read(json, field, rule)).getMessage();
  }

  @Test
  void anOverrideReadsItsKnobsAndChecksTheirRanges() {
    RouterConfigOverride o =
        read(
            "{\"o\":{\"overlap_score_credit\":0.5,\"router_temperature\":0,\"policy\":\"kv\","
                + "\"assume_kv_reuse\":false,\"x\":[1]}}",
            "o",
            (r, f) -> RequestFields.override(r));
    assertEquals(0.5, o.overlapScoreCredit());
    assertEquals(0.0, o.routerTemperature());
    assertEquals("kv", o.policy());
    assertEquals(false, o.assumeKvReuse());
    assertNull(read("{\"o\":null}", "o", (r, f) -> RequestFields.override(r)));
    assertEquals(
        "router_config_override.overlap_score_credit must be in [0, 1]",
        error("{\"o\":{\"overlap_score_credit\":1.5}}", "o", (r, f) -> RequestFields.override(r)));
    assertEquals(
        "router_config_override.router_temperature must not be negative",
        error("{\"o\":{\"router_temperature\":-1}}", "o", (r, f) -> RequestFields.override(r)));
  }

  @Test
  void aTargetIsAnIdOrAnObjectWithItsRank() {
    assertEquals(
        new WorkerRank(7, -1), read("{\"t\":7}", "t", (r, f) -> RequestFields.target(r, f, true)));
    assertEquals(
        new WorkerRank(7, 2),
        read(
            "{\"t\":{\"worker_id\":7,\"dp_rank\":2}}",
            "t",
            (r, f) -> RequestFields.target(r, f, false)));
    assertEquals(
        new WorkerRank(7, -1),
        read("{\"t\":{\"worker_id\":7}}", "t", (r, f) -> RequestFields.target(r, f, true)));
    assertEquals(
        "Failed to deserialize the JSON body into the target type: missing field `t.dp_rank`",
        error("{\"t\":{\"worker_id\":7}}", "t", (r, f) -> RequestFields.target(r, f, false)));
    assertEquals(
        "Failed to deserialize the JSON body into the target type: missing field `t.worker_id`",
        error("{\"t\":{}}", "t", (r, f) -> RequestFields.target(r, f, true)));
  }

  @Test
  void aSessionContextNeedsItsIdAndAKnownTrigger() {
    SessionContext c =
        read(
            "{\"s\":{\"session_id\":\"a\",\"input_trigger\":\"tool_result\","
                + "\"agent_headers\":{\"h\":[\"v\"]}}}",
            "s",
            (r, f) -> RequestFields.sessionContext(r));
    assertEquals("a", c.sessionId());
    assertEquals(
        "Failed to deserialize the JSON body into the target type: missing field"
            + " `session_context.session_id`",
        error("{\"s\":{}}", "s", (r, f) -> RequestFields.sessionContext(r)));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () ->
                read(
                    "{\"s\":{\"session_id\":\"a\",\"input_trigger\":\"x\"}}",
                    "s",
                    (r, f) -> RequestFields.sessionContext(r)));
    assertEquals(ErrorCode.UNPROCESSABLE, e.code());
  }

  @Test
  void constraintsGatherTheTaints() {
    RequestFields.Constraints c =
        read(
            "{\"c\":{\"required_taints\":[\"a\",\"b\"],\"preferred_taints\":{\"z\":2,\"y\":null}}}",
            "c",
            (r, f) -> RequestFields.constraints(r));
    assertEquals(Set.of("a", "b"), c.required());
    assertEquals(Map.of("z", 2.0), c.preferred());
    assertNull(read("{\"c\":null}", "c", (r, f) -> RequestFields.constraints(r)));
  }

  @Test
  void thePromptPrefersRoutingTokensAndDropsEmptyNames() throws IOException {
    RequestFields.Prompt p = new RequestFields.Prompt();
    read(
        "{\"p\":{\"token_ids\":[1,2],\"lora_name\":\"\",\"cache_salt\":\"s\","
            + "\"mm_routing_info\":{\"routing_token_ids\":[9]},"
            + "\"block_mm_infos\":[null,{\"mm_objects\":[{\"mm_hash\":5}]}]}}",
        "p",
        (r, f) -> {
          r.readObjectFields(
              f,
              (k, rr) -> {
                if (!p.field(k, rr)) {
                  rr.skip();
                }
              });
          return null;
        });
    var in = p.build();
    assertEquals(List.of(9), java.util.Arrays.stream(in.tokenIds()).boxed().toList());
    assertNull(in.loraName());
    assertEquals("s", in.cacheSalt());
    assertNull(in.blockMmHashes()[0]);
    assertEquals(5L, in.blockMmHashes()[1][0]);
  }
}
