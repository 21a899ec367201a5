package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.pending.PendingStore;
import io.kvselect.core.pending.PendingStoreContract;
import io.kvselect.core.session.SessionAffinity;
import io.kvselect.core.session.SessionAffinityContract;
import io.kvselect.testing.MutableClock;
import io.kvselect.testing.Ports;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

/**
 * The Hazelcast session table and pending store on two real members (loopback, random cluster
 * name) built from the jar's cluster.xml: the seams' contracts ({@link SessionAffinityContract},
 * {@link PendingStoreContract}, each handle pair on the two members), then what only the cluster
 * has (the approximate cap, a departed member's leases, the peek claim, the codec, the routes).
 */
class HazelcastSeamsTest {

  /** {@link SessionAffinityContract}: the table on member one, the second handle on member two. */
  @Nested
  class SessionAffinityContractTest extends SessionAffinityContract {
    @Override
    protected SessionAffinity table(MutableClock clock, int maxPerPartition) {
      return sessions(one, clock, maxPerPartition);
    }

    @Override
    protected SessionAffinity other(SessionAffinity t, MutableClock clock, int maxPerPartition) {
      return sessions(two, clock, maxPerPartition);
    }

    @Override
    protected int concurrentRounds() {
      return 20;
    }
  }

  /** {@link PendingStoreContract}: the store on member one, the second handle on member two. */
  @Nested
  class PendingStoreContractTest extends PendingStoreContract {
    @Override
    protected PendingStore<PendingStoreContract.Key, PendingStoreContract.Value> store(
        MutableClock clock, Duration ttl, long maxBytes) {
      return new HazelcastPendingStore<>(one, clock, ttl, maxBytes, DIRECT);
    }

    @Override
    protected PendingStore<PendingStoreContract.Key, PendingStoreContract.Value> other(
        PendingStore<PendingStoreContract.Key, PendingStoreContract.Value> s,
        MutableClock clock,
        Duration ttl,
        long maxBytes) {
      return new HazelcastPendingStore<>(two, clock, ttl, maxBytes, DIRECT);
    }

    /**
     * Hazelcast keeps an entry's times at one-second granularity, so a 1 s TTL can leave an entry
     * only milliseconds to live (a test failed once that way in CI): the contract's 3 s leaves at
     * least 2 s, and expiry runs on real time.
     */
    @Override
    protected void awaitExpiry(MutableClock clock, Duration ttl, Callable<Boolean> gone) {
      await().atMost(Duration.ofSeconds(30)).until(gone);
    }
  }

  private static final Duration TTL = Duration.ofSeconds(30);
  private static final WorkerRank W1 = new WorkerRank(1, 0);
  private static final WorkerRank W2 = new WorkerRank(2, 1);
  private static final Executor DIRECT = Runnable::run;

  /** Key and value shapes like the service's (a record holding a record, arrays, boxes, nulls). */
  record Key(Part partition, String selectionId) {}

  record Part(String model, String group) {}

  record Value(
      WorkerRank rank, long[] hashes, long[] none, Long maybe, boolean flag, String session) {}

  private static HazelcastInstance one;
  private static HazelcastInstance two;

  @BeforeAll
  static void members() throws Exception {
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
    int base = Ports.freeRange(2);
    ClusterSettings s =
        new ClusterSettings(
            true,
            "kvs-test-" + UUID.randomUUID(),
            List.of("127.0.0.1:" + base, "127.0.0.1:" + (base + 1)),
            base,
            "127.0.0.1",
            0);
    one = Hazelcast.newHazelcastInstance(ClusterBootstrap.config(s, 1000));
    two = Hazelcast.newHazelcastInstance(ClusterBootstrap.config(s, 1000));
    await().atMost(Duration.ofSeconds(60)).until(() -> one.getCluster().getMembers().size() == 2);
  }

  @AfterAll
  static void stop() {
    if (two != null) {
      two.shutdown();
    }
    if (one != null) {
      one.shutdown();
    }
  }

