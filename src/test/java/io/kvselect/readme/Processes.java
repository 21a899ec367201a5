package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The processes one README block started: each command runs under {@code bash -c} in the
 * repository root with its stdout and stderr in files, and {@link #close} ends every process
 * started here and its descendants (SIGTERM, then SIGKILL after a grace period), by process id.
 *
 * <p>Owned by the test thread that runs the block; not thread-safe (the JVM shutdown hook reads
 * the list only when the test JVM exits before {@link #close}).
 */
final class Processes implements AutoCloseable {

  /** A started command and the files holding its output. */
  record Started(String command, Process process, Path out, Path err) {

    String stdout() {
      return read(out);
    }

    String stderr() {
      return read(err);
    }

    /** The last lines of stderr, for failure messages. */
    String stderrTail() {
      List<String> lines = stderr().lines().toList();
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    }

    private static String read(Path p) {
      try {
        return Files.readString(p, StandardCharsets.UTF_8);
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private static final long GRACE_SECONDS = 10;

  private final Path root;
  private final Path logs;
  private final Map<String, String> env;
  private final List<Started> started = new ArrayList<>();
  private final Thread reaper = new Thread(this::close, "readme-process-reaper");

  Processes(Path root, Path logs, Map<String, String> env) throws IOException {
    this.root = root;
    this.logs = Files.createDirectories(logs);
    this.env = env;
    Runtime.getRuntime().addShutdownHook(reaper);
  }

  /** Starts {@code command} and returns at once. */
  Started start(String command) throws IOException {
    int n = started.size() + 1;
    Path out = logs.resolve("cmd" + n + ".out");
    Path err = logs.resolve("cmd" + n + ".err");
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", command)
            .directory(root.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile());
    pb.environment().keySet().removeIf(k -> k.startsWith("DYN_") || k.startsWith("KVSELECT_"));
    pb.environment().putAll(env);
    Started s = new Started(command, pb.start(), out, err);
    started.add(s);
    return s;
  }

  /** Runs {@code command} to completion within {@code seconds}; a command still running fails. */
  Started run(String command, long seconds) throws IOException, InterruptedException {
    Started s = start(command);
    if (!s.process().waitFor(seconds, TimeUnit.SECONDS)) {
      stop(s);
      fail("did not finish within " + seconds + " s: " + command + "\nstderr:\n" + s.stderrTail());
    }
    return s;
  }

  @Override
  public void close() {
    for (Started s : started) {
      stop(s);
    }
    try {
      Runtime.getRuntime().removeShutdownHook(reaper);
    } catch (IllegalStateException shuttingDown) {
      // close runs as the hook itself
    }
  }

  private static void stop(Started s) {
    ProcessHandle h = s.process().toHandle();
    List<ProcessHandle> tree = new ArrayList<>(h.descendants().toList());
    tree.add(h);
    tree.forEach(ProcessHandle::destroy);
    for (ProcessHandle p : tree) {
      try {
        p.onExit().get(GRACE_SECONDS, TimeUnit.SECONDS);
      } catch (Exception notYet) {
        p.destroyForcibly();
      }
    }
  }
}
