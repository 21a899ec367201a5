package io.kvselect.server.cluster;

import io.kvselect.core.service.DeferredFrees;
import io.kvselect.core.service.LifecycleStep;
import java.time.Duration;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The deferred frees of one node (hinted handoff, {@link DeferredFrees}): keeps the frees the
 * lifecycle forwarder could not deliver, notices the members that go missing and come back, and
 * delivers each member's frees once it is a member again and answers. {@link #tick} runs every
 * {@value #TICK_MS} ms on the forwarder's timer and starts a delivery to each member that has frees
 * due, is live and is not silent. A delivery sends at most {@value #DELIVERY_BATCH} frees at a
 * time and, once every one of them is answered, sends the next batch at once: a member is never
 * sent more than one batch at a time (its own answers pace it), and 40,000 frees kept through a
 * long split drain in seconds, not in minutes of one batch per tick. A batch with an unanswered
 * free ends the delivery until the next tick.
 *
 * <p>Ownership: the hints are owned by {@link DeferredFrees} (synchronized); {@code everSeen} by
 * the tick's context; {@code lastLive}, {@code lastDeparture} (volatile) and the concurrent
 * {@code recentReturns} and {@code delivering} are read by forward completions on any thread.
 */
final class FreeHandoff {

  private static final Logger LOG = LoggerFactory.getLogger(FreeHandoff.class);

  /** How long a deferred free is kept for its holder to come back. */
  static final Duration HINT_TTL = Duration.ofMinutes(10);

  static final int HINT_LIMIT = 100_000;
  static final long TICK_MS = 1_000;
  static final int DELIVERY_BATCH = 256;

  /** A member that came back this recently also gets the frees kept for any returning member. */
  static final long RECENT_RETURN_NANOS = 10_000_000_000L;

  /** How the forwarder carries one free: its answer, and whether the member is waited for. */
  interface Courier {
    /** The free of {@code id} sent to {@code node}. */
    CompletionStage<Delivery> free(String node, String id);

    /** Whether {@code node} is in its silent hold now (not waited for). */
    boolean silent(String node, long now);

    /** {@code node} did not answer in time: hold it. */
    void silence(String node);
  }

  /** One delivery's outcome: the member freed the booking, did not hold it, or did not answer. */
  enum Delivery {
    FREED,
    NOT_HELD,
    NO_CONSUMER,
    SILENT
  }

  private final DeferredFrees hints = new DeferredFrees(HINT_LIMIT, HINT_TTL.toNanos());
  private final String nodeId;
  private final Courier courier;
  private volatile Set<String> lastLive = Set.of();
  private final Set<String> everSeen = new HashSet<>();

  /** When a member was last seen missing (nanoTime), or null: frees nobody held are kept until a TTL after. */
  private volatile Long lastDeparture;

  private final Map<String, Long> recentReturns = new ConcurrentHashMap<>();
  private final Set<String> delivering = ConcurrentHashMap.newKeySet();
  private volatile boolean stopped;

  FreeHandoff(String nodeId, Courier courier) {
    this.nodeId = nodeId;
    this.courier = courier;
  }

  /** The members at the start (none of them is a return). */
  void start(Collection<String> members) {
    lastLive = Set.copyOf(members);
    everSeen.addAll(lastLive);
  }

  /**
   * A member of the last tick missing from {@code live} went away just now: a free nobody holds is
   * kept from this moment on, not only from the next tick (a node woken from a pause is called at
   * once, while its view is the one from before the pause).
   */
  void noteDepartures(Collection<String> live) {
    for (String n : lastLive) {
      if (!live.contains(n)) {
        lastDeparture = System.nanoTime();
        return;
      }
    }
  }

  /** Keeps a free for {@code origin}; true when it was kept. Other steps are not kept. */
  boolean keepFor(String origin, LifecycleStep step) {
    return step instanceof LifecycleStep.Free
        && hints.forOrigin(origin, step.id(), System.nanoTime());
  }

  /** Keeps a free nobody reachable held for any member that comes back, while one went missing within the TTL. */
  boolean keepForAny(LifecycleStep step) {
    Long d = lastDeparture;
    long now = System.nanoTime();
    if (!(step instanceof LifecycleStep.Free) || d == null || now - d >= HINT_TTL.toNanos()) {
      return false;
    }
    // a member that came back a moment ago was not asked if this call began before its return
    recentReturns.forEach(
        (node, at) -> {
          if (now - at < RECENT_RETURN_NANOS) {
            hints.forOrigin(node, step.id(), now);
          }
        });
    return hints.forAnyReturning(step.id(), now);
  }

  /** No delivery starts or continues after this (the forwarder is closing); the hints are dropped with it. */
  void stop() {
    stopped = true;
  }

  /** The counters, for {@code GET /cluster} and the meters. */
  Map<String, Long> counters() {
    return hints.snapshot(System.nanoTime());
  }

  /** Notices members that went missing or came back, then delivers the frees of every member that answers. */
  void tick(Collection<String> members) {
    long now = System.nanoTime();
    Set<String> live = new HashSet<>(members);
    for (String n : lastLive) {
      if (!live.contains(n)) {
        lastDeparture = now;
      }
    }
    recentReturns.values().removeIf(at -> now - at >= RECENT_RETURN_NANOS);
    for (String n : live) {
      if (!lastLive.contains(n) && everSeen.contains(n) && !n.equals(nodeId)) {
        recentReturns.put(n, now);
        hints.returned(n, now);
      }
    }
    everSeen.addAll(live);
    if (everSeen.size() > 4 * HINT_LIMIT) {
      everSeen.retainAll(live);
    }
    lastLive = Set.copyOf(live);
    for (String origin : hints.origins(now)) {
      if (!live.contains(origin)
          || origin.equals(nodeId)
          || delivering.contains(origin)
          || courier.silent(origin, now)) {
        continue;
      }
      List<String> due = hints.due(origin, DELIVERY_BATCH, now);
      if (!due.isEmpty()) {
        deliver(origin, due);
      }
    }
  }

  /** The next batch for a member whose last batch was answered: none once it left, went silent or the handoff stopped. */
  private List<String> nextBatch(String origin) {
    long now = System.nanoTime();
    if (stopped || !lastLive.contains(origin) || courier.silent(origin, now)) {
      return List.of();
    }
    return hints.due(origin, DELIVERY_BATCH, now);
  }

  /**
   * Sends the frees of {@code ids} to {@code origin} at once; an answer ends a hint, no answer keeps
   * it. When all of them are answered and more are due, the next batch follows at once (the member
   * stays marked as being delivered to in between, so a tick never starts a second batch).
   */
  private void deliver(String origin, List<String> ids) {
    deliver(origin, ids, new Run());
  }

  /** What one delivery (its batches one after another) achieved, logged once when it ends. */
  private static final class Run {
    final AtomicInteger batches = new AtomicInteger();
    final AtomicInteger sent = new AtomicInteger();
    final AtomicInteger freed = new AtomicInteger();
    final AtomicInteger unanswered = new AtomicInteger();
  }

  private void deliver(String origin, List<String> ids, Run run) {
    if (stopped) {
      delivering.remove(origin);
      return;
    }
    delivering.add(origin);
    run.batches.incrementAndGet();
    run.sent.addAndGet(ids.size());
    AtomicInteger left = new AtomicInteger(ids.size());
    AtomicInteger unanswered = new AtomicInteger();
    AtomicBoolean silent = new AtomicBoolean();
    for (String id : ids) {
      courier
          .free(origin, id)
          .whenComplete(
              (d, err) -> {
                if (err != null || d == Delivery.SILENT || d == Delivery.NO_CONSUMER) {
                  unanswered.incrementAndGet();
                  // only silence is waited out: a member without a consumer (just merged back, or
                  // stopping) is asked again on the next tick without holding the others' calls
                  if (d == Delivery.SILENT) {
                    silent.set(true);
                  }
                } else {
                  hints.delivered(origin, id, d == Delivery.FREED);
                  if (d == Delivery.FREED) {
                    run.freed.incrementAndGet();
                  }
                }
                if (left.decrementAndGet() == 0) {
                  if (silent.get()) {
                    courier.silence(origin);
                  }
                  run.unanswered.addAndGet(unanswered.get());
                  List<String> next = unanswered.get() > 0 ? List.of() : nextBatch(origin);
                  if (next.isEmpty()) {
                    LOG.info(
                        "deferred frees delivered to node {} in {} batch(es): {} freed, {} not held there, {} unanswered"
                            + " (kept)",
                        origin,
                        run.batches.get(),
                        run.freed.get(),
                        run.sent.get() - run.freed.get() - run.unanswered.get(),
                        run.unanswered.get());
                    delivering.remove(origin);
                  } else {
                    deliver(origin, next, run);
                  }
                }
              });
    }
  }
}
