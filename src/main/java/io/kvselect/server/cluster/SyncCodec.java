package io.kvselect.server.cluster;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.ArrayList;
import java.util.List;

/**
 * The versioned JSON wire form of node-to-node sync messages (Jackson). Every document carries
 * {@code "v"}; this version writes and reads {@link #VERSION} only, and a reader refuses any other
 * version with {@link UnknownVersion} (the receiver counts and drops it) so nodes of different
 * versions never misread each other. Unknown fields are ignored, so a later version 1 writer may
 * add fields.
 *
 * <p>Stream envelope: {@code {"v":1,"kind":K,"from":NODE,"seq":N,"body":{...}}} with kinds
 * {@code booked}, {@code prefill_completed}, {@code freed}, {@code digest}, {@code upserted},
 * {@code removed}. Booked body: {@code partition {model, group}, id, worker, dp_rank, hashes,
 * isl, block_size, expected_output_tokens (null when absent), track_prefill, prefill_tokens};
 * worker ids are written as signed 64-bit integers (their unsigned value's bits).
 *
 * <p>Thread-safe: stateless apart from a thread-safe {@link ObjectMapper}.
 */
public final class SyncCodec {

  public static final int VERSION = 1;

  static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  /** A document of a version this node does not speak. */
  public static final class UnknownVersion extends IOException {
    UnknownVersion(JsonNode v) {
      super("unknown sync message version " + v);
    }
  }

  /** One message of a node's stream. */
  public record Envelope(String kind, String from, long seq, JsonNode body) {}

  private SyncCodec() {}

  // ---- documents ----

  /** Parses a message body (JSON bytes, a JSON string or a JsonObject) and checks its version. */
  public static ObjectNode document(Object body) throws IOException {
    JsonNode n;
    if (body instanceof Buffer b) {
      n = JSON.readTree(b.getBytes());
    } else if (body instanceof String s) {
      n = JSON.readTree(s);
    } else if (body instanceof JsonObject j) {
      n = JSON.readTree(j.encode());
    } else {
      throw new IOException(
          "unsupported message body " + (body == null ? "null" : body.getClass().getSimpleName()));
    }
    if (!(n instanceof ObjectNode o)) {
      throw new IOException("a sync message must be a JSON object");
    }
    JsonNode v = o.get("v");
    if (v == null || !v.isIntegralNumber()) {
      throw new IOException("missing integer field `v`");
    }
    if (v.asInt() != VERSION) {
      throw new UnknownVersion(v);
    }
    return o;
  }

  /** A new document of this version with {@code kind}. */
  public static ObjectNode doc(String kind) {
    ObjectNode o = JSON.createObjectNode();
    o.put("v", VERSION);
    o.put("kind", kind);
    return o;
  }

