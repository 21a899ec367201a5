package io.kvselect.core.config;

/**
 * How the router learns what each worker caches: from the workers' KV events, or approximately
 * from its own routing decisions. Immutable; values are checked by {@link RouterConfigLoader}.
 *
 * @param useKvEvents {@code use_kv_events}: index the workers' KV events (false: approximate)
 * @param ttlSecs {@code router_ttl_secs}: lifetime of an approximate entry
 * @param approximateCachePolicy {@code router_approximate_cache_policy}: {@code ttl} or {@code lru}
 * @param predictedTtlSecs {@code router_predicted_ttl_secs}: lifetime of a predicted entry (null:
 *     none predicted)
 * @param eventThreads {@code router_event_threads}: threads decoding KV events
 * @param useRemoteIndexer {@code use_remote_indexer}: ask a remote indexer instead
 */
public record IndexSettings(
    boolean useKvEvents,
    double ttlSecs,
    String approximateCachePolicy,
    Double predictedTtlSecs,
    int eventThreads,
    boolean useRemoteIndexer) {

  /** Dynamo's defaults. */
  public static final IndexSettings DEFAULTS =
      new IndexSettings(true, 120.0, "ttl", null, 4, false);
}
