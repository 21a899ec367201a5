package io.kvselect.core.queue;

import java.util.Locale;

/** The order within one class queue; see {@link RouterQueue} for the exact keys. */
enum QueuePolicy {
  FCFS,
  LCFS,
  WSPT;

  /** The policy named {@code name} ({@code fcfs}, {@code lcfs}, {@code wspt}, any case). */
  static QueuePolicy of(String name) {
    if (name != null) {
      switch (name.toLowerCase(Locale.ROOT)) {
        case "fcfs":
          return FCFS;
        case "lcfs":
          return LCFS;
        case "wspt":
          return WSPT;
        default:
          break;
      }
    }
    throw new IllegalArgumentException("queue policy must be one of fcfs, lcfs, wspt: " + name);
  }
}
