package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.Error;
import com.networknt.schema.InputFormat;
import com.networknt.schema.Schema;
import com.networknt.schema.SchemaRegistry;
import com.networknt.schema.SpecificationVersion;
import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * The node's {@code openapi.json} as a test oracle: which operations it documents, and whether a
 * response (status, content type, body) is one the document allows, each JSON body validated
 * against the schema documented for its status with networknt's JSON Schema 2020-12 validator
 * (the dialect of OpenAPI 3.1).
 *
 * <p>Shared by the test classes of one JVM: the schema cache is a concurrent map.
 */
public final class OpenApiDoc {

  static final Set<String> METHODS =
      Set.of("get", "put", "post", "delete", "patch", "head", "options", "trace");

  final JsonNode doc;
  private final String text;
  private final SchemaRegistry registry =
      SchemaRegistry.withDefaultDialect(SpecificationVersion.DRAFT_2020_12);
  private final Map<String, Schema> schemas = new java.util.concurrent.ConcurrentHashMap<>();

  /** The document on the class path; a missing or unreadable one fails the caller. */
  public static OpenApiDoc load() {
    try {
      return new OpenApiDoc();
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  OpenApiDoc() throws IOException {
    try (InputStream in = OpenApiDoc.class.getClassLoader().getResourceAsStream("openapi.json")) {
      assertNotNull(in, "openapi.json on the class path");
      text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
    }
    doc = NodeHarness.JSON.readTree(text);
  }

  /** Every documented operation as {@code "METHOD /path"} with OpenAPI path templates. */
  Set<String> operations() {
    Set<String> out = new TreeSet<>();
    doc.get("paths")
        .fields()
        .forEachRemaining(
            p ->
                p.getValue()
                    .fieldNames()
                    .forEachRemaining(
                        m -> {
                          if (METHODS.contains(m)) {
                            out.add(m.toUpperCase(Locale.ROOT) + " " + p.getKey());
                          }
                        }));
    return out;
  }

  /**
   * Checks any answer of the node: a documented operation's as {@link #check}; a request to an
   * undocumented path or method must be refused with 404 or 405 and the error envelope.
   */
  void checkAnswer(String method, String path, int status, String contentType, String body) {
    if (find(method, path) != null) {
      check(method, path, status, contentType, body);
      return;
    }
    assertTrue(
        status == 404 || status == 405,
        method
            + " "
            + path
            + " is not documented in openapi.json, yet answered "
            + status
            + ": "
            + abbreviate(body));
    assertEquals(
        List.of(),
        violations("Error", body),
        method + " " + path + " " + status + " is not the error envelope: " + abbreviate(body));
  }

  /** The documented operation a concrete request path matches, e.g. {@code /workers/7} to {@code /workers/{id}}. */
  String template(String method, String path) {
    String found = find(method, path);
    assertNotNull(found, method + " " + path + " is not documented in openapi.json");
    return found;
  }

  private String find(String method, String path) {
    String bare = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
    String found = null;
    for (var it = doc.get("paths").fieldNames(); it.hasNext(); ) {
      String t = it.next();
      if (!doc.get("paths").get(t).has(method.toLowerCase(Locale.ROOT))) {
        continue;
      }
      if (bare.matches(t.replace(".", "\\.").replaceAll("\\{[^}]+}", "[^/]+"))) {
        // a literal path wins over a template (/ui/state over a hypothetical /ui/{x})
        if (found == null || !t.contains("{")) {
          found = t;
        }
      }
    }
    return found;
  }

  /**
   * Asserts that {@code status} is documented for the operation, that the content type is the
   * documented one and that a JSON body validates against the documented schema.
   */
  void check(String method, String path, int status, String contentType, String body) {
    String t = template(method, path);
    JsonNode responses =
        doc.get("paths").get(t).get(method.toLowerCase(Locale.ROOT)).get("responses");
    JsonNode response = responses.get(Integer.toString(status));
    assertNotNull(
        response,
        method
            + " "
            + path
            + " answered "
            + status
            + ", which openapi.json does not document for "
            + t
            + " (documented: "
            + iterable(responses.fieldNames())
            + "); body: "
            + body);
    JsonNode content = response.get("content");
    if (content == null) {
      return;
    }
    String mime = content.fieldNames().next();
    assertNotNull(contentType, method + " " + path + ": no content type");
    assertTrue(
        contentType.toLowerCase(Locale.ROOT).startsWith(mime),
        method
            + " "
            + path
            + " "
            + status
            + ": content type "
            + contentType
            + ", documented "
            + mime);
    if (!mime.equals("application/json")) {
      return;
    }
    String pointer =
        "#/paths/"
            + escape(t)
            + "/"
            + method.toLowerCase(Locale.ROOT)
            + "/responses/"
            + status
            + "/content/application~1json/schema";
    List<Error> errors = schema(pointer).validate(body, InputFormat.JSON);
    assertEquals(
        List.of(),
        errors.stream().map(Error::toString).toList(),
        method
            + " "
            + path
            + " "
            + status
            + " does not match "
            + pointer
            + ": "
            + abbreviate(body));
  }

  /** Asserts that a request body the node accepted matches the operation's documented request schema. */
  void checkRequest(String method, String path, String body) {
    String t = template(method, path);
    JsonNode op = doc.get("paths").get(t).get(method.toLowerCase(Locale.ROOT));
    assertNotNull(op.get("requestBody"), method + " " + t + " took a body, but none is documented");
    String pointer =
        "#/paths/"
            + escape(t)
            + "/"
            + method.toLowerCase(Locale.ROOT)
            + "/requestBody/content/application~1json/schema";
    List<Error> errors = schema(pointer).validate(body, InputFormat.JSON);
    assertEquals(
        List.of(),
        errors.stream().map(Error::toString).toList(),
        "accepted request "
            + method
            + " "
            + path
            + " does not match "
            + pointer
            + ": "
            + abbreviate(body));
  }

  /** Validates {@code body} against a named component schema; returns the violations. */
  public List<String> violations(String component, String body) {
    return schema("#/components/schemas/" + component).validate(body, InputFormat.JSON).stream()
        .map(Error::toString)
        .toList();
  }

  /** The whole document with {@code $ref} to one location: its other {@code $ref}s resolve in the document. */
  private Schema schema(String pointer) {
    return schemas.computeIfAbsent(
        pointer,
        p -> {
          ObjectNode root = (ObjectNode) doc.deepCopy();
          root.put("$schema", "https://json-schema.org/draft/2020-12/schema");
          root.put("$ref", p);
          return registry.getSchema(root.toString(), InputFormat.JSON);
        });
  }

  private static String escape(String path) {
    return path.replace("~", "~0").replace("/", "~1").replace("{", "%7B").replace("}", "%7D");
  }

  private static String abbreviate(String s) {
    return s == null || s.length() < 2000 ? s : s.substring(0, 2000) + "...";
  }

  private static List<String> iterable(java.util.Iterator<String> it) {
    List<String> l = new java.util.ArrayList<>();
    it.forEachRemaining(l::add);
    return l;
  }
}