  public static Buffer buffer(JsonNode doc) {
    try {
      return Buffer.buffer(JSON.writeValueAsBytes(doc));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  // ---- stream envelopes ----

  public static Buffer envelope(String kind, String from, long seq, JsonNode body) {
    ObjectNode o = doc(kind);
    o.put("from", from);
    o.put("seq", seq);
    o.set("body", body);
    return buffer(o);
  }

  public static Envelope envelope(Object message) throws IOException {
    ObjectNode o = document(message);
    String kind = text(o, "kind");
    String from = text(o, "from");
    JsonNode seq = o.get("seq");
    JsonNode body = o.get("body");
    if (seq == null || !seq.isIntegralNumber() || body == null || !body.isObject()) {
      throw new IOException("a stream message needs integer `seq` and object `body`");
    }
    return new Envelope(kind, from, seq.asLong(), body);
  }

  // ---- load ----

  public static String kind(LoadEvent e) {
    if (e instanceof LoadEvent.Booked) {
      return "booked";
    }
    return e instanceof LoadEvent.PrefillCompleted ? "prefill_completed" : "freed";
  }

  public static ObjectNode load(LoadEvent e) {
    if (e instanceof LoadEvent.Booked b) {
      return booked(b);
    }
    ObjectNode o = JSON.createObjectNode();
    o.set("partition", partition(e.partition()));
    o.put("id", e.requestId());
    return o;
  }

  private static ObjectNode booked(LoadEvent.Booked b) {
    ObjectNode o = JSON.createObjectNode();
    o.set("partition", partition(b.partition()));
    o.put("id", b.requestId());
    o.put("worker", b.rank().workerId());
    o.put("dp_rank", b.rank().dpRank());
    ArrayNode h = o.putArray("hashes");
    if (b.trackingHashes() != null) {
      for (long x : b.trackingHashes()) {
        h.add(x);
      }
    }
    o.put("isl", b.isl());
    o.put("block_size", b.blockSize());
    if (b.expectedOutputTokens() == null) {
      o.putNull("expected_output_tokens");
    } else {
      o.put("expected_output_tokens", b.expectedOutputTokens());
    }
    o.put("track_prefill", b.trackPrefill());
    o.put("prefill_tokens", b.prefillTokens());
    return o;
  }

  /**
   * {@code envelope(kind(e), from, seq, load(e))} written straight to bytes with a streaming
   * generator: the same JSON, field for field, without building the tree (a booking carries up to
   * hundreds of tracking hashes, and every booking and free of a clustered node is published).
   */
  public static Buffer loadEnvelope(LoadEvent e, String from, long seq) {
    try {
      com.fasterxml.jackson.core.util.ByteArrayBuilder out =
          new com.fasterxml.jackson.core.util.ByteArrayBuilder(
              e instanceof LoadEvent.Booked b && b.trackingHashes() != null
                  ? 256 + 21 * b.trackingHashes().length
                  : 256);
      try (com.fasterxml.jackson.core.JsonGenerator g = JSON.getFactory().createGenerator(out)) {
        g.writeStartObject();
        g.writeNumberField("v", VERSION);
        g.writeStringField("kind", kind(e));
        g.writeStringField("from", from);
        g.writeNumberField("seq", seq);
        g.writeObjectFieldStart("body");
        g.writeObjectFieldStart("partition");
        g.writeStringField("model", e.partition().modelName());
        g.writeStringField("group", e.partition().routingGroup());
        g.writeEndObject();
        g.writeStringField("id", e.requestId());
        if (e instanceof LoadEvent.Booked b) {
          g.writeNumberField("worker", b.rank().workerId());
          g.writeNumberField("dp_rank", b.rank().dpRank());
          g.writeArrayFieldStart("hashes");
          if (b.trackingHashes() != null) {
            for (long x : b.trackingHashes()) {
              g.writeNumber(x);
            }
          }
          g.writeEndArray();
          g.writeNumberField("isl", b.isl());
          g.writeNumberField("block_size", b.blockSize());
          if (b.expectedOutputTokens() == null) {
            g.writeNullField("expected_output_tokens");
          } else {
            g.writeNumberField("expected_output_tokens", b.expectedOutputTokens());
          }
          g.writeBooleanField("track_prefill", b.trackPrefill());
          g.writeNumberField("prefill_tokens", b.prefillTokens());
        }
        g.writeEndObject();
        g.writeEndObject();
      }
      return Buffer.buffer(out.toByteArray());
    } catch (IOException x) {
      throw new IllegalStateException(x);
    }
  }

  /** Decodes a load step of {@code kind}; null when the kind is not a load step. */
  public static LoadEvent load(String kind, JsonNode body) throws IOException {
    switch (kind) {
      case "booked":
        return booked(body);
      case "prefill_completed":
        return new LoadEvent.PrefillCompleted(partition(body.get("partition")), text(body, "id"));
      case "freed":
        return new LoadEvent.Freed(partition(body.get("partition")), text(body, "id"));
      default:
        return null;
    }
  }

  private static LoadEvent.Booked booked(JsonNode b) throws IOException {
    JsonNode hashes = b.get("hashes");
    if (hashes == null || !hashes.isArray()) {
      throw new IOException("missing array field `hashes`");
    }
    long[] h = new long[hashes.size()];
    for (int i = 0; i < h.length; i++) {
      h[i] = integral(hashes.get(i), "hashes[" + i + "]");
    }
    JsonNode out = b.get("expected_output_tokens");
    Integer expected =
        out == null || out.isNull() ? null : (int) integral(out, "expected_output_tokens");
    JsonNode track = b.get("track_prefill");
    if (track == null || !track.isBoolean()) {
      throw new IOException("missing boolean field `track_prefill`");
    }
    return new LoadEvent.Booked(
        partition(b.get("partition")),
        text(b, "id"),
        new WorkerRank(
            integral(b.get("worker"), "worker"), (int) integral(b.get("dp_rank"), "dp_rank")),
        h,
        integral(b.get("isl"), "isl"),
        (int) integral(b.get("block_size"), "block_size"),
        expected,
        track.asBoolean(),
        integral(b.get("prefill_tokens"), "prefill_tokens"));
  }

  public static ObjectNode digest(LoadDigest d) {
    ObjectNode o = JSON.createObjectNode();
    ArrayNode a = o.putArray("bookings");
    for (LoadEvent.Booked b : d.bookings()) {
      a.add(booked(b));
    }
    return o;
  }

  public static LoadDigest digest(JsonNode body) throws IOException {
    JsonNode a = body.get("bookings");
    if (a == null || !a.isArray()) {
      throw new IOException("missing array field `bookings`");
    }
    List<LoadEvent.Booked> out = new ArrayList<>(a.size());
    for (JsonNode b : a) {
      out.add(booked(b));
    }
    return new LoadDigest(out);
  }

  // ---- catalog ----

  public static String kind(CatalogSync.CatalogChange c) {
    return c instanceof CatalogSync.CatalogChange.Upserted ? "upserted" : "removed";
  }

  public static ObjectNode catalog(CatalogSync.CatalogChange c) {
    ObjectNode o = JSON.createObjectNode();
    if (c instanceof CatalogSync.CatalogChange.Upserted u) {
      o.set("spec", spec(u.spec()));
    } else {
      o.put("worker_id", ((CatalogSync.CatalogChange.Removed) c).workerId());
    }
    o.putArray("version").add(c.version().stamp()).add(c.version().tie());
    return o;
  }

  /** A change's {@code "version": [stamp, tie]}; absent (an older writer) is {@code absent}. */
  private static CatalogVersion version(JsonNode body, CatalogVersion absent) throws IOException {
    JsonNode v = body.get("version");
    if (v == null || v.isNull()) {
      return absent;
    }
    if (!v.isArray()
        || v.size() != 2
        || !v.get(0).canConvertToLong()
        || !v.get(1).canConvertToLong()
        || !v.get(0).isIntegralNumber()
        || !v.get(1).isIntegralNumber()) {
      throw new IOException("version must be [stamp, tie] integers");
    }
    return new CatalogVersion(v.get(0).asLong(), v.get(1).asLong());
  }

  /** Decodes a catalog change of {@code kind}; null when the kind is not a catalog change. */
  public static CatalogSync.CatalogChange catalog(String kind, JsonNode body) throws IOException {
    switch (kind) {
      case "upserted":
        return new CatalogSync.CatalogChange.Upserted(
            spec(body.get("spec")), version(body, CatalogVersion.ZERO));
      case "removed":
        return new CatalogSync.CatalogChange.Removed(
            integral(body.get("worker_id"), "worker_id"),
            version(body, new CatalogVersion(0, CatalogVersion.REMOVAL_TIE)));
      default:
        return null;
    }
  }

  /** A worker spec as a JSON object of its record components (camelCase names). */
  public static JsonNode spec(WorkerSpec s) {
    return JSON.valueToTree(s);
  }

  public static WorkerSpec spec(JsonNode n) throws IOException {
    if (n == null || !n.isObject()) {
      throw new IOException("missing object field `spec`");
    }
    try {
      return JSON.treeToValue(n, WorkerSpec.class);
    } catch (JsonProcessingException | RuntimeException e) {
      throw new IOException("bad worker spec: " + e.getMessage(), e);
    }
  }

  // ---- primitives ----

  static ObjectNode partition(PartitionKey k) {
    ObjectNode o = JSON.createObjectNode();
    o.put("model", k.modelName());
    o.put("group", k.routingGroup());
    return o;
  }

  static PartitionKey partition(JsonNode n) throws IOException {
    if (n == null || !n.isObject()) {
      throw new IOException("missing object field `partition`");
    }
    return new PartitionKey(text(n, "model"), text(n, "group"));
  }

  static String text(JsonNode o, String field) throws IOException {
    JsonNode n = o.get(field);
    if (n == null || !n.isTextual()) {
      throw new IOException("missing string field `" + field + "`");
    }
    return n.asText();
  }

  static long integral(JsonNode n, String field) throws IOException {
    if (n == null || !n.isIntegralNumber() || !n.canConvertToLong()) {
      throw new IOException("missing integer field `" + field + "`");
    }
    return n.asLong();
  }
}
