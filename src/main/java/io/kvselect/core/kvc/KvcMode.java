package io.kvselect.core.kvc;

import java.util.Locale;

/**
 * How a KVC-Router dispatch serves a request: {@code DIRECT} (the decode worker append-prefills on
 * the session's resident KV), {@code SEED} (turn 0: a prefill worker prefills, the KV moves to the
 * decode worker), {@code RESEED} (a later turn whose KV is not resident there: as seed), or
 * {@code FALLBACK} (every probe was rejected: round-robin prefill and decode workers).
 */
public enum KvcMode {
  DIRECT,
  SEED,
  RESEED,
  FALLBACK;

  /** The lower-case wire name ({@code direct}, ...). */
  public String wire() {
    return name().toLowerCase(Locale.ROOT);
  }
}
