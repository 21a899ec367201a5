package io.kvselect.server.sync.replica;

import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import java.util.concurrent.CompletionStage;

/**
 * Publishes every step to two transports (a clustered node's event-bus sync and Dynamo's replica
 * mesh); the stage completes when both handed the step over. Stateless.
 */
public final class CompositeLoadSync implements LoadSync {

  private final LoadSync first;
  private final LoadSync second;

  private CompositeLoadSync(LoadSync first, LoadSync second) {
    this.first = first;
    this.second = second;
  }

  /** {@code first} alone when {@code second} is null or {@link LoadSync#LOCAL}, else both. */
  public static LoadSync of(LoadSync first, LoadSync second) {
    if (second == null || second == LOCAL) {
      return first;
    }
    if (first == null || first == LOCAL) {
      return second;
    }
    return new CompositeLoadSync(first, second);
  }

  @Override
  public CompletionStage<Void> publish(LoadEvent event) {
    CompletionStage<Void> a = first.publish(event);
    CompletionStage<Void> b = second.publish(event);
    return a.thenCombine(b, (x, y) -> null);
  }
}
