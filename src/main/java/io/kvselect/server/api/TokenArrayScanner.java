package io.kvselect.server.api;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The hot path of prompt decoding: finds the top-level {@code "token_ids": [...]} of a JSON
 * object body in one byte scan and decodes it straight into an {@code int[]}, several times faster
 * than tokenizing each number with a general JSON parser. It only handles the plain case (a
 * single top-level key, an array of non-negative integers up to 2^32-1 separated by commas and
 * whitespace); anything else returns null and the caller decodes the body the general way, so
 * every error message and every edge case stays the general parser's.
 *
 * <p>The body is scanned in place ({@link BodyBytes}, typically the request's own buffer). Numbers
 * are read eight bytes at a time where eight bytes remain: the digit run is found and converted
 * with SWAR arithmetic on one little-endian {@code long}; a longer run and the last bytes of the
 * body take the byte loop.
 *
 * <p>Thread-safe. O(body length). Each thread keeps one scratch {@code int[]} that the decoded
 * values are gathered in (at most {@link #RETAINED} ints are kept between calls); the result is a
 * copy of exactly the decoded length, owned by the caller.
 */
final class TokenArrayScanner {

  /** The decoded array and its value span {@code [start, end)}, as indexes of the body's array. */
  record Found(int[] values, int start, int end) {

    /** The body with the array value replaced by {@code []}, for the general parser (a small copy). */
    byte[] withoutArray(BodyBytes body) {
      int head = start - body.offset();
      int tail = body.end() - end;
      byte[] out = new byte[head + 2 + tail];
      System.arraycopy(body.array(), body.offset(), out, 0, head);
      out[head] = '[';
      out[head + 1] = ']';
      System.arraycopy(body.array(), end, out, head + 2, tail);
      return out;
    }
  }

  /** Largest scratch array a thread keeps between calls (256 KB). */
  static final int RETAINED = 65_536;

  private static final byte[] KEY = "token_ids".getBytes(StandardCharsets.US_ASCII);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  private static final ThreadLocal<int[]> SCRATCH = ThreadLocal.withInitial(() -> new int[8192]);

  private TokenArrayScanner() {}

  static Found find(byte[] body) {
    return find(BodyBytes.of(body));
  }

  /** The top-level {@code token_ids} array of {@code body}, or null when the fast path does not apply. */
  static Found find(BodyBytes body) {
    byte[] b = body.array();
    int n = body.end();
    int i = skipWs(b, body.offset(), n);
    if (i >= n || b[i] != '{') {
      return null;
    }
    int depth = 0;
    Found found = null;
    while (i < n) {
      byte c = b[i];
      if (c == '"') {
        int close = stringEnd(b, i + 1, n);
        if (close < 0) {
          return null;
        }
        if (depth == 1 && isKey(b, i + 1, close)) {
          int colon = skipWs(b, close + 1, n);
          if (colon < n && b[colon] == ':') {
            if (found != null) {
              return null;
            }
            int open = skipWs(b, colon + 1, n);
            if (open >= n || b[open] != '[') {
              return null;
            }
            found = decode(b, open, n);
            if (found == null) {
              return null;
            }
            i = found.end();
            continue;
          }
        }
        i = close + 1;
        continue;
      }
      if (c == '{' || c == '[') {
        depth++;
      } else if (c == '}' || c == ']') {
        depth--;
      }
      i++;
    }
    return found;
  }

  private static boolean isKey(byte[] b, int from, int close) {
    return close - from == KEY.length && Arrays.equals(b, from, close, KEY, 0, KEY.length);
  }

  /** Index of the closing quote of a string starting at {@code from}, or -1. */
  private static int stringEnd(byte[] b, int from, int n) {
    for (int i = from; i < n; i++) {
      byte c = b[i];
      if (c == '\\') {
        i++;
      } else if (c == '"') {
        return i;
      }
    }
    return -1;
  }

  private static int skipWs(byte[] b, int i, int n) {
    while (i < n && isWs(b[i])) {
      i++;
    }
    return i;
  }

  private static boolean isWs(byte c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }

  /**
   * Number of leading ASCII digits of the eight bytes of {@code x} (first byte lowest), 8 when all
   * are. A byte is a digit when its high nibble is 3 and stays 3 after adding 6; the carry of the
   * addition only reaches bytes after the first non-digit, which do not count.
   */
  static int digitRun(long x) {
    long high = (x & 0xF0F0F0F0F0F0F0F0L) ^ 0x3030303030303030L;
    long plus6 = ((x + 0x0606060606060606L) & 0xF0F0F0F0F0F0F0F0L) ^ 0x3030303030303030L;
    long m = high | plus6;
    long nonDigit = (((m & 0x7F7F7F7F7F7F7F7FL) + 0x7F7F7F7F7F7F7F7FL) | m) & 0x8080808080808080L;
    return Long.numberOfTrailingZeros(nonDigit) >>> 3;
  }

  /** The value of the first {@code digits} (1 to 7) ASCII digits of {@code x} (first byte lowest). */
  static long digitsValue(long x, int digits) {
    long v = (x << (64 - 8 * digits)) & 0x0F0F0F0F0F0F0F0FL;
    v = (v * 2561) >>> 8;
    v = ((v & 0x00FF00FF00FF00FFL) * 6553601) >>> 16;
    return ((v & 0x0000FFFF0000FFFFL) * 42949672960001L) >>> 32;
  }

  /**
   * Decodes {@code [d, d, ...]} starting at the '[' at {@code open}; null if not that plain shape.
   * The loop is shaped for the common body (no whitespace, short numbers): one number per SWAR
   * step with the range check once per number, whitespace handled off the fast path.
   */
  private static Found decode(byte[] b, int open, int n) {
    int[] out = SCRATCH.get();
    int count = 0;
    int i = skipWs(b, open + 1, n);
    if (i < n && b[i] == ']') {
      return new Found(new int[0], open, i + 1);
    }
    while (true) {
      int start = i;
      long v;
      int digits;
      long word;
      if (i + 8 <= n && (digits = digitRun(word = (long) LONG_LE.get(b, i))) < 8) {
        if (digits == 0) {
          return null;
        }
        v = digitsValue(word, digits);
        i += digits;
      } else {
        v = 0;
        int d;
        while (i < n && (d = b[i] - '0') >= 0 && d <= 9) {
          v = v * 10 + d;
          i++;
        }
        digits = i - start;
      }
      if (digits == 0 || digits > 10 || v > 0xFFFF_FFFFL || (digits > 1 && b[start] == '0')) {
        return null;
      }
      if (count == out.length) {
        if (count == JsonReader.MAX_ARRAY) {
          return null;
        }
        out = Arrays.copyOf(out, Math.min(JsonReader.MAX_ARRAY, count * 2));
        if (out.length <= RETAINED) {
          SCRATCH.set(out);
        }
      }
      out[count++] = (int) v;
      if (i < n && isWs(b[i])) {
        i = skipWs(b, i, n);
      }
      if (i >= n) {
        return null;
      }
      byte c = b[i++];
      if (c == ']') {
        return new Found(Arrays.copyOf(out, count), open, i);
      }
      if (c != ',') {
        return null;
      }
      if (i < n && isWs(b[i])) {
        i = skipWs(b, i, n);
      }
    }
  }
}
