package io.kvselect.core.service;

import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.config.RouterConfigLoader;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Builds services for the core service tests: a hand-moved clock, a seeded RNG, and recorders on
 * every asynchronous seam (catalog sync, load sync, session table) so a test can assert what the
 * service told its peers.
 */
final class ServiceFixture {

  static final PartitionKey P = new PartitionKey(null, null);

  final MutableClock clock = new MutableClock();
  final List<CatalogSync.CatalogChange> catalogChanges = new CopyOnWriteArrayList<>();
  final List<LoadEvent> loadEvents = new CopyOnWriteArrayList<>();

  /** Every lease release the service asked for, as "partition/session/lease". */
  final List<String> releases = new CopyOnWriteArrayList<>();

  SessionAffinity sessions;

  /** Router config with KV events off (approximate mode) plus the given environment knobs. */
  static RouterConfig approximate(String... env) {
    Map<String, String> m = new HashMap<>();
    m.put("DYN_ROUTER_USE_KV_EVENTS", "false");
    for (int i = 0; i < env.length; i += 2) {
      m.put(env[i], env[i + 1]);
    }
    return RouterConfigLoader.fromEnv(RouterConfig.DEFAULTS, m);
  }

  /** Router config with KV events on plus the given environment knobs. */
  static RouterConfig events(String... env) {
    Map<String, String> m = new HashMap<>();
    for (int i = 0; i < env.length; i += 2) {
      m.put(env[i], env[i + 1]);
    }
    return RouterConfigLoader.fromEnv(RouterConfig.DEFAULTS, m);
  }

  SelectionService service(RouterConfig cfg, Duration affinityTtl) {
    return builder(cfg, affinityTtl).build();
  }

  SelectionServiceBuilder builder(RouterConfig cfg, Duration affinityTtl) {
    return SelectionService.builder()
        .routerConfig(cfg)
        .clock(clock)
        .random(new SplittableRandom(7))
        .sessionAffinityTtl(affinityTtl)
        .sessionAffinity(
            c -> {
              sessions = new Recording(new LocalSessionAffinity(c, affinityTtl), releases);
              return sessions;
            })
        .catalogSync(
            ch -> {
              catalogChanges.add(ch);
              return CompletableFuture.completedFuture(null);
            })
        .loadSync(
            e -> {
              loadEvents.add(e);
              return CompletableFuture.completedFuture(null);
            });
  }

  static WorkerSpec worker(long id, int blockSize) {
    return WorkerSpec.of(id, "http://w" + id, blockSize);
  }

  /** A worker with a KV-event endpoint per rank (schedulable in event mode). */
  static WorkerSpec eventWorker(
      long id,
      int blockSize,
      int startRank,
      int dpSize,
      String hintType,
      Map<Integer, String> sourceControl,
      String sourceMode) {
    Map<Integer, String> kv = new HashMap<>();
    for (int r = startRank; r < startRank + dpSize; r++) {
      kv.put(r, "tcp://127.0.0.1:" + (20000 + r));
    }
    return WorkerSpec.builder(id)
        .endpoint("http://w" + id)
        .kvEventsEndpoints(kv)
        .blockSize(blockSize)
        .dataParallelStartRank(startRank)
        .dataParallelSize(dpSize)
        .routerHintWorkerType(hintType)
        .routerHintSourceControlEndpoints(sourceControl)
        .kvEventSourceMode(sourceMode)
        .build();
  }

  static WorkerSpec ranks(long id, int blockSize, int startRank, int dpSize) {
    return WorkerSpec.builder(id)
        .endpoint("http://w" + id)
        .blockSize(blockSize)
        .dataParallelStartRank(startRank)
        .dataParallelSize(dpSize)
        .build();
  }

  /** A worker of block size 4 whose ranks take at most {@code maxBatchedTokens} (queue tests). */
  static WorkerSpec capped(long id, long maxBatchedTokens) {
    return WorkerSpec.builder(id)
        .endpoint("http://w" + id)
        .blockSize(4)
        .maxNumBatchedTokens(maxBatchedTokens)
        .build();
  }

  /** A session's request pinned to {@code worker}'s rank {@code dpRank}. */
  static SelectRequest pinnedSession(
      String id, String session, long worker, int dpRank, int... tokens) {
    return pinned(id, worker, dpRank, tokens).withSessionId(session);
  }

  static SelectRequest req(String id, int... tokens) {
    return SelectRequest.of(P, PromptInput.tokens(tokens)).withSelectionId(id);
  }

  static SelectRequest pinned(String id, long worker, int dpRank, int... tokens) {
    return req(id, tokens).withPinnedWorker(new WorkerRank(worker, dpRank));
  }

  static SelectRequest session(String id, String session, int... tokens) {
    return req(id, tokens).withSessionId(session);
  }

  static <T> T join(CompletionStage<T> st) {
    return SelectionServiceTest.join(st);
  }

  /** Forwards to a local table and records every lease release. */
  static final class Recording implements SessionAffinity {
    private final SessionAffinity inner;
    private final List<String> releases;

    Recording(SessionAffinity inner, List<String> releases) {
      this.inner = inner;
      this.releases = releases;
    }

    @Override
    public CompletionStage<Optional<WorkerRank>> lookup(String partition, String sessionId) {
      return inner.lookup(partition, sessionId);
    }

    @Override
    public CompletionStage<WorkerRank> bindAndLease(
        String partition,
        String sessionId,
        WorkerRank expected,
        WorkerRank target,
        String leaseId) {
      return inner.bindAndLease(partition, sessionId, expected, target, leaseId);
    }

    @Override
    public CompletionStage<Void> releaseLease(String partition, String sessionId, String leaseId) {
      releases.add(partition + "/" + sessionId + "/" + leaseId);
      return inner.releaseLease(partition, sessionId, leaseId);
    }

    @Override
    public CompletionStage<Integer> sweep() {
      return inner.sweep();
    }

    @Override
    public CompletionStage<Void> removeWorker(long workerId) {
      return inner.removeWorker(workerId);
    }

    @Override
    public int size() {
      return inner.size();
    }
  }

  static Duration secs(long s) {
    return Duration.ofSeconds(s);
  }
}
