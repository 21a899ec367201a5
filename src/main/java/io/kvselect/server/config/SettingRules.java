package io.kvselect.server.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import io.kvselect.core.config.PolicySettings;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The per-setting rules behind {@link SettingsDraft}: how one node value is read from a config
 * field or a flag and checked (host names, integers in a range, finite positive seconds, peer
 * URLs and endpoints, the policy and tracking-hash names, the keyed tracking key file, and a
 * config file's JSON syntax error as a line and column), each failure a {@link CliException}
 * naming the value's source by the label it is given ({@code --flag} or {@code config field
 * section.key}). Which layer wins is {@link SettingsDraft}'s; the rules are the same for every
 * layer. Stateless.
 */
final class SettingRules {

  static final String KEYED = "keyed-xxh3-v1";
  private static final int KEY_BYTES = 32;

  private SettingRules() {}

  /**
   * A JSON syntax error as "line L, column C: what", without the parser's internals (character
   * codes, source descriptions); the line and column are 1-based.
   */
  static String jsonError(JsonProcessingException e) {
    String what = e.getOriginalMessage() == null ? "invalid JSON" : e.getOriginalMessage();
    what =
        what.lines()
            .findFirst()
            .orElse("")
            .replaceAll("\\(('.+?') \\(code \\d+\\)\\)", "$1")
            .replaceAll("\\(CTRL-CHAR, code (\\d+)\\)", "(control character $1)")
            .replaceAll(
                "\\(start marker at \\[Source: .*?; line: (\\d+), column: (\\d+)\\]\\)",
                "(opened at line $1, column $2)")
            .strip();
    what =
        what.isEmpty() ? "invalid JSON" : Character.toLowerCase(what.charAt(0)) + what.substring(1);
    var at = e.getLocation();
    return at == null || at.getLineNr() < 1
        ? what
        : "line " + at.getLineNr() + ", column " + at.getColumnNr() + ": " + what;
  }

  /** {@code --policy}: one of the selection policies' names. */
  static String policy(String name) {
    if (!PolicySettings.NAMES.contains(name)) {
      throw new CliException(
          "--policy must be one of "
              + String.join(", ", PolicySettings.NAMES)
              + ", got '"
              + name
              + "'");
    }
    return name;
  }

  /** The tracking flags taken alone: a known hash name, a key id not blank (null = not given). */
  static void trackingFlags(String hash, String keyId) {
    if (hash != null && !Set.of("public-xxh3-v1", KEYED).contains(hash)) {
      throw new CliException(
          "--router-tracking-hash must be one of public-xxh3-v1, "
              + KEYED
              + ", got '"
              + hash
              + "'");
    }
    if (keyId != null && keyId.isBlank()) {
      throw new CliException("--router-tracking-key-id must not be empty");
    }
  }

  /**
   * The merged tracking settings: keyed tracking needs a readable key file of exactly 32 bytes
   * (one stat) and a key id; the public hash needs neither.
   */
  static void trackingKey(String hash, String file, String keyId) {
    if (KEYED.equals(hash)) {
      if (file == null) {
        throw new CliException(
            "--router-tracking-hash "
                + KEYED
                + " requires --router-tracking-key-file (or DYN_ROUTER_TRACKING_KEY_FILE)");
      }
      Path path = Path.of(file);
      long size;
      try {
        size = Files.isRegularFile(path) && Files.isReadable(path) ? Files.size(path) : -1;
      } catch (IOException e) {
        size = -1;
      }
      if (size < 0) {
        throw new CliException("--router-tracking-key-file " + file + " is not a readable file");
      }
      if (size != KEY_BYTES) {
        throw new CliException(
            "--router-tracking-key-file "
                + file
                + " must hold exactly "
                + KEY_BYTES
                + " bytes, got "
                + size);
      }
      if (keyId == null) {
        throw new CliException(
            "--router-tracking-hash "
                + KEYED
                + " requires --router-tracking-key-id (or DYN_ROUTER_TRACKING_KEY_ID)");
      }
    }
  }

  /** The named object of {@code root}, empty when absent; non-objects are rejected. */
  @SuppressWarnings("unchecked")
  static Map<String, Object> section(Map<String, Object> root, String name) {
    Object s = root.get(name);
    if (s == null) {
      return Map.of();
    }
    if (!(s instanceof Map)) {
      throw new CliException("config field " + name + " must be an object");
    }
    return (Map<String, Object>) s;
  }

  static String host(String label, Object v) {
    if (!(v instanceof String s) || s.isBlank()) {
      throw new CliException(label + " must be a non-empty host name or address");
    }
    return s.strip();
  }

  /** Jackson decodes JSON integers as Integer or Long; fractions and strings are rejected. */
  static long integer(String label, Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short) {
      return ((Number) v).longValue();
    }
    throw new CliException(label + " must be an integer");
  }

  static double number(String label, Object v) {
    if (v instanceof Number n) {
      return n.doubleValue();
    }
    throw new CliException(label + " must be a number");
  }

  static long range(String label, long v, long min, long max) {
    if (v < min || v > max) {
      throw new CliException(label + " must be between " + min + " and " + max + ", got " + v);
    }
    return v;
  }

  static double ttl(String label, double v) {
    if (!(v > 0.0) || Double.isInfinite(v)) {
      throw new CliException(label + " must be a finite number > 0, got " + v);
    }
    return v;
  }

  static List<String> strings(String label, Object v) {
    if (v instanceof List<?> list) {
      List<String> out = new ArrayList<>(list.size());
      for (Object o : list) {
        if (!(o instanceof String s)) {
          throw new CliException(label + " must be an array of strings");
        }
        out.add(s);
      }
      return out;
    }
    throw new CliException(label + " must be an array of strings");
  }

  /** Startup-recovery peers: absolute http(s) URLs with a host; any path is kept. */
  static List<String> httpUrls(String label, List<String> values) {
    List<String> out = new ArrayList<>(values.size());
    for (String raw : values) {
      URI uri = uri(raw);
      if (uri == null
          || uri.getHost() == null
          || !("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))) {
        throw new CliException(label + " entry '" + raw + "' is not an http(s) URL");
      }
      out.add(raw.strip());
    }
    return List.copyOf(out);
  }

  /** Replica-sync peers: {@code tcp://host:port} with a port in 1..65535 and no path. */
  static List<String> tcpEndpoints(String label, List<String> values) {
    List<String> out = new ArrayList<>(values.size());
    for (String raw : values) {
      URI uri = uri(raw);
      if (uri == null
          || !"tcp".equals(uri.getScheme())
          || uri.getHost() == null
          || uri.getPort() < 1
          || uri.getPort() > 65535
          || !(uri.getRawPath() == null || uri.getRawPath().isEmpty())) {
        throw new CliException(label + " entry '" + raw + "' is not a tcp://host:port endpoint");
      }
      out.add(raw.strip());
    }
    return List.copyOf(out);
  }

  static URI uri(String raw) {
    try {
      return new URI(raw.strip());
    } catch (URISyntaxException e) {
      return null;
    }
  }
}
