package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.range;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.events.SequenceCursor.Kind;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.WorkerRank;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which events {@link EventApplier} applies (main attention group by kind or by index, locality,
 * duplicate hashes in long stores), how vLLM {@code extra_keys} become multimodal hashes, and the
 * small value types around them.
 */
class EventFilteringTest {

  private static final WorkerRank R = new WorkerRank(1, 0);

  private final PrefixChainIndex index = new PrefixChainIndex();

  private static BlockStored store(
      long[] hashes, Long parent, int[] tokens, Integer groupIdx, String kind, String locality) {
    return new BlockStored(
        hashes,
        parent != null,
        parent == null ? 0 : parent,
        tokens,
        4,
        null,
        null,
        null,
        null,
        groupIdx,
        kind,
        locality);
  }

  private ApplyStats apply(KvEvent... events) {
    return EventApplier.apply(index, R, 4, false, new KvEventBatch(0.0, List.of(events), null));
  }

  @Test
  void sinkFullAttentionIsTheMainGroupWhateverItsIndex() {
    ApplyStats s = apply(store(new long[] {1}, null, range(1, 4), 3, "sink_full_attention", null));
    assertEquals(new ApplyStats(1, 0, 0, 0, 0, 0), s);
    assertEquals(1, index.size());
    assertEquals(
        new ApplyStats(0, 1, 0, 0, 0, 0),
        apply(new BlockRemoved(new long[] {1}, null, 3, null, "sink_full_attention")));
    assertEquals(0, index.size());
  }

  @Test
  void fullAndMlaAttentionAreMainGroupsOtherKindsAreNot() {
    assertEquals(
        1,
        apply(store(new long[] {1}, null, range(1, 4), 2, "full_attention", null)).storedBlocks());
    assertEquals(
        1,
        apply(store(new long[] {2}, null, range(5, 8), 2, "mla_attention", null)).storedBlocks());
    assertEquals(
        1,
        apply(store(new long[] {3}, null, range(9, 12), 0, "sliding_window", null))
            .droppedEvents());
    assertEquals(
        1,
        apply(store(new long[] {4}, null, range(9, 12), 0, "FULL_ATTENTION", null))
            .droppedEvents());
    assertEquals(2, index.size());
  }

  @Test
  void explicitGroupZeroWithoutAKindIsTheMainGroup() {
    assertEquals(
        new ApplyStats(1, 0, 0, 0, 0, 0),
        apply(store(new long[] {1}, null, range(1, 4), 0, null, null)));
    assertEquals(
        new ApplyStats(0, 0, 0, 0, 1, 0),
        apply(store(new long[] {2}, null, range(5, 8), 1, null, null)));
    assertEquals(
        new ApplyStats(0, 0, 0, 0, 1, 0), apply(new BlockRemoved(new long[] {1}, null, 1, null)));
    assertEquals(1, index.size());
    assertEquals(
        new ApplyStats(0, 1, 0, 0, 0, 0), apply(new BlockRemoved(new long[] {1}, null, 0, null)));
    assertEquals(0, index.size());
  }

  @Test
  void onlyLocalEventsApply() {
    assertEquals(
        1, apply(store(new long[] {1}, null, range(1, 4), null, null, "local")).storedBlocks());
    assertEquals(
        1, apply(store(new long[] {2}, null, range(5, 8), null, null, "REMOTE")).droppedEvents());
    assertEquals(1, apply(new BlockRemoved(new long[] {1}, null, null, "REMOTE")).droppedEvents());
    assertEquals(1, index.size());
  }

  @Test
  void theRegisteredBlockSizeMustBePositive() {
    KvEventBatch empty = new KvEventBatch(0.0, List.of(), null);
    assertThrows(
        IllegalArgumentException.class, () -> EventApplier.apply(index, R, 0, false, empty));
    assertThrows(
        IllegalArgumentException.class, () -> EventApplier.apply(index, R, -4, false, empty));
    assertEquals(ApplyStats.NONE, EventApplier.apply(index, R, 1, false, empty));
  }

  @Test
  void longStoresAreCheckedForDuplicatesIncludingTheParent() {
    apply(store(new long[] {1}, null, range(1, 4), null, null, null));
    for (int n : new int[] {15, 16, 40}) {
      long[] hashes = new long[n];
      Arrays.setAll(hashes, i -> 1_000L * n + i);
      int[] tokens = range(1, 4 * n);
      long[] withParent = hashes.clone();
      withParent[n - 1] = 1;
      assertEquals(
          1,
          apply(store(withParent, 1L, tokens, null, null, null)).droppedEvents(),
          n + " hashes naming the parent");
      long[] repeated = hashes.clone();
      repeated[n - 1] = repeated[0];
      assertEquals(
          1,
          apply(store(repeated, 1L, tokens, null, null, null)).droppedEvents(),
          n + " hashes with a repeat");
      assertEquals(
          new ApplyStats(n, 0, 0, 0, 0, 0),
          apply(store(hashes, 1L, tokens, null, null, null)),
          n + " distinct hashes");
    }
    assertEquals(1 + 15 + 16 + 40, index.size());
  }

