package io.kvselect.core.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Predicate;

/**
 * The requests of one partition that wait because every eligible rank is busy: one queue per
 * policy class ({@link QueueConfig}), served by deficit round robin.
 *
 * <p><b>Ownership.</b> Not thread-safe. The owner of the partition (its partition lock) serializes
 * every call; the admission predicate passed to {@link #drain} runs on the caller's thread inside
 * that call and must not call back into this queue.
 *
 * <p><b>Order within a class.</b> A higher {@link QueuedRequest#strictPriority()} is served first
 * ({@code null} ranks as 0), before any key of the class's policy. Among equal strict priorities
 * the lower key is served first:
 *
 * <ul>
 *   <li>{@code fcfs}: {@code enqueuedNanos - round(priorityJumpSecs x 1e9)}; ties by offer order.
 *   <li>{@code lcfs}: {@code -enqueuedNanos - round(priorityJumpSecs x 1e9)}: the latest arrival
 *       first, and a jump of {@code j} seconds moves a request {@code j} seconds earlier; ties by
 *       reverse offer order.
 *   <li>{@code wspt} (Smith's rule, serve the highest weight / processing time first): {@code
 *       uncachedPrefillTokens / (1 + priorityJumpSecs)}, i.e. processing time = the cache-aware
 *       uncached prefill at enqueue and weight = {@code 1 + priorityJumpSecs}; ties by the fcfs
 *       key, then offer order.
 * </ul>
 *
 * <p><b>Across classes.</b> Deficit round robin over the classes in config order. A request costs
 * 1 (not its tokens), so a class's quantum is the number of requests it may be served per turn:
 * with every class backlogged and admitted, quanta 3:1 give 3:1 service. A turn starts with the
 * class's deficit raised by its quantum and ends when the deficit reaches 0 or the class's queue
 * empties (which resets its deficit to 0). The turn and the remaining deficit persist across
 * {@link #drain} calls, so draining one request per call keeps the same shares. When the class
 * holding the turn is blocked (its head was refused), its turn is kept for the next call and the
 * other non-blocked classes are served one request at a time in rotation (work conserving; these
 * borrowed services do not touch deficits) until each of them is blocked or empty.
 *
 * <p><b>Limits</b> ({@link #offer}, with {@code w} = schedulable workers of the partition), checked
 * in this order:
 *
 * <ol>
 *   <li>{@code requests}: rejected when {@code depth(class) + 1 > request_queue_limit_per_worker x
 *       w}; details {@code current = depth(class)}, {@code limit = request_queue_limit_per_worker x
 *       w}. A limit of 0 rejects every request: {@code current 0, limit 0}.
 *   <li>{@code isl_tokens}: the tier with the highest {@code min_missing_isl_tokens <=
 *       uncachedPrefillTokens} caps the queue's pending ISL tokens; rejected when {@code
 *       pendingIslTokens + islTokens > max_queue_depth x w}; details {@code current =
 *       pendingIslTokens}, {@code limit = max_queue_depth x w}. No matching tier, no cap.
 * </ol>
 *
 * <p><b>Complexity</b> ({@code n} parked requests, {@code c} classes): {@link #offer}, {@link
 * #remove} O(c + log n); {@link #drain} O(k log n + c·(k + 1)) for {@code k} admitted requests,
 * calling the predicate at most {@code k + c} times; {@link #removeEnqueuedBefore} O(k log n);
 * {@link #size}, {@link #pendingIslTokens} O(1); {@link #depthByClass} O(c).
 */
public final class RouterQueue {

  private final QueueConfig config;
  private final List<QueueClass> classes;
  private final Map<String, Integer> classIndex = new HashMap<>();
  private final List<TreeSet<Entry>> queues = new ArrayList<>();
  private final TreeSet<Entry> byArrival =
      new TreeSet<>(
          Comparator.comparingLong((Entry e) -> e.request.enqueuedNanos())
              .thenComparingLong(e -> e.seq));
  private final Map<QueuedRequest, Entry> entries = new IdentityHashMap<>();
  private final long[] deficit;
  private long pendingIslTokens;
  private long nextSeq;
  private int cursor;
  private boolean turnStarted;
  private int borrowCursor;

