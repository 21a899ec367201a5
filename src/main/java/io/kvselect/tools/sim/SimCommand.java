package io.kvselect.tools.sim;

import io.kvselect.core.kvc.KvcParams;
import io.kvselect.server.config.FlagSuggestion;
import io.kvselect.server.config.Version;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code bin/kvselect-sim}: replays an agentic or Mooncake workload through the selection core's
 * policies over simulated prefill and decode workers ({@link Simulator}) and writes
 * {@code results.csv}, {@code results.md} and plots to {@code --out}; {@code --map} sweeps open
 * sessions x K_d instead. Every flag is checked before the first run: each usage error is one
 * line on stderr and the exit is 2; a run that fails (an unreadable trace row) is one line and exit
 * 1. The options and their checks are {@link SimOptions}; the one run is {@link SimRuns}, the map
 * {@link MapSweep}. A picocli target: one per run, on the main thread.
 */
@Command(
    name = "kvselect-sim",
    sortOptions = false,
    usageHelpAutoWidth = true,
    mixinStandardHelpOptions = true,
    versionProvider = SimCommand.VersionProvider.class,
    description =
        "Trace-replay simulator of prefill/decode routing: kvc against kv, sticky, least_loaded, "
            + "round_robin. Every model assumption is a flag; defaults shown.")
public final class SimCommand extends SimOptions implements Callable<Integer> {

  PrintStream stdout = System.out;
  PrintStream stderr = System.err;

  public static void main(String[] args) {
    System.setProperty("java.awt.headless", "true");
    System.exit(commandLine(new SimCommand()).execute(args));
  }

  static CommandLine commandLine(SimCommand c) {
    CommandLine cl = new CommandLine(c).setCaseInsensitiveEnumValuesAllowed(true);
    cl.setParameterExceptionHandler(
        (e, args) -> {
          e.getCommandLine().getErr().println(NAME + ": " + FlagSuggestion.oneLine(e));
          return USAGE_ERROR;
        });
    cl.setExecutionExceptionHandler(
        (e, line, parsed) -> {
          if (e instanceof IOException || e instanceof java.io.UncheckedIOException) {
            line.getErr().println(NAME + ": " + e.getMessage());
            return 1;
          }
          throw e;
        });
    return cl;
  }

  static final String NAME = "kvselect-sim";
  static final int USAGE_ERROR = 2;

  /** {@code --version}: this build's version, as {@code kvselect --version} prints it. */
  static final class VersionProvider implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {NAME + " " + Version.current()};
    }
  }

  @Override
  public Integer call() throws Exception {
    List<String> errors = errors();
    if (!errors.isEmpty()) {
      for (String e : errors) {
        stderr.println(NAME + ": " + e);
      }
      return USAGE_ERROR;
    }
    KvcParams k = kvcParams();
    Files.createDirectories(out);
    if (map) {
      MapSweep.run(this, k);
      return 0;
    }
    SimRuns.one(this, k);
    return 0;
  }
}
