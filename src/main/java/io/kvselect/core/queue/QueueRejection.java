package io.kvselect.core.queue;

import java.util.Objects;

/**
 * Why a request was not parked, or why it left the queue without being served. Serialized by the
 * HTTP layer as the {@code details} of a 429 body: {@code policy_class}, {@code limit_kind},
 * {@code current}, {@code limit}.
 *
 * <ul>
 *   <li>{@link #REQUESTS}: {@code current} = requests already parked in the class, {@code limit}
 *       = the class's {@code request_queue_limit_per_worker x workers}; rejected when {@code
 *       current + 1 > limit}.
 *   <li>{@link #ISL_TOKENS}: {@code current} = pending ISL tokens of the whole queue, {@code
 *       limit} = the matched tier's {@code max_queue_depth x workers}; rejected when {@code current
 *       + islTokens > limit}.
 *   <li>{@link #TIMEOUT}: {@code current} = milliseconds waited, {@code limit} = the queue
 *       timeout in milliseconds (built by {@link #timeout}).
 * </ul>
 *
 * <p>Immutable.
 *
 * @param policyClass the resolved class name (the default class for a missing or unknown class)
 * @param limitKind one of {@link #REQUESTS}, {@link #ISL_TOKENS}, {@link #TIMEOUT}
 */
public record QueueRejection(String policyClass, String limitKind, long current, long limit) {

  /** Limit kind of the per-class request count limit. */
  public static final String REQUESTS = "requests";

  /** Limit kind of the ISL tier cap on pending ISL tokens. */
  public static final String ISL_TOKENS = "isl_tokens";

  /** Limit kind of a request that waited longer than the queue timeout. */
  public static final String TIMEOUT = "timeout";

  public QueueRejection {
    Objects.requireNonNull(policyClass, "policyClass");
    Objects.requireNonNull(limitKind, "limitKind");
  }

  /** A timeout rejection: {@code current} = waited milliseconds, {@code limit} = timeout ms. */
  public static QueueRejection timeout(String policyClass, long waitedMillis, long timeoutMillis) {
    return new QueueRejection(policyClass, TIMEOUT, waitedMillis, timeoutMillis);
  }
}
