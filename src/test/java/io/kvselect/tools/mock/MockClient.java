package io.kvselect.tools.mock;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.zeromq.SocketType;
import org.zeromq.ZContext;
import org.zeromq.ZMQ;

/** Test-side client of a mock engine: HTTP calls, a JeroMQ SUB and a generic msgpack decoder. */
final class MockClient {

  static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private MockClient() {}

  /** An HTTP answer. */
  record Reply(int status, JsonNode body) {}

  /** One published batch as received. */
  record Frames(String topic, long seq, byte[] payload) {
    @SuppressWarnings("unchecked")
    List<Object> envelope() throws Exception {
      return (List<Object>) decode(payload);
    }

    @SuppressWarnings("unchecked")
    List<Object> events() throws Exception {
      return (List<Object>) envelope().get(1);
    }
  }

  static Reply call(String method, String url, Object body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20));
    b.header("content-type", "application/json");
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(
                body instanceof String s ? s : JSON.writeValueAsString(body)));
    HttpResponse<String> r = HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Reply(r.statusCode(), r.body().isEmpty() ? null : JSON.readTree(r.body()));
  }

  static Reply post(EngineInfo e, String path, Object body) throws Exception {
    return call("POST", e.endpoint() + path, body);
  }

  static JsonNode generate(EngineInfo e, Map<String, Object> body) throws Exception {
    Reply r = post(e, "/generate", body);
    if (r.status() != 200) {
      throw new AssertionError("generate answered " + r.status() + ": " + r.body());
    }
    return r.body();
  }

  static JsonNode state(EngineInfo e) throws Exception {
    return call("GET", e.endpoint() + "/state", null).body();
  }

  /** Polls {@code GET /state} until rank {@code rank}'s last seq equals {@code seq} (bounded). */
  static void awaitLastSeq(EngineInfo e, int rank, Long seq) throws Exception {
    java.util.concurrent.atomic.AtomicReference<JsonNode> last =
        new java.util.concurrent.atomic.AtomicReference<>();
    try {
      org.awaitility.Awaitility.await()
          .atMost(java.time.Duration.ofSeconds(5))
          .pollInterval(java.time.Duration.ofMillis(10))
          .until(
              () -> {
                JsonNode l = state(e).get("ranks").get(rank).get("last_seq");
                last.set(l);
                return seq == null ? l.isNull() : l.isNumber() && l.asLong() == seq;
              });
    } catch (org.awaitility.core.ConditionTimeoutException timeout) {
      throw new AssertionError(
          "last_seq of rank " + rank + " stayed " + last.get() + ", expected " + seq, timeout);
    }
  }

  /** A SUB connected to {@code rank}'s PUB of {@code e}, subscribed to everything. */
  static final class Sub implements AutoCloseable {
    private final ZContext ctx = new ZContext();
    private final ZMQ.Socket socket;

    Sub(String endpoint) {
      socket = ctx.createSocket(SocketType.SUB);
      // JeroMQ 0.6.0 sometimes never starts the handshake on a fresh connection; retry after 1 s
      socket.setHandshakeIvl(1_000);
      socket.subscribe(new byte[0]);
      socket.connect(endpoint);
    }

    /**
     * Connects and waits until the subscription is live: probes with {@code POST /clear} (which
     * publishes {@code AllBlocksCleared}) until one arrives, then drains. Leaves the cache empty.
     */
    static Sub ready(EngineInfo e, int rank) throws Exception {
      Sub s = new Sub(e.kvEventsEndpoint(rank));
      for (int i = 0; i < 50; i++) {
        post(e, "/clear", null);
        if (s.recv(100) != null) {
          s.drain(200);
          return s;
        }
      }
      s.close();
      throw new AssertionError("no event reached the SUB within 5 s");
    }

    /** The next batch, or null after {@code timeoutMs}. */
    Frames recv(int timeoutMs) {
      socket.setReceiveTimeOut(timeoutMs);
      byte[] topic = socket.recv();
      if (topic == null) {
        return null;
      }
      byte[] seq = socket.recv();
      byte[] payload = socket.recv();
      return new Frames(
          new String(topic, java.nio.charset.StandardCharsets.UTF_8),
          ByteBuffer.wrap(seq).getLong(),
          payload);
    }

    /** The next batch; fails after 5 seconds. */
    Frames next() {
      Frames f = recv(5_000);
      if (f == null) {
        throw new AssertionError("no batch within 5 s");
      }
      return f;
    }

    /** Discards batches until none arrives for {@code quietMs}. */
    void drain(int quietMs) {
      for (int i = 0; i < 1_000 && recv(quietMs) != null; i++) {
        // keep draining
      }
    }

    @Override
    public void close() {
      ctx.close();
    }
  }

  /**
   * Decodes msgpack into Java values: null, Boolean, Long (u64 keeps its 64 bits), Double,
   * String, byte[], List and LinkedHashMap.
   */
  static Object decode(byte[] payload) throws Exception {
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      return read(u);
    }
  }

  private static Object read(MessageUnpacker u) throws Exception {
    MessageFormat f = u.getNextFormat();
    switch (f.getValueType()) {
      case NIL -> {
        u.unpackNil();
        return null;
      }
      case BOOLEAN -> {
        return u.unpackBoolean();
      }
      case INTEGER -> {
        return f == MessageFormat.UINT64 ? u.unpackBigInteger().longValue() : u.unpackLong();
      }
      case FLOAT -> {
        return u.unpackDouble();
      }
      case STRING -> {
        return u.unpackString();
      }
      case BINARY -> {
        return u.readPayload(u.unpackBinaryHeader());
      }
      case ARRAY -> {
        int n = u.unpackArrayHeader();
        List<Object> l = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
          l.add(read(u));
        }
        return l;
      }
      case MAP -> {
        int n = u.unpackMapHeader();
        Map<Object, Object> m = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
          Object k = read(u);
          m.put(k, read(u));
        }
        return m;
      }
      default -> throw new IllegalStateException("unexpected msgpack type " + f);
    }
  }

  /** {@code hashes} as the List of Longs the decoder yields. */
  static List<Object> longs(long... hashes) {
    List<Object> l = new ArrayList<>();
    for (long h : hashes) {
      l.add(h);
    }
    return l;
  }

  /** {@code tokens} as the List of Longs the decoder yields. */
  static List<Object> longs(int[] tokens) {
    List<Object> l = new ArrayList<>();
    for (int t : tokens) {
      l.add((long) t);
    }
    return l;
  }
}
