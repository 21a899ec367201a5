package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.buffer.Unpooled;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.internal.buffer.BufferInternal;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** A body view reads a heap buffer in place (no copy) and any other buffer through a copy. */
class BodyBytesTest {

  private static String text(BodyBytes b) {
    return new String(Arrays.copyOfRange(b.array(), b.offset(), b.end()), StandardCharsets.UTF_8);
  }

  @Test
  void aHeapBufferIsReadInPlace() {
    Buffer buf = Buffer.buffer("{\"token_ids\":[1]}");
    BodyBytes view = BodyBytes.view(buf);
    assertEquals("{\"token_ids\":[1]}", text(view));
    buf.setByte(14, (byte) '7');
    assertEquals('7', view.array()[view.offset() + 14], "the view shares the buffer's memory");
  }

  @Test
  void aSliceStartsAtItsOffsetAndEndsAtItsLength() {
    Buffer slice = Buffer.buffer("xx{\"token_ids\":[42]}yy").slice(2, 20);
    BodyBytes view = BodyBytes.view(slice);
    assertEquals("{\"token_ids\":[42]}", text(view));
    assertEquals(2, view.offset());
    assertEquals(42, RequestParsers.select(view).prompt().tokenIds()[0]);
  }

  @Test
  void aDirectBufferIsCopiedAndNullIsEmpty() {
    Buffer direct =
        BufferInternal.buffer(
            Unpooled.directBuffer()
                .writeBytes("{\"token_ids\":[5]}".getBytes(StandardCharsets.UTF_8)));
    assertEquals("{\"token_ids\":[5]}", text(BodyBytes.view(direct)));
    assertEquals(0, BodyBytes.view(null).length());
  }
}
