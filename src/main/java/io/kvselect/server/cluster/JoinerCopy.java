package io.kvselect.server.cluster;

import io.kvselect.server.events.KvEventsCoordinator;
import io.kvselect.server.sync.BusIndexRecovery;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.IntSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A joining node's copy of the worker catalog and the KV index from the first peer that serves
 * them, without losing the KV events published meanwhile: the listeners hold what they receive
 * ({@link KvEventsCoordinator#hold}), the catalog is copied first ({@link CatalogRepair#pullFirst}),
 * which opens them, the copy of the index ({@link BusIndexRecovery#recover}) waits until every
 * listener is connected (at most {@link #CONNECT_WAIT}), then until every listener has received a
 * batch (proof that its subscription reached the publisher; at most {@link #FIRST_BATCH_WAIT}, for
 * an engine that publishes nothing), then {@link #SETTLE} for the peer to apply what it received
 * before, and the held events are applied on top of the copy once it is in. An event the copy
 * already reflects changes nothing when applied again. Without KV events (or without peers) it is the plain copy.
 *
 * <p>Ownership: runs on the {@link PeerSync} context that starts it; the report is written once,
 * when the copy ends, and read from any thread.
 */
final class JoinerCopy {

  private static final Logger LOG = LoggerFactory.getLogger(JoinerCopy.class);

  /** How long a joiner waits for its KV-event listeners to connect before copying a peer's index anyway. */
  static final Duration CONNECT_WAIT = Duration.ofSeconds(3);

  /** After the listeners connected: how long to wait for each to receive its first batch. */
  static final Duration FIRST_BATCH_WAIT = Duration.ofSeconds(1);

  /** Before the snapshot is asked for: for the peer to apply what it received before the joiner's subscriptions. */
  static final Duration SETTLE = Duration.ofMillis(200);

  private final Vertx vertx;
  private final Context context;
  private final CatalogRepair catalog;
  private final BusIndexRecovery recovery;

  /**
   * Events held and applied, dropped, listeners unconnected and without a batch when the copy
   * began, copy ms; null before the end.
   */
  private volatile long[] held;

  JoinerCopy(Vertx vertx, Context context, CatalogRepair catalog, BusIndexRecovery recovery) {
    this.vertx = vertx;
    this.context = context;
    this.catalog = catalog;
    this.recovery = recovery;
  }

  /** Copies from the first of {@code peers} that serves; {@code events} is null in approximate mode. */
  Future<BusIndexRecovery.Outcome> run(List<String> peers, KvEventsCoordinator events) {
    if (events == null || peers.isEmpty()) {
      return recovery.recover(peers);
    }
    long started = System.nanoTime();
    int[] unconnected = {-1};
    int[] silent = {-1};
    return Future.fromCompletionStage(events.hold(), context)
        .compose(v -> catalog.pullFirst(peers))
        .compose(v -> waitFor(events::unconnectedRanks, System.nanoTime() + CONNECT_WAIT.toNanos()))
        .compose(
            n -> {
              unconnected[0] = n;
              return waitFor(
                  events::ranksWithoutBatch, System.nanoTime() + FIRST_BATCH_WAIT.toNanos());
            })
        .compose(
            n -> {
              silent[0] = n;
              return vertx.timer(SETTLE.toMillis());
            })
        .compose(v -> recovery.recover(peers))
        .transform(
            ar ->
                Future.fromCompletionStage(events.release(), context)
                    .transform(
                        rel -> {
                          long ms = (System.nanoTime() - started) / 1_000_000;
                          if (rel.succeeded()) {
                            held =
                                new long[] {
                                  rel.result().applied(),
                                  rel.result().dropped(),
                                  unconnected[0],
                                  silent[0],
                                  ms
                                };
                            LOG.info(
                                "KV events held during the copy: {} applied on top of it, {} dropped; {} listener(s) not "
                                    + "connected and {} without a batch when the copy began; {} ms",
                                rel.result().applied(),
                                rel.result().dropped(),
                                unconnected[0],
                                silent[0],
                                ms);
                          }
                          return ar.succeeded()
                              ? Future.succeededFuture(ar.result())
                              : Future.<BusIndexRecovery.Outcome>failedFuture(ar.cause());
                        }));
  }

  /** Completes with {@code count}'s value: as soon as it is 0, or at {@code deadline}. */
  private Future<Integer> waitFor(IntSupplier count, long deadline) {
    int n = count.getAsInt();
    if (n == 0 || System.nanoTime() >= deadline) {
      return Future.succeededFuture(n);
    }
    return vertx.timer(20).compose(v -> waitFor(count, deadline));
  }

  /** Adds the held-events figures to {@code /cluster}'s {@code sync.recovery}, once the copy has ended. */
  void report(Map<String, Object> recoveryJson) {
    long[] h = held;
    if (h != null) {
      recoveryJson.put("held_events_applied", h[0]);
      recoveryJson.put("held_events_dropped", h[1]);
      recoveryJson.put("listeners_unconnected_at_copy", h[2]);
      recoveryJson.put("listeners_without_batch_at_copy", h[3]);
      recoveryJson.put("copy_ms", h[4]);
    }
  }
}
