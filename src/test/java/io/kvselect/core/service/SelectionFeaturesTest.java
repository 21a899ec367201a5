package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.approximate;
import static io.kvselect.core.service.ServiceFixture.eventWorker;
import static io.kvselect.core.service.ServiceFixture.events;
import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.pinned;
import static io.kvselect.core.service.ServiceFixture.req;
import static io.kvselect.core.service.ServiceFixture.secs;
import static io.kvselect.core.service.ServiceFixture.session;
import static io.kvselect.core.service.ServiceFixture.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfigOverride;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Selection features through the embedded API: approximate and predicted indexes, KV hints,
 * advisory loads, busy flags, inspection views, expiry and the reservation lifecycle calls.
 */
class SelectionFeaturesTest {

  private final ServiceFixture f = new ServiceFixture();

  private static SelectionException failure(Runnable r) {
    return assertThrows(SelectionException.class, r::run);
  }

  private static long[] local(int blockSize, int... tokens) {
    return BlockHasher.localBlockHashes(
        tokens, tokens.length, blockSize, BlockHasher.saltSeed(null, null), false, null);
  }

  /** Stores the device blocks of {@code tokens} for a rank in the partition's event index. */
  private static void cache(SelectionService svc, WorkerRank r, long externalBase, int... tokens) {
    long[] l = local(4, tokens);
    long[] ext = new long[l.length];
    for (int i = 0; i < ext.length; i++) {
      ext[i] = externalBase + i;
    }
    assertTrue(svc.eventIndex(P).store(r, StorageTier.DEVICE, false, 0, ext, l));
  }

