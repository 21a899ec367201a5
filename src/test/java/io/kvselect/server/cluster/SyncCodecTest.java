package io.kvselect.server.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kvselect.core.catalog.CatalogSync;
import io.kvselect.core.catalog.CatalogVersion;
import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.load.LoadDigest;
import io.kvselect.core.load.LoadEvent;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The versioned sync wire form: every message kind round-trips; other versions and junk are refused. */
class SyncCodecTest {

  private static final PartitionKey P = new PartitionKey("m", "g");

  private static SyncCodec.Envelope roundTrip(
      String kind, com.fasterxml.jackson.databind.JsonNode body) throws IOException {
    Buffer b = SyncCodec.envelope(kind, "node-1", 42, body);
    SyncCodec.Envelope e = SyncCodec.envelope(b);
    assertEquals(kind, e.kind());
    assertEquals("node-1", e.from());
    assertEquals(42, e.seq());
    return e;
  }

  @Test
  void theStreamedLoadEnvelopeIsByteForByteTheTreeOne() throws IOException {
    List<LoadEvent> events =
        List.of(
            new LoadEvent.Booked(
                P,
                "r1",
                new WorkerRank(-2L, 3),
                new long[] {Long.MIN_VALUE, 5, -1, Long.MAX_VALUE},
                2048,
                16,
                128,
                true,
                2048),
            new LoadEvent.Booked(
                P, "r\"2\u00e9", new WorkerRank(7, 0), new long[0], 0, 4, null, false, 0),
            new LoadEvent.Booked(P, "r3", new WorkerRank(7, 1), null, 3, 4, null, false, 1),
            new LoadEvent.PrefillCompleted(P, "r1"),
            new LoadEvent.Freed(P, "r1"));
    long seq = 41;
    for (LoadEvent e : events) {
      seq++;
      Buffer tree = SyncCodec.envelope(SyncCodec.kind(e), "node-a", seq, SyncCodec.load(e));
      Buffer streamed = SyncCodec.loadEnvelope(e, "node-a", seq);
      assertEquals(tree.toString(), streamed.toString(), "same bytes for " + e);
      SyncCodec.Envelope back = SyncCodec.envelope(streamed);
      assertEquals(seq, back.seq());
      assertEquals(SyncCodec.kind(e), back.kind());
    }
  }

  @Test
  void loadStepsRoundTrip() throws IOException {
    LoadEvent.Booked b =
        new LoadEvent.Booked(
            P,
            "r1",
            new WorkerRank(-2L, 3),
            new long[] {Long.MIN_VALUE, 5, -1},
            12,
            4,
            null,
            true,
            9);
    SyncCodec.Envelope e = roundTrip("booked", SyncCodec.load(b));
    LoadEvent.Booked back = (LoadEvent.Booked) SyncCodec.load(e.kind(), e.body());
    assertEquals(b.partition(), back.partition());
    assertEquals(b.requestId(), back.requestId());
    assertEquals(b.rank(), back.rank(), "unsigned worker ids keep their bits");
    assertArrayEquals(b.trackingHashes(), back.trackingHashes());
    assertEquals(12, back.isl());
    assertEquals(4, back.blockSize());
    assertNull(back.expectedOutputTokens());
    assertEquals(9, back.prefillTokens());

    for (LoadEvent s :
        List.of(new LoadEvent.PrefillCompleted(P, "r1"), new LoadEvent.Freed(P, "r1"))) {
      SyncCodec.Envelope x = roundTrip(SyncCodec.kind(s), SyncCodec.load(s));
      assertEquals(s, SyncCodec.load(x.kind(), x.body()));
    }
    assertNull(SyncCodec.load("digest", e.body()));
  }

  @Test
  void digestsRoundTrip() throws IOException {
    LoadDigest d =
        new LoadDigest(
            List.of(
                new LoadEvent.Booked(
                    P, "a", new WorkerRank(1, 0), new long[] {1}, 4, 4, 7, false, 0),
                new LoadEvent.Booked(
                    P, "b", new WorkerRank(2, 0), new long[0], 0, 4, null, true, 3)));
    SyncCodec.Envelope e = roundTrip("digest", SyncCodec.digest(d));
    LoadDigest back = SyncCodec.digest(e.body());
    assertEquals(2, back.bookings().size());
    assertEquals(7, back.bookings().get(0).expectedOutputTokens());
    assertEquals("b", back.bookings().get(1).requestId());
    assertEquals(3, back.bookings().get(1).prefillTokens());
  }

