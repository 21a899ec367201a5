package io.kvselect.server.events;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.events.AllBlocksCleared;
import io.kvselect.core.events.BlockRemoved;
import io.kvselect.core.events.BlockStored;
import io.kvselect.core.events.KvEvent;
import io.kvselect.core.events.KvEventBatch;
import io.kvselect.core.hash.BlockHasher;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.tools.mock.KvEventEncoder;
import io.kvselect.tools.mock.KvEventPublisher;
import io.kvselect.tools.mock.ReplayLayout;
import io.kvselect.tools.mock.WireFormat;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A {@code --threads 1} node (one KV-event thread, one index shard) with four engines publishing
 * stores, removals and clears while a client keeps {@value #WINDOW} {@code /select}s in flight
 * with prompts the engines keep storing and evicting: not one selection may fail with a 5xx.
 * Bounded by count: {@value #SELECTS} selections; each engine stays at most {@value #BACKLOG}
 * batches ahead of the node and stops when the client is done or after {@value #MAX_BATCHES}
 * batches. With a bare (unlocked) index about one selection in 2,000 failed with a 500.
 */
class SingleThreadNodeChurnTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final int BS = 4;
  private static final int ENGINES = 4;
  private static final int WINDOW = 32;
  private static final int SELECTS = 8_000;
  private static final int MAX_BATCHES = 400_000;
  private static final int BACKLOG = 500;
  private static final int FAMILIES = 8;
  private static final int FAMILY_BLOCKS = 128;

  private final HttpClient http = HttpClient.newHttpClient();
  private final List<KvEventPublisher> engines = new ArrayList<>();
  private KvselectNode node;

  @AfterEach
  void stop() throws Exception {
    for (KvEventPublisher e : engines) {
      e.close();
    }
    if (node != null) {
      node.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
    }
  }

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void selectionsNeverFailWhileEnginesChurnTheOneShard() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {"--host", "127.0.0.1", "--port", "0", "--threads", "1"}, Map.of());
    node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    int[][] families = families();
    for (int e = 0; e < ENGINES; e++) {
      KvEventPublisher pub =
          new KvEventPublisher(
              "churn-engine-" + e, "127.0.0.1", new int[1], null, "", ReplayLayout.TOPIC);
      engines.add(pub);
      String endpoint = pub.ready().get(10, TimeUnit.SECONDS).publishers().get(0);
      assertEquals(
          201,
          send(
                  "POST",
                  "/workers",
                  Map.of(
                      "worker_id",
                      e + 1,
                      "endpoint",
                      "http://127.0.0.1:1",
                      "block_size",
                      BS,
                      "kv_events_endpoint",
                      endpoint))
              .statusCode());
    }
    for (int e = 0; e < ENGINES; e++) {
      awaitListening(e);
    }

    AtomicBoolean clientDone = new AtomicBoolean();
    Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
    List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
    List<Thread> churners = new ArrayList<>();
    for (int e = 0; e < ENGINES; e++) {
      int engine = e;
      churners.add(new Thread(() -> churn(engine, families, clientDone, failures), "churn-" + e));
    }
    Semaphore window = new Semaphore(WINDOW);
    Thread client =
        new Thread(
            () -> {
              Random rnd = new Random(100);
              try {
                for (int i = 0; i < SELECTS; i++) {
                  int[] prompt = families[rnd.nextInt(FAMILIES)];
                  int blocks = 1 + rnd.nextInt(FAMILY_BLOCKS);
                  window.acquire();
                  http.sendAsync(
                          request(
                              "POST",
                              "/select",
                              Map.of("token_ids", Arrays.copyOf(prompt, blocks * BS))),
                          HttpResponse.BodyHandlers.discarding())
                      .whenComplete(
                          (r, ex) -> {
                            if (ex != null) {
                              failures.add(ex);
                            } else {
                              statuses
                                  .computeIfAbsent(r.statusCode(), k -> new AtomicInteger())
                                  .incrementAndGet();
                            }
                            window.release();
                          });
                }
                window.acquire(WINDOW);
              } catch (Exception ex) {
                failures.add(ex);
              }
            },
            "churn-client");
    churners.forEach(Thread::start);
    client.start();
    client.join(TimeUnit.SECONDS.toMillis(90));
    clientDone.set(true);
    for (Thread t : churners) {
      t.join(TimeUnit.SECONDS.toMillis(10));
    }

    assertTrue(failures.isEmpty(), () -> "client or engine failed: " + failures);
    int total = statuses.values().stream().mapToInt(AtomicInteger::get).sum();
    assertEquals(SELECTS, total, "every selection answered: " + statuses);
    assertEquals(List.of(200), List.copyOf(statuses.keySet()), "statuses: " + statuses);
    long applied = node.events().batches();
    assertTrue(applied > ENGINES, "the engines' batches were applied during the run: " + applied);
  }

  /**
   * Engine {@code e}: stores slices of the prompt families (extending its last stored block or
   * from the root), evicts blocks, and now and then clears everything, until the clients finish.
   */
  private void churn(int e, int[][] families, AtomicBoolean clientDone, List<Throwable> failures) {
    Random rnd = new Random(e);
    try {
      for (int i = 0; i < MAX_BATCHES && !clientDone.get(); i++) {
        int f = rnd.nextInt(FAMILIES);
        long[] chain = chain(families[f]);
        int roll = rnd.nextInt(100);
        KvEvent event;
        if (roll < 50) {
          int from = rnd.nextInt(3) == 0 ? 0 : rnd.nextInt(FAMILY_BLOCKS - 1);
          int to = Math.min(FAMILY_BLOCKS, from + 1 + rnd.nextInt(64));
          event =
              new BlockStored(
                  Arrays.copyOfRange(chain, from, to),
                  from > 0,
                  from > 0 ? chain[from - 1] : 0,
                  Arrays.copyOfRange(families[f], from * BS, to * BS),
                  BS,
                  "GPU",
                  null,
                  null,
                  null,
                  null,
                  null,
                  null);
        } else if (roll < 80) {
          int at = rnd.nextInt(FAMILY_BLOCKS - 4);
          event =
              new BlockRemoved(
                  Arrays.copyOfRange(chain, at, at + 1 + rnd.nextInt(4)), "GPU", null, null);
        } else {
          event = new AllBlocksCleared();
        }
        engines
            .get(e)
            .publish(
                0, KvEventEncoder.encode(new KvEventBatch(1.0, List.of(event), 0), WireFormat.MAP));
        WorkerRank rank = new WorkerRank(e + 1, 0);
        while (engines.get(e).lastSeq(0) - node.events().stats().get(rank).lastSeq() > BACKLOG
            && !clientDone.get()) {
          LockSupport.parkNanos(200_000);
        }
      }
    } catch (RuntimeException ex) {
      failures.add(ex);
    }
  }

  private static int[][] families() {
    Random rnd = new Random(7);
    int[][] f = new int[FAMILIES][FAMILY_BLOCKS * BS];
    for (int[] family : f) {
      for (int i = 0; i < family.length; i++) {
        family[i] = rnd.nextInt(50_000);
      }
    }
    return f;
  }

  private static long[] chain(int[] tokens) {
    return BlockHasher.sequenceHashes(
        BlockHasher.localBlockHashes(
            tokens, tokens.length, BS, BlockHasher.saltSeed(null, null), false, null));
  }

  /** Publishes throw-away removals until worker {@code e + 1}'s listener has received one. */
  private void awaitListening(int e) {
    byte[] probe =
        KvEventEncoder.encode(
            new KvEventBatch(1.0, List.of(new BlockRemoved(new long[] {42}, "GPU", null, null)), 0),
            WireFormat.MAP);
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(25))
        .until(
            () -> {
              engines.get(e).publish(0, probe);
              JsonNode l = listener(e + 1);
              return l != null && l.get("batches").asLong() > 0;
            });
  }

  private JsonNode listener(long worker) throws Exception {
    for (JsonNode w : JSON.readTree(send("GET", "/workers", null).body())) {
      if (w.get("worker_id").asLong() == worker) {
        return w.get("kv_events").get("0");
      }
    }
    return null;
  }

  private HttpResponse<String> send(String method, String path, Object body) throws Exception {
    return http.send(request(method, path, body), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest request(String method, String path, Object body) throws IOException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path));
    if (body != null) {
      b.header("content-type", "application/json");
      b.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    } else {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    }
    return b.build();
  }
}
