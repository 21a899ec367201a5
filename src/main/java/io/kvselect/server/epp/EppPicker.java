package io.kvselect.server.epp;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.index.WorkerRank;
import io.kvselect.core.service.PromptInput;
import io.kvselect.core.service.ReservationRequest;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.Selection;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.config.EppSettings;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One pick of the endpoint picker, independent of the protocol that asked for it: parse the proxied
 * body ({@link InferenceRequest}), find the partition's workers inside the gateway's subset
 * ({@link SubsetHint}), render the prompt to token ids ({@link RenderClient}, unless the request
 * carries them), then book with the service's {@code select_and_reserve} and name the destination
 * and its fallbacks ({@link Destinations}). Every failure is an {@link EppFailure} with the status
 * the gateway answers; a failed pick books nothing.
 *
 * <p>Stateless and thread-safe; the returned stage completes on the render client's or the
 * service's threads.
 */
public final class EppPicker {

  /** The request as the gateway proxies it: path, lower-case headers, the whole body and the subset hint. */
  public record Proxied(String path, Map<String, String> headers, byte[] body, SubsetHint subset) {}

  /**
   * A booked pick: the selection id to free, the destination list (the pick first, then the
   * fallbacks), the worker chosen, the device overlap predicted for it (tokens), the time spent
   * rendering (0 when none), for a prefill/decode split the prefill worker's {@code host:port},
   * and the body to forward when it was rewritten (token ids injected), else null.
   */
  public record Pick(
      String selectionId,
      List<String> destinations,
      long workerId,
      int dpRank,
      long predictedCachedTokens,
      long renderNanos,
      String prefiller,
      PartitionKey partition,
      int[] tokenIds,
      byte[] rewrittenBody) {

    /** Whether the pick booked anything (a conformance-test pick does not). */
    public boolean booked() {
      return selectionId != null;
    }

    /** The value of {@code x-gateway-destination-endpoint}: the destinations comma-joined. */
    public String destinationValue() {
      return String.join(",", destinations);
    }
  }

  /** The conformance suite's hook: the endpoints to answer, comma-joined, instead of a pick (nothing booked). */
  public static final String CONFORMANCE_SELECTION = "test-epp-endpoint-selection";

  private final SelectionService service;
  private final RenderClient renderer;
  private final EppSettings settings;

  public EppPicker(SelectionService service, RenderClient renderer, EppSettings settings) {
    this.service = service;
    this.renderer = renderer;
    this.settings = settings;
  }

