package io.kvselect.server.epp;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The gateway's subset hint ({@code metadata_context.filter_metadata["envoy.lb.subset_hint"]
 * ["x-gateway-destination-endpoint-subset"]}): the endpoints a pick must come from, each
 * {@code ip:port} or a bare IP meaning any of its ports. Given as a list of strings or as one
 * comma-joined string. An absent hint admits every endpoint; a present one with no entry admits
 * none. Immutable.
 */
public final class SubsetHint {

  /** The hint of a request that carries none: every endpoint is admitted. */
  public static final SubsetHint ANY = new SubsetHint(null);

  /** Entries as given (trimmed, lower case), or null for {@link #ANY}. */
  private final List<String> entries;

  private SubsetHint(List<String> entries) {
    this.entries = entries;
  }

  /** A hint from its values: each a single endpoint or a comma-joined list of them; blanks are skipped. */
  public static SubsetHint of(List<String> values) {
    List<String> out = new ArrayList<>();
    for (String v : values) {
      for (String part : v.split(",")) {
        String s = part.strip().toLowerCase(Locale.ROOT);
        if (!s.isEmpty()) {
          out.add(s);
        }
      }
    }
    return new SubsetHint(List.copyOf(out));
  }

  /** Whether a hint was given. */
  public boolean present() {
    return entries != null;
  }

  /** The entries as given; empty for {@link #ANY}. */
  public List<String> entries() {
    return entries == null ? List.of() : entries;
  }

  /** Whether {@code hostPort} ({@code host:port}, IPv6 as {@code [addr]:port}) lies inside the subset. */
  public boolean admits(String hostPort) {
    if (entries == null) {
      return true;
    }
    String hp = hostPort.toLowerCase(Locale.ROOT);
    String host = Destinations.host(hp);
    for (String e : entries) {
      if (e.equals(hp)) {
        return true;
      }
      if (!Destinations.hasPort(e) && Destinations.bareHost(e).equals(host)) {
        return true;
      }
    }
    return false;
  }

  @Override
  public String toString() {
    return entries == null ? "any" : String.join(",", entries);
  }
}
