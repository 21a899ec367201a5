package io.kvselect.tools.sim;

import io.kvselect.core.kvc.AdmitAccounting;
import io.kvselect.core.kvc.KvcParams;
import io.kvselect.core.kvc.ResetScope;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Option;

/**
 * The options of {@code bin/kvselect-sim} ({@link SimCommand}): every flag with its default and
 * description, their checks ({@link #errors}: every usage error, before anything runs), the
 * {@code kvc} parameters and the memory rule they state. Picocli fills the fields of the one
 * {@link SimCommand} of a run, on the main thread; the drivers ({@link SimRuns},
 * {@link MapSweep}) only read them.
 */
abstract class SimOptions {

  @Option(
      names = "--workload",
      defaultValue = "agentic",
      description = "agentic | mooncake (default: ${DEFAULT-VALUE})")
  String workload;

  @Option(
      names = "--trace",
      description = "Mooncake trace file (JSON lines), for --workload mooncake")
  Path trace;

  @Option(
      names = "--trace-limit",
      defaultValue = "0",
      description = "Read at most this many trace rows, 0 = all " + "(default: ${DEFAULT-VALUE})")
  int traceLimit;

  @Option(
      names = "--policies",
      defaultValue = "kvc,kv,sticky,least_loaded,round_robin",
      split = ",",
      description =
          "Policies to compare; kvc_refined = kvc with --admit-waiting (default: ${DEFAULT-VALUE})")
  List<String> policies;

  @Option(
      names = "--seed",
      defaultValue = "1",
      description = "Workload and tie-break seed (default: ${DEFAULT-VALUE})")
  long seed;

  @Option(
      names = "--out",
      defaultValue = "sim-out",
      description = "Output directory (default: ${DEFAULT-VALUE})")
  Path out;

  @Option(
      names = "--prefill-workers",
      defaultValue = "1",
      description = "P workers (default: ${DEFAULT-VALUE})")
  int prefillWorkers;

  @Option(
      names = "--decode-workers",
      defaultValue = "3",
      description = "D workers (default: ${DEFAULT-VALUE})")
  int decodeWorkers;

  @Option(
      names = "--kd",
      defaultValue = "92104",
      description = "Decode KV capacity K_d, tokens (default: ${DEFAULT-VALUE})")
  long kd;

  @Option(
      names = "--slots",
      defaultValue = "16",
      description = "Sequences decoded at once per D (default: ${DEFAULT-VALUE})")
  int slots;

  @Option(
      names = "--sessions",
      defaultValue = "52",
      description = "Agentic sessions (default: ${DEFAULT-VALUE})")
  int sessions;

  @Option(
      names = "--requests",
      defaultValue = "4449",
      description =
          "Agentic requests, about (turns per session "
              + "uniform in 0.5..1.5 x requests/sessions) (default: ${DEFAULT-VALUE})")
  int requests;

  @Option(
      names = "--turn0-min",
      defaultValue = "4000",
      description = "Turn-0 prompt, log-uniform from (default: ${DEFAULT-VALUE})")
  long turn0Min;

  @Option(
      names = "--turn0-max",
      defaultValue = "12000",
      description = "... to (default: ${DEFAULT-VALUE})")
  long turn0Max;

  @Option(
      names = "--append-min",
      defaultValue = "100",
      description = "Append per turn, log-uniform from (default: ${DEFAULT-VALUE})")
  long appendMin;

  @Option(
      names = "--append-max",
      defaultValue = "1000",
      description = "... to (default: ${DEFAULT-VALUE})")
  long appendMax;

  @Option(
      names = "--output-min",
      defaultValue = "50",
      description = "Output tokens, uniform from (default: ${DEFAULT-VALUE})")
  long outputMin;

  @Option(
      names = "--output-max",
      defaultValue = "500",
      description = "... to (default: ${DEFAULT-VALUE})")
  long outputMax;

  @Option(
      names = "--prompt-cap",
      defaultValue = "87000",
      description =
          "Longest prompt (also capped at K_d - "
              + "output-max so every request fits) (default: ${DEFAULT-VALUE})")
  long promptCap;

