package io.kvselect.core.select;

import io.kvselect.core.index.WorkerRank;
import java.util.AbstractList;
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
  public Candidate choose(
      List<WorkerRank> ranks, Function<WorkerRank, Candidate> candidate, PolicyContext ctx) {
    List<Candidate> cands = ranks.stream().map(candidate).toList();
    return cands.get(policy.choose(cands, ctx));
  }

  /**
   * A pick and what would follow it: the chosen candidate and the other filtered candidates, best
   * first as the policy ranks them ({@link SelectionPolicy#rankOthers}). The others are ranked on
   * first read, not when the decision is made, since only the endpoint picker's fallbacks read
   * them and every selection makes a decision. Immutable: candidates are snapshots and the
   * ranking is a pure function of them and the context, so two threads that both read first rank
   * them twice and get equal lists.
   */
  public static final class Decision {

    private final Candidate chosen;
    private final List<Candidate> candidates;
    private final int chosenIndex;
    private final SelectionPolicy policy;
    private final PolicyContext ctx;
    private volatile List<Candidate> others;

    Decision(
        List<Candidate> candidates, int chosenIndex, SelectionPolicy policy, PolicyContext ctx) {
      this.chosen = candidates.get(chosenIndex);
      this.candidates = candidates;
      this.chosenIndex = chosenIndex;
      this.policy = policy;
      this.ctx = ctx;
    }

    public Candidate chosen() {
      return chosen;
    }

    /** The other candidates, best first (ranked on the first call). */
    public List<Candidate> others() {
      List<Candidate> o = others;
      if (o == null) {
        if (candidates.size() == 1) {
          o = List.of();
        } else {
          List<Candidate> ranked = new ArrayList<>(candidates.size() - 1);
          for (int i : policy.rankOthers(candidates, chosenIndex, ctx)) {
            ranked.add(candidates.get(i));
          }
          o = List.copyOf(ranked);
        }
        others = o;
      }
      return o;
    }

    /** The ranks of {@link #others}, as a view that ranks them only when first read. */
    public List<WorkerRank> otherRanks() {
      return new AbstractList<>() {
        @Override
        public WorkerRank get(int index) {
          return others().get(index).rank();
        }

        @Override
        public int size() {
          return candidates.size() - 1;
        }
      };
    }
  }

  /** {@link #choose}, with the other candidates ranked when they are first read. */
  public Decision decide(
      List<WorkerRank> ranks, Function<WorkerRank, Candidate> candidate, PolicyContext ctx) {
    List<Candidate> cands = ranks.stream().map(candidate).toList();
    return new Decision(cands, policy.choose(cands, ctx), policy, ctx);
  }
}
