package io.kvselect.server.bus;

import java.util.List;

/**
 * The event-bus addresses of kvselect's API for other Vert.x applications, all cluster-wide.
 * Request addresses take a {@code JsonObject} body and reply with exactly the HTTP response body;
 * event addresses carry published {@code JsonObject}s with a version field {@code v}. Bodies,
 * failure codes and event schemas are documented in {@code docs/event-bus.md}.
 */
public final class BusAddresses {

  private BusAddresses() {}

  /** {@code POST /select}. */
  public static final String SELECT = "kvselect.api.select";

  /** {@code POST /select_and_reserve}. */
  public static final String SELECT_AND_RESERVE = "kvselect.api.select-and-reserve";

  /** {@code POST /reservations}. */
  public static final String RESERVE = "kvselect.api.reserve";

  /** {@code POST /reservations/{id}/prefill_complete}; body {@code {"selection_id": ...}}. */
  public static final String PREFILL_COMPLETE = "kvselect.api.prefill-complete";

  /** {@code POST /reservations/{id}/output_block}; body {@code {"selection_id": ..., "decay_fraction"?}}. */
  public static final String OUTPUT_BLOCK = "kvselect.api.output-block";

  /** {@code DELETE /reservations/{id}}; body {@code {"selection_id": ...}}. */
  public static final String FREE = "kvselect.api.free";

  /** {@code GET /workers}; body {@code {"model_name"?, "routing_group"?}}; replies a {@code JsonArray}. */
  public static final String WORKERS_LIST = "kvselect.api.workers.list";

  /** One catalog record; body {@code {"worker_id": ...}}. */
  public static final String WORKERS_GET = "kvselect.api.workers.get";

  /** {@code POST /workers}. */
  public static final String WORKERS_CREATE = "kvselect.api.workers.create";

  /** {@code PATCH /workers/{id}}; the PATCH body plus {@code worker_id}. */
  public static final String WORKERS_PATCH = "kvselect.api.workers.patch";

  /** {@code DELETE /workers/{id}}; body {@code {"worker_id": ...}}. */
  public static final String WORKERS_DELETE = "kvselect.api.workers.delete";

  /** Published once per booking. */
  public static final String EVENTS_SELECTIONS = "kvselect.events.selections";

  /** Published once per catalog change (registration, replacement, patch, removal). */
  public static final String EVENTS_WORKERS = "kvselect.events.workers";

  /** The message header naming the router-queue policy class (HTTP's header of the same name). */
  public static final String POLICY_CLASS_HEADER =
      io.kvselect.server.api.ApiOperations.POLICY_CLASS_HEADER;

  /** Version of the published event schemas (the {@code v} field). */
  public static final int EVENTS_VERSION = 1;

  /** Every request address, in documentation order. */
  public static final List<String> API =
      List.of(
          SELECT,
          SELECT_AND_RESERVE,
          RESERVE,
          PREFILL_COMPLETE,
          OUTPUT_BLOCK,
          FREE,
          WORKERS_LIST,
          WORKERS_GET,
          WORKERS_CREATE,
          WORKERS_PATCH,
          WORKERS_DELETE);
}
