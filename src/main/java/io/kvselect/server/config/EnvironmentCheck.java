package io.kvselect.server.config;

import io.kvselect.core.config.NearestName;
import io.kvselect.core.config.RouterConfigLoader;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The environment variables kvselect reads, and the check that finds misspelled ones: every
 * {@code DYN_ROUTER_*} or {@code KVSELECT_*} variable that no part of kvselect reads. Stateless.
 */
public final class EnvironmentCheck {

  /** Prefixes owned by kvselect: an unknown variable with one of them is almost surely a typo. */
  static final List<String> PREFIXES = List.of("DYN_ROUTER_", "KVSELECT_");

  /** The variables the launcher scripts read. */
  static final List<String> SCRIPT_VARIABLES =
      List.of("KVSELECT_JAR", "KVSELECT_JAVA_OPTS", "KVSELECT_BASELINE_JAR");

  private EnvironmentCheck() {}

  /** Every variable kvselect or its scripts read, router knobs first. */
  public static Set<String> known() {
    Set<String> names = new LinkedHashSet<>(RouterConfigLoader.environmentVariables());
    names.add(SettingsDraft.QUEUE_TIMEOUT_ENV);
    names.addAll(OperationsDraft.VARIABLES);
    names.addAll(EppDraft.VARIABLES);
    names.addAll(io.kvselect.server.cluster.ClusterSettings.ENVIRONMENT);
    names.addAll(SCRIPT_VARIABLES);
    return names;
  }

  /** The variables of {@code env} that carry a kvselect prefix but are not read, sorted. */
  public static List<String> unknown(Map<String, String> env) {
    Set<String> known = known();
    Set<String> out = new TreeSet<>();
    for (String name : env.keySet()) {
      if (PREFIXES.stream().anyMatch(name::startsWith) && !known.contains(name)) {
        out.add(name);
      }
    }
    return List.copyOf(out);
  }

  /** The known name nearest to {@code name} by edit distance, or null when none is within a third of its length. */
  public static String closest(String name) {
    return NearestName.closest(name, known());
  }

  /** One warning line per unknown variable of {@code env}. */
  public static List<String> warnings(Map<String, String> env) {
    List<String> out = new ArrayList<>();
    for (String name : unknown(env)) {
      String near = closest(name);
      out.add(
          "unknown environment variable "
              + name
              + " is ignored"
              + (near == null ? "" : " (did you mean " + near + "?)"));
    }
    return out;
  }

  /** The {@code --help} footer: every variable with its choices and built-in default. */
  public static List<String> helpFooter() {
    List<String> lines = new ArrayList<>();
    lines.add("");
    lines.add("Environment variables and [defaults]; an unknown DYN_ROUTER_* or KVSELECT_*");
    lines.add("variable is warned about at start:");
    for (RouterConfigLoader.VariableHelp v : RouterConfigLoader.environmentHelp()) {
      lines.add(String.format(Locale.ROOT, "  %-52s %s", v.variable(), v.dflt()));
      if (v.note() != null) {
        lines.add("      " + v.note());
      }
    }
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            SettingsDraft.QUEUE_TIMEOUT_ENV,
            SettingsDraft.fromDefaults().build(false, false).routerQueueTimeoutSecs()));
    Map<String, Object> ops = OperationsDraft.defaults().configJson();
    for (String name : OperationsDraft.VARIABLES) {
      String key = name.substring("KVSELECT_".length()).toLowerCase(Locale.ROOT);
      Object v = ops.get(key);
      lines.add(
          String.format(
              Locale.ROOT,
              "  %-52s %s",
              name,
              shown(
                  v instanceof List<?> l
                      ? String.join(",", l.stream().map(Object::toString).toList())
                      : v)));
    }
    Map<String, Object> epp = EppDraft.defaults().configJson();
    for (String name : EppDraft.VARIABLES) {
      lines.add(
          String.format(
              Locale.ROOT,
              "  %-52s %s",
              name,
              shown(epp.get(name.substring("KVSELECT_EPP_".length()).toLowerCase(Locale.ROOT)))));
    }
    io.kvselect.server.cluster.ClusterSettings cluster =
        SettingsDraft.fromDefaults().build(false, false).cluster();
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.NAME_ENV,
            cluster.name()));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.MEMBERS_ENV,
            String.join(",", cluster.members())));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.PORT_ENV,
            cluster.port()));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.HOST_ENV,
            cluster.host()));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.BUS_PORT_ENV,
            cluster.busPort()));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.RECONCILE_ENV,
            cluster.reconcileIntervalSecs()));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.CALL_BUDGET_ENV,
            cluster.callBudgetMillis()));
    lines.add(
        String.format(
            Locale.ROOT,
            "  %-52s [%s]",
            io.kvselect.server.cluster.ClusterSettings.FAILURE_TIMEOUT_ENV,
            cluster.failureTimeoutSecs()));
    lines.add(String.format(Locale.ROOT, "  %-52s %s", "KVSELECT_JAVA_OPTS", "[none] JVM options"));
    lines.add(String.format(Locale.ROOT, "  %-52s %s", "KVSELECT_JAR", "[built jar]"));
    lines.add(String.format(Locale.ROOT, "  %-52s %s", "KVSELECT_BASELINE_JAR", "[none]"));
    lines.add("KVSELECT_JAVA_OPTS is passed to java by bin/kvselect (e.g. -Xmx2g); KVSELECT_JAR");
    lines.add("overrides the jar it runs; KVSELECT_BASELINE_JAR is read by the benchmark scripts.");
    return lines;
  }

  private static String shown(Object value) {
    return "[" + (value == null ? "unset" : value) + "]";
  }
}
