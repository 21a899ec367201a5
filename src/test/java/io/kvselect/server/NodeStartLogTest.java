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

/** A node start logs no Micrometer warning (a meter registered twice). */
class NodeStartLogTest {

  @Test
  void startLogsNoMicrometerWarning() throws Exception {
    Logger micrometer = ((LoggerContext) LoggerFactory.getILoggerFactory()).getLogger("io.micrometer");
    ListAppender<ILoggingEvent> appender = new ListAppender<>();
    appender.start();
    micrometer.addAppender(appender);
    try {
      NodeSettings s = NodeSettings.parse(new String[] {"--host", "127.0.0.1", "--port", "0"}, Map.of());
      KvselectNode node = KvselectNode.start(s).toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      try {
        assertTrue(node.port() > 0);
      } finally {
        node.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
    } finally {
      micrometer.detachAppender(appender);
    }
    List<String> warnings = appender.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .map(e -> e.getLoggerName() + ": " + e.getFormattedMessage()).toList();
    assertEquals(List.of(), warnings);
  }
}
