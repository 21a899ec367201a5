package io.kvselect.server.metrics;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.turbo.TurboFilter;
import ch.qos.logback.core.spi.FilterReply;
import org.slf4j.Marker;

/**
 * Drops Micrometer's "This Gauge has been already registered" warning for Vert.x's own gauges
 * ({@code vertx.*}), which every node logged at start ({@code vertx.eventbus.pending} or
 * {@code vertx.eventbus.handlers}). Vert.x's Micrometer metrics register such a gauge again for
 * every handler and keep one counter per meter id themselves, so the re-registration loses no
 * value: it is by design (vertx-micrometer-metrics issue 259, Micrometer issue 6931), and the
 * warning only says so. A re-registration of any other gauge (kvselect's) is still logged. Note
 * that Micrometer logs this warning once per process and at debug level afterwards, whichever
 * gauge it is about. Configured in {@code conf/logback.xml} and the jar's {@code logback.xml}.
 * Stateless.
 */
public final class VertxGaugeWarningFilter extends TurboFilter {

  static final String LOGGER = "io.micrometer.core.instrument.MeterRegistry";
  static final String VERTX_GAUGE = "This Gauge has been already registered (MeterId{name='vertx.";

  @Override
  public FilterReply decide(
      Marker marker, Logger logger, Level level, String format, Object[] params, Throwable t) {
    if (format != null
        && logger != null
        && LOGGER.equals(logger.getName())
        && format.startsWith(VERTX_GAUGE)) {
      return FilterReply.DENY;
    }
    return FilterReply.NEUTRAL;
  }
}
