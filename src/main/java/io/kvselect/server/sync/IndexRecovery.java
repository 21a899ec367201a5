package io.kvselect.server.sync;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.index.StorageTier;
import io.kvselect.core.index.StoredBlock;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.SelectionService;
import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Start-up index recovery from {@code --indexer-peers} (Dynamo's HTTP recovery plane): tries each
 * peer's {@code GET /dump} in order (10 s timeout) and replays the first successful one into the
 * local event-driven index; an empty dump counts as success. Blocking: run it off the event loop.
 * The dump is streamed (one partition's events in memory at a time).
 */
public final class IndexRecovery {

  private static final Logger LOG = LoggerFactory.getLogger(IndexRecovery.class);
  private static final JsonFactory JSON = new JsonFactory();

  /** Outcome, reported by {@code /ready}. */
  public record Outcome(String state, String peer, long blocks, String error) {
    public static Outcome disabled() {
      return new Outcome("disabled", null, 0, null);
    }
  }

  private IndexRecovery() {}

  public static Outcome run(SelectionService service, List<String> peers) {
    if (peers.isEmpty()) {
      return Outcome.disabled();
    }
    HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
    String lastError = null;
    for (String peer : peers) {
      String url = peer.endsWith("/") ? peer + "dump" : peer + "/dump";
      try {
        HttpResponse<InputStream> r =
            client.send(
                HttpRequest.newBuilder(URI.create(url))
                    .timeout(Duration.ofSeconds(10))
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream in = r.body()) {
          if (r.statusCode() != 200) {
            lastError = url + " answered " + r.statusCode();
            continue;
          }
          long n = replay(service, in);
          LOG.info("recovered {} index entries from {}", n, url);
          return new Outcome("done", peer, n, null);
        }
      } catch (IOException | RuntimeException e) {
        lastError = url + ": " + e.getMessage();
        LOG.warn("index recovery from {} failed: {}", url, e.toString());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return new Outcome("failed", null, 0, "interrupted");
      }
    }
    return new Outcome("failed", null, 0, lastError);
  }

  /** Replays a {@code /dump} body; returns the number of entries stored. */
  static long replay(SelectionService service, InputStream body) throws IOException {
    long n = 0;
    try (JsonParser p = JSON.createParser(body)) {
      expect(p.nextToken(), JsonToken.START_OBJECT);
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        PartitionKey key = PartitionKey.parse(p.currentName());
        expect(p.nextToken(), JsonToken.START_OBJECT);
        Integer blockSize = null;
        List<StoredBlock> blocks = new ArrayList<>();
        while (p.nextToken() == JsonToken.FIELD_NAME) {
          String f = p.currentName();
          JsonToken t = p.nextToken();
          if (f.equals("block_size") && t == JsonToken.VALUE_NUMBER_INT) {
            blockSize = p.getIntValue();
          } else if (f.equals("events") && t == JsonToken.START_ARRAY) {
            while (p.nextToken() == JsonToken.START_OBJECT) {
              event(p, blocks);
            }
          } else {
            p.skipChildren();
          }
        }
        if (blockSize != null) {
          long stored = service.restoreIndex(key, blockSize, blocks);
          if (stored < 0) {
            LOG.warn(
                "skipped recovered partition {}: block size {} conflicts, or the index is approximate",
                key,
                blockSize);
          } else {
            n += stored;
          }
        }
      }
    }
    return n;
  }

  /** One RouterEvent: only {@code stored} data carries entries (our dumps emit nothing else). */
  private static void event(JsonParser p, List<StoredBlock> out) throws IOException {
    long worker = 0;
    int dpRank = 0;
    StorageTier tier = StorageTier.DEVICE;
    List<long[]> stored = new ArrayList<>();
    long[] parent = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String f = p.currentName();
      JsonToken t = p.nextToken();
      switch (f) {
        case "worker_id" -> worker = u64(p);
        case "storage_tier" -> {
          StorageTier st = StorageTier.fromWireName(p.getText());
          tier = st == null ? StorageTier.DEVICE : st;
        }
        case "event" -> {
          while (p.nextToken() == JsonToken.FIELD_NAME) {
            String ef = p.currentName();
            JsonToken et = p.nextToken();
            if (ef.equals("dp_rank") && et == JsonToken.VALUE_NUMBER_INT) {
              dpRank = p.getIntValue();
            } else if (ef.equals("data") && et == JsonToken.START_OBJECT) {
              parent = data(p, stored);
            } else {
              p.skipChildren();
            }
          }
        }
        default -> p.skipChildren();
      }
      if (t == null) {
        break;
      }
    }
    WorkerRank rank = new WorkerRank(worker, dpRank);
    boolean hasParent = parent != null;
    long prev = hasParent ? parent[0] : 0;
    for (long[] b : stored) {
      out.add(new StoredBlock(rank, tier, hasParent, prev, b[0], b[1]));
      hasParent = true;
      prev = b[0];
    }
  }

  /** Reads {@code {"stored": {...}}}; returns the parent hash (null at the root). */
  private static long[] data(JsonParser p, List<long[]> stored) throws IOException {
    long[] parent = null;
    while (p.nextToken() == JsonToken.FIELD_NAME) {
      String kind = p.currentName();
      JsonToken t = p.nextToken();
      if (!kind.equals("stored") || t != JsonToken.START_OBJECT) {
        p.skipChildren();
        continue;
      }
      while (p.nextToken() == JsonToken.FIELD_NAME) {
        String f = p.currentName();
        JsonToken ft = p.nextToken();
        if (f.equals("parent_hash") && ft == JsonToken.VALUE_NUMBER_INT) {
          parent = new long[] {u64(p)};
        } else if (f.equals("blocks") && ft == JsonToken.START_ARRAY) {
          while (p.nextToken() == JsonToken.START_OBJECT) {
            long ext = 0;
            long local = 0;
            while (p.nextToken() == JsonToken.FIELD_NAME) {
              String bf = p.currentName();
              p.nextToken();
              if (bf.equals("block_hash")) {
                ext = u64(p);
              } else if (bf.equals("tokens_hash")) {
                local = u64(p);
              } else {
                p.skipChildren();
              }
            }
            stored.add(new long[] {ext, local});
          }
        } else {
          p.skipChildren();
        }
      }
    }
    return parent;
  }

  private static long u64(JsonParser p) throws IOException {
    if (p.getNumberType() == JsonParser.NumberType.BIG_INTEGER) {
      BigInteger b = p.getBigIntegerValue();
      return b.longValue();
    }
    return p.getLongValue();
  }

  private static void expect(JsonToken got, JsonToken want) throws IOException {
    if (got != want) {
      throw new IOException("unexpected " + got + " in dump, expected " + want);
    }
  }
}
