package io.kvselect.server.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.config.Config;
import com.hazelcast.core.LifecycleEvent;
import io.vertx.core.Completable;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Vert.x's Hazelcast cluster manager with its membership and lifecycle handlers moved off
 * Hazelcast's event thread onto a thread of its own, in the order Hazelcast delivered them.
 *
 * <p>Why: vertx-hazelcast 5.0.7 handles a departed member on the Hazelcast event thread that
 * delivered the event, holding the manager's monitor, and its first step ({@code cleanSubs})
 * iterates the whole {@code __vertx.subs} multimap. Right after a member is removed its
 * partitions have no owner yet, so that iteration waits, for seconds on a loaded machine
 * (docs/benchmarks.md, "Cluster: the SIGSTOP phase"). Hazelcast runs every listener's events on
 * one of a few event threads (five by default) chosen by registration or key, so a blocked
 * handler holds back every event queued behind it on that thread: about one map key in five
 * (entry events of the session table, of Vert.x's own subscription map) and the listeners that
 * share the thread ({@code MembershipHandoffTest}). Handed off, the cleanup still takes as long,
 * but nothing else waits for it. The library's code is unchanged: the same handlers run, one at a
 * time and in order, as before.
 *
 * <p>Ownership: the single {@code kvselect-cluster-membership} thread runs the inherited handlers;
 * it is created with the manager and shut down when the manager has left the cluster.
 */
final class MembershipHandoffClusterManager extends HazelcastClusterManager {

  private static final Logger LOG = LoggerFactory.getLogger(MembershipHandoffClusterManager.class);
  static final String THREAD = "kvselect-cluster-membership";

  private final ExecutorService handlers =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, THREAD);
            t.setDaemon(true);
            return t;
          });

  MembershipHandoffClusterManager(Config config) {
    super(config);
  }

  @Override
  public void memberAdded(MembershipEvent e) {
    hand("memberAdded", () -> super.memberAdded(e));
  }

  @Override
  public void memberRemoved(MembershipEvent e) {
    hand("memberRemoved", () -> super.memberRemoved(e));
  }

  @Override
  public void stateChanged(LifecycleEvent e) {
    hand("stateChanged", () -> super.stateChanged(e));
  }

  @Override
  public void leave(Completable<Void> promise) {
    super.leave(
        (result, failure) -> {
          handlers.shutdown();
          promise.complete(result, failure);
        });
  }

  private void hand(String what, Runnable handler) {
    try {
      handlers.execute(
          () -> {
            try {
              handler.run();
            } catch (RuntimeException ex) {
              LOG.warn("cluster: the cluster manager's {} handler failed", what, ex);
            }
          });
    } catch (RejectedExecutionException left) {
      // the manager has left the cluster: its own handlers return at once when inactive
    }
  }
}
