package io.kvselect.server.epp;

import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The endpoint picker's added decision latency, printed as a table (not a test): one in-process
 * node (approximate mode, 8 workers, block size 16) with the picker, a render server on loopback,
 * and closed-loop clients at 1, 32 and 256 concurrent streams, each request a fresh prompt of
 * 2,048-8,192 tokens (seeded). Three ways to the same selection, in one run:
 * <ul>
 *   <li>{@code ext_proc, render excluded}: {@code /v1/completions} with the prompt as token ids,
 *       timed from the body's end of stream to the picker's body answer;
 *   <li>{@code ext_proc, render included}: the same prompt as text (one token per character),
 *       rendered by the render server first;
 *   <li>{@code HTTP}: {@code POST /select_and_reserve} with the token ids, timed to its answer.
 * </ul>
 * Every booking is freed afterwards (ext_proc: response end of stream; HTTP: {@code DELETE}).
 *
 * <p>Run: {@code mvn -B -q -o test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt}, then
 * {@code java -cp target/test-classes:target/classes:$(cat target/cp.txt) io.kvselect.server.epp.EppLatencyHarness [requestsPerClient]}.
 */
public final class EppLatencyHarness {

  private static final int[] CONCURRENCY = {1, 32, 256};

  public static void main(String[] args) throws Exception {
    int perClient = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    try (RenderServer render = new RenderServer();
        EppNode node = new EppNode(Map.of(), "--epp-render-url", render.url(), "--epp-render-timeout-secs", "30",
            "--selection-cache-max-entries", "100000")) {
      for (int w = 1; w <= 8; w++) {
        node.worker(w, "bench", "http://127.0.0.1:" + (18100 + w));
      }
      HttpClient http = HttpClient.newBuilder().executor(Executors.newFixedThreadPool(8)).build();
      System.out.printf("%-28s %6s %8s %10s %10s%n", "path", "conc", "n", "p50 ms", "p99 ms");
      for (int c : CONCURRENCY) {
        int n = Math.max(c * perClient, 64);
        row("ext_proc, render excluded", c, n, i -> extProc(node, prompt(i), true));
        row("ext_proc, render included", c, n, i -> extProc(node, prompt(i), false));
        row("HTTP /select_and_reserve", c, n, i -> viaHttp(node, http, prompt(i)));
      }
    }
    System.exit(0);
  }

  interface Call {
    long nanos(int i) throws Exception;
  }

  private static void row(String name, int conc, int n, Call call) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(conc);
    AtomicInteger next = new AtomicInteger();
    long[] lat = new long[n];
    List<Future<?>> fs = new ArrayList<>();
    int base = name.hashCode() * 31 + conc * 1_000_003;
    for (int t = 0; t < conc; t++) {
      fs.add(pool.submit(() -> {
        for (int i = next.getAndIncrement(); i < n; i = next.getAndIncrement()) {
          lat[i] = call.nanos(base + i);
        }
        return null;
      }));
    }
    for (Future<?> f : fs) {
      f.get();
    }
    pool.shutdown();
    Arrays.sort(lat);
    System.out.printf("%-28s %6d %8d %10.2f %10.2f%n", name, conc, n, lat[n / 2] / 1e6, lat[(int) (n * 0.99)] / 1e6);
  }

  /** A fresh prompt of 2,048..8,192 tokens in 'a'..'z' (the render server's tokens are character codes). */
  private static int[] prompt(int seed) {
    SplittableRandom r = new SplittableRandom(seed);
    int[] t = new int[2048 + r.nextInt(6145)];
    for (int i = 0; i < t.length; i++) {
      t[i] = 'a' + r.nextInt(26);
    }
    return t;
  }

  private static long extProc(EppNode node, int[] tokens, boolean asIds) throws Exception {
    String prompt;
    if (asIds) {
      StringBuilder b = new StringBuilder("[");
      for (int i = 0; i < tokens.length; i++) {
        b.append(i == 0 ? "" : ",").append(tokens[i]);
      }
      prompt = b.append(']').toString();
    } else {
      StringBuilder b = new StringBuilder("\"");
      for (int t : tokens) {
        b.append((char) t);
      }
      prompt = b.append('"').toString();
    }
    String body = "{\"model\":\"bench\",\"max_tokens\":1,\"prompt\":" + prompt + "}";
    EnvoyStream s = node.stream();
    s.headers("/v1/completions", Map.of(), null, false);
    long start = System.nanoTime();
    s.body(body, true);
    ProcessingResponse h = s.next(120);
    if (!h.hasRequestHeaders()) {
      throw new IllegalStateException("no pick: " + h);
    }
    s.next(120);
    long took = System.nanoTime() - start;
    s.responseHeaders(200).responseBody("{}", true);
    s.next(120);
    s.next(120);
    s.complete();
    return took;
  }

  private static long viaHttp(EppNode node, HttpClient http, int[] tokens) throws Exception {
    StringBuilder b = new StringBuilder("{\"model_name\":\"bench\",\"token_ids\":[");
    for (int i = 0; i < tokens.length; i++) {
      b.append(i == 0 ? "" : ",").append(tokens[i]);
    }
    String body = b.append("]}").toString();
    URI base = URI.create("http://127.0.0.1:" + node.node.port());
    long start = System.nanoTime();
    HttpResponse<String> r = http.send(HttpRequest.newBuilder(base.resolve("/select_and_reserve"))
        .timeout(Duration.ofSeconds(60)).header("content-type", "application/json")
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    long took = System.nanoTime() - start;
    if (r.statusCode() != 200) {
      throw new IllegalStateException(r.statusCode() + " " + r.body());
    }
    String id = EppNode.JSON.readTree(r.body()).get("selection_id").asText();
    http.send(HttpRequest.newBuilder(base.resolve("/reservations/" + id)).DELETE().build(),
        HttpResponse.BodyHandlers.discarding());
    return took;
  }
}
