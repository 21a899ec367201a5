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
 * Below the rendered row, the render time the picker's own meter ({@code kvselect_epp_render_seconds})
 * recorded for those requests (p50 and p99 as histogram bucket bounds, and the mean): what a cache
 * of renders could save at most, on a hit.
 * Every booking is freed afterwards (ext_proc: response end of stream; HTTP: {@code DELETE}).
 *
 * <p>Run: {@code mvn -B -q -o test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt}, then
 * {@code java -cp target/test-classes:target/classes:$(cat target/cp.txt) io.kvselect.server.epp.EppLatencyHarness [requestsPerClient [c1,c2,...]]}
 * (concurrency levels 1,32,256 unless given).
 */
public final class EppLatencyHarness {

  private static final int[] CONCURRENCY = {1, 32, 256};

  public static void main(String[] args) throws Exception {
    int perClient = args.length > 0 ? Integer.parseInt(args[0]) : 8;
    int[] levels =
        args.length > 1
            ? Arrays.stream(args[1].split(",")).mapToInt(Integer::parseInt).toArray()
            : CONCURRENCY;
    try (RenderServer render = new RenderServer();
        EppNode node =
            new EppNode(
                Map.of(),
                "--epp-render-url",
                render.url(),
                "--epp-render-timeout-secs",
                "30",
                "--selection-cache-max-entries",
                "100000")) {
      for (int w = 1; w <= 8; w++) {
        node.worker(w, "bench", "http://127.0.0.1:" + (18100 + w));
      }
      HttpClient http = HttpClient.newBuilder().executor(Executors.newFixedThreadPool(8)).build();
      System.out.printf("%-28s %6s %8s %10s %10s%n", "path", "conc", "n", "p50 ms", "p99 ms");
      for (int c : levels) {
        int n = Math.max(c * perClient, 64);
        row("ext_proc, render excluded", c, n, i -> extProc(node, prompt(i), true));
        double[] before = renders(node);
        row("ext_proc, render included", c, n, i -> extProc(node, prompt(i), false));
        double[] after = renders(node);
        long renders = Math.round(after[1] - before[1]);
        System.out.printf(
            "%-28s %6d %8d %10.2f %10.2f   (bucket bounds; mean %.2f ms)%n",
            "  of it rendering",
            c,
            renders,
            renderQuantileMillis(before, after, 0.5),
            renderQuantileMillis(before, after, 0.99),
            renders == 0 ? 0 : (after[0] - before[0]) / renders * 1e3);
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
      fs.add(
          pool.submit(
              () -> {
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
    System.out.printf(
        "%-28s %6d %8d %10.2f %10.2f%n",
        name, conc, n, lat[n / 2] / 1e6, lat[(int) (n * 0.99)] / 1e6);
  }

  /**
   * The picker's render meter on {@code /metrics}: total seconds, count, then the cumulative count
   * of each histogram bucket (upper bounds in {@link #RENDER_BOUNDS}, ascending).
   */
  private static double[] renders(EppNode node) throws Exception {
    List<double[]> buckets = new ArrayList<>();
    double sum = 0;
    double count = 0;
    String bucket = "kvselect_epp_render_seconds_bucket{le=\"";
    for (String l : node.http("GET", "/metrics", null).body().split("\n")) {
      if (l.startsWith("kvselect_epp_render_seconds_sum ")) {
        sum = Double.parseDouble(l.substring(l.indexOf(' ') + 1).strip());
      } else if (l.startsWith("kvselect_epp_render_seconds_count ")) {
        count = Double.parseDouble(l.substring(l.indexOf(' ') + 1).strip());
      } else if (l.startsWith(bucket)) {
        String le = l.substring(bucket.length(), l.indexOf('"', bucket.length()));
        buckets.add(
            new double[] {
              le.equals("+Inf") ? Double.POSITIVE_INFINITY : Double.parseDouble(le),
              Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1).strip())
            });
      }
    }
    buckets.sort(java.util.Comparator.comparingDouble(b -> b[0]));
    RENDER_BOUNDS = buckets.stream().mapToDouble(b -> b[0]).toArray();
    double[] out = new double[2 + buckets.size()];
    out[0] = sum;
    out[1] = count;
    for (int i = 0; i < buckets.size(); i++) {
      out[2 + i] = buckets.get(i)[1];
    }
    return out;
  }

  /** The render histogram's bucket bounds (seconds), as last read. */
  private static double[] RENDER_BOUNDS = new double[0];

  /** The upper bound (ms) of the bucket holding quantile {@code q} of the renders between two readings. */
  private static double renderQuantileMillis(double[] before, double[] after, double q) {
    double n = after[1] - before[1];
    for (int i = 2; i < after.length; i++) {
      double below = after[i] - (i < before.length ? before[i] : 0);
      if (below >= q * n) {
        return RENDER_BOUNDS[i - 2] * 1e3;
      }
    }
    return Double.NaN;
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
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(base.resolve("/select_and_reserve"))
                .timeout(Duration.ofSeconds(60))
                .header("content-type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    long took = System.nanoTime() - start;
    if (r.statusCode() != 200) {
      throw new IllegalStateException(r.statusCode() + " " + r.body());
    }
    String id = EppNode.JSON.readTree(r.body()).get("selection_id").asText();
    http.send(
        HttpRequest.newBuilder(base.resolve("/reservations/" + id)).DELETE().build(),
        HttpResponse.BodyHandlers.discarding());
    return took;
  }
}
