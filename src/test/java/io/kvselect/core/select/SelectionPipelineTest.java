package io.kvselect.core.select;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.Lifecycle;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The filter stages and the pipeline, table by table, on a hand-built pool. */
class SelectionPipelineTest {

  private static final PartitionKey P = new PartitionKey("m", "g");
  private static final WorkerRank A0 = new WorkerRank(1, 0);
  private static final WorkerRank B0 = new WorkerRank(2, 0);
  private static final WorkerRank B1 = new WorkerRank(2, 1);
  private static final WorkerRank C0 = new WorkerRank(3, 0);

  /** Worker 1 (taint gpu), worker 2 with two ranks (taints gpu, fast), worker 3 (no taint). */
  private static CandidatePool pool() {
    Map<Long, WorkerRecord> workers = new HashMap<>();
    workers.put(1L, record(1, 1, Set.of("gpu")));
    workers.put(2L, record(2, 2, Set.of("gpu", "fast")));
    workers.put(3L, record(3, 1, Set.of()));
    return new CandidatePool(P, List.of(A0, B0, B1, C0), workers);
  }

  private static WorkerRecord record(long id, int dp, Set<String> taints) {
    WorkerSpec s =
        WorkerSpec.builder(id)
            .modelName("m")
            .routingGroup("g")
            .endpoint("http://w" + id)
            .blockSize(4)
            .dataParallelSize(dp)
            .taints(taints)
            .build();
    return new WorkerRecord(s, Lifecycle.SCHEDULABLE, List.of());
  }

  private static SelectionConstraints allowed(long... ids) {
    return new SelectionConstraints(ids, null, null, null, null);
  }

  @Test
  void eligibilityKeepsAllowedWorkersCarryingEveryRequiredTaint() {
    EligibilityFilter f = new EligibilityFilter();
    CandidatePool pool = pool();
    List<WorkerRank> all = pool.ranks();
    assertSame(
        all,
        f.apply(all, pool, new SelectionConstraints(null, null, null, null, null)),
        "no constraint");
    assertEquals(List.of(A0, C0), f.apply(all, pool, allowed(1, 3)));
    assertEquals(
        List.of(A0, B0, B1),
        f.apply(all, pool, new SelectionConstraints(null, Set.of("gpu"), null, null, null)));
    assertEquals(
        List.of(B0, B1),
        f.apply(
            all,
            pool,
            new SelectionConstraints(new long[] {2, 3}, Set.of("gpu"), null, null, null)));
    SelectionException e =
        assertThrows(
            SelectionException.class,
            () ->
                f.apply(
                    all,
                    pool,
                    new SelectionConstraints(new long[] {3}, Set.of("gpu"), null, null, null)));
    assertEquals(ErrorCode.NOT_READY, e.code());
    assertTrue(e.getMessage().contains("no eligible workers for " + P), e.getMessage());
    assertThrows(SelectionException.class, () -> f.apply(all, pool, allowed(99)));
  }

  @Test
  void aHardTargetMustExistAndBeEligible() {
    TargetFilter f = new TargetFilter();
    CandidatePool pool = pool();
    List<WorkerRank> all = pool.ranks();
    assertEquals(
        List.of(B0, B1),
        f.apply(all, pool, new SelectionConstraints(null, null, new WorkerRank(2, -1), null, null)),
        "a negative dp_rank means any rank of the worker");
    assertEquals(
        List.of(B1),
        f.apply(all, pool, new SelectionConstraints(null, null, null, B1, null)),
        "the affinity target when nothing is pinned");
    assertEquals(
        List.of(A0),
        f.apply(all, pool, new SelectionConstraints(null, null, A0, B1, null)),
        "pinned wins over the affinity target");
    SelectionException missing =
        assertThrows(
            SelectionException.class,
            () ->
                f.apply(
                    all,
                    pool,
                    new SelectionConstraints(null, null, new WorkerRank(2, 5), null, null)));
    assertEquals(ErrorCode.NOT_FOUND, missing.code());
    assertTrue(missing.getMessage().contains("(dp_rank 5)"), missing.getMessage());
    SelectionException anyMissing =
        assertThrows(
            SelectionException.class,
            () ->
                f.apply(
                    all,
                    pool,
                    new SelectionConstraints(null, null, new WorkerRank(9, -1), null, null)));
    assertTrue(!anyMissing.getMessage().contains("dp_rank"), anyMissing.getMessage());
    SelectionException filtered =
        assertThrows(
            SelectionException.class,
            () ->
                f.apply(
                    List.of(A0, C0), pool, new SelectionConstraints(null, null, B0, null, null)));
    assertEquals(ErrorCode.NOT_READY, filtered.code());
  }

  @Test
  void aSessionBindingNarrowsOnlyWhileItsRankIsACandidate() {
    TargetFilter f = new TargetFilter();
    CandidatePool pool = pool();
    List<WorkerRank> all = pool.ranks();
    assertEquals(
        List.of(C0), f.apply(all, pool, new SelectionConstraints(null, null, null, null, C0)));
    assertEquals(
        List.of(A0, B0),
        f.apply(List.of(A0, B0), pool, new SelectionConstraints(null, null, null, null, C0)),
        "a bound rank that was filtered out is ignored");
    assertEquals(
        List.of(A0, B0),
        f.apply(
            List.of(A0, B0),
            pool,
            new SelectionConstraints(null, null, null, null, new WorkerRank(7, 0))),
        "so is one that left");
  }

