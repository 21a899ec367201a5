package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Each sender's messages are applied in sequence order: an early one waits for those before it,
 * a duplicate is dropped, a gap is skipped after the timeout (or when too many wait) with a digest
 * asked for, a new sender is asked for a digest unless it opens with one, and a sender missing
 * from the membership for the grace is forgotten. Runs on one Vert.x context, as in PeerSync.
 */
class SenderStreamsTest {

  private final Vertx vertx = Vertx.vertx();
  private final Context context = vertx.getOrCreateContext();
  private final PeerSyncStats stats = new PeerSyncStats();
  private final List<String> applied = new CopyOnWriteArrayList<>();
  private final List<String> asked = new CopyOnWriteArrayList<>();

  @AfterEach
  void close() {
    vertx.close();
  }

  private SenderStreams streams(Duration gapTimeout, int holdLimit) {
    return new SenderStreams(
        vertx,
        gapTimeout,
        holdLimit,
        stats,
        e -> applied.add(e.from() + ":" + e.seq()),
        asked::add);
  }

  private static SyncCodec.Envelope m(String from, long seq) {
    return new SyncCodec.Envelope("booked", from, seq, null);
  }

  private <T> T on(Supplier<T> task) throws Exception {
    CompletableFuture<T> f = new CompletableFuture<>();
    context.runOnContext(v -> f.complete(task.get()));
    return f.get(10, TimeUnit.SECONDS);
  }

  @Test
  void messagesApplyInOrderAndDuplicatesAreDropped() throws Exception {
    SenderStreams s = streams(Duration.ofSeconds(30), 100);
    on(
        () -> {
          s.receive(m("a", 5));
          s.receive(m("a", 7)); // waits for 6
          s.receive(m("a", 6));
          s.receive(m("a", 6)); // duplicate
          s.receive(m("a", 4)); // older than the first: dropped
          return null;
        });
    assertEquals(List.of("a:5", "a:6", "a:7"), applied);
    assertEquals(2, stats.duplicates.get());
    assertEquals(List.of("a"), asked, "a new sender that opens without a digest is asked for one");
    on(
        () -> {
          s.receive(new SyncCodec.Envelope("digest", "b", 1, null));
          return null;
        });
    assertEquals(List.of("a"), asked, "a sender that opens with a digest is not asked");
  }

  @Test
  void aGapIsSkippedAfterTheTimeoutAndADigestAskedFor() throws Exception {
    SenderStreams s = streams(Duration.ofMillis(100), 100);
    on(
        () -> {
          s.receive(m("a", 1));
          s.receive(m("a", 3));
          s.receive(m("a", 4));
          return null;
        });
    assertEquals(List.of("a:1"), applied, "3 and 4 wait for 2");
    await().atMost(Duration.ofSeconds(10)).until(() -> applied.size() == 3);
    assertEquals(List.of("a:1", "a:3", "a:4"), applied);
    assertEquals(1, stats.gaps.get());
    assertEquals(List.of("a", "a"), asked, "asked once as a new sender, once after the gap");
  }

  @Test
  void tooManyHeldSkipTheGapAtOnce() throws Exception {
    SenderStreams s = streams(Duration.ofSeconds(30), 2);
    on(
        () -> {
          s.receive(m("a", 1));
          s.receive(m("a", 3));
          s.receive(m("a", 4));
          s.receive(m("a", 5)); // a third held one: past the limit
          return null;
        });
    assertEquals(List.of("a:1", "a:3", "a:4", "a:5"), applied);
    assertEquals(1, stats.gaps.get());
  }

  @Test
  void aSenderMissingForTheGraceIsForgottenAndHeardAnewLater() throws Exception {
    SenderStreams s = streams(Duration.ofSeconds(30), 100);
    on(
        () -> {
          s.receive(m("a", 1));
          s.receive(m("b", 1));
          return null;
        });
    assertEquals(
        List.of(), on(() -> s.goneFor(Set.of("b"), 1_000, 500)), "a is missing since 1,000 ms");
    assertEquals(List.of(), on(() -> s.goneFor(Set.of("b"), 1_400, 500)), "not yet past the grace");
    assertEquals(List.of("a"), on(() -> s.goneFor(Set.of("b"), 1_500, 500)));
    on(
        () -> {
          s.receive(m("a", 9)); // a new stream of a: starts where it is heard again
          return null;
        });
    assertEquals(List.of("a:1", "b:1", "a:9"), applied);
    assertEquals(List.of("a", "b", "a"), asked);
  }
}
