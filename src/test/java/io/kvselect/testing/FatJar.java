package io.kvselect.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** The fat jar this build's {@code package} phase made, for integration tests; never builds it. */
public final class FatJar {

  private FatJar() {}

  /** The one {@code target/kvselect-*-fat.jar}, absolute; fails the test if there is none or several. */
  public static Path path() throws IOException {
    List<Path> jars = new ArrayList<>();
    try (DirectoryStream<Path> ds =
        Files.newDirectoryStream(Path.of("target"), "kvselect-*-fat.jar")) {
      ds.forEach(p -> jars.add(p.toAbsolutePath()));
    }
    assertEquals(
        1,
        jars.size(),
        "expected exactly one target/kvselect-*-fat.jar (integration tests run"
            + " after package): "
            + jars);
    return jars.get(0);
  }
}
