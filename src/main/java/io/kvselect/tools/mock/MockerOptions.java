package io.kvselect.tools.mock;

/**
 * Settings of a mock fleet, validated on construction. Immutable.
 *
 * <p>Port layout with a non-zero {@code basePort} P: engine e owns the block starting at
 * {@code b = P + e * (dpSize + 2)}; rank r publishes on {@code b + r} (vLLM's base + rank rule),
 * the replay ROUTER (single-rank engines only) listens on {@code b + dpSize} and HTTP on
 * {@code b + dpSize + 1}. With P = 0 every port is ephemeral.
 */
public record MockerOptions(
    int engines,
    int dpSize,
    int numGpuBlocks,
    int blockSize,
    WireFormat wire,
    String host,
    int basePort,
    String register,
    TimingModel timing,
    String modelName,
    String routingGroup,
    long workerIdBase,
    String topic,
    ReplayLayout replayLayout,
    Long maxNumBatchedTokens) {

  public MockerOptions {
    positive("--engines", engines);
    positive("--dp-size", dpSize);
    positive("--num-gpu-blocks", numGpuBlocks);
    positive("--block-size", blockSize);
    if (basePort < 0 || (long) basePort + (long) engines * (dpSize + 2) - 1 > 65_535) {
      throw new IllegalArgumentException(
          "--base-port "
              + basePort
              + ": the fleet needs ports up to "
              + ((long) basePort + (long) engines * (dpSize + 2) - 1)
              + ", above 65535");
    }
    if (workerIdBase < 0) {
      throw new IllegalArgumentException("--worker-id-base must be >= 0: " + workerIdBase);
    }
    if (host == null || host.isBlank()) {
      throw new IllegalArgumentException("--host must not be empty");
    }
    if (wire == null || replayLayout == null || timing == null || topic == null) {
      throw new IllegalArgumentException("wire, replay layout, timing and topic are required");
    }
  }

  /** Options for tests and embedding: ephemeral ports on 127.0.0.1, no timing, no registration. */
  public static MockerOptions local(
      int engines, int dpSize, int numGpuBlocks, int blockSize, WireFormat wire) {
    return new MockerOptions(
        engines,
        dpSize,
        numGpuBlocks,
        blockSize,
        wire,
        "127.0.0.1",
        0,
        null,
        new TimingModel(0, 0, 1),
        null,
        null,
        1,
        "",
        ReplayLayout.TOPIC,
        null);
  }

  /** A copy with another replay layout. */
  public MockerOptions withReplayLayout(ReplayLayout layout) {
    return new MockerOptions(
        engines,
        dpSize,
        numGpuBlocks,
        blockSize,
        wire,
        host,
        basePort,
        register,
        timing,
        modelName,
        routingGroup,
        workerIdBase,
        topic,
        layout,
        maxNumBatchedTokens);
  }

  /** A copy with another timing model. */
  public MockerOptions withTiming(TimingModel t) {
    return new MockerOptions(
        engines,
        dpSize,
        numGpuBlocks,
        blockSize,
        wire,
        host,
        basePort,
        register,
        t,
        modelName,
        routingGroup,
        workerIdBase,
        topic,
        replayLayout,
        maxNumBatchedTokens);
  }

  /** The worker id of engine {@code e}. */
  public long workerId(int e) {
    return workerIdBase + e;
  }

  /** PUB port per rank of engine {@code e} (0 = ephemeral). */
  public int[] pubPorts(int e) {
    int[] ports = new int[dpSize];
    for (int r = 0; r < dpSize; r++) {
      ports[r] = basePort == 0 ? 0 : block(e) + r;
    }
    return ports;
  }

  /** Replay port of engine {@code e} (0 = ephemeral), or null: vLLM replays only with one rank. */
  public Integer replayPort(int e) {
    if (dpSize != 1) {
      return null;
    }
    return basePort == 0 ? 0 : block(e) + dpSize;
  }

  /** HTTP port of engine {@code e} (0 = ephemeral). */
  public int httpPort(int e) {
    return basePort == 0 ? 0 : block(e) + dpSize + 1;
  }

  /** The host put in advertised endpoints: the bind host, or 127.0.0.1 for a wildcard bind. */
  public String advertisedHost() {
    return host.equals("0.0.0.0") ? "127.0.0.1" : host;
  }

  private int block(int e) {
    return basePort + e * (dpSize + 2);
  }

  private static void positive(String flag, int v) {
    if (v <= 0) {
      throw new IllegalArgumentException(flag + " must be >= 1: " + v);
    }
  }
}