  @Test
  void constraintsDefaultAndCopy() {
    SelectionConstraints c = new SelectionConstraints(null, null, null, A0, null);
    assertEquals(Set.of(), c.requiredTaints());
    assertEquals(A0, c.hardTarget());
    SelectionConstraints bound = c.withSessionBound(B0);
    assertEquals(B0, bound.sessionBound());
    assertEquals(A0, bound.affinityTarget());
    assertEquals(null, c.sessionBound(), "the original is unchanged");
  }

  @Test
  void thePipelineFiltersThenAsksItsPolicy() {
    List<List<WorkerRank>> seen = new ArrayList<>();
    SelectionPolicy last =
        new SelectionPolicy() {
          @Override
          public String name() {
            return "last";
          }

          @Override
          public int choose(List<Candidate> candidates, PolicyContext ctx) {
            seen.add(candidates.stream().map(Candidate::rank).toList());
            return candidates.size() - 1;
          }
        };
    SelectionPipeline p = SelectionPipeline.standard(last);
    assertSame(last, p.policy());
    CandidatePool pool = pool();
    List<WorkerRank> ranks =
        p.filter(pool, new SelectionConstraints(new long[] {1, 2}, null, null, null, null));
    assertEquals(List.of(A0, B0, B1), ranks);
    Candidate c =
        p.choose(
            ranks,
            r -> Candidate.unloaded(r, RankOverlap.NONE),
            new PolicyContext(
                RouterConfig.DEFAULTS, new CostRequest(4, 8, true, false), new Random(1)));
    assertEquals(B1, c.rank());
    assertEquals(List.of(List.of(A0, B0, B1)), seen);
  }

  @Test
  void theKvPolicyPicksTheCheapestCandidate() {
    KvCostPolicy kv = new KvCostPolicy();
    assertEquals("kv", kv.name());
    List<Candidate> cands =
        List.of(
            new Candidate(A0, RankOverlap.NONE, true, 5_000, 10, 3, 0),
            new Candidate(B0, RankOverlap.NONE, true, 0, 0, 0, 0),
            new Candidate(C0, RankOverlap.NONE, true, 9_000, 20, 5, 0));
    assertEquals(
        1,
        kv.choose(
            cands,
            new PolicyContext(
                RouterConfig.DEFAULTS, new CostRequest(16, 64, true, false), new Random(3))));
  }

  private static final WorkerRank D0 = new WorkerRank(4, 0);

  private static PolicyContext kvContext() {
    return new PolicyContext(
        RouterConfig.DEFAULTS, new CostRequest(16, 256, true, false), new Random(5));
  }

  @Test
  void theOthersFollowTheKvCostBestFirst() {
    // the same load everywhere: cached prefix decides; B0 holds most, then D0, then A0, C0 nothing
    Map<WorkerRank, Candidate> byRank =
        Map.of(
            A0, new Candidate(A0, new RankOverlap(2, 0, 0, 0), true, 0, 16, 0, 0),
            B0, new Candidate(B0, new RankOverlap(12, 0, 0, 0), true, 0, 16, 0, 0),
            C0, new Candidate(C0, RankOverlap.NONE, true, 0, 16, 0, 0),
            D0, new Candidate(D0, new RankOverlap(8, 0, 0, 0), true, 0, 16, 0, 0));
    SelectionPipeline p = SelectionPipeline.standard(new KvCostPolicy());
    SelectionPipeline.Decision d = p.decide(List.of(A0, B0, C0, D0), byRank::get, kvContext());
    assertEquals(B0, d.chosen().rank());
    assertEquals(
        List.of(D0, A0, C0), d.others().stream().map(Candidate::rank).toList(), "by cached prefix");

    // no prefix anywhere: load decides, the least loaded first
    Map<WorkerRank, Candidate> loaded =
        Map.of(
            A0, new Candidate(A0, RankOverlap.NONE, true, 3_000, 40, 3, 0),
            B0, new Candidate(B0, RankOverlap.NONE, true, 1_000, 24, 1, 0),
            C0, new Candidate(C0, RankOverlap.NONE, true, 2_000, 32, 2, 0),
            D0, new Candidate(D0, RankOverlap.NONE, true, 0, 16, 0, 0));
    d = p.decide(List.of(A0, B0, C0, D0), loaded::get, kvContext());
    assertEquals(D0, d.chosen().rank());
    assertEquals(List.of(B0, C0, A0), d.others().stream().map(Candidate::rank).toList(), "by load");
  }

  @Test
  void eachPolicyRanksTheOthersByItsOwnOrder() {
    List<Candidate> cands =
        List.of(
            new Candidate(A0, RankOverlap.NONE, true, 0, 30, 3, 0),
            new Candidate(B0, RankOverlap.NONE, true, 0, 10, 1, 0),
            new Candidate(C0, RankOverlap.NONE, true, 0, 20, 1, 0),
            new Candidate(D0, RankOverlap.NONE, true, 0, 0, 0, 0));
    assertEquals(
        List.of(1, 2, 0),
        java.util.Arrays.stream(new LeastLoadedPolicy().rankOthers(cands, 3, kvContext()))
            .boxed()
            .toList(),
        "least_loaded: requests, then decode blocks");
    assertEquals(
        List.of(0, 2, 3),
        java.util.Arrays.stream(new RoundRobinPolicy().rankOthers(cands, 1, kvContext()))
            .boxed()
            .toList(),
        "no cost: rank order");
    SelectionPipeline.Decision one =
        SelectionPipeline.standard(new KvCostPolicy())
            .decide(List.of(A0), r -> Candidate.unloaded(r, RankOverlap.NONE), kvContext());
    assertEquals(List.of(), one.others(), "a single candidate has no others");
  }
}
