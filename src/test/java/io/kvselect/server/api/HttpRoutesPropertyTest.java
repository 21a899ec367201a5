package io.kvselect.server.api;

import static io.kvselect.server.api.JsonDoc.obj;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.api.BodyMutation.Applied;
import io.kvselect.server.api.JsonDoc.J;
import io.kvselect.server.api.JsonDoc.Obj;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.Example;
import net.jqwik.api.FixedSeedMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import net.jqwik.api.statistics.Statistics;

/**
 * Property-based tests of every HTTP route against one real node (approximate mode, loopback,
 * ephemeral port): valid bodies, path parameters and query strings, and each of them mutated
 * (wrong types, nulls inside arrays, missing members, out-of-range numbers, huge and non-BMP
 * strings, lone surrogates, duplicate keys, deep nesting, truncated JSON, other content types).
 *
 * <p>For every request: no 5xx (except the contract's 503 when no worker is schedulable); every
 * 4xx is the {@code {"error": "..."}} envelope, a 400/422 about a field names it (and a null
 * inserted into a typed array is named down to {@code field[i]}); a body that is not declared as
 * JSON gets 415; and a request that fails changes nothing: the catalog ({@code GET /workers}),
 * the loads ({@code GET /loads}), the index ({@code GET /dump}) and the booking, pending-selection,
 * index-size and schedulable-worker gauges are the same before and after it. Valid requests must
 * succeed often enough that the accepting paths are covered too.
 *
 * <p>Seeded and bounded: {@value #TRIES} tries per property, seeds {@value #SEED} followed by the
 * property's number. The node's TTLs are an hour, so nothing expires while the class runs and any
 * difference is the request's doing. Properties run one at a time on one thread.
 */
class HttpRoutesPropertyTest {

  static final int TRIES = 200;
  static final String SEED = "6042";

  private static final long SCRATCH = 1000;
  private static final String[] SELECTION_FAMILY = {
    "/select", "/select_and_reserve", "/potential_loads", "/overlap_scores"
  };

  private static NodeHarness n;
  private static final HttpClient CLIENT =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /**
   * State after the last request that may have changed it; null when it must be fetched again.
   * Owned by the thread that runs the properties (jqwik runs them one at a time).
   */
  private static State known;

  private static final AtomicLong IDS = new AtomicLong();

  /** The observable state of the node. */
  record State(String workers, String loads, String dump, Map<String, String> gauges) {}

  @BeforeContainer
  static void start() throws Exception {
    n =
        new NodeHarness(
            Map.of(
                "DYN_ROUTER_USE_KV_EVENTS",
                "false",
                "DYN_ROUTER_TTL_SECS",
                "3600",
                "DYN_ROUTER_ACTIVE_REQUEST_EXPIRY_SECS",
                "3600"),
            "--selection-cache-ttl-secs",
            "3600",
            "--session-affinity-ttl-secs",
            "3600");
    assertEquals(
        201,
        n.worker(11, "taints", List.of("gpu"), "topology_domains", Map.of("zone", "a")).status());
    assertEquals(
        201,
        n.worker(
                12,
                "data_parallel_size",
                2,
                "kv_events_endpoints",
                Map.of("0", "tcp://127.0.0.1:5120", "1", "tcp://127.0.0.1:5121"))
            .status());
    assertEquals(201, n.worker(13, "model_name", "m2", "routing_group", "g2").status());
  }

  @AfterContainer
  static void stop() throws Exception {
    n.close();
  }

  // ---------------------------------------------------------------- oracle

  private static final String[] GAUGES = {
    "kvselect_active_reservations",
    "kvselect_pending_selections",
    "kvselect_index_blocks",
    "kvselect_schedulable_workers"
  };

