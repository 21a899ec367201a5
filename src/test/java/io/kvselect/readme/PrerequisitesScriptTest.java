package io.kvselect.readme;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The README's prerequisite command is {@code bin/install-prerequisites}, the script {@code .ci/run}
 * runs. The script is run for real, with {@code apt-get}, {@code apt-cache}, {@code sudo} and
 * {@code npm} on the {@code PATH} replaced by recorders, so nothing is ever installed and no
 * network is used: what it would install must be exactly what {@code --check} lists, and nothing
 * at all when everything is present.
 */
class PrerequisitesScriptTest {

  private static final Path REPO = Path.of("").toAbsolutePath();
  private static final Path SCRIPT = REPO.resolve("bin/install-prerequisites");

  record Result(int exit, String out, List<String> calls) {}

  @Test
  void theReadmePrerequisiteCommandIsTheScriptCiRuns() throws IOException {
    List<ReadmeBlocks.Block> prerequisites =
        ReadmeBlocks.read(ReadmeBlocks.readme()).stream()
            .filter(b -> b.heading().equals("Prerequisites") && b.text().contains("install"))
            .toList();
    assertEquals(1, prerequisites.size(), "one install block under Prerequisites");
    List<String> commands =
        prerequisites.get(0).lines().stream()
            .map(l -> l.replaceFirst("#.*", "").strip())
            .filter(l -> !l.isEmpty())
            .toList();
    assertEquals(
        List.of("bin/install-prerequisites", "bin/install-prerequisites --check"), commands);
    for (ReadmeBlocks.Block b : ReadmeBlocks.read(ReadmeBlocks.readme())) {
      assertFalse(
          b.text().contains("sudo apt-get"), b.where() + ": sudo is absent for root on Debian 12");
    }
    List<String> ci =
        Files.readAllLines(REPO.resolve(".ci/run")).stream()
            .filter(l -> !l.strip().startsWith("#"))
            .toList();
    assertTrue(
        ci.contains("bin/install-prerequisites"), ".ci/run runs the README's command: " + ci);
    assertFalse(
        String.join("\n", ci).contains("apt-get"), ".ci/run installs nothing itself: " + ci);
    assertTrue(Files.isExecutable(SCRIPT));
  }

  @Test
  void itInstallsExactlyWhatCheckListsAndNothingWhenAllIsPresent(@TempDir Path tmp)
      throws Exception {
    Path fakes = recorders(tmp);
    Result check = run(fakes, "--check");
    assertTrue(check.exit() == 0 || check.exit() == 1, check.out());
    assertEquals(List.of(), check.calls(), "--check installs nothing");
    Result first = run(fakes);
    Result second = run(fakes);
    assertEquals(
        first.calls(),
        second.calls(),
        "the same work each time while the recorders install nothing");
    if (check.exit() == 0) {
      assertEquals("install-prerequisites: everything is present", check.out().strip());
      assertEquals(0, first.exit(), first.out());
      assertEquals(List.of(), first.calls(), "everything present: no apt-get, no sudo, no npm");
      assertEquals("install-prerequisites: everything is present", first.out().strip());
      return;
    }
    List<String> expected = new ArrayList<>();
    for (String l : check.out().lines().toList()) {
      if (l.startsWith("install-prerequisites: missing Debian packages: ")) {
        String pkgs = l.substring("install-prerequisites: missing Debian packages: ".length());
        expected.add("apt-get update -qq");
        expected.add("apt-get install -y -qq " + pkgs);
      } else if (l.startsWith("install-prerequisites: missing: npm ci")) {
        expected.add("npm ci --no-audit --no-fund --loglevel=error");
      }
    }
    List<String> got =
        first.calls().stream()
            .map(
                c ->
                    c.replaceFirst("^sudo (env DEBIAN_FRONTEND=noninteractive )?", "")
                        .replaceFirst("^env DEBIAN_FRONTEND=noninteractive ", ""))
            .toList();
    if (check.out().contains("too old") || check.out().contains("Node.js is missing")) {
      expected.remove("npm ci --no-audit --no-fund --loglevel=error");
    }
    assertEquals(
        expected, got.stream().filter(c -> !c.startsWith("apt-cache")).toList(), first.out());
  }

  @Test
  void aNodeOlderThanPlaywrightNeedsIsNamedAndNotReplacedByDebiansNodejs(@TempDir Path tmp)
      throws Exception {
    Path fakes = recorders(tmp);
    script(fakes.resolve("node"), "echo v18.19.0");
    JsonNode lock =
        new ObjectMapper()
            .readTree(REPO.resolve("src/test/ui/package-lock.json").toFile())
            .get("packages")
            .get("node_modules/playwright-core");
    String engines = lock.get("engines").get("node").asText();
    assertEquals(
        ">=20",
        engines,
        "the pinned playwright-core's engines field (update the README if it moves)");
    String line =
        "install-prerequisites: Node.js 18.19.0 is too old: playwright-core "
            + lock.get("version").asText()
            + " needs Node.js 20+";
    Result check = run(fakes, "--check");
    assertEquals(1, check.exit(), check.out());
    assertTrue(check.out().lines().anyMatch(l -> l.startsWith(line)), check.out());
    Result install = run(fakes);
    assertEquals(1, install.exit(), install.out());
    assertTrue(install.out().contains(line), install.out());
    assertFalse(
        install.calls().stream()
            .anyMatch(c -> c.matches(".*apt-get install.* (nodejs|npm)( .*)?$")),
        "Debian's nodejs/npm are never installed over another Node.js: " + install.calls());
    assertFalse(
        install.calls().stream().anyMatch(c -> c.startsWith("npm")),
        "no npm ci with a Node it cannot run");
  }

  @Test
  void anUnknownArgumentIsAUsageError(@TempDir Path tmp) throws Exception {
    Result r = run(recorders(tmp), "--frobnicate");
    assertEquals(2, r.exit());
    assertEquals(
        "install-prerequisites: unknown argument '--frobnicate' (--check, --help)",
        r.out().strip());
  }

  /** A directory of scripts that record their command line to {@code calls} and succeed. */
  private static Path recorders(Path tmp) throws IOException {
    Path bin = Files.createDirectories(tmp.resolve("fakebin"));
    for (String cmd : List.of("apt-get", "apt-cache", "sudo", "npm")) {
      script(bin.resolve(cmd), "echo \"" + cmd + " $*\" >> \"" + tmp.resolve("calls") + "\"");
    }
    return bin;
  }

  private static void script(Path p, String body) throws IOException {
    Files.writeString(p, "#!/bin/sh\n" + body + "\n");
    Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  private static Result run(Path fakes, String... args) throws Exception {
    Path calls = fakes.getParent().resolve("calls");
    Files.deleteIfExists(calls);
    List<String> cmd = new ArrayList<>(List.of("bash", SCRIPT.toString()));
    cmd.addAll(List.of(args));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().put("PATH", fakes + ":" + System.getenv("PATH"));
    Process p = pb.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the script finishes");
    List<String> recorded = Files.exists(calls) ? Files.readAllLines(calls) : List.of();
    return new Result(p.exitValue(), out, recorded);
  }
}
