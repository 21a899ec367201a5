package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What every {@link KvcState} must do, run against each implementation (the local one here, the
 * Hazelcast one in {@code server/cluster}): one state whichever handle asks (three members of a
 * cluster; the same object locally), the counters of Algorithm 3 as specified, and every call
 * atomic under concurrent dispatches. Every test works in a partition of its own.
 */
public abstract class KvcStateContract {

  protected static final WorkerRank W1 = new WorkerRank(1, 0);
  protected static final WorkerRank W2 = new WorkerRank(2, 0);
  protected static final WorkerRank W3 = new WorkerRank(3, 0);

  private final ExecutorService callers = Executors.newFixedThreadPool(3);

  /** A handle on the state under test; {@code handle} 0, 1, 2 name three members of a cluster. */
  protected abstract KvcState state(int handle);

  @AfterEach
  void stopCallers() throws InterruptedException {
    callers.shutdownNow();
    callers.awaitTermination(10, TimeUnit.SECONDS);
  }

  protected static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(60, TimeUnit.SECONDS);
  }

  protected static String partition() {
    return "p-" + UUID.randomUUID();
  }

  @Test
  public void aPeekReadsTheNextCursorValueOnEveryHandleAndMovesNothing() throws Exception {
    String p = partition();
    assertEquals(0L, get(state(0).peekRoundRobin(p, "decode")), "an unknown partition starts at 0");
    assertEquals(0L, get(state(1).nextRoundRobin(p, "decode")));
    assertEquals(1L, get(state(1).nextRoundRobin(p, "decode")));
    for (int h = 0; h < 3; h++) {
      assertEquals(2L, get(state(h).peekRoundRobin(p, "decode")), "handle " + h);
      assertEquals(2L, get(state(h).peekRoundRobin(p, "decode")), "a peek moved the cursor");
    }
    assertEquals(0L, get(state(2).peekRoundRobin(p, "prefill")), "each pool has its own cursor");
    assertEquals(2L, get(state(2).nextRoundRobin(p, "decode")), "the next take is what was peeked");
  }

  @Test
  public void everyHandleSeesOnePinOneSetOfRejectsAndOneTurnCount() throws Exception {
    String p = partition();
    KvcState a = state(0);
    KvcState b = state(1);
    KvcState c = state(2);
    assertEquals(KvcSnapshot.EMPTY, get(a.snapshot(p, "s")), "nothing before the first call");
    assertNull(get(a.admitted(p, "s", W1, ResetScope.WINNER)), "no pin before the first admission");
    get(b.rejected(p, "s", W1));
    get(c.rejected(p, "s", W1));
    get(c.rejected(p, "s", W2));
    KvcSnapshot seen = get(b.snapshot(p, "s"));
    assertEquals(W1, seen.pin());
    assertEquals(Map.of(W1, 2, W2, 1), seen.rejects(), "rejects from every handle add up");
    assertEquals(1, seen.turns());
    assertEquals(Map.of(W1, 1L), seen.inflight());

    assertEquals(
        W1,
        get(c.admitted(p, "s", W2, ResetScope.WINNER)),
        "the migration reports the previous pin");
    KvcSnapshot moved = get(a.snapshot(p, "s"));
    assertEquals(W2, moved.pin(), "a migration decided on one handle is the pin on the others");
    assertEquals(
        Map.of(W1, 2),
        moved.rejects(),
        "reset-on-success (winner) clears the admitting worker only");
    get(b.fallback(p, "s", W3));
    assertEquals(W2, get(b.snapshot(p, "s")).pin(), "a fallback leaves the pin");
    assertEquals(W2, get(b.admitted(p, "s", W1, ResetScope.ALL)));
    KvcSnapshot reset = get(c.snapshot(p, "s"));
    assertEquals(Map.of(), reset.rejects(), "reset-on-success (all) clears every counter");
    assertEquals(4, reset.turns());
    assertEquals(Map.of(W1, 2L, W2, 1L, W3, 1L), reset.assigned());

    get(a.finished(p, W1));
    get(b.finished(p, W1));
    get(c.finished(p, W1));
    assertEquals(
        Map.of(W2, 1L, W3, 1L), get(a.snapshot(p, "s")).inflight(), "in-flight never goes below 0");
    assertEquals(KvcSnapshot.EMPTY, get(a.snapshot(p + "x", "s")), "partitions are separate");

    get(c.rejected(p, "s", W2));
    get(c.removeWorker(1));
    KvcSnapshot gone = get(b.snapshot(p, "s"));
    assertNull(gone.pin(), "a removed worker is no pin");
    assertEquals(Map.of(W2, 1), gone.rejects());
    assertEquals(Map.of(W2, 1L, W3, 1L), gone.assigned());
  }

  @Test
  public void concurrentDispatchesFromThreeHandlesLoseNoUpdate() throws Exception {
    String p = partition();
    List<KvcState> states = List.of(state(0), state(1), state(2));
    List<KvcDispatcher> dispatchers = new ArrayList<>();
    for (KvcState s : states) {
      dispatchers.add(new KvcDispatcher(s));
    }
    List<WorkerRank> decode = List.of(W1, W2);
    // W1 refuses everything, W2 admits everything: each dispatch is at most one reject, then an
    // admission
    Admission admission =
        (d, r) ->
            CompletableFuture.completedFuture(
                d.equals(W1)
                    ? AdmitDecision.reject(AdmitDecision.NO_CAPACITY)
                    : AdmitDecision.admit(KvcMode.RESEED));
    KvcParams params = KvcParams.defaults().withTauReject(1_000_000).withEpsilon(2);
    int perHandle = 40;
    String[] sessions = {"s0", "s1", "s2", "s3"};
    List<CompletableFuture<KvcOutcome>> all = new ArrayList<>();
    List<CompletableFuture<Long>> cursors = new ArrayList<>();
    for (int i = 0; i < perHandle; i++) {
      for (int m = 0; m < 3; m++) {
        String s = sessions[(i + m) % sessions.length];
        KvcDispatcher d = dispatchers.get(m);
        KvcState st = states.get(m);
        all.add(
            CompletableFuture.supplyAsync(
                    () ->
                        d.dispatch(
                            p,
                            new KvcRequest(s, 1, 100, 10),
                            params,
                            decode,
                            r -> 0,
                            List.of(W3),
                            admission,
                            true),
                    callers)
                .thenCompose(x -> x));
        cursors.add(
            CompletableFuture.supplyAsync(() -> st.nextRoundRobin(p, "probe"), callers)
                .thenCompose(x -> x));
      }
    }
    CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    CompletableFuture.allOf(cursors.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
    int n = perHandle * 3;
    for (CompletableFuture<KvcOutcome> o : all) {
      assertEquals(W2, o.get().decode());
    }
    int turns = 0;
    int rejects = 0;
    for (String s : sessions) {
      KvcSnapshot snap = get(states.get(1).snapshot(p, s));
      assertEquals(W2, snap.pin());
      turns += snap.turns();
      rejects += snap.rejects().getOrDefault(W1, 0);
      assertEquals(Map.of(W2, (long) n), snap.assigned());
      assertEquals(Map.of(W2, (long) n), snap.inflight());
    }
    assertEquals(n, turns, "every admission counted one turn");
    // how many dispatches probed W1 first depends on whether they read the session before or after
    // a concurrent one pinned it on W2; every probe that was refused must be counted, none lost
    long probed = 0;
    for (CompletableFuture<KvcOutcome> o : all) {
      probed += o.get().attempts().stream().filter(a -> a.rank().equals(W1)).count();
    }
    assertTrue(probed > 0, "some dispatches probed the refusing worker");
    assertEquals(probed, rejects, "every reject counted");
    Set<Long> values = new HashSet<>();
    for (CompletableFuture<Long> c : cursors) {
      values.add(c.get());
    }
    assertEquals(n, values.size(), "each cursor value handed out once");
    assertTrue(values.contains(0L) && values.contains((long) n - 1));
  }
}
