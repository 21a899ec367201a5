package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.cluster.Address;
import com.hazelcast.config.Config;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.instance.EndpointQualifier;
import com.hazelcast.instance.impl.HazelcastInstanceProxy;
import com.hazelcast.internal.server.ServerConnectionManager;
import com.hazelcast.internal.server.tcp.TcpServerConnection;
import com.hazelcast.map.IMap;
import io.kvselect.testing.Ports;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A member connection to a peer that accepts TCP but never answers (what the kernel of a
 * SIGSTOPped member does: its listening socket completes the connect, the process reads nothing)
 * holds the Hazelcast output thread that serves it, and with it every other connection of that
 * thread that waits to be selected; {@link StalledHandshakeReaper} closes it.
 *
 * <p>Two real members in this JVM on loopback. Member {@code a} runs one output thread and no
 * write-through, so every write of its link to {@code b} is handed to that thread (as happens in a
 * loaded node once two threads write to one connection) and the stall, when there is one, is
 * certain. The silent peer is a listening socket nobody accepts on.
 */
class StalledHandshakeReaperTest {

  private HazelcastInstance a;
  private HazelcastInstance b;
  private ServerSocket silent;

  @BeforeEach
  void members() throws Exception {
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
    int base = Ports.freeRange(2);
    // a failure timeout far above the stall the second test shows, so a and b never split here
    ClusterSettings s =
        new ClusterSettings(
            true,
            "kvs-test-" + UUID.randomUUID(),
            List.of("127.0.0.1:" + base, "127.0.0.1:" + (base + 1)),
            base,
            "127.0.0.1",
            0,
            ClusterSettings.DEFAULT_RECONCILE_SECS,
            ClusterSettings.DEFAULT_CALL_BUDGET_MS,
            60,
            ClusterSettings.BusSecurity.PLAIN);
    Config ca = ClusterBootstrap.config(s, 1000);
    ca.setProperty("hazelcast.io.output.thread.count", "1");
    ca.setProperty("hazelcast.io.write.through", "false");
    a = Hazelcast.newHazelcastInstance(ca);
    b = Hazelcast.newHazelcastInstance(ClusterBootstrap.config(s, 1000));
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                a.getCluster().getMembers().size() == 2 && b.getCluster().getMembers().size() == 2);
    silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
  }

  @AfterEach
  void stop() throws Exception {
    if (silent != null) {
      silent.close();
    }
    if (b != null) {
      b.getLifecycleService().terminate();
    }
    if (a != null) {
      a.getLifecycleService().terminate();
    }
  }

  @Test
  void withoutTheReaperAnUnansweredConnectStallsTheOtherConnectionsOfItsOutputThread()
      throws Exception {
    IMap<String, String> onB = b.getMap("stall-" + UUID.randomUUID());
    String key = keyOwnedBy(a);
    onB.put(key, "before"); // the link works

    connectToSilentPeer(a);
    awaitUnanswered(a);
    // a answers b's put on its only output thread, which now runs the unanswered connection's
    // pipeline without selecting again
    CompletableFuture<String> put = onB.putAsync(key, "during").toCompletableFuture();
    await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5)).until(() -> !put.isDone());

    // closing the silent peer's socket resets the connection, and the thread serves b again
    silent.close();
    assertEquals("before", put.get(30, TimeUnit.SECONDS));
    assertEquals("during", onB.get(key));
  }

  @Test
  void theReaperClosesTheUnansweredConnectAndTheLinkKeepsWorking() throws Exception {
    StalledHandshakeReaper reaper = StalledHandshakeReaper.start(a, 500).orElseThrow();
    try {
      IMap<String, String> onB = b.getMap("stall-" + UUID.randomUUID());
      String key = keyOwnedBy(a);
      onB.put(key, "before");

      connectToSilentPeer(a);
      awaitUnanswered(a);
      CompletableFuture<String> put = onB.putAsync(key, "during").toCompletableFuture();
      assertEquals("before", put.get(30, TimeUnit.SECONDS));
      await().atMost(Duration.ofSeconds(10)).until(() -> reaper.closed() >= 1);
      // the member connections that answered (a <-> b) are never closed
      assertEquals(2, a.getCluster().getMembers().size());
      assertTrue(
          memberConnections(a).getConnections().stream()
              .anyMatch(
                  c ->
                      c.isAlive()
                          && c.getRemoteUuid() != null
                          && c.getRemoteUuid().equals(b.getCluster().getLocalMember().getUuid())));

      // each new connect to the silent peer is closed in turn, and a's link to b keeps answering
      for (int i = 0; i < 3; i++) {
        long before = reaper.closed();
        onB.put(key, "turn " + i);
        // connect again until one is reaped: right after a close, the manager may still hold the
        // closed connection for a moment and hand it back instead of opening a new one
        await()
            .pollInterval(Duration.ofMillis(200))
            .atMost(Duration.ofSeconds(20))
            .until(
                () -> {
                  connectToSilentPeer(a);
                  return reaper.closed() > before;
                });
      }
      assertEquals("turn 2", onB.get(key));
    } finally {
      reaper.stop();
    }
  }

  @Test
  void connectionsBetweenLiveMembersAreLeftAlone() throws Exception {
    StalledHandshakeReaper reaper = StalledHandshakeReaper.start(a, 1).orElseThrow();
    StalledHandshakeReaper other = StalledHandshakeReaper.start(b, 1).orElseThrow();
    try {
      IMap<String, String> onB = b.getMap("live-" + UUID.randomUUID());
      for (int i = 0; i < 200; i++) {
        onB.put(keyOwnedBy(a) + i, "v" + i);
      }
      // scans at 1 ms find every member connection answered: none is closed
      await()
          .pollDelay(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> a.getCluster().getMembers().size() == 2);
      assertEquals(0, reaper.closed());
      assertEquals(0, other.closed());
      assertFalse(memberConnections(a).getConnections().isEmpty());
    } finally {
      reaper.stop();
      other.stop();
    }
  }

  /** {@code hz} opens a member connection to the silent peer, as it does to a paused member it needs. */
  private void connectToSilentPeer(HazelcastInstance hz) throws Exception {
    memberConnections(hz).getOrConnect(new Address("127.0.0.1", silent.getLocalPort()));
  }

  /** Until {@code hz}'s connection to the silent peer has sent its protocol header (and waits for the peer's). */
  private void awaitUnanswered(HazelcastInstance hz) {
    await()
        .pollInterval(Duration.ofMillis(10))
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                memberConnections(hz).getConnections().stream()
                    .anyMatch(
                        c ->
                            c instanceof TcpServerConnection t
                                && t.isAlive()
                                && t.getChannel().isClientMode()
                                && t.getChannel().bytesWritten() > 0
                                && t.getChannel().remoteSocketAddress()
                                    instanceof java.net.InetSocketAddress r
                                && r.getPort() == silent.getLocalPort()));
  }

  private static ServerConnectionManager memberConnections(HazelcastInstance hz) {
    return ((HazelcastInstanceProxy) hz)
        .getOriginal()
        .node
        .getServer()
        .getConnectionManager(EndpointQualifier.MEMBER);
  }

  private String keyOwnedBy(HazelcastInstance owner) {
    for (int i = 0; ; i++) {
      String key = "k" + i;
      if (owner
          .getCluster()
          .getLocalMember()
          .equals(owner.getPartitionService().getPartition(key).getOwner())) {
        return key;
      }
    }
  }
}
