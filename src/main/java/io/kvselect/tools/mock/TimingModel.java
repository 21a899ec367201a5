package io.kvselect.tools.mock;

/**
 * The mock engine's latency model: prefill costs {@code prefillUsPerToken} per uncached prompt
 * token, decode {@code decodeUsPerToken} per output token; real waits are the modelled times
 * divided by {@code speedup}. Immutable.
 */
public record TimingModel(double prefillUsPerToken, double decodeUsPerToken, double speedup) {

  public TimingModel {
    if (!(prefillUsPerToken >= 0) || !(decodeUsPerToken >= 0)) {
      throw new IllegalArgumentException("per-token times must be >= 0");
    }
    if (!(speedup > 0) || Double.isInfinite(speedup)) {
      throw new IllegalArgumentException("speedup must be a positive number: " + speedup);
    }
  }

  /** Modelled prefill time of {@code uncachedTokens}, in milliseconds. */
  public double prefillMs(int uncachedTokens) {
    return uncachedTokens * prefillUsPerToken / 1000.0;
  }

  /** Modelled decode time of {@code outputTokens}, in milliseconds. */
  public double decodeMs(int outputTokens) {
    return outputTokens * decodeUsPerToken / 1000.0;
  }

  /** Wall-clock wait for a modelled duration, in whole milliseconds (0 = no wait). */
  public long waitMs(double modelMs) {
    return Math.round(modelMs / speedup);
  }
}
