package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.Admission;
import io.kvselect.core.kvc.AdmissionClient;
import io.kvselect.core.kvc.KvcAnswer;
import io.kvselect.core.kvc.KvcDispatcher;
import io.kvselect.core.kvc.KvcMetrics;
import io.kvselect.core.kvc.KvcMode;
import io.kvselect.core.kvc.KvcOutcome;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.kvc.KvcRequest;
import io.kvselect.core.kvc.KvcState;
import io.kvselect.core.kvc.ResidentModel;
import io.kvselect.core.kvc.ResidentModelFeed;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.EligibilityFilter;
import io.kvselect.core.select.KvcRoutePolicy;
import io.kvselect.core.select.PolicyContext;
import io.kvselect.core.select.SelectionPolicy;
import io.kvselect.core.session.SessionAffinity;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.random.RandomGenerator;

/**
 * The {@code kvc} policy, registered in the service's {@link io.kvselect.core.select.PolicyRegistry}
 * with two stages. Its dispatch stage ({@link DispatchStage}): a request with a session (and no hard
 * target) is dispatched by {@link KvcDispatcher} over the partition's eligible decode workers
 * (workers whose {@code worker_type} is not {@code prefill}), then booked on the chosen decode
 * worker through the ordinary path as if pinned there, and answered with a {@code kvc} block.
 * Its pick stage, for the requests the dispatch does not take, is {@link KvcRoutePolicy}.
 *
 * <p>Admit asks the worker's {@code admission_endpoint} through {@link AdmissionClient} when the
 * worker declares one (and a client is set), else the built-in {@link ResidentModel}: a booking
 * promises its tokens (prompt plus expected output) to the decode worker until it is freed. What
 * a decode worker holds comes from its KV events when the partition has an event index (the
 * index is wrapped in a {@link ResidentModelFeed}): a booking claims its prompt's blocks for its
 * session on its decode worker, so the blocks the worker then stores count as the session's
 * until the worker removes them. Without events (approximate mode) the booking itself stands for
 * them: once freed its tokens count as the session's resident KV on its worker, and a session
 * admitted elsewhere is forgotten on its previous worker. A worker without a known capacity
 * ({@code kv_capacity_tokens}, else {@code total_kv_blocks * block_size}) admits everything.
 *
 * <p>State and owners: the dispatcher's state ({@link KvcState}, per session) and the resident
 * model synchronize themselves; {@link #booked} (the live kvc bookings' promises) is a
 * concurrent map written by the booking and release paths. Nothing here holds a partition lock
 * while calling out.
 */
final class KvcSelection implements SelectionPolicy, DispatchStage {

  /** Capacity of a decode worker that declares none: effectively unbounded. */
  static final long UNKNOWN_CAPACITY = Long.MAX_VALUE / 4;

  /** What a live kvc booking promised, until it is freed; {@code events}: its partition reports KV events. */
  private record Booked(
      String partition, WorkerRank decode, String session, long tokens, boolean events) {}

  /**
   * A dispatch's result: the outcome, its answer block, the request pinned to the decode worker;
   * {@code blocks} the prompt's local block hashes of {@code blockTokens} tokens each, and
   * {@code events} whether the partition learns residency from KV events.
   */
  record Plan(
      String partition,
      KvcOutcome outcome,
      KvcAnswer answer,
      SelectRequest pinned,
      String session,
      long tokens,
      long[] blocks,
      int blockTokens,
      boolean events) {}

  private final KvcDispatcher dispatcher;
  private final ResidentModel model = new ResidentModel();
  private final AdmissionClient client;
  private final RandomGenerator rng;
  private final ConcurrentHashMap<String, Booked> booked = new ConcurrentHashMap<>();
  private final EligibilityFilter eligibility = new EligibilityFilter();
  private final KvcRoutePolicy route = new KvcRoutePolicy();

  /** The KVC state the dispatcher works on (a cluster-wide one, or the local one). */
  KvcState state() {
    return dispatcher.state();
  }

  KvcSelection(KvcState state, AdmissionClient client, RandomGenerator rng) {
    this.dispatcher = new KvcDispatcher(state);
    this.client = client;
    this.rng = rng;
  }

  KvcMetrics metrics() {
    return dispatcher.metrics();
  }

  ResidentModel model() {
    return model;
  }

  /** {@code index} as a partition's event index: what it stores and removes also feeds the admission model. */
  BlockIndex observed(BlockIndex index) {
    return new ResidentModelFeed(index, model);
  }

  @Override
  public String name() {
    return KvcRoutePolicy.NAME;
  }

