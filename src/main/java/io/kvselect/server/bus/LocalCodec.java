package io.kvselect.server.bus;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.MessageCodec;

/**
 * The codec of the messages between verticles of one node ({@link LocalAddresses}): it passes the
 * core record itself (immutable, so the receiver may keep it) and refuses to be written to the
 * wire, so a node-internal message that was sent without {@link #options()}' local-only flag fails
 * at the sender instead of leaking a record to another member. Written here because Vert.x ships
 * no such codec: its default codecs cover JSON, buffers and primitives only.
 *
 * <p>Stateless; one instance is registered per Vert.x by {@link #register}.
 */
public final class LocalCodec implements MessageCodec<Object, Object> {

  /** The codec's name on the event bus. */
  public static final String NAME = "kvselect.local";

  /** Delivery options of a node-internal send: this codec, local consumers only (a new instance each call). */
  public static DeliveryOptions options() {
    return new DeliveryOptions().setCodecName(NAME).setLocalOnly(true);
  }

  /** The one instance (package-private for the tests). */
  static final LocalCodec INSTANCE = new LocalCodec();

  private LocalCodec() {}

  /**
   * Registers the codec on {@code vertx}'s event bus unless it is already there (a second node
   * embedded in one Vert.x shares it). Call before the first send with {@link #options()}.
   */
  public static void register(Vertx vertx) {
    try {
      vertx.eventBus().registerCodec(INSTANCE);
    } catch (IllegalStateException alreadyRegistered) {
      // one registration per Vert.x serves every node on it
    }
  }

  @Override
  public void encodeToWire(Buffer buffer, Object o) {
    throw new IllegalStateException(
        "a node-internal message ("
            + o.getClass().getName()
            + ") cannot be sent to another member; send it with LocalCodec.options()");
  }

  @Override
  public Object decodeFromWire(int pos, Buffer buffer) {
    throw new IllegalStateException("node-internal messages are never read from the wire");
  }

  @Override
  public Object transform(Object o) {
    return o;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public byte systemCodecID() {
    return -1;
  }
}
