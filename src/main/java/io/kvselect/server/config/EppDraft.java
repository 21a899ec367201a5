package io.kvselect.server.config;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The {@code epp} part of {@link SettingsDraft}: the config section {@code epp}, the
 * {@code KVSELECT_EPP_*} variables and the {@link EppOptions} flags, layered in that order, each
 * value checked as it is applied and labelled with its source. Confined to the parsing thread.
 */
final class EppDraft {

  static final String PORT_ENV = "KVSELECT_EPP_PORT";
  static final String RENDER_URL_ENV = "KVSELECT_EPP_RENDER_URL";
  static final String RENDER_TIMEOUT_ENV = "KVSELECT_EPP_RENDER_TIMEOUT_SECS";
  static final String ROUTING_GROUP_HEADER_ENV = "KVSELECT_EPP_ROUTING_GROUP_HEADER";
  static final String SESSION_HEADER_ENV = "KVSELECT_EPP_SESSION_HEADER";
  static final String FALLBACKS_ENV = "KVSELECT_EPP_FALLBACKS";
  static final String MAX_BODY_ENV = "KVSELECT_EPP_MAX_BODY_BYTES";
  static final String INJECT_ENV = "KVSELECT_EPP_INJECT_TOKEN_IDS";

  /** Every variable read here, in {@code --help} order. */
  static final List<String> VARIABLES =
      List.of(
          PORT_ENV,
          RENDER_URL_ENV,
          RENDER_TIMEOUT_ENV,
          ROUTING_GROUP_HEADER_ENV,
          SESSION_HEADER_ENV,
          FALLBACKS_ENV,
          MAX_BODY_ENV,
          INJECT_ENV);

  static final String SECTION = "epp";
  private static final Set<String> KEYS =
      Set.of(
          "port",
          "render_url",
          "render_timeout_secs",
          "routing_group_header",
          "session_header",
          "fallbacks",
          "max_body_bytes",
          "inject_token_ids");

  /** An HTTP field name (RFC 9110 token), stored lower case as HTTP/2 carries it. */
  private static final Pattern HEADER = Pattern.compile("[!#$%&'*+.^_`|~0-9a-z-]+");

  private static final double MAX_TIMEOUT_SECS = 3600.0;
  private static final int MIN_BODY = 1024;
  private static final int MAX_BODY = 256 << 20;

  private Integer port;
  private String renderUrl;
  private double renderTimeoutSecs = 5.0;
  private String routingGroupHeader = "x-kvselect-routing-group";
  private String sessionHeader = "x-session-id";
  private int fallbacks = 2;
  private int maxBodyBytes = 16 << 20;
  private boolean injectTokenIds;

  /** Applies the {@code epp} section of a config document (absent: nothing changes). */
  void applyJson(Map<String, Object> section) {
    for (String key : section.keySet()) {
      if (!KEYS.contains(key)) {
        throw new CliException("config field " + SECTION + "." + key + " is not a known setting");
      }
    }
    if (section.containsKey("port")) {
      Object v = section.get("port");
      port = v == null ? null : (int) range(field("port"), integer(field("port"), v), 0, 65535);
    }
    if (section.containsKey("render_url")) {
      Object v = section.get("render_url");
      if (v != null && !(v instanceof String)) {
        throw new CliException(field("render_url") + " must be an http(s) URL or null");
      }
      renderUrl = v == null ? null : url(field("render_url"), (String) v);
    }
    if (section.containsKey("render_timeout_secs")) {
      Object v = section.get("render_timeout_secs");
      if (!(v instanceof Number n)) {
        throw new CliException(field("render_timeout_secs") + " must be a number of seconds");
      }
      renderTimeoutSecs = timeout(field("render_timeout_secs"), n.doubleValue());
    }
    if (section.containsKey("routing_group_header")) {
      routingGroupHeader =
          header(field("routing_group_header"), section.get("routing_group_header"));
    }
    if (section.containsKey("session_header")) {
      sessionHeader = header(field("session_header"), section.get("session_header"));
    }
    if (section.containsKey("fallbacks")) {
      fallbacks =
          (int)
              range(
                  field("fallbacks"), integer(field("fallbacks"), section.get("fallbacks")), 0, 8);
    }
    if (section.containsKey("max_body_bytes")) {
      maxBodyBytes =
          (int)
              range(
                  field("max_body_bytes"),
                  integer(field("max_body_bytes"), section.get("max_body_bytes")),
                  MIN_BODY,
                  MAX_BODY);
    }
    if (section.containsKey("inject_token_ids")) {
      if (!(section.get("inject_token_ids") instanceof Boolean b)) {
        throw new CliException(field("inject_token_ids") + " must be true or false");
      }
      injectTokenIds = b;
    }
  }

