package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Clustered start through the real path: formation, {@code /cluster}, {@code /ready}, isolation by name, a node alone. */
class ClusterBootstrapTest {

  @Test
  void threeNodesFormOneClusterAndEachReportsItsMembers() throws Exception {
    try (ClusterHarness h = new ClusterHarness()) {
      KvselectNode a = h.start();
      KvselectNode b = h.start();
      KvselectNode c = h.start();
      Set<String> ids = new HashSet<>();
      for (KvselectNode n : List.of(a, b, c)) {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> h.get(n, "/cluster").body().path("members").size() == 3);
        JsonNode cluster = h.get(n, "/cluster").body();
        assertTrue(cluster.path("enabled").asBoolean(), cluster.toString());
        assertEquals("joined", cluster.path("state").asText(), cluster.toString());
        assertEquals(h.name, cluster.path("name").asText());
        ids.add(cluster.path("node_id").asText());
        int local = 0;
        for (JsonNode m : cluster.path("members")) {
          assertTrue(m.path("address").asText().startsWith("127.0.0.1:"), cluster.toString());
          if (m.path("local").asBoolean()) {
            local++;
            assertEquals(
                cluster.path("node_id").asText(), m.path("id").asText(), cluster.toString());
            assertEquals(
                cluster.path("address").asText(), m.path("address").asText(), cluster.toString());
          }
        }
        assertEquals(1, local, cluster.toString());
        assertEquals(cluster.path("address").asText(), n.cluster().address());
        JsonNode ready = h.get(n, "/ready").body();
        assertEquals("joined", ready.path("cluster").path("state").asText(), ready.toString());
        assertEquals(3, ready.path("cluster").path("members").asInt(), ready.toString());
      }
      assertEquals(3, ids.size(), "distinct node ids: " + ids);
    }
  }

  @Test
  void twoClustersWithDifferentNamesOnOneMachineNeverSeeEachOther() throws Exception {
    try (ClusterHarness one = new ClusterHarness();
        ClusterHarness two = new ClusterHarness()) {
      // both clusters list each other's member ports: only the name keeps them apart
      String all = one.members(2) + "," + two.members(2);
      KvselectNode a1 = one.start("--cluster-members", all);
      KvselectNode b1 = two.start("--cluster-members", all);
      KvselectNode a2 = one.start("--cluster-members", all);
      KvselectNode b2 = two.start("--cluster-members", all);
      for (var pair : List.of(List.of(a1, a2), List.of(b1, b2))) {
        for (KvselectNode n : pair) {
          ClusterHarness h = n == a1 || n == a2 ? one : two;
          await()
              .atMost(Duration.ofSeconds(60))
              .until(() -> h.get(n, "/cluster").body().path("members").size() == 2);
        }
      }
      Set<String> first = memberIds(one, a1);
      Set<String> second = memberIds(two, b1);
      assertEquals(first, memberIds(one, a2));
      assertEquals(second, memberIds(two, b2));
      assertTrue(first.stream().noneMatch(second::contains), first + " vs " + second);
      assertNotEquals(
          one.get(a1, "/cluster").body().path("name"), two.get(b1, "/cluster").body().path("name"));
    }
  }

  @Test
  void aNodeThatReachesNoListedMemberStartsAloneAndSaysSo() throws Exception {
    try (ClusterHarness h = new ClusterHarness()) {
      int nobody = Ports.free();
      KvselectNode n = h.start("--cluster-members", "127.0.0.1:" + nobody);
      JsonNode cluster = h.get(n, "/cluster").body();
      assertEquals("alone", cluster.path("state").asText(), cluster.toString());
      assertEquals(1, cluster.path("members").size(), cluster.toString());
      assertTrue(cluster.path("note").asText().contains("127.0.0.1:" + nobody), cluster.toString());
      assertTrue(cluster.path("note").asText().contains("cluster of one"), cluster.toString());
      assertEquals("alone", h.get(n, "/ready").body().path("cluster").path("state").asText());
    }
  }

  @Test
  void aClusterHostThatIsNotAnAddressOfThisMachineFailsTheStartNamingTheFlag() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--cluster",
              "--cluster-name",
              "kvs-test-" + java.util.UUID.randomUUID(),
              "--cluster-host",
              "192.0.2.1",
              "--cluster-insecure"
            },
            ClusterHarness.ENV);
    java.util.concurrent.ExecutionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            java.util.concurrent.ExecutionException.class,
            () ->
                KvselectNode.start(s)
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(90, java.util.concurrent.TimeUnit.SECONDS));
    String message = e.getCause().getMessage();
    assertTrue(message.contains("192.0.2.1 (--cluster-host"), message);
    assertTrue(message.contains("No matching network interface"), message);
  }

  @Test
  void withoutClusterNothingOfHazelcastStartsAndClusterSaysStandalone() throws Exception {
    NodeSettings s =
        NodeSettings.parse(new String[] {"--host", "127.0.0.1", "--port", "0"}, ClusterHarness.ENV);
    assertFalse(s.cluster().enabled());
    try (ClusterHarness h = new ClusterHarness()) {
      KvselectNode n = h.start(s);
      assertFalse(n.vertx().isClustered());
      JsonNode cluster = h.get(n, "/cluster").body();
      assertFalse(cluster.path("enabled").asBoolean());
      assertEquals("standalone", cluster.path("state").asText());
      JsonNode ready = h.get(n, "/ready").body();
      assertEquals("standalone", ready.path("cluster").path("state").asText(), ready.toString());
      assertTrue(
          com.hazelcast.core.Hazelcast.getAllHazelcastInstances().stream()
              .noneMatch(i -> i.getConfig().getClusterName().equals(h.name)));
    }
  }

  private static Set<String> memberIds(ClusterHarness h, KvselectNode n) throws Exception {
    Set<String> ids = new HashSet<>();
    h.get(n, "/cluster").body().path("members").forEach(m -> ids.add(m.path("id").asText()));
    return ids;
  }
}
