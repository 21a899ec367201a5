package io.kvselect.tools.mock;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a started mock engine advertises: its worker id, HTTP endpoint, KV event endpoint per DP
 * rank and replay endpoint (null unless the engine has one rank). Immutable.
 */
public record EngineInfo(
    long workerId,
    String endpoint,
    Map<Integer, String> kvEventsEndpoints,
    String replayEndpoint,
    int dpSize,
    int blockSize,
    int numGpuBlocks) {

  /** The ready line's fields, in print order. */
  public Map<String, Object> toJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("worker_id", workerId);
    m.put("endpoint", endpoint);
    Map<String, String> events = new LinkedHashMap<>();
    kvEventsEndpoints.forEach((r, ep) -> events.put(Integer.toString(r), ep));
    m.put("kv_events_endpoints", events);
    m.put("replay_endpoint", replayEndpoint);
    m.put("data_parallel_size", dpSize);
    m.put("block_size", blockSize);
    m.put("total_kv_blocks", numGpuBlocks);
    return m;
  }

  /** The PUB endpoint of rank {@code r}. */
  public String kvEventsEndpoint(int r) {
    return kvEventsEndpoints.get(r);
  }

  /** The HTTP port of the engine. */
  public int httpPort() {
    return Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
  }
}
