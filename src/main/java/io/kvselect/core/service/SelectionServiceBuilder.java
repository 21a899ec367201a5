package io.kvselect.core.service;

import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.load.LoadSync;
import io.kvselect.core.pending.LocalPendingStore;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.select.ConfiguredPolicy;
import io.kvselect.core.select.PolicyRegistry;
import io.kvselect.core.select.SelectionPipeline;
import io.kvselect.core.select.SelectionPolicy;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.core.session.SessionAffinity;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Builds a {@link SelectionService} for embedding in a JVM program without the HTTP server (see
 * the README's "Embedding" section, which a test compiles and runs). Defaults: Dynamo's router
 * configuration, no session affinity, a 120 s / 4096-entry / 256 MiB pending cache, the
 * {@code kv} policy, and single-node (local, immediately complete) session, pending, load and
 * catalog seams. The cluster plugs its own seams in here.
 */
public final class SelectionServiceBuilder {

  /** The partition's event index by default: one lock-guarded shard (safe with a writer thread). */
  public static final Supplier<BlockIndex> DEFAULT_INDEX =
      () -> new ShardedBlockIndex(1, PrefixChainIndex::new);

  private RouterConfig router = RouterConfig.DEFAULTS;
  private Duration sessionAffinityTtl;
  private Duration selectionCacheTtl = Duration.ofSeconds(120);
  private int selectionCacheMaxEntries = 4096;
  private long selectionCacheMaxBytes = 256L * 1024 * 1024;
  private Supplier<BlockIndex> indexFactory = DEFAULT_INDEX;
  private Clock clock = Clock.systemUTC();
  private RandomGenerator rng = new Random();

  /** The pick stage for every request instead of the configured one; null: by name from the registry. */
  private SelectionPolicy policy;

  private final List<SelectionPolicy> registered = new ArrayList<>();
  private Function<Clock, SessionAffinity> affinity;
  private LoadSync loadSync = LoadSync.LOCAL;
  private CatalogSync catalogSync = CatalogSync.LOCAL;
  private QueueConfig queueConfig;
  private Duration queueTimeout = Duration.ofSeconds(30);
  private PendingStore<Object, Object> pendingStore;
  private io.kvselect.core.kvc.KvcState kvcState;
  private io.kvselect.core.kvc.AdmissionClient admissionClient;
  private LifecycleForwarder lifecycleForwarder = LifecycleForwarder.LOCAL;
  private Function<Function<PartitionKey, BlockIndex>, IndexShards> indexShards =
      IndexShards::direct;

  public SelectionServiceBuilder routerConfig(RouterConfig c) {
    this.router = c;
    return this;
  }

  /** Enables session affinity with this idle TTL (null disables it). */
  public SelectionServiceBuilder sessionAffinityTtl(Duration ttl) {
    this.sessionAffinityTtl = ttl;
    return this;
  }

  public SelectionServiceBuilder selectionCache(Duration ttl, int maxEntries, long maxBytes) {
    this.selectionCacheTtl = ttl;
    this.selectionCacheMaxEntries = maxEntries;
    this.selectionCacheMaxBytes = maxBytes;
    return this;
  }

  /**
   * The event-driven index implementation of each partition. It must be safe for one writer
   * thread per rank next to concurrent readers ({@link ShardedBlockIndex} is).
   */
  public SelectionServiceBuilder indexFactory(Supplier<BlockIndex> f) {
    this.indexFactory = f;
    return this;
  }

  /**
   * Where selections read the event index's shards; by default {@link IndexShards#direct}. The
   * function receives the service's own lookup of a partition's event index (null: none, as in
   * approximate mode).
   */
  public SelectionServiceBuilder indexShards(
      Function<Function<PartitionKey, BlockIndex>, IndexShards> f) {
    this.indexShards = java.util.Objects.requireNonNull(f, "indexShards");
    return this;
  }

  public SelectionServiceBuilder clock(Clock c) {
    this.clock = c;
    return this;
  }

  /**
   * The RNG used for tie-breaks, softmax sampling and untracked-reuse hashes (seed it in tests).
   * It is shared by concurrent selections: pass a thread-safe one (like {@link Random}) unless
   * calls are serialized.
   */
  public SelectionServiceBuilder random(RandomGenerator r) {
    this.rng = r;
    return this;
  }

  /**
   * The score-and-pick stage for every request, whatever its configured policy; by default a
   * {@link ConfiguredPolicy} over the service's {@link PolicyRegistry}, which follows each
   * request's effective {@code policy} ({@code kv} unless configured). A policy's dispatch stage
   * (the {@code kvc} policy's) still follows the configured name.
   */
  public SelectionServiceBuilder policy(SelectionPolicy p) {
    this.policy = p;
    return this;
  }

  /**
   * Registers a policy under its {@link SelectionPolicy#name} (replacing a standard one of that
   * name), so that a request whose effective {@code policy} names it is picked by it. The
   * standard ones are {@link PolicyRegistry#standard()} and the {@code kvc} dispatcher. The name
   * must also be one the configuration accepts ({@code PolicySettings.NAMES}).
   */
  public SelectionServiceBuilder registerPolicy(SelectionPolicy p) {
    this.registered.add(java.util.Objects.requireNonNull(p, "policy"));
    return this;
  }

  /**
   * The session table; by default a {@link LocalSessionAffinity} when a TTL is set. The function
   * receives the service clock. Only used when a session-affinity TTL is set.
   */
  public SelectionServiceBuilder sessionAffinity(Function<Clock, SessionAffinity> f) {
    this.affinity = f;
    return this;
  }

  /**
   * Where {@code /select} leaves selections for a replayed {@code /reservations}, replacing the
   * {@link LocalPendingStore} built from {@link #selectionCache} (a cluster-wide store, so that a
   * replay may reach another node). Keys and values are the service's own records: the store must
   * keep whatever it is given.
   */
  public SelectionServiceBuilder pendingStore(PendingStore<Object, Object> store) {
    this.pendingStore = store;
    return this;
  }

  /** Where booked load steps are published to peers; {@link LoadSync#LOCAL} by default. */
  public SelectionServiceBuilder loadSync(LoadSync s) {
    this.loadSync = s;
    return this;
  }

  /** Where catalog changes are published to peers; {@link CatalogSync#LOCAL} by default. */
  public SelectionServiceBuilder catalogSync(CatalogSync s) {
    this.catalogSync = s;
    return this;
  }

  /**
   * Where lifecycle calls for bookings this node does not hold go (in a cluster, to the node that
   * booked); {@link LifecycleForwarder#LOCAL} (404) by default.
   */
  public SelectionServiceBuilder lifecycleForwarder(LifecycleForwarder f) {
    this.lifecycleForwarder = java.util.Objects.requireNonNull(f, "lifecycleForwarder");
    return this;
  }

  /**
   * The router queue: policy classes and ISL tiers (by default one class with the router's
   * {@code router_queue_policy}) and the longest a request waits before a 429 (30 s by default).
   * Queueing itself is on when {@code router_queue_threshold} (or a class's
   * {@code prefill_busy_threshold}) is set.
   */
  public SelectionServiceBuilder queue(QueueConfig config, Duration timeout) {
    this.queueConfig = config;
    this.queueTimeout = timeout;
    return this;
  }

  /**
   * The KVC-Router's state (pins, rejects, in-flight, assigned); by default a
   * {@link io.kvselect.core.kvc.LocalKvcState}. A cluster passes one over its session table.
   */
  public SelectionServiceBuilder kvcState(io.kvselect.core.kvc.KvcState s) {
    this.kvcState = s;
    return this;
  }

  /**
   * The transport of workers' {@code admission_endpoint} RPC (the server's HTTP adapter); without
   * one, the built-in admission model answers for every worker.
   */
  public SelectionServiceBuilder admissionClient(io.kvselect.core.kvc.AdmissionClient c) {
    this.admissionClient = c;
    return this;
  }

  public SelectionServiceBuilder settings(ServiceSettings s) {
    this.router = s.router();
    this.sessionAffinityTtl = s.sessionAffinityTtl();
    this.selectionCacheTtl = s.selectionCacheTtl();
    this.selectionCacheMaxEntries = s.selectionCacheMaxEntries();
    this.selectionCacheMaxBytes = s.selectionCacheMaxBytes();
    this.indexFactory = s.eventIndexFactory();
    return this;
  }

  public SelectionService build() {
    ServiceSettings settings =
        new ServiceSettings(
            router,
            sessionAffinityTtl,
            selectionCacheTtl,
            selectionCacheMaxEntries,
            selectionCacheMaxBytes,
            indexFactory);
    SessionAffinity sessions =
        sessionAffinityTtl == null
            ? null
            : affinity != null
                ? affinity.apply(clock)
                : new LocalSessionAffinity(clock, sessionAffinityTtl);
    PendingStore<PendingKey, PendingSelection> store =
        pendingStore != null
            ? castPending(pendingStore)
            : new LocalPendingStore<>(
                clock, selectionCacheTtl, selectionCacheMaxEntries, selectionCacheMaxBytes);
    QueueConfig queue =
        queueConfig != null ? queueConfig : QueueConfig.defaults(router.queue().policy());
    KvcSelection kvc =
        new KvcSelection(
            kvcState != null ? kvcState : new io.kvselect.core.kvc.LocalKvcState(),
            admissionClient,
            rng);
    PolicyRegistry policies = PolicyRegistry.standard().with(kvc);
    for (SelectionPolicy p : registered) {
      policies = policies.with(p);
    }
    SelectionPipeline pipeline =
        SelectionPipeline.standard(policy != null ? policy : new ConfiguredPolicy(policies));
    return new SelectionService(
        settings,
        clock,
        rng,
        pipeline,
        policies,
        kvc,
        sessions,
        store,
        loadSync,
        catalogSync,
        queue,
        queueTimeout,
        lifecycleForwarder,
        indexShards);
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static PendingStore<PendingKey, PendingSelection> castPending(
      PendingStore<Object, Object> store) {
    return (PendingStore) store;
  }
}