  /** Reads the four views concurrently. */
  private static State fetchState() throws Exception {
    List<CompletableFuture<String>> views = new ArrayList<>();
    for (String path : new String[] {"/metrics", "/workers", "/loads", "/dump"}) {
      views.add(
          CLIENT
              .sendAsync(
                  HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.node.port() + path))
                      .timeout(Duration.ofSeconds(60))
                      .build(),
                  HttpResponse.BodyHandlers.ofString())
              .thenApply(
                  r -> {
                    if (r.statusCode() != 200) {
                      throw new IllegalStateException(
                          "GET " + path + " -> " + r.statusCode() + " " + r.body());
                    }
                    return r.body();
                  }));
    }
    String metrics = views.get(0).get(90, TimeUnit.SECONDS);
    Map<String, String> gauges = new TreeMap<>();
    for (String g : GAUGES) {
      int at = metrics.indexOf("\n" + g + " ");
      int end = at < 0 ? -1 : metrics.indexOf('\n', at + 1);
      gauges.put(
          g,
          at < 0
              ? "absent"
              : metrics.substring(at + g.length() + 2, end < 0 ? metrics.length() : end));
    }
    return new State(
        views.get(1).get(90, TimeUnit.SECONDS),
        views.get(2).get(90, TimeUnit.SECONDS),
        views.get(3).get(90, TimeUnit.SECONDS),
        gauges);
  }

  private static State state() throws Exception {
    if (known == null) {
      known = fetchState();
    }
    return known;
  }

  /** A request that must succeed (setup of a property): its effects become the known state. */
  private static NodeHarness.Reply setup(String method, String path, String body, int status)
      throws Exception {
    known = null;
    NodeHarness.Reply r = n.call(method, path, body, body == null ? null : BodyMutation.JSON);
    assertEquals(
        status, r.status(), "setup " + method + " " + path + " " + body + " -> " + r.raw());
    return r;
  }

  /** What a request is and what its answer must satisfy besides the general rules. */
  record Req(String method, String path, Applied sent, boolean readsBody, String orNamed) {
    Req(String method, String path, Applied sent, boolean readsBody) {
      this(method, path, sent, readsBody, null);
    }

    @Override
    public String toString() {
      return method
          + " "
          + path
          + " ["
          + sent.description()
          + "] content-type="
          + sent.contentType()
          + " body="
          + BodyMutation.abbreviate(sent.body());
    }
  }

  /**
   * Sends {@code q} and checks every rule; returns the status. The state before is the one read
   * after the last request that may have changed it (every 2xx and every setup forgets it), so a
   * failed request is compared with the state that every failed request since then has left.
   */
  private static int check(Req q) throws Exception {
    State before = state();
    NodeHarness.Reply r = n.call(q.method(), q.path(), q.sent().body(), q.sent().contentType());
    String where = q + "\n  -> " + r.status() + " " + BodyMutation.abbreviate(r.raw());
    int s = r.status();
    Statistics.label("status").collect(s < 300 ? "2xx" : s == 503 ? "503" : "4xx");
    boolean selection =
        Arrays.asList(SELECTION_FAMILY).contains(q.path()) || q.path().equals("/reservations");
    assertTrue(
        s < 500
            || (s == 503
                && selection
                && r.error() != null
                && (r.error().contains("schedulable") || r.error().contains("eligible"))),
        "no 5xx: " + where);
    if (s < 400) {
      known = null;
      return s;
    }
    assertTrue(
        r.body() != null
            && r.body().isObject()
            && r.body().path("error").isTextual()
            && !r.body().get("error").asText().isBlank(),
        "the error envelope: " + where);
    String error = r.error();
    boolean hasBody = !q.sent().body().isEmpty();
    String ct = q.sent().contentType();
    if (hasBody && ((ct != null && !Routes.isJson(ct)) || (ct == null && q.readsBody()))) {
      assertEquals(415, s, "a body not declared as JSON: " + where);
    }
    boolean syntax = error.startsWith("Failed to parse the request body as JSON");
    if ((s == 400 || s == 422) && !syntax) {
      boolean orNamed = q.orNamed() != null && error.contains(q.orNamed());
      if (q.sent().field() != null) {
        assertTrue(
            orNamed || error.contains(q.sent().field()),
            "the error names `" + q.sent().field() + "`: " + where);
      }
      if (q.sent().element() != null) {
        assertTrue(
            orNamed || error.contains(q.sent().element()),
            "the error names `" + q.sent().element() + "`: " + where);
      }
    }
    State after = fetchState();
    assertStateEquals(before, after, where);
    return s;
  }

  private static void assertStateEquals(State before, State after, String where) {
    assertEquals(before.gauges(), after.gauges(), "a failed request changed the gauges: " + where);
    assertEquals(
        before.workers(), after.workers(), "a failed request changed GET /workers: " + where);
    assertEquals(before.loads(), after.loads(), "a failed request changed GET /loads: " + where);
    assertEquals(before.dump(), after.dump(), "a failed request changed GET /dump: " + where);
  }

  private static void coverBothOutcomes() {
    Statistics.label("status")
        .coverage(
            c -> {
              c.check("2xx").count(k -> k > 0);
              c.check("4xx").count(k -> k > 0);
            });
  }

  private static String fresh(String prefix) {
    return prefix + "-" + IDS.incrementAndGet();
  }

  // ---------------------------------------------------------------- the oracle itself

  @Example
  void stateIsStableWhileNothingHappens() throws Exception {
    known = null;
    State a = fetchState();
    assertStateEquals(a, fetchState(), "two reads in a row");
    assertTrue(a.gauges().values().stream().noneMatch("absent"::equals), a.gauges().toString());
    assertTrue(a.workers().contains("\"worker_id\":11"), a.workers());
  }

  // ---------------------------------------------------------------- workers

  @Property(tries = TRIES, seed = SEED + "0", whenFixedSeed = FixedSeedMode.ALLOW)
  void postWorkers(@ForAll("workerBodies") Obj body, @ForAll("mutations") BodyMutation m)
      throws Exception {
    check(new Req("POST", "/workers", m.apply(body), true));
    coverBothOutcomes();
  }

  @Property(tries = TRIES, seed = SEED + "1", whenFixedSeed = FixedSeedMode.ALLOW)
  void patchWorker(
      @ForAll("workerPatches") Obj body,
      @ForAll("mutations") BodyMutation m,
      @ForAll("workerIds") String id)
      throws Exception {
    ensureScratchWorker();
    check(new Req("PATCH", "/workers/" + id, m.apply(body), true, "worker id in path"));
    coverBothOutcomes();
  }

  @Property(tries = TRIES, seed = SEED + "2", whenFixedSeed = FixedSeedMode.ALLOW)
  void deleteWorker(@ForAll("workerIds") String id, @ForAll("anyContentType") String ct)
      throws Exception {
    ensureScratchWorker();
    check(new Req("DELETE", "/workers/" + id, bodiless(ct), false));
    coverBothOutcomes();
  }

  @Property(tries = TRIES, seed = SEED + "3", whenFixedSeed = FixedSeedMode.ALLOW)
  void getWorkersAndLoadsChangeNothing(@ForAll("queries") String query, @ForAll boolean loads)
      throws Exception {
    State before = state();
    NodeHarness.Reply r = n.get((loads ? "/loads" : "/workers") + query);
    assertEquals(200, r.status(), query + " -> " + r.raw());
    assertTrue(r.body() != null && r.body().isArray(), r.raw());
    assertStateEquals(before, fetchState(), "GET " + query);
  }

  private static void ensureScratchWorker() throws Exception {
    if (!n.get("/workers").raw().contains("\"worker_id\":" + SCRATCH + ",")) {
      setup(
          "POST",
          "/workers",
          JsonDoc.json(
              obj(
                  "worker_id",
                  SCRATCH,
                  "endpoint",
                  "http://scratch:8000",
                  "block_size",
                  4,
                  "kv_events_endpoint",
                  "tcp://127.0.0.1:5999")),
          201);
    }
  }

  @Provide
  Arbitrary<BodyMutation> mutations() {
    return BodyMutation.any();
  }

  @Provide
  Arbitrary<Obj> workerBodies() {
    Arbitrary<Long> id = Arbitraries.longs().between(SCRATCH, SCRATCH + 3);
    return Arbitraries.integers()
        .between(1, 4)
        .flatMap(
            size ->
                Arbitraries.integers()
                    .between(0, 4)
                    .flatMap(
                        start ->
                            Combinators.combine(
                                    List.of(
                                        id.map(v -> new Object[] {"worker_id", v}),
                                        Arbitraries.of(
                                                "http://scratch-a:8000", "http://[::1]:8000/v1")
                                            .injectNull(0.1)
                                            .map(v -> new Object[] {"endpoint", v}),
                                        Arbitraries.of(4, 4, 4, 8, 16)
                                            .injectNull(0.1)
                                            .map(v -> new Object[] {"block_size", v}),
                                        Arbitraries.of("default", "scratch")
                                            .injectNull(0.3)
                                            .map(v -> new Object[] {"model_name", v}),
                                        Arbitraries.of("default", "g9")
                                            .injectNull(0.3)
                                            .map(v -> new Object[] {"routing_group", v}),
                                        Arbitraries.just("tcp://127.0.0.1:5998")
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"kv_events_endpoint", v}),
                                        Arbitraries.just(size)
                                            .map(v -> new Object[] {"data_parallel_size", v}),
                                        Arbitraries.just(start)
                                            .injectNull(0.3)
                                            .map(v -> new Object[] {"data_parallel_start_rank", v}),
                                        Arbitraries.just(rankMap(start, size, "tcp://127.0.0.1:"))
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"kv_events_endpoints", v}),
                                        (size == 1
                                                ? Arbitraries.just("tcp://127.0.0.1:5997")
                                                    .injectNull(0.5)
                                                : Arbitraries.just((String) null))
                                            .map(v -> new Object[] {"replay_endpoint", v}),
                                        Arbitraries.longs()
                                            .between(1, 1_000_000)
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"max_num_batched_tokens", v}),
                                        Arbitraries.longs()
                                            .between(1, 1_000_000)
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"total_kv_blocks", v}),
                                        Arbitraries.strings()
                                            .alpha()
                                            .ofMaxLength(12)
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"stable_routing_id", v}),
                                        Arbitraries.just(false)
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"is_eagle", v}),
                                        Arbitraries.of("gpu", "a100", "spot")
                                            .list()
                                            .ofMaxSize(3)
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"taints", v}),
                                        Arbitraries.just(JsonDoc.map("zone", "a", "rack", "r1"))
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"topology_domains", v}),
                                        Arbitraries.of("d1", "d2")
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"kv_transfer_domain", v}),
                                        Arbitraries.of("required", "preferred")
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"kv_transfer_enforcement", v}),
                                        Arbitraries.doubles()
                                            .between(0, 1)
                                            .injectNull(0.5)
                                            .map(
                                                v ->
                                                    new Object[] {
                                                      "kv_transfer_preferred_weight", v
                                                    }),
                                        Arbitraries.of("prefill", "decode")
                                            .injectNull(0.5)
                                            .map(v -> new Object[] {"router_hint_worker_type", v}),
                                        Arbitraries.just(rankMap(start, size, "http://127.0.0.1:"))
                                            .injectNull(0.7)
                                            .map(
                                                v ->
                                                    new Object[] {
                                                      "router_hint_source_control_endpoints", v
                                                    })))
                                .as(HttpRoutesPropertyTest::object)));
  }

  @Provide
  Arbitrary<Obj> workerPatches() {
    return Combinators.combine(
            List.of(
                Arbitraries.of("http://scratch-b:8000")
                    .injectNull(0.5)
                    .map(v -> new Object[] {"endpoint", v}),
                Arbitraries.of(4, 8).injectNull(0.5).map(v -> new Object[] {"block_size", v}),
                Arbitraries.of("gpu", "spot")
                    .list()
                    .ofMaxSize(2)
                    .injectNull(0.5)
                    .map(v -> new Object[] {"taints", v}),
                Arbitraries.just(JsonDoc.map("zone", "b"))
                    .injectNull(0.5)
                    .map(v -> new Object[] {"topology_domains", v}),
                Arbitraries.longs()
                    .between(1, 100_000)
                    .injectNull(0.5)
                    .map(v -> new Object[] {"max_num_batched_tokens", v}),
                Arbitraries.doubles()
                    .between(0, 1)
                    .injectNull(0.6)
                    .map(v -> new Object[] {"kv_transfer_preferred_weight", v}),
                Arbitraries.just(JsonDoc.map("0", "tcp://127.0.0.1:5996"))
                    .injectNull(0.7)
                    .map(v -> new Object[] {"kv_events_endpoints", v}),
                Arbitraries.of(1, 2)
                    .injectNull(0.7)
                    .map(v -> new Object[] {"data_parallel_size", v})))
        .as(HttpRoutesPropertyTest::object);
  }

  /** Worker ids in a path: mostly the scratch worker, else unknown ids and malformed text. */
  @Provide
  Arbitrary<String> workerIds() {
    return Arbitraries.frequencyOf(
        Tuple.of(6, Arbitraries.just(Long.toString(SCRATCH))),
        Tuple.of(1, Arbitraries.longs().between(2000, Long.MAX_VALUE).map(String::valueOf)),
        Tuple.of(
            3,
            Arbitraries.of(
                    "abc",
                    "-1",
                    "18446744073709551616",
                    "18446744073709551615",
                    "1.5",
                    "0x10",
                    "１２",
                    "🚀",
                    "9".repeat(40),
                    "+7",
                    " 7",
                    "1000 ",
                    "%",
                    "1000;x",
                    "null")
                .map(HttpRoutesPropertyTest::segment)));
  }

  /** Query strings for the catalog and load listings: partition filters of any text. */
  @Provide
  Arbitrary<String> queries() {
    Arbitrary<String> value =
        Arbitraries.frequencyOf(
            Tuple.of(3, Arbitraries.of("default", "m2", "g2", "absent")),
            Tuple.of(2, Arbitraries.strings().ofMaxLength(20)),
            Tuple.of(1, Arbitraries.of("", "ünï 🚀", "a&b=c", "%", "x".repeat(1000))));
    return Combinators.combine(value.injectNull(0.3), value.injectNull(0.5))
        .as(
            (model, group) -> {
              List<String> q = new ArrayList<>();
              if (model != null) {
                q.add("model_name=" + URLEncoder.encode(model, StandardCharsets.UTF_8));
              }
              if (group != null) {
                q.add("routing_group=" + URLEncoder.encode(group, StandardCharsets.UTF_8));
              }
              return q.isEmpty() ? "" : "?" + String.join("&", q);
            });
  }

  // ---------------------------------------------------------------- selection family

  @Property(tries = TRIES, seed = SEED + "4", whenFixedSeed = FixedSeedMode.ALLOW)
  void select(@ForAll("selectBodies") Obj body, @ForAll("mutations") BodyMutation m)
      throws Exception {
    check(new Req("POST", "/select", m.apply(body), true));
    coverBothOutcomes();
  }

  @Property(tries = TRIES, seed = SEED + "5", whenFixedSeed = FixedSeedMode.ALLOW)
  void selectAndReserve(@ForAll("selectBodies") Obj body, @ForAll("mutations") BodyMutation m)
      throws Exception {
    check(new Req("POST", "/select_and_reserve", m.apply(body), true));
    coverBothOutcomes();
  }

  @Property(tries = TRIES, seed = SEED + "6", whenFixedSeed = FixedSeedMode.ALLOW)
  void potentialLoads(@ForAll("selectBodies") Obj body, @ForAll("mutations") BodyMutation m)
      throws Exception {
    check(new Req("POST", "/potential_loads", m.apply(body), true));
    coverBothOutcomes();
  }

  @Property(tries = TRIES, seed = SEED + "7", whenFixedSeed = FixedSeedMode.ALLOW)
  void overlapScores(@ForAll("selectBodies") Obj body, @ForAll("mutations") BodyMutation m)
      throws Exception {
    check(new Req("POST", "/overlap_scores", m.apply(body), true));
    coverBothOutcomes();
  }

  @Provide
  Arbitrary<Obj> selectBodies() {
    return Combinators.combine(prompt(), selectOptions())
        .as(
            (p, o) -> {
              List<Object> kv = new ArrayList<>(p);
              kv.addAll(o);
              return obj(kv.toArray());
            });
  }

  private static Arbitrary<int[]> tokens(int max) {
    Arbitrary<Integer> token =
        Arbitraries.frequencyOf(
            Tuple.of(8, Arbitraries.integers().between(0, 40)),
            Tuple.of(1, Arbitraries.integers()));
    return token.array(int[].class).ofMinSize(1).ofMaxSize(max);
  }

  /** A prompt as tokens, as precomputed hashes, or as tokens with multimodal routing info. */
  private static Arbitrary<List<Object>> prompt() {
    Arbitrary<List<Object>> plain = tokens(40).map(t -> List.of("token_ids", t));
    Arbitrary<List<Object>> hashes =
        Arbitraries.integers()
            .between(1, 6)
            .flatMap(
                k ->
                    Combinators.combine(
                            Arbitraries.longs().array(long[].class).ofSize(k),
                            Arbitraries.longs().array(long[].class).ofSize(k))
                        .as(
                            (b, s) ->
                                List.<Object>of(
                                    "block_hashes", b, "sequence_hashes", s, "isl_tokens", 4 * k)));
    Arbitrary<J> mmObject =
        Arbitraries.longs().between(0, Long.MAX_VALUE).map(h -> obj("mm_hash", h));
    Arbitrary<J> mmBlock =
        mmObject
            .list()
            .ofMinSize(1)
            .ofMaxSize(2)
            .map(l -> obj("mm_objects", l))
            .injectNull(0.3)
            .map(b -> b == null ? JsonDoc.NULL : b);
    Arbitrary<List<Object>> multimodal =
        Combinators.combine(
                tokens(16), tokens(16), mmBlock.list().ofMaxSize(3), Arbitraries.of(true, false))
            .as(
                (t, rt, blocks, nested) ->
                    nested
                        ? List.of(
                            "token_ids",
                            t,
                            "mm_routing_info",
                            obj("routing_token_ids", rt, "block_mm_infos", blocks))
                        : List.of("token_ids", t, "block_mm_infos", blocks));
    Arbitrary<List<Object>> salted =
        Combinators.combine(
                tokens(24),
                Arbitraries.of("lora-a", "").injectNull(0.5),
                Arbitraries.of("salt", "").injectNull(0.5))
            .as(
                (t, l, c) -> {
                  List<Object> kv = new ArrayList<>(List.of("token_ids", t));
                  kv.addAll(Arrays.asList("lora_name", l, "cache_salt", c));
                  return kv;
                });
    return Arbitraries.frequencyOf(
        Tuple.of(5, plain), Tuple.of(2, hashes), Tuple.of(2, multimodal), Tuple.of(1, salted));
  }

  private static Arbitrary<List<Object>> selectOptions() {
    Arbitrary<Object[]> partition =
        Arbitraries.frequencyOf(
            Tuple.of(6, Arbitraries.just(new Object[0])),
            Tuple.of(
                2,
                Arbitraries.just(
                    new Object[] {"model_name", "default", "routing_group", "default"})),
            Tuple.of(1, Arbitraries.just(new Object[] {"model_name", "m2", "routing_group", "g2"})),
            Tuple.of(1, Arbitraries.just(new Object[] {"model_name", "absent"})));
    Arbitrary<J> override =
        Combinators.combine(
                Arbitraries.doubles().between(0, 1).injectNull(0.5),
                Arbitraries.doubles().between(0, 2).injectNull(0.5),
                Arbitraries.doubles().between(0, 2).injectNull(0.5),
                Arbitraries.of(true, false).injectNull(0.5),
                Arbitraries.of(true, false).injectNull(0.5),
                Arbitraries.doubles().between(0, 1).injectNull(0.7),
                Arbitraries.doubles().between(0, 2).injectNull(0.7))
            .as(
                (credit, scale, temp, reuse, track, shared, weight) ->
                    obj(
                        "overlap_score_credit",
                        credit,
                        "prefill_load_scale",
                        scale,
                        "router_temperature",
                        temp,
                        "assume_kv_reuse",
                        reuse,
                        "track_prefill_tokens",
                        track,
                        "shared_cache_multiplier",
                        shared,
                        "overlap_score_weight",
                        weight));
    Arbitrary<J> sessionContext =
        Combinators.combine(
                Arbitraries.of("c1", "c2", "c3"),
                Arbitraries.of("p1").injectNull(0.5),
                Arbitraries.of(true, false).injectNull(0.5),
                Arbitraries.of("user_message", "tool_result", "other").injectNull(0.5),
                Arbitraries.of("a", "b").list().ofMaxSize(2).injectNull(0.5))
            .as(
                (id, parent, fin, trigger, header) ->
                    obj(
                        "session_id",
                        id,
                        "parent_session_id",
                        parent,
                        "session_final",
                        fin,
                        "input_trigger",
                        trigger,
                        "agent_headers",
                        header == null ? null : JsonDoc.map("x-trace", header)));
    Arbitrary<J> target =
        Arbitraries.of(
            obj("worker_id", 11, "dp_rank", 0),
            obj("worker_id", 12, "dp_rank", 1),
            JsonDoc.raw("11"));
    Arbitrary<J> constraints =
        Combinators.combine(
                Arbitraries.of("gpu", "a100").list().ofMaxSize(1).injectNull(0.5),
                Arbitraries.doubles().between(0, 1).injectNull(0.5))
            .as(
                (req, pref) ->
                    obj(
                        "required_taints",
                        req,
                        "preferred_taints",
                        pref == null ? null : JsonDoc.map("gpu", pref)));
    return Combinators.combine(
            List.of(
                partition.map(a -> (Object) a),
                Arbitraries.strings()
                    .alpha()
                    .ofLength(8)
                    .injectNull(0.5)
                    .map(v -> (Object) new Object[] {"selection_id", v}),
                Arbitraries.of("s1", "s2", "s3")
                    .injectNull(0.8)
                    .map(v -> (Object) new Object[] {"session_id", v}),
                Arbitraries.integers()
                    .between(0, 4096)
                    .injectNull(0.5)
                    .map(v -> (Object) new Object[] {"expected_output_tokens", v}),
                override
                    .injectNull(0.7)
                    .map(v -> (Object) new Object[] {"router_config_override", v}),
                sessionContext
                    .injectNull(0.8)
                    .map(v -> (Object) new Object[] {"session_context", v}),
                target.injectNull(0.8).map(v -> (Object) new Object[] {"affinity_target", v}),
                Arbitraries.of(
                        obj("worker_id", 11, "dp_rank", 0), obj("worker_id", 12, "dp_rank", 1))
                    .injectNull(0.85)
                    .map(v -> (Object) new Object[] {"pinned_worker", v}),
                Arbitraries.of(11L, 12L)
                    .list()
                    .ofMinSize(1)
                    .ofMaxSize(2)
                    .injectNull(0.6)
                    .map(v -> (Object) new Object[] {"allowed_worker_ids", v}),
                constraints
                    .injectNull(0.8)
                    .map(v -> (Object) new Object[] {"routing_constraints", v}),
                Arbitraries.of(true, false)
                    .injectNull(0.6)
                    .map(v -> (Object) new Object[] {"advisory", v}),
                Arbitraries.doubles()
                    .between(0, 10)
                    .injectNull(0.8)
                    .map(v -> (Object) new Object[] {"priority_jump", v}),
                Arbitraries.integers()
                    .between(0, 10)
                    .injectNull(0.8)
                    .map(v -> (Object) new Object[] {"strict_priority", v})))
        .as(
            parts -> {
              List<Object> kv = new ArrayList<>();
              for (Object p : parts) {
                kv.addAll(Arrays.asList((Object[]) p));
              }
              return kv;
            });
  }

  // ---------------------------------------------------------------- reservations

  /**
   * {@code POST /reservations} in both forms; the id is fresh, and a pending selection of that id
   * exists first for the cached-replay form and for {@code pendingFirst}.
   */
  @Property(tries = TRIES, seed = SEED + "8", whenFixedSeed = FixedSeedMode.ALLOW)
  void reservations(
      @ForAll("reservationBodies") Obj body,
      @ForAll("mutations") BodyMutation m,
      @ForAll boolean pendingFirst)
      throws Exception {
    String id = fresh("res");
    Obj withId = (Obj) JsonDoc.update(body, List.of(0), v -> JsonDoc.str(id));
    if (pendingFirst || body.members().size() == 1) {
      setup(
          "POST",
          "/select",
          "{\"selection_id\":\"" + id + "\",\"token_ids\":[1,2,3,4,5,6,7,8]}",
          200);
    }
    check(new Req("POST", "/reservations", m.apply(withId), true));
    coverBothOutcomes();
  }

  /** The cached-replay form or the explicit form; {@code selection_id} (first) is set by the property. */
  @Provide
  Arbitrary<Obj> reservationBodies() {
    Arbitrary<Obj> replay = Arbitraries.just(obj("selection_id", "ID"));
    Arbitrary<Obj> explicit =
        Combinators.combine(
                List.of(
                    Arbitraries.just(new Object[] {"selection_id", "ID"}),
                    Arbitraries.of(
                        new Object[] {"worker_id", 11, "dp_rank", 0},
                        new Object[] {"worker_id", 12, "dp_rank", 1},
                        new Object[] {"worker_id", 12}),
                    tokens(24).map(t -> new Object[] {"token_ids", t}),
                    Arbitraries.integers()
                        .between(0, 512)
                        .injectNull(0.5)
                        .map(v -> new Object[] {"expected_output_tokens", v}),
                    Arbitraries.integers()
                        .between(0, 1)
                        .injectNull(0.6)
                        .map(v -> new Object[] {"effective_prefill_tokens", v}),
                    Arbitraries.of(true, false)
                        .injectNull(0.5)
                        .map(v -> new Object[] {"track_prefill_tokens", v}),
                    Arbitraries.of("default")
                        .injectNull(0.7)
                        .map(v -> new Object[] {"model_name", v}),
                    Arbitraries.just(obj("router_temperature", 0.5))
                        .injectNull(0.8)
                        .map(v -> new Object[] {"router_config_override", v})))
            .as(HttpRoutesPropertyTest::object);
    return Arbitraries.frequencyOf(Tuple.of(1, replay), Tuple.of(2, explicit));
  }

  @Property(tries = TRIES, seed = SEED + "9", whenFixedSeed = FixedSeedMode.ALLOW)
  void reservationOperations(
      @ForAll("reservationOps") String op,
      @ForAll("reservationIds") String id,
      @ForAll("decayBodies") Obj decay,
      @ForAll("mutations") BodyMutation m,
      @ForAll("anyContentType") String ct)
      throws Exception {
    String booked = fresh("booked");
    setup(
        "POST",
        "/select_and_reserve",
        "{\"selection_id\":\"" + booked + "\",\"token_ids\":[1,2,3,4,5,6]}",
        200);
    String path = "/reservations/" + (id.equals("BOOKED") ? booked : id);
    Req q =
        switch (op) {
          case "prefill_complete" ->
              new Req(
                  "POST",
                  path + "/prefill_complete",
                  m.kind() == BodyMutation.Kind.CONTENT_TYPE ? m.apply(decay) : bodiless(ct),
                  false);
          case "output_block" ->
              new Req(
                  "POST",
                  path + "/output_block",
                  m.kind() == BodyMutation.Kind.NONE && m.position() % 2 == 0
                      ? bodiless(ct)
                      : m.apply(decay),
                  true);
          default -> new Req("DELETE", path, bodiless(ct), false);
        };
    check(q);
    coverBothOutcomes();
  }

  @Provide
  Arbitrary<String> reservationOps() {
    return Arbitraries.of("prefill_complete", "output_block", "free");
  }

  /** Mostly the booking made in setup ({@code BOOKED}), else unknown or odd ids. */
  @Provide
  Arbitrary<String> reservationIds() {
    return Arbitraries.frequencyOf(
        Tuple.of(7, Arbitraries.just("BOOKED")),
        Tuple.of(
            3,
            Arbitraries.of(
                    "nope", "ünï", "🚀", "a b", "a/b", "%", "x".repeat(2000), "null", "-1", "..")
                .map(HttpRoutesPropertyTest::segment)));
  }

  @Provide
  Arbitrary<Obj> decayBodies() {
    return Arbitraries.doubles().between(0, 1).injectNull(0.3).map(f -> obj("decay_fraction", f));
  }

  // ---------------------------------------------------------------- read-only routes, replica
  // sync, methods

  @Property(tries = TRIES, seed = SEED + "10", whenFixedSeed = FixedSeedMode.ALLOW)
  void readOnlyRoutesChangeNothing(
      @ForAll("readOnlyPaths") String path,
      @ForAll("queries") String query,
      @ForAll boolean withBody,
      @ForAll("anyContentType") String ct)
      throws Exception {
    State before = state();
    NodeHarness.Reply r =
        withBody
            ? n.call("GET", path + query, "{\"token_ids\":[1]}", BodyMutation.JSON)
            : n.call("GET", path + query, "", ct);
    assertTrue(
        r.status() == 200 || (path.equals("/ready") && r.status() == 503),
        path + query + " -> " + r.raw());
    assertStateEquals(before, fetchState(), "GET " + path + query);
  }

  @Provide
  Arbitrary<String> readOnlyPaths() {
    return Arbitraries.of(
        "/health", "/ready", "/loads", "/dump", "/metrics", "/workers", "/replica_sync/peers");
  }

  @Property(tries = TRIES, seed = SEED + "11", whenFixedSeed = FixedSeedMode.ALLOW)
  void replicaSyncIsRefusedWithoutChange(
      @ForAll("replicaPaths") String path,
      @ForAll("peerBodies") Obj body,
      @ForAll("mutations") BodyMutation m)
      throws Exception {
    int s = check(new Req("POST", path, m.apply(body), true));
    assertTrue(s >= 400, "replica sync is disabled: " + path + " -> " + s);
  }

  @Provide
  Arbitrary<String> replicaPaths() {
    return Arbitraries.of("/replica_sync/register_peer", "/replica_sync/deregister_peer");
  }

  @Provide
  Arbitrary<Obj> peerBodies() {
    return Arbitraries.of("tcp://127.0.0.1:7000", "tcp://peer:7000").map(e -> obj("endpoint", e));
  }

  @Property(tries = TRIES, seed = SEED + "12", whenFixedSeed = FixedSeedMode.ALLOW)
  void wrongMethodsAre405WithoutChange(@ForAll("wrongMethods") Tuple.Tuple2<String, String> call)
      throws Exception {
    int s =
        check(
            new Req(
                call.get1(),
                call.get2(),
                new Applied("{}", BodyMutation.JSON, null, null, "wrong method"),
                false));
    assertEquals(405, s, call.toString());
  }

  /** Every route's path with a method it does not accept. */
  @Provide
  Arbitrary<Tuple.Tuple2<String, String>> wrongMethods() {
    List<Tuple.Tuple2<String, String>> calls = new ArrayList<>();
    String[][] routes = {
      {"/workers", "GET", "POST"},
      {"/workers/" + SCRATCH, "PATCH", "DELETE"},
      {"/select", "POST"},
      {"/select_and_reserve", "POST"},
      {"/reservations", "POST"},
      {"/reservations/x/prefill_complete", "POST"},
      {"/reservations/x/output_block", "POST"},
      {"/reservations/x", "DELETE"},
      {"/health", "GET"},
      {"/ready", "GET"},
      {"/loads", "GET"},
      {"/potential_loads", "POST"},
      {"/overlap_scores", "POST"},
      {"/dump", "GET"},
      {"/metrics", "GET"},
      {"/replica_sync/register_peer", "POST"},
      {"/replica_sync/deregister_peer", "POST"},
      {"/replica_sync/peers", "GET"}
    };
    for (String[] r : routes) {
      List<String> allowed = Arrays.asList(r).subList(1, r.length);
      for (String m : new String[] {"GET", "POST", "PUT", "PATCH", "DELETE"}) {
        if (!allowed.contains(m)) {
          calls.add(Tuple.of(m, r[0]));
        }
      }
    }
    return Arbitraries.of(calls);
  }

  // ---------------------------------------------------------------- building requests

  /** A request without a body, declaring {@code contentType} (nullable) nonetheless. */
  private static Applied bodiless(String contentType) {
    return new Applied("", contentType, null, null, "no body");
  }

  /** No content type, JSON, or any of the others (form types included). */
  @Provide
  Arbitrary<String> anyContentType() {
    return Arbitraries.frequencyOf(
            Tuple.of(1, Arbitraries.just(BodyMutation.JSON)),
            Tuple.of(3, Arbitraries.of(BodyMutation.CONTENT_TYPES).filter(c -> c != null)))
        .injectNull(0.4);
  }

  @SuppressWarnings("unchecked")
  private static Obj object(List<?> pairs) {
    List<Object> kv = new ArrayList<>();
    for (Object p : pairs) {
      kv.addAll(Arrays.asList((Object[]) p));
    }
    return obj(kv.toArray());
  }

  private static Obj rankMap(int start, int size, String prefix) {
    List<Object> kv = new ArrayList<>();
    for (int r = start; r < start + size; r++) {
      kv.add(Integer.toString(r));
      kv.add(prefix + (5900 + r));
    }
    return JsonDoc.map(kv.toArray());
  }

  /** {@code s} percent-encoded as one path segment. */
  private static String segment(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
  }
}
