package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The fenced code blocks of the repository's {@code README.md} and the rules that decide which of
 * them a test runs.
 *
 * <p>Every fence needs an info string. {@code bash}/{@code sh}/{@code shell} blocks are run by
 * {@link ReadmeShellBlocksIT}, {@code java} blocks by {@link ReadmeJavaBlocksTest}; {@code text},
 * {@code json} and the other {@link #DATA} languages are output or listings and never run. Any
 * other language fails the tests: they cannot run it.
 *
 * <p>A block that claims to run but must not be run is marked by an HTML comment on the
 * non-blank line right before its fence: {@code <!-- not run: REASON -->} skips the whole block;
 * when {@code REASON} contains double-quoted strings, only the block's commands that start with
 * one of those strings are skipped (each string must match a command). The reason is mandatory.
 */
final class ReadmeBlocks {

  static final Set<String> SHELL = Set.of("bash", "sh", "shell");
  static final Set<String> JAVA = Set.of("java");
  static final Set<String> DATA = Set.of("text", "json", "yaml", "properties", "xml");

  private static final Pattern FENCE = Pattern.compile("^```\\s*(\\S*)\\s*$");
  private static final Pattern NOT_RUN = Pattern.compile("^<!--\\s*not run:(.*?)-->\\s*$");
  private static final Pattern QUOTED = Pattern.compile("\"([^\"]+)\"");

  private ReadmeBlocks() {}

  /**
   * One fenced block; immutable.
   *
   * @param line the 1-based line of the opening fence
   * @param heading the nearest Markdown heading above it ("" at the top)
   * @param notRun the reason of a {@code not run} marker, or null when unmarked
   * @param lines the block's content lines, without the fences
   */
  record Block(int line, String info, String heading, String notRun, List<String> lines) {

    boolean skippedWhole() {
      return notRun != null && skippedPrefixes().isEmpty();
    }

    /** The command prefixes a {@code not run} marker names (empty when it names none). */
    List<String> skippedPrefixes() {
      List<String> out = new ArrayList<>();
      if (notRun != null) {
        Matcher m = QUOTED.matcher(notRun);
        while (m.find()) {
          out.add(m.group(1));
        }
      }
      return out;
    }

    String where() {
      return "README.md:"
          + line
          + " ("
          + (heading.isEmpty() ? "top" : heading)
          + ", ```"
          + info
          + ")";
    }

    String text() {
      return String.join("\n", lines);
    }
  }

  static Path readme() {
    Path p = Path.of("README.md").toAbsolutePath();
    assertTrue(Files.isRegularFile(p), "README.md not found at " + p);
    return p;
  }

  static List<Block> read(Path readme) {
    List<String> all;
    try {
      all = Files.readAllLines(readme);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<Block> blocks = new ArrayList<>();
    String heading = "";
    String previous = "";
    for (int i = 0; i < all.size(); i++) {
      String l = all.get(i);
      Matcher open = FENCE.matcher(l);
      if (!open.matches()) {
        if (l.startsWith("#")) {
          heading = l.replaceFirst("^#+\\s*", "");
        }
        if (!l.isBlank()) {
          previous = l.trim();
        }
        continue;
      }
      int start = i + 1;
      String info = open.group(1);
      List<String> body = new ArrayList<>();
      i++;
      while (i < all.size() && !all.get(i).startsWith("```")) {
        body.add(all.get(i));
        i++;
      }
      if (i >= all.size()) {
        fail("README.md:" + start + ": unclosed code fence");
      }
      String notRun = null;
      Matcher marker = NOT_RUN.matcher(previous);
      if (marker.matches()) {
        notRun = marker.group(1).trim();
        if (notRun.isEmpty()) {
          fail("README.md:" + start + ": a not-run marker must give its reason");
        }
      }
      if (info.isEmpty()) {
        fail(
            "README.md:"
                + start
                + ": a code fence without a language; use ```text for output or"
                + " listings, a shell or java fence for code the tests run");
      }
      blocks.add(new Block(start, info, heading, notRun, List.copyOf(body)));
      previous = "```";
    }
    return blocks;
  }

  /** The blocks in {@code languages}, failing on a language that is neither run nor data. */
  static List<Block> runnable(Set<String> languages) {
    List<Block> out = new ArrayList<>();
    for (Block b : read(readme())) {
      if (!SHELL.contains(b.info())
          && !JAVA.contains(b.info())
          && !DATA.contains(b.info())
          && b.notRun() == null) {
        fail(
            b.where()
                + ": the tests cannot run a ```"
                + b.info()
                + " block; mark it"
                + " <!-- not run: reason --> or use ```text");
      }
      if (languages.contains(b.info())) {
        out.add(b);
      }
    }
    return out;
  }
}
