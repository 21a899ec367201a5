package io.kvselect.core.load;

import java.util.List;

/**
 * The reservations one node owns, as it periodically tells its peers so their views of its load
 * converge after lost messages: one {@link LoadEvent.Booked} per live booking, carrying exactly
 * what re-booking it needs, with the prefill tokens still outstanding ({@code trackPrefill} false
 * and 0 tokens once its prefill completed). A peer applying the digest drops the bookings of this
 * origin that are absent from it, adds the missing ones and completes prefills it missed.
 *
 * <p>Immutable; the hash arrays inside the entries must not be modified.
 *
 * @param bookings every committed booking of the node, in no particular order
 */
public record LoadDigest(List<LoadEvent.Booked> bookings) {

  public LoadDigest {
    bookings = List.copyOf(bookings);
  }

  /** What applying a digest changed: bookings added, dropped, and prefills completed. */
  public record Outcome(int added, int dropped, int prefillsCompleted, int skipped) {

    public boolean changedAnything() {
      return added + dropped + prefillsCompleted > 0;
    }
  }
}
