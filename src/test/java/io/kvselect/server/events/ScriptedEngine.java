package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The fake engine {@code src/test/resources/interop/engine.py} running under Debian's
 * {@code /usr/bin/python3} (libzmq through python3-zmq, python3-msgpack): a libzmq PUB and ROUTER
 * on 127.0.0.1, driven by one JSON command per stdin line, each answered by one stdout line.
 *
 * <p>Every wait is bounded; {@link #close()} always ends the process by its PID (quit, then
 * destroy, then destroyForcibly). The script also exits on its own at stdin EOF or after
 * {@code --max-seconds}, so it cannot outlive the test JVM. Used by one test thread.
 */
final class ScriptedEngine implements AutoCloseable {

  static final String PYTHON = "/usr/bin/python3";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final long REPLY_TIMEOUT_S = 10;

  private final Process process;
  private final OutputStream stdin;
  private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
  private final StringBuffer stderr = new StringBuffer();
  final String pub;
  final String replay;

  private ScriptedEngine(Process process) throws Exception {
    this.process = process;
    this.stdin = process.getOutputStream();
    drain(process.getInputStream(), lines::add, "engine-stdout");
    drain(process.getErrorStream(), line -> stderr.append(line).append('\n'), "engine-stderr");
    JsonNode hello = next("start-up line with the endpoints");
    this.pub = hello.get("pub").asText();
    this.replay = hello.get("replay").asText();
  }

  /**
   * Fails (never skips) when {@code /usr/bin/python3} or its zmq / msgpack modules are missing:
   * CI installs them through {@code .ci/run}.
   */
  static void requireLibzmqPython() throws Exception {
    assertTrue(
        Files.isExecutable(Path.of(PYTHON)),
        "no "
            + PYTHON
            + ": the libzmq interop tests need Debian's python3 with python3-zmq and "
            + "python3-msgpack (apt-get install -y python3-zmq python3-msgpack; .ci/run does it)");
    Process probe =
        new ProcessBuilder(PYTHON, "-c", "import zmq, msgpack").redirectErrorStream(true).start();
    try {
      boolean ended = probe.waitFor(20, TimeUnit.SECONDS);
      String out =
          ended
              ? new String(probe.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
              : "(timed out)";
      assertTrue(
          ended && probe.exitValue() == 0,
          PYTHON
              + " cannot import zmq and msgpack; install Debian's python3-zmq and python3-msgpack "
              + "(apt-get install -y python3-zmq python3-msgpack; .ci/run does it): "
              + out.trim());
    } finally {
      stop(probe);
    }
  }

  /** Starts engine.py with the given options ({@code --format vllm_map}, ...). */
  static ScriptedEngine start(String... options) throws Exception {
    List<String> cmd =
        new ArrayList<>(List.of(PYTHON, "-u", script().toString(), "--max-seconds", "120"));
    cmd.addAll(List.of(options));
    Process p = new ProcessBuilder(cmd).start();
    try {
      return new ScriptedEngine(p);
    } catch (Exception | AssertionError e) {
      stop(p);
      throw e;
    }
  }

  private static Path script() throws URISyntaxException {
    URL url = ScriptedEngine.class.getResource("/interop/engine.py");
    assertTrue(url != null, "interop/engine.py is not on the test classpath");
    return Path.of(url.toURI());
  }

  long pid() {
    return process.pid();
  }

  /** Sends one command and returns its reply; fails on {@code "ok": false} or no reply in time. */
  JsonNode send(Map<String, ?> command) throws Exception {
    try {
      stdin.write((JSON.writeValueAsString(command) + "\n").getBytes(StandardCharsets.UTF_8));
      stdin.flush();
    } catch (IOException e) {
      throw new AssertionError("engine stdin closed (exit " + exitOrNull() + "): " + stderr, e);
    }
    JsonNode r = next("reply to " + command.get("op"));
    assertTrue(r.path("ok").asBoolean(), "engine refused " + command + ": " + r);
    return r;
  }

  /** Sends an event command and returns the sequence number of its batch. */
  long publish(Map<String, ?> command) throws Exception {
    return send(command).get("seq").asLong();
  }

  private JsonNode next(String what) throws Exception {
    String line = lines.poll(REPLY_TIMEOUT_S, TimeUnit.SECONDS);
    if (line == null) {
      throw new AssertionError(
          "no "
              + what
              + " from engine.py within "
              + REPLY_TIMEOUT_S
              + " s (exit "
              + exitOrNull()
              + "): "
              + stderr);
    }
    return JSON.readTree(line);
  }

  private Object exitOrNull() {
    return process.isAlive() ? "none, still running" : process.exitValue();
  }

  /** Quits the engine and makes sure its process is gone. */
  @Override
  public void close() {
    try {
      stdin.write("{\"op\":\"quit\"}\n".getBytes(StandardCharsets.UTF_8));
      stdin.close();
    } catch (IOException e) {
      // already gone: stop() below covers it
    }
    stop(process);
  }

  /** Stops {@code p} by its PID: a bounded wait, destroy, then destroyForcibly. */
  private static void stop(Process p) {
    try {
      if (!p.waitFor(2, TimeUnit.SECONDS)) {
        p.destroy();
        if (!p.waitFor(3, TimeUnit.SECONDS)) {
          p.destroyForcibly();
          p.waitFor(5, TimeUnit.SECONDS);
        }
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  private static void drain(InputStream in, Consumer<String> sink, String name) {
    Thread t =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                  sink.accept(line);
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            name);
    t.setDaemon(true);
    t.start();
  }
}
