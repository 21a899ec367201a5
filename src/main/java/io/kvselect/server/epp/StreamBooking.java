package io.kvselect.server.epp;

/**
 * The booking of one proxied request following its stream: the first response body chunk is the
 * end of prefill, and whatever ends the exchange first (the response's end of stream, its
 * trailers, an error status, the stream closed or reset by the gateway) frees it. Each step
 * reaches the {@link Lifecycle} at most once, prefill never after the free, and a booking made
 * after the stream already ended (a pick still in flight when the client went away) is freed as
 * soon as it is known, so no booking outlives its stream.
 *
 * <p>Not thread-safe: owned by the stream's context, which delivers every event in order.
 */
public final class StreamBooking {

  /** Where the steps of a booking go (the selection service's {@code prefillComplete} and {@code free}). */
  public interface Lifecycle {
    void prefillComplete(String selectionId);

    void free(String selectionId);
  }

  /** The states of a booking, in the order a stream moves through them. */
  public enum State {
    /** No booking yet (the pick is pending or failed). */
    UNBOOKED,
    /** Booked; no response body seen. */
    BOOKED,
    /** The first response body chunk arrived. */
    PREFILLED,
    /** Freed, or the stream ended before anything was booked. */
    ENDED
  }

  private final Lifecycle lifecycle;
  private State state = State.UNBOOKED;
  private String selectionId;

  public StreamBooking(Lifecycle lifecycle) {
    this.lifecycle = lifecycle;
  }

  public State state() {
    return state;
  }

  /** The booking's selection id, or null before it is booked. */
  public String selectionId() {
    return selectionId;
  }

  /** The pick booked {@code id}; freed at once when the stream already ended. */
  public void booked(String id) {
    if (selectionId != null) {
      throw new IllegalStateException("stream already booked " + selectionId);
    }
    selectionId = id;
    if (state == State.ENDED) {
      lifecycle.free(id);
    } else {
      state = State.BOOKED;
    }
  }

  /**
   * The booking moved to {@code newId} (the endpoint that served differs from the pick: a gateway
   * retry). The old booking is freed here and a prefill already seen is repeated on the new one;
   * when the stream ended meanwhile, the new booking is freed at once.
   */
  public void moved(String newId) {
    if (state == State.ENDED || state == State.UNBOOKED) {
      lifecycle.free(newId);
      return;
    }
    String old = selectionId;
    selectionId = newId;
    lifecycle.free(old);
    if (state == State.PREFILLED) {
      lifecycle.prefillComplete(newId);
    }
  }

  /** The upstream's response status: an error status ends the booking. */
  public void responseStatus(int status) {
    if (status >= 400) {
      end();
    }
  }

  /** A response body chunk; the first one ends prefill, one with end of stream ends the booking. */
  public void responseBody(boolean endOfStream) {
    if (state == State.BOOKED) {
      state = State.PREFILLED;
      lifecycle.prefillComplete(selectionId);
    }
    if (endOfStream) {
      end();
    }
  }

  /** Response trailers, the stream closed, reset or failed: the booking ends (once). */
  public void end() {
    State was = state;
    state = State.ENDED;
    if (was == State.BOOKED || was == State.PREFILLED) {
      lifecycle.free(selectionId);
    }
  }
}
