package io.kvselect.server.cluster;

import io.kvselect.core.service.SelectionServiceBuilder;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.server.config.NodeSettings;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * Plugs the cluster-wide implementations of the service's asynchronous seams into a
 * {@link SelectionServiceBuilder}: the Hazelcast session table (when session affinity is on) and
 * the Hazelcast pending store. Stateless.
 */
public final class ClusterSeams {

  private ClusterSeams() {}

  /** {@code builder} with the shared session table and pending store of cluster {@code c}. */
  public static SelectionServiceBuilder apply(SelectionServiceBuilder builder, NodeSettings s,
      ClusterBootstrap.Clustered c) {
    Vertx vertx = c.vertx();
    Executor completions = completions(vertx);
    Executor blocking = command -> vertx.executeBlocking(() -> {
      command.run();
      return null;
    }, false);
    if (s.sessionAffinityTtlSecs() != null) {
      Duration ttl = Duration.ofSeconds(s.sessionAffinityTtlSecs());
      builder.sessionAffinity(clock -> new HazelcastSessionAffinity(c.hazelcast(), clock, ttl,
          SessionAffinity.MAX_ENTRIES, blocking, completions));
    }
    Duration pendingTtl = Duration.ofNanos((long) (s.selectionCacheTtlSecs() * 1e9));
    builder.pendingStore(new HazelcastPendingStore<>(c.hazelcast(), Clock.systemUTC(), pendingTtl,
        s.selectionCacheMaxBytes(), completions));
    builder.kvcState(new HazelcastKvcState(c.hazelcast(), blocking, completions));
    return builder;
  }

  /**
   * Where the Hazelcast seams complete their stages: the node's event loops, taken in turn, so
   * that what the service runs after a shared-state step never runs on a Hazelcast thread.
   */
  static Executor completions(Vertx vertx) {
    int n = Math.max(1, 2 * Runtime.getRuntime().availableProcessors());
    io.vertx.core.Context[] loops = new io.vertx.core.Context[n];
    for (int i = 0; i < n; i++) {
      // each one a fresh event-loop context (round robin over the loops), even when called on a loop
      loops[i] = ((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext();
    }
    java.util.concurrent.atomic.AtomicInteger next = new java.util.concurrent.atomic.AtomicInteger();
    return command -> loops[Math.floorMod(next.getAndIncrement(), n)].runOnContext(v -> command.run());
  }
}
