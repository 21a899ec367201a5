package io.kvselect.core.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import org.junit.jupiter.api.Test;

/** A worker's disaggregation role: each field's 422 names it, and what counts as empty. */
class DisaggSpecTest {

  private static String refused(String type, Long kd, String endpoint) {
    SelectionException e =
        assertThrows(SelectionException.class, () -> new DisaggSpec(type, kd, endpoint));
    assertEquals(ErrorCode.UNPROCESSABLE, e.code());
    return e.getMessage();
  }

  @Test
  void theWorkerTypeIsPrefillOrDecode() {
    assertEquals("prefill", new DisaggSpec("prefill", null, null).workerType());
    assertEquals("decode", new DisaggSpec("decode", null, null).workerType());
    assertTrue(refused("both", null, null).startsWith("worker_type must be one of"));
    assertTrue(refused("Decode", null, null).contains("Decode"));
  }

  @Test
  void theKvCapacityIsPositive() {
    assertEquals(1L, new DisaggSpec(null, 1L, null).kvCapacityTokens());
    assertTrue(refused(null, 0L, null).startsWith("kv_capacity_tokens must be positive"));
    assertTrue(refused(null, -5L, null).contains("-5"));
  }

  @Test
  void theAdmissionEndpointIsAnAbsoluteHttpUrl() {
    assertEquals(
        "http://10.0.0.1:9000/admit",
        new DisaggSpec(null, null, "http://10.0.0.1:9000/admit").admissionEndpoint());
    new DisaggSpec(null, null, "https://admit.example:443");
    assertTrue(
        refused(null, null, "http://bad host").startsWith("admission_endpoint is not a URL"));
    assertTrue(refused(null, null, "grpc://h:1").startsWith("admission_endpoint must be"));
    assertTrue(refused(null, null, "/admit").startsWith("admission_endpoint must be"));
    assertTrue(refused(null, null, "http:opaque").startsWith("admission_endpoint must be"));
  }

  @Test
  void emptyOnlyWhenNoFieldIsSet() {
    assertTrue(DisaggSpec.NONE.isEmpty());
    assertFalse(new DisaggSpec("decode", null, null).isEmpty());
    assertFalse(new DisaggSpec(null, 10L, null).isEmpty());
    assertFalse(new DisaggSpec(null, null, "http://h:1").isEmpty());
  }
}
