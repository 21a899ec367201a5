package io.kvselect.server.api;

import java.io.IOException;

/** Iteration over a JSON array of arbitrary elements with {@link JsonReader}. */
final class JsonArrays {

  private JsonArrays() {}

  /** Decodes one element; {@code path} names it ({@code field[index]}) for error messages. */
  interface ElementHandler {
    void element(JsonReader r, String path) throws IOException;
  }

  /**
   * Calls {@code h} once per element of the array the reader is positioned on, with the reader on
   * the element's first token; at most {@link JsonReader#MAX_ARRAY} elements.
   */
  static void forEach(JsonReader r, String field, ElementHandler h) throws IOException {
    if (!r.isArrayStart()) {
      throw JsonReader.type(field, "an array");
    }
    int n = 0;
    while (r.nextIsNotArrayEnd()) {
      if (n == JsonReader.MAX_ARRAY) {
        throw JsonReader.type(field, "an array of at most " + JsonReader.MAX_ARRAY + " entries");
      }
      h.element(r, JsonReader.element(field, n++));
    }
  }
}
