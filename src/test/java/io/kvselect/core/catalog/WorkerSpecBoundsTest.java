package io.kvselect.core.catalog;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import org.junit.jupiter.api.Test;

/** The rank range of a spec stays within int, and malformed endpoints say what is wrong. */
class WorkerSpecBoundsTest {

  private static WorkerSpec spec(int start, int size) {
    return WorkerSpec.builder(1)
        .endpoint("http://w")
        .blockSize(16)
        .dataParallelStartRank(start)
        .dataParallelSize(size)
        .build();
  }

  @Test
  void theLastRankMustFitAnInt() {
    int max = Integer.MAX_VALUE;
    assertDoesNotThrow(() -> spec(max, 1));
    assertDoesNotThrow(() -> spec(max - 1, 2));
    assertDoesNotThrow(
        () -> spec(max, 0), "no ranks, nothing to overflow (Schedulability reports the size)");
    SelectionException e = assertThrows(SelectionException.class, () -> spec(max, 2));
    assertEquals(ErrorCode.UNPROCESSABLE, e.code());
    assertTrue(e.getMessage().contains("data_parallel_start_rank (2147483647)"), e.getMessage());
    assertTrue(e.getMessage().contains("data_parallel_size (2)"), e.getMessage());
    assertThrows(SelectionException.class, () -> spec(max - 1, 3));
  }

  @Test
  void endpointProblemsNameTheReasonAndQuoteTheValue() {
    assertEquals(
        "expected tcp://host:port, got \"tcp://host\"", EndpointSyntax.problem("tcp://host"));
    assertEquals("expected tcp://host:port, got \"tcp://:5\"", EndpointSyntax.problem("tcp://:5"));
    assertEquals("port must be 1..65535, got \"tcp://h:0\"", EndpointSyntax.problem("tcp://h:0"));
    assertEquals(
        "port must be 1..65535, got \"tcp://h:65536\"", EndpointSyntax.problem("tcp://h:65536"));
    assertNull(EndpointSyntax.problem("tcp://h:65535"));
    assertNull(EndpointSyntax.problem("tcp://h:1"));
    assertEquals(
        "port must be 1..65535, got \"tcp://h:123456\"", EndpointSyntax.problem("tcp://h:123456"));
    assertEquals("port must be 1..65535, got \"tcp://h:5x\"", EndpointSyntax.problem("tcp://h:5x"));
    assertEquals("malformed IPv6 host in \"tcp://[]:5\"", EndpointSyntax.problem("tcp://[]:5"));
    assertEquals("malformed IPv6 host in \"tcp://[::1:5\"", EndpointSyntax.problem("tcp://[::1:5"));
    assertEquals(
        "malformed IPv6 host in \"tcp://[fe80]:5\"", EndpointSyntax.problem("tcp://[fe80]:5"));
    assertEquals(
        "malformed IPv6 host in \"tcp://[::g]:5\"", EndpointSyntax.problem("tcp://[::g]:5"));
    assertNull(EndpointSyntax.problem("tcp://[::ffff:127.0.0.1]:5"));
    assertEquals("malformed host in \"tcp://h st:5\"", EndpointSyntax.problem("tcp://h st:5"));
    assertEquals(
        "malformed host in \"tcp://h\u00e9:5\"", EndpointSyntax.problem("tcp://h\u00e9:5"));
    String host253 = "a".repeat(253);
    assertNull(EndpointSyntax.problem("tcp://" + host253 + ":5"));
    assertTrue(EndpointSyntax.problem("tcp://" + host253 + "a:5").startsWith("malformed host in"));
    assertEquals(
        "expected ipc://<name> without spaces, got \"ipc://\"", EndpointSyntax.problem("ipc://"));
    assertEquals(
        "expected inproc://<name> without spaces, got \"inproc://a b\"",
        EndpointSyntax.problem("inproc://a b"));
    String longValue = "x".repeat(130);
    assertEquals(
        "expected tcp://host:port, ipc://path or inproc://name, got \"" + "x".repeat(120) + "...\"",
        EndpointSyntax.problem(longValue));
    assertEquals(
        "expected tcp://host:port, ipc://path or inproc://name, got \"" + "x".repeat(120) + "\"",
        EndpointSyntax.problem("x".repeat(120)));
  }
}