  @Test
  void catalogChangesRoundTripEveryField() throws IOException {
    WorkerSpec s =
        WorkerSpec.builder(-5L)
            .modelName("m")
            .routingGroup("g")
            .endpoint("http://w")
            .kvEventsEndpoint("tcp://127.0.0.1:1")
            .kvEventsEndpoints(Map.of(2, "tcp://127.0.0.1:2"))
            .replayEndpoint("tcp://127.0.0.1:3")
            .blockSize(16)
            .dataParallelStartRank(2)
            .maxNumBatchedTokens(4096L)
            .totalKvBlocks(100L)
            .stableRoutingId("stable")
            .isEagle(true)
            .taints(Set.of("gpu"))
            .topologyDomains(Map.of("zone", "a"))
            .kvTransferDomain("d")
            .kvTransferEnforcement("hard")
            .kvTransferPreferredWeight(0.5)
            .routerHintWorkerType("prefill")
            .routerHintSourceControlEndpoints(Map.of(2, "tcp://127.0.0.1:4"))
            .kvEventSourceMode("hint")
            .build();
    SyncCodec.Envelope e =
        roundTrip("upserted", SyncCodec.catalog(new CatalogSync.CatalogChange.Upserted(s)));
    assertEquals(new CatalogSync.CatalogChange.Upserted(s), SyncCodec.catalog(e.kind(), e.body()));
    SyncCodec.Envelope r =
        roundTrip("removed", SyncCodec.catalog(new CatalogSync.CatalogChange.Removed(-5L)));
    assertEquals(new CatalogSync.CatalogChange.Removed(-5L), SyncCodec.catalog(r.kind(), r.body()));
    CatalogVersion v = new CatalogVersion(1_790_000_000_123L, CatalogVersion.upsertTie(s));
    SyncCodec.Envelope ev =
        roundTrip("upserted", SyncCodec.catalog(new CatalogSync.CatalogChange.Upserted(s, v)));
    assertEquals(
        new CatalogSync.CatalogChange.Upserted(s, v), SyncCodec.catalog(ev.kind(), ev.body()));
    CatalogVersion rv = new CatalogVersion(-1L, CatalogVersion.REMOVAL_TIE);
    SyncCodec.Envelope er =
        roundTrip("removed", SyncCodec.catalog(new CatalogSync.CatalogChange.Removed(7L, rv)));
    assertEquals(
        new CatalogSync.CatalogChange.Removed(7L, rv), SyncCodec.catalog(er.kind(), er.body()));
  }

  @Test
  void catalogVersionsAbsentAreOldestAndMalformedAreRefused() throws IOException {
    com.fasterxml.jackson.databind.node.ObjectNode removed =
        SyncCodec.catalog(new CatalogSync.CatalogChange.Removed(3L));
    removed.remove("version");
    assertEquals(
        new CatalogVersion(0, CatalogVersion.REMOVAL_TIE),
        SyncCodec.catalog("removed", removed).version(),
        "a removal from a sender that does not stamp");
    for (String bad : List.of("[1]", "[1,2,3]", "\"x\"", "[1.5,2]", "[\"1\",2]", "{}")) {
      removed.set("version", new com.fasterxml.jackson.databind.ObjectMapper().readTree(bad));
      assertThrows(IOException.class, () -> SyncCodec.catalog("removed", removed), bad);
    }
  }

  @Test
  void otherVersionsAndJunkAreRefused() {
    assertThrows(
        SyncCodec.UnknownVersion.class, () -> SyncCodec.envelope(new JsonObject().put("v", 2)));
    assertThrows(SyncCodec.UnknownVersion.class, () -> SyncCodec.document("{\"v\":0}"));
    for (Object junk :
        List.of(
            "not json",
            "[1,2]",
            "{}",
            "{\"v\":\"1\"}",
            17,
            new JsonObject()
                .put("v", 1)
                .put("kind", "booked")
                .put("from", "x")
                .put("seq", "one")
                .put("body", new JsonObject()),
            new JsonObject()
                .put("v", 1)
                .put("kind", "booked")
                .put("seq", 1)
                .put("body", new JsonObject()))) {
      IOException e =
          assertThrows(IOException.class, () -> SyncCodec.envelope(junk), String.valueOf(junk));
      assertFalse(
          e instanceof SyncCodec.UnknownVersion, "junk is malformed, not another version: " + junk);
    }
    JsonObject noHashes =
        new JsonObject()
            .put("partition", new JsonObject().put("model", "m").put("group", "g"))
            .put("id", "x");
    assertThrows(
        IOException.class,
        () -> SyncCodec.load("booked", SyncCodec.JSON.readTree(noHashes.encode())));
  }
}
