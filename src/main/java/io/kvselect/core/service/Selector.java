package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.OverlapScores;
import io.kvselect.core.index.RankOverlap;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.RankLoad;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.CostFunction;
import io.kvselect.core.select.CostRequest;
import io.kvselect.core.select.Picker;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.random.RandomGenerator;

/**
 * The selection pipeline of one request inside a partition: eligibility filters, preferred target
 * (pinned worker, affinity target, session binding, in that order), index lookup, cost function,
 * picker, and the response fields. Called under the service lock.
 */
final class Selector {

  /** Dynamo's assumed batch capacity of a worker that did not report max_num_batched_tokens. */
  static final long DEFAULT_PREFILL_CAPACITY = 10_000_000L;

  private final RandomGenerator rng;

  Selector(RandomGenerator rng) {
    this.rng = rng;
  }

  /** The chosen rank with the per-rank overlap the decision used. */
  record Choice(WorkerRank rank, OverlapScores overlap, long effectivePrefillTokens, long potentialDecodeBlocks) {}

  Choice choose(Partition p, RouterConfig cfg, NormalizedPrompt np, SelectRequest req, WorkerRank bound) {
    List<WorkerRank> eligible = eligible(p, req);
    List<WorkerRank> candidates = preferred(p, req, bound, eligible);
    OverlapScores overlap = p.overlap(np.blockHashes());
    List<Candidate> cands = new ArrayList<>(candidates.size());
    boolean allDecode = true;
    for (WorkerRank r : candidates) {
      WorkerRecord w = p.workers.get(r.workerId());
      allDecode &= "decode".equals(w.spec().routerHintWorkerType());
      cands.add(candidate(p, np, overlap, r, w, req.preferredTaints()));
    }
    CostRequest cr = new CostRequest(p.blockSize, np.isl(), cfg.trackPrefillTokens(), allDecode);
    double[] logits = CostFunction.logits(cfg, cr, cands);
    int i = Picker.pick(logits, cfg.routerTemperature(), rng);
    Candidate c = cands.get(i);
    long cached = CostFunction.effectiveCachedTokens(cfg, c.overlap(), p.blockSize);
    return new Choice(c.rank(), overlap, CostFunction.effectivePrefillTokens(np.isl(), cached),
        c.potentialDecodeBlocks());
  }

  private static Candidate candidate(Partition p, NormalizedPrompt np, OverlapScores overlap, WorkerRank r,
      WorkerRecord w, Map<String, Double> preferredTaints) {
    boolean has = p.load.hasLoad(r);
    RankLoad l = p.load.load(r);
    long potential = p.load.potentialDecodeBlocks(r, np.trackingHashes(), np.isl(), p.blockSize);
    double taintWeight = 0;
    for (var e : preferredTaints.entrySet()) {
      if (w.spec().taints().contains(e.getKey())) {
        taintWeight += e.getValue();
      }
    }
    return new Candidate(r, overlap.of(r), has, l.activePrefillTokens(), potential, (int) l.activeRequests(),
        taintWeight);
  }

  private static List<WorkerRank> eligible(Partition p, SelectRequest req) {
    List<WorkerRank> all = p.schedulableRanks();
    if (req.allowedWorkerIds() == null && req.requiredTaints().isEmpty()) {
      return all;
    }
    List<WorkerRank> out = new ArrayList<>();
    for (WorkerRank r : all) {
      if (req.allowedWorkerIds() != null && !contains(req.allowedWorkerIds(), r.workerId())) {
        continue;
      }
      if (!p.workers.get(r.workerId()).spec().taints().containsAll(req.requiredTaints())) {
        continue;
      }
      out.add(r);
    }
    if (out.isEmpty()) {
      throw SelectionException.notReady("no eligible workers for " + p.key
          + ": every schedulable worker was filtered out by allowed_worker_ids or required_taints");
    }
    return out;
  }

  private static boolean contains(long[] ids, long id) {
    for (long x : ids) {
      if (x == id) {
        return true;
      }
    }
    return false;
  }

