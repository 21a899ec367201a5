package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.P;
import static io.kvselect.core.service.ServiceFixture.approximate;
import static io.kvselect.core.service.ServiceFixture.join;
import static io.kvselect.core.service.ServiceFixture.pinned;
import static io.kvselect.core.service.ServiceFixture.ranks;
import static io.kvselect.core.service.ServiceFixture.req;
import static io.kvselect.core.service.ServiceFixture.secs;
import static io.kvselect.core.service.ServiceFixture.session;
import static io.kvselect.core.service.ServiceFixture.worker;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code /reservations}: the explicit form and the replay of a cached selection. */
class ReservationsServiceTest {

  private final ServiceFixture f = new ServiceFixture();

  private static SelectionException failure(Runnable r) {
    return assertThrows(SelectionException.class, r::run);
  }

  private static ReservationRequest explicit(
      String id, long worker, Integer dpRank, Long eff, Boolean track, int... tokens) {
    return new ReservationRequest(
        P, id, worker, dpRank, PromptInput.tokens(tokens), null, eff, track, null);
  }

  private static PotentialLoad load(SelectionService svc, long worker, int dpRank) {
    return svc.inspection().loads(null, null).get(0).loads().stream()
        .filter(l -> l.workerId() == worker && l.dpRank() == dpRank)
        .findFirst()
        .orElseThrow();
  }

