package io.kvselect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvselect.server.config.NodeSettings;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * A node start logs no Micrometer warning: the Vert.x worker and internal blocking pools used to
 * map to one meter id, and the second registration was refused with a warning.
 */
class NodeStartLogTest {

  @Test
  void startLogsNoMicrometerWarning() throws Exception {
    Logger micrometer =
        ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("io.micrometer");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    micrometer.addAppender(appender);
    try {
      NodeSettings s =
          NodeSettings.parse(new String[] {"--host", "127.0.0.1", "--port", "0"}, Map.of());
      KvselectNode node =
          KvselectNode.start(s).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      try {
        assertTrue(node.port() > 0);
        // Micrometer warns once per JVM, so also check the cause: one pending-queue gauge per pool
        var client = java.net.http.HttpClient.newHttpClient();
        String metrics =
            client
                .send(
                    java.net.http.HttpRequest.newBuilder(
                            java.net.URI.create("http://127.0.0.1:" + node.port() + "/metrics"))
                        .build(),
                    java.net.http.HttpResponse.BodyHandlers.ofString())
                .body();
        List<String> pending =
            metrics.lines().filter(l -> l.startsWith("vertx_pool_queue_pending")).toList();
        assertTrue(
            pending.stream().anyMatch(l -> l.contains("pool_name=\"vert.x-worker-thread\""))
                && pending.stream()
                    .anyMatch(l -> l.contains("pool_name=\"vert.x-internal-blocking\"")),
            pending.toString());
      } finally {
        node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } finally {
      micrometer.detachAppender(appender);
    }
    List<String> warnings =
        appender.list.stream()
            .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
            .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage())
            .toList();
    assertEquals(List.of(), warnings);
  }
}
