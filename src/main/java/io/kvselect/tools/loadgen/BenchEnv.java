package io.kvselect.tools.loadgen;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What a benchmark table must say about where it was measured: CPUs, CPU model, JVM
 * ({@code java -version} of the running binary), load average and the git commit of the working
 * directory. Every probe is bounded (external commands get {@value #COMMAND_TIMEOUT_S} s) and
 * falls back to "unknown" instead of failing the run. Stateless.
 */
final class BenchEnv {

  private static final long COMMAND_TIMEOUT_S = 10;

  private BenchEnv() {}

  /** The CPUs this JVM may use (what {@code nproc} prints). */
  static int cpus() {
    return Runtime.getRuntime().availableProcessors();
  }

  /** The first {@code model name} of {@code /proc/cpuinfo}, or "unknown CPU". */
  static String cpuModel() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
        if (line.startsWith("model name")) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: fall through
    }
    return "unknown CPU";
  }

  /** {@code java -version} of the running JVM's binary, on one line. */
  static String javaVersion() {
    String java = ProcessHandle.current().info().command().orElse("java");
    String out = run(List.of(java, "-version"));
    if (out.isEmpty()) {
      return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }
    return String.join("; ", out.strip().split("\\R"));
  }

  /** One-minute load average, or -1 where unavailable. */
  static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  /** Maximum heap of this JVM in MiB. */
  static long maxHeapMiB() {
    return Runtime.getRuntime().maxMemory() >> 20;
  }

  /** {@code git rev-parse --short HEAD}, with "+uncommitted changes" for a dirty tree. */
  static String gitCommit() {
    String head = run(List.of("git", "rev-parse", "--short", "HEAD")).strip();
    if (head.isEmpty()) {
      return "unknown (not a git checkout)";
    }
    String dirty = run(List.of("git", "status", "--porcelain", "--untracked-files=no")).strip();
    return dirty.isEmpty() ? head : head + " (+uncommitted changes)";
  }

  private static String run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      p.getOutputStream().close();
      if (!p.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "";
      }
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return p.exitValue() == 0 ? out : "";
    } catch (IOException e) {
      return "";
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }
}
