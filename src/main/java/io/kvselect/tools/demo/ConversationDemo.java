package io.kvselect.tools.demo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvselect.tools.Unreachable;
import java.io.IOException;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bin/kvselect-demo}: plays multi-turn conversations against a kvselect node and the
 * engines it selects (for example {@code bin/kvselect-mocker} engines), as a gateway would: for
 * each turn it asks {@code /select_and_reserve}, sends the prompt to the chosen engine's
 * {@code /generate}, reports {@code prefill_complete} and frees the reservation. Every turn resends
 * the whole conversation plus a new message, so repeat turns should land on the engine that holds
 * the prefix; the printed table shows the chosen worker, the overlap kvselect saw and what the
 * engine found cached.
 */
@Command(
    name = "kvselect-demo",
    mixinStandardHelpOptions = true,
    description = "Multi-turn conversations through kvselect and the engines it selects.")
public final class ConversationDemo implements Callable<Integer> {

  @Option(names = "--kvselect", description = "kvselect base URL (${DEFAULT-VALUE}).")
  String kvselect = "http://127.0.0.1:8092";

  @Option(
      names = "--conversations",
      description = "Conversations played in turn (${DEFAULT-VALUE}).")
  int conversations = 3;

  @Option(names = "--turns", description = "Turns per conversation (${DEFAULT-VALUE}).")
  int turns = 4;

  @Option(
      names = "--first-turn-tokens",
      description = "Tokens of a conversation's first prompt (${DEFAULT-VALUE}).")
  int firstTurnTokens = 512;

  @Option(
      names = "--turn-tokens",
      description = "Tokens each later turn appends (${DEFAULT-VALUE}).")
  int turnTokens = 96;

  @Option(
      names = "--output-tokens",
      description = "Output tokens asked of the engine per turn (${DEFAULT-VALUE}).")
  int outputTokens = 32;

  @Option(
      names = "--settle-ms",
      description =
          "Longest wait after each turn for kvselect to index the prompt the "
              + "engine cached, polled on /overlap_scores (${DEFAULT-VALUE}).")
  long settleMs = 5_000;

  @Option(names = "--seed", description = "Token RNG seed (${DEFAULT-VALUE}).")
  long seed = 1;

  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final PrintStream out;

  public ConversationDemo() {
    this(System.out);
  }

  ConversationDemo(PrintStream out) {
    this.out = out;
  }

  public static void main(String[] args) {
    System.exit(new CommandLine(new ConversationDemo()).execute(args));
  }

  /** One row of the printed table. */
  record Turn(
      int conversation,
      int turn,
      int isl,
      long worker,
      long overlapTokens,
      long effectivePrefill,
      long engineCached) {}

  /** Plays the conversations; any failure ends the run with one line on stderr and exit code 1. */
  @Override
  public Integer call() {
    try {
      return play();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      System.err.println("kvselect-demo: interrupted");
      return 1;
    } catch (Exception e) {
      System.err.println("kvselect-demo: " + Unreachable.message(e));
      return 1;
    }
  }

  private int play() throws Exception {
    while (kvselect.endsWith("/")) {
      kvselect = kvselect.substring(0, kvselect.length() - 1);
    }
    SplittableRandom rnd = new SplittableRandom(seed);
    List<List<Integer>> histories = new ArrayList<>();
    for (int c = 0; c < conversations; c++) {
      histories.add(new ArrayList<>());
    }
    out.printf(
        "%-4s %-4s %-7s %-8s %-16s %-18s %-14s%n",
        "conv", "turn", "isl", "worker", "overlap_tokens", "effective_prefill", "engine_cached");
    List<Turn> rows = new ArrayList<>();
    for (int t = 0; t < turns; t++) {
      for (int c = 0; c < conversations; c++) {
        List<Integer> h = histories.get(c);
        int add = t == 0 ? firstTurnTokens : turnTokens;
        for (int i = 0; i < add; i++) {
          h.add(1 + rnd.nextInt(50_000));
        }
        Turn row = play(c, t, h);
        rows.add(row);
        out.printf(
            "%-4d %-4d %-7d %-8d %-16d %-18d %-14d%n",
            row.conversation(),
            row.turn(),
            row.isl(),
            row.worker(),
            row.overlapTokens(),
            row.effectivePrefill(),
            row.engineCached());
        for (int i = 0; i < outputTokens; i++) {
          h.add(1 + rnd.nextInt(50_000));
        }
        awaitIndexed(h.subList(0, row.isl()), row);
      }
    }
    long repeats = rows.stream().filter(r -> r.turn() > 0).count();
    long sticky = 0;
    for (Turn r : rows) {
      if (r.turn() > 0
          && rows.stream()
              .anyMatch(
                  p ->
                      p.conversation() == r.conversation()
                          && p.turn() == r.turn() - 1
                          && p.worker() == r.worker())) {
        sticky++;
      }
    }
    out.printf(
        "repeat turns on the worker that served the previous turn: %d of %d%n", sticky, repeats);
    return 0;
  }

