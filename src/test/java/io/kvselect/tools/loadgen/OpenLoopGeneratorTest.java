package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link OpenLoopGenerator} against an in-process Vert.x server on an ephemeral loopback port
 * (its own Vert.x instance, one event loop). Nothing here asserts how fast anything ran: counts
 * are exact or bounded by the schedule, and the one time span checked is a lower bound that a
 * slower machine only lengthens.
 */
class OpenLoopGeneratorTest {

  private Vertx vertx;
  private HttpServer server;

  /** Requests the server received; written by the server's event loop. */
  private final AtomicLong received = new AtomicLong();

  private final AtomicLong deletes = new AtomicLong();
  private final ConcurrentLinkedQueue<Long> arrivals = new ConcurrentLinkedQueue<>();

  @BeforeEach
  void setUp() {
    vertx = Vertx.vertx();
  }

  @AfterEach
  void tearDown() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private int serve(Handler<HttpServerRequest> handler) throws Exception {
    server =
        vertx
            .createHttpServer()
            .requestHandler(
                req ->
                    req.body()
                        .onSuccess(
                            b -> {
                              arrivals.add(System.nanoTime());
                              if (req.method() == HttpMethod.DELETE) {
                                deletes.incrementAndGet();
                                req.response().end("{\"status\":\"ok\"}");
                                return;
                              }
                              received.incrementAndGet();
                              handler.handle(req);
                            }));
    return server
        .listen(0, "127.0.0.1")
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS)
        .actualPort();
  }

  private static OpenLoopOptions options(int port) {
    return new OpenLoopOptions()
        .target("127.0.0.1", port, "/select")
        .bodies(OpenLoopBodies.select(4, 64, 1))
        .eventLoops(2)
        .connections(8)
        .timeouts(5_000, 10_000);
  }

  @Test
  @Timeout(60)
  void sendsEveryRequestOnScheduleAndCountsEveryAnswer() throws Exception {
    int port = serve(req -> req.response().end("{}"));

    OpenLoopGenerator.Result r = OpenLoopGenerator.run(options(port).open(500).window(0.2, 2));

    OpenLoopStats s = r.stats();
    assertTrue(
        Math.abs(s.dispatched - 1_000) <= 10, "about 500/s x 2 s in the window: " + s.dispatched);
    assertEquals(s.dispatched, s.completed, "every request of the window completed");
    assertEquals(s.dispatched, s.latency.getTotalCount(), "every answer recorded: " + s.errors);
    assertEquals(0, r.errors());
    assertEquals(2, r.threads(), "each sender on its own event loop");
    long all = received.get();
    assertTrue(Math.abs(all - 1_100) <= 11, "warm-up and window together, 2.2 s at 500/s: " + all);
    // request k is due k / rate after the start: the k-th arrival cannot come before that
    long[] t = arrivals.stream().mapToLong(Long::longValue).sorted().toArray();
    for (int k = 0; k < t.length; k++) {
      long due = r.t0Nanos() + (long) (k * 1e9 / 500);
      int kk = k;
      assertTrue(
          t[k] >= due,
          () -> "arrival " + kk + " came " + (due - t[kk]) / 1e6 + " ms ahead of schedule");
    }
    assertTrue(r.achievedRate() > 0);
  }

  @Test
  @Timeout(60)
  void stalledServerShowsInTheCorrectedLatencyNotInTheSendTimeOne() throws Exception {
    long[] stallUntil = {0};
    int port =
        serve(
            req -> {
              long now = System.nanoTime();
              if (received.get() == 300) {
                stallUntil[0] = now + 300_000_000L;
              }
              long wait = (stallUntil[0] - now) / 1_000_000;
              if (wait > 0) {
                vertx.setTimer(wait, id -> req.response().end("{}"));
              } else {
                req.response().end("{}");
              }
            });

    OpenLoopGenerator.Result r =
        OpenLoopGenerator.run(options(port).open(500).window(0, 2).eventLoops(1).connections(4));

    OpenLoopStats s = r.stats();
    assertEquals(0, r.errors(), () -> "errors: " + s.errors);
    long corrected = s.latency.getCountBetweenValues(100_000, Long.MAX_VALUE / 4);
    long uncorrected = s.sendLatency.getCountBetweenValues(100_000, Long.MAX_VALUE / 4);
    // requests due in the first 200 ms of the 300 ms stall waited over 100 ms: about 100 at 500/s
    assertTrue(corrected >= 50, "corrected latencies above 100 ms: " + corrected);
    // only the few requests on the wire during the stall saw it from their send time
    assertTrue(
        uncorrected * 4 <= corrected,
        "send-time latencies above 100 ms: " + uncorrected + ", corrected: " + corrected);
    assertTrue(r.ms(99) >= 100, "corrected p99 reflects the stall: " + r.ms(99));
    assertTrue(s.maxQueued > 4, "requests queued behind the busy connections: " + s.maxQueued);
  }

  @Test
  @Timeout(60)
  void serverErrorsAreCountedNotThrown() throws Exception {
    int port = serve(req -> req.response().setStatusCode(500).end("{\"error\":\"boom\"}"));

    OpenLoopGenerator.Result r = OpenLoopGenerator.run(options(port).open(200).window(0, 1));

    OpenLoopStats s = r.stats();
    assertTrue(s.dispatched >= 195, "requests of the window: " + s.dispatched);
    assertEquals(s.dispatched, s.errors.getOrDefault("HTTP 500", 0L), () -> "errors: " + s.errors);
    assertEquals(0, s.latency.getTotalCount());
    assertEquals(s.dispatched, r.errors());
  }

  @Test
  @Timeout(60)
  void refusedConnectionsAreCountedNotThrown() throws Exception {
    int port = io.kvselect.testing.Ports.free();

    OpenLoopGenerator.Result r = OpenLoopGenerator.run(options(port).open(200).window(0, 1));

    OpenLoopStats s = r.stats();
    assertTrue(s.dispatched >= 195, "requests of the window: " + s.dispatched);
    assertEquals(s.dispatched, s.completed, "every refused request completed as a failure");
    assertEquals(s.dispatched, s.errorCount(), () -> "errors: " + s.errors);
    assertEquals(0, s.latency.getTotalCount());
  }

  @Test
  @Timeout(60)
  void closedLoopMeasuresARate() throws Exception {
    int port = serve(req -> req.response().end("{}"));

    OpenLoopGenerator.Result r = OpenLoopGenerator.run(options(port).closed().window(0.3, 1));

    OpenLoopStats s = r.stats();
    assertTrue(s.completedInWindow > 0, "answers in the window");
    assertEquals(
        s.completedInWindow, r.achievedRate(), 1e-9, "a 1 s window: the rate is the count");
    assertEquals(s.dispatched, s.latency.getTotalCount(), "every request of the window answered");
    assertEquals(0, r.errors(), () -> "errors: " + s.errors);
    assertTrue(received.get() >= s.dispatched);
  }

  @Test
  @Timeout(60)
  void everyReservationIsDeletedWhenItsAnswerArrives() throws Exception {
    AtomicLong ids = new AtomicLong();
    int port =
        serve(
            req ->
                req.response()
                    .end(
                        "{\"worker_id\":3,\"selection_id\":\"sel-"
                            + ids.incrementAndGet()
                            + "\",\"overlap_blocks\":0}"));

    OpenLoopGenerator.Result r =
        OpenLoopGenerator.run(options(port).open(300).window(0, 1).deleteReservations(true));

    OpenLoopStats s = r.stats();
    assertEquals(0, r.errors(), () -> "errors: " + s.errors + ", delete errors " + s.deleteErrors);
    assertEquals(received.get(), deletes.get(), "one DELETE per reservation");
    assertEquals(received.get(), s.deletes);
  }

  @Test
  void selectionIdIsReadFromTheAnswer() {
    assertEquals(
        "abc-1",
        OpenLoopSender.selectionId(
            OpenLoopBodies.direct("{\"worker_id\":1,\"selection_id\":\"abc-1\"}".getBytes())));
    assertNull(OpenLoopSender.selectionId(OpenLoopBodies.direct("{\"worker_id\":1}".getBytes())));
  }

  @Test
  void badOptionsAreRefused() {
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> OpenLoopGenerator.run(options(1).open(0)));
    org.junit.jupiter.api.Assertions.assertThrows(
        IllegalArgumentException.class, () -> OpenLoopGenerator.run(options(1).eventLoops(9)));
  }
}