  /** The pick stage for requests the dispatch does not take: Route without pins ({@link KvcRoutePolicy}). */
  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    return route.choose(candidates, ctx);
  }

  /** The dispatcher takes a request with a session and no pinned or affinity target. */
  @Override
  public boolean takes(SelectRequest req) {
    return req.effectiveSessionId() != null
        && req.pinnedWorker() == null
        && req.affinityTarget() == null;
  }

  /**
   * Dispatches, then books (or only selects) on the chosen decode worker through {@code pipeline};
   * a booking records the dispatch in the KVC state, and gives its in-flight count back when the
   * booking fails.
   */
  @Override
  public CompletionStage<Selection> select(
      Partition p,
      RouterConfig cfg,
      SelectRequest req,
      boolean reserve,
      Function<SelectRequest, CompletionStage<Selection>> pipeline) {
    return dispatch(p, p.members(), cfg, req, reserve)
        .thenCompose(
            plan ->
                pipeline
                    .apply(plan.pinned())
                    .handle(
                        (s, e) -> {
                          if (e != null) {
                            if (reserve) {
                              failed(plan);
                            }
                            return CompletableFuture.<Selection>failedFuture(
                                SelectionException.unwrap(e));
                          }
                          if (reserve) {
                            booked(s.selectionId(), plan);
                          }
                          return CompletableFuture.completedFuture(s.withKvc(plan.answer()));
                        })
                    .thenCompose(x -> x));
  }

  /** Dispatches {@code req}; {@code record} (a booking) writes the KVC state, a query does not. */
  CompletionStage<Plan> dispatch(
      Partition p, Partition.Members m, RouterConfig cfg, SelectRequest req, boolean record) {
    String session = req.effectiveSessionId();
    SessionAffinity.requireValidSessionId(session);
    List<WorkerRank> eligible =
        eligibility.apply(m.pool().ranks(), m.pool(), Selector.constraints(req, null));
    List<WorkerRank> decode = new ArrayList<>();
    List<WorkerRank> prefill = new ArrayList<>();
    for (WorkerRank r : eligible) {
      ("prefill".equals(m.schedulableWorker(r.workerId()).spec().workerType()) ? prefill : decode)
          .add(r);
    }
    if (decode.isEmpty()) {
      throw SelectionException.notReady(
          "no eligible decode workers for " + p.key + " (policy kvc)");
    }
    NormalizedPrompt np =
        PromptNormalizer.normalize(
            req.prompt(), m.blockSize(), m.eagle(), cfg.load().assumeKvReuse(), true, rng);
    OverlapScores ev = p.eventOverlap(np.blockHashes());
    OverlapScores ov;
    synchronized (p.lock) {
      ov = p.overlapLocked(np.blockHashes(), ev);
    }
    long bestBlocks = 0;
    for (WorkerRank d : decode) {
      bestBlocks = Math.max(bestBlocks, ov.of(d).device());
      model.blockTokens(d, m.blockSize());
    }
    boolean events = p.approximate == null;
    long append = Math.max(0, np.isl() - bestBlocks * m.blockSize());
    long tokens = np.isl() + (req.expectedOutputTokens() == null ? 0 : req.expectedOutputTokens());
    KvcParams params = cfg.selectionPolicy().kvc();
    String part = p.key.toString();
    Admission admission =
        (d, r) -> {
          WorkerRecord w = m.schedulableWorker(d.workerId());
          String ep = w.spec().disagg().admissionEndpoint();
          if (ep != null && client != null) {
            return client.admit(ep, r);
          }
          Long cap = w.spec().kvCapacityTokens();
          return CompletableFuture.completedFuture(
              model.decide(d, r, cap == null ? UNKNOWN_CAPACITY : cap, params));
        };
    return dispatcher
        .state()
        .snapshot(part, session)
        .thenCompose(
            snap -> {
              KvcRequest r = new KvcRequest(session, snap.turns(), np.isl(), append);
              return dispatcher.dispatch(
                  part,
                  r,
                  params,
                  decode,
                  d -> ov.of(d).device(),
                  d -> model.used(d) + model.waitingTokens(d),
                  prefill,
                  admission,
                  record);
            })
        .thenApply(
            o ->
                new Plan(
                    part,
                    o,
                    answer(m, o, append),
                    req.withPinnedWorker(o.decode()),
                    session,
                    tokens,
                    np.blockHashes(),
                    m.blockSize(),
                    events));
  }

  private static KvcAnswer answer(Partition.Members m, KvcOutcome o, long append) {
    KvcAnswer.Worker pw = null;
    if (o.prefill() != null) {
      WorkerRecord w = m.schedulableWorker(o.prefill().workerId());
      pw =
          new KvcAnswer.Worker(
              o.prefill().workerId(), o.prefill().dpRank(), w == null ? null : w.spec().endpoint());
    }
    List<KvcAnswer.Probe> probes = new ArrayList<>();
    for (KvcOutcome.Attempt a : o.attempts()) {
      probes.add(new KvcAnswer.Probe(a.rank().workerId(), a.rank().dpRank(), a.reason()));
    }
    return new KvcAnswer(o.mode().wire(), o.mode() == KvcMode.DIRECT ? null : pw, append, probes);
  }

  /** A kvc booking {@code id} committed: its tokens are promised to its decode worker until freed. */
  void booked(String id, Plan plan) {
    WorkerRank d = plan.outcome().decode();
    booked.put(id, new Booked(plan.partition(), d, plan.session(), plan.tokens(), plan.events()));
    model.addWaiting(d, plan.tokens());
    if (plan.events()) {
      model.claim(d, plan.session(), plan.blocks(), plan.blockTokens());
      return;
    }
    WorkerRank prev = plan.outcome().previousPin();
    if (plan.outcome().mode() != KvcMode.FALLBACK && prev != null && !prev.equals(d)) {
      model.remove(prev, plan.session());
    }
  }

  /** The booking after a recorded dispatch failed: the dispatch's in-flight count is returned. */
  void failed(Plan plan) {
    dispatcher.state().finished(plan.partition(), plan.outcome().decode());
  }

  @Override
  public void released(String id) {
    Booked b = booked.remove(id);
    if (b != null) {
      model.addWaiting(b.decode(), -b.tokens());
      if (b.events()) {
        model.unclaim(b.decode(), b.session());
      } else {
        model.put(b.decode(), b.session(), b.tokens());
      }
      dispatcher.state().finished(b.partition(), b.decode());
    }
  }

  /** A worker left the catalog: its accounting and every pin or counter naming it go. */
  @Override
  public void removeWorker(WorkerRecord w) {
    for (WorkerRank r : w.ranks()) {
      model.removeWorker(r);
    }
    dispatcher.state().removeWorker(w.workerId());
  }
}
