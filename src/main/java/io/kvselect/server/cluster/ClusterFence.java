package io.kvselect.server.cluster;

import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.core.LifecycleEvent;
import io.kvselect.core.budget.PauseFence;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Feeds a {@link PauseFence} on a clustered node: a daemon thread beats every
 * {@value #BEAT_MS} ms (after a SIGSTOP or a frozen VM its first beat sees the whole pause),
 * Hazelcast's lifecycle listener reports the merge back into the cluster and its membership
 * listener the member count. A thread of its own, not a Vert.x timer, so that a blocked event loop
 * is not mistaken for a pause.
 *
 * <p>A fenced member that the others removed is back in the cluster once it has <em>rejoined</em>
 * it: Hazelcast's merge gives it a new member id and lists the others again, and from then on its
 * reads and writes of the shared maps go to their owners in the cluster. Hazelcast reports
 * {@code MERGED} only after it has also merged this member's own map entries into the cluster,
 * which took up to 5 s more on a loaded 2-core machine (the fence then waited for the 5 s settle
 * instead); a paused member made no entries while it was paused, so the fence lifts at the rejoin:
 * a member added while fenced, with others listed and a local member id other than the one the
 * member had when the pause was noticed.
 *
 * <p>Owner of the beat thread and the two listener registrations; {@link #close} ends all three
 * (the thread also ends once the Hazelcast member is shut down).
 * The fence itself is thread-safe.
 */
public final class ClusterFence implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterFence.class);
  static final long BEAT_MS = 100;

  /** An unchanged member list with others on it for this long lifts a fence (the others kept this node). */
  static final Duration SETTLE = Duration.ofSeconds(5);

  /** The longest fence: without a merge by then, this node serves as its side of a split. */
  static final Duration MAX = Duration.ofSeconds(30);

  private final HazelcastInstance hz;
  private final PauseFence fence;
  private final Thread beat;
  private final UUID lifecycleListener;
  private final UUID membershipListener;
  private volatile boolean closed;

  /** The local member id when the last fence began (written by the beat thread). */
  private volatile UUID idAtFence;

  private final java.util.concurrent.atomic.AtomicLong rejoinLifts =
      new java.util.concurrent.atomic.AtomicLong();

  /** Fences after a pause of at least {@code failureTimeout}. */
  public ClusterFence(HazelcastInstance hz, Duration failureTimeout) {
    this(hz, failureTimeout, true);
  }

  /**
   * As above; {@code onMerged} false leaves Hazelcast's {@code MERGED} event unheard, so a test can
   * show what lifts the fence without it (which of the two comes first is a race).
   */
  ClusterFence(HazelcastInstance hz, Duration failureTimeout, boolean onMerged) {
    this.hz = hz;
    this.fence = new PauseFence(failureTimeout.toNanos(), SETTLE.toNanos(), MAX.toNanos());
    fence.membership(hz.getCluster().getMembers().size(), System.nanoTime());
    this.lifecycleListener =
        onMerged ? hz.getLifecycleService().addLifecycleListener(this::lifecycle) : null;
    this.membershipListener =
        hz.getCluster()
            .addMembershipListener(
                new MembershipListener() {
                  @Override
                  public void memberAdded(MembershipEvent e) {
                    long now = System.nanoTime();
                    fence.membership(e.getMembers().size(), now);
                    rejoined(e.getMembers().size(), now);
                  }

                  @Override
                  public void memberRemoved(MembershipEvent e) {
                    fence.membership(e.getMembers().size(), System.nanoTime());
                  }
                });
    this.beat = new Thread(this::beat, "kvselect-pause-fence");
    beat.setDaemon(true);
    beat.start();
  }

  private void lifecycle(LifecycleEvent e) {
    if (e.getState() == LifecycleEvent.LifecycleState.MERGED) {
      String before = fence.reason(System.nanoTime());
      fence.merged(System.nanoTime());
      if (before != null) {
        LOG.info("fence lifted: merged back into the cluster; taking selections again");
      }
    }
  }

  /** Lifts a fence once this member rejoined the cluster under a new member id (see the class comment). */
  private void rejoined(int members, long now) {
    UUID before = idAtFence;
    if (members < 2 || before == null || fence.reason(now) == null) {
      return;
    }
    UUID id = hz.getCluster().getLocalMember().getUuid();
    if (!before.equals(id)) {
      fence.merged(now);
      rejoinLifts.incrementAndGet();
      LOG.info(
          "fence lifted: rejoined the cluster as a new member ({} members); taking selections again",
          members);
    }
  }

  /**
   * The beat at {@code now}. The beat thread calls it every {@value #BEAT_MS} ms; a test stands in
   * for a pause by calling it with a time a failure timeout ahead.
   */
  void tick(long now) {
    boolean wasFenced = fence.reason(now) != null;
    fence.tick(now);
    if (!wasFenced && fence.reason(now) != null) {
      idAtFence = hz.getCluster().getLocalMember().getUuid();
    }
  }

  /** Fences lifted at a rejoin, before Hazelcast's {@code MERGED}. */
  public long rejoinLifts() {
    return rejoinLifts.get();
  }

  private void beat() {
    boolean wasFenced = false;
    // ends with close(), or by itself once the member is shut down (a start that failed after the
    // fence was built never closes it)
    while (!closed && hz.getLifecycleService().isRunning()) {
      long now = System.nanoTime();
      tick(now);
      String reason = fence.reason(now);
      if (reason != null && !wasFenced) {
        LOG.warn("fenced: {}; new selections answer 503 and /ready 503 until the merge", reason);
      } else if (reason == null && wasFenced) {
        LOG.info("fence lifted: {}", fence.lastLift());
      }
      wasFenced = reason != null;
      try {
        Thread.sleep(BEAT_MS);
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  /** Why new selections are refused now (the node is fenced), or null. */
  public String reason() {
    return fence.reason(System.nanoTime());
  }

  /** What {@code GET /cluster} shows under {@code sync.fence}. */
  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    String reason = reason();
    m.put("fenced", reason != null);
    if (reason != null) {
      m.put("reason", reason);
    }
    m.put("fences", fence.fences());
    m.put("last_lift", fence.lastLift());
    m.put("lifted_at_rejoin", rejoinLifts.get());
    return m;
  }

  @Override
  public void close() {
    closed = true;
    beat.interrupt();
    try {
      if (hz.getLifecycleService().isRunning()) {
        if (lifecycleListener != null) {
          hz.getLifecycleService().removeLifecycleListener(lifecycleListener);
        }
        hz.getCluster().removeMembershipListener(membershipListener);
      }
    } catch (RuntimeException e) {
      LOG.debug("fence listeners not removed: {}", e.toString());
    }
  }
}
