package io.kvselect.server.config;

import io.kvselect.core.config.NearestName;
import java.util.List;
import picocli.CommandLine;

/**
 * The one-line form of a picocli parse error shared by {@code kvselect} and {@code kvselect-sim}:
 * an unknown flag gets the known flag nearest by edit distance ({@link NearestName}, the same
 * "did you mean" as misspelled environment variables). Stateless.
 */
public final class FlagSuggestion {

  private FlagSuggestion() {}

  /** picocli's message (its first line), with " (did you mean --x?)" when an unknown flag is near a known one. */
  public static String oneLine(CommandLine.ParameterException e) {
    String msg =
        e.getMessage() == null
            ? "invalid command line"
            : e.getMessage().lines().findFirst().orElse("").strip();
    String near = e instanceof CommandLine.UnmatchedArgumentException u ? nearest(u) : null;
    return near == null ? msg : msg + " (did you mean " + near + "?)";
  }

  /** The known long flag nearest to the first unknown flag, or null. */
  static String nearest(CommandLine.UnmatchedArgumentException e) {
    List<String> flags =
        e.getCommandLine().getCommandSpec().optionsMap().keySet().stream()
            .filter(n -> n.startsWith("--"))
            .toList();
    for (String arg : e.getUnmatched()) {
      if (arg.startsWith("--")) {
        int eq = arg.indexOf('=');
        return NearestName.closest(eq < 0 ? arg : arg.substring(0, eq), flags);
      }
    }
    return null;
  }
}
