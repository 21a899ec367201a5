package io.kvselect.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.TestPlan;

/**
 * Watches every test and container of the test JVM (JUnit Jupiter and jqwik alike: it is a
 * platform listener, registered through {@code META-INF/services}). When one runs longer than
 * {@link #FIRST_DUMP_SECONDS}, and again every {@link #DUMP_EVERY_SECONDS} after that, it writes
 * the stacks of every thread of the JVM (with the monitors and locks each holds) to
 * {@code target/hang-dumps/} and one line naming the file to standard error. A test that then
 * times out has, beside its own failure message, the state of every in-process node at the time
 * it hung. At the end of the run it prints how many Vert.x blocked-thread warnings the run logged
 * ({@link BlockedThreadLog}) and which tests were running when they were logged.
 *
 * <p>Thread ownership: the timers run on one daemon thread of its own; {@code watched} is a
 * concurrent map and {@code runningTests} a concurrent set, written by the launcher's thread(s) and
 * read by that timer.
 */
public final class HangWatch implements TestExecutionListener {

  static final long FIRST_DUMP_SECONDS = Long.getLong("kvselect.test.hangDumpSeconds", 25);
  static final long DUMP_EVERY_SECONDS = 20;
  private static final Path DIR = Path.of("target", "hang-dumps");

  private final ScheduledExecutorService timer =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "kvselect-hang-watch");
            t.setDaemon(true);
            return t;
          });
  private final Map<String, ScheduledFuture<?>> watched = new ConcurrentHashMap<>();
  private final java.util.Set<String> runningTests = ConcurrentHashMap.newKeySet();

  @Override
  public void executionStarted(TestIdentifier id) {
    String name = id.getDisplayName() + " [" + id.getUniqueId() + "]";
    BlockedThreadLog.running(id.getUniqueId(), name);
    if (id.isTest()) {
      runningTests.add(id.getUniqueId());
    }
    // a container (a class's set-up, say) is dumped only while none of its tests runs: a running
    // test has its own watch
    Runnable check =
        id.isTest()
            ? () -> dump(name)
            : () -> {
              if (runningTests.isEmpty()) {
                dump(name);
              }
            };
    watched.put(
        id.getUniqueId(),
        timer.scheduleAtFixedRate(check, FIRST_DUMP_SECONDS, DUMP_EVERY_SECONDS, TimeUnit.SECONDS));
  }

  @Override
  public void executionFinished(TestIdentifier id, TestExecutionResult result) {
    BlockedThreadLog.finished(id.getUniqueId());
    runningTests.remove(id.getUniqueId());
    ScheduledFuture<?> f = watched.remove(id.getUniqueId());
    if (f != null) {
      f.cancel(false);
    }
  }

  @Override
  public void testPlanExecutionFinished(TestPlan plan) {
    System.err.println(BlockedThreadLog.summary());
    timer.shutdownNow();
  }

  private static void dump(String running) {
    try {
      Files.createDirectories(DIR);
      Path file = DIR.resolve("dump-" + System.currentTimeMillis() + ".txt");
      Files.writeString(
          file,
          "still running: " + running + "\nat " + Instant.now() + "\n\n" + threadDump(),
          StandardCharsets.UTF_8,
          StandardOpenOption.CREATE_NEW);
      System.err.println(
          "[hang-watch] still running after "
              + FIRST_DUMP_SECONDS
              + "+ s: "
              + running
              + "; thread dump in "
              + file.toAbsolutePath());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The stacks of every live thread, with the monitors and synchronizers each holds or waits for. */
  public static String threadDump() {
    StringBuilder out = new StringBuilder();
    for (ThreadInfo t : ManagementFactory.getThreadMXBean().dumpAllThreads(true, true)) {
      out.append('"').append(t.getThreadName()).append("\" ").append(t.getThreadState());
      if (t.getLockName() != null) {
        out.append(" on ").append(t.getLockName());
      }
      if (t.getLockOwnerName() != null) {
        out.append(" owned by \"").append(t.getLockOwnerName()).append('"');
      }
      out.append('\n');
      StackTraceElement[] stack = t.getStackTrace();
      for (int i = 0; i < stack.length; i++) {
        out.append("    at ").append(stack[i]).append('\n');
        for (var m : t.getLockedMonitors()) {
          if (m.getLockedStackDepth() == i) {
            out.append("      - locked ").append(m).append('\n');
          }
        }
      }
      for (var s : t.getLockedSynchronizers()) {
        out.append("    holds ").append(s).append('\n');
      }
      out.append('\n');
    }
    return out.toString();
  }
}