  @Test
  void approximateModeLearnsFromBookingsOnly() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    SelectRequest q = SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4, 5, 6, 7, 8, 9));
    join(svc.select(pinned(null, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), false));
    assertEquals(0, svc.inspection().indexSize(), "a plain select records nothing");
    Selection s = join(svc.select(pinned("a", 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), true));
    assertEquals(9, s.effectivePrefillTokens());
    assertEquals(2, svc.inspection().indexSize());
    OverlapReport o = svc.inspection().overlapScores(q);
    assertEquals(4, o.blockSize());
    assertEquals(2, o.numBlocks());
    assertEquals(
        List.of(new OverlapRow(1, 0, 0, 0, 0, 0, 0, 0.0), new OverlapRow(2, 0, 2, 2, 2, 0, 0, 2.0)),
        o.workers());
    join(svc.prefillComplete("a"));
    Selection next = join(svc.select(req(null, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), false));
    assertEquals(2, next.workerId(), "the recorded blocks attract the shared prefix");
    assertEquals(2, next.effectivePrefillTokens());
    assertEquals(8, next.overlap().gpu());
    assertEquals(8, next.overlap().longestMatched());
    assertEquals(new TreeMap<>(Map.of(0, 8L)), next.overlap().dp());
    f.clock.advanceSeconds(121);
    svc.expire();
    assertEquals(0, svc.inspection().indexSize());
  }

  @Test
  void predictedEntriesJoinTheEventIndexUntilTheirTtl() {
    SelectionService svc = f.service(events("DYN_ROUTER_PREDICTED_TTL_SECS", "10"), null);
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    join(svc.upsertWorker(eventWorker(2, 4, 0, 1, null, null, null)));
    cache(svc, new WorkerRank(1, 0), 500, 1, 2, 3, 4);
    SelectRequest q = SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4, 5, 6, 7, 8));
    join(svc.select(pinned("a", 2, 0, 1, 2, 3, 4, 5, 6, 7, 8), true));
    OverlapReport o = svc.inspection().overlapScores(q);
    assertEquals(1, o.workers().get(0).deviceBlocks(), "from the event index");
    assertEquals(2, o.workers().get(1).deviceBlocks(), "predicted from the booking");
    assertEquals(1, svc.inspection().indexSize(), "predictions are not event-index entries");
    assertEquals(1, svc.inspection().dump().get(0).blocks().size());
    f.clock.advanceSeconds(9);
    svc.expire();
    assertEquals(2, svc.inspection().overlapScores(q).workers().get(1).deviceBlocks());
    f.clock.advanceSeconds(2);
    svc.expire();
    assertEquals(0, svc.inspection().overlapScores(q).workers().get(1).deviceBlocks());
    join(svc.select(pinned("b", 2, 0, 1, 2, 3, 4, 5, 6, 7, 8), true));
    join(svc.deleteWorker(2));
    join(svc.upsertWorker(eventWorker(2, 4, 0, 1, null, null, null)));
    assertEquals(
        0,
        svc.inspection().overlapScores(q).workers().get(1).deviceBlocks(),
        "a removed worker's predictions go with it");
  }

  @Test
  void withoutAPredictedTtlEventModeRecordsNothing() {
    SelectionService svc = f.service(events(), null);
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    join(svc.select(req("a", 1, 2, 3, 4), true));
    assertEquals(
        0,
        svc.inspection()
            .overlapScores(SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4)))
            .workers()
            .get(0)
            .deviceBlocks());
  }

  @Test
  void aBookingNextToALongerCachedPrefixGetsAKvHint() {
    SelectionService svc = f.service(events(), null);
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, "decode", Map.of(0, "tcp://c1:1"), null)));
    join(svc.upsertWorker(eventWorker(2, 4, 0, 1, "decode", Map.of(0, "tcp://c2:1"), null)));
    join(svc.upsertWorker(eventWorker(3, 4, 0, 1, "decode", Map.of(0, "tcp://c3:1"), null)));
    cache(svc, new WorkerRank(1, 0), 100, 1, 2, 3, 4);
    cache(svc, new WorkerRank(2, 0), 200, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    cache(svc, new WorkerRank(3, 0), 300, 1, 2, 3, 4, 5, 6, 7, 8);
    Selection s =
        join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13), true));
    KvHint h = s.kvHint();
    assertEquals("a", h.messageId());
    assertEquals("tcp://c2:1", h.sourceControlEndpoint(), "the deepest holder of the same type");
    assertEquals(3, h.blockHashes().length, "one hash per block the source holds");
    assertNull(
        join(svc.select(pinned("b", 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), true)).kvHint(),
        "nobody holds more than the chosen worker");
    assertNull(
        join(svc.select(pinned(null, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), false)).kvHint(),
        "only bookings carry hints");
  }

  @Test
  void kvHintsNeedTheSameTypeAnEndpointAndNoStateAgent() {
    SelectionService svc = f.service(events(), null);
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, "decode", Map.of(0, "tcp://c1:1"), null)));
    join(svc.upsertWorker(eventWorker(2, 4, 0, 1, "prefill", Map.of(0, "tcp://c2:1"), null)));
    join(svc.upsertWorker(eventWorker(3, 4, 0, 1, "decode", Map.of(1, "tcp://c3:1"), null)));
    join(
        svc.upsertWorker(
            eventWorker(4, 4, 0, 1, "decode", Map.of(0, "tcp://c4:1"), "state_agent_v2")));
    join(svc.upsertWorker(eventWorker(5, 4, 0, 1, null, Map.of(0, "tcp://c5:1"), null)));
    for (long w = 2; w <= 4; w++) {
      cache(svc, new WorkerRank(w, 0), 100 * w, 1, 2, 3, 4, 5, 6, 7, 8);
    }
    assertNull(join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8), true)).kvHint());
    assertNull(
        join(svc.select(pinned("b", 5, 0, 1, 2, 3, 4, 5, 6, 7, 8), true)).kvHint(),
        "a worker without a hint type gets none");
    join(svc.upsertWorker(eventWorker(6, 4, 0, 1, "decode", Map.of(0, "tcp://c6:1"), null)));
    cache(svc, new WorkerRank(6, 0), 600, 1, 2, 3, 4);
    Selection s = join(svc.select(pinned("c", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertEquals("tcp://c6:1", s.kvHint().sourceControlEndpoint());
    assertEquals(1, s.kvHint().blockHashes().length, "only the block the source holds");
  }

  @Test
  void approximateModeNeverHints() {
    SelectionService svc = f.service(approximate(), null);
    join(
        svc.upsertWorker(
            WorkerSpec.builder(1)
                .endpoint("http://w1")
                .blockSize(4)
                .routerHintWorkerType("decode")
                .routerHintSourceControlEndpoints(Map.of(0, "tcp://c1:1"))
                .build()));
    join(
        svc.upsertWorker(
            WorkerSpec.builder(2)
                .endpoint("http://w2")
                .blockSize(4)
                .routerHintWorkerType("decode")
                .routerHintSourceControlEndpoints(Map.of(0, "tcp://c2:1"))
                .build()));
    join(svc.select(pinned("a", 2, 0, 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertNull(join(svc.select(pinned("b", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8), true)).kvHint());
  }

  private static WorkerSpec sized(long id, Long maxBatched, Long totalBlocks) {
    return WorkerSpec.builder(id)
        .endpoint("http://w" + id)
        .blockSize(4)
        .maxNumBatchedTokens(maxBatched)
        .totalKvBlocks(totalBlocks)
        .build();
  }

  private static SelectRequest advisory(long worker, int... tokens) {
    return new SelectRequest(
        P,
        null,
        PromptInput.tokens(tokens),
        null,
        null,
        null,
        null,
        null,
        new WorkerRank(worker, 0),
        null,
        null,
        null,
        true);
  }

  @Test
  void advisorySelectsReportTheWorkersPrefillLoad() {
    SelectionService svc =
        f.service(approximate("DYN_ROUTER_CONDITIONAL_DISAGG_PREFILL_BUSY_THRESHOLD", "0.5"), null);
    join(svc.upsertWorker(sized(1, 20L, 100L)));
    join(svc.upsertWorker(sized(2, null, null)));
    WorkerLoad idle =
        join(svc.select(advisory(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10), false)).workerLoad();
    assertEquals(
        new WorkerLoad(10, 20, 100L, false), idle, "10 tokens are not more than half of 20");
    WorkerLoad busy =
        join(svc.select(advisory(1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11), false)).workerLoad();
    assertEquals(new WorkerLoad(11, 20, 100L, true), busy);
    join(svc.select(pinned("a", 1, 0, 50, 51, 52, 53, 54), true));
    assertEquals(
        new WorkerLoad(6, 20, 100L, false),
        join(svc.select(advisory(1, 60), false)).workerLoad(),
        "the admitted prefill counts");
    assertEquals(
        new WorkerLoad(1, Selector.DEFAULT_PREFILL_CAPACITY, null, false),
        join(svc.select(advisory(2, 60), false)).workerLoad());
    assertNull(
        join(svc.select(pinned(null, 1, 0, 60), false)).workerLoad(), "only advisory selects");
    SelectRequest advisoryBooking =
        new SelectRequest(
            P,
            "b",
            PromptInput.tokens(60),
            null,
            null,
            null,
            null,
            null,
            new WorkerRank(1, 0),
            null,
            null,
            null,
            true);
    assertNull(join(svc.select(advisoryBooking, true)).workerLoad(), "never for bookings");
    RouterConfigOverride untracked =
        new RouterConfigOverride(null, null, null, null, false, null, null, null);
    SelectRequest q =
        new SelectRequest(
            P,
            null,
            PromptInput.tokens(60, 61),
            untracked,
            null,
            null,
            null,
            null,
            new WorkerRank(1, 0),
            null,
            null,
            null,
            true);
    Selection s = join(svc.select(q, false));
    assertEquals(6, s.workerLoad().activePrefillTokens(), "an untracked prompt adds nothing");
    assertFalse(s.trackPrefillTokens());
    SelectionService noThreshold = new ServiceFixture().service(approximate(), null);
    join(noThreshold.upsertWorker(sized(1, 20L, 100L)));
    assertNull(join(noThreshold.select(advisory(1, 1, 2, 3), false)).workerLoad().prefillBusy());
  }

  @Test
  void decodeBusyNeedsAThresholdAndTheWorkersCapacity() {
    SelectionService svc =
        f.service(approximate("DYN_ROUTER_CONDITIONAL_DISAGG_DECODE_BUSY_THRESHOLD", "0.5"), null);
    join(svc.upsertWorker(sized(1, null, 4L)));
    join(svc.upsertWorker(sized(2, null, null)));
    Selection two = join(svc.select(pinned(null, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8), false));
    assertEquals(2, two.potentialDecodeBlocks());
    assertEquals(false, two.decodeBusy(), "2 blocks are not more than half of 4");
    assertEquals(
        true, join(svc.select(pinned(null, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), false)).decodeBusy());
    assertNull(join(svc.select(pinned(null, 2, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9), false)).decodeBusy());
    SelectionService noThreshold = new ServiceFixture().service(approximate(), null);
    join(noThreshold.upsertWorker(sized(1, null, 4L)));
    assertNull(join(noThreshold.select(req(null, 1, 2, 3, 4, 5, 6, 7, 8, 9), false)).decodeBusy());
  }

  @Test
  void potentialLoadsAddThePromptToEveryRank() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.select(pinned("a", 1, 0, 1, 2, 3, 4, 5, 6, 7, 8), true));
    List<PotentialLoad> p =
        svc.inspection()
            .potentialLoads(SelectRequest.of(P, PromptInput.tokens(1, 2, 3, 4, 9, 9, 9, 9, 9, 9)));
    assertEquals(
        List.of(new PotentialLoad(1, 0, 8 + 6, 2 + 1 + 1, 1), new PotentialLoad(2, 0, 10, 3, 0)),
        p);
    RouterConfigOverride untracked =
        new RouterConfigOverride(null, null, null, null, false, null, null, null);
    List<PotentialLoad> u =
        svc.inspection()
            .potentialLoads(
                new SelectRequest(
                    P,
                    null,
                    PromptInput.tokens(1, 2, 3, 4),
                    untracked,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    false));
    assertEquals(List.of(new PotentialLoad(1, 0, 8, 2, 1), new PotentialLoad(2, 0, 0, 1, 0)), u);
    assertEquals(
        ErrorCode.NOT_READY,
        failure(
                () ->
                    svc.inspection()
                        .potentialLoads(
                            SelectRequest.of(
                                new io.kvselect.core.catalog.PartitionKey("x", null),
                                PromptInput.tokens(1))))
            .code());
  }

  @Test
  void overlapScoresWeighEveryTier() {
    SelectionService svc =
        f.service(
            events(
                "DYN_ROUTER_HOST_CACHE_HIT_WEIGHT",
                "0.5",
                "DYN_ROUTER_DISK_CACHE_HIT_WEIGHT",
                "0.25"),
            null);
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    long[] l = local(4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);
    WorkerRank r = new WorkerRank(1, 0);
    var index = svc.eventIndex(P);
    assertTrue(index.store(r, StorageTier.DEVICE, false, 0, new long[] {1}, new long[] {l[0]}));
    assertTrue(index.store(r, StorageTier.HOST_PINNED, true, 1, new long[] {2}, new long[] {l[1]}));
    assertTrue(index.store(r, StorageTier.DISK, true, 2, new long[] {3}, new long[] {l[2]}));
    assertTrue(index.store(r, StorageTier.EXTERNAL, true, 3, new long[] {4}, new long[] {l[3]}));
    OverlapReport o =
        svc.inspection()
            .overlapScores(
                SelectRequest.of(
                    P, PromptInput.tokens(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)));
    assertEquals(4, o.numBlocks());
    assertEquals(List.of(new OverlapRow(1, 0, 1, 2, 4, 1, 2, 1.0 + 0.5 + 0.25 * 2)), o.workers());
    Selection s =
        join(svc.select(req(null, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16), false));
    assertEquals(new OverlapSummary(16, 4, new TreeMap<>(Map.of(0, 4L)), 8, 16), s.overlap());
    assertEquals(4, svc.inspection().indexSize());
    assertEquals(4, svc.inspection().dump().get(0).blocks().size());
  }

  @Test
  void overlapSummaryTakesTheBestRankOfTheWorker() {
    SelectionService svc = f.service(events(), null);
    join(svc.upsertWorker(eventWorker(1, 4, 0, 2, null, null, null)));
    cache(svc, new WorkerRank(1, 1), 10, 1, 2, 3, 4, 5, 6, 7, 8);
    Selection s = join(svc.select(pinned(null, 1, 0, 1, 2, 3, 4, 5, 6, 7, 8), false));
    assertEquals(0, s.dpRank());
    assertEquals(new OverlapSummary(8, 8, new TreeMap<>(Map.of(0, 0L, 1, 8L)), 8, 8), s.overlap());
    assertEquals(8, s.effectivePrefillTokens(), "rank 0 itself has nothing cached");
  }

  @Test
  void expiryFreesOldBookingsReleasesLeasesAndPublishes() {
    SelectionService svc =
        f.service(approximate("DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS", "100"), secs(30));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(session("a", "S", 1, 2, 3, 4), true));
    f.clock.advanceSeconds(50);
    join(svc.select(req("b", 5, 6, 7, 8), true));
    f.loadEvents.clear();
    f.clock.advanceSeconds(49);
    assertEquals(0, svc.expire());
    f.clock.advanceSeconds(1);
    assertEquals(1, svc.expire(), "exactly at the expiry age");
    assertEquals(List.of(new LoadEvent.Freed(P, "a")), f.loadEvents);
    assertEquals(List.of("default:default/S/a"), f.releases);
    assertEquals(1, svc.bookingCount());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.free("a"))).code());
    assertEquals(1, f.sessions.size());
    f.clock.advanceSeconds(30);
    svc.expire();
    assertEquals(0, f.sessions.size(), "the idle binding is swept with the expiry");
  }

  @Test
  void lifecycleCallsPublishAndValidate() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(req("a", 1, 2, 3, 4, 5, 6, 7, 8), true));
    join(svc.prefillComplete("a"));
    join(svc.outputBlock("a", null));
    join(svc.outputBlock("a", 0.0));
    join(svc.outputBlock("a", 1.0));
    for (Double bad : new Double[] {-0.01, 1.01, Double.NaN}) {
      SelectionException e = failure(() -> join(svc.outputBlock("a", bad)));
      assertEquals(ErrorCode.BAD_REQUEST, e.code());
      assertEquals("decay_fraction must be in [0.0, 1.0], got " + bad, e.getMessage());
    }
    PotentialLoad l = svc.inspection().loads(null, null).get(0).loads().get(0);
    assertEquals(new PotentialLoad(1, 0, 0, 5, 1), l, "two prompt blocks and three output blocks");
    join(svc.free("a"));
    assertEquals(
        List.of(LoadEvent.Booked.class, LoadEvent.PrefillCompleted.class, LoadEvent.Freed.class),
        f.loadEvents.stream().map(Object::getClass).toList());
    assertEquals(new LoadEvent.PrefillCompleted(P, "a"), f.loadEvents.get(1));
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.prefillComplete("a"))).code());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.outputBlock("a", null))).code());
    assertEquals(ErrorCode.NOT_FOUND, failure(() -> join(svc.prefillComplete("nope"))).code());
  }

  @Test
  void promptsAreValidatedBeforeAnythingChanges() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    record Case(PromptInput prompt, String message) {}
    long[] two = {1, 2};
    List<Case> cases =
        List.of(
            new Case(
                null,
                "either token_ids or block_hashes, sequence_hashes and isl_tokens are required"),
            new Case(
                new PromptInput(null, null, null, null, null, null, null, null),
                "either token_ids or block_hashes, sequence_hashes and isl_tokens are required"),
            new Case(
                new PromptInput(null, two, null, 8L, null, null, null, null),
                "sequence_hashes is required when token_ids is absent"),
            new Case(
                new PromptInput(null, two, two, null, null, null, null, null),
                "isl_tokens is required when token_ids is absent"),
            new Case(
                new PromptInput(null, null, two, 8L, null, null, null, null),
                "block_hashes is required when token_ids is absent"),
            new Case(PromptInput.hashes(two, two, 0), "isl_tokens must be greater than 0"),
            new Case(
                PromptInput.hashes(new long[] {1}, two, 8),
                "block_hashes and sequence_hashes must have the same length (1 != 2)"),
            new Case(PromptInput.tokens(), "the prompt is empty: token_ids must not be empty"));
    for (Case c : cases) {
      SelectionException e =
          failure(
              () -> join(svc.select(SelectRequest.of(P, c.prompt()).withSelectionId("x"), true)));
      assertEquals(ErrorCode.BAD_REQUEST, e.code(), c.message());
      assertEquals(c.message(), e.getMessage());
    }
    assertEquals(0, svc.bookingCount());
    assertEquals(
        1,
        join(svc.select(SelectRequest.of(P, PromptInput.hashes(two, two, 1)), false)).workerId(),
        "isl 1 is the smallest valid input");
  }

  @Test
  void kvReuseOffBooksEachRequestsBlocksSeparately() {
    SelectionService shared = f.service(approximate(), null);
    join(shared.upsertWorker(worker(1, 4)));
    join(shared.select(req("a", 1, 2, 3, 4, 5, 6, 7, 8), true));
    join(shared.select(req("b", 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertEquals(
        2, shared.inspection().loads(null, null).get(0).loads().get(0).potentialDecodeBlocks());
    SelectionService separate =
        new ServiceFixture().service(approximate("DYN_ROUTER_ASSUME_KV_REUSE", "false"), null);
    join(separate.upsertWorker(worker(1, 4)));
    join(separate.select(req("a", 1, 2, 3, 4, 5, 6, 7, 8), true));
    join(separate.select(req("b", 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertEquals(
        4, separate.inspection().loads(null, null).get(0).loads().get(0).potentialDecodeBlocks());
  }

  @Test
  void sessionIdsAreValidatedAndTheStructuredFormWins() {
    SelectionService svc = f.service(approximate(), secs(60));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    SelectionException tooLong =
        failure(() -> join(svc.select(session(null, "x".repeat(257), 1, 2, 3, 4), false)));
    assertEquals(ErrorCode.BAD_REQUEST, tooLong.code());
    join(
        svc.select(
            new SelectRequest(
                P,
                "a",
                PromptInput.tokens(1, 2, 3, 4),
                null,
                null,
                "flat",
                new SessionContext("structured", null, null, null, null),
                null,
                new WorkerRank(2, 0),
                null,
                null,
                null,
                false),
            true));
    join(svc.select(pinned("load", 2, 0, 40, 41, 42, 43, 44, 45, 46, 47), true));
    for (int i = 0; i < 4; i++) {
      assertEquals(2, join(svc.select(session(null, "structured", 9, 9, 9, 9), false)).workerId());
      assertNotEquals(2, join(svc.select(session(null, "flat", 9, 9, 9, 9), false)).workerId());
    }
    SelectionService noAffinity = new ServiceFixture().service(approximate(), null);
    join(noAffinity.upsertWorker(worker(1, 4)));
    assertEquals(
        1,
        join(noAffinity.select(session("z", "x".repeat(300), 1, 2, 3, 4), true)).workerId(),
        "without session affinity the session id is ignored");
  }

  @Test
  void defaultBuilderServesTheEmbeddedExample() {
    SelectionService svc = SelectionService.builder().build();
    assertTrue(svc.settings().router().index().useKvEvents());
    assertEquals(SelectionServiceBuilder.DEFAULT_INDEX, svc.settings().eventIndexFactory());
    join(svc.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    assertEquals(1, join(svc.select(req("a", 1, 2, 3, 4), true)).workerId());
    assertTrue(
        ((io.kvselect.core.kvc.ResidentModelFeed) svc.eventIndex(P)).delegate()
            instanceof io.kvselect.core.index.ShardedBlockIndex,
        "the event index, fed to the KVC admission model too");
    SelectionService custom =
        SelectionService.builder()
            .indexFactory(io.kvselect.core.index.PrefixChainIndex::new)
            .build();
    join(custom.upsertWorker(eventWorker(1, 4, 0, 1, null, null, null)));
    assertTrue(
        ((io.kvselect.core.kvc.ResidentModelFeed) custom.eventIndex(P)).delegate()
            instanceof io.kvselect.core.index.PrefixChainIndex);
    SelectionService copied = SelectionService.builder().settings(svc.settings()).build();
    assertEquals(svc.settings(), copied.settings());
  }
}
