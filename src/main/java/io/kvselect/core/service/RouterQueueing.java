package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.queue.QueueClass;
import io.kvselect.core.queue.QueueRejection;
import io.kvselect.core.queue.QueuedRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Dynamo's router queue around a partition's selections: a request whose eligible ranks are all
 * busy (active prefill tokens above {@code threshold x max_num_batched_tokens}) waits in the
 * partition's {@link io.kvselect.core.queue.RouterQueue} and is served in policy order when
 * capacity frees ({@link #drain}: a prefill completes, a booking is freed or expires, the catalog
 * changes). Serving a request re-runs its choice (and admission, when it books) under the
 * partition lock with refreshed overlap and load, so the response reflects the dequeue-time
 * values. A request that waits longer than the timeout, or is refused by a queue limit, fails
 * with 429 and Dynamo's {@code details}; a request whose caller went away leaves the queue.
 *
 * <p>Ownership: the queue, the waiters and the "continuation scheduled" mark of a partition are
 * owned by its lock. Waiters are completed outside the lock. Timeouts are timed by the JDK's delayed executor (plain
 * Java, no scheduler of ours) and run on the {@link #continueOn continuation executor} when there is one (a node's
 * worker pool: on a machine of one or two cores the JDK's default would start a thread per timeout, thousands when a
 * full queue times out at once); they take the lock and fail the waiter only if it is still queued.
 */
final class RouterQueueing {

  /** What a parked request resumes with: the choice made (and admitted) when it was served. */
  static final class Waiter {
    final QueuedRequest request;
    final Supplier<Selector.Choice> attempt;
    final CompletableFuture<Selector.Choice> served = new CompletableFuture<>();
    Selector.Choice choice;
    RuntimeException failure;

    Waiter(QueuedRequest request, Supplier<Selector.Choice> attempt) {
      this.request = request;
      this.attempt = attempt;
    }
  }

  /**
   * The most requests one slice of a drain serves: 64 selections (each re-run under the lock)
   * plus 64 answers take a few milliseconds at most, and 10,000 parked requests become about
   * 160 short tasks instead of one of about a second ({@code bin/kvselect-queueload
   * wakeup}, docs/benchmarks.md).
   */
  static final int SLICE = 64;

  private final Duration timeout;

  /** Where drains continue after their first slice; null: on the caller's thread. Set once by the wiring. */
  private volatile Executor continuation;

  private final List<QueueObserver> observers = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final QueueObserver observer =
      (partition, cls, waited, outcome) -> {
        for (QueueObserver o : observers) {
          o.dequeued(partition, cls, waited, outcome);
        }
      };

  RouterQueueing(Duration timeout) {
    this.timeout = timeout;
  }

  /** Where a drain's further slices run (see {@link #drain}); null runs them on the caller's thread. */
  void continueOn(Executor e) {
    this.continuation = e;
  }

  void addObserver(QueueObserver o) {
    observers.add(o);
  }

  /** The threshold that makes a rank busy for this request, or null when it never queues. */
  static Double threshold(Partition p, RouterConfig cfg, SelectRequest req) {
    QueueClass c = p.queue.config().classFor(req.policyClass());
    return c.prefillBusyThreshold() != null ? c.prefillBusyThreshold() : cfg.queue().threshold();
  }

  /** True when every rank is busy at {@code threshold}. Caller holds {@code p.lock}. */
  static boolean allBusyLocked(
      Partition p, Partition.Members m, List<WorkerRank> ranks, double threshold) {
    for (WorkerRank r : ranks) {
      WorkerRecord w = m.schedulableWorker(r.workerId());
      long capacity =
          w.spec().maxNumBatchedTokens() != null
              ? w.spec().maxNumBatchedTokens()
              : Selector.DEFAULT_PREFILL_CAPACITY;
      if (p.load.load(r).activePrefillTokens() <= threshold * capacity) {
        return false;
      }
    }
    return true;
  }

  /**
   * Parks a request (caller holds {@code p.lock}); fails with 429 when a queue limit refuses it.
   * {@code attempt} is run under the lock when the request is served: it returns the choice, or
   * null while every rank is still busy.
   */
  Waiter parkLocked(
      Partition p,
      SelectRequest req,
      long isl,
      long uncached,
      long nowNanos,
      Supplier<Selector.Choice> attempt) {
    QueuedRequest q =
        new QueuedRequest(
            req.policyClass(),
            isl,
            uncached,
            req.priorityJump() == null ? 0.0 : req.priorityJump(),
            req.strictPriority(),
            nowNanos);
    QueueRejection rej = p.queue.offer(q, p.members().pool().workers().size());
    if (rej != null) {
      observer.dequeued(p.key.toString(), rej.policyClass(), 0, "rejected");
      throw rejected(rej, "the router queue of " + p.key + " is full");
    }
    Waiter w = new Waiter(q, attempt);
    p.waiters.put(q, w);
    Executor on = continuation;
    (on == null
            ? CompletableFuture.delayedExecutor(timeout.toNanos(), TimeUnit.NANOSECONDS)
            : CompletableFuture.delayedExecutor(timeout.toNanos(), TimeUnit.NANOSECONDS, on))
        .execute(() -> timeOut(p, w));
    return w;
  }

  static SelectionException rejected(QueueRejection rej, String message) {
    Map<String, Object> details = new LinkedHashMap<>();
    details.put("policy_class", rej.policyClass());
    details.put("limit_kind", rej.limitKind());
    details.put("current", rej.current());
    details.put("limit", rej.limit());
    return new SelectionException(
        ErrorCode.OVERLOADED,
        message + " (" + rej.limitKind() + ": " + rej.current() + " of " + rej.limit() + ")",
        details);
  }

