package io.kvselect.tools.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The nodes of one run and the questions the harness asks them over HTTP: readiness, membership,
 * {@code /loads}, {@code /workers}, {@code /metrics}. Every request has a timeout and every wait a
 * bound. The list is fixed at construction; nodes change state under the main thread, client
 * threads only read it.
 */
final class ChaosFleet implements AutoCloseable {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Pattern FALLBACKS =
      Pattern.compile(
          "^kvselect_cluster_fallbacks_total(?:\\{[^}]*\\})?\\s+([0-9.eE+-]+)\\s*$",
          Pattern.MULTILINE);

  final List<ChaosNode> nodes;
  private final HttpClient http;

  ChaosFleet(List<ChaosNode> nodes, HttpClient http) {
    this.nodes = List.copyOf(nodes);
    this.http = http;
  }

  /** A node clients may call now, chosen at random, or null when none may be. */
  ChaosNode randomCallable(Random rnd) {
    int n = nodes.size();
    int first = rnd.nextInt(n);
    for (int i = 0; i < n; i++) {
      ChaosNode c = nodes.get((first + i) % n);
      if (c.callable()) {
        return c;
      }
    }
    return null;
  }

  /** An HTTP answer: status and body text. */
  record Answer(int status, String body) {
    JsonNode json() throws IOException {
      return JSON.readTree(body);
    }
  }

