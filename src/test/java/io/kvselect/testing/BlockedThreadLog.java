package io.kvselect.testing;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Collects the warnings of Vert.x's blocked-thread checker ({@code logback-test.xml} attaches it to
 * {@code io.vertx.core.internal.threadchecker.BlockedThreadChecker}): each is kept with the tests
 * that were running when it was logged, and {@link HangWatch} prints the tally when the run ends.
 * A warning means an event loop (or a worker) of an in-process node or client was held past the
 * checker's limit: the requests queued behind it waited.
 *
 * <p>Thread ownership: all state is static and concurrent (the appender is called on the logging
 * thread, {@link #running} and {@link #finished} on the launcher's thread).
 */
public final class BlockedThreadLog extends AppenderBase<ILoggingEvent> {

  private static final Map<String, String> RUNNING = new ConcurrentHashMap<>();
  private static final List<String> SEEN =
      java.util.Collections.synchronizedList(new ArrayList<>());

  static void running(String id, String name) {
    RUNNING.put(id, name);
  }

  static void finished(String id) {
    RUNNING.remove(id);
  }

  /** The warnings logged so far, each with the tests running at the time. */
  public static List<String> warnings() {
    synchronized (SEEN) {
      return List.copyOf(SEEN);
    }
  }

  static String summary() {
    List<String> all = warnings();
    StringBuilder b =
        new StringBuilder("[hang-watch] blocked-thread warnings in this test JVM: " + all.size());
    for (String w : all) {
      b.append("\n  ").append(w);
    }
    return b.toString();
  }

  @Override
  protected void append(ILoggingEvent e) {
    String msg = e.getFormattedMessage();
    int nl = msg.indexOf('\n');
    SEEN.add((nl < 0 ? msg : msg.substring(0, nl)) + " during " + RUNNING.values());
  }
}
