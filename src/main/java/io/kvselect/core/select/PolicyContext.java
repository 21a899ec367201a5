package io.kvselect.core.select;

import io.kvselect.core.config.RouterConfig;
import java.util.random.RandomGenerator;

/**
 * What a {@link SelectionPolicy} decides with besides the candidates: the request's effective
 * router configuration, the prompt's shape for the cost function, and the service's RNG.
 */
public record PolicyContext(RouterConfig config, CostRequest cost, RandomGenerator rng) {}
