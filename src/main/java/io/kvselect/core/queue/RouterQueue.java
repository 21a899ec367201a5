package io.kvselect.core.queue;

import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/** Skeleton. */
public final class RouterQueue {
  private final QueueConfig config;

  public RouterQueue(QueueConfig config) {
    this.config = config;
  }

  public QueueRejection offer(QueuedRequest r, int workers) {
    throw new UnsupportedOperationException();
  }

  public List<QueuedRequest> drain(Predicate<QueuedRequest> admit) {
    throw new UnsupportedOperationException();
  }

  public boolean remove(QueuedRequest r) {
    throw new UnsupportedOperationException();
  }

  public List<QueuedRequest> removeEnqueuedBefore(long nanos) {
    throw new UnsupportedOperationException();
  }

  public int size() {
    return 0;
  }

  public long pendingIslTokens() {
    return 0;
  }

  public Map<String, Integer> depthByClass() {
    return Map.of();
  }

  public QueueConfig config() {
    return config;
  }
}