  /** Picks and books a worker for {@code p}; {@code gone} completes when the client went away (leaves the queue). */
  public CompletionStage<Pick> pick(Proxied p, CompletionStage<?> gone) {
    try {
      InferenceApi api = InferenceApi.ofPath(p.path());
      if (api == null) {
        throw new EppFailure(
            404,
            "path "
                + p.path()
                + " is not an inference route (/v1/chat/completions,"
                + " /v1/completions, /v1/messages)");
      }
      InferenceRequest req = InferenceRequest.parse(api, p.body());
      String forced = p.headers().get(CONFORMANCE_SELECTION);
      if (forced != null) {
        return CompletableFuture.completedFuture(conformancePick(forced, p.subset()));
      }
      PartitionKey partition =
          new PartitionKey(req.model(), p.headers().get(settings.routingGroupHeader()));
      List<WorkerRecord> eligible = eligible(partition, p.subset());
      String session = p.headers().get(settings.sessionHeader());
      long[] allowed =
          p.subset().present()
              ? eligible.stream().mapToLong(WorkerRecord::workerId).toArray()
              : null;
      long renderStart = System.nanoTime();
      CompletionStage<int[]> tokens =
          req.tokenIds() != null
              ? CompletableFuture.completedFuture(req.tokenIds())
              : renderer.render(renderBase(eligible), api, req.renderBody());
      return tokens.thenCompose(
          ids -> {
            long renderNanos = req.tokenIds() != null ? 0 : System.nanoTime() - renderStart;
            SelectRequest sel =
                new SelectRequest(
                    partition,
                    null,
                    PromptInput.tokens(ids),
                    null,
                    null,
                    session == null || session.isBlank() ? null : session,
                    null,
                    null,
                    null,
                    allowed,
                    null,
                    null,
                    false);
            byte[] rewritten =
                settings.injectTokenIds()
                        && api == InferenceApi.COMPLETIONS
                        && req.tokenIds() == null
                    ? InferenceRequest.withTokenPrompt(p.body(), ids)
                    : null;
            return service
                .select(sel, true, gone)
                .thenApply(s -> pick(s, eligible, p.subset(), renderNanos, ids, rewritten));
          });
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /** The schedulable workers of {@code partition} with a routable rank inside {@code subset}; 503 when none. */
  private List<WorkerRecord> eligible(PartitionKey partition, SubsetHint subset) {
    List<WorkerRecord> out = new ArrayList<>();
    for (WorkerRecord w : service.listWorkers(partition.modelName(), partition.routingGroup())) {
      if (w.schedulable() && w.ranks().stream().anyMatch(r -> admitted(w, r, subset))) {
        out.add(w);
      }
    }
    if (out.isEmpty()) {
      throw new EppFailure(
          503,
          subset.present()
              ? "no worker of " + partition + " is inside the gateway's subset " + subset
              : "no worker ready for " + partition);
    }
    return out;
  }

  private static boolean admitted(WorkerRecord w, WorkerRank r, SubsetHint subset) {
    String d = destination(w, r.dpRank());
    return d != null && subset.admits(d);
  }

  /** Where prompts are rendered: the configured renderer, else the first eligible worker's endpoint. */
  private String renderBase(List<WorkerRecord> eligible) {
    if (settings.renderUrl() != null) {
      return settings.renderUrl();
    }
    String d = destination(eligible.get(0), eligible.get(0).spec().dataParallelStartRank());
    String endpoint = eligible.get(0).spec().endpoint();
    String scheme = endpoint != null && endpoint.strip().startsWith("https://") ? "https" : "http";
    if (d == null) {
      throw new EppFailure(
          503, "no render URL: set --epp-render-url or register worker endpoints as URLs");
    }
    return scheme + "://" + d;
  }

  private Pick pick(
      Selection s,
      List<WorkerRecord> eligible,
      SubsetHint subset,
      long renderNanos,
      int[] ids,
      byte[] rewritten) {
    List<String> dests = new ArrayList<>();
    WorkerRecord chosen = service.worker(s.workerId());
    String first =
        chosen == null ? Destinations.of(s.endpoint(), 0) : destination(chosen, s.dpRank());
    if (first == null) {
      service.free(s.selectionId());
      throw new EppFailure(
          503, "worker " + Long.toUnsignedString(s.workerId()) + " has no routable endpoint");
    }
    dests.add(first);
    fallbacks(s, eligible, subset, dests);
    String prefiller = null;
    if (s.kvc() != null && s.kvc().prefill() != null) {
      prefiller = Destinations.of(s.kvc().prefill().endpoint(), 0);
    }
    long predicted = s.overlap() == null ? 0 : s.overlap().gpu();
    return new Pick(
        s.selectionId(),
        List.copyOf(dests),
        s.workerId(),
        s.dpRank(),
        predicted,
        renderNanos,
        prefiller,
        s.partition(),
        ids,
        rewritten);
  }

  /**
   * Appends up to {@code --epp-fallbacks} other workers to {@code dests}: first the selection's
   * own ranking of the ranks it did not choose ({@link Selection#alternatives}, best first by the
   * policy's cost: cached prefix against load), one destination per worker at its best-ranked rank
   * inside the subset; then, for workers the selection's filters left out (a session's bound
   * worker, a pinned one), the remaining eligible workers in catalog order.
   */
  private void fallbacks(
      Selection s, List<WorkerRecord> eligible, SubsetHint subset, List<String> dests) {
    Set<Long> listed = new HashSet<>();
    listed.add(s.workerId());
    for (WorkerRank r : s.alternatives()) {
      if (dests.size() > settings.fallbacks()) {
        return;
      }
      WorkerRecord w = service.worker(r.workerId());
      String d = w == null ? null : destination(w, r.dpRank());
      if (d != null && subset.admits(d) && !listed.contains(r.workerId()) && !dests.contains(d)) {
        listed.add(r.workerId());
        dests.add(d);
      }
    }
    for (WorkerRecord w : eligible) {
      if (dests.size() > settings.fallbacks()) {
        return;
      }
      String d =
          w.ranks().stream()
              .map(r -> destination(w, r.dpRank()))
              .filter(x -> x != null && subset.admits(x))
              .findFirst()
              .orElse(null);
      if (d != null && !listed.contains(w.workerId()) && !dests.contains(d)) {
        listed.add(w.workerId());
        dests.add(d);
      }
    }
  }

  /** The conformance hook's endpoints inside the subset, as a pick that books nothing; 503 when none is. */
  private static Pick conformancePick(String forced, SubsetHint subset) {
    List<String> dests = new ArrayList<>();
    for (String e : forced.split(",")) {
      String d = e.strip();
      if (!d.isEmpty() && subset.admits(d)) {
        dests.add(d);
      }
    }
    if (dests.isEmpty()) {
      throw new EppFailure(
          503, "no endpoint of " + CONFORMANCE_SELECTION + " is inside the subset " + subset);
    }
    return new Pick(null, List.copyOf(dests), 0, 0, 0, 0, null, null, null, null);
  }

  /**
   * Books the same prompt on the worker whose destination is {@code served} (the gateway retried
   * the request elsewhere), under a new selection id; completes with that id, or null when
   * {@code served} is the pick itself or no registered worker rank.
   */
  public CompletionStage<String> moveTo(Pick p, String served) {
    if (!p.booked() || p.destinations().get(0).equals(served)) {
      return CompletableFuture.completedFuture(null);
    }
    for (WorkerRecord w :
        service.listWorkers(p.partition().modelName(), p.partition().routingGroup())) {
      for (WorkerRank r : w.ranks()) {
        if (served.equals(destination(w, r.dpRank()))) {
          String id = p.selectionId() + ".served";
          return service
              .reserve(
                  new ReservationRequest(
                      p.partition(),
                      id,
                      w.workerId(),
                      r.dpRank(),
                      PromptInput.tokens(p.tokenIds()),
                      null,
                      null,
                      null,
                      null))
              .thenApply(x -> id);
        }
      }
    }
    return CompletableFuture.completedFuture(null);
  }

  /** The {@code host:port} of rank {@code dpRank} of {@code w}, or null when its endpoint is not routable. */
  static String destination(WorkerRecord w, int dpRank) {
    return Destinations.of(w.spec().endpoint(), dpRank - w.spec().dataParallelStartRank());
  }
}
