package io.kvselect.tools;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The first run of a {@code bin/} launcher builds the jar with Maven ({@code bin/lib/jar.sh}).
 * Maven 3.8 writes colour resets even in batch mode, which showed as escape codes on a new user's
 * first run. The Maven on {@code PATH} is replaced here by a script that behaves like it (colour
 * resets on both streams, the jar written, or a failure), so the launcher's own handling is what
 * is tested: plain text out, the jar found, a failed build stops the launcher.
 */
class FirstRunBuildTest {

  private static final Path REPO = Path.of("").toAbsolutePath();

  @Test
  void theFirstRunBuildPrintsNoEscapeCodes(@TempDir Path tmp) throws Exception {
    Path root =
        fakeRoot(
            tmp,
            """
        printf '\\033[0m\\033[1;31mbuilding\\033[0m\\n'
        printf '\\033[0m\\033[0m' >&2
        mkdir -p target && : > target/kvselect-9.9-fat.jar
        """);
    Result r = source(root);
    assertEquals(0, r.exit, r.out);
    assertFalse(r.out.contains("\u001b"), "escape code in: " + r.out.replace("\u001b", "\\e"));
    assertTrue(r.out.contains("kvselect: building the jar (first run)..."), r.out);
    assertTrue(r.out.contains("building"), "the build's own output is kept: " + r.out);
    assertTrue(r.out.strip().endsWith("target/kvselect-9.9-fat.jar"), r.out);
  }

  @Test
  void aJarOlderThanTheSourcesIsRebuiltAndAFreshOneIsNot(@TempDir Path tmp) throws Exception {
    Path root =
        fakeRoot(
            tmp,
            """
        echo "mvn ran" >&2
        mkdir -p target && : > target/kvselect-9.9-fat.jar
        """);
    Path jar = Files.createDirectories(root.resolve("target")).resolve("kvselect-9.9-fat.jar");
    Path source = Files.createDirectories(root.resolve("src/main/java")).resolve("A.java");
    Files.writeString(source, "class A {}");
    Files.writeString(root.resolve("pom.xml"), "<project/>");
    Files.writeString(jar, "old");
    java.nio.file.attribute.FileTime old =
        java.nio.file.attribute.FileTime.fromMillis(1_000_000_000_000L);
    Files.setLastModifiedTime(jar, old);
    Files.setLastModifiedTime(root.resolve("pom.xml"), old);
    Result stale = source(root);
    assertEquals(0, stale.exit, stale.out);
    assertTrue(
        stale.out.contains(
            "kvselect: rebuilding the jar (src/main/java/A.java is newer than it)..."),
        stale.out);
    assertTrue(stale.out.contains("mvn ran"), stale.out);
    Result fresh = source(root);
    assertEquals(0, fresh.exit, fresh.out);
    assertFalse(
        fresh.out.contains("mvn ran"), "a jar newer than every source is used as is: " + fresh.out);
    assertTrue(fresh.out.strip().endsWith("target/kvselect-9.9-fat.jar"), fresh.out);
  }

  @Test
  void aFailedFirstRunBuildStopsTheLauncher(@TempDir Path tmp) throws Exception {
    Path root =
        fakeRoot(
            tmp,
            """
        echo '[ERROR] compilation failed' >&2
        exit 3
        """);
    Result r = source(root);
    assertNotEquals(0, r.exit, r.out);
    assertTrue(r.out.contains("[ERROR] compilation failed"), r.out);
    assertFalse(r.out.contains("JAR="), "the launcher went on after a failed build: " + r.out);
  }

  /** A repository root holding the real {@code bin/lib/jar.sh} and a fake {@code mvn}. */
  private static Path fakeRoot(Path tmp, String mvnBody) throws IOException {
    Path root = Files.createDirectories(tmp.resolve("repo"));
    Files.createDirectories(root.resolve("bin/lib"));
    Files.copy(REPO.resolve("bin/lib/jar.sh"), root.resolve("bin/lib/jar.sh"));
    Path fakeBin = Files.createDirectories(tmp.resolve("fakebin"));
    Path mvn = fakeBin.resolve("mvn");
    Files.writeString(mvn, "#!/usr/bin/env bash\n" + mvnBody, StandardCharsets.UTF_8);
    Files.setPosixFilePermissions(mvn, PosixFilePermissions.fromString("rwxr-xr-x"));
    return root;
  }

  private record Result(int exit, String out) {}

  /** Sources jar.sh the way the launchers do ({@code set -euo pipefail}, $root, $name). */
  private static Result source(Path root) throws Exception {
    String script =
        "set -euo pipefail; root=\"$1\"; name=kvselect; . \"$root/bin/lib/jar.sh\"; echo \"JAR=$jar\"";
    ProcessBuilder pb =
        new ProcessBuilder("bash", "-c", script, "bash", root.toString())
            .directory(root.toFile())
            .redirectErrorStream(true);
    pb.environment().remove("KVSELECT_JAR");
    pb.environment().put("PATH", root.getParent().resolve("fakebin") + ":" + System.getenv("PATH"));
    Process p = pb.start();
    try {
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "jar.sh did not finish");
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      return new Result(p.exitValue(), out);
    } finally {
      p.destroyForcibly();
    }
  }
}