  /** Applies the {@code KVSELECT_EPP_*} variables that are set and not blank. */
  void applyEnv(Map<String, String> env) {
    String v;
    if ((v = value(env, PORT_ENV)) != null) {
      port = (int) range(PORT_ENV, parseLong(PORT_ENV, v), 0, 65535);
    }
    if ((v = value(env, RENDER_URL_ENV)) != null) {
      renderUrl = url(RENDER_URL_ENV, v);
    }
    if ((v = value(env, RENDER_TIMEOUT_ENV)) != null) {
      try {
        renderTimeoutSecs = timeout(RENDER_TIMEOUT_ENV, Double.parseDouble(v));
      } catch (NumberFormatException e) {
        throw new CliException(
            RENDER_TIMEOUT_ENV + " must be a number of seconds, got '" + v + "'");
      }
    }
    if ((v = value(env, ROUTING_GROUP_HEADER_ENV)) != null) {
      routingGroupHeader = header(ROUTING_GROUP_HEADER_ENV, v);
    }
    if ((v = value(env, SESSION_HEADER_ENV)) != null) {
      sessionHeader = header(SESSION_HEADER_ENV, v);
    }
    if ((v = value(env, FALLBACKS_ENV)) != null) {
      fallbacks = (int) range(FALLBACKS_ENV, parseLong(FALLBACKS_ENV, v), 0, 8);
    }
    if ((v = value(env, MAX_BODY_ENV)) != null) {
      maxBodyBytes = (int) range(MAX_BODY_ENV, parseLong(MAX_BODY_ENV, v), MIN_BODY, MAX_BODY);
    }
    if ((v = value(env, INJECT_ENV)) != null) {
      if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
        throw new CliException(INJECT_ENV + " must be true or false, got '" + v + "'");
      }
      injectTokenIds = Boolean.parseBoolean(v);
    }
  }

  /** Applies the flags that were given. */
  void applyFlags(EppOptions o) {
    if (o.port != null) {
      port = (int) range("--epp-port", o.port, 0, 65535);
    }
    if (o.renderUrl != null) {
      renderUrl = url("--epp-render-url", o.renderUrl);
    }
    if (o.renderTimeoutSecs != null) {
      renderTimeoutSecs = timeout("--epp-render-timeout-secs", o.renderTimeoutSecs);
    }
    if (o.routingGroupHeader != null) {
      routingGroupHeader = header("--epp-routing-group-header", o.routingGroupHeader);
    }
    if (o.sessionHeader != null) {
      sessionHeader = header("--epp-session-header", o.sessionHeader);
    }
    if (o.fallbacks != null) {
      fallbacks = (int) range("--epp-fallbacks", o.fallbacks, 0, 8);
    }
    if (o.maxBodyBytes != null) {
      maxBodyBytes = (int) range("--epp-max-body-bytes", o.maxBodyBytes, MIN_BODY, MAX_BODY);
    }
    if (o.injectTokenIds != null) {
      injectTokenIds = o.injectTokenIds;
    }
  }

  EppSettings build() {
    return new EppSettings(
        port,
        renderUrl,
        renderTimeoutSecs,
        routingGroupHeader,
        sessionHeader,
        fallbacks,
        maxBodyBytes,
        injectTokenIds);
  }

  /** The built-in defaults, for {@code --help}. */
  static EppSettings defaults() {
    return new EppDraft().build();
  }

  private static String field(String key) {
    return "config field " + SECTION + "." + key;
  }

  private static String value(Map<String, String> env, String name) {
    String v = env.get(name);
    return v == null || v.isBlank() ? null : v.strip();
  }

  private static long integer(String label, Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short) {
      return ((Number) v).longValue();
    }
    throw new CliException(label + " must be an integer");
  }

  private static long parseLong(String label, String v) {
    try {
      return Long.parseLong(v);
    } catch (NumberFormatException e) {
      throw new CliException(label + " must be an integer, got '" + v + "'");
    }
  }

  private static long range(String label, long v, long min, long max) {
    if (v < min || v > max) {
      throw new CliException(label + " must be between " + min + " and " + max + ", got " + v);
    }
    return v;
  }

  private static double timeout(String label, double v) {
    if (!(v > 0.0) || v > MAX_TIMEOUT_SECS) {
      throw new CliException(
          label + " must be > 0 and <= " + (long) MAX_TIMEOUT_SECS + " seconds, got " + v);
    }
    return v;
  }

  /** An absolute http(s) URL with a host, kept without its trailing slashes. */
  static String url(String label, String raw) {
    String s = raw.strip();
    URI uri;
    try {
      uri = new URI(s);
    } catch (URISyntaxException e) {
      uri = null;
    }
    if (uri == null
        || uri.getHost() == null
        || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
        || uri.getRawQuery() != null) {
      throw new CliException(
          label + " '" + raw + "' is not an http(s) base URL (such as http://renderer:8000)");
    }
    while (s.endsWith("/")) {
      s = s.substring(0, s.length() - 1);
    }
    return s;
  }

  private static String header(String label, Object v) {
    if (!(v instanceof String s) || s.isBlank()) {
      throw new CliException(label + " must be a non-empty header name");
    }
    String h = s.strip().toLowerCase(Locale.ROOT);
    if (!HEADER.matcher(h).matches()) {
      throw new CliException(label + " '" + s + "' is not an HTTP header name");
    }
    return h;
  }
}
