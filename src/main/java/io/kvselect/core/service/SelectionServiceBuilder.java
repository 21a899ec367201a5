package io.kvselect.core.service;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.index.PrefixChainIndex;
import java.time.Clock;
import java.time.Duration;
import java.util.Random;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Builds a {@link SelectionService} for embedding in a JVM program without the HTTP server:
 *
 * <pre>{@code
 * SelectionService svc = SelectionService.builder()
 *     .routerConfig(RouterConfig.defaults())
 *     .sessionAffinityTtl(Duration.ofMinutes(10))
 *     .build();
 * svc.upsertWorker(spec);
 * Selection s = svc.select(SelectRequest.of(partition, PromptInput.tokens(tokens)), true);
 * }</pre>
 */
public final class SelectionServiceBuilder {

  private RouterConfig router = RouterConfig.defaults();
  private Duration sessionAffinityTtl;
  private Duration selectionCacheTtl = Duration.ofSeconds(120);
  private int selectionCacheMaxEntries = 4096;
  private long selectionCacheMaxBytes = 256L * 1024 * 1024;
  private Supplier<BlockIndex> indexFactory = PrefixChainIndex::new;
  private Clock clock = Clock.systemUTC();
  private RandomGenerator rng = new Random();

  public SelectionServiceBuilder routerConfig(RouterConfig c) {
    this.router = c;
    return this;
  }

  /** Enables session affinity with this idle TTL (null disables it). */
  public SelectionServiceBuilder sessionAffinityTtl(Duration ttl) {
    this.sessionAffinityTtl = ttl;
    return this;
  }

  public SelectionServiceBuilder selectionCache(Duration ttl, int maxEntries, long maxBytes) {
    this.selectionCacheTtl = ttl;
    this.selectionCacheMaxEntries = maxEntries;
    this.selectionCacheMaxBytes = maxBytes;
    return this;
  }

  /** The event-driven index implementation of each partition. */
  public SelectionServiceBuilder indexFactory(Supplier<BlockIndex> f) {
    this.indexFactory = f;
    return this;
  }

  public SelectionServiceBuilder clock(Clock c) {
    this.clock = c;
    return this;
  }

  /** The RNG used for tie-breaks, softmax sampling and untracked-reuse hashes (seed it in tests). */
  public SelectionServiceBuilder random(RandomGenerator r) {
    this.rng = r;
    return this;
  }

  public SelectionServiceBuilder settings(ServiceSettings s) {
    this.router = s.router();
    this.sessionAffinityTtl = s.sessionAffinityTtl();
    this.selectionCacheTtl = s.selectionCacheTtl();
    this.selectionCacheMaxEntries = s.selectionCacheMaxEntries();
    this.selectionCacheMaxBytes = s.selectionCacheMaxBytes();
    this.indexFactory = s.eventIndexFactory();
    return this;
  }

  public SelectionService build() {
    return new SelectionService(new ServiceSettings(router, sessionAffinityTtl, selectionCacheTtl,
        selectionCacheMaxEntries, selectionCacheMaxBytes, indexFactory), clock, rng);
  }
}
