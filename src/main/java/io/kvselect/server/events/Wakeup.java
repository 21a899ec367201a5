package io.kvselect.server.events;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;

/**
 * Wakes a thread blocked in a JeroMQ poll from any other thread: the source end of a non-blocking
 * pipe is registered with the poller, {@link #signal} writes one byte. ZMQ sockets are never touched
 * by the signalling thread, and a full pipe simply means a wakeup is already pending. Used by the
 * KV-event pollers and the replica-sync thread.
 */
public final class Wakeup implements AutoCloseable {

  private final Pipe pipe;

  /** Guarded by itself (signalling threads). */
  private final ByteBuffer one = ByteBuffer.allocate(1);

  /** Owner thread only. */
  private final ByteBuffer drain = ByteBuffer.allocate(256);

  public Wakeup() {
    try {
      pipe = Pipe.open();
      pipe.source().configureBlocking(false);
      pipe.sink().configureBlocking(false);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The channel to register for POLLIN with the owner's poller. */
  public Pipe.SourceChannel channel() {
    return pipe.source();
  }

  /** Any thread: make the owner's next (or current) poll return. Never blocks. */
  public void signal() {
    synchronized (one) {
      try {
        one.clear();
        pipe.sink().write(one);
      } catch (IOException ignored) {
        // closed: the owner is stopping anyway
      }
    }
  }

  /** Owner thread: consume pending signals. */
  public void clear() {
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
      // nothing left to do
    }
  }
}
