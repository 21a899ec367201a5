package io.kvselect.core.select;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.RankOverlap;
import java.util.List;

/**
 * Dynamo's default KV-aware cost (logit) per candidate rank; lower is better.
 *
 * <p>For each candidate {@code r}, with {@code bs} the block size and {@code isl} the prompt
 * length in tokens:
 *
 * <pre>
 * cached        = effectiveCachedTokens(r)        (device 1.0, host w_h, disk and external w_d)
 * uncached      = isl - min(cached, isl)
 * raw_prefill   = !trackPrefill ? 0 : !hasLoadRow ? isl : active_prefill + uncached + cached
 * decay         = trackPrefill && k > 0
 *                 ? 1 / (1 + k * ((active_prefill - min_active_prefill) / bs) / request_blocks) : 1
 * credit_blocks = credit * decay * device + w_h * host + w_d * (disk + external)
 * logit         = prefill_load_scale * max(raw_prefill / bs - credit_blocks, 0)
 *                 + potential_decode_blocks + decode_active_request_weight * active_requests
 * </pre>
 *
 * where {@code min_active_prefill} is the minimum over all candidates (the eligible ranks) and
 * {@code k} is {@code overlap_score_credit_decay}. A decode pool that does not track prefill and
 * keeps a positive credit scores {@code max(potential_decode_blocks - credit_blocks, 0) +
 * decode_active_request_weight * active_requests} instead. Finally a matched preferred-taint
 * weight {@code w} multiplies the logit by {@code exp(-tanh(w))}, within {@code [1/e, e]}.
 *
 * <p>Deviation: Dynamo's shared-cache term ({@code shared_cache_multiplier * shared blocks beyond
 * device}) is not modelled because no shared-cache tier exists here; it contributes 0.
 *
 * <p>Stateless and thread-safe. {@link #logits(RouterConfig, CostRequest, List, double[])} is
 * O(n) over the candidates and allocates nothing; the list should be {@link
 * java.util.RandomAccess}.
 */
public final class CostFunction {

  private CostFunction() {}

  /** Allocating form of {@link #logits(RouterConfig, CostRequest, List, double[])}. */
  public static double[] logits(RouterConfig cfg, CostRequest req, List<Candidate> cands) {
    double[] out = new double[cands.size()];
    logits(cfg, req, cands, out);
    return out;
  }

  /**
   * Writes the logit of {@code cands.get(i)} into {@code out[i]} for every candidate.
   *
   * @throws IllegalArgumentException if {@code out} is shorter than {@code cands}
   */
  public static void logits(
      RouterConfig cfg, CostRequest req, List<Candidate> cands, double[] out) {
    int n = cands.size();
    if (out.length < n) {
      throw new IllegalArgumentException("out has " + out.length + " slots for " + n + " ranks");
    }
    final int bs = req.blockSize();
    final double bsD = bs;
    final long isl = req.islTokens();
    final boolean track = req.trackPrefill();
    final double credit = cfg.cost().overlapScoreCredit();
    final double decayRate = cfg.cost().overlapScoreCreditDecay();
    final double scale = cfg.cost().prefillLoadScale();
    final double hostW = cfg.cost().hostCacheHitWeight();
    final double diskW = cfg.cost().diskCacheHitWeight();
    final double requestWeight = cfg.cost().decodeActiveRequestWeight();
    final boolean decodeForm = req.decodeWorkerPool() && !track && credit > 0.0;
    final boolean decays = track && decayRate > 0.0;
    final double requestBlocks = req.requestBlocks();

    long minActive = 0;
    if (decays && n > 0) {
      minActive = Long.MAX_VALUE;
      for (int i = 0; i < n; i++) {
        minActive = Math.min(minActive, cands.get(i).activePrefillTokens());
      }
    }

    for (int i = 0; i < n; i++) {
      Candidate c = cands.get(i);
      RankOverlap o = c.overlap();
      double lowerTierCredit =
          hostW * o.hostExtension() + diskW * (o.diskExtension() + o.externalExtension());
      double decay = 1.0;
      if (decays) {
        double excessBlocks = Math.max(c.activePrefillTokens() - minActive, 0L) / bsD;
        decay = 1.0 / (1.0 + decayRate * excessBlocks / requestBlocks);
      }
      double creditBlocks = credit * decay * o.device() + lowerTierCredit;
      double decodeBlocks = c.potentialDecodeBlocks();
      double requestCost = requestWeight * c.activeRequests();

      double logit;
      if (decodeForm) {
        logit = Math.max(decodeBlocks - creditBlocks, 0.0) + requestCost;
      } else {
        long rawPrefillTokens = 0;
        if (track) {
          if (c.hasLoadRow()) {
            long cached = Math.round((o.device() + lowerTierCredit) * bsD);
            rawPrefillTokens =
                c.activePrefillTokens() + effectivePrefillTokens(isl, cached) + cached;
          } else {
            rawPrefillTokens = isl;
          }
        }
        double prefillCost = scale * Math.max(rawPrefillTokens / bsD - creditBlocks, 0.0);
        logit = prefillCost + decodeBlocks + requestCost;
      }
      double taint = c.preferredTaintWeight();
      if (taint != 0.0) {
        logit *= Math.exp(-Math.tanh(taint));
      }
      out[i] = logit;
    }
  }

  /**
   * Tier-weighted cached tokens of one rank: {@code round((device + w_h * host + w_d * (disk +
   * external)) * blockSize)}, with Dynamo's weights from {@code cfg}.
   */
  public static long effectiveCachedTokens(RouterConfig cfg, RankOverlap overlap, int blockSize) {
    double blocks =
        overlap.device()
            + cfg.cost().hostCacheHitWeight() * overlap.hostExtension()
            + cfg.cost().diskCacheHitWeight()
                * (overlap.diskExtension() + overlap.externalExtension());
    return Math.round(blocks * blockSize);
  }

  /**
   * The prompt tokens left to prefill: {@code isl - min(cachedTokens, isl)}. Never negative for
   * non-negative inputs; this is the response's {@code effective_prefill_tokens}.
   */
  public static long effectivePrefillTokens(long isl, long cachedTokens) {
    return isl - Math.min(Math.max(cachedTokens, 0L), isl);
  }
}