  public RouterQueue(QueueConfig config) {
    this.config = Objects.requireNonNull(config, "config");
    this.classes = config.classes();
    for (int i = 0; i < classes.size(); i++) {
      QueueClass c = classes.get(i);
      classIndex.put(c.name(), i);
      queues.add(new TreeSet<>(order(QueuePolicy.of(c.queuePolicy()))));
    }
    this.deficit = new long[classes.size()];
  }

  /**
   * Parks {@code r} (returns {@code null}) or rejects it (returns why; nothing changes). {@code
   * workers} = schedulable workers of the partition, {@code >= 0}.
   *
   * @throws IllegalArgumentException if {@code r} is already parked or {@code workers < 0}
   */
  public QueueRejection offer(QueuedRequest r, int workers) {
    Objects.requireNonNull(r, "r");
    if (workers < 0) {
      throw new IllegalArgumentException("workers must be >= 0: " + workers);
    }
    if (entries.containsKey(r)) {
      throw new IllegalArgumentException("request already queued: " + r);
    }
    int ci = indexOf(r);
    QueueClass qc = classes.get(ci);
    long depth = queues.get(ci).size();
    long requestLimit = qc.requestLimit(workers);
    if (depth >= requestLimit) {
      return new QueueRejection(qc.name(), QueueRejection.REQUESTS, depth, requestLimit);
    }
    IslTier tier = config.tierFor(r.uncachedPrefillTokens());
    if (tier != null) {
      long cap = tier.cap(workers);
      if (QueueMath.saturatingAdd(pendingIslTokens, r.islTokens()) > cap) {
        return new QueueRejection(qc.name(), QueueRejection.ISL_TOKENS, pendingIslTokens, cap);
      }
    }
    Entry e = new Entry(r, ci, nextSeq++);
    queues.get(ci).add(e);
    byArrival.add(e);
    entries.put(r, e);
    pendingIslTokens += r.islTokens();
    return null;
  }

  /**
   * Serves parked requests in order (see the class Javadoc): for the next candidate calls {@code
   * admit.test(r)}; {@code true} removes {@code r} and appends it to the result, {@code false}
   * blocks {@code r}'s class for the rest of this call. Returns the admitted requests in service
   * order; stops when the queue is empty or every non-empty class is blocked.
   */
  public List<QueuedRequest> drain(Predicate<QueuedRequest> admit) {
    return drain(admit, Integer.MAX_VALUE);
  }

  /**
   * {@link #drain(Predicate)} that also stops once {@code max} requests are admitted. The turn
   * and deficits persist, so serving a backlog in slices of any size keeps the shares of one
   * drain ({@code RouterQueueSliceTest}).
   */
  public List<QueuedRequest> drain(Predicate<QueuedRequest> admit, int max) {
    Objects.requireNonNull(admit, "admit");
    if (max < 1) {
      throw new IllegalArgumentException("max must be >= 1, got " + max);
    }
    List<QueuedRequest> out = new ArrayList<>();
    boolean[] blocked = new boolean[classes.size()];
    while (!entries.isEmpty() && out.size() < max) {
      int h = cursor;
      TreeSet<Entry> q = queues.get(h);
      if (q.isEmpty()) {
        deficit[h] = 0;
        endTurn();
        continue;
      }
      if (!blocked[h]) {
        if (!turnStarted) {
          deficit[h] += classes.get(h).quantum();
          turnStarted = true;
        }
        Entry head = q.first();
        if (admit.test(head.request)) {
          unlink(head);
          out.add(head.request);
          deficit[h]--;
          if (deficit[h] <= 0) {
            endTurn();
          }
        } else {
          blocked[h] = true;
        }
        continue;
      }
      Entry borrowed = borrow(h, blocked, admit);
      if (borrowed == null) {
        break;
      }
      out.add(borrowed.request);
    }
    return out;
  }

