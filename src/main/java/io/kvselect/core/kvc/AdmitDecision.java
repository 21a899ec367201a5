package io.kvselect.core.kvc;

/**
 * Algorithm 2's answer: admitted with a mode ({@code DIRECT}, {@code SEED} or {@code RESEED}), or
 * rejected with a reason (mode null).
 */
public record AdmitDecision(boolean admitted, KvcMode mode, String reason) {

  /** The resident session's append is above {@code tau_append}. */
  public static final String LARGE_APPEND = "real-large-append";

  /** The resident session's request would pass {@code rho * K_d}. */
  public static final String NO_CAPACITY = "no-d-capacity";

  /** The non-resident session's request would pass {@code rho * K_d}. */
  public static final String NOT_RESIDENT_NO_CAPACITY = "session-not-resident-no-capacity";

  /** The worker's admission endpoint did not answer in time. */
  public static final String TIMEOUT = "admission-timeout";

  /** The worker's admission endpoint failed or answered something unreadable. */
  public static final String RPC_ERROR = "admission-error";

  public AdmitDecision {
    if (admitted == (mode == null) || mode == KvcMode.FALLBACK) {
      throw new IllegalArgumentException(
          "an admission has a direct, seed or reseed mode; a reject has none");
    }
  }

  public static AdmitDecision admit(KvcMode mode) {
    return new AdmitDecision(true, mode, null);
  }

  public static AdmitDecision reject(String reason) {
    return new AdmitDecision(false, null, reason);
  }
}
