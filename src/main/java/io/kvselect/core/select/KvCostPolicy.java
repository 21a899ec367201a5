package io.kvselect.core.select;

import java.util.List;

/**
 * Dynamo's KV-aware policy, kvselect's default ({@code kv}): scores every candidate with
 * {@link CostFunction} (overlap credit against prefill and decode load) and picks with
 * {@link Picker} (the minimum at temperature 0, range-normalised softmax above). Stateless.
 */
public final class KvCostPolicy implements SelectionPolicy {

  public static final String NAME = "kv";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    double[] logits = CostFunction.logits(ctx.config(), ctx.cost(), candidates);
    return Picker.pick(logits, ctx.config().cost().temperature(), ctx.rng());
  }

  /** By ascending logit, the cost {@link #choose} weighs (at any temperature). */
  @Override
  public int[] rankOthers(List<Candidate> candidates, int chosen, PolicyContext ctx) {
    return FallbackOrder.byCost(CostFunction.logits(ctx.config(), ctx.cost(), candidates), chosen);
  }
}
