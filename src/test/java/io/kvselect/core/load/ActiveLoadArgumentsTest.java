package io.kvselect.core.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/** {@link ActiveLoad}'s argument checks (each rejects before any change) and null inputs. */
class ActiveLoadArgumentsTest {

  private static final WorkerRank A = new WorkerRank(1, 0);

  private final MutableClock clock = new MutableClock();
  private final ActiveLoad load = new ActiveLoad(clock, Duration.ofSeconds(300), 42);

  private void assertBadRequest(String message, Executable call) {
    SelectionException e = assertThrows(SelectionException.class, call);
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertEquals(message, e.getMessage());
    assertEquals(0, load.size());
    assertFalse(load.hasLoad(A));
  }

  @Test
  void expiryMustBePositive() {
    for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofSeconds(-1)}) {
      assertThrows(IllegalArgumentException.class, () -> new ActiveLoad(clock, bad));
    }
    ActiveLoad shortest = new ActiveLoad(clock, Duration.ofMillis(1));
    shortest.addRequest("r", A, new long[] {1}, 4, 4, null, false, 0);
    clock.advance(Duration.ofMillis(1));
    assertEquals(List.of("r"), shortest.expire());
  }

  @Test
  void negativePrefillTokensAreABadRequest() {
    assertBadRequest(
        "effective_prefill_tokens must not be negative",
        () -> load.addRequest("r", A, new long[] {1}, 4, 4, null, true, -1));
    assertBadRequest(
        "effective_prefill_tokens must not be negative",
        () -> load.addRequest("r", A, new long[] {1}, 4, 4, null, false, -1));
  }

  @Test
  void negativeExpectedOutputTokensAreABadRequest() {
    assertBadRequest(
        "expected_output_tokens must not be negative",
        () -> load.addRequest("r", A, new long[] {1}, 4, 4, -1, true, 0));
    load.addRequest("zero", A, new long[] {1}, 4, 4, 0, true, 0);
    load.addRequest("none", A, new long[] {2}, 4, 4, null, true, 0);
    assertEquals(new RankLoad(2, 0, 2), load.load(A));
  }

  @Test
  void negativeInputLengthOrNonPositiveBlockSizeIsABadRequest() {
    assertBadRequest(
        "isl_tokens must not be negative",
        () -> load.addRequest("r", A, new long[] {1}, -1, 4, null, true, 0));
    assertBadRequest(
        "block_size must be positive",
        () -> load.addRequest("r", A, new long[] {1}, 4, 0, null, true, 0));
    assertBadRequest(
        "block_size must be positive", () -> load.potentialDecodeBlocks(A, new long[] {1}, 4, 0));
    assertBadRequest(
        "isl_tokens must not be negative",
        () -> load.potentialDecodeBlocks(A, new long[] {1}, -4, 4));
    load.addRequest("empty", A, new long[0], 0, 1, null, true, 0);
    assertEquals(new RankLoad(0, 0, 1), load.load(A));
  }

  @Test
  void nullSequenceHashesMeanNoTrackedBlocks() {
    load.addRequest("r", A, null, 10, 4, null, true, 10);
    assertEquals(new RankLoad(0, 10, 1), load.load(A));
    assertEquals(3, load.potentialDecodeBlocks(A, null, 10, 4), "ceil(10 / 4) untracked blocks");
    assertEquals(3, load.potentialDecodeBlocks(new WorkerRank(9, 0), null, 10, 4));
    load.addOutputBlock("r", null);
    assertEquals(1, load.load(A).activeDecodeBlocks());
    load.free("r");
    assertEquals(RankLoad.ZERO, load.load(A));
  }

  @Test
  void anUnknownOrRemovedRankHasZeroLoad() {
    assertEquals(RankLoad.ZERO, load.load(new WorkerRank(5, 5)));
    load.addRequest("r", A, new long[] {1, 2}, 8, 4, null, true, 3);
    load.removeRank(A);
    assertEquals(RankLoad.ZERO, load.load(A));
    assertEquals(List.of(), load.removeRank(A));
  }

  @Test
  void sizeCountsActiveRequests() {
    load.addRequest("a", A, new long[] {1}, 4, 4, null, true, 0);
    load.addRequest("b", new WorkerRank(2, 0), new long[] {1}, 4, 4, null, true, 0);
    assertEquals(2, load.size());
    load.free("a");
    assertEquals(1, load.size());
  }
}
