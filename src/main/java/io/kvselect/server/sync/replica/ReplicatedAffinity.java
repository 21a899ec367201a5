package io.kvselect.server.sync.replica;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.session.SessionAffinity;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * A session table whose bindings are exchanged with Dynamo-compatible replicas: every binding this
 * node makes (a {@link #bindAndLease} that wins and whose expected binding was another target or
 * none, i.e. a new binding or a move; holding an existing one is not announced) is published with a
 * version {@code (sequence, writer_id)}, one higher in {@code sequence} than the last version known
 * for that session; a binding received from a replica is installed only when its version is newer
 * than the known one (sequence first, then writer id, both unsigned), as Dynamo orders them. An
 * installed replica binding holds no lease here, so its idle TTL starts at once.
 *
 * <p>Threading: every method may be called from any thread. {@link #versions} is guarded by its
 * own monitor and bounded to {@link SessionAffinity#MAX_ENTRIES} sessions (least recently
 * written dropped first); the delegate keeps its own contract.
 */
final class ReplicatedAffinity implements SessionAffinity {

  /** The lease a replica-installed binding is created with and released at once. */
  static final String REPLICA_LEASE = "replica-sync";

  /** Known version and target of one session. */
  private record Version(long sequence, long writerId, WorkerRank target) {
    boolean olderThan(long seq, long writer) {
      int c = Long.compareUnsigned(sequence, seq);
      return c < 0 || (c == 0 && Long.compareUnsigned(writerId, writer) < 0);
    }
  }

  private final SessionAffinity delegate;
  private final long writerId;
  private final Consumer<ReplicaWire.AffinityEvent> publisher;

  /** {@code "partition\u0000session"} to its last known version; guarded by itself. */
  private final Map<String, Version> versions =
      new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Version> e) {
          return size() > MAX_ENTRIES;
        }
      };

  ReplicatedAffinity(
      SessionAffinity delegate, long writerId, Consumer<ReplicaWire.AffinityEvent> publisher) {
    this.delegate = delegate;
    this.writerId = writerId;
    this.publisher = publisher;
  }

  @Override
  public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
    return delegate.lookup(partition, sessionId);
  }

  @Override
  public CompletionStage<WorkerRank> bindAndLease(
      String partition, String sessionId, WorkerRank expected, WorkerRank target, String leaseId) {
    return delegate
        .bindAndLease(partition, sessionId, expected, target, leaseId)
        .thenApply(
            bound -> {
              if (bound.equals(target) && !target.equals(expected)) {
                announce(partition, sessionId, bound);
              }
              return bound;
            });
  }

  /** Publishes a binding this node made (a new one, or a move), one version above the known one. */
  private void announce(String partition, String sessionId, WorkerRank target) {
    String key = partition + '\u0000' + sessionId;
    Version next;
    synchronized (versions) {
      Version known = versions.get(key);
      next = new Version(known == null ? 1 : known.sequence() + 1, writerId, target);
      versions.remove(key);
      versions.put(key, next);
    }
    PartitionKey p = PartitionKey.parse(partition);
    publisher.accept(
        new ReplicaWire.AffinityEvent(
            p.modelName(),
            p.routingGroup(),
            sessionId,
            target.workerId(),
            target.dpRank(),
            next.sequence(),
            next.writerId()));
  }

  /**
   * Installs a replica's binding when its version is newer than the known one. Completes with
   * whether it was newer (and so installed, unless a local booking rebound the session meanwhile).
   */
  CompletionStage<Boolean> apply(ReplicaWire.AffinityEvent e) {
    String partition = new PartitionKey(e.modelName(), e.routingGroup()).toString();
    String key = partition + '\u0000' + e.sessionId();
    WorkerRank target = new WorkerRank(e.workerId(), e.dpRank() == null ? 0 : e.dpRank());
    synchronized (versions) {
      Version known = versions.get(key);
      if (known != null && !known.olderThan(e.sequence(), e.writerId())) {
        return CompletableFuture.completedFuture(false);
      }
      versions.remove(key);
      versions.put(key, new Version(e.sequence(), e.writerId(), target));
    }
    return delegate
        .lookup(partition, e.sessionId())
        .thenCompose(
            current ->
                current.isPresent() && current.get().equals(target)
                    ? CompletableFuture.completedFuture(true)
                    : delegate
                        .bindAndLease(
                            partition, e.sessionId(), current.orElse(null), target, REPLICA_LEASE)
                        .thenCompose(
                            bound ->
                                delegate
                                    .releaseLease(partition, e.sessionId(), REPLICA_LEASE)
                                    .thenApply(v -> true)));
  }

  @Override
  public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
    return delegate.releaseLease(partition, sessionId, leaseId);
  }

  @Override
  public CompletionStage<Integer> sweep() {
    return delegate.sweep();
  }

  @Override
  public CompletionStage<Void> removeWorker(long workerId) {
    return delegate.removeWorker(workerId);
  }

  @Override
  public int size() {
    return delegate.size();
  }
}
