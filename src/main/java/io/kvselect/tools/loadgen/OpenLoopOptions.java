package io.kvselect.tools.loadgen;

import io.vertx.core.buffer.Buffer;
import java.util.List;

/**
 * One run of {@link OpenLoopGenerator}: the target, the pre-encoded bodies, the schedule and the
 * connection pool. Chainable setters; mutable, confined to the thread that builds the run (the
 * generator copies what it needs before any event loop starts).
 */
final class OpenLoopOptions {

  /** How requests are paced. */
  enum Mode {
    /** Request {@code i} is due at {@code i / rate} from the start, whatever is still open. */
    OPEN,
    /** Every connection sends its next request as soon as its previous answer has arrived. */
    CLOSED
  }

  String host = "127.0.0.1";
  int port;
  String path = "/select";
  Mode mode = Mode.OPEN;
  double rate = 1_000;
  double warmupSeconds = 1;
  double seconds = 5;
  int connections = 64;
  int eventLoops = Runtime.getRuntime().availableProcessors();
  List<Buffer> bodies = List.of();
  boolean deleteReservations;
  long requestTimeoutMs = 10_000;
  long drainTimeoutMs = 15_000;

  OpenLoopOptions target(String host, int port, String path) {
    this.host = host;
    this.port = port;
    this.path = path;
    return this;
  }

  OpenLoopOptions open(double rate) {
    this.mode = Mode.OPEN;
    this.rate = rate;
    return this;
  }

  OpenLoopOptions closed() {
    this.mode = Mode.CLOSED;
    return this;
  }

  OpenLoopOptions window(double warmupSeconds, double seconds) {
    this.warmupSeconds = warmupSeconds;
    this.seconds = seconds;
    return this;
  }

  OpenLoopOptions connections(int connections) {
    this.connections = connections;
    return this;
  }

  OpenLoopOptions eventLoops(int eventLoops) {
    this.eventLoops = eventLoops;
    return this;
  }

  OpenLoopOptions bodies(List<Buffer> bodies) {
    this.bodies = List.copyOf(bodies);
    return this;
  }

  /** After each 200 answer, {@code DELETE /reservations/{selection_id}} of that answer. */
  OpenLoopOptions deleteReservations(boolean on) {
    this.deleteReservations = on;
    return this;
  }

  /** Idle timeout of every request, and how long the run waits for open requests at its end. */
  OpenLoopOptions timeouts(long requestTimeoutMs, long drainTimeoutMs) {
    this.requestTimeoutMs = requestTimeoutMs;
    this.drainTimeoutMs = drainTimeoutMs;
    return this;
  }

  void validate() {
    if (port < 1 || port > 65_535 || path == null || !path.startsWith("/")) {
      throw new IllegalArgumentException(
          "a target port in 1..65535 and a path starting with / are needed");
    }
    if (mode == Mode.OPEN && !(rate > 0)) {
      throw new IllegalArgumentException("--rate must be > 0");
    }
    if (!(warmupSeconds >= 0)
        || !(seconds > 0)
        || connections < 1
        || eventLoops < 1
        || bodies.isEmpty()
        || requestTimeoutMs < 1
        || drainTimeoutMs < 0) {
      throw new IllegalArgumentException(
          "--warmup >= 0, --seconds > 0, --connections and --event-loops >= 1, "
              + "at least one body");
    }
    if (eventLoops > connections) {
      throw new IllegalArgumentException(
          "--event-loops ("
              + eventLoops
              + ") must not exceed --connections ("
              + connections
              + "): every event loop owns at least one connection");
    }
    if (mode == Mode.OPEN && rate * (warmupSeconds + seconds) > 100_000_000) {
      throw new IllegalArgumentException(
          "--rate x (--warmup + --seconds) must be at most 100,000,000 requests");
    }
  }
}
