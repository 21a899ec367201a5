package io.kvselect.server.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.kvselect.server.KvselectNode;
import io.kvselect.server.config.NodeSettings;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** The one-line start-up warning for a node reachable beyond loopback without a token. */
class ExposureTest {

  @Test
  void nonLoopbackWithoutATokenWarnsInOneLine() {
    Optional<String> w = Exposure.warning("0.0.0.0", false);
    assertTrue(w.isPresent());
    assertEquals(
        "listening on 0.0.0.0 (not loopback) without --auth-token-file: any host that reaches this port"
            + " can register workers and route requests",
        w.get());
    assertTrue(Exposure.warning("10.1.2.3", false).isPresent());
    assertTrue(Exposure.warning("::", false).isPresent());
    assertTrue(Exposure.warning("kvselect.internal", false).isPresent());
  }

  @Test
  void loopbackOrATokenDoesNotWarn() {
    for (String host :
        List.of("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]", "LOCALHOST")) {
      assertEquals(Optional.empty(), Exposure.warning(host, false), host);
    }
    assertEquals(Optional.empty(), Exposure.warning("0.0.0.0", true));
  }

  /** The node logs exactly the warning line the settings call for (none on loopback). */
  @Test
  void aLoopbackNodeLogsNoExposureWarning() throws Exception {
    Logger logger =
        ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger(KvselectNode.class);
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    logger.addAppender(appender);
    try {
      NodeSettings s =
          NodeSettings.parse(
              new String[] {"--host", "127.0.0.1", "--port", "0"},
              Map.of("DYN_ROUTER_USE_KV_EVENTS", "false"));
      KvselectNode node =
          KvselectNode.start(s, 1)
              .toCompletionStage()
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS);
      node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    } finally {
      logger.detachAppender(appender);
    }
    assertEquals(
        List.of(),
        appender.list.stream()
            .filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
            .map(ILoggingEvent::getFormattedMessage)
            .toList());
  }
}
