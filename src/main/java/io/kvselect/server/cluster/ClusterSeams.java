package io.kvselect.server.cluster;

import com.hazelcast.core.HazelcastInstance;
import io.kvselect.core.service.SelectionServiceBuilder;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.server.config.NodeSettings;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executor;

/**
 * Plugs the cluster-wide implementations of the service's asynchronous seams into a
 * {@link SelectionServiceBuilder}: the Hazelcast session table (when session affinity is on), the
 * Hazelcast pending store, and node-to-node sync ({@link PeerSync}: load, catalog, lifecycle
 * forwarding). The one clustered path of both {@code bin/kvselect --cluster} and
 * {@code Kvselect.deploy} on an application's clustered Vert.x. Stateless.
 */
public final class ClusterSeams {

  /**
   * Session bindings each node remembers for its fallbacks (about 100 bytes each): the sessions a
   * node served recently keep their worker while the shared table is unreachable.
   */
  static final int NEAR_CACHE_ENTRIES = 100_000;

  private ClusterSeams() {}

  /**
   * Builds the service of a node on the clustered {@code vertx} whose Hazelcast member is
   * {@code hz}: {@code builder} with the shared session table and pending store and the seams of
   * {@code sync} (load, catalog, lifecycle forwarding), fenced by the member's view of the
   * cluster. The node's bookings are also published to {@code alsoPublishTo} when it is not null
   * (Dynamo's replica-sync mesh beside the cluster). The caller deploys the service, then attaches
   * the sync ({@link PeerSync#attach}) and closes it before Vert.x.
   */
  public static io.kvselect.core.service.SelectionService build(
      SelectionServiceBuilder builder,
      NodeSettings s,
      Vertx vertx,
      HazelcastInstance hz,
      PeerSync sync,
      io.kvselect.core.load.LoadSync alsoPublishTo) {
    io.kvselect.core.service.SelectionService service =
        apply(builder, s, vertx, hz)
            .loadSync(
                io.kvselect.server.sync.replica.CompositeLoadSync.of(
                    sync.loadSync(), alsoPublishTo))
            .catalogSync(sync.catalogSync())
            .lifecycleForwarder(sync.lifecycleForwarder())
            .build();
    ClusterFence fence = new ClusterFence(hz, failureTimeout(hz, s));
    sync.fence(fence);
    service.hold(fence::reason);
    return service;
  }

  /**
   * The member's failure timeout: Hazelcast's {@code hazelcast.max.no.heartbeat.seconds} as the
   * member was configured (an application's clustered Vert.x may set its own), else the node's.
   */
  static Duration failureTimeout(HazelcastInstance hz, NodeSettings s) {
    String v = hz.getConfig().getProperty("hazelcast.max.no.heartbeat.seconds");
    if (v == null) {
      v = System.getProperty("hazelcast.max.no.heartbeat.seconds");
    }
    try {
      if (v != null) {
        return Duration.ofSeconds(Math.max(1, Long.parseLong(v.trim())));
      }
    } catch (NumberFormatException e) {
      // fall through: the node's own setting
    }
    return Duration.ofSeconds(s.cluster().failureTimeoutSecs());
  }

  /**
   * The Hazelcast member under a clustered {@code vertx}; fails when its cluster manager is not
   * Vert.x's Hazelcast one (kvselect shares its state through Hazelcast structures).
   */
  public static HazelcastInstance hazelcast(Vertx vertx) {
    io.vertx.core.spi.cluster.ClusterManager m =
        ((io.vertx.core.internal.VertxInternal) vertx).clusterManager();
    if (m instanceof io.vertx.spi.cluster.hazelcast.HazelcastClusterManager h
        && h.getHazelcastInstance() != null) {
      return h.getHazelcastInstance();
    }
    throw new IllegalStateException(
        "kvselect on a clustered Vert.x needs the Hazelcast cluster manager, found "
            + (m == null ? "none" : m.getClass().getName()));
  }

  private static SelectionServiceBuilder apply(
      SelectionServiceBuilder builder, NodeSettings s, Vertx vertx, HazelcastInstance hz) {
    Executor completions = completions(vertx);
    Executor blocking =
        command ->
            vertx.executeBlocking(
                () -> {
                  command.run();
                  return null;
                },
                false);
    // one budget for the session table and the pending store: a member that timed out on one is
    // not waited for on the other
    io.kvselect.core.budget.CallBudget budget =
        new io.kvselect.core.budget.CallBudget(
            Duration.ofMillis(s.cluster().callBudgetMillis()),
            completions,
            new HazelcastRoutes(
                hz,
                k -> k instanceof String str ? str : HazelcastPendingStore.key(k),
                hz.getConfig().getMapConfig(ClusterBootstrap.SESSIONS_MAP).getBackupCount()));
    if (s.sessionAffinityTtlSecs() != null) {
      Duration ttl = Duration.ofSeconds(s.sessionAffinityTtlSecs());
      // the near cache and the budget are the session-affinity verticle's; the service calls it
      // over the bus
      builder.sessionAffinity(
          clock ->
              new io.kvselect.server.session.BusSessionAffinity(
                  vertx,
                  new io.kvselect.core.session.BudgetedSessionAffinity(
                      new HazelcastSessionAffinity(
                          hz, clock, ttl, SessionAffinity.MAX_ENTRIES, blocking, completions),
                      budget,
                      clock,
                      ttl,
                      NEAR_CACHE_ENTRIES)));
    }
    Duration pendingTtl = Duration.ofNanos((long) (s.selectionCacheTtlSecs() * 1e9));
    builder.pendingStore(
        new io.kvselect.core.pending.BudgetedPendingStore<>(
            new HazelcastPendingStore<>(
                hz, Clock.systemUTC(), pendingTtl, s.selectionCacheMaxBytes(), completions),
            budget));
    builder.kvcState(
        new io.kvselect.core.kvc.BudgetedKvcState(
            new HazelcastKvcState(hz, blocking, completions), budget, NEAR_CACHE_ENTRIES));
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
      // each one a fresh event-loop context (round robin over the loops), even when called on a
      // loop
      loops[i] = ((io.vertx.core.internal.VertxInternal) vertx).createEventLoopContext();
    }
    java.util.concurrent.atomic.AtomicInteger next =
        new java.util.concurrent.atomic.AtomicInteger();
    return command ->
        loops[Math.floorMod(next.getAndIncrement(), n)].runOnContext(v -> command.run());
  }
}
