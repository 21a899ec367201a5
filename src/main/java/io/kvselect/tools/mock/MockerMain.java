package io.kvselect.tools.mock;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.tools.Unreachable;
import java.io.PrintStream;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-mocker}: a fleet of GPU-free mock engines that publish vLLM-style KV events
 * over ZMQ, like Dynamo's mocker. Prints one JSON line per engine on stdout once every engine is
 * up (and registered, with {@code --register}); runs until SIGTERM, then stops everything. Exit
 * codes: 2 for a bad flag, 1 when the fleet cannot start or register.
 *
 * <p>A mutable picocli target: build one per run and confine it to the main thread.
 */
@Command(
    name = "kvselect-mocker",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = false,
    description = {
      "Mock vLLM engines: prefix caches with LRU eviction, KV events over ZMQ, replay, HTTP."
    })
public final class MockerMain implements Callable<Integer> {

  private static final Logger LOG = LoggerFactory.getLogger(MockerMain.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  @Option(names = "--engines", paramLabel = "N", description = "Number of engines (workers) (1).")
  int engines = 1;

  @Option(
      names = "--dp-size",
      paramLabel = "R",
      description = "Data-parallel ranks per engine (1).")
  int dpSize = 1;

  @Option(names = "--num-gpu-blocks", paramLabel = "B", description = "KV blocks per rank (16384).")
  int numGpuBlocks = 16_384;

  @Option(names = "--block-size", paramLabel = "S", description = "Tokens per block (16).")
  int blockSize = 16;

  @Option(
      names = "--wire",
      paramLabel = "FORM",
      description = "Event encoding: map (vLLM 0.26+) or array (vLLM <= 0.23) (map).")
  WireFormat wire = WireFormat.MAP;

  @Option(
      names = "--replay-layout",
      paramLabel = "LAYOUT",
      description = "Replay answers: topic (vLLM 0.26+) or legacy (older vLLM, SGLang) (topic).")
  ReplayLayout replayLayout = ReplayLayout.TOPIC;

  @Option(
      names = "--topic",
      paramLabel = "TOPIC",
      description = "Topic frame of every batch (empty).")
  String topic = "";

  @Option(
      names = "--host",
      paramLabel = "ADDR",
      description = "Bind address of every socket (127.0.0.1).")
  String host = "127.0.0.1";

  @Option(
      names = "--base-port",
      paramLabel = "P",
      description =
          "First port; engine e uses P+e*(R+2).. (ranks, replay, HTTP); 0 = ephemeral (0).")
  int basePort;

  @Option(
      names = "--register",
      paramLabel = "URL",
      description = "kvselect base URL to POST /workers to.")
  String register;

  @Option(
      names = "--prefill-us-per-token",
      paramLabel = "US",
      description = "Prefill time per uncached token (50).")
  double prefillUsPerToken = 50;

  @Option(
      names = "--decode-us-per-token",
      paramLabel = "US",
      description = "Decode time per output token (10000).")
  double decodeUsPerToken = 10_000;

  @Option(names = "--speedup", paramLabel = "X", description = "Divides every wait (1.0).")
  double speedup = 1.0;

  @Option(
      names = "--model-name",
      paramLabel = "NAME",
      description = "model_name registered (node default).")
  String modelName;

  @Option(
      names = "--routing-group",
      paramLabel = "NAME",
      description = "routing_group registered (node default).")
  String routingGroup;

  @Option(
      names = "--worker-id-base",
      paramLabel = "ID",
      description = "Worker id of the first engine (1).")
  long workerIdBase = 1;

  @Option(
      names = "--max-num-batched-tokens",
      paramLabel = "N",
      description = "max_num_batched_tokens registered (needed when the node queues).")
  Long maxNumBatchedTokens;

  @Option(
      names = {"-h", "--help"},
      usageHelp = true,
      description = "Show this help and exit.")
  boolean help;

  public static void main(String[] args) {
    System.exit(commandLine(new MockerMain()).execute(args));
  }

  /** The picocli command over {@code target}, with case-insensitive enum values. */
  static CommandLine commandLine(MockerMain target) {
    CommandLine cl = new CommandLine(target);
    cl.setCaseInsensitiveEnumValuesAllowed(true);
    return cl;
  }

  /** The validated fleet settings of the parsed flags. */
  MockerOptions options() {
    return new MockerOptions(
        engines,
        dpSize,
        numGpuBlocks,
        blockSize,
        wire,
        host,
        basePort,
        register,
        new TimingModel(prefillUsPerToken, decodeUsPerToken, speedup),
        modelName,
        routingGroup,
        workerIdBase,
        topic,
        replayLayout,
        maxNumBatchedTokens);
  }

  @Override
  public Integer call() throws Exception {
    MockerOptions o;
    try {
      o = options();
    } catch (IllegalArgumentException e) {
      System.err.println("kvselect-mocker: " + e.getMessage());
      return 2;
    }
    MockFleet fleet;
    try {
      fleet = run(o, System.out);
    } catch (Exception e) {
      System.err.println("kvselect-mocker: " + Unreachable.message(e));
      return 1;
    }
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    fleet.close();
                  } catch (Exception e) {
                    LOG.warn("fleet did not stop cleanly: {}", e.toString());
                  } finally {
                    stopped.countDown();
                  }
                },
                "kvselect-mocker-shutdown"));
    stopped.await();
    return 0;
  }

  /**
   * Starts the fleet of {@code o}, registers it when {@code o.register()} is set and prints one
   * ready line per engine on {@code out}. On a registration failure the fleet is stopped again;
   * a registered fleet removes its workers from the node when it is closed (SIGTERM does).
   */
  public static MockFleet run(MockerOptions o, PrintStream out) throws Exception {
    MockFleet fleet = MockFleet.start(o);
    try {
      if (o.register() != null) {
        FleetRegistrar registrar = new FleetRegistrar(o.register(), o);
        for (EngineInfo e : fleet.engines()) {
          registrar.register(e);
        }
        fleet.deregisterOnClose(registrar);
      }
    } catch (Exception e) {
      fleet.close();
      throw e;
    }
    LOG.info("mock fleet up: {}", o);
    for (EngineInfo e : fleet.engines()) {
      out.println(JSON.writeValueAsString(e.toJson()));
    }
    out.flush();
    return fleet;
  }
}
