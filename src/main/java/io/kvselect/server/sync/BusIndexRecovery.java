package io.kvselect.server.sync;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.PartitionDump;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.cluster.SyncAddresses;
import io.kvselect.server.cluster.SyncCodec;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.Message;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Index and catalog recovery over the clustered event bus: a node joining a cluster (or
 * restarting) copies a peer's worker catalog and event index. The serving side snapshots its
 * catalog and {@code /dump} once, splits the index into chunks of at most {@code chunkBlocks}
 * entries, and hands them out on request; the joining side tries its peers in order, replays every
 * chunk into its index ({@link SelectionService#restoreIndex}, off the event loop), then applies
 * the catalog ({@link SelectionService#applyPeerCatalog}). The KV events published meanwhile are
 * the caller's part: {@code PeerSync} opens the listeners holding before it asks for the snapshot
 * and applies what they held afterwards.
 *
 * <p>Messages (JSON, {@code "v":1}) to {@code kvselect.sync.node.<peer>}: {@code snapshot_open}
 * answers {@code {"id", "workers": [spec...], "chunks": [{"partition", "block_size", "count"}]}};
 * {@code snapshot_chunk {"id", "index"}} answers {@code {"partition", "block_size", "blocks"}} with
 * 7 integers per entry (worker, dp_rank, tier ordinal, has_parent 0/1, parent, external hash,
 * local hash); {@code snapshot_close {"id"}}. A node still recovering answers 503, so a joiner
 * never copies a half-built index.
 *
 * <p>Ownership: the snapshots held for joiners are owned by the context that delivers the node
 * address's messages; each expires 60 s after it was opened.
 */
public final class BusIndexRecovery {

  private static final Logger LOG = LoggerFactory.getLogger(BusIndexRecovery.class);
  private static final long SNAPSHOT_TTL_MS = 60_000;

  /** The outcome of a recovery, for logs and {@code /cluster}. */
  public record Outcome(String state, String peer, long blocks, int workers, String error) {
    public static Outcome none() {
      return new Outcome("no-peer", null, 0, 0, null);
    }
  }

  /** One partition's share of a snapshot. */
  private record Chunk(PartitionKey partition, int blockSize, List<StoredBlock> blocks) {}

  private record Snapshot(List<WorkerSpec> workers, List<Chunk> chunks, long timer) {}

  private final Vertx vertx;
  private final SelectionService service;
  private final int chunkBlocks;
  private final Duration timeout;
  private final BooleanSupplier serving;
  private final Map<String, Snapshot> snapshots = new HashMap<>();

  /**
   * @param serving whether this node may serve snapshots (false while it is recovering itself)
   */
  public BusIndexRecovery(
      Vertx vertx,
      SelectionService service,
      int chunkBlocks,
      Duration timeout,
      BooleanSupplier serving) {
    this.vertx = vertx;
    this.service = service;
    this.chunkBlocks = chunkBlocks;
    this.timeout = timeout;
    this.serving = serving;
  }

  // ---- serving side ----

  /** Handles a recovery request addressed to this node; false if {@code kind} is not one. */
  public boolean handle(String kind, ObjectNode doc, Message<Object> m) {
    switch (kind) {
      case "snapshot_open" -> open(m);
      case "snapshot_chunk" -> chunk(doc, m);
      case "snapshot_close" -> {
        Snapshot s = snapshots.remove(doc.path("id").asText());
        if (s != null) {
          vertx.cancelTimer(s.timer());
        }
      }
      default -> {
        return false;
      }
    }
    return true;
  }

  private void open(Message<Object> m) {
    if (!serving.getAsBoolean()) {
      m.fail(503, "this node is recovering");
      return;
    }
    vertx
        .executeBlocking(this::snapshot, false)
        .onComplete(
            ar -> {
              if (ar.failed()) {
                m.fail(500, String.valueOf(ar.cause()));
                return;
              }
              String id = UUID.randomUUID().toString();
              long timer = vertx.setTimer(SNAPSHOT_TTL_MS, t -> snapshots.remove(id));
              Snapshot s = new Snapshot(ar.result().workers(), ar.result().chunks(), timer);
              snapshots.put(id, s);
              ObjectNode reply = SyncCodec.doc("snapshot");
              reply.put("id", id);
              ArrayNode ws = reply.putArray("workers");
              for (WorkerSpec w : s.workers()) {
                ws.add(SyncCodec.spec(w));
              }
              ArrayNode cs = reply.putArray("chunks");
              for (Chunk c : s.chunks()) {
                ObjectNode o = cs.addObject();
                o.put("partition", c.partition().toString());
                o.put("block_size", c.blockSize());
                o.put("count", c.blocks().size());
              }
              m.reply(SyncCodec.buffer(reply));
            });
  }

  private Snapshot snapshot() {
    List<WorkerSpec> workers = new ArrayList<>();
    for (WorkerRecord w : service.listWorkers(null, null)) {
      workers.add(w.spec());
    }
    List<Chunk> chunks = new ArrayList<>();
    for (PartitionDump d : service.inspection().dump()) {
      if (d.blockSize() == null) {
        continue;
      }
      List<StoredBlock> all = d.blocks();
      if (all.isEmpty()) {
        chunks.add(new Chunk(d.partition(), d.blockSize(), List.of()));
      }
      for (int i = 0; i < all.size(); i += chunkBlocks) {
        chunks.add(
            new Chunk(
                d.partition(),
                d.blockSize(),
                all.subList(i, Math.min(all.size(), i + chunkBlocks))));
      }
    }
    return new Snapshot(workers, chunks, -1);
  }

  private void chunk(ObjectNode doc, Message<Object> m) {
    Snapshot s = snapshots.get(doc.path("id").asText());
    int i = doc.path("index").asInt(-1);
    if (s == null || i < 0 || i >= s.chunks().size()) {
      m.fail(404, "no such snapshot chunk");
      return;
    }
    Chunk c = s.chunks().get(i);
    ObjectNode reply = SyncCodec.doc("snapshot_chunk");
    reply.put("partition", c.partition().toString());
    reply.put("block_size", c.blockSize());
    ArrayNode a = reply.putArray("blocks");
    for (StoredBlock b : c.blocks()) {
      a.add(b.rank().workerId())
          .add(b.rank().dpRank())
          .add(b.tier().ordinal())
          .add(b.hasParent() ? 1 : 0)
          .add(b.parentExternalHash())
          .add(b.externalHash())
          .add(b.localHash());
    }
    m.reply(SyncCodec.buffer(reply));
  }

  // ---- joining side ----

  /**
   * Recovers from the first of {@code peers} that serves a snapshot. Completes with the outcome
   * (never fails): {@code done}, {@code no-peer} when the list is empty, or {@code failed} with the
   * last error when no peer could serve (every peer still recovering counts as "nothing to copy").
   */
  public Future<Outcome> recover(List<String> peers) {
    if (peers.isEmpty()) {
      return Future.succeededFuture(Outcome.none());
    }
    return tryPeer(peers, 0, null);
  }

  private Future<Outcome> tryPeer(List<String> peers, int i, String lastError) {
    if (i >= peers.size()) {
      return Future.succeededFuture(new Outcome("failed", null, 0, 0, lastError));
    }
    String peer = peers.get(i);
    return from(peer)
        .recover(
            err -> {
              LOG.info("index recovery from {} did not succeed: {}", peer, err.getMessage());
              return tryPeer(peers, i + 1, peer + ": " + err.getMessage());
            });
  }

  private DeliveryOptions options() {
    return new DeliveryOptions().setSendTimeout(timeout.toMillis());
  }

  private Future<Outcome> from(String peer) {
    String address = SyncAddresses.node(peer);
    return vertx
        .eventBus()
        .request(address, SyncCodec.buffer(SyncCodec.doc("snapshot_open")), options())
        .compose(
            reply -> {
              ObjectNode manifest;
              List<WorkerSpec> workers = new ArrayList<>();
              try {
                manifest = SyncCodec.document(reply.body());
                for (JsonNode w : manifest.path("workers")) {
                  workers.add(SyncCodec.spec(w));
                }
              } catch (IOException e) {
                return Future.failedFuture(e);
              }
              String id = manifest.path("id").asText();
              int chunks = manifest.path("chunks").size();
              Promise<Long> blocks = Promise.promise();
              fetch(address, id, 0, chunks, 0L, blocks);
              return blocks
                  .future()
                  .compose(
                      n -> {
                        ObjectNode close = SyncCodec.doc("snapshot_close");
                        close.put("id", id);
                        vertx.eventBus().send(address, SyncCodec.buffer(close));
                        return applyCatalog(workers, 0)
                            .map(
                                w -> {
                                  LOG.info(
                                      "recovered {} index entries and {} workers from peer {}",
                                      n,
                                      w,
                                      peer);
                                  return new Outcome("done", peer, n, w, null);
                                });
                      });
            });
  }

  private void fetch(
      String address, String id, int i, int chunks, long stored, Promise<Long> done) {
    if (i >= chunks) {
      done.complete(stored);
      return;
    }
    ObjectNode req = SyncCodec.doc("snapshot_chunk");
    req.put("id", id);
    req.put("index", i);
    vertx
        .eventBus()
        .request(address, SyncCodec.buffer(req), options())
        .compose(reply -> vertx.executeBlocking(() -> restore(reply.body())))
        .onSuccess(n -> fetch(address, id, i + 1, chunks, stored + n, done))
        .onFailure(done::fail);
  }

  /** Replays one chunk into the local index; returns the entries stored. Runs off the event loop. */
  private long restore(Object body) throws IOException {
    ObjectNode c = SyncCodec.document(body);
    PartitionKey key = PartitionKey.parse(c.path("partition").asText());
    int blockSize = c.path("block_size").asInt();
    JsonNode a = c.path("blocks");
    if (blockSize <= 0 || !a.isArray() || a.size() % 7 != 0) {
      throw new IOException("malformed snapshot chunk");
    }
    List<StoredBlock> blocks = new ArrayList<>(a.size() / 7);
    StorageTier[] tiers = StorageTier.values();
    for (int j = 0; j < a.size(); j += 7) {
      int tier = a.get(j + 2).asInt();
      blocks.add(
          new StoredBlock(
              new WorkerRank(a.get(j).asLong(), a.get(j + 1).asInt()),
              tier >= 0 && tier < tiers.length ? tiers[tier] : StorageTier.DEVICE,
              a.get(j + 3).asInt() == 1,
              a.get(j + 4).asLong(),
              a.get(j + 5).asLong(),
              a.get(j + 6).asLong()));
    }
    long n = service.restoreIndex(key, blockSize, blocks);
    return Math.max(0, n);
  }

  private Future<Integer> applyCatalog(List<WorkerSpec> workers, int applied) {
    if (workers.isEmpty()) {
      return Future.succeededFuture(applied);
    }
    WorkerSpec w = workers.get(0);
    List<WorkerSpec> rest = workers.subList(1, workers.size());
    return Future.fromCompletionStage(
            service.applyPeerCatalog(new CatalogSync.CatalogChange.Upserted(w)))
        .map(changed -> applied + 1)
        .recover(
            err -> {
              LOG.warn(
                  "recovered worker {} was refused: {}",
                  Long.toUnsignedString(w.workerId()),
                  err.toString());
              return Future.succeededFuture(applied);
            })
        .compose(n -> applyCatalog(rest, n));
  }
}