  @Test
  void aReservationNeedsASelectionId() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    SelectionException missing =
        failure(() -> join(svc.reserve(explicit(null, 1, null, null, null, 1, 2, 3, 4))));
    assertEquals(ErrorCode.UNPROCESSABLE, missing.code());
    assertEquals("missing field `selection_id`", missing.getMessage());
    assertEquals(
        ErrorCode.UNPROCESSABLE,
        failure(() -> join(svc.reserve(ReservationRequest.replay(P, "")))).code());
  }

  @Test
  void explicitBooksTheNamedRankDefaultingToTheFirst() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(ranks(1, 4, 2, 2)));
    Reservation r = join(svc.reserve(explicit("a", 1, null, null, null, 1, 2, 3, 4, 5)));
    assertEquals(new Reservation("a", P, 1, 2, "http://w1"), r);
    Reservation r3 = join(svc.reserve(explicit("b", 1, 3, null, null, 1, 2, 3, 4, 5)));
    assertEquals(3, r3.dpRank());
    assertEquals(2, svc.bookingCount());
    assertEquals(new PotentialLoad(1, 2, 5, 1, 1), load(svc, 1, 2));
    assertEquals(new PotentialLoad(1, 3, 5, 1, 1), load(svc, 1, 3));
    LoadEvent.Booked booked = (LoadEvent.Booked) f.loadEvents.get(0);
    assertEquals("a", booked.requestId());
    assertEquals(new WorkerRank(1, 2), booked.rank());
    assertEquals(5, booked.isl());
    assertEquals(4, booked.blockSize());
    assertEquals(5, booked.prefillTokens());
    assertTrue(booked.trackPrefill());
  }

  @Test
  void explicitRefusesAnUnknownWorkerOrRank() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(ranks(1, 4, 2, 2)));
    SelectionException unknown =
        failure(() -> join(svc.reserve(explicit("a", 9, null, null, null, 1, 2, 3, 4))));
    assertEquals(ErrorCode.NOT_FOUND, unknown.code());
    assertEquals(
        "schedulable worker 9 (dp_rank 0) not found for default:default", unknown.getMessage());
    SelectionException below =
        failure(() -> join(svc.reserve(explicit("a", 1, 1, null, null, 1, 2, 3, 4))));
    assertEquals(ErrorCode.NOT_FOUND, below.code());
    assertEquals(
        "schedulable worker 1 (dp_rank 1) not found for default:default", below.getMessage());
    assertEquals(
        ErrorCode.NOT_FOUND,
        failure(() -> join(svc.reserve(explicit("a", 1, 4, null, null, 1, 2)))).code());
    assertEquals(0, svc.bookingCount());
    assertEquals(
        2,
        join(svc.reserve(explicit("a", 1, null, null, null, 1, 2, 3, 4))).dpRank(),
        "the failed attempts gave the id back");
  }

  @Test
  void effectivePrefillTokensMustLieWithinTheInputLength() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    SelectionException neg =
        failure(() -> join(svc.reserve(explicit("a", 1, null, -1L, null, 1, 2, 3, 4, 5, 6))));
    assertEquals(ErrorCode.BAD_REQUEST, neg.code());
    assertEquals(
        "effective_prefill_tokens (-1) must not exceed isl_tokens (6) and must not be negative",
        neg.getMessage());
    assertEquals(
        ErrorCode.BAD_REQUEST,
        failure(() -> join(svc.reserve(explicit("a", 1, null, 7L, null, 1, 2, 3, 4, 5, 6))))
            .code());
    assertEquals(0, svc.bookingCount());
    join(svc.reserve(explicit("a", 1, null, 6L, null, 1, 2, 3, 4, 5, 6)));
    assertEquals(
        6, load(svc, 1, 0).potentialPrefillTokens(), "exactly the input length is accepted");
    join(svc.reserve(explicit("b", 1, null, 0L, null, 7, 8, 9, 10)));
    assertEquals(6, load(svc, 1, 0).potentialPrefillTokens(), "zero is accepted and adds nothing");
    assertEquals(2, svc.bookingCount());
  }

  @Test
  void anExplicitValueIsTrackedUnlessTheRequestSaysOtherwise() {
    SelectionService svc = f.service(approximate("DYN_ROUTER_TRACK_PREFILL_TOKENS", "false"), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.reserve(explicit("a", 1, null, null, null, 1, 2, 3, 4)));
    assertEquals(0, load(svc, 1, 0).potentialPrefillTokens(), "the service default: not tracked");
    join(svc.reserve(explicit("b", 1, null, 3L, null, 5, 6, 7, 8)));
    assertEquals(3, load(svc, 1, 0).potentialPrefillTokens(), "a given value is tracked");
    join(svc.reserve(explicit("c", 1, null, 2L, false, 9, 10, 11, 12)));
    assertEquals(
        3, load(svc, 1, 0).potentialPrefillTokens(), "unless track_prefill_tokens is false");
    join(svc.reserve(explicit("d", 1, null, null, true, 13, 14, 15, 16)));
    assertEquals(7, load(svc, 1, 0).potentialPrefillTokens());
  }

  @Test
  void explicitPrefillDefaultsToTheUncachedPart() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.reserve(explicit("a", 1, null, null, null, 1, 2, 3, 4, 5, 6, 7, 8, 9)));
    join(svc.prefillComplete("a"));
    join(svc.reserve(explicit("b", 1, null, null, null, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)));
    assertEquals(
        2,
        load(svc, 1, 0).potentialPrefillTokens(),
        "two cached blocks of 4 tokens are not prefilled");
    join(svc.reserve(explicit("c", 2, null, null, null, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10)));
    assertEquals(10, load(svc, 2, 0).potentialPrefillTokens());
  }

  @Test
  void explicitWithOnlySequenceHashesIsAccepted() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    ReservationRequest r =
        new ReservationRequest(
            P,
            "h",
            1L,
            null,
            new PromptInput(null, null, new long[] {11, 12}, 8L, null, null, null, null),
            16L,
            null,
            null,
            null);
    assertEquals(1, join(svc.reserve(r)).workerId());
    assertEquals(new PotentialLoad(1, 0, 8, 2, 1), load(svc, 1, 0));
    assertEquals(16, ((LoadEvent.Booked) f.loadEvents.get(0)).expectedOutputTokens());
  }

  @Test
  void explicitDiscardsACachedSelectionOfTheSameId() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.select(req("x", 1, 2, 3, 4), false));
    assertEquals(1, svc.pendingSelections());
    join(svc.reserve(explicit("x", 2, null, null, null, 1, 2, 3, 4)));
    assertEquals(0, svc.pendingSelections());
    assertEquals(
        ErrorCode.CONFLICT,
        failure(() -> join(svc.reserve(explicit("x", 1, null, null, null, 1, 2)))).code());
    join(svc.free("x"));
    assertEquals(
        ErrorCode.NOT_FOUND,
        failure(() -> join(svc.reserve(ReservationRequest.replay(P, "x")))).code());
  }

  @Test
  void aReplayBooksTheCachedChoiceExactlyOnce() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.select(pinned("busy", 1, 0, 50, 51, 52, 53), true));
    Selection s =
        join(
            svc.select(
                new SelectRequest(
                    P,
                    "p",
                    PromptInput.tokens(1, 2, 3, 4, 5),
                    null,
                    32L,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    false),
                false));
    assertEquals(2, s.workerId());
    assertFalse(s.booked());
    assertNull(s.sequenceHashes());
    assertEquals(1, svc.pendingSelections());
    join(svc.upsertWorker(worker(3, 4)));
    f.loadEvents.clear();
    Reservation r = join(svc.reserve(ReservationRequest.replay(P, "p")));
    assertEquals(
        new Reservation("p", P, 2, 0, "http://w2"), r, "the cached worker, not a new choice");
    assertEquals(0, svc.pendingSelections());
    assertEquals(
        new PotentialLoad(2, 0, 5, 1, 1), load(svc, 2, 0), "the partial block is not booked");
    LoadEvent.Booked b = (LoadEvent.Booked) f.loadEvents.get(0);
    assertEquals(32, b.expectedOutputTokens());
    assertEquals(5, b.prefillTokens());
    SelectionException again = failure(() -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.NOT_FOUND, again.code(), "the entry was consumed by the booking");
    assertEquals(2, svc.bookingCount(), "busy and p");
    join(svc.free("p"));
    SelectionException gone = failure(() -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.NOT_FOUND, gone.code());
    assertEquals(
        "no pending selection p for default:default (expired, already used, or never selected)",
        gone.getMessage());
  }

  @Test
  void aReplayInAnotherPartitionFindsNothingAndKeepsTheEntry() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4).withPartition("other", null)));
    join(svc.select(req("p", 1, 2, 3, 4), false));
    SelectionException e =
        failure(
            () ->
                join(svc.reserve(ReservationRequest.replay(new PartitionKey("other", null), "p"))));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
    assertEquals(1, svc.pendingSelections());
    assertEquals(1, join(svc.reserve(ReservationRequest.replay(P, "p"))).workerId());
  }

  @Test
  void aReplayWhoseWorkerLeftIsNotFoundAndGivesTheIdBack() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.select(pinned("p", 1, 0, 1, 2, 3, 4), false));
    join(svc.deleteWorker(1));
    SelectionException e = failure(() -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.NOT_FOUND, e.code());
    assertEquals("schedulable worker 1 not found for default:default", e.getMessage());
    assertEquals(0, svc.bookingCount());
    assertEquals(
        2, join(svc.select(req("p", 1, 2, 3, 4), true)).workerId(), "the id is free again");
  }

  @Test
  void aReplayWithASessionBindsItsLease() {
    SelectionService svc = f.service(approximate(), secs(60));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    long chosen = join(svc.select(session("p", "S", 1, 2, 3, 4), false)).workerId();
    assertEquals(0, f.sessions.size(), "a plain select binds nothing");
    assertEquals(chosen, join(svc.reserve(ReservationRequest.replay(P, "p"))).workerId());
    assertEquals(1, f.sessions.size());
    assertEquals(chosen, join(svc.select(session(null, "S", 9, 9, 9, 9), false)).workerId());
    join(svc.free("p"));
    assertEquals(List.of("default:default/S/p"), f.releases);
  }

  @Test
  void aReplayWhoseSessionMovedIsRejectedAndConsumed() {
    SelectionService svc = f.service(approximate(), secs(60));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(
        svc.select(
            new SelectRequest(
                P,
                "p",
                PromptInput.tokens(1, 2, 3, 4),
                null,
                null,
                "S",
                null,
                null,
                new WorkerRank(1, 0),
                null,
                null,
                null,
                false),
            false));
    join(
        svc.select(
            new SelectRequest(
                P,
                "d",
                PromptInput.tokens(1, 2, 3, 4),
                null,
                null,
                "S",
                null,
                null,
                new WorkerRank(2, 0),
                null,
                null,
                null,
                false),
            true));
    SelectionException e = failure(() -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
    assertEquals("session S moved to worker 2 after selection p", e.getMessage());
    assertEquals(0, svc.pendingSelections());
    assertEquals(1, svc.bookingCount());
    assertEquals(
        new PotentialLoad(1, 0, 0, 0, 0),
        load(svc, 1, 0),
        "nothing was admitted on the old worker");
  }

  @Test
  void aReplayFollowsASessionBoundToTheSameRank() {
    SelectionService svc = f.service(approximate(), secs(60));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(
        svc.select(
            new SelectRequest(
                P,
                "d",
                PromptInput.tokens(1, 2, 3, 4),
                null,
                null,
                "S",
                null,
                null,
                new WorkerRank(1, 0),
                null,
                null,
                null,
                false),
            true));
    join(svc.select(session("p", "S", 1, 2, 3, 4), false));
    assertEquals(1, join(svc.reserve(ReservationRequest.replay(P, "p"))).workerId());
    assertEquals(2, svc.bookingCount());
  }

  @Test
  void aReplayWhoseBoundWorkerLeftBooksTheCachedRank() {
    SelectionService svc = f.service(approximate(), secs(60));
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.upsertWorker(worker(2, 4)));
    join(svc.upsertWorker(worker(3, 4)));
    join(
        svc.select(
            new SelectRequest(
                P,
                "p",
                PromptInput.tokens(1, 2, 3, 4),
                null,
                null,
                "S",
                null,
                null,
                new WorkerRank(1, 0),
                null,
                null,
                null,
                false),
            false));
    join(
        svc.select(
            new SelectRequest(
                P,
                "d",
                PromptInput.tokens(1, 2, 3, 4),
                null,
                null,
                "S",
                null,
                null,
                new WorkerRank(2, 0),
                null,
                null,
                null,
                false),
            true));
    SelectionException moved = failure(() -> join(svc.reserve(ReservationRequest.replay(P, "p"))));
    assertEquals(ErrorCode.BAD_REQUEST, moved.code());
  }

  @Test
  void duplicateIdsConflictAndFailedBookingsGiveTheIdBack() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(req("a", 1, 2, 3, 4), true));
    SelectionException dup = failure(() -> join(svc.select(req("a", 1, 2, 3, 4), true)));
    assertEquals(ErrorCode.CONFLICT, dup.code());
    assertEquals("selection a is already reserved or being reserved", dup.getMessage());
    assertEquals(1, svc.bookingCount());
    join(svc.free("a"));
    assertEquals(
        ErrorCode.NOT_FOUND,
        failure(() -> join(svc.select(pinned("b", 9, 0, 1, 2, 3, 4), true))).code());
    assertEquals(0, svc.bookingCount());
    assertEquals(
        1,
        join(svc.select(req("b", 1, 2, 3, 4), true)).workerId(),
        "the failed booking gave the id back");
    Selection generated = join(svc.select(req(null, 1, 2, 3, 4), true));
    assertEquals(36, generated.selectionId().length(), "a missing id is generated");
    join(svc.free(generated.selectionId()));
  }

  @Test
  void pendingSelectionSizeCountsHashesAndNames() {
    NormalizedPrompt shared =
        new NormalizedPrompt(new long[] {1, 2}, new long[] {3, 4}, null, 8, "ab");
    NormalizedPrompt sameTracking =
        new NormalizedPrompt(
            shared.blockHashes(), shared.sequenceHashes(), shared.sequenceHashes(), 8, "ab");
    PendingSelection ps =
        new PendingSelection(new WorkerRank(1, 0), sameTracking, 8, null, true, "sess");
    assertEquals(
        16 + 16 + 3 + 1 + 2 + 2 + 4, ps.approximateBytes("xyz", new PartitionKey("m", "gg")));
    NormalizedPrompt ownTracking =
        new NormalizedPrompt(null, new long[] {3, 4, 5}, new long[] {6, 7, 8}, 8, null);
    PendingSelection plain =
        new PendingSelection(new WorkerRank(1, 0), ownTracking, 8, null, true, null);
    assertEquals(24 + 24 + 1 + 1 + 1, plain.approximateBytes("i", new PartitionKey("m", "g")));
    assertEquals(0, ownTracking.numBlocks());
    assertEquals(2, sameTracking.numBlocks());
  }

  @Test
  void theSelectionCacheBoundsApplyToCachedSelections() {
    SelectionService svc =
        f.builder(approximate(), null).selectionCache(Duration.ofSeconds(10), 2, 1 << 20).build();
    join(svc.upsertWorker(worker(1, 4)));
    join(svc.select(req("a", 1, 2, 3, 4), false));
    join(svc.select(req("b", 1, 2, 3, 4), false));
    join(svc.select(req("c", 1, 2, 3, 4), false));
    assertEquals(2, svc.pendingSelections());
    assertEquals(
        ErrorCode.NOT_FOUND,
        failure(() -> join(svc.reserve(ReservationRequest.replay(P, "a")))).code());
    f.clock.advanceSeconds(10);
    assertEquals(
        ErrorCode.NOT_FOUND,
        failure(() -> join(svc.reserve(ReservationRequest.replay(P, "b")))).code(),
        "an entry is gone exactly at its deadline");
    SelectionService tiny =
        new ServiceFixture()
            .builder(approximate(), null)
            .selectionCache(Duration.ofSeconds(10), 16, 40)
            .build();
    join(tiny.upsertWorker(worker(1, 4)));
    join(tiny.select(req("small", 1, 2, 3, 4), false));
    assertEquals(1, tiny.pendingSelections());
    join(tiny.select(req("large", 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), false));
    assertEquals(1, tiny.pendingSelections(), "an entry over the byte budget is not kept");
  }

  @Test
  void sequenceHashesAreReturnedOnlyForBookings() {
    SelectionService svc = f.service(approximate(), null);
    join(svc.upsertWorker(worker(1, 4)));
    Selection booked = join(svc.select(req("a", 1, 2, 3, 4, 5, 6, 7, 8), true));
    assertTrue(booked.booked());
    assertEquals(2, booked.sequenceHashes().length);
    Selection again = join(svc.select(req(null, 1, 2, 3, 4, 5, 6, 7, 8), false));
    assertNull(again.sequenceHashes());
    long[] seq = booked.sequenceHashes();
    Selection byHash =
        join(
            svc.select(
                SelectRequest.of(
                        P,
                        PromptInput.hashes(
                            io.kvselect.core.hash.BlockHasher.localBlockHashes(
                                new int[] {1, 2, 3, 4, 5, 6, 7, 8},
                                8,
                                4,
                                io.kvselect.core.hash.BlockHasher.saltSeed(null, null),
                                false,
                                null),
                            seq,
                            8))
                    .withSelectionId("h"),
                true));
    assertArrayEquals(seq, byHash.sequenceHashes(), "a precomputed triple is trusted as given");
    assertEquals(8, byHash.overlap().gpu(), "and matches the cached blocks");
  }
}
