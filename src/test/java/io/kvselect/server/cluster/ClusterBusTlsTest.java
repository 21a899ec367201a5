package io.kvselect.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.testing.Ports;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutual TLS on the clustered event bus ({@code --cluster-tls-keystore}): a member of the same
 * Hazelcast cluster whose event bus lacks the cluster's certificate cannot call kvselect's
 * event-bus API, one that has it can; a plain bus on a non-loopback host is refused at start. The
 * keystore is a fresh self-signed PKCS#12 made by the JDK's {@code keytool}.
 */
class ClusterBusTlsTest {

  static {
    System.setProperty("hazelcast.wait.seconds.before.join", "0");
  }

  @TempDir Path dir;

  private Path keystore() throws Exception {
    Path ks = dir.resolve("cluster.p12");
    Path keytool = Path.of(System.getProperty("java.home"), "bin", "keytool");
    Process p =
        new ProcessBuilder(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                "kvselect",
                "-keyalg",
                "EC",
                "-groupname",
                "secp256r1",
                "-dname",
                "CN=kvselect-test",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                ks.toString(),
                "-storepass",
                "s3cret",
                "-keypass",
                "s3cret")
            .redirectErrorStream(true)
            .start();
    assertTrue(
        p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0,
        new String(p.getInputStream().readAllBytes()));
    return ks;
  }

  private static <T> T get(io.vertx.core.Future<T> f) throws Exception {
    return f.toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
  }

  @Test
  void aBusPeerWithoutTheClusterCertificateIsRefused() throws Exception {
    Path ks = keystore();
    String name = "kvs-test-" + UUID.randomUUID();
    int port = Ports.free();
    Map<String, String> env = new HashMap<>(ClusterHarness.ENV);
    env.put("KVSELECT_CLUSTER_TLS_PASSWORD", "s3cret");
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--cluster",
              "--cluster-name",
              name,
              "--cluster-members",
              "127.0.0.1:" + port,
              "--cluster-port",
              Integer.toString(port),
              "--cluster-tls-keystore",
              ks.toString()
            },
            env);
    KvselectNode node =
        KvselectNode.start(s).toCompletionStage().toCompletableFuture().get(90, TimeUnit.SECONDS);
    try {
      int actual =
          ((HazelcastClusterManager)
                  ((io.vertx.core.internal.VertxInternal) node.vertx()).clusterManager())
              .getHazelcastInstance()
              .getCluster()
              .getLocalMember()
              .getAddress()
              .getPort();
      // a plain bus: the same Hazelcast cluster (its member port is not protected), no certificate
      HazelcastClusterManager plainMgr =
          new HazelcastClusterManager(
              ApplicationCluster.hazelcast(name, Ports.free(), "127.0.0.1:" + actual));
      Vertx plain = ApplicationCluster.vertx(plainMgr);
      try {
        org.awaitility.Awaitility.await()
            .atMost(java.time.Duration.ofSeconds(30))
            .until(() -> plainMgr.getNodes().size() == 2);
        ExecutionException refused =
            assertThrows(
                ExecutionException.class,
                () ->
                    get(
                        plain
                            .eventBus()
                            .request(
                                "kvselect.api.workers.list",
                                new JsonObject(),
                                new DeliveryOptions().setSendTimeout(3000))));
        assertTrue(
            refused.getCause() instanceof io.vertx.core.eventbus.ReplyException,
            refused.toString());
      } finally {
        get(plain.close());
      }
      // the same with the cluster's certificate
      HazelcastClusterManager tlsMgr =
          new HazelcastClusterManager(
              ApplicationCluster.hazelcast(name, Ports.free(), "127.0.0.1:" + actual));
      VertxOptions o = new VertxOptions();
      o.getEventBusOptions().setHost("127.0.0.1").setPort(0);
      ClusterBootstrap.busTls(
          o.getEventBusOptions(), new ClusterSettings.BusSecurity(ks.toString(), "s3cret", false));
      Vertx trusted = get(Vertx.builder().with(o).withClusterManager(tlsMgr).buildClustered());
      try {
        org.awaitility.Awaitility.await()
            .atMost(java.time.Duration.ofSeconds(30))
            .until(() -> tlsMgr.getNodes().size() == 2);
        Object reply =
            get(trusted
                    .eventBus()
                    .request(
                        "kvselect.api.workers.list",
                        new JsonObject(),
                        new DeliveryOptions().setSendTimeout(10_000)))
                .body();
        assertEquals(new JsonArray(), reply);
      } finally {
        get(trusted.close());
      }
    } finally {
      get(node.close());
    }
  }

  @Test
  void aPlainBusOnANonLoopbackHostIsRefusedUnlessInsecure() throws Exception {
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--cluster",
              "--cluster-name",
              "kvs-test-" + UUID.randomUUID(),
              "--cluster-host",
              "192.0.2.1"
            },
            ClusterHarness.ENV);
    CliException e = assertThrows(CliException.class, () -> s.cluster().requireBusProtection());
    assertTrue(
        e.getMessage().contains("--cluster-tls-keystore")
            && e.getMessage().contains("--cluster-insecure"),
        e.getMessage());
    NodeSettings insecure =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--cluster",
              "--cluster-name",
              "kvs-test-" + UUID.randomUUID(),
              "--cluster-host",
              "192.0.2.1",
              "--cluster-insecure"
            },
            ClusterHarness.ENV);
    insecure.cluster().requireBusProtection();
    CliException noPassword =
        assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(
                    new String[] {
                      "--cluster",
                      "--cluster-tls-keystore",
                      Files.writeString(dir.resolve("k.p12"), "x").toString()
                    },
                    ClusterHarness.ENV));
    assertTrue(
        noPassword.getMessage().contains("KVSELECT_CLUSTER_TLS_PASSWORD"), noPassword.getMessage());
  }
}
