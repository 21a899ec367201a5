package io.kvselect.tools.sim;

/**
 * One request of a simulated run, from the client's send to its last token: the turn it carries,
 * the server's decision ({@link SimDispatch} fills the decode and prefill worker, the mode, whether
 * it runs locally and the cache it reuses) and what the engines record as it runs
 * ({@link SimEngines}: the cache it holds, its first token). Mutable; owned by the run's
 * {@link Simulator} and touched only on its thread, by the dispatch and the engines in turn.
 */
final class SimRequest {
  final Workload.Turn turn;
  final double sentMs;
  final String id;
  int[] prompt;
  int d;
  int p = -1;
  boolean local;
  SimEngines.Entry locked;
  long[] held;
  long reused;
  String mode;
  double firstMs;
  String dump;

  SimRequest(Workload.Turn turn, double sentMs) {
    this.turn = turn;
    this.sentMs = sentMs;
    this.id = "s" + turn.session() + "-t" + turn.turn();
  }

  /** Tokens of KV the request holds while it runs: prompt plus output. */
  long kv() {
    return turn.inputTokens() + turn.outputTokens();
  }
}
