// Over 400 lines: one ext_proc stream's state machine (headers, buffered body, pick, responses,
// errors), its states sharing the held request.
package io.kvselect.server.epp;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.BodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.CommonResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HeaderMutation;
import io.envoyproxy.envoy.service.ext_proc.v3.HeadersResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ImmediateResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.StreamedBodyResponse;
import io.envoyproxy.envoy.service.ext_proc.v3.TrailersResponse;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.grpc.stub.StreamObserver;
import io.vertx.core.Context;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * One {@code ExternalProcessor.Process} stream, in {@code FULL_DUPLEX_STREAMED} body mode: the
 * request headers are held and the body buffered to its end of stream; then one pick
 * ({@link EppPicker}) answers the headers (destination header, {@code Content-Length},
 * {@code ClearRouteCache}, dynamic metadata {@code envoy.lb}) and the body (streamed back whole),
 * or an {@code ImmediateResponse} with a JSON error. On the response path the headers and
 * trailers are acknowledged, the body chunks echoed, and each event drives the {@link StreamBooking}.
 *
 * <p>Owned by one Vert.x context: gRPC delivers on its own threads and every callback hands over
 * to {@code context}, where all state of the stream (and the response observer) is touched.
 */
class ExtProcStream implements StreamObserver<ProcessingRequest> {

  static final String DESTINATION = "x-gateway-destination-endpoint";
  static final String LB_NAMESPACE = "envoy.lb";
  static final String SUBSET_NAMESPACE = "envoy.lb.subset_hint";
  static final String SUBSET_KEY = "x-gateway-destination-endpoint-subset";
  static final String PREFILLER = "x-prefiller-host-port";

  /** Where the gateway reports the endpoint that served (namespace {@link #LB_NAMESPACE}). */
  static final String SERVED = "x-gateway-destination-endpoint-served";

  /** The conformance suite's response header naming the endpoint that served. */
  static final String CONFORMANCE_SERVED = "x-conformance-test-served-endpoint";

  /** Largest body chunk sent back in one message (Envoy's gRPC client takes 4 MiB by default). */
  private static final int CHUNK = 1 << 20;

  private final Context context;
  private final StreamObserver<ProcessingResponse> out;
  private final EppPicker picker;
  private final EppMetrics metrics;
  private final int maxBody;
  private final StreamBooking booking;
  private final CompletableFuture<Void> gone = new CompletableFuture<>();

  private final Map<String, String> headers = new HashMap<>();
  private SubsetHint subset = SubsetHint.ANY;
  private ByteArrayOutputStream body = new ByteArrayOutputStream();
  private boolean picking;

  /** Whether request trailers arrived; their answer follows the body's. */
  private boolean requestTrailers;

  private boolean closed;

  /** Whether the response side was completed (nothing more may be sent). */
  private boolean outDone;

  private final CachedTokens usage = new CachedTokens();
  private EppPicker.Pick pick;
  private boolean usageSeen;

  ExtProcStream(
      Context context,
      StreamObserver<ProcessingResponse> out,
      EppPicker picker,
      EppMetrics metrics,
      int maxBody,
      StreamBooking.Lifecycle lifecycle) {
    this.context = context;
    this.out = out;
    this.picker = picker;
    this.metrics = metrics;
    this.maxBody = maxBody;
    this.booking = new StreamBooking(lifecycle);
  }

  @Override
  public void onNext(ProcessingRequest req) {
    context.runOnContext(v -> handle(req));
  }

  @Override
  public void onError(Throwable t) {
    context.runOnContext(v -> end());
  }

  @Override
  public void onCompleted() {
    context.runOnContext(
        v -> {
          end();
          finish();
        });
  }

