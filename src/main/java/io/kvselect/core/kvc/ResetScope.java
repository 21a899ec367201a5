package io.kvselect.core.kvc;

import java.util.Locale;

/**
 * What reset-on-success clears when a decode worker admits a session: {@code WINNER} the admitting
 * worker's reject counter (Algorithm 3, line 8), {@code ALL} every worker's counter for the session
 * (the prose of section 3.4). {@code NONE} is the original's unstable v1 (no reset), kept only to
 * reproduce its thrashing; it is not a server choice.
 */
public enum ResetScope {
  WINNER,
  ALL,
  NONE;

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses {@code winner}, {@code all} or {@code none} (case-insensitive). */
  public static ResetScope parse(String s) {
    return valueOf(s.trim().toUpperCase(Locale.ROOT));
  }
}
