package io.kvselect.core.kvc;

import java.util.Locale;

/**
 * How Algorithm 2's capacity test counts the request's own session. {@code LITERAL}: the sum of
 * resident tokens of every session on the worker, this one included, plus the whole input (so a
 * resident session stays Direct only while its prefix is below about half of {@code rho * K_d}).
 * {@code NET}: the session's own resident KV is counted once (the other sessions' tokens plus the
 * input).
 */
public enum AdmitAccounting {
  LITERAL,
  NET;

  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Parses {@code literal} or {@code net} (case-insensitive). */
  public static AdmitAccounting parse(String s) {
    return valueOf(s.trim().toUpperCase(Locale.ROOT));
  }
}
