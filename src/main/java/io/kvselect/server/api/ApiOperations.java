package io.kvselect.server.api;

import io.kvselect.core.catalog.WorkerRecord;
import io.kvselect.core.error.ErrorCode;
import io.kvselect.core.error.SelectionException;
import io.kvselect.core.service.SelectRequest;
import io.kvselect.core.service.SelectionService;
import io.kvselect.server.events.KvEventsCoordinator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one parse → service → render path of the selection and catalog operations, shared by the
 * HTTP routes and the event-bus API: each operation takes the raw JSON request body (and the
 * values HTTP carries in the path, query or headers), calls {@link SelectionService} and renders
 * exactly the HTTP response body. A bad body never reaches the service: the returned stage fails
 * with the parser's {@link SelectionException} (status and message as HTTP answers them), and a
 * failed operation changes nothing.
 *
 * <p>Stateless and thread-safe; stages may complete on any thread (a clustered store's), so
 * callers hop back to their own context before answering.
 */
public final class ApiOperations {

  /** Dynamo's header naming the router-queue policy class of a selection. */
  public static final String POLICY_CLASS_HEADER = Routes.POLICY_CLASS_HEADER;

  private static final Logger LOG = LoggerFactory.getLogger(ApiOperations.class);

  /** An answer: the HTTP status of success and the JSON body, exactly as HTTP writes it. */
  public record Result(int status, byte[] body) {}

  /** A failure as both front-ends answer it: the HTTP status and the error envelope. */
  public record Failure(int status, byte[] body) {}

  private final SelectionService service;
  private final KvEventsCoordinator events;

  /** {@code events} is null when the node runs without KV-event ingestion. */
  public ApiOperations(SelectionService service, KvEventsCoordinator events) {
    this.service = service;
    this.events = events;
  }

  public SelectionService service() {
    return service;
  }

  // ---- selections and reservations ----

  /**
   * {@code POST /select} or {@code /select_and_reserve}; {@code policyClass} is the router-queue
   * class header (nullable), {@code gone} completes when the caller went away (nullable).
   */
  public CompletionStage<Result> select(
      byte[] body, String policyClass, boolean reserve, CompletionStage<?> gone) {
    return select(BodyBytes.of(body), policyClass, reserve, gone);
  }

  /**
   * As {@link #select(byte[], String, boolean, CompletionStage)} on a body read in place: it is
   * decoded before this returns, so the caller's buffer may go away afterwards.
   */
  CompletionStage<Result> select(
      BodyBytes body, String policyClass, boolean reserve, CompletionStage<?> gone) {
    return call(
        200,
        () -> {
          SelectRequest req = RequestParsers.select(body);
          if (policyClass != null && !policyClass.isBlank()) {
            req = req.withPolicyClass(policyClass.trim());
          }
          return service.select(req, reserve, gone);
        },
        ResponseJson::selection);
  }

  /** {@code POST /reservations}. */
  public CompletionStage<Result> reserve(byte[] body) {
    return call(
        201, () -> service.reserve(RequestParsers.reservation(body)), ResponseJson::reservation);
  }

  /** {@code POST /reservations/{id}/prefill_complete}. */
  public CompletionStage<Result> prefillComplete(String selectionId) {
    return call(200, () -> service.prefillComplete(selectionId), v -> ResponseJson.status("ok"));
  }

  /** {@code POST /reservations/{id}/output_block}; {@code decayFraction} is null when absent. */
  public CompletionStage<Result> outputBlock(String selectionId, Double decayFraction) {
    return call(
        200, () -> service.outputBlock(selectionId, decayFraction), v -> ResponseJson.status("ok"));
  }

  /** {@code DELETE /reservations/{id}}. */
  public CompletionStage<Result> free(String selectionId) {
    return call(200, () -> service.free(selectionId), v -> ResponseJson.status("ok"));
  }

  // ---- workers ----

  /** {@code GET /workers}, optionally filtered; with KV-event listener state when ingesting. */
  public CompletionStage<Result> listWorkers(String modelName, String routingGroup) {
    return call(
        200,
        () -> CompletableFuture.completedFuture(service.listWorkers(modelName, routingGroup)),
        ws -> WorkerJsonWriter.workers(ws, events == null ? null : events.stats(), events));
  }

  /** One catalog record, as {@code GET /workers} lists it (without listener state); 404 if absent. */
  public CompletionStage<Result> worker(long workerId) {
    return call(
        200,
        () -> {
          WorkerRecord w = service.worker(workerId);
          if (w == null) {
            throw SelectionException.notFound(
                "worker " + Long.toUnsignedString(workerId) + " not found");
          }
          return CompletableFuture.completedFuture(w);
        },
        WorkerJsonWriter::worker);
  }

  /**
   * {@code POST /workers}. Unknown fields are accepted and ignored, as Dynamo does, but each is
   * named: in the answer's {@code warnings} and in a WARN line.
   */
  public CompletionStage<Result> createWorker(byte[] body) {
    return call(
        201,
        () -> {
          WorkerJson.Parsed p = WorkerJson.parseWithWarnings(body);
          warn(p);
          return service.upsertWorker(p.spec()).thenApply(w -> new Answered(w, p.warnings()));
        },
        a -> WorkerJsonWriter.worker(a.worker(), a.warnings()));
  }

  /** {@code PATCH /workers/{id}}; unknown fields as in {@link #createWorker}. */
  public CompletionStage<Result> patchWorker(long workerId, byte[] body) {
    AtomicReference<WorkerJson.Parsed> parsed = new AtomicReference<>();
    return call(
        200,
        () ->
            service
                .patchWorker(
                    workerId,
                    spec -> {
                      WorkerJson.Parsed p = WorkerJson.patchWithWarnings(spec, body);
                      parsed.set(p);
                      return p.spec();
                    })
                .thenApply(
                    w -> {
                      WorkerJson.Parsed p = parsed.get();
                      warn(p);
                      return new Answered(w, p == null ? List.of() : p.warnings());
                    }),
        a -> WorkerJsonWriter.worker(a.worker(), a.warnings()));
  }

  /** A stored record with the warnings about its body. */
  private record Answered(WorkerRecord worker, List<String> warnings) {}

  private static void warn(WorkerJson.Parsed p) {
    if (p != null && !p.warnings().isEmpty()) {
      LOG.warn(
          "worker {}: {}",
          Long.toUnsignedString(p.spec().workerId()),
          String.join("; ", p.warnings()));
    }
  }

  /** {@code DELETE /workers/{id}}: answers once the worker's listeners are closed and its blocks removed. */
  public CompletionStage<Result> deleteWorker(long workerId) {
    return call(
        200,
        () ->
            events == null
                ? service.deleteWorker(workerId)
                : service
                    .deleteWorker(workerId)
                    .thenCompose(w -> events.settled(workerId).handle((v, e) -> w)),
        WorkerJsonWriter::worker);
  }

  /** The catalog record as {@code GET /workers} writes it (used by published worker events). */
  public static byte[] workerJson(WorkerRecord w) {
    return WorkerJsonWriter.worker(w);
  }

  // ---- bodies of the event-bus forms ----

  /**
   * The {@code selection_id} of a {@code {"selection_id": "..."}} body (other fields ignored);
   * 422 naming the field when it is missing, not a string or empty.
   */
  public static String selectionId(byte[] body) {
    String[] id = new String[1];
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject(
          (k, r) -> {
            if (k.equals("selection_id")) {
              id[0] = r.string(k);
            } else {
              r.skip();
            }
          });
    }
    if (id[0] == null) {
      throw JsonReader.missing("selection_id");
    }
    if (id[0].isEmpty()) {
      throw SelectionException.unprocessable("field `selection_id` must not be empty");
    }
    return id[0];
  }

  /** The optional {@code decay_fraction} of an output-block body; null when absent. */
  public static Double decayFraction(byte[] body) {
    Double[] f = new Double[1];
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject(
          (k, r) -> {
            if (k.equals("decay_fraction")) {
              f[0] = r.number(k);
            } else {
              r.skip();
            }
          });
    }
    return f[0];
  }

  /** The {@code endpoint} of a replica-peer body; 422 naming the field when it is missing or mistyped. */
  public static String replicaEndpoint(byte[] body) {
    String[] endpoint = new String[1];
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject(
          (k, r) -> {
            if (k.equals("endpoint")) {
              endpoint[0] = r.string(k);
            } else {
              r.skip();
            }
          });
    }
    if (endpoint[0] == null) {
      throw JsonReader.missing("endpoint");
    }
    return endpoint[0];
  }

  /** The {@code worker_id} (u64) of a body; 422 naming the field when it is missing or mistyped. */
  public static long workerId(byte[] body) {
    Long[] id = new Long[1];
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject(
          (k, r) -> {
            if (k.equals("worker_id")) {
              id[0] = r.u64(k);
            } else {
              r.skip();
            }
          });
    }
    if (id[0] == null) {
      throw JsonReader.missing("worker_id");
    }
    return id[0];
  }

  /** The optional {@code model_name} and {@code routing_group} filters of a list body. */
  public static String[] workerFilters(byte[] body) {
    String[] s = new String[2];
    try (JsonReader reader = new JsonReader(body, 0, body.length)) {
      reader.readRootObject(
          (k, r) -> {
            switch (k) {
              case "model_name" -> s[0] = r.string(k);
              case "routing_group" -> s[1] = r.string(k);
              default -> r.skip();
            }
          });
    }
    return s;
  }

  // ---- failures ----

  /**
   * The answer to a failed operation, exactly as HTTP's failure handler writes it: a
   * {@link SelectionException} keeps its status, message and details; anything else is a 500
   * {@code internal error} (the caller logs it).
   */
  public static Failure failure(Throwable t) {
    Throwable u = SelectionException.unwrap(t);
    if (u instanceof SelectionException se) {
      return new Failure(
          se.code().httpStatus(),
          ResponseJson.error(WellFormedText.of(se.getMessage()), se.details()));
    }
    return new Failure(ErrorCode.INTERNAL.httpStatus(), ResponseJson.error("internal error"));
  }

  /** The error envelope of a failure raised outside an operation (e.g. a body of the wrong type). */
  public static Failure failure(ErrorCode code, String message) {
    return new Failure(code.httpStatus(), ResponseJson.error(WellFormedText.of(message)));
  }

  /**
   * Runs {@code op} (a synchronous throw, such as a parse error, becomes a failed stage) and
   * renders its value; a failing renderer fails the stage.
   */
  private static <T> CompletionStage<Result> call(
      int status, Supplier<CompletionStage<T>> op, Function<T, byte[]> render) {
    CompletionStage<T> stage;
    try {
      stage = op.get();
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
    return stage.thenApply(v -> new Result(status, render.apply(v)));
  }
}
