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

  /** A registration with {@code health_url} and without prefill/decode role fields. */
  public WorkerSpec(long workerId, String modelName, String routingGroup, String endpoint, String kvEventsEndpoint,
      Map<Integer, String> kvEventsEndpoints, String replayEndpoint, Integer blockSize, int dataParallelStartRank,
      int dataParallelSize, Long maxNumBatchedTokens, Long totalKvBlocks, String stableRoutingId, boolean isEagle,
      Set<String> taints, Map<String, String> topologyDomains, String kvTransferDomain, String kvTransferEnforcement,
      Double kvTransferPreferredWeight, String routerHintWorkerType, Map<Integer, String> routerHintSourceControlEndpoints,
      String kvEventSourceMode, String healthUrl) {
    this(workerId, modelName, routingGroup, endpoint, kvEventsEndpoint, kvEventsEndpoints, replayEndpoint, blockSize,
        dataParallelStartRank, dataParallelSize, maxNumBatchedTokens, totalKvBlocks, stableRoutingId, isEagle, taints,
        topologyDomains, kvTransferDomain, kvTransferEnforcement, kvTransferPreferredWeight, routerHintWorkerType,
        routerHintSourceControlEndpoints, kvEventSourceMode, healthUrl, DisaggSpec.NONE);
  }

  /** A registration with prefill/decode role fields and without {@code health_url}. */
  public WorkerSpec(long workerId, String modelName, String routingGroup, String endpoint, String kvEventsEndpoint,
      Map<Integer, String> kvEventsEndpoints, String replayEndpoint, Integer blockSize, int dataParallelStartRank,
      int dataParallelSize, Long maxNumBatchedTokens, Long totalKvBlocks, String stableRoutingId, boolean isEagle,
      Set<String> taints, Map<String, String> topologyDomains, String kvTransferDomain, String kvTransferEnforcement,
      Double kvTransferPreferredWeight, String routerHintWorkerType, Map<Integer, String> routerHintSourceControlEndpoints,
      String kvEventSourceMode, DisaggSpec disagg) {
    this(workerId, modelName, routingGroup, endpoint, kvEventsEndpoint, kvEventsEndpoints, replayEndpoint, blockSize,
        dataParallelStartRank, dataParallelSize, maxNumBatchedTokens, totalKvBlocks, stableRoutingId, isEagle, taints,
        topologyDomains, kvTransferDomain, kvTransferEnforcement, kvTransferPreferredWeight, routerHintWorkerType,
        routerHintSourceControlEndpoints, kvEventSourceMode, null, disagg);
  }

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
        routerHintSourceControlEndpoints == null ? Map.of() : Map.copyOf(routerHintSourceControlEndpoints);
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
    if (dataParallelSize > 0 && (long) dataParallelStartRank + dataParallelSize - 1 > Integer.MAX_VALUE) {
      throw SelectionException.unprocessable("data_parallel_start_rank (" + dataParallelStartRank
          + ") + data_parallel_size (" + dataParallelSize + ") must stay within 0.." + Integer.MAX_VALUE);
    }
  }

  /** A registration with only the fields Dynamo's {@code POST /workers} has. */
  public WorkerSpec(long workerId, String modelName, String routingGroup, String endpoint, String kvEventsEndpoint,
      Map<Integer, String> kvEventsEndpoints, String replayEndpoint, Integer blockSize, int dataParallelStartRank,
      int dataParallelSize, Long maxNumBatchedTokens, Long totalKvBlocks, String stableRoutingId, boolean isEagle,
      Set<String> taints, Map<String, String> topologyDomains, String kvTransferDomain, String kvTransferEnforcement,
      Double kvTransferPreferredWeight, String routerHintWorkerType,
      Map<Integer, String> routerHintSourceControlEndpoints, String kvEventSourceMode) {
    this(workerId, modelName, routingGroup, endpoint, kvEventsEndpoint, kvEventsEndpoints, replayEndpoint, blockSize,
        dataParallelStartRank, dataParallelSize, maxNumBatchedTokens, totalKvBlocks, stableRoutingId, isEagle, taints,
        topologyDomains, kvTransferDomain, kvTransferEnforcement, kvTransferPreferredWeight, routerHintWorkerType,
        routerHintSourceControlEndpoints, kvEventSourceMode, null, DisaggSpec.NONE);
  }

  /** {@code health_url}: an absolute http(s) URL with a host (kvselect's addition, for liveness). */
  private static void requireHttpUrl(String url) {
    java.net.URI uri;
    try {
      uri = new java.net.URI(url);
    } catch (java.net.URISyntaxException e) {
      uri = null;
    }
    if (uri == null || uri.getHost() == null
        || !("http".equalsIgnoreCase(uri.getScheme()) || "https".equalsIgnoreCase(uri.getScheme()))) {
      throw SelectionException.unprocessable("health_url must be an absolute http(s) URL with a host, got '"
          + url + "'");
    }
  }

  /** A minimal spec: the given id in the default partition, everything else absent or default. */
  public static WorkerSpec of(long workerId, String endpoint, int blockSize) {
    return new WorkerSpec(workerId, null, null, endpoint, null, null, null, blockSize, 0, 1, null, null,
        null, false, null, null, null, null, null, null, null, null);
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
    return new WorkerSpec(workerId, model, group, endpoint, kvEventsEndpoint, kvEventsEndpoints,
        replayEndpoint, blockSize, dataParallelStartRank, dataParallelSize, maxNumBatchedTokens,
        totalKvBlocks, stableRoutingId, isEagle, taints, topologyDomains, kvTransferDomain,
        kvTransferEnforcement, kvTransferPreferredWeight, routerHintWorkerType,
        routerHintSourceControlEndpoints, kvEventSourceMode, healthUrl, disagg);
  }
}
