package io.kvselect.core.select;

import java.util.List;

/**
 * {@code kvc} inside the synchronous pipeline, for requests the KVC dispatcher does not take (no
 * session id): Route without a pin or reject history, i.e. the most overlapping device blocks,
 * then the fewest active requests; earlier candidates win exact ties. Stateless.
 */
public final class KvcRoutePolicy implements SelectionPolicy {

  public static final String NAME = "kvc";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    int best = 0;
    for (int i = 1; i < candidates.size(); i++) {
      Candidate a = candidates.get(i);
      Candidate b = candidates.get(best);
      int c = Long.compare(b.overlap().device(), a.overlap().device());
      if (c == 0) {
        c = Integer.compare(a.activeRequests(), b.activeRequests());
      }
      if (c < 0) {
        best = i;
      }
    }
    return best;
  }
}
