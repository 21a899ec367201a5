package io.kvselect.server.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.LifecycleEvent;
import io.vertx.core.Vertx;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import io.vertx.spi.cluster.hazelcast.impl.SubsMapHelper;
import java.lang.reflect.Field;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Puts this node's event-bus registrations back into the cluster's subscription map a few seconds
 * after every member join or merge, and every {@link #PERIOD_MS}, so a member that lost them can be
 * reached again.
 *
 * <p>Why: vertx-hazelcast 5.0.x removes a departed member's registrations in its
 * {@code memberRemoved} handler by iterating the whole {@code __vertx.subs} multimap; while
 * partitions have no owner (right after a removal) that iteration blocks, so it can finish after
 * the member has merged back and then deletes the returned member's fresh registrations. A member
 * republishes its own only when it sees a removal or merges itself, so the side that did not merge
 * stays unreachable over the bus (requests to it time out, its deferred frees and load sync never
 * arrive) until the next removal; vertx-core's node selector ignores {@code registrationsLost}.
 * Vert.x keeps the republish step ({@link SubsMapHelper#republishOwnSubs}) behind a private field of
 * its cluster manager, so it is reached by reflection here; when the field is missing (another
 * vertx-hazelcast) the repair logs once and does nothing. A re-put of a registration that is still
 * there changes nothing (the multimap holds a set). docs/cluster.md, "Known holes", has the
 * evidence.
 *
 * <p>Owner: the node's clustered start ({@link ClusterBootstrap#start}); its timers belong to the
 * node's Vert.x and end with it; {@link #republished} is a counter written by worker threads.
 */
public final class SubscriptionRepair {

  private static final Logger LOG = LoggerFactory.getLogger(SubscriptionRepair.class);

  /** When the registrations are put back after a member joins or this member merges. */
  static final long[] AFTER_JOIN_MS = {2_000, 8_000, 20_000};

  /** The periodic put-back, for a loss no membership event announces. */
  static final long PERIOD_MS = 30_000;

  private final Vertx vertx;
  private final SubsMapHelper subs;
  private final AtomicLong republished = new AtomicLong();

  private SubscriptionRepair(Vertx vertx, SubsMapHelper subs) {
    this.vertx = vertx;
    this.subs = subs;
  }

  /** The repair of {@code manager}'s registrations, or empty when its subscription map cannot be reached. */
  static Optional<SubscriptionRepair> of(Vertx vertx, HazelcastClusterManager manager) {
    try {
      Field f = HazelcastClusterManager.class.getDeclaredField("subsMapHelper");
      f.setAccessible(true);
      Object helper = f.get(manager);
      if (helper instanceof SubsMapHelper s) {
        return Optional.of(new SubscriptionRepair(vertx, s));
      }
      LOG.warn(
          "cluster: event-bus registration repair off: the cluster manager has no subscription map yet");
    } catch (ReflectiveOperationException | RuntimeException e) {
      LOG.warn(
          "cluster: event-bus registration repair off: this vertx-hazelcast keeps no subsMapHelper ({})",
          e.toString());
    }
    return Optional.empty();
  }

  /**
   * Starts the repair for a joined {@code manager}: after every member join and this member's
   * merge, and every {@link #PERIOD_MS}. Returns it (empty when it cannot run).
   */
  public static Optional<SubscriptionRepair> start(Vertx vertx, HazelcastClusterManager manager) {
    Optional<SubscriptionRepair> r = of(vertx, manager);
    r.ifPresent(repair -> repair.listen(manager.getHazelcastInstance()));
    return r;
  }

  private void listen(HazelcastInstance hz) {
    hz.getCluster()
        .addMembershipListener(
            new MembershipListener() {
              @Override
              public void memberAdded(MembershipEvent e) {
                soon();
              }

              @Override
              public void memberRemoved(MembershipEvent e) {}
            });
    hz.getLifecycleService()
        .addLifecycleListener(
            e -> {
              if (e.getState() == LifecycleEvent.LifecycleState.MERGED) {
                soon();
              }
            });
    vertx.setPeriodic(PERIOD_MS, id -> republishNow());
  }

  private void soon() {
    for (long ms : AFTER_JOIN_MS) {
      vertx.setTimer(ms, id -> republishNow());
    }
  }

  /** Puts this node's registrations back now, on a worker thread (the puts are blocking map calls). */
  public void republishNow() {
    vertx
        .executeBlocking(
            () -> {
              subs.republishOwnSubs();
              republished.incrementAndGet();
              return null;
            },
            false)
        .onFailure(
            e -> LOG.debug("cluster: event-bus registration repair failed: {}", e.toString()));
  }

  /** How many times the registrations were put back. */
  public long republished() {
    return republished.get();
  }
}
