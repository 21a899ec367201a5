package io.kvselect.server.api;

import io.netty.buffer.ByteBuf;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;

/**
 * A request body as the range {@code array[offset, offset + length)}. {@link #view} reads a
 * Vert.x {@link Buffer} in place when a heap array backs it (the body handler's buffers are), so
 * the decoders scan the bytes Netty received instead of a copy of them.
 *
 * <p>A view shares the buffer's memory: it is valid only while the buffer is, so it is decoded on
 * the thread that received the body, before any asynchronous step; nothing keeps it afterwards.
 */
record BodyBytes(byte[] array, int offset, int length) {

  static final BodyBytes EMPTY = new BodyBytes(new byte[0], 0, 0);

  static BodyBytes of(byte[] bytes) {
    return new BodyBytes(bytes, 0, bytes.length);
  }

  /** The bytes of {@code buf} in place when heap-backed, else a copy; empty for null. */
  static BodyBytes view(Buffer buf) {
    if (buf == null) {
      return EMPTY;
    }
    if (buf instanceof BufferInternal bi) {
      ByteBuf bb = bi.getByteBuf();
      if (bb.hasArray()) {
        return new BodyBytes(bb.array(), bb.arrayOffset() + bb.readerIndex(), bb.readableBytes());
      }
    }
    return of(buf.getBytes());
  }

  int end() {
    return offset + length;
  }
}
