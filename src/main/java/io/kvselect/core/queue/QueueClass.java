package io.kvselect.core.queue;

import java.util.Objects;

/**
 * One policy class of {@code DYN_ROUTER_POLICY_CONFIG}: its own queue inside a {@link
 * RouterQueue}, served by deficit round robin. Immutable.
 *
 * @param name class name, matched exactly against the trimmed {@code x-dynamo-meta-policy-class}
 *     header
 * @param quantum requests the class may be served per round-robin turn, {@code >= 1}
 * @param queuePolicy {@code fcfs}, {@code lcfs} or {@code wspt} (see {@link RouterQueue})
 * @param prefillBusyThreshold the class's busy threshold (a rank is busy for this class when its
 *     active prefill tokens exceed {@code threshold x max_num_batched_tokens}); {@code null} = the
 *     router's {@code router_queue_threshold}. Not used by the queue itself: the admission
 *     predicate applies it.
 * @param requestQueueLimitPerWorker parked requests allowed per schedulable worker; {@code null}
 *     = unbounded, {@code 0} = never park (every request that would wait is rejected)
 */
public record QueueClass(
    String name,
    long quantum,
    String queuePolicy,
    Double prefillBusyThreshold,
    Integer requestQueueLimitPerWorker) {

  public QueueClass {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("class name must not be blank");
    }
    if (quantum < 1) {
      throw new IllegalArgumentException("quantum must be >= 1: " + quantum);
    }
    QueuePolicy.of(queuePolicy);
    if (prefillBusyThreshold != null
        && (prefillBusyThreshold.isNaN()
            || prefillBusyThreshold.isInfinite()
            || prefillBusyThreshold < 0)) {
      throw new IllegalArgumentException(
          "prefillBusyThreshold must be a finite number >= 0: " + prefillBusyThreshold);
    }
    if (requestQueueLimitPerWorker != null && requestQueueLimitPerWorker < 0) {
      throw new IllegalArgumentException(
          "requestQueueLimitPerWorker must be >= 0: " + requestQueueLimitPerWorker);
    }
  }

  /** A class with quantum 1, no own threshold and no request limit. */
  public static QueueClass unbounded(String name, String queuePolicy) {
    return new QueueClass(name, 1, queuePolicy, null, null);
  }

  /**
   * {@code requestQueueLimitPerWorker x workers} saturating, or {@link Long#MAX_VALUE} when
   * unbounded.
   */
  public long requestLimit(int workers) {
    return requestQueueLimitPerWorker == null
        ? Long.MAX_VALUE
        : QueueMath.saturatingMultiply(requestQueueLimitPerWorker, workers);
  }
}
