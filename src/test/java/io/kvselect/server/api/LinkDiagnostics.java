package io.kvselect.server.api;

import io.kvselect.server.sync.replica.ReplicaSync;
import java.util.Arrays;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.awaitility.core.ConditionEvaluationListener;
import org.awaitility.core.EvaluatedCondition;
import org.awaitility.core.TimeoutEvent;

/**
 * What to print when a replica-sync link never comes up in a test: each side's counters and
 * peers, and where every {@code kvselect-replica-sync} thread of this JVM stands, so an
 * intermittent failure leaves enough behind to find its cause.
 */
public final class LinkDiagnostics {

  private LinkDiagnostics() {}

  /** A listener that prints {@code state} and the sync threads' stacks on timeout. */
  public static ConditionEvaluationListener<Boolean> onTimeout(Supplier<String> state) {
    return new ConditionEvaluationListener<>() {
      @Override
      public void conditionEvaluated(EvaluatedCondition<Boolean> c) {}

      @Override
      public void onTimeout(TimeoutEvent e) {
        System.err.println("replica link not up: " + state.get() + "\n" + syncThreads());
      }
    };
  }

  public static String describe(String name, ReplicaSync rs) {
    return name
        + " router "
        + Long.toUnsignedString(rs.routerId())
        + " port "
        + rs.port()
        + " peers "
        + rs.peers()
        + " counters "
        + rs.countersText();
  }

  private static String syncThreads() {
    return Thread.getAllStackTraces().entrySet().stream()
        .filter(t -> t.getKey().getName().startsWith("kvselect-replica-sync"))
        .map(LinkDiagnostics::stack)
        .collect(Collectors.joining("\n", "sync threads:\n", ""));
  }

  private static String stack(Map.Entry<Thread, StackTraceElement[]> t) {
    return t.getKey().getName()
        + " "
        + t.getKey().getState()
        + "\n  at "
        + Arrays.stream(t.getValue())
            .limit(12)
            .map(String::valueOf)
            .collect(Collectors.joining("\n  at "));
  }
}