  /** Removes {@code r} (e.g. its client went away); {@code false} if it was not parked. */
  public boolean remove(QueuedRequest r) {
    Entry e = entries.get(r);
    if (e == null) {
      return false;
    }
    unlink(e);
    return true;
  }

  /**
   * Removes every request with {@code enqueuedNanos < nanos} (timeouts) and returns them by
   * ascending {@code enqueuedNanos}, then offer order.
   */
  public List<QueuedRequest> removeEnqueuedBefore(long nanos) {
    List<QueuedRequest> out = new ArrayList<>();
    while (!byArrival.isEmpty() && byArrival.first().request.enqueuedNanos() < nanos) {
      Entry e = byArrival.first();
      unlink(e);
      out.add(e.request);
    }
    return out;
  }

  /** Parked requests. */
  public int size() {
    return entries.size();
  }

  /** Sum of {@link QueuedRequest#islTokens()} over parked requests. */
  public long pendingIslTokens() {
    return pendingIslTokens;
  }

  /** Parked requests per class, every configured class in config order (zeros included). */
  public Map<String, Integer> depthByClass() {
    Map<String, Integer> depths = new LinkedHashMap<>();
    for (int i = 0; i < classes.size(); i++) {
      depths.put(classes.get(i).name(), queues.get(i).size());
    }
    return Collections.unmodifiableMap(depths);
  }

  /** Whether {@code r} is parked. */
  public boolean contains(QueuedRequest r) {
    return entries.containsKey(r);
  }

  /** The class that serves {@code r}: its named class, or the default class. */
  public QueueClass classOf(QueuedRequest r) {
    return classes.get(indexOf(r));
  }

  public QueueConfig config() {
    return config;
  }

  private int indexOf(QueuedRequest r) {
    Integer i = classIndex.get(r.policyClass());
    return i != null ? i : classIndex.get(QueueConfig.DEFAULT_CLASS);
  }

  private void endTurn() {
    turnStarted = false;
    cursor = (cursor + 1) % classes.size();
  }

  private Entry borrow(int holder, boolean[] blocked, Predicate<QueuedRequest> admit) {
    int n = classes.size();
    for (int k = 0; k < n; k++) {
      int c = (borrowCursor + k) % n;
      if (c == holder || blocked[c] || queues.get(c).isEmpty()) {
        continue;
      }
      Entry head = queues.get(c).first();
      if (admit.test(head.request)) {
        unlink(head);
        borrowCursor = (c + 1) % n;
        return head;
      }
      blocked[c] = true;
    }
    return null;
  }

  private void unlink(Entry e) {
    queues.get(e.classIndex).remove(e);
    byArrival.remove(e);
    entries.remove(e.request);
    pendingIslTokens -= e.request.islTokens();
  }

  private static Comparator<Entry> order(QueuePolicy policy) {
    Comparator<Entry> strictFirst =
        (a, b) -> Long.compare(b.request.strictRank(), a.request.strictRank());
    switch (policy) {
      case LCFS:
        return strictFirst
            .thenComparingLong((Entry e) -> e.request.lcfsKey())
            .thenComparing((a, b) -> Long.compare(b.seq, a.seq));
      case WSPT:
        return strictFirst
            .thenComparingDouble((Entry e) -> e.request.wsptKey())
            .thenComparingLong(e -> e.request.fcfsKey())
            .thenComparingLong(e -> e.seq);
      case FCFS:
      default:
        return strictFirst
            .thenComparingLong((Entry e) -> e.request.fcfsKey())
            .thenComparingLong(e -> e.seq);
    }
  }

  /** A parked request; {@code seq} is its offer order, unique per queue. */
  private static final class Entry {
    final QueuedRequest request;
    final int classIndex;
    final long seq;

    Entry(QueuedRequest request, int classIndex, long seq) {
      this.request = request;
      this.classIndex = classIndex;
      this.seq = seq;
    }
  }
}