  private void handle(ProcessingRequest req) {
    if (closed) {
      return;
    }
    switch (req.getRequestCase()) {
      case REQUEST_HEADERS -> {
        readHeaders(req.getRequestHeaders(), headers);
        subset = subset(req);
        if (req.getRequestHeaders().getEndOfStream()) {
          fail(
              new EppFailure(
                  400, "request body is required (an inference request is a JSON POST)"));
        }
      }
      case REQUEST_BODY -> {
        if (picking) {
          return;
        }
        ByteString chunk = req.getRequestBody().getBody();
        if (body.size() + (long) chunk.size() > maxBody) {
          fail(new EppFailure(413, "request body exceeds " + maxBody + " bytes"));
          return;
        }
        body.writeBytes(chunk.toByteArray()); // one copy: ByteString keeps its bytes private
        if (req.getRequestBody().getEndOfStream()) {
          startPick();
        }
      }
      case REQUEST_TRAILERS -> {
        // acknowledged after the headers and body answers, in the order Envoy sent the phases
        requestTrailers = true;
        if (!picking) {
          startPick();
        }
      }
      case RESPONSE_HEADERS -> {
        Map<String, String> h = new HashMap<>();
        readHeaders(req.getResponseHeaders(), h);
        booking.responseStatus(status(h.get(":status")));
        if (req.getResponseHeaders().getEndOfStream()) {
          booking.end();
        }
        String served = served(req);
        if (served != null && pick != null) {
          follow(pick, served);
        }
        HeadersResponse.Builder ack = HeadersResponse.newBuilder();
        if (served != null && headers.containsKey(EppPicker.CONFORMANCE_SELECTION)) {
          ack.setResponse(
              CommonResponse.newBuilder()
                  .setHeaderMutation(
                      HeaderMutation.newBuilder()
                          .addSetHeaders(header(CONFORMANCE_SERVED, served))));
        }
        send(ProcessingResponse.newBuilder().setResponseHeaders(ack).build());
      }
      case RESPONSE_BODY -> {
        boolean eos = req.getResponseBody().getEndOfStream();
        ByteString chunk = req.getResponseBody().getBody();
        usage.feed(chunk.toByteArray());
        booking.responseBody(eos);
        if (eos) {
          observeUsage();
        }
        send(
            ProcessingResponse.newBuilder()
                .setResponseBody(
                    BodyResponse.newBuilder()
                        .setResponse(
                            CommonResponse.newBuilder()
                                .setBodyMutation(
                                    BodyMutation.newBuilder()
                                        .setStreamedResponse(
                                            StreamedBodyResponse.newBuilder()
                                                .setBody(chunk)
                                                .setEndOfStream(eos)))))
                .build());
      }
      case RESPONSE_TRAILERS -> {
        booking.end();
        observeUsage();
        send(
            ProcessingResponse.newBuilder()
                .setResponseTrailers(TrailersResponse.getDefaultInstance())
                .build());
      }
      default -> {}
    }
  }

  private void startPick() {
    picking = true;
    byte[] bytes = body.toByteArray();
    body = null;
    long started = System.nanoTime();
    picker
        .pick(
            new EppPicker.Proxied(headers.getOrDefault(":path", ""), headers, bytes, subset), gone)
        .whenComplete(
            (p, e) ->
                context.runOnContext(
                    v -> {
                      if (e != null) {
                        metrics.decision(EppFailure.of(e).status(), System.nanoTime() - started, 0);
                        fail(EppFailure.of(e));
                        return;
                      }
                      metrics.decision(200, System.nanoTime() - started, p.renderNanos());
                      if (p.booked()) {
                        booking.booked(p.selectionId());
                      }
                      if (!closed) {
                        pick = p;
                        answer(p, p.rewrittenBody() != null ? p.rewrittenBody() : bytes);
                      }
                    }));
  }

  /** The headers and the body of a routed request. */
  private void answer(EppPicker.Pick p, byte[] bytes) {
    HeaderMutation.Builder mutation =
        HeaderMutation.newBuilder()
            .addSetHeaders(header(DESTINATION, p.destinationValue()))
            .addSetHeaders(header("content-length", Integer.toString(bytes.length)));
    if (p.prefiller() != null) {
      mutation.addSetHeaders(header(PREFILLER, p.prefiller()));
    }
    Struct lb =
        Struct.newBuilder()
            .putFields(DESTINATION, Value.newBuilder().setStringValue(p.destinationValue()).build())
            .build();
    send(
        ProcessingResponse.newBuilder()
            .setRequestHeaders(
                HeadersResponse.newBuilder()
                    .setResponse(
                        CommonResponse.newBuilder()
                            .setHeaderMutation(mutation)
                            .setClearRouteCache(true)))
            .setDynamicMetadata(
                Struct.newBuilder()
                    .putFields(LB_NAMESPACE, Value.newBuilder().setStructValue(lb).build()))
            .build());
    int off = 0;
    do {
      int n = Math.min(CHUNK, bytes.length - off);
      boolean last = off + n >= bytes.length;
      send(
          ProcessingResponse.newBuilder()
              .setRequestBody(
                  BodyResponse.newBuilder()
                      .setResponse(
                          CommonResponse.newBuilder()
                              .setBodyMutation(
                                  BodyMutation.newBuilder()
                                      .setStreamedResponse(
                                          StreamedBodyResponse.newBuilder()
                                              .setBody(ByteString.copyFrom(bytes, off, n))
                                              .setEndOfStream(last)))))
              .build());
      off += n;
    } while (off < bytes.length);
    if (requestTrailers) {
      send(
          ProcessingResponse.newBuilder()
              .setRequestTrailers(TrailersResponse.getDefaultInstance())
              .build());
    }
  }

