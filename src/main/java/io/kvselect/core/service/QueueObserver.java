package io.kvselect.core.service;

/**
 * Observes how requests leave a partition's router queue, for metrics. Called outside every lock,
 * from whichever thread completed the wait; must not block.
 */
@FunctionalInterface
public interface QueueObserver {

  /**
   * @param partition the partition key as text
   * @param policyClass the request's policy class
   * @param waitedNanos time spent queued
   * @param outcome {@code served}, {@code failed}, {@code timeout}, {@code rejected} or
   *     {@code cancelled}
   */
  void dequeued(String partition, String policyClass, long waitedNanos, String outcome);
}
