package io.kvselect.server.api;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.io.IOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A thin streaming reader over Jackson's {@link JsonParser} that decodes request bodies straight
 * into primitive arrays and typed values (no JSON tree per request). Every type error names the
 * field ({@code 422}); a syntax error is {@code 400}. Arrays are bounded by {@link #MAX_ARRAY}.
 * One instance per request, confined to the calling thread.
 */
final class JsonReader implements AutoCloseable {

  /** Upper bound on any array in a request (tokens, hashes, ids). */
  static final int MAX_ARRAY = 1_000_000;

  private static final JsonFactory FACTORY = JsonFactory.builder()
      .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(64).build())
      .build();
  private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);

  private final JsonParser p;

  JsonReader(byte[] body, int offset, int length) {
    try {
      this.p = FACTORY.createParser(body, offset, length);
    } catch (IOException e) {
      throw syntax(e);
    }
  }

  /** Handles one field of an object; the parser is positioned on the field's value token. */
  interface FieldHandler {
    void field(String name, JsonReader r) throws IOException;
  }

  /** Reads the top-level value, which must be an object, then checks that nothing follows. */
  void readRootObject(FieldHandler h) {
    try {
      JsonToken t = p.nextToken();
      if (t == null) {
        throw new SelectionException(ErrorCode.SYNTAX, "Failed to parse the request body as JSON: EOF while parsing a value");
      }
      if (t != JsonToken.START_OBJECT) {
        throw new SelectionException(ErrorCode.UNPROCESSABLE,
            "Failed to deserialize the JSON body into the target type: expected a JSON object");
      }
      readObjectFields("", h);
      if (p.nextToken() != null) {
        throw new SelectionException(ErrorCode.SYNTAX, "Failed to parse the request body as JSON: trailing characters");
      }
    } catch (JsonProcessingException e) {
      throw syntax(e);
    } catch (IOException e) {
      throw syntax(e);
    }
  }

  /** Iterates the fields of the object whose START_OBJECT is current. */
  void readObjectFields(String path, FieldHandler h) throws IOException {
    JsonToken t;
    while ((t = p.nextToken()) == JsonToken.FIELD_NAME) {
      String name = p.currentName();
      p.nextToken();
      h.field(name, this);
    }
    if (t != JsonToken.END_OBJECT) {
      throw new SelectionException(ErrorCode.SYNTAX, "Failed to parse the request body as JSON: unterminated object");
    }
  }

  /** Reads a nested object field (null = absent); returns false if it was null. */
  boolean object(String field, FieldHandler h) throws IOException {
    if (isNull()) {
      return false;
    }
    expect(JsonToken.START_OBJECT, field, "an object");
    readObjectFields(field, h);
    return true;
  }

  boolean isObjectStart() {
    return p.currentToken() == JsonToken.START_OBJECT;
  }

  boolean isArrayStart() {
    return p.currentToken() == JsonToken.START_ARRAY;
  }

  /** Advances to the next array element; false at the end of the array. */
  boolean nextIsNotArrayEnd() throws IOException {
    JsonToken t = p.nextToken();
    if (t == null) {
      throw new SelectionException(ErrorCode.SYNTAX, "Failed to parse the request body as JSON: unterminated array");
    }
    return t != JsonToken.END_ARRAY;
  }

  boolean isNull() {
    return p.currentToken() == JsonToken.VALUE_NULL;
  }

  void skip() throws IOException {
    p.skipChildren();
  }

  String string(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.VALUE_STRING, field, "a string");
    return p.getText();
  }

  Boolean bool(String field) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    if (t != JsonToken.VALUE_TRUE && t != JsonToken.VALUE_FALSE) {
      throw type(field, "a boolean");
    }
    return t == JsonToken.VALUE_TRUE;
  }

  Double number(String field) throws IOException {
    JsonToken t = p.currentToken();
    if (t == JsonToken.VALUE_NULL) {
      return null;
    }
    if (t != JsonToken.VALUE_NUMBER_INT && t != JsonToken.VALUE_NUMBER_FLOAT) {
      throw type(field, "a number");
    }
    double d = p.getDoubleValue();
    if (!Double.isFinite(d)) {
      throw type(field, "a finite number");
    }
    return d;
  }

  /** A non-negative integer that fits {@code max}; null when JSON null. */
  Long unsigned(String field, long max) throws IOException {
    if (isNull()) {
      return null;
    }
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
      throw type(field, "a non-negative integer");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER || p.getLongValue() < 0 || p.getLongValue() > max) {
      throw type(field, "a non-negative integer no greater than " + max);
    }
    return p.getLongValue();
  }

  /** An unsigned 64-bit integer (worker ids) carried in a long's bits; null when JSON null. */
  Long u64(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
      throw type(field, "an unsigned 64-bit integer");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      BigInteger b = p.getBigIntegerValue();
      if (b.signum() < 0 || b.compareTo(U64_MAX) > 0) {
        throw type(field, "an unsigned 64-bit integer");
      }
      return b.longValue();
    }
    long v = p.getLongValue();
    if (v < 0) {
      throw type(field, "an unsigned 64-bit integer");
    }
    return v;
  }

  /** A 64-bit hash: signed i64 on the wire, or an unsigned value above i64 max, as raw bits. */
  private long hash(String field) throws IOException {
    if (p.currentToken() != JsonToken.VALUE_NUMBER_INT) {
      throw type(field, "an array of 64-bit integer hashes");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      BigInteger b = p.getBigIntegerValue();
      if (b.signum() < 0 || b.compareTo(U64_MAX) > 0) {
        throw type(field, "an array of 64-bit integer hashes");
      }
      return b.longValue();
    }
    return p.getLongValue();
  }

  /** An array of u32 token ids decoded into a primitive array; null when JSON null. */
  int[] u32Array(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.START_ARRAY, field, "an array of unsigned 32-bit integers");
    int[] out = new int[256];
    int n = 0;
    JsonToken t;
    while ((t = p.nextToken()) != JsonToken.END_ARRAY) {
      if (t != JsonToken.VALUE_NUMBER_INT || p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
        throw type(field, "an array of unsigned 32-bit integers");
      }
      long v = p.getLongValue();
      if (v < 0 || v > 0xFFFF_FFFFL) {
        throw type(field, "an array of unsigned 32-bit integers (value " + v + " is out of range)");
      }
      if (n == out.length) {
        if (n >= MAX_ARRAY) {
          throw tooMany(field);
        }
        out = Arrays.copyOf(out, Math.min(MAX_ARRAY, n * 2));
      }
      out[n++] = (int) v;
    }
    return n == out.length ? out : Arrays.copyOf(out, n);
  }

  /** An array of 64-bit hashes decoded into a primitive array; null when JSON null. */
  long[] hashArray(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.START_ARRAY, field, "an array of 64-bit integer hashes");
    long[] out = new long[64];
    int n = 0;
    while (p.nextToken() != JsonToken.END_ARRAY) {
      long v = hash(field);
      if (n == out.length) {
        if (n >= MAX_ARRAY) {
          throw tooMany(field);
        }
        out = Arrays.copyOf(out, Math.min(MAX_ARRAY, n * 2));
      }
      out[n++] = v;
    }
    return n == out.length ? out : Arrays.copyOf(out, n);
  }

  /** An array of unsigned 64-bit ids; null when JSON null. */
  long[] u64Array(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.START_ARRAY, field, "an array of unsigned 64-bit integers");
    long[] out = new long[16];
    int n = 0;
    while (p.nextToken() != JsonToken.END_ARRAY) {
      if (n == out.length) {
        if (n >= MAX_ARRAY) {
          throw tooMany(field);
        }
        out = Arrays.copyOf(out, n * 2);
      }
      out[n++] = u64(field);
    }
    return Arrays.copyOf(out, n);
  }

  List<String> stringArray(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.START_ARRAY, field, "an array of strings");
    List<String> out = new ArrayList<>();
    while (p.nextToken() != JsonToken.END_ARRAY) {
      if (p.currentToken() != JsonToken.VALUE_STRING) {
        throw type(field, "an array of strings");
      }
      if (out.size() >= MAX_ARRAY) {
        throw tooMany(field);
      }
      out.add(p.getText());
    }
    return out;
  }

  /** An object of string values; null when JSON null. */
  Map<String, String> stringMap(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    object(field, (k, r) -> {
      String v = r.string(field + "." + k);
      if (v == null) {
        throw type(field + "." + k, "a string");
      }
      out.put(k, v);
    });
    return out;
  }

  /** An object keyed by DP rank (decimal string keys) with string values; null when JSON null. */
  Map<Integer, String> rankMap(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    Map<Integer, String> out = new LinkedHashMap<>();
    object(field, (k, r) -> {
      int rank;
      try {
        rank = Integer.parseInt(k);
      } catch (NumberFormatException e) {
        throw type(field, "an object keyed by DP rank (\"" + k + "\" is not a rank)");
      }
      if (rank < 0) {
        throw type(field, "an object keyed by non-negative DP ranks");
      }
      String v = r.string(field + "." + k);
      if (v == null) {
        throw type(field + "." + k, "a string");
      }
      out.put(rank, v);
    });
    return out;
  }

  private void expect(JsonToken want, String field, String what) {
    if (p.currentToken() != want) {
      throw type(field, what);
    }
  }

  static SelectionException type(String field, String what) {
    return new SelectionException(ErrorCode.UNPROCESSABLE,
        "Failed to deserialize the JSON body into the target type: invalid type for field `" + field
            + "`: expected " + what);
  }

  static SelectionException missing(String field) {
    return new SelectionException(ErrorCode.UNPROCESSABLE,
        "Failed to deserialize the JSON body into the target type: missing field `" + field + "`");
  }

  private static SelectionException tooMany(String field) {
    return new SelectionException(ErrorCode.UNPROCESSABLE,
        "field `" + field + "` has more than " + MAX_ARRAY + " entries (the limit of any array in a request)");
  }

  private static SelectionException syntax(IOException e) {
    String m = e.getMessage() == null ? "invalid JSON" : e.getMessage().lines().findFirst().orElse("invalid JSON");
    return new SelectionException(ErrorCode.SYNTAX, "Failed to parse the request body as JSON: " + m);
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
