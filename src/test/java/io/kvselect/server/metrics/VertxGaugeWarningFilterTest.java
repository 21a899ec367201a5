package io.kvselect.server.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/** The node's logging configurations drop Micrometer's re-registration warning for Vert.x gauges only. */
class VertxGaugeWarningFilterTest {

  private static final String SUFFIX =
      "), the registration will be ignored. Note that subsequent logs will be"
          + " logged at debug level.";

  @ParameterizedTest
  @ValueSource(strings = {"conf/logback.xml", "src/main/resources/logback.xml"})
  void aVertxGaugeWarningIsDroppedAndEveryOtherWarningKept(String file) throws Exception {
    LoggerContext ctx = new LoggerContext();
    JoranConfigurator c = new JoranConfigurator();
    c.setContext(ctx);
    c.doConfigure(Path.of(file).toFile());
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.setContext(ctx);
    seen.start();
    ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME).addAppender(seen);
    var registryLog = ctx.getLogger(VertxGaugeWarningFilter.LOGGER);

    registryLog.warn(
        "This Gauge has been already registered (MeterId{name='vertx.eventbus.pending', tags=[]}"
            + SUFFIX);
    registryLog.warn(
        "This Gauge has been already registered (MeterId{name='vertx.eventbus.handlers', tags=[]}"
            + SUFFIX);
    assertEquals(List.of(), seen.list, file + " let a Vert.x gauge's warning through");

    registryLog.warn(
        "This Gauge has been already registered (MeterId{name='kvselect_loads', tags=[]}" + SUFFIX);
    registryLog.warn(
        "A MeterFilter is being configured after a Meter has been registered to this registry.");
    ctx.getLogger("io.kvselect.Other")
        .warn("This Gauge has been already registered (MeterId{name='vertx.x', tags=[]}");
    assertEquals(3, seen.list.size(), file + ": " + seen.list);
    ctx.stop();
  }

  @Test
  void micrometersOwnReRegistrationMessageIsTheOneDropped() {
    // the real message of the Micrometer on the classpath (it warns once per process, then logs
    // at debug level: the logger is lowered to debug here so that either is seen)
    LoggerContext global = (LoggerContext) LoggerFactory.getILoggerFactory();
    ch.qos.logback.classic.Logger registryLog = global.getLogger(VertxGaugeWarningFilter.LOGGER);
    Level was = registryLog.getLevel();
    ListAppender<ILoggingEvent> seen = new ListAppender<>();
    seen.setContext(global);
    seen.start();
    registryLog.addAppender(seen);
    registryLog.setLevel(Level.DEBUG);
    VertxGaugeWarningFilter filter = new VertxGaugeWarningFilter();
    filter.setContext(global);
    try {
      SimpleMeterRegistry registry = new SimpleMeterRegistry();
      Gauge.builder("vertx.kvselect.test", new AtomicLong(), AtomicLong::get).register(registry);
      Gauge.builder("vertx.kvselect.test", new AtomicLong(), AtomicLong::get).register(registry);
      assertEquals(1, seen.list.size(), "Micrometer logged no re-registration: " + seen.list);
      String message = seen.list.get(0).getFormattedMessage();
      assertTrue(message.startsWith(VertxGaugeWarningFilter.VERTX_GAUGE), message);

      filter.start();
      global.addTurboFilter(filter);
      Gauge.builder("vertx.kvselect.test", new AtomicLong(), AtomicLong::get).register(registry);
      assertEquals(1, seen.list.size(), "the filter let it through: " + seen.list);
      Gauge.builder("kvselect.test", new AtomicLong(), AtomicLong::get).register(registry);
      Gauge.builder("kvselect.test", new AtomicLong(), AtomicLong::get).register(registry);
      assertEquals(
          2, seen.list.size(), "a kvselect gauge's re-registration was dropped: " + seen.list);
    } finally {
      global.getTurboFilterList().remove(filter);
      registryLog.detachAppender(seen);
      registryLog.setLevel(was);
    }
  }
}
