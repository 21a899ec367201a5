package io.kvselect.tools.loadgen;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A server under test in its own JVM, started from this JVM's class path (the fat jar when run
 * by the launcher script) on 127.0.0.1 and a free port, its output in a temporary log file, and
 * stopped by its PID (SIGTERM, then SIGKILL after 10 s). Mutable; confined to the thread that
 * started it. The log file is removed when the server is stopped; a server that fails to start
 * has the end of its log in the exception.
 */
final class ServerProcess implements AutoCloseable {

  private final String name;
  private final Process process;
  private final int port;
  private final Path log;

  /** Stops the server by its PID if this JVM exits first (Ctrl-C); removed by {@link #close()}. */
  private final Thread exitHook;

  private ServerProcess(String name, Process process, int port, Path log) {
    this.name = name;
    this.process = process;
    this.port = port;
    this.log = log;
    long pid = process.pid();
    this.exitHook =
        new Thread(() -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy), "stop-" + name);
    Runtime.getRuntime().addShutdownHook(exitHook);
  }

  /**
   * Starts {@code mainClass} with {@code args} ({@code {port}} in them is replaced by the port),
   * the JVM options of {@code KVSELECT_JAVA_OPTS} and extra environment {@code env}, and waits
   * (at most 60 s) until {@code GET readyPath} answers 200.
   */
  static ServerProcess start(
      String name, String mainClass, List<String> args, Map<String, String> env, String readyPath)
      throws IOException, InterruptedException {
    int port = freePort();
    String java = ProcessHandle.current().info().command().orElse("java");
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    String opts = System.getenv("KVSELECT_JAVA_OPTS");
    if (opts != null && !opts.isBlank()) {
      cmd.addAll(List.of(opts.trim().split("\\s+")));
    }
    String logback = System.getProperty("logback.configurationFile");
    if (logback != null) {
      cmd.add("-Dlogback.configurationFile=" + logback);
    }
    cmd.add("-cp");
    cmd.add(System.getProperty("java.class.path"));
    cmd.add(mainClass);
    for (String a : args) {
      cmd.add(a.replace("{port}", Integer.toString(port)));
    }
    Path log = Files.createTempFile("kvselect-openloop-" + name + "-", ".log");
    ProcessBuilder pb =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    pb.environment().putAll(env);
    ServerProcess s = new ServerProcess(name, pb.start(), port, log);
    try {
      s.awaitReady(readyPath);
    } catch (IOException | InterruptedException | RuntimeException e) {
      s.close();
      throw e;
    }
    return s;
  }

  int port() {
    return port;
  }

  long pid() {
    return process.pid();
  }

  private void awaitReady(String path) throws IOException, InterruptedException {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    HttpRequest get =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(Duration.ofSeconds(2))
            .GET()
            .build();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IOException(
            name
                + " exited with "
                + process.exitValue()
                + " before it was ready; its log "
                + "ends with:\n"
                + tail());
      }
      try {
        if (http.send(get, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (IOException e) {
        // not listening yet
      }
      Thread.sleep(200);
    }
    throw new IOException(name + " was not ready within 60 s; its log ends with:\n" + tail());
  }

  private String tail() {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "(unreadable: " + e.getMessage() + ")";
    }
  }

  /** SIGTERM to the PID, SIGKILL after 10 s; then removes the log. */
  @Override
  public void close() throws InterruptedException {
    try {
      Runtime.getRuntime().removeShutdownHook(exitHook);
    } catch (IllegalStateException e) {
      // already exiting: the hook stops it
    }
    ProcessHandle h = process.toHandle();
    h.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      h.destroyForcibly();
      process.waitFor(10, TimeUnit.SECONDS);
    }
    try {
      Files.deleteIfExists(log);
    } catch (IOException e) {
      // a temporary file; nothing depends on it
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }
}
