package io.kvselect.server.cluster;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * How the Hazelcast seams hand results back: every stage they return completes on
 * {@code completions} (the node's event loops, see {@link ClusterSeams}), never on a Hazelcast or
 * blocking-pool thread. Stateless.
 */
final class ClusterStages {

  private ClusterStages() {}

  /** {@code stage}'s outcome, completed on {@code completions}. */
  static <T> CompletionStage<T> hop(CompletionStage<T> stage, Executor completions) {
    CompletableFuture<T> out = new CompletableFuture<>();
    stage.whenComplete((v, e) -> completions.execute(() -> {
      if (e != null) {
        out.completeExceptionally(e);
      } else {
        out.complete(v);
      }
    }));
    return out;
  }

  /** Runs {@code body} on {@code blocking}; its outcome completes on {@code completions}. */
  static <T> CompletionStage<T> onBlocking(Callable<T> body, Executor blocking, Executor completions) {
    CompletableFuture<T> out = new CompletableFuture<>();
    try {
      blocking.execute(() -> {
        try {
          T v = body.call();
          completions.execute(() -> out.complete(v));
        } catch (Exception e) {
          completions.execute(() -> out.completeExceptionally(e));
        }
      });
    } catch (RuntimeException e) {
      out.completeExceptionally(e);
    }
    return out;
  }
}
