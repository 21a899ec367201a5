package io.kvselect.tools.chaos;

import java.io.IOException;
import java.net.ConnectException;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * The client side of a run: {@code clients} threads, each taking a free session from a pool,
 * running one full lifecycle for its next turn ({@code select_and_reserve} with the session's
 * growing prompt, {@code prefill_complete}, {@code DELETE}, each to a random callable node) and
 * giving the session back. A {@code DELETE} that fails is retried (at most {@value #DELETE_TRIES}
 * tries); a {@code select_and_reserve} without an answer is followed by one cleanup {@code DELETE}
 * of its selection id, since it may have booked, and is freed again by {@link #settle} after the
 * load, since it may also book after that cleanup. The session pool and the tracker outlive phases;
 * {@link #run} drives one phase and returns when its threads have finished.
 */
final class LifecycleLoad {

  static final int DELETE_TRIES = 3;

  private final ChaosFleet fleet;
  private final Duration timeout;
  private final BindingTracker tracker = new BindingTracker();
  private final BlockingQueue<Session> free;

  /** Every session of the pool, by id (immutable; a session's turn count stays with its holder). */
  private final Map<String, Session> all;

  private final long seed;
  private int phaseNumber;

  /** One conversation: its id and the number of turns it has started. Owned by the thread holding it. */
  static final class Session {
    final String id;
    final int number;
    int turns;

    Session(String id, int number) {
      this.id = id;
      this.number = number;
    }

    /** The prompt of turn {@code turn}: a fixed per-session sequence, 64 tokens longer each turn, at most {@code max}. */
    static String tokens(int number, int turn, int max) {
      int len = Math.min(max, 128 + 64 * turn);
      StringBuilder sb = new StringBuilder(len * 6);
      for (int j = 0; j < len; j++) {
        if (j > 0) {
          sb.append(',');
        }
        sb.append(1 + Math.floorMod(number * 1_000_003L + j * 7919L, 50_000));
      }
      return sb.toString();
    }
  }

  LifecycleLoad(ChaosFleet fleet, Duration timeout, int sessions, String runId, long seed) {
    this.fleet = fleet;
    this.timeout = timeout;
    this.seed = seed;
    this.free = new ArrayBlockingQueue<>(sessions);
    Map<String, Session> byId = new java.util.LinkedHashMap<>();
    for (int s = 0; s < sessions; s++) {
      Session session = new Session("chaos-" + runId + "-s" + s, s);
      free.add(session);
      byId.put(session.id, session);
    }
    this.all = java.util.Collections.unmodifiableMap(byId);
  }

  /**
   * Whether the nodes agree on the bindings: every session that has had an answered turn is asked
   * with {@code POST /select} (its first turn's prompt, query only) on every callable node, 8 at a
   * time. A session agrees when every node answered 200 with one worker.
   */
  Agreement agreement(Duration callTimeout) throws InterruptedException {
    List<ChaosNode> nodes = fleet.nodes.stream().filter(ChaosNode::callable).toList();
    List<String> ids = new ArrayList<>(tracker.sessions());
    java.util.Collections.sort(ids);
    java.util.concurrent.ExecutorService pool =
        java.util.concurrent.Executors.newFixedThreadPool(8);
    try {
      List<java.util.concurrent.Future<String>> answers = new ArrayList<>();
      for (String id : ids) {
        Session s = all.get(id);
        String body =
            "{\"session_id\":\""
                + id
                + "\",\"token_ids\":["
                + Session.tokens(s.number, 0, 2048)
                + "]}";
        answers.add(
            pool.submit(
                () -> {
                  List<String> seen = new ArrayList<>();
                  Set<String> workers = new java.util.HashSet<>();
                  for (ChaosNode n : nodes) {
                    String w = answeredWorker(n, body, callTimeout);
                    seen.add(n.name() + "=" + w);
                    workers.add(w);
                  }
                  boolean one =
                      workers.size() == 1 && !workers.iterator().next().startsWith("none");
                  return one ? null : id + ": " + String.join(", ", seen);
                }));
      }
      List<String> disagreeing = new ArrayList<>();
      for (java.util.concurrent.Future<String> f : answers) {
        try {
          String d = f.get();
          if (d != null) {
            disagreeing.add(d);
          }
        } catch (java.util.concurrent.ExecutionException e) {
          disagreeing.add("check failed: " + e.getCause());
        }
      }
      return new Agreement(
          ids.size(),
          ids.size() - disagreeing.size(),
          nodes.size(),
          disagreeing.subList(0, Math.min(3, disagreeing.size())));
    } finally {
      pool.shutdownNow();
    }
  }

  /** The worker {@code node} answers for a {@code /select}, or {@code none} (non-200, no answer). */
  private String answeredWorker(ChaosNode node, String body, Duration callTimeout)
      throws InterruptedException {
    try {
      ChaosFleet.Answer a = fleet.call(node, "POST", "/select", body, callTimeout);
      return a.status() == 200
          ? Long.toString(fleet.readWorker(a.body()))
          : "none (" + a.status() + ")";
    } catch (IOException e) {
      return "none (" + e.getClass().getSimpleName() + ")";
    }
  }

  /**
   * The nodes' agreement on the bindings: of {@code sessions} asked on {@code nodes} nodes,
   * {@code agreed} had one worker on all; up to three {@code samples} of the others;
   * {@code afterUndoSecs} when the comparison ended after a fault's undo (negative for none).
   */
  record Agreement(
      int sessions, int agreed, int nodes, List<String> samples, double afterUndoSecs) {
    Agreement(int sessions, int agreed, int nodes, List<String> samples) {
      this(sessions, agreed, nodes, samples, -1);
    }

    boolean complete() {
      return agreed == sessions;
    }

    Agreement after(double secs) {
      return new Agreement(sessions, agreed, nodes, samples, secs);
    }

    String cell() {
      return agreed
          + " of "
          + sessions
          + " on all "
          + nodes
          + " nodes"
          + (afterUndoSecs < 0
              ? ""
              : String.format(Locale.ROOT, ", %.1f s after the undo", afterUndoSecs))
          + (samples.isEmpty() ? "" : " (e.g. " + String.join("; ", samples) + ")");
    }
  }

  /** A phase's running client threads. */
  final class Running {
    private final List<Thread> threads;
    private volatile boolean stopping;

    private Running(List<Thread> threads) {
      this.threads = threads;
    }

    /** Lets every thread finish its lifecycle and waits for them (each lifecycle is bounded by its timeouts). */
    void stop() throws InterruptedException {
      stopping = true;
      long bound = timeout.toMillis() * (3 + DELETE_TRIES) + 10_000;
      for (Thread t : threads) {
        t.join(bound);
        if (t.isAlive()) {
          t.interrupt();
          t.join(5_000);
        }
      }
    }
  }

  /** Starts {@code clients} threads recording into {@code stats} until {@link Running#stop}. */
  Running start(PhaseStats stats, int clients) {
    phaseNumber++;
    List<Thread> threads = new ArrayList<>();
    Running running = new Running(threads);
    for (int c = 0; c < clients; c++) {
      Random rnd = new Random(seed * 1_000_003L + phaseNumber * 997L + c);
      Thread t = new Thread(() -> loop(running, stats, rnd), "chaos-client-" + c);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
    return running;
  }

  private void loop(Running running, PhaseStats stats, Random rnd) {
    try {
      while (!running.stopping) {
        Session s = free.poll(100, TimeUnit.MILLISECONDS);
        if (s == null) {
          continue;
        }
        try {
          lifecycle(s, stats, rnd);
        } finally {
          free.add(s);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** One turn of {@code s}; counts it completed only when all three calls answered 2xx. */
  private void lifecycle(Session s, PhaseStats stats, Random rnd) throws InterruptedException {
    int turn = s.turns++;
    String selection = s.id + "-t" + turn;
    String body =
        "{\"session_id\":\""
            + s.id
            + "\",\"selection_id\":\""
            + selection
            + "\",\"token_ids\":["
            + Session.tokens(s.number, turn, 2048)
            + "]}";
    long t0 = System.nanoTime();
    Outcome select = call(rnd, "POST", "/select_and_reserve", body);
    if (select == null) {
      return;
    }
    stats.selectLatency(t0, System.nanoTime() - t0);
    if (!select.ok()) {
      stats.failures.fail("select", select.label, select.body);
      if (select.unanswered()) {
        stats.unsettled.add(selection);
        Outcome cleanup = call(rnd, "DELETE", "/reservations/" + selection, null);
        if (cleanup != null && !cleanup.ok() && !cleanup.label.equals("404")) {
          stats.failures.fail("cleanup", cleanup.label, cleanup.body);
        }
      }
      return;
    }
    try {
      stats.turn(tracker.observe(s.id, fleet.readWorker(select.body)));
    } catch (IOException e) {
      stats.failures.fail("select", "unparsable 200");
    }
    Outcome prefill = call(rnd, "POST", "/reservations/" + selection + "/prefill_complete", null);
    boolean ok = prefill != null && prefill.ok();
    if (prefill != null && !ok) {
      stats.failures.fail("prefill", prefill.label, prefill.body);
    }
    for (int attempt = 0; attempt < DELETE_TRIES; attempt++) {
      Outcome delete = call(rnd, "DELETE", "/reservations/" + selection, null);
      if (delete == null) {
        continue;
      }
      if (delete.ok()) {
        if (ok) {
          stats.lifecycles.increment();
        }
        return;
      }
      stats.failures.fail("delete", delete.label, delete.body);
      if (!delete.retryable()) {
        if (attempt == 0 && delete.label.equals("404")) {
          stats.denied.add(selection);
        }
        return;
      }
    }
    stats.unsettled.add(selection);
  }

  /**
   * After the phase's load stopped: {@code DELETE} of every unsettled selection id (timeout 10 s,
   * at most {@value #DELETE_TRIES} tries while the answer is neither 2xx nor 404); returns the last
   * outcome of each, counted ({@code 200}: it had booked and is freed now; {@code 404}: no booking).
   */
  Map<String, Long> settle(PhaseStats stats) throws InterruptedException {
    return deleteEach(stats.unsettled);
  }

  /** {@link #settle} for the {@link PhaseStats#denied} selection ids. */
  Map<String, Long> retryDenied(PhaseStats stats) throws InterruptedException {
    return deleteEach(stats.denied);
  }

  private Map<String, Long> deleteEach(Iterable<String> selections) throws InterruptedException {
    Map<String, Long> outcomes = new TreeMap<>();
    Random rnd = new Random(seed);
    Duration longer = Duration.ofSeconds(10);
    Set<String> distinct = new LinkedHashSet<>();
    selections.forEach(distinct::add);
    for (String selection : distinct) {
      String last = "no callable node";
      for (int attempt = 0; attempt < DELETE_TRIES; attempt++) {
        Outcome delete = call(rnd, "DELETE", "/reservations/" + selection, null, longer);
        if (delete == null) {
          continue;
        }
        last = delete.label;
        if (delete.ok() || !delete.retryable()) {
          break;
        }
      }
      outcomes.merge(last, 1L, Long::sum);
    }
    return outcomes;
  }

  /** A call's result: 2xx or not, its label (status code, timeout, refused, io) and body. */
  private record Outcome(boolean ok, String label, String body) {
    boolean retryable() {
      return !label.startsWith("4");
    }

    /** No HTTP answer: the call may have been applied. */
    boolean unanswered() {
      return label.equals(CallCounts.TIMEOUT) || label.equals("io");
    }
  }

  /** One call to a random callable node, or null when none is callable (then after a short pause). */
  private Outcome call(Random rnd, String method, String path, String body)
      throws InterruptedException {
    return call(rnd, method, path, body, timeout);
  }

  private Outcome call(Random rnd, String method, String path, String body, Duration timeout)
      throws InterruptedException {
    ChaosNode node = fleet.randomCallable(rnd);
    if (node == null) {
      Thread.sleep(50);
      return null;
    }
    try {
      ChaosFleet.Answer a = fleet.call(node, method, path, body, timeout);
      boolean ok = a.status() / 100 == 2;
      return new Outcome(ok, Integer.toString(a.status()), a.body());
    } catch (HttpTimeoutException e) {
      return new Outcome(false, CallCounts.TIMEOUT, "");
    } catch (ConnectException e) {
      return new Outcome(false, "refused", "");
    } catch (IOException e) {
      return new Outcome(false, "io", "");
    }
  }
}
