package io.kvselect.core.service;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.BlockIndex;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * Everything a {@link SelectionService} is configured with. {@code sessionAffinityTtl} null means
 * session affinity is off ({@code session_id} is then only policy input).
 * {@code eventIndexFactory} creates the event-driven primary index of a partition.
 */
public record ServiceSettings(
    RouterConfig router,
    Duration sessionAffinityTtl,
    Duration selectionCacheTtl,
    int selectionCacheMaxEntries,
    long selectionCacheMaxBytes,
    Supplier<BlockIndex> eventIndexFactory) {

  /** Dynamo's service defaults: 120 s, 4096 entries and 256 MiB pending cache, no affinity. */
  public static ServiceSettings defaults(Supplier<BlockIndex> eventIndexFactory) {
    return new ServiceSettings(
        RouterConfig.DEFAULTS,
        null,
        Duration.ofSeconds(120),
        4096,
        256L * 1024 * 1024,
        eventIndexFactory);
  }
}
