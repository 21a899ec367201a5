package io.kvselect.server.config;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The version of this build, from the Maven descriptor packaged in the jar. Stateless. */
public final class Version {

  /** Written into the jar by Maven's archiver. */
  static final String POM_PROPERTIES = "/META-INF/maven/io.kvselect/kvselect/pom.properties";

  /** Printed when running from unpackaged classes (an IDE, the test class path). */
  static final String UNKNOWN = "(development build: version known only in the packaged jar)";

  private Version() {}

  /** The version, or {@link #UNKNOWN}. */
  public static String current() {
    try (InputStream in = Version.class.getResourceAsStream(POM_PROPERTIES)) {
      return in == null ? UNKNOWN : parse(in);
    } catch (IOException e) {
      return UNKNOWN;
    }
  }

  /** The {@code version} of a {@code pom.properties} stream, or {@link #UNKNOWN}. */
  static String parse(InputStream pomProperties) throws IOException {
    Properties p = new Properties();
    p.load(pomProperties);
    String v = p.getProperty("version");
    return v == null || v.isBlank() ? UNKNOWN : v.strip();
  }
}
