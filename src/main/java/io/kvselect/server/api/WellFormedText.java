package io.kvselect.server.api;

/**
 * Lone UTF-16 surrogates in text kvselect writes or reads: the JSON cursor refuses a request
 * string holding one, and an error message that quotes request text has them replaced before the
 * envelope is written. Stateless; written here because the JDK has no such check for a
 * {@code String}.
 */
final class WellFormedText {

  private WellFormedText() {}

  /**
   * {@code s} with every lone surrogate replaced by U+FFFD: a message may quote request text that
   * the JSON parser did not vet (its own syntax errors do), and the envelope must still be written.
   */
  static String of(String s) {
    StringBuilder out = null;
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)
          && i + 1 < s.length()
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        i++;
      } else if (Character.isSurrogate(c)) {
        if (out == null) {
          out = new StringBuilder(s);
        }
        out.setCharAt(i, '\uFFFD');
      }
    }
    return out == null ? s : out.toString();
  }

  /** Whether every surrogate in {@code s} is half of a pair. */
  static boolean isWellFormed(String s) {
    return of(s) == s;
  }
}
