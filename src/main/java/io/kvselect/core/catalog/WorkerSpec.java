package io.kvselect.core.catalog;

import io.kvselect.core.error.SelectionException;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A worker registration as supplied to {@code POST /workers} (a full replace). Only
 * {@code workerId} is required; nullable fields are absent. Map keys of
 * {@code kvEventsEndpoints} and {@code routerHintSourceControlEndpoints} are global DP ranks.
 * The compact constructor applies Dynamo's defaults, copies collections immutably and rejects a
 * malformed KV-event or replay endpoint ({@link EndpointSyntax}) with a 422 naming the field
 * ({@code kv_events_endpoint}, {@code kv_events_endpoints[<rank>]}, {@code replay_endpoint}, and
 * kvselect's optional {@code health_url}, polled by worker liveness), so a
 * spec that exists is one a listener can be started for. A blank {@code kv_events_endpoint} counts
 * as absent (a schedulability reason, not a syntax error).
 *
 * <p>Code builds specs with {@link #builder(long)} (or {@link #toBuilder()} to change some
 * fields); the canonical constructor is left for the cluster codec, which binds the components by
 * name.
 */
public record WorkerSpec(
    long workerId,
    String modelName,
    String routingGroup,
    String endpoint,
    String kvEventsEndpoint,
    Map<Integer, String> kvEventsEndpoints,
    String replayEndpoint,
    Integer blockSize,
    int dataParallelStartRank,
    int dataParallelSize,
    Long maxNumBatchedTokens,
    Long totalKvBlocks,
    String stableRoutingId,
    boolean isEagle,
    Set<String> taints,
    Map<String, String> topologyDomains,
    String kvTransferDomain,
    String kvTransferEnforcement,
    Double kvTransferPreferredWeight,
    String routerHintWorkerType,
    Map<Integer, String> routerHintSourceControlEndpoints,
    String kvEventSourceMode,
    String healthUrl,
    DisaggSpec disagg) {

  /** {@code worker_type}, else {@code router_hint_worker_type} (null when neither is set). */
  public String workerType() {
    return disagg.workerType() != null ? disagg.workerType() : routerHintWorkerType;
  }

  /** K_d: {@code kv_capacity_tokens}, else {@code total_kv_blocks * block_size}, else null. */
  public Long kvCapacityTokens() {
    if (disagg.kvCapacityTokens() != null) {
      return disagg.kvCapacityTokens();
    }
    if (totalKvBlocks != null && blockSize != null) {
      return totalKvBlocks * blockSize;
    }
    return null;
  }

  public WorkerSpec {
    disagg = disagg == null ? DisaggSpec.NONE : disagg;
    modelName = modelName == null ? PartitionKey.DEFAULT : modelName;
    routingGroup = routingGroup == null ? PartitionKey.DEFAULT : routingGroup;
    kvEventsEndpoints = kvEventsEndpoints == null ? Map.of() : Map.copyOf(kvEventsEndpoints);
    taints = taints == null ? Set.of() : Set.copyOf(taints);
    topologyDomains = topologyDomains == null ? Map.of() : Map.copyOf(topologyDomains);
    routerHintSourceControlEndpoints =
        routerHintSourceControlEndpoints == null
            ? Map.of()
            : Map.copyOf(routerHintSourceControlEndpoints);
    if (kvEventsEndpoint != null && !kvEventsEndpoint.isBlank()) {
      EndpointSyntax.require("kv_events_endpoint", kvEventsEndpoint);
    }
    for (Map.Entry<Integer, String> e : new TreeMap<>(kvEventsEndpoints).entrySet()) {
      if (e.getValue() != null && !e.getValue().isBlank()) {
        EndpointSyntax.require("kv_events_endpoints[" + e.getKey() + "]", e.getValue());
      }
    }
    EndpointSyntax.require("replay_endpoint", replayEndpoint);
    if (healthUrl != null) {
      requireHttpUrl(healthUrl);
    }
    if (dataParallelSize > 0
        && (long) dataParallelStartRank + dataParallelSize - 1 > Integer.MAX_VALUE) {
      throw SelectionException.unprocessable(
          "data_parallel_start_rank ("
              + dataParallelStartRank
              + ") + data_parallel_size ("
              + dataParallelSize
              + ") must stay within 0.."
              + Integer.MAX_VALUE);
    }
  }

  /** {@code health_url}: an absolute http(s) URL with a host (kvselect's addition, for liveness). */
  private static void requireHttpUrl(String url) {
    java.net.URI uri;
    try {
      uri = new java.net.URI(url);
    } catch (java.net.URISyntaxException e) {
      uri = null;
    }
    if (uri == null
        || uri.getHost() == null
        || !("http".equalsIgnoreCase(uri.getScheme())
            || "https".equalsIgnoreCase(uri.getScheme()))) {
      throw SelectionException.unprocessable(
          "health_url must be an absolute http(s) URL with a host, got '" + url + "'");
    }
  }

  /** A minimal spec: the given id in the default partition, everything else absent or default. */
  public static WorkerSpec of(long workerId, String endpoint, int blockSize) {
    return builder(workerId).endpoint(endpoint).blockSize(blockSize).build();
  }

  /** A builder for worker {@code workerId} with every other field absent or default. */
  public static Builder builder(long workerId) {
    return new Builder(workerId);
  }

  /** A builder seeded with every field of this spec. */
  public Builder toBuilder() {
    return new Builder(this);
  }

  public PartitionKey partition() {
    return new PartitionKey(modelName, routingGroup);
  }

  /** The KV-event endpoint of a global DP rank: the per-rank map, else the single endpoint when dp size is 1. */
  public String kvEventsEndpointFor(int dpRank) {
    String e = kvEventsEndpoints.get(dpRank);
    if (e == null && dataParallelSize == 1) {
      e = kvEventsEndpoint;
    }
    return e;
  }

  /** Returns a copy in another partition (used when a worker moves). */
  public WorkerSpec withPartition(String model, String group) {
    return toBuilder().modelName(model).routingGroup(group).build();
  }

  /**
   * Chainable setters named after the record's components, one per registration field; unset
   * fields keep the defaults of a bare {@code POST /workers} body (default partition, one DP rank
   * starting at 0, not EAGLE, no role fields). {@link #build} runs the record's checks. Not
   * thread-safe; confined to the thread that fills it.
   */
  public static final class Builder {
    private final long workerId;
    private String modelName;
    private String routingGroup;
    private String endpoint;
    private String kvEventsEndpoint;
    private Map<Integer, String> kvEventsEndpoints;
    private String replayEndpoint;
    private Integer blockSize;
    private int dataParallelStartRank;
    private int dataParallelSize = 1;
    private Long maxNumBatchedTokens;
    private Long totalKvBlocks;
    private String stableRoutingId;
    private boolean isEagle;
    private Set<String> taints;
    private Map<String, String> topologyDomains;
    private String kvTransferDomain;
    private String kvTransferEnforcement;
    private Double kvTransferPreferredWeight;
    private String routerHintWorkerType;
    private Map<Integer, String> routerHintSourceControlEndpoints;
    private String kvEventSourceMode;
    private String healthUrl;
    private DisaggSpec disagg = DisaggSpec.NONE;

    private Builder(long workerId) {
      this.workerId = workerId;
    }

    private Builder(WorkerSpec s) {
      this(s.workerId);
      modelName = s.modelName;
      routingGroup = s.routingGroup;
      endpoint = s.endpoint;
      kvEventsEndpoint = s.kvEventsEndpoint;
      kvEventsEndpoints = s.kvEventsEndpoints;
      replayEndpoint = s.replayEndpoint;
      blockSize = s.blockSize;
      dataParallelStartRank = s.dataParallelStartRank;
      dataParallelSize = s.dataParallelSize;
      maxNumBatchedTokens = s.maxNumBatchedTokens;
      totalKvBlocks = s.totalKvBlocks;
      stableRoutingId = s.stableRoutingId;
      isEagle = s.isEagle;
      taints = s.taints;
      topologyDomains = s.topologyDomains;
      kvTransferDomain = s.kvTransferDomain;
      kvTransferEnforcement = s.kvTransferEnforcement;
      kvTransferPreferredWeight = s.kvTransferPreferredWeight;
      routerHintWorkerType = s.routerHintWorkerType;
      routerHintSourceControlEndpoints = s.routerHintSourceControlEndpoints;
      kvEventSourceMode = s.kvEventSourceMode;
      healthUrl = s.healthUrl;
      disagg = s.disagg;
    }

    public Builder modelName(String v) {
      modelName = v;
      return this;
    }

    public Builder routingGroup(String v) {
      routingGroup = v;
      return this;
    }

    public Builder endpoint(String v) {
      endpoint = v;
      return this;
    }

    public Builder kvEventsEndpoint(String v) {
      kvEventsEndpoint = v;
      return this;
    }

    /** Per-rank KV-event endpoints, keyed by global DP rank. */
    public Builder kvEventsEndpoints(Map<Integer, String> v) {
      kvEventsEndpoints = v;
      return this;
    }

    public Builder replayEndpoint(String v) {
      replayEndpoint = v;
      return this;
    }

    public Builder blockSize(Integer v) {
      blockSize = v;
      return this;
    }

    public Builder dataParallelStartRank(int v) {
      dataParallelStartRank = v;
      return this;
    }

    public Builder dataParallelSize(int v) {
      dataParallelSize = v;
      return this;
    }

    public Builder maxNumBatchedTokens(Long v) {
      maxNumBatchedTokens = v;
      return this;
    }

    public Builder totalKvBlocks(Long v) {
      totalKvBlocks = v;
      return this;
    }

    public Builder stableRoutingId(String v) {
      stableRoutingId = v;
      return this;
    }

    public Builder isEagle(boolean v) {
      isEagle = v;
      return this;
    }

    public Builder taints(Set<String> v) {
      taints = v;
      return this;
    }

    public Builder topologyDomains(Map<String, String> v) {
      topologyDomains = v;
      return this;
    }

    public Builder kvTransferDomain(String v) {
      kvTransferDomain = v;
      return this;
    }

    public Builder kvTransferEnforcement(String v) {
      kvTransferEnforcement = v;
      return this;
    }

    public Builder kvTransferPreferredWeight(Double v) {
      kvTransferPreferredWeight = v;
      return this;
    }

    public Builder routerHintWorkerType(String v) {
      routerHintWorkerType = v;
      return this;
    }

    /** Per-rank source control endpoints, keyed by global DP rank. */
    public Builder routerHintSourceControlEndpoints(Map<Integer, String> v) {
      routerHintSourceControlEndpoints = v;
      return this;
    }

    public Builder kvEventSourceMode(String v) {
      kvEventSourceMode = v;
      return this;
    }

    public Builder healthUrl(String v) {
      healthUrl = v;
      return this;
    }

    /** The prefill/decode role fields; null means none. */
    public Builder disagg(DisaggSpec v) {
      disagg = v;
      return this;
    }

    /**
     * The spec.
     *
     * @throws SelectionException (422) naming the field when an endpoint, the health URL or the
     *     DP rank range is malformed
     */
    public WorkerSpec build() {
      return new WorkerSpec(
          workerId,
          modelName,
          routingGroup,
          endpoint,
          kvEventsEndpoint,
          kvEventsEndpoints,
          replayEndpoint,
          blockSize,
          dataParallelStartRank,
          dataParallelSize,
          maxNumBatchedTokens,
          totalKvBlocks,
          stableRoutingId,
          isEagle,
          taints,
          topologyDomains,
          kvTransferDomain,
          kvTransferEnforcement,
          kvTransferPreferredWeight,
          routerHintWorkerType,
          routerHintSourceControlEndpoints,
          kvEventSourceMode,
          healthUrl,
          disagg);
    }
  }
}
