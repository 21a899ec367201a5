package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.DisaggSpec;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.AdmissionClient;
import io.kvselect.core.kvc.AdmitDecision;
import io.kvselect.core.kvc.KvcAnswer;
import io.kvselect.core.kvc.KvcMode;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * The built-in Admit model and the worker admission RPC as the {@code kvc} policy uses them
 * through the service: what a booking promises (prompt plus expected output), what stays resident
 * after it ends, what is forgotten when a session moves or a worker leaves, the append measured
 * on the best decode worker, and which requests the dispatch takes at all.
 */
class KvcAdmissionServiceTest {

  private static final int[] PROMPT = IntStream.rangeClosed(1, 64).toArray();
  private static final int[] OTHER = IntStream.rangeClosed(1001, 1064).toArray();

  private final ServiceFixture f = new ServiceFixture();

  /** Every admission RPC: "endpoint turn input append". */
  private final List<String> asked = new CopyOnWriteArrayList<>();

  private AdmitDecision answer = AdmitDecision.reject(AdmitDecision.TIMEOUT);
  private final AdmissionClient client =
      (endpoint, r) -> {
        asked.add(endpoint + " " + r.turn() + " " + r.inputTokens() + " " + r.appendTokens());
        return CompletableFuture.completedFuture(answer);
      };

  private SelectionService service(boolean withClient) {
    SelectionServiceBuilder b =
        f.builder(
            ServiceFixture.approximate()
                .withSelectionPolicy(PolicySettings.defaults().withName("kvc")),
            Duration.ofMinutes(5));
    return (withClient ? b.admissionClient(client) : b).build();
  }

  private static WorkerSpec spec(long id, String type, Long capacity, String admission) {
    return WorkerSpec.builder(id)
        .endpoint("http://w" + id)
        .blockSize(16)
        .disagg(new DisaggSpec(type, capacity, admission))
        .build();
  }

  private static SelectRequest session(
      String id, String session, Long expectedOutput, int... tokens) {
    return new SelectRequest(
        ServiceFixture.P,
        id,
        PromptInput.tokens(tokens),
        null,
        expectedOutput,
        session,
        null,
        null,
        null,
        null,
        null,
        null,
        false);
  }

  private static int[] concat(int[] a, int... b) {
    return IntStream.concat(IntStream.of(a), IntStream.of(b)).toArray();
  }

  @Test
  void aWorkersAdmissionEndpointIsAskedAndItsRejectListed() {
    SelectionService svc = service(true);
    join(svc.upsertWorker(spec(1, "decode", 8L, "http://adm1/admit")));
    join(svc.upsertWorker(spec(2, "decode", 1_000_000L, null)));
    join(svc.upsertWorker(spec(3, "prefill", null, null)));
    join(svc.upsertWorker(spec(4, "decode", 1_000_000L, null)));
    Selection s = join(svc.select(session("a", "s1", null, PROMPT), true));
    assertEquals(
        List.of("http://adm1/admit 0 64 64"), asked, "the RPC carries turn, input and append");
    KvcAnswer k = s.kvc();
    assertEquals(List.of(new KvcAnswer.Probe(1, 0, AdmitDecision.TIMEOUT)), k.attempts());
    assertEquals(2, s.workerId(), "the built-in model admitted the worker without an endpoint");
    assertEquals("seed", k.mode());
    assertEquals(new KvcAnswer.Worker(3, 0, "http://w3"), k.prefill());

    answer = AdmitDecision.admit(KvcMode.RESEED);
    join(svc.free("a"));
    asked.clear();
    Selection t = join(svc.select(session("b", "s2", null, OTHER), true));
    assertEquals(
        1,
        t.workerId(),
        "the RPC's admission wins over the 8-token capacity the model would refuse");
    assertEquals(List.of("http://adm1/admit 0 64 64"), asked);
    assertEquals("reseed", t.kvc().mode());
  }