  private Turn play(int conversation, int turn, List<Integer> history) throws Exception {
    int[] tokens = history.stream().mapToInt(Integer::intValue).toArray();
    String id = "demo-" + conversation + "-" + turn + "-" + System.nanoTime();
    Map<String, Object> select = new LinkedHashMap<>();
    select.put("selection_id", id);
    select.put("token_ids", tokens);
    String selectUrl = kvselect + "/select_and_reserve";
    JsonNode s = post(selectUrl, select);
    if (!s.hasNonNull("endpoint") || !s.hasNonNull("worker_id")) {
      throw new IllegalStateException(selectUrl + " answered without endpoint or worker_id: " + s);
    }
    String endpoint = s.get("endpoint").asText();
    JsonNode g =
        post(
            endpoint + "/generate",
            Map.of(
                "token_ids",
                tokens,
                "output_tokens",
                outputTokens,
                "dp_rank",
                s.get("dp_rank").asInt()));
    post(kvselect + "/reservations/" + id + "/prefill_complete", null);
    delete(kvselect + "/reservations/" + id);
    return new Turn(
        conversation,
        turn,
        tokens.length,
        s.get("worker_id").asLong(),
        s.path("overlap").path("longest_matched").asLong(),
        s.path("effective_prefill_tokens").asLong(),
        g.path("cached_tokens").asLong());
  }

  /**
   * Waits (up to {@code --settle-ms}) until kvselect's index shows the served rank holding the
   * blocks the engine just cached, so the next turn's choice sees them; KV events travel
   * asynchronously, and a fixed pause is either too short on a busy machine or wasted time.
   */
  private void awaitIndexed(List<Integer> prompt, Turn row) throws Exception {
    int[] tokens = prompt.stream().mapToInt(Integer::intValue).toArray();
    long deadline = System.nanoTime() + settleMs * 1_000_000L;
    while (true) {
      JsonNode r = post(kvselect + "/overlap_scores", Map.of("token_ids", tokens));
      long want = tokens.length / Math.max(1, r.path("block_size").asLong(1));
      for (JsonNode w : r.path("workers")) {
        if (w.path("worker_id").asLong() == row.worker()
            && w.path("device_blocks").asLong() >= want) {
          return;
        }
      }
      if (System.nanoTime() >= deadline) {
        return;
      }
      Thread.sleep(20);
    }
  }

  private JsonNode post(String url, Object body) throws Exception {
    HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30));
    if (body == null) {
      b.POST(HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("content-type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
    }
    return answer(url, send(url, b.build()));
  }

  private void delete(String url) throws Exception {
    answer(url, send(url, HttpRequest.newBuilder(URI.create(url)).DELETE().build()));
  }

  private HttpResponse<String> send(String url, HttpRequest req) throws Exception {
    try {
      return http.send(req, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new Unreachable(url.startsWith(kvselect) ? "kvselect" : "engine", url, e);
    }
  }

  private static JsonNode answer(String url, HttpResponse<String> r) throws Exception {
    if (r.statusCode() >= 300) {
      throw new IllegalStateException(
          url + " answered " + r.statusCode() + ": " + r.body().strip());
    }
    return r.body().isEmpty() ? JSON.nullNode() : JSON.readTree(r.body());
  }
}
