package io.kvselect.tools.sim;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.kvc.AdmitAccounting;
import io.kvselect.core.kvc.KvcParams;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Model invariants: decode KV never above K_d, every request served exactly once, for every policy. */
class SimulatorInvariantsTest {

  static final List<String> POLICIES =
      List.of("kvc", "kvc_refined", "kv", "sticky", "least_loaded", "round_robin");

  static Workload small(long kd, long seed) {
    return AgenticWorkload.generate(
        new AgenticWorkload.Params(
            10,
            240,
            4000,
            12000,
            100,
            1000,
            50,
            500,
            Math.min(87_000, kd - 500),
            500,
            10_000,
            60_000,
            16),
        seed);
  }

  static Simulator.Config config(long kd, int open, boolean firstFit, AdmitAccounting a) {
    return config(kd, open, firstFit, a, Simulator.DecodeReserve.AT_DISPATCH);
  }

  static Simulator.Config config(
      long kd, int open, boolean firstFit, AdmitAccounting a, Simulator.DecodeReserve m) {
    return new Simulator.Config(
        1,
        3,
        kd,
        16,
        0.1,
        0.1,
        0.02,
        20,
        32,
        open,
        firstFit,
        open != 0,
        KvcParams.defaults().withAccounting(a),
        7,
        m);
  }

  static Stream<Arguments> grid() {
    List<Arguments> out = new ArrayList<>();
    for (String p : POLICIES) {
      out.add(
          Arguments.of(
              p, 46_052L, 0, false, AdmitAccounting.LITERAL, Simulator.DecodeReserve.AT_DISPATCH));
      out.add(
          Arguments.of(
              p, 92_104L, 3, true, AdmitAccounting.NET, Simulator.DecodeReserve.AT_DISPATCH));
      out.add(
          Arguments.of(
              p, 20_000L, 0, true, AdmitAccounting.NET, Simulator.DecodeReserve.AT_DISPATCH));
      out.add(
          Arguments.of(
              p, 20_000L, 0, false, AdmitAccounting.NET, Simulator.DecodeReserve.AFTER_PREFILL));
    }
    return out.stream();
  }

  @ParameterizedTest(name = "{0} K_d {1} open {2} first-fit {3} {4} {5}")
  @MethodSource("grid")
  void decodeKvStaysWithinCapacityAndEveryRequestIsServedOnce(
      String policy,
      long kd,
      int open,
      boolean firstFit,
      AdmitAccounting a,
      Simulator.DecodeReserve m) {
    Workload w = small(kd, 3);
    Simulator.Result r = new Simulator(w, config(kd, open, firstFit, a, m), policy, null).run();
    assertEquals(w.requests(), r.requests(), "every request completes");
    assertEquals(0, r.servedTwice(), "no request is served twice");
    assertTrue(
        r.peakDecodeTokens() <= kd, "peak decode KV " + r.peakDecodeTokens() + " <= K_d " + kd);
    assertTrue(r.peakDecodeTokens() > 0);
    assertEquals(
        1.0,
        r.direct() + r.seed() + r.reseed() + r.fallback(),
        1e-9,
        "modes partition the requests");
    assertEquals(
        Math.round(r.fallback() * r.requests()),
        r.fallbacks(),
        "the fallbacks column counts Fallbacks");
    assertTrue(r.ttftP50() <= r.ttftP90() && r.ttftP90() <= r.ttftP99());
    assertTrue(r.ttftP99() <= r.e2eP99());
  }

  @Test
  void pressureShowsInTheModel() {
    Workload w = small(92_104, 3);
    Simulator.Result roomy =
        new Simulator(w, config(8 * 92_104L, 3, false, AdmitAccounting.NET), "kvc", null).run();
    Simulator.Result tight =
        new Simulator(small(20_000, 3), config(20_000, 0, false, AdmitAccounting.NET), "kvc", null)
            .run();
    assertTrue(
        roomy.direct() > tight.direct(),
        "more memory, more Direct: " + roomy.direct() + " vs " + tight.direct());
    assertTrue(roomy.direct() > 0.8, "roomy: " + roomy.direct());
  }

  @Test
  void mooncakeChainsBecomeSessionsAndReplay(@TempDir Path dir) throws IOException {
    Path trace = dir.resolve("trace.jsonl");
    Random rnd = new Random(5);
    StringBuilder b = new StringBuilder();
    long id = 1000;
    List<long[]> chains = new ArrayList<>();
    for (int i = 0; i < 120; i++) {
      long[] prev = i >= 3 && rnd.nextInt(3) > 0 ? chains.get(rnd.nextInt(chains.size())) : null;
      List<Long> h = new ArrayList<>();
      h.add(0L);
      if (prev != null) {
        for (int k = 1; k < prev.length - 1; k++) {
          h.add(prev[k]);
        }
      }
      int extra = 2 + rnd.nextInt(6);
      for (int k = 0; k < extra; k++) {
        h.add(id++);
      }
      long[] arr = h.stream().mapToLong(Long::longValue).toArray();
      chains.add(arr);
      b.append("{\"timestamp\": ")
          .append(i * 200)
          .append(", \"input_length\": ")
          .append(arr.length * 512 - 100)
          .append(", \"output_length\": ")
          .append(20 + rnd.nextInt(200))
          .append(", \"hash_ids\": [");
      for (int k = 0; k < arr.length; k++) {
        b.append(k == 0 ? "" : ", ").append(arr[k]);
      }
      b.append("]}\n");
    }
    Files.writeString(trace, b.toString(), StandardCharsets.UTF_8);
    Workload w = MooncakeWorkload.read(trace, 60_000, 500, 0);
    assertEquals(120, w.requests());
    assertTrue(
        w.sessions().size() < 120,
        "continuations join their chain's session: " + w.sessions().size());
    long continued =
        w.sessions().stream()
            .flatMap(s -> s.turns().stream())
            .filter(t -> t.prefixTokens() > 0)
            .count();
    assertTrue(continued > 20, "continuations carry a resident prefix: " + continued);
    for (String p : POLICIES) {
      Simulator.Result r =
          new Simulator(w, config(30_000, 0, false, AdmitAccounting.NET), p, null).run();
      assertEquals(120, r.requests(), p);
      assertTrue(r.peakDecodeTokens() <= 30_000, p);
    }
  }
}
