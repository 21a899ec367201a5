package io.kvselect.readme;

import java.util.ArrayList;
import java.util.List;

/**
 * Splits a shell block into its commands the way bash reads them, for the subset the README uses:
 * single and double quotes may span lines, a trailing backslash continues a line, {@code #} at
 * the start of a word outside quotes starts a comment, which is dropped. Stateless.
 */
final class ShellText {

  private ShellText() {}

  /** The commands of {@code block}, comments removed, blank commands dropped, each trimmed. */
  static List<String> commands(String block) {
    List<String> out = new ArrayList<>();
    StringBuilder cmd = new StringBuilder();
    boolean single = false;
    boolean dbl = false;
    boolean comment = false;
    for (int i = 0; i < block.length(); i++) {
      char c = block.charAt(i);
      if (comment) {
        if (c == '\n') {
          comment = false;
          i--;
        }
        continue;
      }
      if (single) {
        single = c != '\'';
        cmd.append(c);
        continue;
      }
      if (c == '\\' && i + 1 < block.length()) {
        char next = block.charAt(i + 1);
        if (next == '\n' && !dbl) {
          cmd.append(' ');
        } else {
          cmd.append(c).append(next);
        }
        i++;
        continue;
      }
      if (dbl) {
        dbl = c != '"';
        cmd.append(c);
        continue;
      }
      switch (c) {
        case '\'' -> {
          single = true;
          cmd.append(c);
        }
        case '"' -> {
          dbl = true;
          cmd.append(c);
        }
        case '#' -> {
          if (cmd.length() == 0 || Character.isWhitespace(cmd.charAt(cmd.length() - 1))) {
            comment = true;
          } else {
            cmd.append(c);
          }
        }
        case '\n' -> {
          flush(cmd, out);
        }
        default -> cmd.append(c);
      }
    }
    if (single || dbl) {
      throw new IllegalArgumentException("unterminated quote in shell block:\n" + block);
    }
    flush(cmd, out);
    return out;
  }

  private static void flush(StringBuilder cmd, List<String> out) {
    String s = cmd.toString().strip();
    if (!s.isEmpty()) {
      out.add(s);
    }
    cmd.setLength(0);
  }

  /** True when {@code command} ends with a lone {@code &} (a background job). */
  static boolean background(String command) {
    return command.endsWith("&") && !command.endsWith("&&");
  }

  /** {@code command} without a trailing background {@code &}. */
  static String foreground(String command) {
    return background(command) ? command.substring(0, command.length() - 1).strip() : command;
  }

  /**
   * The program a command runs: its first word after leading {@code NAME=value} environment
   * assignments.
   */
  static String program(String command) {
    for (String w : command.split("\\s+")) {
      if (!w.matches("[A-Za-z_][A-Za-z0-9_]*=.*")) {
        return w;
      }
    }
    return "";
  }
}
