package io.kvselect.core.catalog;

import io.kvselect.core.error.SelectionException;
import java.net.URI;

/**
 * A worker's role in prefill/decode disaggregation, as the KVC-Router reads it. Immutable.
 *
 * <p>Invariants: {@code workerType} is null, {@code prefill} or {@code decode};
 * {@code kvCapacityTokens} is null or positive; {@code admissionEndpoint} is null or an absolute
 * {@code http}/{@code https} URL. A violation is a 422 naming the field.
 *
 * @param workerType {@code worker_type} (null: read {@code router_hint_worker_type})
 * @param kvCapacityTokens {@code kv_capacity_tokens}, the decode KV capacity K_d (null: derived)
 * @param admissionEndpoint {@code admission_endpoint}, the worker's Admit RPC (null: the built-in model)
 */
public record DisaggSpec(String workerType, Long kvCapacityTokens, String admissionEndpoint) {

  public static final DisaggSpec NONE = new DisaggSpec(null, null, null);

  public DisaggSpec {
    if (workerType != null && !workerType.equals("prefill") && !workerType.equals("decode")) {
      throw SelectionException.unprocessable(
          "worker_type must be one of prefill, decode, got " + workerType);
    }
    if (kvCapacityTokens != null && kvCapacityTokens <= 0) {
      throw SelectionException.unprocessable(
          "kv_capacity_tokens must be positive, got " + kvCapacityTokens);
    }
    if (admissionEndpoint != null) {
      URI u;
      try {
        u = URI.create(admissionEndpoint);
      } catch (IllegalArgumentException e) {
        throw SelectionException.unprocessable(
            "admission_endpoint is not a URL: " + admissionEndpoint);
      }
      if (!("http".equals(u.getScheme()) || "https".equals(u.getScheme())) || u.getHost() == null) {
        throw SelectionException.unprocessable(
            "admission_endpoint must be an absolute http(s) URL, got " + admissionEndpoint);
      }
    }
  }

  public boolean isEmpty() {
    return workerType == null && kvCapacityTokens == null && admissionEndpoint == null;
  }
}