  @Option(
      names = "--think-min-s",
      defaultValue = "0.5",
      description = "Think time, log-uniform from (default: ${DEFAULT-VALUE})")
  double thinkMinS;

  @Option(
      names = "--think-max-s",
      defaultValue = "10",
      description = "... to (default: ${DEFAULT-VALUE})")
  double thinkMaxS;

  @Option(
      names = "--start-window-s",
      defaultValue = "60",
      description = "Sessions start within (default: ${DEFAULT-VALUE})")
  double startWindowS;

  @Option(
      names = "--concurrency",
      defaultValue = "32",
      description = "Requests in flight at most (default: ${DEFAULT-VALUE})")
  int concurrency;

  @Option(
      names = "--max-open-sessions",
      defaultValue = "0",
      description = "Sessions open at once at most, 0 = no " + "limit (default: ${DEFAULT-VALUE})")
  int maxOpenSessions;

  @Option(
      names = "--block-tokens",
      defaultValue = "16",
      description =
          "Agentic prefix block size for Route's "
              + "overlap (Mooncake: 512) (default: ${DEFAULT-VALUE})")
  int blockTokens;

  @Option(
      names = "--prefill-ms-per-token",
      defaultValue = "0.1",
      description = "P prefill (default: ${DEFAULT-VALUE})")
  double prefillMs;

  @Option(
      names = "--append-prefill-ms-per-token",
      defaultValue = "0.1",
      description = "D append-prefill " + "(default: ${DEFAULT-VALUE})")
  double appendPrefillMs;

  @Option(
      names = "--transfer-ms-per-token",
      defaultValue = "0.02",
      description = "P->D KV transfer (default: ${DEFAULT-VALUE})")
  double transferMs;

  @Option(
      names = "--decode-ms-per-token",
      defaultValue = "20",
      description = "Decode step per sequence " + "(default: ${DEFAULT-VALUE})")
  double decodeMs;

  @Option(
      names = "--d-queue",
      defaultValue = "fifo",
      description =
          "D admission order when memory is short: fifo "
              + "(the head blocks) | first-fit (default: ${DEFAULT-VALUE})")
  String dQueue;

  @Option(
      names = "--decode-reserve",
      defaultValue = "at-dispatch",
      description =
          "When a D worker reserves a "
              + "request's decode memory and slot: at-dispatch (held through the prefill queue, as an engine that "
              + "pre-allocates on dispatch) | after-prefill (a request prefilled on P asks for it when its prefill is done) "
              + "(default: ${DEFAULT-VALUE})")
  String decodeReserve;

  @Option(
      names = "--release-on-close",
      defaultValue = "true",
      arity = "1",
      description =
          "A closed session's KV is "
              + "freed on every D worker (false: it stays until evicted) (default: ${DEFAULT-VALUE})")
  boolean releaseOnClose;

  @Option(
      names = "--alpha",
      defaultValue = "1",
      description = "kvc sticky bonus (default: ${DEFAULT-VALUE})")
  double alpha;

  @Option(
      names = "--tau-reject",
      defaultValue = "3",
      description = "kvc blacklist threshold (default: ${DEFAULT-VALUE})")
  int tauReject;

  @Option(
      names = "--tau-append",
      defaultValue = "8192",
      description = "kvc largest Direct append (default: ${DEFAULT-VALUE})")
  long tauAppend;

  @Option(
      names = "--rho",
      defaultValue = "0.95",
      description = "kvc high-water mark (default: ${DEFAULT-VALUE})")
  double rho;

  @Option(
      names = "--epsilon",
      description = "kvc admission probes per request (default: decode workers - 1)")
  Integer epsilon;

  @Option(
      names = "--admit-accounting",
      defaultValue = "literal",
      description = "literal | net (default: ${DEFAULT-VALUE})")
  String accounting;

  @Option(
      names = "--reset-scope",
      defaultValue = "winner",
      description = "winner | all (default: ${DEFAULT-VALUE})")
  String resetScope;

  @Option(
      names = "--admit-waiting",
      defaultValue = "false",
      description =
          "Refinement: Admit also counts KV promised to "
              + "requests dispatched to the D worker and not finished, Route seeds and Fallback sends to the D worker "
              + "with the least accounted KV, a Fallback pins the session there (default: ${DEFAULT-VALUE})")
  boolean admitWaiting;

