package io.kvselect.core.events;

import java.util.List;

/**
 * One published batch: {@code [ts, events, data_parallel_rank]}. A non-null {@code dpRank}
 * overrides the registered rank of the socket it arrived on.
 */
public record KvEventBatch(double timestamp, List<KvEvent> events, Integer dpRank) {}
