package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.service.SelectRequest;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/**
 * Decoding {@code token_ids} in place from a body range (the request buffer's bytes, with other
 * bytes around it) gives what Jackson reads from the same text: the same integers when every
 * element is an unsigned 32-bit integer, else a 4xx naming the field; a body Jackson cannot parse
 * is a 400, naming {@code token_ids} when the break is inside the array. The fast path and the
 * general parser agree on every body.
 */
class TokenDecodePropertyTest {

  private static final ObjectMapper JACKSON = new ObjectMapper();
  private static final BigInteger U32_MAX = BigInteger.valueOf(0xFFFF_FFFFL);

  /** A body, where its token array starts and ends in it, and whether it was broken inside the array. */
  record Body(String text, boolean brokenInArray) {}

  @Provide
  Arbitrary<String> element() {
    Arbitrary<String> small = Arbitraries.integers().between(0, 50_000).map(String::valueOf);
    Arbitrary<String> u32 = Arbitraries.longs().between(0, 0xFFFF_FFFFL).map(String::valueOf);
    Arbitrary<String> eightish =
        Arbitraries.longs().between(1_000_000, 99_999_999).map(String::valueOf);
    Arbitrary<String> huge =
        Arbitraries.oneOf(
            Arbitraries.longs().between(0x1_0000_0000L, Long.MAX_VALUE).map(String::valueOf),
            Arbitraries.strings().numeric().ofMinLength(19).ofMaxLength(30).map(s -> "9" + s));
    Arbitrary<String> negative = Arbitraries.integers().between(0, 50_000).map(v -> "-" + v);
    Arbitrary<String> fraction =
        Combinators.combine(
                Arbitraries.integers().between(0, 999), Arbitraries.integers().between(0, 99))
            .as((a, b) -> a + "." + b);
    Arbitrary<String> exponent =
        Combinators.combine(
                Arbitraries.integers().between(0, 99),
                Arbitraries.of("e", "E", "e+", "E-"),
                Arbitraries.integers().between(0, 9))
            .as((a, e, b) -> a + e + b);
    Arbitrary<String> leadingZero = Arbitraries.integers().between(0, 999).map(v -> "0" + v);
    Arbitrary<String> other = Arbitraries.of("true", "null", "\"7\"", "{}", "-0");
    return Arbitraries.frequencyOf(
        net.jqwik.api.Tuple.of(40, small),
        net.jqwik.api.Tuple.of(8, u32),
        net.jqwik.api.Tuple.of(4, eightish),
        net.jqwik.api.Tuple.of(1, huge),
        net.jqwik.api.Tuple.of(1, negative),
        net.jqwik.api.Tuple.of(1, fraction),
        net.jqwik.api.Tuple.of(1, exponent),
        net.jqwik.api.Tuple.of(1, leadingZero),
        net.jqwik.api.Tuple.of(1, other));
  }

  @Provide
  Arbitrary<String> ws() {
    return Arbitraries.of("", "", "", " ", "\n", "\t", "\r\n  ");
  }

  @Provide
  Arbitrary<Body> body() {
    Arbitrary<List<String>> elems =
        Arbitraries.frequencyOf(
            net.jqwik.api.Tuple.of(6, element().list().ofMaxSize(40)),
            net.jqwik.api.Tuple.of(
                1,
                Arbitraries.integers()
                    .between(0, 50_000)
                    .map(String::valueOf)
                    .list()
                    .ofMinSize(1)
                    .ofMaxSize(3000)));
    Arbitrary<List<String>> spaces = ws().list().ofSize(8);
    Arbitrary<Integer> breakMode =
        Arbitraries.frequency(
            net.jqwik.api.Tuple.of(6, 0),
            net.jqwik.api.Tuple.of(1, 1),
            net.jqwik.api.Tuple.of(1, 2),
            net.jqwik.api.Tuple.of(1, 3));
    return Combinators.combine(
            elems, spaces, breakMode, Arbitraries.integers().between(0, 1_000_000))
        .as(
            (els, w, mode, cut) -> {
              StringBuilder arr = new StringBuilder("[").append(w.get(0));
              for (int i = 0; i < els.size(); i++) {
                arr.append(i == 0 ? "" : w.get(1 + i % 3) + "," + w.get(2 + i % 3))
                    .append(els.get(i));
              }
              arr.append(w.get(5)).append("]");
              String head = "{\"model_name\":\"m\"," + w.get(6) + "\"token_ids\"" + w.get(7) + ":";
              String tail = ",\"session_id\":\"s\"}";
              String array = arr.toString();
              boolean broken = true;
              switch (mode) {
                case 1 ->
                    array =
                        array.substring(
                            0, 1 + cut % Math.max(1, array.length() - 1)); // truncated inside
                case 2 -> {
                  int comma = array.indexOf(',');
                  if (comma < 0) {
                    array = array.substring(0, array.length() - 1) + "}";
                  } else {
                    array = array.substring(0, comma) + " " + array.substring(comma + 1); // "1 2"
                  }
                }
                case 3 -> array = array.substring(0, array.length() - 1) + ",]"; // trailing comma
                default -> broken = false;
              }
              return new Body(head + array + (mode == 1 ? "" : tail), broken);
            });
  }

