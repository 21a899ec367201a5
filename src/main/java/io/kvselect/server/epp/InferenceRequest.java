package io.kvselect.server.epp;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;

/**
 * A proxied inference request as the endpoint picker needs it: its API, the {@code model} (the
 * partition's {@code model_name}), the body to send to the render route and, for a completion whose
 * {@code prompt} already is token ids, those ids (no render needed).
 *
 * <p>{@link #parse} accepts OpenAI {@code /v1/chat/completions} ({@code messages}: a non-empty
 * array), {@code /v1/completions} ({@code prompt}: a string, an array of token ids, or a one-element
 * array of either) and Anthropic {@code /v1/messages} ({@code messages} and an optional
 * {@code system}, turned into the equivalent chat completion for rendering). Anything else is an
 * {@link EppFailure} 400 naming the field. Immutable; arrays are owned by the record.
 *
 * @param api which API the request speaks
 * @param model the {@code model} field, never blank
 * @param renderBody the JSON body for {@link InferenceApi#renderPath()}
 * @param tokenIds the prompt's token ids when the request carries them, else null
 */
public record InferenceRequest(InferenceApi api, String model, byte[] renderBody, int[] tokenIds) {

  private static final ObjectMapper JSON =
      new ObjectMapper().enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION);

  /** Parses {@code body} sent to {@code api}'s path; 400 naming the field when it is malformed. */
  public static InferenceRequest parse(InferenceApi api, byte[] body) {
    JsonNode root;
    try {
      root = JSON.readTree(body);
    } catch (JsonProcessingException e) {
      throw bad("request body is not valid JSON: " + e.getOriginalMessage());
    } catch (IOException e) {
      throw bad("request body cannot be read: " + e.getMessage());
    }
    if (root == null || !root.isObject()) {
      throw bad("request body must be a JSON object");
    }
    JsonNode model = root.get("model");
    if (model == null || !model.isTextual() || model.asText().isBlank()) {
      throw bad("field `model` must be a non-empty string");
    }
    String m = model.asText();
    return switch (api) {
      case CHAT_COMPLETIONS -> {
        messages(root.get("messages"));
        yield new InferenceRequest(api, m, body, null);
      }
      case COMPLETIONS -> new InferenceRequest(api, m, body, tokenPrompt(root.get("prompt")));
      case MESSAGES -> new InferenceRequest(api, m, anthropicAsChat(m, root), null);
    };
  }

  /**
   * The completion body {@code original} with its {@code prompt} replaced by {@code ids}, every
   * other field kept; for engines that accept token prompts.
   */
  public static byte[] withTokenPrompt(byte[] original, int[] ids) {
    try {
      ObjectNode root = (ObjectNode) JSON.readTree(original);
      ArrayNode prompt = root.putArray("prompt");
      for (int id : ids) {
        prompt.add(id);
      }
      return JSON.writeValueAsBytes(root);
    } catch (IOException e) {
      throw new EppFailure(400, "request body is not valid JSON: " + e.getMessage());
    }
  }

  private static void messages(JsonNode messages) {
    if (messages == null || !messages.isArray() || messages.isEmpty()) {
      throw bad("field `messages` must be a non-empty array");
    }
    for (int i = 0; i < messages.size(); i++) {
      JsonNode msg = messages.get(i);
      if (!msg.isObject() || !msg.path("role").isTextual()) {
        throw bad("field `messages[" + i + "].role` must be a string");
      }
    }
  }

  /** The token ids of a completion prompt given as ids, null for a text prompt; 400 when it is neither. */
  private static int[] tokenPrompt(JsonNode prompt) {
    if (prompt == null || prompt.isNull()) {
      throw bad("field `prompt` is required");
    }
    if (prompt.isTextual()) {
      return null;
    }
    if (prompt.isArray()
        && prompt.size() == 1
        && (prompt.get(0).isTextual() || prompt.get(0).isArray())) {
      return tokenPrompt(prompt.get(0));
    }
    if (prompt.isArray() && !prompt.isEmpty()) {
      int[] ids = new int[prompt.size()];
      for (int i = 0; i < ids.length; i++) {
        JsonNode t = prompt.get(i);
        if (!t.isIntegralNumber() || !t.canConvertToInt() || t.asInt() < 0) {
          throw bad("field `prompt[" + i + "]` must be a non-negative token id");
        }
        ids[i] = t.asInt();
      }
      return ids;
    }
    throw bad(
        "field `prompt` must be a string or a non-empty array of token ids (one prompt per request)");
  }

  /**
   * The chat-completion body equivalent to an Anthropic messages request: {@code system} (a string
   * or text blocks) first as a system message, then each message with its text blocks joined.
   */
  private static byte[] anthropicAsChat(String model, JsonNode root) {
    JsonNode messages = root.get("messages");
    messages(messages);
    ObjectNode chat = JSON.createObjectNode().put("model", model);
    ArrayNode out = chat.putArray("messages");
    JsonNode system = root.get("system");
    if (system != null && !system.isNull()) {
      out.addObject().put("role", "system").put("content", text(system, "system"));
    }
    for (int i = 0; i < messages.size(); i++) {
      JsonNode msg = messages.get(i);
      out.addObject()
          .put("role", msg.get("role").asText())
          .put("content", text(msg.get("content"), "messages[" + i + "].content"));
    }
    try {
      return JSON.writeValueAsBytes(chat);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A string, or the texts of an array of content blocks joined (non-text blocks contribute nothing). */
  private static String text(JsonNode content, String field) {
    if (content != null && content.isTextual()) {
      return content.asText();
    }
    if (content != null && content.isArray()) {
      StringBuilder sb = new StringBuilder();
      for (int i = 0; i < content.size(); i++) {
        JsonNode block = content.get(i);
        if (!block.isObject() || !block.path("type").isTextual()) {
          throw bad("field `" + field + "[" + i + "].type` must be a string");
        }
        if ("text".equals(block.get("type").asText())) {
          if (!block.path("text").isTextual()) {
            throw bad("field `" + field + "[" + i + "].text` must be a string");
          }
          sb.append(block.get("text").asText());
        }
      }
      return sb.toString();
    }
    throw bad("field `" + field + "` must be a string or an array of content blocks");
  }

  private static EppFailure bad(String message) {
    return new EppFailure(400, message);
  }
}
