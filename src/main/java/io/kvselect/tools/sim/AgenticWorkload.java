package io.kvselect.tools.sim;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The seed-shaped agentic workload: coding-assistant sessions that resend a growing conversation.
 * Turn 0's prompt is log-uniform in [turn0Min, turn0Max]; each later prompt is the previous prompt
 * plus the previous output plus an append log-uniform in [appendMin, appendMax]; outputs are
 * uniform in [outputMin, outputMax]; think times log-uniform in [thinkMinMs, thinkMaxMs]. A prompt
 * that would pass the cap keeps its head (the cap minus the append, all of it resident KV) and the
 * new append. Turns per session are uniform in [0.5, 1.5] times requests / sessions (at least 1);
 * sessions start uniformly within the first {@code startWindowMs}. Deterministic for a seed.
 */
final class AgenticWorkload {

  private AgenticWorkload() {}

  record Params(
      int sessions,
      int requests,
      long turn0Min,
      long turn0Max,
      long appendMin,
      long appendMax,
      long outputMin,
      long outputMax,
      long promptCap,
      double thinkMinMs,
      double thinkMaxMs,
      double startWindowMs,
      int blockTokens) {}

  static Workload generate(Params p, long seed) {
    SplittableRandom rnd = new SplittableRandom(seed);
    double mean = (double) p.requests() / p.sessions();
    List<Workload.Session> sessions = new ArrayList<>();
    for (int s = 0; s < p.sessions(); s++) {
      int turns = (int) Math.max(1, Math.round(mean * (0.5 + rnd.nextDouble())));
      double start = rnd.nextDouble() * p.startWindowMs();
      List<Workload.Turn> list = new ArrayList<>(turns);
      long prevPrompt = 0;
      long prevOut = 0;
      for (int t = 0; t < turns; t++) {
        long output = p.outputMin() + rnd.nextLong(p.outputMax() - p.outputMin() + 1);
        long input;
        long prefix;
        if (t == 0) {
          input = Math.min(p.promptCap(), logUniform(rnd, p.turn0Min(), p.turn0Max()));
          prefix = 0;
        } else {
          long append = Math.min(p.promptCap() - 1, logUniform(rnd, p.appendMin(), p.appendMax()));
          prefix = Math.min(prevPrompt + prevOut, p.promptCap() - append);
          input = prefix + append;
        }
        double think = t == 0 ? 0 : logUniformD(rnd, p.thinkMinMs(), p.thinkMaxMs());
        list.add(new Workload.Turn(s, t, input, prefix, output, think, Double.NaN, null));
        prevPrompt = input;
        prevOut = output;
      }
      sessions.add(new Workload.Session(s, start, List.copyOf(list)));
    }
    return new Workload("agentic", p.blockTokens(), List.copyOf(sessions));
  }

  static long logUniform(SplittableRandom r, long min, long max) {
    return Math.round(logUniformD(r, min, max));
  }

  static double logUniformD(SplittableRandom r, double min, double max) {
    return Math.exp(Math.log(min) + r.nextDouble() * (Math.log(max) - Math.log(min)));
  }
}
