package io.kvselect.server.cluster;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * How the Hazelcast seams hand results back: every stage they return completes on
 * {@code completions} (the node's event loops, see {@link ClusterSeams}), never on a Hazelcast or
 * blocking-pool thread. Stateless.
 *
 * <p>The hand-over itself runs on the thread that completes the Hazelcast future (its response or
 * partition thread: it only decodes the value and queues a task), named by {@link #DIRECT}. A
 * callback registered without an executor ({@code whenComplete}) runs on Hazelcast's default
 * async executor, the JDK's common pool, and where that pool has a parallelism of 1 (any machine
 * with 2 cores) that executor starts a new thread for every callback: a clustered node started
 * more than ten thousand threads in a 15 s fault and one for every booking without one
 * ({@code ClusterStagesTest}).
 */
final class ClusterStages {

  /** Runs a hand-over on the thread that completed the stage. */
  static final Executor DIRECT = Runnable::run;

  private ClusterStages() {}

  /** {@code stage}'s outcome, completed on {@code completions}. */
  static <T> CompletionStage<T> hop(CompletionStage<T> stage, Executor completions) {
    CompletableFuture<T> out = new CompletableFuture<>();
    stage.whenCompleteAsync(
        (v, e) ->
            completions.execute(
                () -> {
                  if (e != null) {
                    out.completeExceptionally(e);
                  } else {
                    out.complete(v);
                  }
                }),
        DIRECT);
    return out;
  }

  /** Runs {@code body} on {@code blocking}; its outcome completes on {@code completions}. */
  static <T> CompletionStage<T> onBlocking(
      Callable<T> body, Executor blocking, Executor completions) {
    CompletableFuture<T> out = new CompletableFuture<>();
    try {
      blocking.execute(
          () -> {
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
