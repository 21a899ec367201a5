package io.kvselect.server.events;

import java.util.List;

/** Live threads by name prefix, for the thread-ownership assertions. */
final class IngestThreads {

  private IngestThreads() {}

  static List<String> named(String prefix) {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.startsWith(prefix))
        .sorted()
        .toList();
  }
}
