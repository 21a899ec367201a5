package io.kvselect.core.select;

import io.kvselect.core.config.RouterConfig;
import java.util.random.RandomGenerator;

/**
 * What a {@link SelectionPolicy} decides with besides the candidates: the request's effective
 * router configuration, the prompt's shape for the cost function, the service's RNG, and the
 * request's session id (null when it has none; the {@code sticky} policy pins by it).
 */
public record PolicyContext(
    RouterConfig config, CostRequest cost, RandomGenerator rng, String sessionId) {

  /** A context without a session. */
  public PolicyContext(RouterConfig config, CostRequest cost, RandomGenerator rng) {
    this(config, cost, rng, null);
  }
}
