package io.kvselect.server.sync.replica;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.session.SessionAffinity;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies one received replica-sync message to the service: a peer's booking step through
 * {@link SelectionService#applyPeerLoad} with origin {@code "replica:<router_id>"}, a peer's
 * session binding through {@link ReplicatedAffinity}. Every message ends in exactly one counted
 * outcome ({@link ReplicaCounters#IN_OUTCOMES}); none throws. Holds no mutable state: it is
 * called by the sync thread only.
 */
final class ReplicaInbound {

  private static final Logger LOG = LoggerFactory.getLogger(ReplicaInbound.class);

  private final long routerId;
  private final ReplicaCounters counters;

  ReplicaInbound(long routerId, ReplicaCounters counters) {
    this.routerId = routerId;
    this.counters = counters;
  }

  /**
   * Counts and applies a message of {@code topic} whose remaining frames are {@code rest};
   * {@code affinity} is null when bindings are not exchanged (their topic is then unknown).
   */
  void handle(
      String topic, List<byte[]> rest, SelectionService service, ReplicatedAffinity affinity) {
    boolean sequence = ReplicaWire.SEQUENCE_TOPIC.equals(topic);
    if (!sequence && !(affinity != null && ReplicaWire.AFFINITY_TOPIC.equals(topic))) {
      counters.inc("in", "other", "unknown_topic");
      return;
    }
    if (rest.size() != 1) {
      counters.inc("in", topic, "malformed");
      return;
    }
    try {
      String outcome =
          sequence
              ? applySequence(service, ReplicaWire.decodeSequence(rest.get(0)))
              : applyAffinity(service, affinity, ReplicaWire.decodeAffinity(rest.get(0)));
      counters.inc("in", topic, outcome);
    } catch (ReplicaWire.Rejected r) {
      LOG.debug("replica sync: dropped a {} message: {}", topic, r.getMessage());
      counters.inc("in", topic, r.reason());
    } catch (RuntimeException e) {
      LOG.warn("replica sync: could not apply a {} message", topic, e);
      counters.inc("in", topic, "ignored");
    }
  }

  private String applySequence(SelectionService s, ReplicaWire.SequenceEvent e) {
    if (e.routerId() == routerId) {
      return "own";
    }
    List<WorkerRecord> members = s.listWorkers(e.modelName(), e.routingGroup());
    if (members.isEmpty()) {
      return "unknown_partition";
    }
    Integer blockSize = null;
    for (WorkerRecord w : members) {
      if (w.spec().blockSize() != null) {
        blockSize = w.spec().blockSize();
        break;
      }
    }
    if (blockSize != null && blockSize != e.blockSize()) {
      return "block_size_mismatch";
    }
    WorkerRecord w = null;
    for (WorkerRecord m : members) {
      if (m.workerId() == e.workerId()) {
        w = m;
      }
    }
    if (w == null || !w.hasRank(e.dpRank())) {
      return "unregistered_worker";
    }
    PartitionKey p = new PartitionKey(e.modelName(), e.routingGroup());
    String peer = "replica:" + Long.toUnsignedString(e.routerId());
    LoadEvent ev =
        switch (e.kind()) {
          case ADD_REQUEST -> {
            long prefill = e.prefillTokens() == null ? 0 : e.prefillTokens();
            long blocks = e.tokenSequence() == null ? 0 : e.tokenSequence().length;
            long isl = Math.max(prefill, blocks * e.blockSize());
            yield new LoadEvent.Booked(
                p,
                e.requestId(),
                new WorkerRank(e.workerId(), e.dpRank()),
                e.tokenSequence(),
                isl,
                e.blockSize(),
                e.expectedOutputTokens(),
                e.trackPrefillTokens(),
                prefill);
          }
          case FREE -> new LoadEvent.Freed(p, e.requestId());
          case MARK_PREFILL_COMPLETED -> new LoadEvent.PrefillCompleted(p, e.requestId());
        };
    return s.applyPeerLoad(peer, ev) ? "applied" : "ignored";
  }

  private String applyAffinity(
      SelectionService s, ReplicatedAffinity a, ReplicaWire.AffinityEvent e) {
    if (e.writerId() == routerId) {
      return "own";
    }
    List<WorkerRecord> members = s.listWorkers(e.modelName(), e.routingGroup());
    if (members.isEmpty()) {
      return "unknown_partition";
    }
    boolean registered =
        members.stream()
            .anyMatch(
                w ->
                    w.workerId() == e.workerId() && w.hasRank(e.dpRank() == null ? 0 : e.dpRank()));
    if (!registered) {
      return "unregistered_worker";
    }
    try {
      SessionAffinity.requireValidSessionId(e.sessionId());
    } catch (RuntimeException bad) {
      return "malformed";
    }
    CompletableFuture<Boolean> r = a.apply(e).toCompletableFuture();
    return r.isDone() && !r.isCompletedExceptionally() && !r.join() ? "stale" : "applied";
  }
}