  @Option(
      names = "--map",
      defaultValue = "false",
      description =
          "Sweep --map-open x --map-kd for both accountings "
              + "into map.csv and map.md instead of one run (default: ${DEFAULT-VALUE})")
  boolean map;

  @Option(
      names = "--map-open",
      defaultValue = "1,2,3,4,6,8,16,0",
      split = ",",
      description = "Open-session limits " + "of the map, 0 = all (default: ${DEFAULT-VALUE})")
  List<Integer> mapOpen;

  @Option(
      names = "--map-kd",
      defaultValue = "0.5,1,2,4,8",
      split = ",",
      description = "K_d multipliers of the map " + "(default: ${DEFAULT-VALUE})")
  List<Double> mapKd;

  @Option(
      names = "--dump-requests",
      defaultValue = "false",
      description =
          "Also write requests.csv: one row per "
              + "request and policy (session, turn, tokens, decode and prefill worker, mode, the admission inputs, TTFT) "
              + "(default: ${DEFAULT-VALUE})")
  boolean dumpRequests;

  @Option(
      names = "--no-plots",
      defaultValue = "false",
      description = "Skip the PNG plots (default: ${DEFAULT-VALUE})")
  boolean noPlots;

  /** Every usage error of the flags, one line each, checked before anything runs; empty when all are valid. */
  List<String> errors() {
    List<String> errors = new ArrayList<>();
    if (!List.of("agentic", "mooncake").contains(workload)) {
      errors.add("--workload must be agentic or mooncake, got '" + workload + "'");
    }
    if ("mooncake".equals(workload) && trace == null) {
      errors.add("--workload mooncake needs --trace FILE");
    }
    if (trace != null && !(Files.isRegularFile(trace) && Files.isReadable(trace))) {
      errors.add(
          "--trace "
              + trace
              + ": "
              + (Files.exists(trace) ? "not a readable file" : "no such file"));
    }
    if (!map) {
      for (String p : policies) {
        if (!Simulator.POLICIES.contains(p.trim())) {
          errors.add(
              "--policies: unknown policy '"
                  + p.trim()
                  + "' (one of "
                  + String.join(", ", Simulator.POLICIES)
                  + ")");
        }
      }
    }
    if (!List.of("fifo", "first-fit").contains(dQueue)) {
      errors.add("--d-queue must be fifo or first-fit, got '" + dQueue + "'");
    }
    if (!List.of("at-dispatch", "after-prefill").contains(decodeReserve)) {
      errors.add(
          "--decode-reserve must be at-dispatch or after-prefill, got '" + decodeReserve + "'");
    }
    if (!List.of("literal", "net").contains(accounting.trim().toLowerCase(Locale.ROOT))) {
      errors.add("--admit-accounting must be literal or net, got '" + accounting + "'");
    } else if (!List.of("winner", "all").contains(resetScope.trim().toLowerCase(Locale.ROOT))) {
      errors.add("--reset-scope must be winner or all, got '" + resetScope + "'");
    } else {
      try {
        kvcParams();
      } catch (IllegalArgumentException e) {
        errors.add(e.getMessage());
      }
    }
    for (long kdTokens : map ? mapKd.stream().map(f -> Math.round(kd * f)).toList() : List.of(kd)) {
      if (Math.min(promptCap, kdTokens - outputMax) < 1) {
        errors.add(
            "--kd " + kdTokens + " leaves no room for a prompt (--output-max " + outputMax + ")");
      }
    }
    return errors;
  }

  KvcParams kvcParams() {
    return new KvcParams(
        alpha,
        tauReject,
        tauAppend,
        rho,
        epsilon,
        AdmitAccounting.parse(accounting),
        ResetScope.parse(resetScope),
        admitWaiting);
  }

  /** The memory rule, as the results' headers state it. */
  String memoryRule() {
    return "decode memory reserved "
        + ("after-prefill".equals(decodeReserve) ? "after prefill" : "at dispatch")
        + " (--decode-reserve "
        + decodeReserve
        + ")";
  }
}
