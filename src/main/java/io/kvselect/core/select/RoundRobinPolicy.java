package io.kvselect.core.select;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code round_robin}: one cursor, advanced by every choice, indexes the candidates modulo their
 * number. Thread-safe (the cursor is atomic; concurrent choices each take their own step).
 */
public final class RoundRobinPolicy implements SelectionPolicy {

  public static final String NAME = "round_robin";

  private final AtomicLong cursor = new AtomicLong();

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public int choose(List<Candidate> candidates, PolicyContext ctx) {
    return (int) Math.floorMod(cursor.getAndIncrement(), (long) candidates.size());
  }
}
