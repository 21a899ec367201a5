package io.kvselect.server.api;

import io.kvselect.server.api.JsonDoc.Arr;
import io.kvselect.server.api.JsonDoc.J;
import io.kvselect.server.api.JsonDoc.Lit;
import io.kvselect.server.api.JsonDoc.Obj;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Tuple;

/**
 * One edit of a valid request body, chosen by generated numbers: which node ({@code pick}), which
 * replacement ({@code variant}) and where to insert ({@code position}). Applying it yields the
 * body and content type to send, and the names that a 400 or 422 about it must carry.
 */
record BodyMutation(Kind kind, int pick, int variant, int position) {

  enum Kind {
    /** The valid body, with one of the spellings of the JSON content type. */
    NONE,
    /** A value replaced by one of another JSON type. */
    WRONG_TYPE,
    /** A value replaced by {@code null}. */
    NULL,
    /** A member or element removed. */
    REMOVE,
    /** A value replaced by a number at or beyond some limit (sign, 32/64 bits, double range, length). */
    NUMBER,
    /** A value replaced by a string: huge, empty, unicode, lone surrogates. */
    STRING,
    /** A member repeated with another value. */
    DUPLICATE,
    /** A value replaced by deeply nested arrays. */
    DEEP,
    /** A {@code null} inserted into an array. */
    NULL_ELEMENT,
    /** A nested array, float, string, object, negative or 2^64 inserted into an array. */
    WRONG_ELEMENT,
    /** An unknown member added to an object. */
    EXTRA_MEMBER,
    /** The JSON text cut short. */
    TRUNCATE,
    /** The body replaced by another JSON value or by junk. */
    ROOT,
    /** A content type other than JSON (or none), half of the time with a body above the form field limit. */
    CONTENT_TYPE
  }

  /**
   * What to send. {@code field} (nullable) must appear in every 400 or 422 answer that is not a
   * syntax error; so must {@code element} ({@code name[i]}, nullable), the element inserted.
   */
  record Applied(
      String body, String contentType, String field, String element, String description) {}

  static final String JSON = "application/json";

  private static final String[] JSON_TYPES = {
    JSON, "application/json; charset=utf-8", "Application/JSON", "application/problem+json"
  };

  private static final String[] WRONG_TYPES = {
    "\"x\"", "\"1\"", "1", "-1", "1.5", "true", "false", "[]", "[1]", "[\"a\"]", "{}", "{\"a\":1}"
  };

  private static final String[] NUMBERS = {
    "-1",
    "0",
    "-0",
    "0.0",
    "0.5",
    "1.0",
    "1e2",
    "4294967295",
    "4294967296",
    "2147483648",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "-9223372036854775808",
    "-9223372036854775809",
    "1e308",
    "1e999",
    "-1e999",
    "4.9e-324",
    "1" + "0".repeat(300),
    "9".repeat(1200)
  };

  private static final String[] STRINGS = {
    "",
    " ",
    "ünïcødé 日本語 🚀",
    "\u202eRTL\u202c",
    "a\u0000b",
    "e\u0301",
    "\uFFFF",
    "\uD800",
    "\uDC00",
    "x\uD83D",
    "\"quoted\\\\",
    "tcp://[::1]:0",
    "ж".repeat(32 * 1024)
  };

  private static final String[] WRONG_ELEMENTS = {
    "null", "[1]", "[[]]", "\"1\"", "1.5", "true", "{}", "-1", "18446744073709551616", "4294967296"
  };

  private static final String[] EXTRA_KEYS = {
    "zz_unknown", "", "ünï", "\uD800", "token_ids_", "0", "-1"
  };

  private static final String[] ROOTS = {
    "",
    " ",
    "null",
    "[]",
    "[{}]",
    "1",
    "\"x\"",
    "true",
    "{",
    "}",
    "{\"a\"}",
    "{}{}",
    "{\"a\":1,}",
    "{'a':1}",
    "/**/{}",
    "NaN",
    "\uFEFF{}",
    "{\"a\":\"\\uZZZZ\"}"
  };

  /** Content types other than JSON, the form types in the spellings that trip a form decoder. */
  static final String[] CONTENT_TYPES = {
    null,
    "text/plain",
    "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=zz",
    "application/xml",
    "application/jsonx",
    "json",
    "*/*",
    "application/octet-stream",
    "multipart/form-data",
    "multipart/form-data; boundary=",
    "Multipart/Form-Data",
    "application/x-www-form-urlencoded; charset=bogus",
    "multipart/mixed; boundary=zz"
  };

  static Arbitrary<BodyMutation> any() {
    Arbitrary<Kind> kinds =
        Arbitraries.frequencyOf(
            Tuple.of(20, Arbitraries.just(Kind.NONE)),
            Tuple.of(10, Arbitraries.just(Kind.WRONG_TYPE)),
            Tuple.of(8, Arbitraries.just(Kind.NULL)),
            Tuple.of(8, Arbitraries.just(Kind.REMOVE)),
            Tuple.of(10, Arbitraries.just(Kind.NUMBER)),
            Tuple.of(8, Arbitraries.just(Kind.STRING)),
            Tuple.of(5, Arbitraries.just(Kind.DUPLICATE)),
            Tuple.of(2, Arbitraries.just(Kind.DEEP)),
            Tuple.of(8, Arbitraries.just(Kind.NULL_ELEMENT)),
            Tuple.of(8, Arbitraries.just(Kind.WRONG_ELEMENT)),
            Tuple.of(4, Arbitraries.just(Kind.EXTRA_MEMBER)),
            Tuple.of(4, Arbitraries.just(Kind.TRUNCATE)),
            Tuple.of(3, Arbitraries.just(Kind.ROOT)),
            Tuple.of(4, Arbitraries.just(Kind.CONTENT_TYPE)));
    Arbitrary<Integer> n = Arbitraries.integers().between(0, 1 << 20);
    return Combinators.combine(kinds, n, n, n).as(BodyMutation::new);
  }

