package io.kvselect.server.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonStreamContext;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.io.IOException;
import java.util.Locale;

/**
 * The token level under {@link JsonReader}: one Jackson {@link JsonParser} over a request body
 * (nesting bounded at 64), walked object by object and array by array, with the body's syntax
 * errors ({@code 400}) named by where the parser stood ({@code token_ids[3]}), and every string
 * and field name checked to be well-formed UTF-16 (a lone surrogate escape is rejected, as a
 * strict UTF-8 decoder does). It knows nothing of field types; those are {@link JsonReader}'s.
 *
 * <p>Owner: the {@link JsonReader} that creates it, one per request; the parser's position is
 * mutable state confined to the calling thread, and {@link #close()} ends it.
 */
final class JsonCursor implements AutoCloseable {

  private static final JsonFactory FACTORY =
      JsonFactory.builder()
          .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build())
          .build();

  private final JsonParser p;

  JsonCursor(byte[] body, int offset, int length) {
    try {
      this.p = FACTORY.createParser(body, offset, length);
    } catch (IOException e) {
      throw syntax(e);
    }
  }

  /** The parser, for reading the value at the current token. */
  JsonParser parser() {
    return p;
  }

  /** Advances to the first token, which must open an object. */
  void beginRoot() throws IOException {
    JsonToken t = p.nextToken();
    if (t == null) {
      throw new SelectionException(
          ErrorCode.SYNTAX, "Failed to parse the request body as JSON: EOF while parsing a value");
    }
    if (t != JsonToken.START_OBJECT) {
      throw new SelectionException(
          ErrorCode.UNPROCESSABLE,
          "Failed to deserialize the JSON body into the target type: expected a JSON object");
    }
  }

  /** Checks that nothing follows the root object. */
  void endRoot() throws IOException {
    if (p.nextToken() != null) {
      throw new SelectionException(
          ErrorCode.SYNTAX, "Failed to parse the request body as JSON: trailing characters");
    }
  }

  /**
   * Advances to the next field of the current object and onto its value token, returning the
   * field's name (checked well-formed; {@code path} names the object in the error, empty at the
   * root); null at the end of the object.
   */
  String nextField(String path) throws IOException {
    JsonToken t = p.nextToken();
    if (t == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      if (!WellFormedText.isWellFormed(name)) {
        throw loneSurrogate(
            name, path.isEmpty() ? "a field name" : "a field name in `" + path + "`");
      }
      p.nextToken();
      return name;
    }
    if (t != JsonToken.END_OBJECT) {
      throw new SelectionException(
          ErrorCode.SYNTAX, "Failed to parse the request body as JSON: unterminated object");
    }
    return null;
  }

  /** Advances to the next array element; false at the end of the array. */
  boolean nextIsNotArrayEnd() throws IOException {
    JsonToken t = p.nextToken();
    if (t == null) {
      throw new SelectionException(
          ErrorCode.SYNTAX, "Failed to parse the request body as JSON: unterminated array");
    }
    return t != JsonToken.END_ARRAY;
  }

  /** The current string token, checked to be well-formed UTF-16; {@code path} names it. */
  String text(String path) throws IOException {
    String s = p.getText();
    if (!WellFormedText.isWellFormed(s)) {
      throw loneSurrogate(s, "field `" + path + "`");
    }
    return s;
  }

  /** A syntax error naming where the parser stood, as {@code token_ids[3]}, when inside a field. */
  SelectionException syntaxAt(IOException e) {
    StringBuilder path = new StringBuilder();
    for (JsonStreamContext c = p.getParsingContext(); c != null && !c.inRoot(); c = c.getParent()) {
      if (c.inArray()) {
        path.insert(0, "[" + Math.max(0, c.getCurrentIndex()) + "]");
      } else if (c.getCurrentName() != null) {
        path.insert(
            0, (c.getParent() != null && c.getParent().inRoot() ? "" : ".") + c.getCurrentName());
      }
    }
    if (path.length() == 0) {
      return syntax(e);
    }
    return new SelectionException(
        ErrorCode.SYNTAX,
        "Failed to parse the request body as JSON at `" + path + "`: " + firstLine(e));
  }

  /**
   * A 400 naming {@code where}; never quotes {@code s}, so that the error itself can be written as
   * JSON.
   */
  private static SelectionException loneSurrogate(String s, String where) {
    int i = 0;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i += 2;
      } else if (Character.isSurrogate(c)) {
        break;
      } else {
        i++;
      }
    }
    String code = i < s.length() ? Integer.toHexString(s.charAt(i)).toUpperCase(Locale.ROOT) : "?";
    return new SelectionException(
        ErrorCode.SYNTAX,
        "Failed to parse the request body as JSON: "
            + where
            + " holds a lone surrogate \\u"
            + code
            + " at index "
            + i
            + ", which is not valid Unicode");
  }

  private static SelectionException syntax(IOException e) {
    return new SelectionException(
        ErrorCode.SYNTAX, "Failed to parse the request body as JSON: " + firstLine(e));
  }

  /** The first line of the parser's message, without its source excerpt. */
  private static String firstLine(IOException e) {
    return e.getMessage() == null
        ? "invalid JSON"
        : e.getMessage().lines().findFirst().orElse("invalid JSON");
  }

  @Override
  public void close() {
    try {
      p.close();
    } catch (IOException ignored) {
      // closing an in-memory parser cannot fail in a way the caller could act on
    }
  }
}
