package io.kvselect.server.api;

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
 * <p>Stateless and thread-safe. O(body length).
 */
final class TokenArrayScanner {

  /** The decoded array and its value span {@code [start, end)} in the body. */
  record Found(int[] values, int start, int end) {

    /** The body with the array value replaced by {@code []}, for the general parser. */
    byte[] withoutArray(byte[] body) {
      byte[] out = new byte[body.length - (end - start) + 2];
      System.arraycopy(body, 0, out, 0, start);
      out[start] = '[';
      out[start + 1] = ']';
      System.arraycopy(body, end, out, start + 2, body.length - end);
      return out;
    }
  }

  private static final byte[] KEY = "token_ids".getBytes(StandardCharsets.US_ASCII);

  private TokenArrayScanner() {}

  /** The top-level {@code token_ids} array of {@code body}, or null when the fast path does not apply. */
  static Found find(byte[] body) {
    int n = body.length;
    int i = skipWs(body, 0);
    if (i >= n || body[i] != '{') {
      return null;
    }
    int depth = 0;
    Found found = null;
    while (i < n) {
      byte c = body[i];
      if (c == '"') {
        int close = stringEnd(body, i + 1);
        if (close < 0) {
          return null;
        }
        if (depth == 1 && isKey(body, i + 1, close)) {
          int colon = skipWs(body, close + 1);
          if (colon < n && body[colon] == ':') {
            if (found != null) {
              return null;
            }
            int open = skipWs(body, colon + 1);
            if (open >= n || body[open] != '[') {
              return null;
            }
            found = decode(body, open);
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
  private static int stringEnd(byte[] b, int from) {
    for (int i = from; i < b.length; i++) {
      byte c = b[i];
      if (c == '\\') {
        i++;
      } else if (c == '"') {
        return i;
      }
    }
    return -1;
  }

  private static int skipWs(byte[] b, int i) {
    while (i < b.length && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t')) {
      i++;
    }
    return i;
  }

  private static boolean isWs(byte c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t';
  }

  /**
   * Decodes {@code [d, d, ...]} starting at the '[' at {@code open}; null if not that plain shape.
   * The loop is shaped for the common body (no whitespace, short numbers): one digit loop with
   * the range check once per number, whitespace handled off the fast path.
   */
  private static Found decode(byte[] b, int open) {
    int n = b.length;
    int[] out = new int[1024];
    int count = 0;
    int i = skipWs(b, open + 1);
    if (i < n && b[i] == ']') {
      return new Found(new int[0], open, i + 1);
    }
    while (true) {
      int start = i;
      long v = 0;
      int d;
      while (i < n && (d = b[i] - '0') >= 0 && d <= 9) {
        v = v * 10 + d;
        i++;
      }
      int digits = i - start;
      if (digits == 0 || digits > 10 || v > 0xFFFF_FFFFL || (digits > 1 && b[start] == '0')) {
        return null;
      }
      if (count == out.length) {
        if (count == JsonReader.MAX_ARRAY) {
          return null;
        }
        out = Arrays.copyOf(out, Math.min(JsonReader.MAX_ARRAY, count * 2));
      }
      out[count++] = (int) v;
      if (i < n && isWs(b[i])) {
        i = skipWs(b, i);
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
        i = skipWs(b, i);
      }
    }
  }
}
