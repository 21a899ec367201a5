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
public final class BenchEnv {

  private static final long COMMAND_TIMEOUT_S = 10;

  private BenchEnv() {}

  /** The CPUs this JVM may use (what {@code nproc} prints). */
  public static int cpus() {
    return Runtime.getRuntime().availableProcessors();
  }

  /** The first {@code model name} of {@code /proc/cpuinfo}, or "unknown CPU". */
  public static String cpuModel() {
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
  public static String javaVersion() {
    String java = ProcessHandle.current().info().command().orElse("java");
    String out = run(List.of(java, "-version"));
    if (out.isEmpty()) {
      return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }
    return String.join("; ", out.strip().split("\\R"));
  }

  /** One-minute load average, or -1 where unavailable. */
  public static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  /** Maximum heap of this JVM in MiB. */
  static long maxHeapMiB() {
    return Runtime.getRuntime().maxMemory() >> 20;
  }

  /**
   * The commit of the code measured: the {@code Kvselect-Commit} the fat jar was built from
   * ({@code bin/lib/jar.sh} records it; {@code +changes} marks a dirty tree), beside the checkout's
   * {@code git rev-parse --short HEAD} when the two differ; the checkout's alone when not run from
   * such a jar.
   */
  public static String gitCommit() {
    String head = run(List.of("git", "rev-parse", "--short", "HEAD")).strip();
    String dirty =
        head.isEmpty()
            ? ""
            : run(List.of("git", "status", "--porcelain", "--untracked-files=no")).strip();
    String checkout =
        head.isEmpty()
            ? "unknown (not a git checkout)"
            : dirty.isEmpty() ? head : head + " (+uncommitted changes)";
    String built = jarCommit();
    if (built == null || built.equals("unknown")) {
      return checkout;
    }
    return built.equals(head) && dirty.isEmpty()
        ? built
        : built + " (jar; checkout at " + checkout + ")";
  }

  /** The {@code Kvselect-Commit} manifest entry of the jar this class was loaded from, or null. */
  static String jarCommit() {
    try {
      java.security.CodeSource src = BenchEnv.class.getProtectionDomain().getCodeSource();
      if (src == null || !src.getLocation().getPath().endsWith(".jar")) {
        return null;
      }
      try (java.util.jar.JarFile jar =
          new java.util.jar.JarFile(new java.io.File(src.getLocation().toURI()))) {
        java.util.jar.Manifest m = jar.getManifest();
        return m == null ? null : m.getMainAttributes().getValue("Kvselect-Commit");
      }
    } catch (java.io.IOException | java.net.URISyntaxException | SecurityException e) {
      return null;
    }
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
