package io.kvselect.core.kvc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.budget.CallBudget;
import io.kvselect.core.index.WorkerRank;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What {@link BudgetedKvcState} answers when the owner of a key is silent: the near cache's
 * snapshot (bounded, least recently used dropped), the admission it made itself (one more turn,
 * the new pin), and that every silent call is counted; and, when the owner answers, that every
 * call reaches it.
 */
class BudgetedKvcStateNearCacheTest {

  private static final WorkerRank A = new WorkerRank(1, 0);
  private static final WorkerRank B = new WorkerRank(2, 0);

  private final LocalKvcState table = new LocalKvcState();
  private final BudgetedKvcStateTest.Gate gate = new BudgetedKvcStateTest.Gate(table);
  private final CallBudget budget =
      new CallBudget(
          Duration.ofMillis(30),
          Duration.ZERO,
          Runnable::run,
          CallBudget.Routes.byOwner(k -> "the-owner"));

  private static <T> T get(CompletionStage<T> s) throws Exception {
    return s.toCompletableFuture().get(5, TimeUnit.SECONDS);
  }

  @Test
  void theNearCacheNeedsRoomForOneSession() {
    assertThrows(IllegalArgumentException.class, () -> new BudgetedKvcState(table, budget, 0));
    BudgetedKvcState one = new BudgetedKvcState(table, budget, 1);
    assertSame(budget, one.budget());
    assertEquals(0, one.nearCacheSize());
  }

  @Test
  void keysNeverCollideAcrossPartitionAndSession() {
    assertEquals("3:m/gs1", BudgetedKvcState.key("m/g", "s1"));
    assertNotEquals(BudgetedKvcState.key("ab", "c"), BudgetedKvcState.key("a", "bc"));
  }

  @Test
  void aHealthyOwnerReceivesEveryCall() throws Exception {
    BudgetedKvcState state = new BudgetedKvcState(gate, budget, 10);
    get(state.admitted("p", "s", A, ResetScope.WINNER));
    get(state.rejected("p", "s", B));
    get(state.fallback("p", "s", B));
    get(state.finished("p", A));
    assertEquals(0L, get(state.nextRoundRobin("p", "decode")));
    assertEquals(1L, get(state.nextRoundRobin("p", "decode")));
    KvcSnapshot s = get(table.snapshot("p", "s"));
    assertEquals(A, s.pin());
    assertEquals(Map.of(B, 1), s.rejects());
    assertEquals(Map.of(B, 1L), s.inflight(), "A's admission finished, B's fallback is in flight");
    assertEquals(2, s.turns());
    assertEquals(1, state.sessions(), "the delegate's count");
    get(state.removeWorker(1));
    assertNull(get(table.snapshot("p", "s")).pin(), "the removal reached the owner");
    assertEquals(0, state.fallbacks());
  }

  @Test
  void theNearCacheKeepsTheMostRecentlyUsedSessions() throws Exception {
    BudgetedKvcState state = new BudgetedKvcState(gate, budget, 2);
    get(state.admitted("p", "s1", A, ResetScope.WINNER));
    get(state.admitted("p", "s2", B, ResetScope.WINNER));
    get(state.snapshot("p", "s1"));
    get(state.admitted("p", "s3", A, ResetScope.WINNER));
    assertEquals(2, state.nearCacheSize(), "bounded at two");

    gate.holding = true;
    assertEquals(A, get(state.snapshot("p", "s1")).pin(), "read last: kept");
    assertNull(get(state.snapshot("p", "s2")).pin(), "least recently used: dropped");
    assertEquals(A, get(state.snapshot("p", "s3")).pin());
    assertEquals(3, state.fallbacks());
    gate.open();
  }

  @Test
  void whileTheOwnerIsSilentTheNodeRemembersItsOwnAdmissions() throws Exception {
    BudgetedKvcState state = new BudgetedKvcState(gate, budget, 10);
    get(state.admitted("p", "s", A, ResetScope.WINNER));
    get(state.finished("p", A));
    KvcSnapshot seen = get(state.snapshot("p", "s"));
    assertEquals(1, seen.turns());

    gate.holding = true;
    assertEquals(A, get(state.admitted("p", "s", B, ResetScope.WINNER)), "the pin it last saw");
    KvcSnapshot mine = get(state.snapshot("p", "s"));
    assertEquals(B, mine.pin(), "its own admission is the pin now");
    assertEquals(2, mine.turns(), "and one more turn");
    assertEquals(Map.of(), mine.rejects(), "a success leaves no known reject");
    assertNull(
        get(state.admitted("p", "unseen", A, ResetScope.WINNER)),
        "no pin seen: no migration reported");
    assertNull(get(state.rejected("p", "s", A)));
    assertNull(get(state.fallback("p", "s", A)));
    assertNull(get(state.removeWorker(3)));
    assertEquals(6, state.fallbacks());
    gate.open();
    assertEquals(B, get(table.snapshot("p", "s")).pin(), "the held calls landed");
  }

  @Test
  void aPeekReadsTheCursorWithoutMovingItFromTheOwnerOrLocally() throws Exception {
    BudgetedKvcState state = new BudgetedKvcState(gate, budget, 10);
    assertEquals(0L, get(state.peekRoundRobin("p", "decode")), "a cursor never taken starts at 0");
    get(state.nextRoundRobin("p", "decode"));
    get(state.nextRoundRobin("p", "decode"));
    assertEquals(2L, get(state.peekRoundRobin("p", "decode")), "the owner's next value");
    assertEquals(2L, get(state.peekRoundRobin("p", "decode")), "a peek moves nothing");
    assertEquals(0L, get(state.peekRoundRobin("p", "prefill")), "cursors are per pool");
    assertEquals(0, state.fallbacks());

    gate.holding = true;
    long local = get(state.nextRoundRobin("p", "decode"));
    assertEquals(
        local + 1,
        get(state.peekRoundRobin("p", "decode")),
        "a silent owner: the local cursor's next");
    assertEquals(
        local + 1, get(state.nextRoundRobin("p", "decode")), "and the peek did not take it");
    assertEquals(3, state.fallbacks());
    gate.open();
  }
}
