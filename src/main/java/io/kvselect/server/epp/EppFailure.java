package io.kvselect.server.epp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Why the endpoint picker answers a request itself instead of routing it: the HTTP status of the
 * gateway's immediate response and its JSON body, Dynamo's envelope {@code {"error": ..., "code":
 * ...}} with the queue's {@code details} when the router queue shed the request. The one mapping
 * of the picker's failures to a status ({@link #of}). Immutable.
 */
public final class EppFailure extends RuntimeException {

  private static final ObjectMapper JSON = new ObjectMapper();

  private final int status;
  private final transient Map<String, Object> details;

  public EppFailure(int status, String message) {
    this(status, message, null);
  }

  public EppFailure(int status, String message, Map<String, Object> details) {
    super(message, null, false, false);
    this.status = status;
    this.details = details;
  }

  /** The HTTP status the gateway answers with. */
  public int status() {
    return status;
  }

  /** The error body: {@code {"error": message, "code": status}} plus {@code details} when present. */
  public byte[] body() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("error", getMessage());
    m.put("code", status);
    if (details != null) {
      m.put("details", details);
    }
    try {
      return JSON.writeValueAsBytes(m);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * The failure a picking step ended with: itself when already one; a selection failure keeps its
   * code's status except that every client error reaches the gateway as 400 (the body being what
   * the client sent); anything else is a 500.
   */
  public static EppFailure of(Throwable t) {
    Throwable e = SelectionException.unwrap(t);
    if (e instanceof EppFailure f) {
      return f;
    }
    if (e instanceof SelectionException s) {
      int status =
          s.code() == ErrorCode.NOT_READY
                  || s.code() == ErrorCode.OVERLOADED
                  || s.code() == ErrorCode.PAYLOAD_TOO_LARGE
                  || s.code() == ErrorCode.INTERNAL
              ? s.code().httpStatus()
              : 400;
      return new EppFailure(status, s.getMessage(), s.details());
    }
    return new EppFailure(500, "endpoint picker failed: " + e);
  }
}