  /** Takes {@code w} out of the queue if it is still waiting; true if it was. */
  private static boolean take(Partition p, Waiter w) {
    synchronized (p.lock) {
      if (!p.queue.remove(w.request)) {
        return false;
      }
      p.waiters.remove(w.request);
      return true;
    }
  }

  private void timeOut(Partition p, Waiter w) {
    if (take(p, w)) {
      String cls = p.queue.config().classFor(w.request.policyClass()).name();
      long waited = timeout.toNanos();
      observer.dequeued(p.key.toString(), cls, waited, "timeout");
      w.served.completeExceptionally(
          rejected(
              new QueueRejection(cls, "timeout", timeout.toMillis(), timeout.toMillis()),
              "every eligible worker of "
                  + p.key
                  + " stayed busy for "
                  + timeout.toMillis()
                  + " ms"));
    }
  }

  /** The caller went away: the request leaves the queue if it is still waiting. */
  void cancel(Partition p, Waiter w, long nowNanos) {
    if (take(p, w)) {
      observer.dequeued(
          p.key.toString(),
          p.queue.config().classFor(w.request.policyClass()).name(),
          nowNanos - w.request.enqueuedNanos(),
          "cancelled");
      w.served.completeExceptionally(
          SelectionException.notReady("the request was cancelled while queued"));
    }
  }

  /** Fails every request waiting in {@code p}'s queue with 503 and {@code message}; returns how many. */
  int rejectAll(Partition p, long nowNanos, String message) {
    List<Waiter> out = new ArrayList<>();
    synchronized (p.lock) {
      for (Waiter w : List.copyOf(p.waiters.values())) {
        if (p.queue.remove(w.request)) {
          p.waiters.remove(w.request);
          out.add(w);
        }
      }
    }
    for (Waiter w : out) {
      observer.dequeued(
          p.key.toString(),
          p.queue.config().classFor(w.request.policyClass()).name(),
          nowNanos - w.request.enqueuedNanos(),
          "rejected");
      w.served.completeExceptionally(SelectionException.notReady(message));
    }
    return out.size();
  }

  /** Serves what a partition's freed capacity allows from its router queue (null: nothing). */
  void drain(Partition p) {
    drain(p, System.nanoTime());
  }

  /** After a catalog change or expiry: every partition's queue gets a chance. */
  void drainAll(Iterable<Partition> partitions) {
    for (Partition p : partitions) {
      drain(p);
    }
  }

  /**
   * Serves what the freed capacity allows, in policy order, at most {@link #SLICE} requests per
   * slice; completes the waiters outside the lock. The first slice runs on the caller's thread (a
   * single freed request is served at once); while a full slice leaves requests waiting, the rest
   * continue as further slices on the {@link #continueOn continuation executor}, one at a time per
   * partition, so that no caller (an event loop answering a {@code PATCH}, a free, a peer's
   * digest) serves a whole backlog in one task. Without a continuation executor the slices run in
   * a loop on the caller's thread.
   */
  void drain(Partition p, long nowNanos) {
    if (p == null) {
      return;
    }
    Executor next = continuation;
    if (next == null) {
      while (slice(p, nowNanos, false)) {
        nowNanos = System.nanoTime();
      }
      return;
    }
    if (slice(p, nowNanos, true)) {
      try {
        next.execute(
            () -> {
              synchronized (p.lock) {
                p.drainScheduled = false;
              }
              drain(p, System.nanoTime());
            });
      } catch (RuntimeException e) {
        // the executor refused (it is closing): finish here rather than strand the waiters
        synchronized (p.lock) {
          p.drainScheduled = false;
        }
        while (slice(p, System.nanoTime(), false)) {
          // bounded by the queue's size
        }
      }
    }
  }

  /**
   * Serves one slice of {@code p}'s queue and completes its waiters. Returns true when the slice
   * was full, requests still wait and (with {@code schedule}) no continuation was scheduled yet:
   * the caller must continue, and with {@code schedule} this call has marked the partition as
   * having one scheduled.
   */
  private boolean slice(Partition p, long nowNanos, boolean schedule) {
    List<Waiter> ready = new ArrayList<>();
    boolean more;
    synchronized (p.lock) {
      if (p.queue.size() == 0) {
        return false;
      }
      for (QueuedRequest q :
          p.queue.drain(
              q -> {
                Waiter w = p.waiters.get(q);
                try {
                  w.choice = w.attempt.get();
                } catch (RuntimeException e) {
                  w.failure = e;
                  return true;
                }
                return w.choice != null;
              },
              SLICE)) {
        ready.add(p.waiters.remove(q));
      }
      more = ready.size() == SLICE && p.queue.size() > 0;
      if (more && schedule) {
        more = !p.drainScheduled;
        p.drainScheduled = true;
      }
    }
    for (Waiter w : ready) {
      observer.dequeued(
          p.key.toString(),
          p.queue.config().classFor(w.request.policyClass()).name(),
          nowNanos - w.request.enqueuedNanos(),
          w.failure == null ? "served" : "failed");
      if (w.failure != null) {
        w.served.completeExceptionally(w.failure);
      } else {
        w.served.complete(w.choice);
      }
    }
    return more;
  }

  /** Completes when the waiter is served (with its choice) or fails. */
  static CompletionStage<Selector.Choice> served(Waiter w) {
    return w.served;
  }
}
