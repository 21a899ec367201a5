package io.kvselect.server.config;

/**
 * A rejected command line, environment variable or config-file field. The message is one line
 * and names the flag ({@code --port}), the variable ({@code DYN_ROUTER_TEMPERATURE}) or the dotted
 * JSON field ({@code config field router.overlap_score_credit}); the launcher prints it and exits
 * with a usage error.
 */
public final class CliException extends RuntimeException {

  public CliException(String message) {
    super(firstLine(message), null, false, false);
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "invalid command line";
    }
    int nl = message.indexOf('\n');
    return (nl < 0 ? message : message.substring(0, nl)).strip();
  }
}
