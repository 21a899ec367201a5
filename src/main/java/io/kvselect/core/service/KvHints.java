package io.kvselect.core.service;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.WorkerRank;

/**
 * Router hints: when another worker of the chosen worker's {@code router_hint_worker_type} holds
 * a longer device prefix and advertises a source control endpoint for that rank, the booking
 * response carries a {@code kv.fetch} hint pointing at it, naming the blocks by the external hashes
 * the source's rank published for them (from the primary index). Only with an event-driven primary
 * index (no hints from approximate state), never for workers fed by a state agent, and only when
 * the source published more leading blocks than the chosen worker is known to hold.
 */
final class KvHints {

  static final String STATE_AGENT = "state_agent_v2";

  private KvHints() {}

  static KvHint find(
      Partition p,
      RouterConfig cfg,
      WorkerRecord chosen,
      Selector.Choice c,
      NormalizedPrompt np,
      String selectionId) {
    String type = chosen.spec().routerHintWorkerType();
    if (type == null || !cfg.index().useKvEvents() || np.blockHashes() == null) {
      return null;
    }
    int chosenDepth = c.overlap().of(c.rank()).device();
    int[] bestDepth = {chosenDepth};
    String[] bestEndpoint = {null};
    WorkerRank[] bestRank = {null};
    c.overlap()
        .forEach(
            (r, o) -> {
              int depth = o.device();
              if (depth <= bestDepth[0] || r.workerId() == chosen.workerId()) {
                return;
              }
              WorkerRecord w = p.schedulableWorker(r.workerId());
              if (w == null
                  || !type.equals(w.spec().routerHintWorkerType())
                  || STATE_AGENT.equals(w.spec().kvEventSourceMode())) {
                return;
              }
              String endpoint = w.spec().routerHintSourceControlEndpoints().get(r.dpRank());
              if (endpoint != null) {
                bestDepth[0] = depth;
                bestEndpoint[0] = endpoint;
                bestRank[0] = r;
              }
            });
    if (bestEndpoint[0] == null) {
      return null;
    }
    long[] hashes = p.primary.externalHashes(bestRank[0], np.blockHashes(), bestDepth[0]);
    if (hashes.length <= chosenDepth) {
      return null;
    }
    return new KvHint(selectionId, bestEndpoint[0], hashes);
  }
}