  /** {@code method path} on {@code node} with a JSON {@code body} (null for none), waiting at most {@code timeout}. */
  Answer call(ChaosNode node, String method, String path, String body, Duration timeout)
      throws IOException, InterruptedException {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.httpPort + path))
            .timeout(timeout);
    if (body == null) {
      b.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      b.header("content-type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(body));
    }
    HttpResponse<String> r = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    return new Answer(r.statusCode(), r.body());
  }

  /** {@code GET path} as JSON, or null for anything but a 200 with JSON within 3 s. */
  JsonNode getJson(ChaosNode node, String path) {
    try {
      Answer a = call(node, "GET", path, null, Duration.ofSeconds(3));
      return a.status() == 200 ? a.json() : null;
    } catch (IOException e) {
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  /** The {@code worker_id} of a {@code select_and_reserve} answer. */
  long readWorker(String body) throws IOException {
    JsonNode w = JSON.readTree(body).path("worker_id");
    if (!w.canConvertToLong()) {
      throw new IOException("no worker_id in " + body);
    }
    return w.asLong();
  }

  /** The member count of {@code node}'s {@code /cluster}, or -1 when it does not answer. */
  int members(ChaosNode node) {
    JsonNode c = getJson(node, "/cluster");
    return c == null ? -1 : c.path("members").size();
  }

  /** Waits until {@code node}'s {@code /ready} answers 200; fails when it exits or the bound passes. */
  void awaitReady(ChaosNode node, Duration bound) throws IOException, InterruptedException {
    awaitOrFail(
        node,
        bound,
        "/ready 200",
        () -> {
          try {
            return call(node, "GET", "/ready", null, Duration.ofSeconds(2)).status() == 200;
          } catch (IOException e) {
            return false;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        });
  }

  /** Waits until {@code node}'s {@code /cluster} lists {@code count} members. */
  void awaitMembers(ChaosNode node, int count, Duration bound)
      throws IOException, InterruptedException {
    awaitOrFail(node, bound, count + " members in /cluster", () -> members(node) == count);
  }

  private void awaitOrFail(ChaosNode node, Duration bound, String what, BooleanSupplier done)
      throws IOException, InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (true) {
      if (!node.alive()) {
        throw new IOException(
            node.describe() + " exited before " + what + "; its log ends with:\n" + node.tail(30));
      }
      if (done.getAsBoolean()) {
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new IOException(
            node.describe()
                + ": no "
                + what
                + " within "
                + bound.toSeconds()
                + " s; its log ends with:\n"
                + node.tail(30));
      }
      Thread.sleep(250);
    }
  }

  /** Waits (at most {@code bound}) until {@code condition}; returns whether it held. */
  static boolean within(Duration bound, Duration poll, BooleanSupplier condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + bound.toNanos();
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() - deadline > 0) {
        return false;
      }
      Thread.sleep(poll.toMillis());
    }
    return true;
  }

  /** The summed {@code active_requests} of {@code node}'s {@code /loads}, or -1 when it does not answer. */
  int activeRequests(ChaosNode node) {
    JsonNode loads = getJson(node, "/loads");
    return loads == null ? -1 : sumActive(loads);
  }

  static int sumActive(JsonNode loads) {
    int total = 0;
    for (JsonNode partition : loads) {
      for (JsonNode l : partition.path("loads")) {
        total += l.path("active_requests").asInt();
      }
    }
    return total;
  }

  /** {@code GET /workers} of every node compared as JSON: {@code equal (4 workers on 3 nodes)} or what differs. */
  String catalogAgreement() {
    List<String> seen = new ArrayList<>();
    JsonNode first = null;
    boolean equal = true;
    for (ChaosNode n : nodes) {
      JsonNode w = getJson(n, "/workers");
      seen.add(n.name() + ": " + (w == null ? "no answer" : w.size() + " workers"));
      if (w == null) {
        equal = false;
      } else if (first == null) {
        first = w;
      } else if (!first.equals(w)) {
        equal = false;
      }
    }
    if (equal && first != null) {
      return "equal (" + first.size() + " workers on " + nodes.size() + " nodes)";
    }
    return "DIFFER: " + String.join(", ", seen);
  }

  /** The sum of {@code kvselect_cluster_fallbacks_total} over every node's {@code /metrics}, or {@code n/a}. */
  String fallbacks() {
    double sum = 0;
    boolean any = false;
    for (ChaosNode n : nodes) {
      try {
        Answer a = call(n, "GET", "/metrics", null, Duration.ofSeconds(3));
        if (a.status() != 200) {
          continue;
        }
        Matcher m = FALLBACKS.matcher(a.body());
        while (m.find()) {
          any = true;
          sum += Double.parseDouble(m.group(1));
        }
      } catch (IOException | NumberFormatException e) {
        // counted as absent on that node
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return "n/a";
      }
    }
    return any ? Long.toString(Math.round(sum)) : "n/a";
  }

  /** The members every node's {@code /cluster} lists, {@code 3/3/3} ({@code ?} for no answer). */
  String membersSeen() {
    List<String> counts = new ArrayList<>();
    for (ChaosNode n : nodes) {
      int m = members(n);
      counts.add(m < 0 ? "?" : Integer.toString(m));
    }
    return String.join("/", counts);
  }

  /**
   * Members each callable node's {@code /cluster} lists, asked of all at once with a {@code timeout}:
   * {@code 2/2/-} ({@code -} for a node not called now, {@code ?} for no answer in time).
   */
  String membersSnapshot(Duration timeout) {
    List<java.util.concurrent.CompletableFuture<String>> answers = new ArrayList<>();
    for (ChaosNode n : nodes) {
      if (!n.callable()) {
        answers.add(java.util.concurrent.CompletableFuture.completedFuture("-"));
        continue;
      }
      HttpRequest get =
          HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + n.httpPort + "/cluster"))
              .timeout(timeout)
              .GET()
              .build();
      answers.add(
          http.sendAsync(get, HttpResponse.BodyHandlers.ofString())
              .handle(
                  (r, e) -> {
                    if (e != null || r.statusCode() != 200) {
                      return "?";
                    }
                    try {
                      return Integer.toString(JSON.readTree(r.body()).path("members").size());
                    } catch (IOException bad) {
                      return "?";
                    }
                  }));
    }
    List<String> out = new ArrayList<>();
    for (var a : answers) {
      out.add(a.join());
    }
    return String.join("/", out);
  }

  /** Stops every node by PID: SIGCONT, SIGTERM, SIGKILL after 15 s. */
  @Override
  public void close() throws InterruptedException {
    for (ChaosNode n : nodes) {
      n.stop(15);
    }
  }

  /** {@code count} distinct free TCP ports on 127.0.0.1 (all held open until every one is picked). */
  static int[] freePorts(int count) throws IOException {
    List<ServerSocket> held = new ArrayList<>();
    try {
      int[] ports = new int[count];
      for (int i = 0; i < count; i++) {
        ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        held.add(s);
        ports[i] = s.getLocalPort();
      }
      return ports;
    } finally {
      for (ServerSocket s : held) {
        s.close();
      }
    }
  }

  /** Sleeps {@code seconds} (fractional). */
  static void sleepSecs(double seconds) throws InterruptedException {
    TimeUnit.MILLISECONDS.sleep(Math.round(seconds * 1000));
  }
}
