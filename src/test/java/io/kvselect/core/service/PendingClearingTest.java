package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.approximate;
import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.req;
import static io.kvselect.core.service.ServiceFixture.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kvselect.core.pending.LocalPendingStore;
import io.kvselect.core.pending.PendingEntry;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * A booking drops a cached selection of its id only when one can exist: the client named the id
 * (in a clustered node each removal is a round trip to the entry's owner). A generated id is
 * never looked up.
 */
class PendingClearingTest {

  /** A local store that records the keys it was asked to remove. Test thread only. */
  private static final class Counting implements PendingStore<Object, Object> {
    final PendingStore<Object, Object> inner;
    final List<Object> removed = new ArrayList<>();

    Counting(MutableClock clock) {
      inner = new LocalPendingStore<>(clock, Duration.ofSeconds(60), 1_000, 1 << 20);
    }

    @Override
    public CompletionStage<Long> put(Object key, Object value, long bytes) {
      return inner.put(key, value, bytes);
    }

    @Override
    public CompletionStage<PendingEntry<Object>> peek(Object key) {
      return inner.peek(key);
    }

    @Override
    public CompletionStage<Boolean> removeIfGeneration(Object key, long generation) {
      return inner.removeIfGeneration(key, generation);
    }

    @Override
    public CompletionStage<Void> remove(Object key) {
      removed.add(key);
      return inner.remove(key);
    }

    @Override
    public int size() {
      return inner.size();
    }
  }

  private final MutableClock clock = new MutableClock();
  private final Counting store = new Counting(clock);

  private SelectionService service() {
    SelectionService svc =
        SelectionService.builder()
            .routerConfig(approximate())
            .clock(clock)
            .random(new java.util.SplittableRandom(7))
            .pendingStore(store)
            .build();
    join(svc.upsertWorker(worker(1, 4)));
    return svc;
  }

  @Test
  void aBookingUnderAGeneratedIdNeverAsksThePendingStore() {
    SelectionService svc = service();
    Selection s = join(svc.select(SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4)), true));
    assertEquals(1, svc.bookingCount(), s.toString());
    assertEquals(List.of(), store.removed);
  }

  @Test
  void aBookingUnderTheClientsIdDropsTheSelectionCachedUnderIt() {
    SelectionService svc = service();
    join(svc.select(req("s-1", 1, 2, 3, 4), false));
    assertEquals(1, svc.pendingSelections());
    join(svc.select(req("s-1", 1, 2, 3, 4), true));
    assertEquals(1, store.removed.size());
    assertEquals(0, svc.pendingSelections(), "the booking consumed the cached selection");
  }
}
