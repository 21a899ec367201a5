package io.kvselect.core.select;

import io.kvselect.core.index.WorkerRank;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;

/**
 * The named stages of one selection: filter (each {@link CandidateFilter} in order) -> score and
 * pick ({@link SelectionPolicy}). The caller supplies how a rank becomes a {@link Candidate}
 * (its overlap and load, read under the partition's lock), so the stages stay free of state.
 * Immutable and thread-safe.
 */
public final class SelectionPipeline {

  private final List<CandidateFilter> filters;
  private final SelectionPolicy policy;

  public SelectionPipeline(List<CandidateFilter> filters, SelectionPolicy policy) {
    this.filters = List.copyOf(filters);
    this.policy = Objects.requireNonNull(policy, "policy");
  }

  /** Eligibility, then hard or session target, then {@code policy}. */
  public static SelectionPipeline standard(SelectionPolicy policy) {
    return new SelectionPipeline(List.of(new EligibilityFilter(), new TargetFilter()), policy);
  }

  public SelectionPolicy policy() {
    return policy;
  }

  /** The ranks of {@code pool} that pass every filter, in rank order. */
  public List<WorkerRank> filter(CandidatePool pool, SelectionConstraints constraints) {
    List<WorkerRank> ranks = pool.ranks();
    for (CandidateFilter f : filters) {
      ranks = f.apply(ranks, pool, constraints);
    }
    return ranks;
  }

  /** Scores {@code ranks} (from {@link #filter}) and returns the chosen candidate. */
  public Candidate choose(List<WorkerRank> ranks, Function<WorkerRank, Candidate> candidate, PolicyContext ctx) {
    List<Candidate> cands = ranks.stream().map(candidate).toList();
    return cands.get(policy.choose(cands, ctx));
  }

  /**
   * A pick and what would follow it: the chosen candidate and the other filtered candidates, best
   * first as the policy ranks them ({@link SelectionPolicy#rankOthers}). Immutable.
   */
  public record Decision(Candidate chosen, List<Candidate> others) {
    public Decision {
      others = List.copyOf(others);
    }
  }

  /** {@link #choose}, with the other candidates ranked. */
  public Decision decide(List<WorkerRank> ranks, Function<WorkerRank, Candidate> candidate, PolicyContext ctx) {
    List<Candidate> cands = ranks.stream().map(candidate).toList();
    int chosen = policy.choose(cands, ctx);
    if (cands.size() == 1) {
      return new Decision(cands.get(0), List.of());
    }
    List<Candidate> others = new ArrayList<>(cands.size() - 1);
    for (int i : policy.rankOthers(cands, chosen, ctx)) {
      others.add(cands.get(i));
    }
    return new Decision(cands.get(chosen), others);
  }
}
