package io.kvselect.core.index;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.kvselect.core.hash.BlockHasher;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * {@link TtlBlockIndex#externalHashes}: a recorded booking knows no engine hash, so its blocks are
 * named by the router's sequence hashes; expired blocks are not named at all.
 */
class TtlExternalHashesTest {

  private static final WorkerRank A = new WorkerRank(1, 0);

  @Test
  void recordedBlocksAreNamedByTheRoutersSequenceHashesUntilTheyExpire() {
    MutableClock clock = new MutableClock();
    TtlBlockIndex idx = new TtlBlockIndex(Duration.ofSeconds(10), clock);
    long[] local = {11, 12, 13};
    long[] seq = BlockHasher.sequenceHashes(local);
    idx.record(A, local, seq);
    assertArrayEquals(seq, idx.externalHashes(A, local, 3));
    clock.advanceSeconds(6);
    idx.record(A, Arrays.copyOf(local, 2), Arrays.copyOf(seq, 2));
    clock.advanceSeconds(4);
    assertArrayEquals(Arrays.copyOf(seq, 2), idx.externalHashes(A, local, 3));
    clock.advanceSeconds(6);
    assertArrayEquals(new long[0], idx.externalHashes(A, local, 3));
  }
}
