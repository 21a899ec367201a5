package io.kvselect.arch;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.Test;

/** The core (hashing, index, load, selection, sessions) stays plain Java: no Vert.x, ZMQ or Hazelcast. */
class CoreIsPlainJavaTest {

  private static final JavaClasses MAIN =
      new ClassFileImporter()
          .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
          .importPackages("io.kvselect");

  @Test
  void coreDependsOnNoTransportOrClusterLibrary() {
    noClasses()
        .that()
        .resideInAPackage("io.kvselect.core..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.vertx..", "org.zeromq..", "zmq..", "com.hazelcast..")
        .check(MAIN);
  }

  @Test
  void coreDoesNotReachIntoTheServer() {
    noClasses()
        .that()
        .resideInAPackage("io.kvselect.core..")
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage("io.kvselect.server..", "io.kvselect.tools..")
        .check(MAIN);
  }
}