  Applied apply(J body) {
    String valid = JsonDoc.json(body);
    List<List<Integer>> all = JsonDoc.paths(body);
    switch (kind) {
      case NONE -> {
        return new Applied(valid, pickFrom(JSON_TYPES, variant), null, null, "valid");
      }
      case TRUNCATE -> {
        int cut = valid.isEmpty() ? 0 : position % valid.length();
        return new Applied(valid.substring(0, cut), JSON, null, null, "truncated at " + cut);
      }
      case ROOT -> {
        String root = pickFrom(ROOTS, variant);
        return new Applied(root, JSON, null, null, "root " + JsonDoc.quote(root));
      }
      case CONTENT_TYPE -> {
        String ct = pickFrom(CONTENT_TYPES, variant);
        boolean large = position % 2 == 0;
        String sent =
            large
                ? JsonDoc.json(
                    JsonDoc.addMember(body, List.of(), "pad", JsonDoc.str("x".repeat(16 * 1024))))
                : valid;
        return new Applied(
            sent, ct, null, null, "content type " + ct + (large ? " with a 16 KiB member" : ""));
      }
      case NULL_ELEMENT, WRONG_ELEMENT -> {
        List<List<Integer>> arrays = new ArrayList<>();
        for (List<Integer> p : all) {
          if (JsonDoc.get(body, p) instanceof Arr) {
            arrays.add(p);
          }
        }
        if (arrays.isEmpty()) {
          return new Applied(valid, JSON, null, null, "valid (no array to edit)");
        }
        List<Integer> p = arrays.get(pick % arrays.size());
        int at = position % (((Arr) JsonDoc.get(body, p)).items().size() + 1);
        String element = kind == Kind.NULL_ELEMENT ? "null" : pickFrom(WRONG_ELEMENTS, variant);
        String container = JsonDoc.key(body, p);
        boolean nullable = "block_mm_infos".equals(container);
        String named =
            kind == Kind.NULL_ELEMENT && !nullable && container != null
                ? container + "[" + at + "]"
                : null;
        return new Applied(
            JsonDoc.json(JsonDoc.insert(body, p, at, JsonDoc.raw(element))),
            JSON,
            container == null ? JsonDoc.fieldName(body, p) : container,
            named,
            element + " inserted at " + container + "[" + at + "]");
      }
      case EXTRA_MEMBER -> {
        List<List<Integer>> objects = new ArrayList<>();
        objects.add(List.of());
        for (List<Integer> p : all) {
          if (JsonDoc.get(body, p) instanceof Obj) {
            objects.add(p);
          }
        }
        List<Integer> p = objects.get(pick % objects.size());
        String key = pickFrom(EXTRA_KEYS, position);
        J value = JsonDoc.raw(pickFrom(WRONG_TYPES, variant));
        boolean map = ((Obj) JsonDoc.get(body, p)).map();
        return new Applied(
            JsonDoc.json(JsonDoc.addMember(body, p, key, value)),
            JSON,
            map ? JsonDoc.fieldName(body, p) : null,
            null,
            "extra member " + JsonDoc.quote(key) + " at " + p);
      }
      default -> {
        // the remaining kinds edit one node
      }
    }
    List<List<Integer>> candidates = all;
    if (kind == Kind.DUPLICATE) {
      candidates = new ArrayList<>();
      for (List<Integer> p : all) {
        if (JsonDoc.get(body, p.subList(0, p.size() - 1)) instanceof Obj) {
          candidates.add(p);
        }
      }
    }
    if (candidates.isEmpty()) {
      return new Applied(valid, JSON, null, null, "valid (nothing to edit)");
    }
    List<Integer> p = candidates.get(pick % candidates.size());
    String field = JsonDoc.fieldName(body, p);
    J edited =
        switch (kind) {
          case WRONG_TYPE ->
              JsonDoc.update(body, p, v -> JsonDoc.raw(pickFrom(WRONG_TYPES, variant)));
          case NULL -> JsonDoc.update(body, p, v -> JsonDoc.NULL);
          case REMOVE -> JsonDoc.remove(body, p);
          case NUMBER -> JsonDoc.update(body, p, v -> JsonDoc.raw(pickFrom(NUMBERS, variant)));
          case STRING -> JsonDoc.update(body, p, v -> JsonDoc.str(pickFrom(STRINGS, variant)));
          case DEEP -> {
            int depth = variant % 2 == 0 ? 20 : 70;
            yield JsonDoc.update(body, p, v -> JsonDoc.raw("[".repeat(depth) + "]".repeat(depth)));
          }
          case DUPLICATE ->
              JsonDoc.duplicate(
                  body,
                  p,
                  variant % 3 == 0
                      ? JsonDoc.get(body, p)
                      : JsonDoc.raw(pickFrom(WRONG_TYPES, variant)));
          default -> throw new IllegalStateException(kind.name());
        };
    J at = JsonDoc.get(body, p);
    String was = at instanceof Lit l ? l.json() : at instanceof Arr ? "[...]" : "{...}";
    return new Applied(
        JsonDoc.json(edited),
        JSON,
        field,
        null,
        kind + " at " + field + " " + p + " (was " + abbreviate(was) + ")");
  }

  private static String pickFrom(String[] pool, int i) {
    return pool[Math.floorMod(i, pool.length)];
  }

  static String abbreviate(String s) {
    return s == null || s.length() <= 160
        ? s
        : s.substring(0, 160) + "...(" + s.length() + " chars)";
  }
}