  private static <T> T get(CompletionStage<T> stage) throws Exception {
    return stage.toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  private static SelectionException failure(CompletionStage<?> stage) {
    ExecutionException e = assertThrows(ExecutionException.class, () -> get(stage));
    return (SelectionException) SelectionException.unwrap(e);
  }

  private static String partition() {
    return "p-" + UUID.randomUUID();
  }

  private static HazelcastSessionAffinity sessions(
      HazelcastInstance hz, MutableClock clock, int max) {
    return new HazelcastSessionAffinity(hz, clock, TTL, max, DIRECT, DIRECT);
  }

  /**
   * A node's member runs {@value ClusterBootstrap#OUTPUT_THREADS} output threads, not Hazelcast's 3:
   * a connection stuck behind a paused member then rarely shares its thread with a healthy one
   * ({@link ClusterBootstrap#outputThreads}).
   */
  @Test
  void aNodeRunsMoreOutputThreadsThanHazelcastsDefault() {
    String prefix = "hz." + one.getName() + ".IO.thread-out-";
    long out =
        Thread.getAllStackTraces().keySet().stream()
            .filter(t -> t.getName().startsWith(prefix))
            .count();
    assertEquals(ClusterBootstrap.OUTPUT_THREADS, out, "output threads named " + prefix + "*");
  }

  /**
   * The cap is approximate by choice (docs/cluster.md, known holes): each node counts what its
   * last sweep saw plus what it created since, so bindings created on other nodes since the last
   * sweep are the most it can overshoot by; one sweep makes every node refuse again. An exact
   * count would cost every new session a round trip to one counter's owner, which a paused
   * member would stall cluster-wide.
   */
  @Test
  void theCapOvershootsAtMostByWhatOtherNodesCreatedSinceTheLastSweep() throws Exception {
    MutableClock clock = new MutableClock();
    String p = partition();
    HazelcastSessionAffinity a = sessions(one, clock, 2);
    HazelcastSessionAffinity b = sessions(two, clock, 2);
    get(a.bindAndLease(p, "s1", null, W1, "l1"));
    get(a.bindAndLease(p, "s2", null, W1, "l2"));
    assertEquals(
        ErrorCode.NOT_READY,
        failure(a.bindAndLease(p, "s3", null, W1, "l3")).code(),
        "a node counts what it created itself");
    get(b.bindAndLease(p, "s4", null, W2, "l4"));
    get(b.bindAndLease(p, "s5", null, W2, "l5"));
    assertEquals(
        ErrorCode.NOT_READY,
        failure(b.bindAndLease(p, "s6", null, W2, "l6")).code(),
        "the other node overshoots by no more than it created before its sweep");
    get(b.sweep());
    assertEquals(4, b.counts().get(p));
    assertEquals(ErrorCode.NOT_READY, failure(b.bindAndLease(p, "s7", null, W2, "l7")).code());
    assertEquals(Optional.empty(), get(b.lookup(p, "s6")), "a refused booking changed nothing");
    assertEquals(Optional.of(W1), get(b.lookup(p, "s1")), "bound sessions are still served");
  }

  @Test
  void theLeasesOfAMemberThatLeftAreReleasedSoItsBindingsAgeOut() throws Exception {
    MutableClock clock = new MutableClock();
    String p = partition();
    ClusterSettings s =
        new ClusterSettings(
            true,
            one.getConfig().getClusterName(),
            one.getConfig().getNetworkConfig().getJoin().getTcpIpConfig().getMembers(),
            one.getConfig().getNetworkConfig().getPort(),
            "127.0.0.1",
            0);
    HazelcastInstance three = Hazelcast.newHazelcastInstance(ClusterBootstrap.config(s, 1000));
    HazelcastSessionAffinity survivor = sessions(one, clock, 100);
    try {
      await().atMost(Duration.ofSeconds(60)).until(() -> one.getCluster().getMembers().size() == 3);
      HazelcastSessionAffinity leaving = sessions(three, clock, 100);
      get(leaving.bindAndLease(p, "held", null, W1, "r1"));
      get(survivor.bindAndLease(p, "shared", null, W2, "r2"));
      get(leaving.bindAndLease(p, "shared", null, W2, "r3"));
    } finally {
      three.shutdown();
    }
    await().atMost(Duration.ofSeconds(60)).until(() -> one.getCluster().getMembers().size() == 2);
    // every survivor releases the departed member's leases (idempotently); wait for this one's pass
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              clock.advance(TTL);
              return get(survivor.lookup(p, "held")).isEmpty();
            });
    assertEquals(
        Optional.of(W2),
        get(survivor.lookup(p, "shared")),
        "the survivor's own lease still holds it");
  }

  private static HazelcastPendingStore<Key, Value> pending(
      HazelcastInstance hz, MutableClock clock, Duration ttl, long maxBytes) {
    return new HazelcastPendingStore<>(hz, clock, ttl, maxBytes, DIRECT);
  }

  private static Key key() {
    return new Key(new Part("m", "g"), "sel-" + UUID.randomUUID());
  }

  private static Value value(String session) {
    return new Value(W2, new long[] {1, -2, Long.MAX_VALUE}, null, null, true, session);
  }

  @Test
  void aPeekClaimsTheEntryForItsMemberUntilTheClaimLapses() throws Exception {
    MutableClock clock = new MutableClock();
    HazelcastPendingStore<Key, Value> a = pending(one, clock, TTL, 1 << 20);
    HazelcastPendingStore<Key, Value> b = pending(two, clock, TTL, 1 << 20);
    Key k = key();
    long gen = get(a.put(k, value("s"), 10));
    assertEquals(gen, get(a.peek(k)).generation());
    assertEquals(gen, get(a.peek(k)).generation(), "the claiming member may peek again (a retry)");
    SelectionException busy = failure(b.peek(k));
    assertEquals(ErrorCode.CONFLICT, busy.code());
    assertTrue(busy.getMessage().contains(k.selectionId()), busy.getMessage());
    clock.advance(Duration.ofMillis(HazelcastPendingStore.CLAIM_MILLIS));
    assertEquals(gen, get(b.peek(k)).generation(), "a lapsed claim passes to the next member");
    assertTrue(get(b.removeIfGeneration(k, gen)));
  }

  @Test
  void theCodecRefusesClassesOutsideKvselect() {
    byte[] good = RecordCodec.encode(new Part("m", "g"));
    assertEquals(new Part("m", "g"), RecordCodec.decode(good));
    byte[] forged = RecordCodec.encode(new Part("m", "g"));
    String name = Part.class.getName();
    String evil = "java.lang.Runtime" + "x".repeat(name.length() - "java.lang.Runtime".length());
    byte[] nameBytes = evil.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    System.arraycopy(nameBytes, 0, forged, 3, nameBytes.length);
    assertThrows(java.io.UncheckedIOException.class, () -> RecordCodec.decode(forged));
    assertThrows(IllegalArgumentException.class, () -> RecordCodec.encode(new Object()));
  }

  @Test
  void aWriteRouteNamesTheOwnerAndItsBackupAndAReadRouteTheOwnerOnly() {
    await().atMost(Duration.ofSeconds(30)).until(() -> one.getPartitionService().isClusterSafe());
    HazelcastRoutes routes =
        new HazelcastRoutes(
            one,
            k -> (String) k,
            one.getConfig().getMapConfig(ClusterBootstrap.SESSIONS_MAP).getBackupCount());
    java.util.Set<UUID> members = new java.util.HashSet<>();
    one.getCluster().getMembers().forEach(m -> members.add(m.getUuid()));
    for (int i = 0; i < 20; i++) {
      String key = "p/session-" + i;
      com.hazelcast.cluster.Member owner = (com.hazelcast.cluster.Member) routes.read(key);
      assertEquals(one.getPartitionService().getPartition(key).getOwner(), owner);
      List<?> write = (List<?>) routes.write(key);
      assertEquals(2, write.size(), "owner and one synchronous backup: " + write);
      assertEquals(owner.getUuid(), write.get(0));
      assertEquals(
          members, new java.util.HashSet<>(write), "two members: the backup is the other one");
    }
  }
}