  /** Narrows the candidates to a preferred target when one applies. */
  private static List<WorkerRank> preferred(Partition p, SelectRequest req, WorkerRank bound, List<WorkerRank> eligible) {
    WorkerRank target = req.pinnedWorker() != null ? req.pinnedWorker() : req.affinityTarget();
    if (target != null) {
      List<WorkerRank> out = matching(p, target);
      if (out.isEmpty()) {
        throw SelectionException.notFound("schedulable worker " + Long.toUnsignedString(target.workerId())
            + (target.dpRank() >= 0 ? " (dp_rank " + target.dpRank() + ")" : "") + " not found for " + p.key);
      }
      out.retainAll(eligible);
      if (out.isEmpty()) {
        throw SelectionException.notReady("worker " + Long.toUnsignedString(target.workerId())
            + " is not eligible: filtered out by allowed_worker_ids or required_taints");
      }
      return out;
    }
    if (bound != null) {
      List<WorkerRank> out = matching(p, bound);
      out.retainAll(eligible);
      if (!out.isEmpty()) {
        return out;
      }
    }
    return eligible;
  }

  private static List<WorkerRank> matching(Partition p, WorkerRank target) {
    List<WorkerRank> out = new ArrayList<>();
    WorkerRecord w = p.schedulableWorker(target.workerId());
    if (w != null) {
      for (WorkerRank r : w.ranks()) {
        if (target.dpRank() < 0 || target.dpRank() == r.dpRank()) {
          out.add(r);
        }
      }
    }
    return out;
  }

  /** Effective prefill of a prompt on a given rank (explicit reservations without the value). */
  long effectivePrefill(Partition p, RouterConfig cfg, NormalizedPrompt np, WorkerRank rank) {
    if (np.blockHashes() == null) {
      return np.isl();
    }
    long cached = CostFunction.effectiveCachedTokens(cfg, p.overlap(np.blockHashes()).of(rank), p.blockSize);
    return CostFunction.effectivePrefillTokens(np.isl(), cached);
  }

  /** Builds the response of a selection. */
  Selection response(Partition p, RouterConfig cfg, NormalizedPrompt np, SelectRequest req, Choice c,
      String id, boolean booked, boolean track) {
    WorkerRecord w = p.workers.get(c.rank().workerId());
    int bs = p.blockSize;
    OverlapSummary summary = summary(w, c.overlap(), bs);
    Long total = w.spec().totalKvBlocks();
    Boolean decodeBusy = cfg.decodeBusyThreshold() != null && total != null
        ? c.potentialDecodeBlocks() > cfg.decodeBusyThreshold() * total : null;
    WorkerLoad wl = null;
    if (req.advisory() && !booked) {
      long capacity = w.spec().maxNumBatchedTokens() != null ? w.spec().maxNumBatchedTokens() : DEFAULT_PREFILL_CAPACITY;
      long active = p.load.load(c.rank()).activePrefillTokens() + (track ? c.effectivePrefillTokens() : 0);
      Boolean busy = cfg.prefillBusyThreshold() != null ? active > cfg.prefillBusyThreshold() * capacity : null;
      wl = new WorkerLoad(active, capacity, total, busy);
    }
    KvHint hint = booked ? KvHints.find(p, cfg, w, c, np, id) : null;
    return new Selection(id, booked, booked ? np.sequenceHashes() : null, np.isl(), track, p.key,
        w.workerId(), c.rank().dpRank(), w.spec().endpoint(), bs, summary, c.effectivePrefillTokens(),
        c.potentialDecodeBlocks(), decodeBusy, wl, hint);
  }

  static OverlapSummary summary(WorkerRecord w, OverlapScores scores, int bs) {
    long gpu = 0;
    long cpu = 0;
    long disk = 0;
    TreeMap<Integer, Long> dp = new TreeMap<>();
    for (WorkerRank r : w.ranks()) {
      RankOverlap o = scores.of(r);
      long g = (long) o.device() * bs;
      long c = (long) (o.device() + o.hostExtension()) * bs;
      long d = (long) o.totalBlocks() * bs;
      gpu = Math.max(gpu, g);
      cpu = Math.max(cpu, c);
      disk = Math.max(disk, d);
      dp.put(r.dpRank(), g);
    }
    return new OverlapSummary(Math.max(gpu, Math.max(cpu, disk)), gpu, dp, cpu, disk);
  }
}
