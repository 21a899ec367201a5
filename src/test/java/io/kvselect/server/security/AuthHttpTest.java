package io.kvselect.server.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code --auth-token-file} and {@code --auth-open} over real HTTP on 127.0.0.1. */
class AuthHttpTest {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String TOKEN = "s3cret-token";
  private static final String WORKER =
      "{\"worker_id\": 1, \"endpoint\": \"http://w1\", \"block_size\": 16}";

  @TempDir Path dir;

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private KvselectNode start(String... flags) throws Exception {
    List<String> args = new ArrayList<>(List.of("--host", "127.0.0.1", "--port", "0"));
    args.addAll(List.of(flags));
    NodeSettings s =
        NodeSettings.parse(
            args.toArray(String[]::new), Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
    return KvselectNode.start(s, 1)
        .toCompletionStage()
        .toCompletableFuture()
        .get(30, TimeUnit.SECONDS);
  }

  private Path tokenFile(String content) throws Exception {
    Path f = dir.resolve("token");
    Files.writeString(f, content);
    return f;
  }

  private HttpResponse<String> call(
      KvselectNode node, String method, String path, String authorization, String body)
      throws Exception {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + path))
            .timeout(Duration.ofSeconds(20));
    if (authorization != null) {
      b.header("authorization", authorization);
    }
    if (body != null) {
      b.header("content-type", "application/json");
    }
    b.method(
        method,
        body == null
            ? HttpRequest.BodyPublishers.noBody()
            : HttpRequest.BodyPublishers.ofString(body));
    return client.send(b.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static void assertUnauthorized(HttpResponse<String> r, String message) throws Exception {
    assertEquals(401, r.statusCode(), r.body());
    assertTrue(
        r.headers().firstValue("www-authenticate").orElse("").startsWith("Bearer"),
        r.headers().toString());
    JsonNode body = JSON.readTree(r.body());
    assertEquals(message, body.get("error").asText());
  }

  @Test
  void withoutOrWithAWrongTokenEveryClosedRouteAnswers401AndChangesNothing() throws Exception {
    KvselectNode node = start("--auth-token-file", tokenFile("  " + TOKEN + "\n").toString());
    try {
      assertUnauthorized(
          call(node, "GET", "/workers", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertUnauthorized(
          call(node, "GET", "/workers", "Bearer wrong", null), "invalid bearer token");
      assertUnauthorized(
          call(node, "GET", "/workers", "Bearer " + TOKEN + "x", null), "invalid bearer token");
      assertUnauthorized(
          call(node, "GET", "/workers", "Basic " + TOKEN, null), "invalid bearer token");
      assertUnauthorized(
          call(node, "POST", "/workers", null, WORKER),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertUnauthorized(
          call(node, "POST", "/select", "Bearer nope", "{\"tokens\": [1, 2, 3]}"),
          "invalid bearer token");
      assertUnauthorized(
          call(node, "GET", "/metrics", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertUnauthorized(
          call(node, "GET", "/config", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertUnauthorized(
          call(node, "GET", "/no-such-route", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertEquals(
          List.of(),
          node.service().listWorkers(null, null),
          "a refused POST /workers registered a worker");
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void theRightTokenPassesAndHealthAndReadyAreOpenByDefault() throws Exception {
    KvselectNode node = start("--auth-token-file", tokenFile(TOKEN + "\n").toString());
    try {
      assertEquals(201, call(node, "POST", "/workers", "Bearer " + TOKEN, WORKER).statusCode());
      HttpResponse<String> list = call(node, "GET", "/workers", "bearer " + TOKEN, null);
      assertEquals(200, list.statusCode());
      assertEquals(1, JSON.readTree(list.body()).size());
      assertEquals(200, call(node, "GET", "/metrics", "Bearer " + TOKEN, null).statusCode());
      assertEquals(200, call(node, "GET", "/health", null, null).statusCode());
      assertEquals(200, call(node, "GET", "/ready", null, null).statusCode());
      assertEquals(200, call(node, "GET", "/health", "Bearer wrong", null).statusCode());
      String config = call(node, "GET", "/config", "Bearer " + TOKEN, null).body();
      assertTrue(!config.contains(TOKEN), "GET /config shows the token: " + config);
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void theStatusPageFilesAreOpenButItsDataIsNot() throws Exception {
    KvselectNode node = start("--auth-token-file", tokenFile(TOKEN).toString());
    try {
      assertEquals(
          201,
          call(
                  node,
                  "POST",
                  "/workers",
                  "Bearer " + TOKEN,
                  "{\"worker_id\": 1, \"endpoint\": \"http://private-engine-host\", \"block_size\": 16}")
              .statusCode());
      for (String asset : List.of("/ui", "/ui/", "/ui/app.js", "/ui/app.css")) {
        HttpResponse<String> r = call(node, "GET", asset, null, null);
        assertEquals(200, r.statusCode(), asset);
        assertTrue(!r.body().contains("private-engine-host"), asset + " carries the catalog");
      }
      assertUnauthorized(
          call(node, "GET", "/ui/state", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertUnauthorized(
          call(node, "GET", "/ui/app.js/x", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
      assertEquals(200, call(node, "GET", "/ui/state", "Bearer " + TOKEN, null).statusCode());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void authOpenChoosesTheOpenRoutes() throws Exception {
    KvselectNode node =
        start("--auth-token-file", tokenFile(TOKEN).toString(), "--auth-open", "health,/metrics");
    try {
      assertEquals(200, call(node, "GET", "/metrics", null, null).statusCode());
      assertEquals(200, call(node, "GET", "/health", null, null).statusCode());
      assertUnauthorized(
          call(node, "GET", "/ready", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
    node = start("--auth-token-file", tokenFile(TOKEN).toString(), "--auth-open", "none");
    try {
      assertUnauthorized(
          call(node, "GET", "/health", null, null),
          "missing bearer token (send 'Authorization: Bearer <token>')");
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void withoutATokenFileEveryRouteStaysOpen() throws Exception {
    KvselectNode node = start();
    try {
      assertEquals(200, call(node, "GET", "/workers", null, null).statusCode());
      assertEquals(200, call(node, "GET", "/metrics", "Bearer anything", null).statusCode());
    } finally {
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }
  }

  @Test
  void anEmptyOrMissingTokenFileIsAStartupErrorNamingTheFlag() throws Exception {
    Path empty = tokenFile(" \n\t\n");
    CliException e =
        assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(new String[] {"--auth-token-file", empty.toString()}, Map.of()));
    assertEquals(
        "--auth-token-file " + empty + " is empty (the token is its trimmed content)",
        e.getMessage());
    Path missing = dir.resolve("missing");
    e =
        assertThrows(
            CliException.class,
            () ->
                NodeSettings.parse(
                    new String[0], Map.of("KVSELECT_AUTH_TOKEN_FILE", missing.toString())));
    assertEquals("--auth-token-file " + missing + " is not a readable file", e.getMessage());
    e =
        assertThrows(
            CliException.class,
            () -> NodeSettings.parse(new String[] {"--auth-open", "health,/x y"}, Map.of()));
    assertTrue(
        e.getMessage().startsWith("--auth-open entry '/x y' is not a route name"), e.getMessage());
  }

  @Test
  void theTokenComesFromTheEnvironmentToo() throws Exception {
    Path f = tokenFile(TOKEN);
    NodeSettings s =
        NodeSettings.parse(
            new String[0],
            Map.of("KVSELECT_AUTH_TOKEN_FILE", f.toString(), "KVSELECT_AUTH_OPEN", "metrics"));
    assertEquals(TOKEN, s.operations().authToken());
    assertEquals(List.of("metrics"), s.operations().authOpen());
    assertTrue(
        !s.toString().contains(TOKEN) && !s.operations().toString().contains(TOKEN), s.toString());
  }
}