  /** An immediate response with the failure's status and JSON body; the stream ends here. */
  private void fail(EppFailure f) {
    if (closed) {
      return;
    }
    send(
        ProcessingResponse.newBuilder()
            .setImmediateResponse(
                ImmediateResponse.newBuilder()
                    .setStatus(HttpStatus.newBuilder().setCodeValue(f.status()))
                    .setHeaders(
                        HeaderMutation.newBuilder()
                            .addSetHeaders(header("content-type", "application/json")))
                    .setBody(ByteString.copyFrom(f.body()))
                    .setDetails("kvselect_epp_" + f.status()))
            .build());
    closed = true;
    end();
    finish();
  }

  /** The gateway cancelled or reset the stream: nothing more is sent and the booking ends. */
  void cancelled() {
    context.runOnContext(
        v -> {
          outDone = true;
          end();
        });
  }

  private void finish() {
    if (!outDone) {
      outDone = true;
      out.onCompleted();
    }
  }

  /** Moves the booking when the endpoint that served is not the pick (a gateway retry). */
  private void follow(EppPicker.Pick p, String served) {
    picker
        .moveTo(p, served)
        .whenComplete(
            (id, e) ->
                context.runOnContext(
                    v -> {
                      if (id != null) {
                        booking.moved(id);
                      }
                    }));
  }

  /** The endpoint that served, from the response path's metadata context, or null. */
  static String served(ProcessingRequest req) {
    Struct ns = req.getMetadataContext().getFilterMetadataMap().get(LB_NAMESPACE);
    if (ns == null || !ns.containsFields(SERVED) || !ns.getFieldsOrThrow(SERVED).hasStringValue()) {
      return null;
    }
    String v = ns.getFieldsOrThrow(SERVED).getStringValue().strip();
    return v.isEmpty() ? null : v;
  }

  private void observeUsage() {
    EppMetrics.Observed o = usage.cachedTokens();
    if (pick != null && pick.booked() && o != null && !usageSeen) {
      usageSeen = true;
      metrics.cachedTokens(pick.predictedCachedTokens(), o.cachedTokens());
    }
  }

  /** Called once when the stream is over (for the open-streams gauge). */
  void closed() {}

  private void end() {
    if (!gone.isDone()) {
      closed();
    }
    closed = true;
    gone.complete(null);
    booking.end();
  }

  private void send(ProcessingResponse r) {
    if (!outDone) {
      out.onNext(r);
    }
  }

  private static HeaderValueOption header(String key, String value) {
    return HeaderValueOption.newBuilder()
        .setHeader(
            HeaderValue.newBuilder()
                .setKey(key)
                .setRawValue(ByteString.copyFrom(value, StandardCharsets.UTF_8)))
        .build();
  }

  /** Headers by lower-case name; Envoy sends {@code raw_value}, older senders {@code value}. */
  static void readHeaders(HttpHeaders h, Map<String, String> into) {
    for (HeaderValue v : h.getHeaders().getHeadersList()) {
      String value = v.getRawValue().isEmpty() ? v.getValue() : v.getRawValue().toStringUtf8();
      into.put(v.getKey().toLowerCase(java.util.Locale.ROOT), value);
    }
  }

  /** The subset hint of a request's metadata context: a list of strings or one string. */
  static SubsetHint subset(ProcessingRequest req) {
    Struct ns = req.getMetadataContext().getFilterMetadataMap().get(SUBSET_NAMESPACE);
    if (ns == null || !ns.containsFields(SUBSET_KEY)) {
      return SubsetHint.ANY;
    }
    Value v = ns.getFieldsOrThrow(SUBSET_KEY);
    List<String> values = new ArrayList<>();
    if (v.hasListValue()) {
      for (Value e : v.getListValue().getValuesList()) {
        if (e.hasStringValue()) {
          values.add(e.getStringValue());
        }
      }
    } else if (v.hasStringValue()) {
      values.add(v.getStringValue());
    }
    return SubsetHint.of(values);
  }

  private static int status(String s) {
    try {
      return s == null ? 200 : Integer.parseInt(s.strip());
    } catch (NumberFormatException e) {
      return 200;
    }
  }
}
