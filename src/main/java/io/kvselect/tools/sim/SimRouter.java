package io.kvselect.tools.sim;

import io.kvselect.core.catalog.DisaggSpec;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.events.EventApplier;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.kvc.KvcMetrics;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.Selection;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.NodeParts;
import io.kvselect.server.config.NodeSettings;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.function.Consumer;

/**
 * The router of a simulated deployment: the server's own {@link SelectionService}, built from a
 * node's settings by {@link NodeParts#builder} (the policy and the {@code kvc} knobs given as the
 * node's environment variables), on the simulated clock and an RNG seeded with the run's seed.
 * The simulator calls it only as a node's clients and engines do: {@code POST /workers} for each
 * worker, {@code /select_and_reserve}, {@code prefill_complete} and {@code DELETE} of each
 * booking, and every engine's KV events applied to the partition's event index by the node's
 * {@link EventApplier}. Each call can be reported to a {@link Consumer} of {@link Op}s, which a
 * test replays into a service built independently.
 *
 * <p>Confined to the simulator's thread (the service's local seams complete every stage before
 * returning).
 */
final class SimRouter {

  /** The one partition of a simulated deployment. */
  static final PartitionKey PARTITION = new PartitionKey(null, null);

  /** One call the simulator made, at simulated time {@code atMs}. */
  sealed interface Op permits AddWorker, Events, Select, PrefillComplete, Free {
    double atMs();
  }

  record AddWorker(double atMs, WorkerSpec spec) implements Op {}

  record Events(double atMs, WorkerRank rank, KvEventBatch batch) implements Op {}

  record Select(double atMs, SelectRequest request, Selection answer) implements Op {}

  record PrefillComplete(double atMs, String id) implements Op {}

  record Free(double atMs, String id) implements Op {}

  private final SelectionService service;
  private final SimClock clock;
  private final int blockTokens;
  private final Consumer<Op> ops;
  private long lifecycleMisses;

  /**
   * @param policy the server's policy name ({@code kvc}, {@code kv}, {@code sticky},
   *     {@code least_loaded}, {@code round_robin})
   * @param ops where every call is reported, or null
   */
  SimRouter(
      String policy, KvcParams kvc, SimClock clock, long seed, int blockTokens, Consumer<Op> ops) {
    this.service = build(NodeSettings.parse(new String[0], environment(policy, kvc)), clock, seed);
    this.clock = clock;
    this.blockTokens = blockTokens;
    this.ops = ops;
  }

  /** The service of a node with {@code settings}, on {@code clock}, with tie-breaks drawn from {@code seed}. */
  static SelectionService build(NodeSettings settings, java.time.Clock clock, long seed) {
    return NodeParts.builder(settings).clock(clock).random(new Random(seed)).build();
  }

  /** The node environment that selects {@code policy} with the knobs {@code k}. */
  static Map<String, String> environment(String policy, KvcParams k) {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("KVSELECT_ROUTER_POLICY", policy);
    env.put("KVSELECT_KVC_ALPHA", Double.toString(k.alpha()));
    env.put("KVSELECT_KVC_TAU_REJECT", Integer.toString(k.tauReject()));
    env.put("KVSELECT_KVC_TAU_APPEND", Long.toString(k.tauAppend()));
    env.put("KVSELECT_KVC_RHO", Double.toString(k.rho()));
    if (k.epsilon() != null) {
      env.put("KVSELECT_KVC_EPSILON", Integer.toString(k.epsilon()));
    }
    env.put("KVSELECT_KVC_ADMIT_ACCOUNTING", k.accounting().wire());
    env.put("KVSELECT_KVC_RESET_SCOPE", k.resetScope().wire());
    env.put("KVSELECT_KVC_ADMIT_WAITING", Boolean.toString(k.countWaiting()));
    return env;
  }

  /** The registration of simulated worker {@code id}: a decode worker with capacity {@code kd}, or a prefill worker. */
  static WorkerSpec spec(long id, boolean decode, long kd, int blockTokens) {
    return WorkerSpec.builder(id)
        .endpoint(String.format(Locale.ROOT, "http://%s%d:8000", decode ? "d" : "p", id))
        .kvEventsEndpoint("tcp://127.0.0.1:" + (20000 + id))
        .blockSize(blockTokens)
        .dataParallelStartRank(0)
        .dataParallelSize(1)
        .disagg(new DisaggSpec(decode ? "decode" : "prefill", decode ? kd : null, null))
        .build();
  }

  /** {@code POST /workers}. */
  WorkerRank addWorker(long id, boolean decode, long kd) {
    WorkerSpec s = spec(id, decode, kd, blockTokens);
    service.upsertWorker(s).toCompletableFuture().join();
    report(new AddWorker(clock.nowMs(), s));
    return new WorkerRank(id, 0);
  }

  /** {@code POST /select_and_reserve} of a session's turn, booking id {@code id}. */
  Selection selectAndReserve(String id, int session, int[] prompt, long expectedOutputTokens) {
    SelectRequest req =
        new SelectRequest(
            PARTITION,
            id,
            PromptInput.tokens(prompt),
            null,
            expectedOutputTokens,
            "s" + session,
            null,
            null,
            null,
            null,
            null,
            null,
            false);
    Selection s = service.select(req, true).toCompletableFuture().join();
    report(new Select(clock.nowMs(), req, s));
    return s;
  }

  /** {@code POST /reservations/{id}/prefill_complete} (the first token arrived). */
  void prefillComplete(String id) {
    try {
      service.prefillComplete(id).toCompletableFuture().join();
    } catch (RuntimeException e) {
      lifecycleMisses++;
    }
    report(new PrefillComplete(clock.nowMs(), id));
  }

  /** {@code DELETE /reservations/{id}} (the request finished). */
  void free(String id) {
    try {
      service.free(id).toCompletableFuture().join();
    } catch (RuntimeException e) {
      lifecycleMisses++;
    }
    report(new Free(clock.nowMs(), id));
  }

  /** One KV-event batch of engine {@code rank}, applied as the node's event ingestion applies it. */
  void events(WorkerRank rank, List<KvEvent> events) {
    if (events.isEmpty()) {
      return;
    }
    KvEventBatch batch = new KvEventBatch(clock.nowMs() / 1000.0, events, null);
    EventApplier.apply(service.eventIndex(PARTITION), rank, blockTokens, false, batch);
    report(new Events(clock.nowMs(), rank, batch));
  }

  KvcMetrics kvcMetrics() {
    return service.kvcMetrics();
  }

  SelectionService service() {
    return service;
  }

  /** Lifecycle calls the service refused (a booking it no longer held). */
  long lifecycleMisses() {
    return lifecycleMisses;
  }

  private void report(Op op) {
    if (ops != null) {
      ops.accept(op);
    }
  }
}
