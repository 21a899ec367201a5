package io.kvselect.server.workers;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import io.kvselect.core.catalog.WorkerSpec;
import io.kvselect.core.error.SelectionException;
import io.kvselect.server.api.WorkerBodies;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The workers file: a JSON ({@code .json}) or YAML ({@code .yaml}, {@code .yml}) list whose
 * entries are {@code POST /workers} bodies. Each entry is decoded by the same parser as the route,
 * so a file entry and a request body accept and reject the same fields. Stateless.
 */
final class WorkersFileFormat {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final ObjectMapper YAML = new YAMLMapper();

  private WorkersFileFormat() {}

  /**
   * The registrations in {@code content}, in file order.
   *
   * @throws IllegalArgumentException with a one-line message naming the entry and the field when
   *     the document is not a list of valid registrations or lists a worker id twice
   */
  static List<WorkerSpec> parse(String fileName, byte[] content) {
    boolean yaml =
        fileName.toLowerCase(Locale.ROOT).endsWith(".yaml")
            || fileName.toLowerCase(Locale.ROOT).endsWith(".yml");
    JsonNode root;
    try {
      root = (yaml ? YAML : JSON).readTree(content);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "not valid "
              + (yaml ? "YAML" : "JSON")
              + ": "
              + e.getOriginalMessage().lines().findFirst().orElse("")
              + location(e));
    } catch (java.io.IOException e) {
      throw new IllegalArgumentException("cannot be parsed: " + e.getMessage());
    }
    if (root == null || root.isMissingNode() || root.isNull()) {
      throw new IllegalArgumentException("is empty (write [] to remove every worker it added)");
    }
    if (!root.isArray()) {
      throw new IllegalArgumentException(
          "must be a list of worker registrations (POST /workers bodies)");
    }
    List<WorkerSpec> out = new ArrayList<>(root.size());
    Set<Long> ids = new HashSet<>();
    for (int i = 0; i < root.size(); i++) {
      JsonNode entry = root.get(i);
      String where =
          "entry "
              + i
              + (entry.hasNonNull("worker_id")
                  ? " (worker_id " + entry.get("worker_id").asText() + ")"
                  : "");
      if (!entry.isObject()) {
        throw new IllegalArgumentException(where + " must be an object");
      }
      WorkerSpec spec;
      try {
        spec = WorkerBodies.parse(JSON.writeValueAsBytes(entry));
      } catch (SelectionException e) {
        throw new IllegalArgumentException(where + ": " + e.getMessage());
      } catch (JsonProcessingException e) {
        throw new IllegalArgumentException(where + ": " + e.getOriginalMessage());
      }
      if (!ids.add(spec.workerId())) {
        throw new IllegalArgumentException(
            where
                + ": worker_id "
                + Long.toUnsignedString(spec.workerId())
                + " is listed more than once");
      }
      out.add(spec);
    }
    return out;
  }

  private static String location(JsonProcessingException e) {
    return e.getLocation() == null
        ? ""
        : " (line "
            + e.getLocation().getLineNr()
            + ", column "
            + e.getLocation().getColumnNr()
            + ")";
  }
}
