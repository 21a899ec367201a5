package io.kvselect.server.sync.replica;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;

/**
 * Wakes the replica-sync thread from its JeroMQ poll: the source end of a non-blocking pipe is
 * registered with its poller and {@link #signal} writes one byte. Signalling threads never touch a
 * ZMQ socket; a full pipe means a wakeup is already pending.
 */
final class ReplicaWakeup implements AutoCloseable {

  private final Pipe pipe;
  /** Guarded by itself (signalling threads). */
  private final ByteBuffer one = ByteBuffer.allocate(1);
  /** Owner thread only. */
  private final ByteBuffer drain = ByteBuffer.allocate(256);

  ReplicaWakeup() {
    try {
      pipe = Pipe.open();
      pipe.source().configureBlocking(false);
      pipe.sink().configureBlocking(false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Pipe.SourceChannel channel() {
    return pipe.source();
  }

  /** Any thread; never blocks. */
  void signal() {
    synchronized (one) {
      try {
        one.clear();
        pipe.sink().write(one);
      } catch (IOException ignored) {
        // closed: the owner is stopping
      }
    }
  }

  /** Owner thread: consumes pending signals. */
  void clear() {
    try {
      while (true) {
        drain.clear();
        if (pipe.source().read(drain) <= 0) {
          return;
        }
      }
    } catch (IOException ignored) {
      // closed
    }
  }

  @Override
  public void close() {
    try {
      pipe.sink().close();
      pipe.source().close();
    } catch (IOException ignored) {
      // nothing left to release
    }
  }
}
