package io.kvselect.core.error;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The error table: each code's HTTP status and each factory's code and message. */
class SelectionExceptionTest {

  @Test
  void everyCodeHasItsStatus() {
    Map<ErrorCode, Integer> expected =
        Map.ofEntries(
            Map.entry(ErrorCode.SYNTAX, 400),
            Map.entry(ErrorCode.BAD_REQUEST, 400),
            Map.entry(ErrorCode.NOT_FOUND, 404),
            Map.entry(ErrorCode.METHOD_NOT_ALLOWED, 405),
            Map.entry(ErrorCode.CONFLICT, 409),
            Map.entry(ErrorCode.PAYLOAD_TOO_LARGE, 413),
            Map.entry(ErrorCode.UNSUPPORTED_MEDIA_TYPE, 415),
            Map.entry(ErrorCode.UNPROCESSABLE, 422),
            Map.entry(ErrorCode.OVERLOADED, 429),
            Map.entry(ErrorCode.INTERNAL, 500),
            Map.entry(ErrorCode.NOT_READY, 503));
    assertEquals(ErrorCode.values().length, expected.size());
    expected.forEach((code, status) -> assertEquals(status, code.httpStatus(), code.name()));
  }

  @Test
  void factoriesCarryTheirCodeAndMessage() {
    Map<SelectionException, ErrorCode> made =
        Map.of(
            SelectionException.badRequest("m1"),
            ErrorCode.BAD_REQUEST,
            SelectionException.notFound("m2"),
            ErrorCode.NOT_FOUND,
            SelectionException.conflict("m3"),
            ErrorCode.CONFLICT,
            SelectionException.notReady("m4"),
            ErrorCode.NOT_READY,
            SelectionException.unprocessable("m5"),
            ErrorCode.UNPROCESSABLE,
            new SelectionException(ErrorCode.OVERLOADED, "m6"),
            ErrorCode.OVERLOADED);
    made.forEach(
        (e, code) -> {
          assertEquals(code, e.code());
          assertEquals(0, e.getStackTrace().length, "no stack trace is captured");
        });
    assertEquals("m1", SelectionException.badRequest("m1").getMessage());
    assertEquals("m5", SelectionException.unprocessable("m5").getMessage());
    assertNull(SelectionException.notFound("x").getCause());
  }
}
