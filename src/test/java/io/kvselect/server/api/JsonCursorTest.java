package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The token level under {@link JsonReader}: the root must be one object and nothing after it,
 * field names and strings must be well-formed UTF-16, and a syntax error inside a field names
 * where the parser stood.
 */
class JsonCursorTest {

  private static JsonCursor cursor(String json) {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    return new JsonCursor(b, 0, b.length);
  }

  /** Reads {@code json} the way a route does, skipping every value. */
  private static SelectionException rootError(String json) {
    byte[] b = json.getBytes(StandardCharsets.UTF_8);
    try (JsonReader r = new JsonReader(b, 0, b.length)) {
      return assertThrows(
          SelectionException.class,
          () ->
              r.readRootObject(
                  (name, reader) -> {
                    if (reader.isArrayStart()) {
                      while (reader.nextIsNotArrayEnd()) {
                        reader.skip();
                      }
                    } else {
                      reader.skip();
                    }
                  }));
    }
  }

  @Test
  void fieldsAreWalkedInOrderOntoTheirValues() throws IOException {
    try (JsonCursor c = cursor("{\"a\":1,\"b\":{\"c\":\"x\"}}")) {
      c.beginRoot();
      List<String> names = new ArrayList<>();
      String name;
      while ((name = c.nextField("")) != null) {
        names.add(name);
        c.parser().skipChildren();
      }
      c.endRoot();
      assertEquals(List.of("a", "b"), names);
    }
  }

  @Test
  void anArrayEndsAtItsCloseBracket() throws IOException {
    try (JsonCursor c = cursor("{\"a\":[1,2]}")) {
      c.beginRoot();
      assertEquals("a", c.nextField(""));
      assertTrue(c.nextIsNotArrayEnd());
      assertTrue(c.nextIsNotArrayEnd());
      assertFalse(c.nextIsNotArrayEnd());
      assertNull(c.nextField(""));
    }
  }

  @Test
  void theRootMustBeOneObject() {
    SelectionException empty = rootError("");
    assertEquals(ErrorCode.SYNTAX, empty.code());
    assertEquals(
        "Failed to parse the request body as JSON: EOF while parsing a value", empty.getMessage());
    SelectionException array = rootError("[1]");
    assertEquals(ErrorCode.UNPROCESSABLE, array.code());
    assertEquals(
        "Failed to deserialize the JSON body into the target type: expected a JSON object",
        array.getMessage());
    SelectionException trailing = rootError("{} {}");
    assertEquals(ErrorCode.SYNTAX, trailing.code());
    assertEquals(
        "Failed to parse the request body as JSON: trailing characters", trailing.getMessage());
  }

  @Test
  void aSyntaxErrorInsideAFieldNamesTheElement() {
    SelectionException e = rootError("{\"token_ids\":[1,2,x]}");
    assertEquals(ErrorCode.SYNTAX, e.code());
    assertTrue(
        e.getMessage().startsWith("Failed to parse the request body as JSON at `token_ids[2]`: "),
        e.getMessage());
    assertFalse(e.getMessage().contains("\n"), "only the parser's first line is kept");
  }

  @Test
  void aSyntaxErrorAtTheRootNamesNoField() {
    SelectionException e = rootError("{x}");
    assertEquals(ErrorCode.SYNTAX, e.code());
    assertTrue(
        e.getMessage().startsWith("Failed to parse the request body as JSON: "), e.getMessage());
    assertFalse(e.getMessage().contains(" at `"), e.getMessage());
  }

  @Test
  void aLoneSurrogateInAFieldNameIsRefusedWithoutQuotingIt() {
    SelectionException e = rootError("{\"a\\uD800b\":1}");
    assertEquals(ErrorCode.SYNTAX, e.code());
    assertEquals(
        "Failed to parse the request body as JSON: a field name holds a lone surrogate \\uD800"
            + " at index 1, which is not valid Unicode",
        e.getMessage());
  }

  @Test
  void aLoneSurrogateInANestedFieldNameNamesTheObject() throws IOException {
    try (JsonCursor c = cursor("{\"o\":{\"\\uDC00\":1}}")) {
      c.beginRoot();
      assertEquals("o", c.nextField(""));
      SelectionException e = assertThrows(SelectionException.class, () -> c.nextField("o"));
      assertEquals(
          "Failed to parse the request body as JSON: a field name in `o` holds a lone surrogate"
              + " \\uDC00 at index 0, which is not valid Unicode",
          e.getMessage());
    }
  }

  @Test
  void aStringIsCheckedAndAPairIsKept() throws IOException {
    try (JsonCursor c = cursor("{\"ok\":\"\\uD83D\\uDE00\",\"bad\":\"x\\uD83D\"}")) {
      c.beginRoot();
      assertEquals("ok", c.nextField(""));
      assertEquals("\uD83D\uDE00", c.text("ok"));
      assertEquals("bad", c.nextField(""));
      SelectionException e = assertThrows(SelectionException.class, () -> c.text("bad"));
      assertEquals(ErrorCode.SYNTAX, e.code());
      assertEquals(
          "Failed to parse the request body as JSON: field `bad` holds a lone surrogate \\uD83D"
              + " at index 1, which is not valid Unicode",
          e.getMessage());
    }
  }
}
