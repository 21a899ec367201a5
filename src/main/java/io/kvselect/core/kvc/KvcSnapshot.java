package io.kvselect.core.kvc;

import io.kvselect.core.index.WorkerRank;
import java.util.Map;

/**
 * What Route reads of the KVC state for one request: the session's pin and reject counters, and
 * the partition's in-flight and assigned counts per decode worker. An immutable copy.
 *
 * @param pin the decode worker that last admitted the session, or null
 * @param rejects rejects of the session per worker since it last succeeded there (absent = 0)
 * @param inflight dispatched, unfinished requests per worker (absent = 0)
 * @param assigned routing decisions sent to each worker so far (absent = 0)
 * @param turns dispatches recorded for the session so far (its next turn index)
 */
public record KvcSnapshot(
    WorkerRank pin,
    Map<WorkerRank, Integer> rejects,
    Map<WorkerRank, Long> inflight,
    Map<WorkerRank, Long> assigned,
    int turns) {

  public static final KvcSnapshot EMPTY = new KvcSnapshot(null, Map.of(), Map.of(), Map.of(), 0);

  public KvcSnapshot {
    rejects = Map.copyOf(rejects);
    inflight = Map.copyOf(inflight);
    assigned = Map.copyOf(assigned);
  }
}
