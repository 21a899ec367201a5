package io.kvselect.core.config;

/**
 * The scheduling knobs (Dynamo's {@code KvRouterConfig}), grouped by concern, in the manner of
 * Vert.x's {@code *Options}: {@link #DEFAULTS} holds Dynamo's defaults, {@link #builder()} and
 * {@link #toBuilder()} change single knobs by name. Immutable; a per-request {@link
 * RouterConfigOverride} yields a derived copy through {@link #with}.
 *
 * <p>Nullable {@code Double}s are "unset" knobs (thresholds, predicted TTL, queue threshold);
 * nullable {@code String}s are unset paths or identifiers. Values are not validated here:
 * {@link RouterConfigLoader} validates what it reads from the environment or a config file.
 * A null concern stands for its defaults.
 *
 * @param cost the weights of the selection cost
 * @param index how the router learns what workers cache
 * @param load what counts as a worker's load, and when it is busy
 * @param queue the router queue
 * @param replica how this replica runs among others
 * @param tracking the block-identity hash (the config file's {@code tracking} section)
 * @param selectionPolicy the selection policy and the KVC-Router's parameters
 */
public record RouterConfig(
    CostWeights cost,
    IndexSettings index,
    LoadTracking load,
    QueueSettings queue,
    ReplicaSettings replica,
    TrackingSettings tracking,
    PolicySettings selectionPolicy) {

  /** Dynamo's defaults, and kvselect's for what Dynamo does not have. */
  public static final RouterConfig DEFAULTS =
      new RouterConfig(
          CostWeights.DEFAULTS,
          IndexSettings.DEFAULTS,
          LoadTracking.DEFAULTS,
          QueueSettings.DEFAULTS,
          ReplicaSettings.DEFAULTS,
          TrackingSettings.DEFAULTS,
          PolicySettings.defaults());

  public RouterConfig {
    cost = cost == null ? CostWeights.DEFAULTS : cost;
    index = index == null ? IndexSettings.DEFAULTS : index;
    load = load == null ? LoadTracking.DEFAULTS : load;
    queue = queue == null ? QueueSettings.DEFAULTS : queue;
    replica = replica == null ? ReplicaSettings.DEFAULTS : replica;
    tracking = tracking == null ? TrackingSettings.DEFAULTS : tracking;
    selectionPolicy = selectionPolicy == null ? PolicySettings.defaults() : selectionPolicy;
  }

  /** A builder holding {@link #DEFAULTS}. */
  public static RouterConfigBuilder builder() {
    return new RouterConfigBuilder(DEFAULTS);
  }

  /** A builder holding this config. */
  public RouterConfigBuilder toBuilder() {
    return new RouterConfigBuilder(this);
  }

  /** A copy with another selection policy. */
  public RouterConfig withSelectionPolicy(PolicySettings p) {
    return new RouterConfig(cost, index, load, queue, replica, tracking, p);
  }

  /**
   * A copy with the tracking-hash settings replaced (the CLI's {@code --router-tracking-*}
   * flags). Null arguments keep the current value.
   */
  public RouterConfig withTracking(String hash, String keyFile, String keyId) {
    return new RouterConfig(
        cost,
        index,
        load,
        queue,
        replica,
        new TrackingSettings(
            hash != null ? hash : tracking.hash(),
            keyFile != null ? keyFile : tracking.keyFile(),
            keyId != null ? keyId : tracking.keyId()),
        selectionPolicy);
  }

  /** True when some knob makes requests wait in a router queue. */
  public boolean queueingEnabled() {
    return queue.threshold() != null;
  }

  /** Applies a per-request override; absent override fields keep this config's values. */
  public RouterConfig with(RouterConfigOverride o) {
    if (o == null || o.isEmpty()) {
      return this;
    }
    double credit = cost.overlapScoreCredit();
    double scale = cost.prefillLoadScale();
    if (o.overlapScoreWeight() != null) {
      scale = o.overlapScoreWeight();
      if (o.overlapScoreWeight() == 0.0) {
        credit = 0.0;
      }
    }
    if (o.overlapScoreCredit() != null) {
      credit = o.overlapScoreCredit();
    }
    if (o.prefillLoadScale() != null) {
      scale = o.prefillLoadScale();
    }
    CostWeights c =
        new CostWeights(
            credit,
            cost.overlapScoreCreditDecay(),
            scale,
            cost.decodeActiveRequestWeight(),
            cost.hostCacheHitWeight(),
            cost.diskCacheHitWeight(),
            o.routerTemperature() != null ? o.routerTemperature() : cost.temperature(),
            o.sharedCacheMultiplier() != null
                ? o.sharedCacheMultiplier()
                : cost.sharedCacheMultiplier(),
            cost.sharedCacheType());
    LoadTracking l =
        o.assumeKvReuse() == null && o.trackPrefillTokens() == null
            ? load
            : new LoadTracking(
                load.trackActiveBlocks(),
                load.trackOutputBlocks(),
                o.assumeKvReuse() != null ? o.assumeKvReuse() : load.assumeKvReuse(),
                o.trackPrefillTokens() != null ? o.trackPrefillTokens() : load.trackPrefillTokens(),
                load.activeRequestExpirySecs(),
                load.prefillLoadModel(),
                load.decodeBusyThreshold(),
                load.prefillBusyThreshold());
    return new RouterConfig(
        c,
        index,
        l,
        queue,
        replica,
        tracking,
        o.policy() != null ? selectionPolicy.withName(o.policy()) : selectionPolicy);
  }
}
