package io.kvselect.tools;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.net.http.HttpConnectTimeoutException;
import java.net.http.HttpTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;

/**
 * A request a tool could not deliver: its message is one line, {@code cannot reach WHAT at URL:
 * CAUSE} (for example {@code cannot reach kvselect at http://127.0.0.1:8092/workers: connection
 * refused}), which the tools print after their name as their only output on failure. Immutable.
 */
public final class Unreachable extends IOException {

  private static final long serialVersionUID = 1L;

  /** Netty's {@code Connection refused: /127.0.0.1:8092} repeats the address the URL names. */
  private static final Pattern TRAILING_ADDRESS =
      Pattern.compile(":\\s*\\S*/[0-9A-Fa-f.:\\[\\]]+:\\d+$");

  /** {@code what} ("kvselect", "engine") at {@code url} could not be reached because of {@code cause}. */
  public Unreachable(String what, String url, Throwable cause) {
    super("cannot reach " + what + " at " + url + ": " + reason(cause), cause);
  }

  /** A short lower-case reason for {@code e}: "connection refused", "connect timed out", ... */
  static String reason(Throwable e) {
    Throwable t = unwrap(e);
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof HttpConnectTimeoutException) {
        return "connect timed out";
      }
      if (c instanceof HttpTimeoutException) {
        return "no answer in time";
      }
      if (c instanceof UnknownHostException || c instanceof UnresolvedAddressException) {
        return "unknown host";
      }
      if (c instanceof NoRouteToHostException) {
        return "no route to host";
      }
      if (c instanceof ConnectException && c.getMessage() != null && !c.getMessage().isBlank()) {
        return clean(c.getMessage());
      }
    }
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof ConnectException) {
        return "connection refused";
      }
    }
    return message(t);
  }

  /** The one-line message of {@code e} (its class name when it has none), wrappers removed. */
  public static String message(Throwable e) {
    Throwable t = unwrap(e);
    String m = t.getMessage();
    if (m == null || m.isBlank()) {
      return t.getClass().getSimpleName();
    }
    return m.strip().replaceAll("\\s*\\R\\s*", " ");
  }

  private static Throwable unwrap(Throwable e) {
    Throwable t = e;
    while ((t instanceof ExecutionException || t instanceof CompletionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }

  private static String clean(String m) {
    String s = TRAILING_ADDRESS.matcher(m.strip()).replaceFirst("");
    return s.isEmpty() ? "connection refused" : Character.toLowerCase(s.charAt(0)) + s.substring(1);
  }
}