  @Test
  void withoutAnAdmissionClientTheModelAnswersForEveryWorker() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 8L, "http://adm1/admit")));
    join(svc.upsertWorker(spec(2, "decode", 1_000_000L, null)));
    join(svc.upsertWorker(spec(4, "decode", 1_000_000L, null)));
    Selection s = join(svc.select(session("a", "s1", null, PROMPT), true));
    assertEquals(
        List.of(new KvcAnswer.Probe(1, 0, AdmitDecision.NOT_RESIDENT_NO_CAPACITY)),
        s.kvc().attempts());
    assertEquals(2, s.workerId());
    assertNull(s.kvc().prefill(), "no prefill worker in the partition");
  }

  @Test
  void aWorkerWithoutKnownCapacityAdmitsEverything() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", null, null)));
    for (int i = 0; i < 5; i++) {
      Selection s = join(svc.select(session("r" + i, "s" + i, 1_000_000_000L, PROMPT), true));
      assertEquals("seed", s.kvc().mode());
      assertEquals(List.of(), s.kvc().attempts());
    }
  }

  @Test
  void aBookingPromisesItsExpectedOutputAndLeavesItResidentWhenFreed() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 200L, null)));
    join(svc.select(session("a", "s1", 100L, PROMPT), true));
    join(svc.free("a"));
    // s1 keeps 64 + 100 tokens on worker 1: 164 + 64 > 0.95 * 200
    Selection b = join(svc.select(session("b", "s2", null, OTHER), true));
    assertEquals("fallback", b.kvc().mode());
    assertEquals(
        List.of(new KvcAnswer.Probe(1, 0, AdmitDecision.NOT_RESIDENT_NO_CAPACITY)),
        b.kvc().attempts());
  }

  @Test
  void withoutExpectedOutputOnlyThePromptStaysResident() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 200L, null)));
    join(svc.select(session("a", "s1", null, PROMPT), true));
    join(svc.free("a"));
    Selection b = join(svc.select(session("b", "s2", null, OTHER), true));
    assertEquals("seed", b.kvc().mode(), "64 + 64 <= 190");
  }

  @Test
  void aSessionAdmittedOnAnotherWorkerIsForgottenOnItsPreviousOne() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 100L, null)));
    join(svc.upsertWorker(spec(2, "decode", 100L, null)));
    join(svc.upsertWorker(spec(3, "decode", 8L, null)));
    Selection first = join(svc.select(session("a", "s1", null, PROMPT), true));
    assertEquals(1, first.workerId());
    join(svc.free("a"));
    // s1's next turn: 64 resident + 80 input > 95 on worker 1, so it reseeds on worker 2
    Selection moved =
        join(
            svc.select(
                session("b", "s1", null, concat(PROMPT, IntStream.rangeClosed(65, 80).toArray())),
                true));
    assertEquals(2, moved.workerId(), moved.kvc().toString());
    assertEquals("reseed", moved.kvc().mode());
    assertEquals(
        List.of(new KvcAnswer.Probe(1, 0, AdmitDecision.NO_CAPACITY)), moved.kvc().attempts());
    assertEquals(
        16, moved.kvc().appendTokens(), "the 64 cached tokens of worker 1 are the best overlap");
    // a new session goes to worker 3 first (never assigned; it is too small), then to worker 1,
    // which holds nothing of s1 any more: 64 tokens fit
    Selection other = join(svc.select(session("c", "s2", null, OTHER), true));
    assertEquals(
        List.of(new KvcAnswer.Probe(3, 0, AdmitDecision.NOT_RESIDENT_NO_CAPACITY)),
        other.kvc().attempts());
    assertEquals(1, other.workerId(), other.kvc().toString());
    assertEquals("seed", other.kvc().mode());
  }

  @Test
  void aFallbackLeavesTheSessionsCopyOnItsPin() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 100L, null)));
    join(svc.upsertWorker(spec(2, "decode", 100L, null)));
    join(svc.select(session("a", "s1", null, PROMPT), true));
    join(svc.free("a"));
    join(svc.kvcState().nextRoundRobin(ServiceFixture.P.toString(), "decode"));
    // s1 asks for 80 tokens: its pin (64 resident + 80 > 95) refuses, one probe, and the Fallback's
    // round-robin cursor (moved to 1 above) sends it to worker 2
    Selection fb =
        join(
            svc.select(
                session("b", "s1", null, concat(PROMPT, IntStream.rangeClosed(65, 80).toArray())),
                true));
    assertEquals("fallback", fb.kvc().mode(), fb.kvc().toString());
    assertEquals(2, fb.workerId());
    join(svc.free("b"));
    // s1's copy on worker 1 still counts: a new 64-token session does not fit there
    Selection probe = join(svc.select(session("c", "s2", null, OTHER), false));
    assertEquals(
        List.of(new KvcAnswer.Probe(1, 0, AdmitDecision.NOT_RESIDENT_NO_CAPACITY)),
        probe.kvc().attempts(),
        probe.kvc().toString());
  }

  @Test
  void aRemovedWorkerTakesItsAccountingWithIt() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 100L, null)));
    join(svc.select(session("a", "s1", null, PROMPT), true));
    join(svc.free("a"));
    join(svc.deleteWorker(1));
    join(svc.upsertWorker(spec(1, "decode", 100L, null)));
    Selection s = join(svc.select(session("b", "s2", null, OTHER), true));
    assertEquals("seed", s.kvc().mode(), "the re-registered worker starts empty: " + s.kvc());
    assertEquals(List.of(), s.kvc().attempts());
  }

  @Test
  void theAppendIsWhatTheBestDecodeWorkerDoesNotHold() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 1_000_000L, null)));
    join(svc.upsertWorker(spec(2, "decode", 1_000_000L, null)));
    Selection first = join(svc.select(session("a", "s1", null, PROMPT), true));
    assertEquals(64, first.kvc().appendTokens(), "nothing cached yet");
    Selection q =
        join(
            svc.select(
                session("q", "s2", null, concat(PROMPT, IntStream.rangeClosed(65, 90).toArray())),
                false));
    assertEquals(26, q.kvc().appendTokens(), "four cached blocks of 16 on the first worker");
    assertEquals(first.workerId(), q.workerId(), "Route follows the overlap");
  }

  @Test
  void onlyRequestsWithASessionAndNoHardTargetAreDispatched() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 1_000_000L, null)));
    join(svc.upsertWorker(spec(2, "decode", 1_000_000L, null)));
    assertNull(
        join(svc.select(ServiceFixture.req("n", PROMPT), true)).kvc(),
        "no session: the pick stage only");
    SelectRequest pinned =
        new SelectRequest(
            ServiceFixture.P,
            "p",
            PromptInput.tokens(PROMPT),
            null,
            null,
            "s1",
            null,
            null,
            new WorkerRank(2, 0),
            null,
            null,
            null,
            false);
    Selection s = join(svc.select(pinned, true));
    assertNull(s.kvc(), "a pinned request is not dispatched");
    assertEquals(2, s.workerId());
    SelectRequest targeted =
        new SelectRequest(
            ServiceFixture.P,
            "t",
            PromptInput.tokens(PROMPT),
            null,
            null,
            "s3",
            null,
            new WorkerRank(2, 0),
            null,
            null,
            null,
            null,
            false);
    assertNull(join(svc.select(targeted, true)).kvc(), "an affinity target is not dispatched");
    assertNotNull(join(svc.select(session("k", "s4", null, PROMPT), true)).kvc());
  }

  @Test
  void aPartitionOfPrefillWorkersHasNoDecodeWorkerToDispatchTo() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(3, "prefill", null, null)));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () -> join(svc.select(session("a", "s1", null, PROMPT), true)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertTrue(e.getMessage().contains("no eligible decode workers"), e.getMessage());
    assertEquals(0, svc.bookingCount());
  }

  @Test
  void anEmptySessionIdIsABadRequest() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", null, null)));
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> join(svc.select(session("a", "", null, PROMPT), true)));
    assertEquals(ErrorCode.BAD_REQUEST, e.code());
  }

  @Test
  void aReleasedIdTheDispatchNeverBookedChangesNothing() {
    SelectionService svc = service(false);
    join(svc.upsertWorker(spec(1, "decode", 100L, null)));
    join(svc.select(ServiceFixture.req("plain", PROMPT), true));
    join(svc.free("plain"));
    Selection s = join(svc.select(session("b", "s2", null, OTHER), true));
    assertEquals(
        List.of(), s.kvc().attempts(), "a booking without a session promised nothing: " + s.kvc());
    assertEquals(
        0, join(svc.kvcState().snapshot(ServiceFixture.P.toString(), "s2")).rejects().size());
  }
}
