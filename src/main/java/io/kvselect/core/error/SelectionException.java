package io.kvselect.core.error;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The one exception type of the core: a message for the caller and its {@link ErrorCode}. */
public final class SelectionException extends RuntimeException {

  private final ErrorCode code;
  private final Map<String, Object> details;

  public SelectionException(ErrorCode code, String message) {
    this(code, message, null);
  }

  /** A failure with a structured {@code details} object for the error body (ordered keys). */
  public SelectionException(ErrorCode code, String message, Map<String, Object> details) {
    super(message, null, false, false);
    this.code = code;
    this.details =
        details == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(details));
  }

  public ErrorCode code() {
    return code;
  }

  /** The structured details of the failure (Dynamo's queue rejection), or null. */
  public Map<String, Object> details() {
    return details;
  }

  public static SelectionException badRequest(String message) {
    return new SelectionException(ErrorCode.BAD_REQUEST, message);
  }

  public static SelectionException notFound(String message) {
    return new SelectionException(ErrorCode.NOT_FOUND, message);
  }

  public static SelectionException conflict(String message) {
    return new SelectionException(ErrorCode.CONFLICT, message);
  }

  public static SelectionException notReady(String message) {
    return new SelectionException(ErrorCode.NOT_READY, message);
  }

  public static SelectionException unprocessable(String message) {
    return new SelectionException(ErrorCode.UNPROCESSABLE, message);
  }

  /**
   * The failure behind {@code t}: asynchronous stages wrap what a step threw in
   * {@link java.util.concurrent.CompletionException}; this peels such wrappers off.
   */
  public static Throwable unwrap(Throwable t) {
    Throwable c = t;
    while ((c instanceof java.util.concurrent.CompletionException
            || c instanceof java.util.concurrent.ExecutionException)
        && c.getCause() != null) {
      c = c.getCause();
    }
    return c;
  }
}
