package io.kvselect.server.api;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
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
 * field ({@code 422}), down to the element ({@code field[i]}) for an element of an array; a syntax
 * error is {@code 400}. Arrays are bounded by {@link #MAX_ARRAY}. A JSON {@code null} stands for
 * an absent field, never for an element of an array or a value of a map. Strings are well-formed
 * UTF-16 (a lone surrogate escape is rejected, as a strict UTF-8 decoder does), so everything read
 * can be written back as JSON.
 *
 * <p>The typed reads are here; walking the tokens, the syntax errors and the UTF-16 checks are
 * {@link JsonCursor}'s. One instance per request, confined to the calling thread; it owns its
 * cursor and closes it.
 */
final class JsonReader implements AutoCloseable {

  /** Upper bound on any array in a request (tokens, hashes, ids). */
  static final int MAX_ARRAY = 1_000_000;

  private static final BigInteger U64_MAX = BigInteger.ONE.shiftLeft(64).subtract(BigInteger.ONE);
  private static final BigInteger I64_MIN = BigInteger.valueOf(Long.MIN_VALUE);

  private final JsonCursor cursor;
  private final JsonParser p;

  JsonReader(byte[] body, int offset, int length) {
    this.cursor = new JsonCursor(body, offset, length);
    this.p = cursor.parser();
  }

  /** Handles one field of an object; the parser is positioned on the field's value token. */
  interface FieldHandler {
    void field(String name, JsonReader r) throws IOException;
  }

  /** Reads the top-level value, which must be an object, then checks that nothing follows. */
  void readRootObject(FieldHandler h) {
    try {
      cursor.beginRoot();
      readObjectFields("", h);
      cursor.endRoot();
    } catch (IOException e) {
      throw cursor.syntaxAt(e);
    }
  }

  /** Iterates the fields of the object whose START_OBJECT is current. */
  void readObjectFields(String path, FieldHandler h) throws IOException {
    String name;
    while ((name = cursor.nextField(path)) != null) {
      h.field(name, this);
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
    return cursor.nextIsNotArrayEnd();
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
    return cursor.text(field);
  }

  /** The path of element {@code i} of array {@code field}. */
  static String element(String field, int i) {
    return field + "[" + i + "]";
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
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
        || p.getLongValue() < 0
        || p.getLongValue() > max) {
      throw type(field, "a non-negative integer no greater than " + max);
    }
    return p.getLongValue();
  }

  /** An unsigned 64-bit integer (worker ids) carried in a long's bits; null when JSON null. */
  Long u64(String field) throws IOException {
    return isNull() ? null : u64Value(field);
  }

  /** An unsigned 64-bit integer carried in a long's bits; JSON null is a type error. */
  private long u64Value(String field) throws IOException {
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
      throw type(field, "a 64-bit integer hash");
    }
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      BigInteger b = p.getBigIntegerValue();
      if (b.compareTo(I64_MIN) < 0 || b.compareTo(U64_MAX) > 0) {
        throw type(field, "a 64-bit integer hash (signed 64-bit, or unsigned 64-bit)");
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
      if (t != JsonToken.VALUE_NUMBER_INT) {
        throw type(element(field, n), "an unsigned 32-bit integer");
      }
      if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER
          || p.getLongValue() < 0
          || p.getLongValue() > 0xFFFF_FFFFL) {
        throw type(
            element(field, n), "an unsigned 32-bit integer (" + p.getText() + " is out of range)");
      }
      if (n == out.length) {
        out = grow(out, n, field);
      }
      out[n++] = (int) p.getLongValue();
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
      long v = hash(element(field, n));
      if (n == out.length) {
        out = grow(out, n, field);
      }
      out[n++] = v;
    }
    return n == out.length ? out : Arrays.copyOf(out, n);
  }

  /** An array of unsigned 64-bit ids; null when JSON null; a null element is a type error. */
  long[] u64Array(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.START_ARRAY, field, "an array of unsigned 64-bit integers");
    long[] out = new long[16];
    int n = 0;
    while (p.nextToken() != JsonToken.END_ARRAY) {
      long v = u64Value(element(field, n));
      if (n == out.length) {
        out = grow(out, n, field);
      }
      out[n++] = v;
    }
    return Arrays.copyOf(out, n);
  }

  private static int[] grow(int[] a, int n, String field) {
    if (n >= MAX_ARRAY) {
      throw tooMany(field);
    }
    return Arrays.copyOf(a, (int) Math.min(MAX_ARRAY, 2L * n));
  }

  private static long[] grow(long[] a, int n, String field) {
    if (n >= MAX_ARRAY) {
      throw tooMany(field);
    }
    return Arrays.copyOf(a, (int) Math.min(MAX_ARRAY, 2L * n));
  }

  /** An array of strings; null when JSON null; a null element is a type error. */
  List<String> stringArray(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    expect(JsonToken.START_ARRAY, field, "an array of strings");
    List<String> out = new ArrayList<>();
    while (p.nextToken() != JsonToken.END_ARRAY) {
      if (p.currentToken() != JsonToken.VALUE_STRING) {
        throw type(element(field, out.size()), "a string");
      }
      if (out.size() >= MAX_ARRAY) {
        throw tooMany(field);
      }
      out.add(cursor.text(element(field, out.size())));
    }
    return out;
  }

  /** An object of string values; null when JSON null. */
  Map<String, String> stringMap(String field) throws IOException {
    if (isNull()) {
      return null;
    }
    Map<String, String> out = new LinkedHashMap<>();
    object(
        field,
        (k, r) -> {
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
    object(
        field,
        (k, r) -> {
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
    return new SelectionException(
        ErrorCode.UNPROCESSABLE,
        "Failed to deserialize the JSON body into the target type: invalid type for field `"
            + field
            + "`: expected "
            + what);
  }

  static SelectionException missing(String field) {
    return new SelectionException(
        ErrorCode.UNPROCESSABLE,
        "Failed to deserialize the JSON body into the target type: missing field `" + field + "`");
  }

  private static SelectionException tooMany(String field) {
    return new SelectionException(
        ErrorCode.UNPROCESSABLE,
        "field `"
            + field
            + "` has more than "
            + MAX_ARRAY
            + " entries (the limit of any array in a request)");
  }

  @Override
  public void close() {
    cursor.close();
  }
}
