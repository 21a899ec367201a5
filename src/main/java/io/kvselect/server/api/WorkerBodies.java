package io.kvselect.server.api;

import io.kvselect.core.catalog.WorkerSpec;

/**
 * The {@code POST /workers} body decoder for callers outside the HTTP adapter (the workers file):
 * the same parser, the same validation and the same messages naming the field. Stateless.
 */
public final class WorkerBodies {

  private WorkerBodies() {}

  /**
   * Decodes one registration exactly as {@code POST /workers} does.
   *
   * @throws io.kvselect.core.error.SelectionException naming the field when the body is invalid
   */
  public static WorkerSpec parse(byte[] json) {
    return WorkerJson.parse(json);
  }
}
