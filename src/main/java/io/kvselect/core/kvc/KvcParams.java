package io.kvselect.core.kvc;

import java.util.Objects;

/**
 * The KVC-Router's parameters. Immutable.
 *
 * <p>Invariants: {@code alpha >= 0}; {@code tauReject >= 1}; {@code tauAppend >= 0};
 * {@code 0 < rho <= 1}; {@code epsilon} is null (meaning {@code |D| - 1}) or {@code >= 0}.
 *
 * @param alpha sticky bonus added to the overlap of the pinned decode worker
 * @param tauReject rejects of a session by a worker after which the worker is blacklisted for it
 * @param tauAppend largest append (tokens) a Direct admission accepts
 * @param rho high-water mark: a worker admits up to {@code rho * K_d} tokens
 * @param epsilon most admission probes per dispatch, null for {@code |D| - 1} (at least 1, so that a
 *     partition with a single decode worker still asks it)
 * @param accounting how the capacity test counts the session's own KV
 * @param resetScope what reset-on-success clears
 * @param countWaiting refinement (not in the original): a session resident on the worker is
 *     admitted Direct whenever its input fits the worker at all ({@code input <= K_d}; the worker
 *     queues it), since any other path needs more decode memory plus a prefill; a non-resident
 *     session is admitted when the KV promised to requests dispatched to the worker and not
 *     finished (waiting or running, prompt plus output) plus its input stays within
 *     {@code rho * K_d}: idle session caches are evictable, KV already waiting on the worker is
 *     not (the accounting choice does not apply then); Route breaks a score tie after
 *     {@code sticky} by the least accounted KV, and Fallback sends to the decode worker with the
 *     least accounted KV instead of the round-robin one and pins the session there (resetting
 *     that worker's reject counter), since the session's KV will live there
 */
public record KvcParams(
    double alpha,
    int tauReject,
    long tauAppend,
    double rho,
    Integer epsilon,
    AdmitAccounting accounting,
    ResetScope resetScope,
    boolean countWaiting) {

  public KvcParams {
    Objects.requireNonNull(accounting, "accounting");
    Objects.requireNonNull(resetScope, "resetScope");
    if (!(alpha >= 0) || Double.isInfinite(alpha)) {
      throw new IllegalArgumentException("kvc alpha must be a finite number >= 0, got " + alpha);
    }
    if (tauReject < 1) {
      throw new IllegalArgumentException("kvc tau_reject must be >= 1, got " + tauReject);
    }
    if (tauAppend < 0) {
      throw new IllegalArgumentException("kvc tau_append must be >= 0, got " + tauAppend);
    }
    if (!(rho > 0 && rho <= 1)) {
      throw new IllegalArgumentException("kvc rho must be in (0, 1], got " + rho);
    }
    if (epsilon != null && epsilon < 0) {
      throw new IllegalArgumentException("kvc epsilon must be >= 0, got " + epsilon);
    }
  }

  /** The original's defaults: alpha 1, tau_reject 3, tau_append 8192, rho 0.95, epsilon |D|-1, literal, winner. */
  public static KvcParams defaults() {
    return new KvcParams(
        1.0, 3, 8192, 0.95, null, AdmitAccounting.LITERAL, ResetScope.WINNER, false);
  }

  /** The probe budget for {@code decodeWorkers} decode workers: epsilon, else max(1, |D| - 1). */
  public int epsilonFor(int decodeWorkers) {
    return epsilon != null ? epsilon : Math.max(1, decodeWorkers - 1);
  }

  public KvcParams withAccounting(AdmitAccounting a) {
    return new KvcParams(alpha, tauReject, tauAppend, rho, epsilon, a, resetScope, countWaiting);
  }

  public KvcParams withResetScope(ResetScope s) {
    return new KvcParams(alpha, tauReject, tauAppend, rho, epsilon, accounting, s, countWaiting);
  }

  public KvcParams withCountWaiting(boolean w) {
    return new KvcParams(alpha, tauReject, tauAppend, rho, epsilon, accounting, resetScope, w);
  }

  public KvcParams withAlpha(double a) {
    return new KvcParams(
        a, tauReject, tauAppend, rho, epsilon, accounting, resetScope, countWaiting);
  }

  public KvcParams withTauReject(int t) {
    return new KvcParams(alpha, t, tauAppend, rho, epsilon, accounting, resetScope, countWaiting);
  }

  public KvcParams withTauAppend(long t) {
    return new KvcParams(alpha, tauReject, t, rho, epsilon, accounting, resetScope, countWaiting);
  }

  public KvcParams withRho(double r) {
    return new KvcParams(
        alpha, tauReject, tauAppend, r, epsilon, accounting, resetScope, countWaiting);
  }

  public KvcParams withEpsilon(Integer e) {
    return new KvcParams(alpha, tauReject, tauAppend, rho, e, accounting, resetScope, countWaiting);
  }
}
