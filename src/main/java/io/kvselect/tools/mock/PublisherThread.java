package io.kvselect.tools.mock;

import io.kvselect.server.events.Wakeup;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/**
 * One named thread and one ZMQ context that own the sockets of one or more
 * {@link KvEventPublisher}s: every socket of a hosted publisher is created, used and closed on
 * this thread (ZMQ's rule: a socket is used by one thread), other threads only enqueue commands.
 * Hosting many publishers on one thread and one context replaces a thread and a set of ZMQ I/O
 * threads per publisher with one of each per group.
 *
 * <p>Waiting: when there is nothing to send the thread blocks in one poll over every hosted
 * replay ROUTER and a wake-up pipe, with a {@value #IDLE_POLL_MS} ms timeout; a command enqueued
 * while it sleeps writes one byte to the pipe (only then, so a busy publisher pays no system call
 * per batch). While commands keep coming the ROUTERs are checked at least every
 * {@value #BUSY_ROUTER_CHECK_US} us, so a replay request is answered promptly in both states.
 *
 * <p>Threading: {@link #execute}, {@link #close} and the constructor may be called from any
 * thread; the command queue and {@link #sleeping} are the only state shared with other threads.
 * The poller and the list of hosted ROUTERs belong to this thread.
 */
public final class PublisherThread implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PublisherThread.class);
  static final long IDLE_POLL_MS = 1_000;
  static final long BUSY_ROUTER_CHECK_US = 1_000;

  /** A socket-owning action of a hosted publisher (runs on this thread). */
  interface Task {
    void run(PublisherThread owner) throws InterruptedException;
  }

  private final ZContext ctx;
  private final long idlePollMs;
  private final Thread thread;
  private final ConcurrentLinkedQueue<Task> queue = new ConcurrentLinkedQueue<>();

  /** True while this thread is about to block or blocked in poll; cleared by whoever wakes it. */
  private final AtomicBoolean sleeping = new AtomicBoolean();

  private final Wakeup wakeup = new Wakeup();
  private final CountDownLatch ended = new CountDownLatch(1);
  private volatile boolean stopping;
  // owned by this thread
  private final List<KvEventPublisher> routers = new ArrayList<>();
  private ZMQ.Poller poller;
  private boolean pollerStale = true;

  /** Starts a thread named {@code name} with a ZMQ context of {@code ioThreads} I/O threads. */
  public PublisherThread(String name, int ioThreads) {
    this(name, ioThreads, IDLE_POLL_MS);
  }

  /** As {@link #PublisherThread(String, int)}, blocking at most {@code idlePollMs} per idle poll. */
  PublisherThread(String name, int ioThreads, long idlePollMs) {
    this.idlePollMs = idlePollMs;
    if (ioThreads < 1) {
      throw new IllegalArgumentException("ioThreads must be >= 1: " + ioThreads);
    }
    this.ctx = new ZContext(ioThreads);
    ctx.setLinger(100);
    this.thread = new Thread(this::run, name);
    thread.setDaemon(true);
    thread.start();
  }

  /** Any thread: runs {@code task} on this thread after the tasks enqueued before it. */
  void execute(Task task) {
    queue.add(task);
    if (sleeping.get() && sleeping.compareAndSet(true, false)) {
      wakeup.signal();
    }
  }

  /** This thread: the context every hosted socket is created in. */
  ZContext context() {
    return ctx;
  }

  /** This thread: watch {@code p}'s replay ROUTER from now on. */
  void watch(KvEventPublisher p) {
    routers.add(p);
    pollerStale = true;
  }

  /** This thread: stop watching {@code p}'s replay ROUTER (before it is closed). */
  void unwatch(KvEventPublisher p) {
    if (routers.remove(p)) {
      pollerStale = true;
    }
  }

  /** The thread's name. */
  public String name() {
    return thread.getName();
  }

  /** Whether the calling thread is this one. */
  boolean isOwnThread() {
    return Thread.currentThread() == thread;
  }

  /**
   * Stops the thread after the tasks already enqueued (closing hosted publishers first is the
   * caller's job), then destroys the context; waits up to 5 seconds.
   */
  @Override
  public void close() {
    stopping = true;
    execute(owner -> {});
    try {
      if (!ended.await(5, TimeUnit.SECONDS)) {
        LOG.warn("{} did not stop within 5 s", thread.getName());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    try {
      loop();
    } catch (Throwable t) {
      LOG.error("{} failed", thread.getName(), t);
    } finally {
      if (poller != null) {
        poller.close();
      }
      ctx.close();
      wakeup.close();
      ended.countDown();
    }
  }

  private void loop() throws InterruptedException {
    long nextRouterCheck = 0;
    while (true) {
      boolean worked = runTasks();
      if (stopping && queue.isEmpty()) {
        return;
      }
      long now = System.nanoTime();
      if (worked) {
        if (now - nextRouterCheck < 0) {
          continue;
        }
        poll(0);
      } else {
        sleeping.set(true);
        if (!queue.isEmpty()) {
          sleeping.set(false);
          poll(0);
        } else {
          poll(idlePollMs);
          sleeping.set(false);
        }
      }
      nextRouterCheck = System.nanoTime() + TimeUnit.MICROSECONDS.toNanos(BUSY_ROUTER_CHECK_US);
    }
  }

  private boolean runTasks() throws InterruptedException {
    boolean any = false;
    for (Task t; (t = queue.poll()) != null; ) {
      any = true;
      t.run(this);
    }
    return any;
  }

  private void poll(long timeoutMs) {
    if (pollerStale) {
      if (poller != null) {
        poller.close();
      }
      poller = ctx.createPoller(routers.size() + 1);
      poller.register(wakeup.channel(), ZMQ.Poller.POLLIN);
      for (KvEventPublisher p : routers) {
        poller.register(p.router(), ZMQ.Poller.POLLIN);
      }
      pollerStale = false;
    }
    poller.poll(timeoutMs);
    if (poller.pollin(0)) {
      wakeup.clear();
    }
    for (int i = 0; i < routers.size(); i++) {
      if (poller.pollin(i + 1)) {
        routers.get(i).serveReplays();
      }
    }
  }

  /**
   * Blocks this thread, after the tasks enqueued before, until {@code released} counts down or
   * {@code maxNanos} have passed (nothing hosted on it sends meanwhile).
   */
  void pauseUntil(CountDownLatch released, long maxNanos) {
    execute(owner -> released.await(maxNanos, TimeUnit.NANOSECONDS));
  }
}
