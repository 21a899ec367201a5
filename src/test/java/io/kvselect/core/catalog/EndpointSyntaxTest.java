package io.kvselect.core.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class EndpointSyntaxTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "tcp://127.0.0.1:5557",
        "tcp://localhost:1",
        "tcp://engine-0.svc.cluster.local:65535",
        "tcp://[::1]:5557",
        "tcp://[fe80::1]:5",
        "tcp://nohost.invalid:5",
        "ipc:///tmp/kv.sock",
        "inproc://events"
      })
  void acceptsWhatZmqConnects(String endpoint) {
    assertNull(EndpointSyntax.problem(endpoint));
    EndpointSyntax.require("kv_events_endpoint", endpoint);
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "7",
        "garbage",
        "",
        "tcp://",
        "tcp://host",
        "tcp://:5",
        "tcp://host:0",
        "tcp://host:65536",
        "tcp://host:-1",
        "tcp://host:abc",
        "tcp://host:5;x",
        "tcp://a b:5",
        "tcp://*:5",
        "tcp://[::1:5",
        "tcp://[]:5",
        "tcp://::1:5",
        "http://host:5",
        "ipc://",
        "inproc://",
        "inproc://a b",
        "udp://h:5",
        "tcp://host:123456"
      })
  void rejectsWhatZmqCannotConnect(String endpoint) {
    SelectionException e =
        assertThrows(
            SelectionException.class, () -> EndpointSyntax.require("replay_endpoint", endpoint));
    assertEquals(ErrorCode.UNPROCESSABLE, e.code());
    assertTrue(e.getMessage().contains("`replay_endpoint`"), e.getMessage());
  }

  @Test
  void absentIsFine() {
    assertNull(EndpointSyntax.problem(null));
    EndpointSyntax.require("replay_endpoint", null);
  }

  @Test
  void tcpHostStripsTheIpv6Brackets() {
    assertEquals("engine-0", EndpointSyntax.tcpHost("tcp://engine-0:5557"));
    assertEquals("::1", EndpointSyntax.tcpHost("tcp://[::1]:5557"));
    assertNull(EndpointSyntax.tcpHost("ipc:///tmp/x"));
    assertNull(EndpointSyntax.tcpHost("tcp://bad"));
  }

  @Test
  void aWorkerSpecWithAMalformedEndpointCannotExist() {
    assertField("kv_events_endpoint", () -> spec("garbage", null, null));
    assertField(
        "kv_events_endpoints[3]", () -> spec(null, Map.of(2, "tcp://a:1", 3, "tcp://a"), null));
    assertField("replay_endpoint", () -> spec("tcp://a:1", null, "7"));
    assertEquals(
        "tcp://a:1", spec("tcp://a:1", Map.of(0, "ipc:///x"), "tcp://a:2").kvEventsEndpoint());
    assertEquals(" ", spec(" ", null, null).kvEventsEndpoint(), "blank counts as absent");
  }

  private static void assertField(String field, Runnable build) {
    SelectionException e = assertThrows(SelectionException.class, build::run);
    assertEquals(ErrorCode.UNPROCESSABLE, e.code());
    assertTrue(e.getMessage().contains("`" + field + "`"), e.getMessage());
  }

  private static WorkerSpec spec(String kv, Map<Integer, String> perRank, String replay) {
    return WorkerSpec.builder(1)
        .endpoint("http://w")
        .kvEventsEndpoint(kv)
        .kvEventsEndpoints(perRank)
        .replayEndpoint(replay)
        .blockSize(16)
        .build();
  }
}
