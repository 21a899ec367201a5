package io.kvselect.core.error;

/** Failure classes of the core; the single mapping to an HTTP status. */
public enum ErrorCode {
  /** Malformed syntax (unparseable JSON). */
  SYNTAX(400),
  /** A semantically invalid value (Dynamo's BadRequest). */
  BAD_REQUEST(400),
  NOT_FOUND(404),
  METHOD_NOT_ALLOWED(405),
  CONFLICT(409),
  PAYLOAD_TOO_LARGE(413),
  UNSUPPORTED_MEDIA_TYPE(415),
  /** A missing or mistyped field (the message names it). */
  UNPROCESSABLE(422),
  OVERLOADED(429),
  INTERNAL(500),
  NOT_READY(503);

  private final int httpStatus;

  ErrorCode(int httpStatus) {
    this.httpStatus = httpStatus;
  }

  public int httpStatus() {
    return httpStatus;
  }
}