  @Test
  void applyStatsAddComponentWise() {
    ApplyStats a = new ApplyStats(1, 2, 3, 4, 5, 6);
    ApplyStats b = new ApplyStats(10, 20, 30, 40, 50, 60);
    assertEquals(new ApplyStats(11, 22, 33, 44, 55, 66), a.plus(b));
    assertEquals(a, a.plus(ApplyStats.NONE));
  }

  private static long[][] mmOf(Payloads.Body extraKeys) throws Exception {
    byte[] payload =
        Payloads.batchOf(
            p -> {
              p.packArrayHeader(9)
                  .packString("BlockStored")
                  .packArrayHeader(1)
                  .packLong(1)
                  .packNil();
              Payloads.packTokens(p, 1, 4);
              p.packInt(4).packNil().packNil().packString("my-lora");
              extraKeys.write(p);
            });
    return ((BlockStored) KvEventDecoder.decode(payload).events().get(0)).mmHashes();
  }

  @Test
  void hexKeysAcceptEveryHexDigitAndNothingNextToThem() throws Exception {
    String hex = "09afAF0123456789" + "abcdefABCDEF0123".repeat(3);
    long expected = Long.parseUnsignedLong("09afAF0123456789", 16);
    assertArrayEquals(
        new long[][] {{expected}},
        mmOf(p -> p.packArrayHeader(1).packArrayHeader(1).packString(hex)));
    for (char bad : new char[] {'/', ':', '`', 'g', '@', 'G'}) {
      String key = bad + hex.substring(1);
      assertNull(
          mmOf(p -> p.packArrayHeader(1).packArrayHeader(1).packString(key)),
          "key with '" + bad + "'");
    }
    assertNull(mmOf(p -> p.packArrayHeader(1).packArrayHeader(1).packString(hex.substring(1))));
    assertNull(mmOf(p -> p.packArrayHeader(1).packArrayHeader(1).packString(hex + "0")));
  }

  @Test
  void identifierPairsHashTheirIdentifier() throws Exception {
    String hex = "00000000000000ff" + "0".repeat(48);
    long img = BlockHasher.xxh3("img-1".getBytes(StandardCharsets.UTF_8), 0L);
    long[][] mm =
        mmOf(
            p -> {
              p.packArrayHeader(1).packArrayHeader(8);
              p.packArrayHeader(2).packString(hex).packInt(0);
              p.packArrayHeader(2).packString("img-1").packInt(16);
              p.packArrayHeader(2).packString("").packInt(0);
              p.packArrayHeader(2).packString("img-2").packString("0");
              p.packArrayHeader(2).packInt(1).packInt(2);
              p.packArrayHeader(3).packString("img-3").packInt(0).packInt(1);
              p.packString("my-lora");
              p.packInt(5);
            });
    assertArrayEquals(new long[][] {{0xff, img}}, mm);
  }

  @Test
  void blocksWithoutKeysStayNull() throws Exception {
    long img = BlockHasher.xxh3("x".getBytes(StandardCharsets.UTF_8), 0L);
    long[][] mm =
        mmOf(
            p -> {
              p.packArrayHeader(3).packNil();
              p.packArrayHeader(1).packArrayHeader(2).packString("x").packInt(0);
              p.packArrayHeader(1).packString("my-lora");
            });
    assertEquals(3, mm.length);
    assertNull(mm[0]);
    assertArrayEquals(new long[] {img}, mm[1]);
    assertNull(mm[2]);
  }

  @Test
  void aZeroStaleWindowTreatsEveryBackwardStepAsARestart() {
    SequenceCursor c = new SequenceCursor(false, 0);
    assertEquals(Kind.APPLY, c.onSequence(5).kind());
    assertEquals(Kind.STALE, c.onSequence(5).kind(), "the same sequence again");
    assertEquals(Kind.RESTART, c.onSequence(4).kind());
    assertEquals(4, c.last());
  }

  @Test
  void aRepeatedZeroIsStaleNotARestart() {
    SequenceCursor c = new SequenceCursor(true, 0);
    assertEquals(Kind.APPLY, c.onSequence(0).kind());
    assertEquals(Kind.STALE, c.onSequence(0).kind());
    assertEquals(Kind.APPLY, c.onSequence(1).kind());
  }

  @Test
  void aBackwardStepOfExactlyTheWindowIsStale() {
    SequenceCursor c = new SequenceCursor(false, 3);
    c.onSequence(10);
    assertEquals(Kind.STALE, c.onSequence(7).kind());
    assertEquals(10, c.last());
    assertEquals(Kind.RESTART, c.onSequence(6).kind());
    assertEquals(Kind.GAP, c.onSequence(8).kind());
  }
}
