package io.kvselect.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One external program a test runs (a node script, a Python example): stdout and stderr go to
 * files under {@code target/}, {@link #await} bounds its run, and {@link #close} ends it and every
 * descendant it left (SIGTERM, then SIGKILL), by process id. Owned by the test thread.
 */
public final class ChildProcess implements AutoCloseable {

  private final Process process;
  private final Path out;
  private final Path err;

  private ChildProcess(Process process, Path out, Path err) {
    this.process = process;
    this.out = out;
    this.err = err;
  }

  /** Starts {@code command} in {@code dir}; output goes to {@code logs/name.out} and {@code .err}. */
  public static ChildProcess start(Path dir, Path logs, String name, List<String> command)
      throws IOException {
    Files.createDirectories(logs);
    Path out = logs.resolve(name + ".out");
    Path err = logs.resolve(name + ".err");
    Process p =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectOutput(out.toFile())
            .redirectError(err.toFile())
            .redirectInput(ProcessBuilder.Redirect.PIPE)
            .start();
    p.getOutputStream().close();
    return new ChildProcess(p, out, err);
  }

  /** Waits at most {@code seconds} for the exit; returns the exit code, or -1 on timeout (then kills it). */
  public int await(long seconds) throws InterruptedException {
    if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
      close();
      return -1;
    }
    return process.exitValue();
  }

  public long pid() {
    return process.pid();
  }

  public String stdout() {
    return read(out);
  }

  public String stderr() {
    return read(err);
  }

  /** Every descendant first (a browser's helpers), then the process itself. */
  @Override
  public void close() {
    List<ProcessHandle> descendants = process.descendants().toList();
    descendants.forEach(ProcessHandle::destroy);
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    descendants.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  private static String read(Path p) {
    try {
      return Files.exists(p) ? Files.readString(p, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
