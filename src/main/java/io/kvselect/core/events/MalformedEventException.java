package io.kvselect.core.events;

/**
 * A KV-event payload that is not a decodable batch: not msgpack, truncated, a value of the wrong
 * type where the layout fixes one, or a declared length larger than the bytes that follow. The
 * message names what was wrong and the byte offset in the payload where it was noticed. It is
 * the only exception {@link KvEventDecoder} throws for bad input; the whole batch is rejected.
 */
public final class MalformedEventException extends Exception {

  private static final long serialVersionUID = 1L;

  public MalformedEventException(String message) {
    super(message, null, false, false);
  }

  public MalformedEventException(String message, Throwable cause) {
    super(message, cause, false, false);
  }
}
