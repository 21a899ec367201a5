package io.kvselect.server.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.net.SelfSignedCertificate;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --tls-cert} / {@code --tls-key}: HTTPS with a self-signed certificate made by the test. */
class TlsHttpTest {

  @TempDir Path dir;

  @Test
  void servesHttpsWithTheGivenPemFilesAndTheTokenCheckStillApplies() throws Exception {
    SelfSignedCertificate cert = SelfSignedCertificate.create("localhost");
    Path token = dir.resolve("token");
    Files.writeString(token, "tls-token");
    Vertx vertx = Vertx.vertx();
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--tls-cert",
              cert.certificatePath(),
              "--tls-key",
              cert.privateKeyPath(),
              "--auth-token-file",
              token.toString()
            },
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    KvselectNode node =
        KvselectNode.start(s, 1)
            .toCompletionStage()
            .toCompletableFuture()
            .get(30, TimeUnit.SECONDS);
    try {
      WebClient https =
          WebClient.create(
              vertx,
              new WebClientOptions()
                  .setSsl(true)
                  .setTrustOptions(cert.trustOptions())
                  .setVerifyHost(false));
      HttpResponse<Buffer> health =
          https
              .request(HttpMethod.GET, node.port(), "127.0.0.1", "/health")
              .send()
              .toCompletionStage()
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS);
      assertEquals(200, health.statusCode());
      assertEquals(
          401,
          https
              .request(HttpMethod.GET, node.port(), "127.0.0.1", "/workers")
              .send()
              .toCompletionStage()
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS)
              .statusCode());
      assertEquals(
          200,
          https
              .request(HttpMethod.GET, node.port(), "127.0.0.1", "/workers")
              .bearerTokenAuthentication("tls-token")
              .send()
              .toCompletionStage()
              .toCompletableFuture()
              .get(20, TimeUnit.SECONDS)
              .statusCode());

      // a client that does not trust the certificate is refused the handshake
      WebClient untrusting =
          WebClient.create(vertx, new WebClientOptions().setSsl(true).setVerifyHost(false));
      assertThrows(
          ExecutionException.class,
          () ->
              untrusting
                  .request(HttpMethod.GET, node.port(), "127.0.0.1", "/health")
                  .send()
                  .toCompletionStage()
                  .toCompletableFuture()
                  .get(20, TimeUnit.SECONDS));
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      cert.delete();
    }
  }

  @Test
  void certAndKeyComeTogetherAndMustBeReadable() throws Exception {
    Path pem = dir.resolve("cert.pem");
    Files.writeString(pem, "-----BEGIN CERTIFICATE-----\n");
    CliException e =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[] {"--tls-cert", pem.toString()}, Map.of()));
    assertEquals(
        "--tls-cert and --tls-key must be given together (got only --tls-cert)", e.getMessage());
    e =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[0], Map.of("KVSELECT_TLS_KEY", pem.toString())));
    assertEquals(
        "--tls-cert and --tls-key must be given together (got only --tls-key)", e.getMessage());
    Path missing = dir.resolve("nope.pem");
    e =
        assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(
                    new String[] {"--tls-cert", pem.toString(), "--tls-key", missing.toString()},
                    Map.of()));
    assertEquals("--tls-key " + missing + " is not a readable file", e.getMessage());
  }

  @Test
  void aPemThatIsNotAKeyFailsTheStartWithOneLine() throws Exception {
    Path pem = dir.resolve("bad.pem");
    Files.writeString(pem, "not a pem\n");
    NodeSettings s =
        NodeSettings.parse(
            new String[] {
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--tls-cert",
              pem.toString(),
              "--tls-key",
              pem.toString()
            },
            Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    ExecutionException e =
        assertThrows(
            ExecutionException.class,
            () ->
                KvselectNode.start(s, 1)
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(30, TimeUnit.SECONDS));
    String line = io.kvselect.server.LauncherAccess.startFailure(s, e);
    assertTrue(line.startsWith("failed to start: ") && !line.contains("\n"), line);
  }
}
