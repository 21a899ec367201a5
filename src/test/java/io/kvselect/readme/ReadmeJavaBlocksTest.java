package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import io.kvselect.readme.ReadmeBlocks.Block;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compiles and runs every {@code java} block of the README as a user would paste it: the block's
 * {@code import} lines head a generated class, the rest becomes the body of its
 * {@code main(String[])}, compiled with the system Java compiler against the test class path and
 * run in this JVM. The block must complete without an exception and print what its
 * {@code // prints: TEXT} comments promise, one stdout line per comment, in order; a block
 * without such a comment fails, so that what it does is always checked.
 */
class ReadmeJavaBlocksTest {

  private static final Pattern PRINTS = Pattern.compile("//\\s*prints:\\s*(.+?)\\s*$");
  private static final Duration RUN_LIMIT = Duration.ofSeconds(30);

  @TestFactory
  Stream<DynamicTest> everyJavaBlockCompilesRunsAndPrintsWhatItPromises(@TempDir Path out) {
    List<Block> blocks = ReadmeBlocks.runnable(ReadmeBlocks.JAVA);
    assertFalse(blocks.isEmpty(), "README.md has no java block");
    return blocks.stream()
        .map(
            b ->
                dynamicTest(
                    b.where(),
                    () -> {
                      if (b.notRun() != null) {
                        assertTrue(
                            b.skippedPrefixes().isEmpty(),
                            b.where()
                                + ": a java block is run or skipped whole; quoted prefixes apply to shell blocks");
                        return;
                      }
                      runBlock(b, out.resolve("line" + b.line()));
                    }));
  }

  private static void runBlock(Block b, Path classes) throws Exception {
    String className = "ReadmeBlockAtLine" + b.line();
    String source = wrap(b, className);
    compile(b, className, source, classes);
    String printed = runMain(b, className, classes, source);
    List<String> promised = new ArrayList<>();
    for (String l : b.lines()) {
      Matcher m = PRINTS.matcher(l);
      if (m.find()) {
        promised.add(m.group(1));
      }
    }
    assertFalse(
        promised.isEmpty(),
        b.where()
            + ": the block ran, but has no // prints: comment saying"
            + " what it must print, so nothing checks what it did");
    List<String> lines = printed.lines().map(String::strip).collect(Collectors.toList());
    int from = 0;
    for (String p : promised) {
      int at = lines.subList(from, lines.size()).indexOf(p);
      if (at < 0) {
        fail(
            b.where()
                + ": expected the line \""
                + p
                + "\" (in order) in what the block printed:\n"
                + printed);
      }
      from += at + 1;
    }
  }

  /** The block as a class: its imports first, every other line inside {@code main}. */
  static String wrap(Block b, String className) {
    StringBuilder imports = new StringBuilder();
    StringBuilder body = new StringBuilder();
    for (String l : b.lines()) {
      if (l.strip().startsWith("import ")) {
        imports.append(l).append('\n');
      } else {
        body.append("    ").append(l).append('\n');
      }
    }
    return imports
        + "\npublic final class "
        + className
        + " {\n"
        + "  public static void main(String[] args) throws Exception {\n"
        + body
        + "  }\n}\n";
  }

  private static void compile(Block b, String className, String source, Path classes)
      throws Exception {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    assertNotNull(javac, "no system Java compiler (a JRE without javac runs these tests)");
    Files.createDirectories(classes);
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    JavaFileObject unit =
        new SimpleJavaFileObject(
            URI.create("string:///" + className + ".java"), JavaFileObject.Kind.SOURCE) {
          @Override
          public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return source;
          }
        };
    List<String> options =
        List.of(
            "--release",
            "17",
            "-proc:none",
            "-classpath",
            System.getProperty("java.class.path"),
            "-d",
            classes.toString());
    try (StandardJavaFileManager files =
        javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      boolean ok = javac.getTask(null, files, diagnostics, options, null, List.of(unit)).call();
      if (!ok) {
        String messages =
            diagnostics.getDiagnostics().stream()
                .map(d -> "line " + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT))
                .collect(Collectors.joining("\n"));
        fail(
            b.where()
                + " does not compile:\n"
                + messages
                + "\n--- generated source ---\n"
                + numbered(source));
      }
    }
  }

  /** Runs the generated {@code main} with a time limit and returns what it printed. */
  private static String runMain(Block b, String className, Path classes, String source)
      throws Exception {
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    PrintStream original = System.out;
    try (URLClassLoader loader =
        new URLClassLoader(
            new URL[] {classes.toUri().toURL()}, ReadmeJavaBlocksTest.class.getClassLoader())) {
      Method main = loader.loadClass(className).getMethod("main", String[].class);
      System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
      assertTimeoutPreemptively(
          RUN_LIMIT,
          () -> {
            try {
              main.invoke(null, (Object) new String[0]);
            } catch (InvocationTargetException e) {
              throw new AssertionError(
                  b.where()
                      + " compiled but threw "
                      + e.getCause()
                      + "\n--- generated source ---\n"
                      + numbered(source),
                  e.getCause());
            }
          },
          b.where() + " did not complete within " + RUN_LIMIT);
    } finally {
      System.setOut(original);
    }
    String printed = captured.toString(StandardCharsets.UTF_8);
    original.print(printed);
    return printed;
  }

  private static String numbered(String source) {
    String[] lines = source.split("\n", -1);
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < lines.length; i++) {
      sb.append(String.format("%3d  %s%n", i + 1, lines[i]));
    }
    return sb.toString();
  }
}