  /** The outcome of parsing {@code body} placed at {@code offset} of a larger array of {@code filler} bytes. */
  private static String outcome(String body, int offset, byte filler, boolean scan) {
    byte[] text = body.getBytes(StandardCharsets.UTF_8);
    byte[] big = new byte[offset + text.length + 11];
    java.util.Arrays.fill(big, filler);
    System.arraycopy(text, 0, big, offset, text.length);
    try {
      SelectRequest r = RequestParsers.select(new BodyBytes(big, offset, text.length), scan);
      int[] t = r.prompt().tokenIds();
      return "ok " + java.util.Arrays.toString(t) + " " + r.sessionId() + " " + r.partition();
    } catch (SelectionException e) {
      return "error " + e.code() + " " + e.getMessage();
    }
  }

  /** What Jackson makes of the same text: the expected outcome's prefix. */
  private static String expected(String body) {
    JsonNode root;
    try {
      root = JACKSON.readTree(body);
    } catch (Exception e) {
      return "error " + ErrorCode.SYNTAX;
    }
    JsonNode arr = root.get("token_ids");
    List<Integer> out = new ArrayList<>();
    for (int i = 0; i < arr.size(); i++) {
      JsonNode e = arr.get(i);
      if (!e.isIntegralNumber()
          || e.bigIntegerValue().signum() < 0
          || e.bigIntegerValue().compareTo(U32_MAX) > 0) {
        return "error " + ErrorCode.UNPROCESSABLE + " token_ids[" + i + "]";
      }
      out.add((int) e.longValue());
    }
    return "ok " + out + " s " + "m/";
  }

  @Property(tries = 400)
  void decodesInPlaceAsJacksonReadsIt(
      @ForAll("body") Body b,
      @ForAll @IntRange(min = 0, max = 9) int offset,
      @ForAll("filler") byte filler) {
    String fast = outcome(b.text(), offset, filler, true);
    String general = outcome(b.text(), offset, filler, false);
    assertEquals(general, fast, b.text());
    String want = expected(b.text());
    if (want.startsWith("ok ")) {
      assertTrue(
          fast.startsWith(want.substring(0, want.length() - 3)), "want " + want + "\ngot " + fast);
    } else {
      String[] parts = want.split(" ");
      if (parts.length > 2) {
        assertTrue(fast.startsWith("error " + parts[1]), "want " + want + "\ngot " + fast);
        assertTrue(
            fast.contains("`" + parts[2] + "`"),
            "names the element: want " + want + "\ngot " + fast);
      } else {
        // unparseable: a 400, or the 422 of a bad element the streaming decoder meets before the
        // break
        assertTrue(
            fast.startsWith("error " + ErrorCode.SYNTAX)
                || fast.startsWith("error " + ErrorCode.UNPROCESSABLE),
            "want a 4xx\ngot " + fast);
      }
      if (b.brokenInArray()) {
        assertTrue(
            fast.contains("`token_ids["), "a break inside the array names token_ids: " + fast);
      }
    }
  }

  @Provide
  Arbitrary<Byte> filler() {
    return Arbitraries.of((byte) '7', (byte) ']', (byte) '"', (byte) ',', (byte) ' ', (byte) 0);
  }

  @Example
  void arraysLongerThanTheRetainedScratchDecodeAndLeaveNothingBehind() {
    int n = TokenArrayScanner.RETAINED + 5000;
    StringBuilder sb = new StringBuilder("{\"token_ids\":[");
    int[] want = new int[n];
    for (int i = 0; i < n; i++) {
      want[i] = (int) ((i * 2654435761L) & 0xFFFF_FFFFL);
      sb.append(i == 0 ? "" : ",").append(Integer.toUnsignedString(want[i]));
    }
    TokenArrayScanner.Found big =
        TokenArrayScanner.find(sb.append("]}").toString().getBytes(StandardCharsets.UTF_8));
    assertNotNull(big);
    assertArrayEquals(want, big.values());
    TokenArrayScanner.Found small =
        TokenArrayScanner.find("{\"token_ids\":[3,1,2]}".getBytes(StandardCharsets.UTF_8));
    assertArrayEquals(new int[] {3, 1, 2}, small.values());
  }

  @Example
  void swarDigitRunsAndValuesMatchTheByteLoop() {
    String[] words = {
      "1,2,3,4,", "12345,6,", "1234567]", "0]      ", "42949672", "9,      ", "50000\n, "
    };
    for (String w : words) {
      long x = 0;
      byte[] b = w.getBytes(StandardCharsets.US_ASCII);
      for (int i = 7; i >= 0; i--) {
        x = (x << 8) | (b[i] & 0xFF);
      }
      int run = 0;
      while (run < 8 && Character.isDigit(w.charAt(run))) {
        run++;
      }
      assertEquals(run, TokenArrayScanner.digitRun(x), w);
      if (run > 0 && run < 8) {
        assertEquals(Long.parseLong(w.substring(0, run)), TokenArrayScanner.digitsValue(x, run), w);
      }
    }
  }
}
