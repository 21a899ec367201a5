package io.kvselect.tools.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.events.EventApplier;
import io.kvselect.core.kvc.AdmitAccounting;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.service.Selection;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.NodeParts;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.MutableClock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One decision path: the calls a simulator run made (worker registrations, KV-event batches of
 * its engines, {@code select_and_reserve}, {@code prefill_complete}, {@code free}, in order and at
 * their simulated times), replayed into a {@link SelectionService} built as a standalone node
 * builds it from its command line and environment, give the same decision for every request: the
 * decode worker, the device overlap, and under {@code kvc} the mode, the prefill worker, the append
 * and every refused probe with its reason.
 */
class SimulatorDecisionTest {

  private static final long SEED = 5;

  @ParameterizedTest
  @ValueSource(strings = {"kvc", "kvc_refined", "kv", "sticky", "least_loaded", "round_robin"})
  void theNodesServiceDecidesEveryRequestAsTheSimulatorDid(String policy) {
    long kd = 30_000;
    Workload w =
        AgenticWorkload.generate(
            new AgenticWorkload.Params(
                8, 200, 4000, 12000, 100, 1000, 50, 500, kd - 500, 500, 5_000, 20_000, 16),
            SEED);
    Simulator.Config cfg =
        new Simulator.Config(
            1,
            3,
            kd,
            16,
            0.1,
            0.1,
            0.02,
            20,
            32,
            0,
            false,
            true,
            KvcParams.defaults().withAccounting(AdmitAccounting.NET),
            SEED,
            Simulator.DecodeReserve.AT_DISPATCH);
    List<SimRouter.Op> ops = new ArrayList<>();
    Simulator.Result r = new Simulator(w, cfg, policy, null, false, ops::add).run();
    assertEquals(w.requests(), r.requests());

    Map<String, String> env = new HashMap<>();
    env.put("KVSELECT_ROUTER_POLICY", policy.startsWith("kvc") ? "kvc" : policy);
    env.put("KVSELECT_KVC_ADMIT_ACCOUNTING", "net");
    if (policy.equals("kvc_refined")) {
      env.put("KVSELECT_KVC_ADMIT_WAITING", "true");
    }
    NodeSettings settings = NodeSettings.parse(new String[] {"--host", "127.0.0.1"}, env);
    MutableClock clock = new MutableClock(SimClock.EPOCH);
    SelectionService node =
        NodeParts.builder(settings).clock(clock).random(new Random(SEED)).build();

    double at = 0;
    int selects = 0;
    int events = 0;
    Map<String, Integer> modes = new HashMap<>();
    for (SimRouter.Op op : ops) {
      clock.advance(
          Duration.ofNanos((long) Math.floor(op.atMs() * 1e6) - (long) Math.floor(at * 1e6)));
      at = op.atMs();
      if (op instanceof SimRouter.AddWorker a) {
        node.upsertWorker(a.spec()).toCompletableFuture().join();
      } else if (op instanceof SimRouter.Events e) {
        EventApplier.apply(
            node.eventIndex(SimRouter.PARTITION), e.rank(), w.blockTokens(), false, e.batch());
        events++;
      } else if (op instanceof SimRouter.Select s) {
        Selection mine = node.select(s.request(), true).toCompletableFuture().join();
        assertEquals(decision(s.answer()), decision(mine), "request " + s.request().selectionId());
        selects++;
        if (mine.kvc() != null) {
          modes.merge(mine.kvc().mode(), 1, Integer::sum);
        }
      } else if (op instanceof SimRouter.PrefillComplete p) {
        node.prefillComplete(p.id()).toCompletableFuture().join();
      } else if (op instanceof SimRouter.Free f) {
        node.free(f.id()).toCompletableFuture().join();
      }
    }
    assertEquals(w.requests(), selects, "every request was a select_and_reserve");
    assertTrue(events > w.requests(), "the engines' KV events were replayed: " + events);
    if (policy.startsWith("kvc")) {
      assertTrue(
          modes.getOrDefault("direct", 0) > 0
              && modes.getOrDefault("seed", 0) > 0
              && modes.getOrDefault("reseed", 0) + modes.getOrDefault("fallback", 0) > 0,
          "the run exercises admission and its refusals: " + modes);
    }
  }

  private static String decision(Selection s) {
    return s.selectionId()
        + " -> "
        + s.workerId()
        + "/"
        + s.dpRank()
        + " overlap "
        + (s.overlap() == null ? null : s.overlap().gpu())
        + " kvc "
        + s.kvc();
  }
}
