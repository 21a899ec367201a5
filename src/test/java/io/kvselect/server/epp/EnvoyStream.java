package io.kvselect.server.epp;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import com.google.protobuf.ByteString;
import com.google.protobuf.ListValue;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpTrailers;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * One {@code ext_proc} stream driven as Envoy's filter drives it in {@code FULL_DUPLEX_STREAMED}
 * mode, over a real gRPC channel built from Envoy's published protos: request headers (with the
 * subset hint in the metadata context), body chunks, then the upstream's response headers, body
 * chunks and trailers; every answer lands in a queue the test reads in order.
 */
final class EnvoyStream {

  final BlockingQueue<ProcessingResponse> answers = new LinkedBlockingQueue<>();
  volatile Throwable error;
  volatile boolean completed;
  private final StreamObserver<ProcessingRequest> requests;

  EnvoyStream(ManagedChannel channel) {
    requests =
        ExternalProcessorGrpc.newStub(channel)
            .process(
                new StreamObserver<>() {
                  @Override
                  public void onNext(ProcessingResponse r) {
                    answers.add(r);
                  }

                  @Override
                  public void onError(Throwable t) {
                    error = t;
                  }

                  @Override
                  public void onCompleted() {
                    completed = true;
                  }
                });
  }

  /** Request headers of a POST to {@code path}; {@code subset} (nullable) is put in the metadata context as given. */
  EnvoyStream headers(String path, Map<String, String> extra, Value subset, boolean endOfStream) {
    HeaderMap.Builder h =
        HeaderMap.newBuilder()
            .addHeaders(raw(":method", "POST"))
            .addHeaders(raw(":path", path))
            .addHeaders(raw(":authority", "gateway"))
            .addHeaders(raw("content-type", "application/json"));
    extra.forEach((k, v) -> h.addHeaders(raw(k, v)));
    ProcessingRequest.Builder r =
        ProcessingRequest.newBuilder()
            .setRequestHeaders(HttpHeaders.newBuilder().setHeaders(h).setEndOfStream(endOfStream));
    if (subset != null) {
      r.setMetadataContext(
          Metadata.newBuilder()
              .putFilterMetadata(
                  "envoy.lb.subset_hint",
                  Struct.newBuilder()
                      .putFields("x-gateway-destination-endpoint-subset", subset)
                      .build()));
    }
    requests.onNext(r.build());
    return this;
  }

  EnvoyStream body(String chunk, boolean endOfStream) {
    requests.onNext(
        ProcessingRequest.newBuilder()
            .setRequestBody(
                HttpBody.newBuilder()
                    .setBody(ByteString.copyFromUtf8(chunk))
                    .setEndOfStream(endOfStream))
            .build());
    return this;
  }

  EnvoyStream responseHeaders(int status) {
    return responseHeaders(status, null);
  }

  /** Response headers; {@code served} (nullable) is the endpoint that served, in metadata {@code envoy.lb}. */
  EnvoyStream responseHeaders(int status, String served) {
    ProcessingRequest.Builder r =
        ProcessingRequest.newBuilder()
            .setResponseHeaders(
                HttpHeaders.newBuilder()
                    .setHeaders(
                        HeaderMap.newBuilder()
                            .addHeaders(raw(":status", Integer.toString(status)))
                            .addHeaders(raw("content-type", "text/event-stream"))));
    if (served != null) {
      r.setMetadataContext(
          Metadata.newBuilder()
              .putFilterMetadata(
                  "envoy.lb",
                  Struct.newBuilder()
                      .putFields("x-gateway-destination-endpoint-served", string(served))
                      .build()));
    }
    requests.onNext(r.build());
    return this;
  }

  EnvoyStream responseBody(String chunk, boolean endOfStream) {
    requests.onNext(
        ProcessingRequest.newBuilder()
            .setResponseBody(
                HttpBody.newBuilder()
                    .setBody(ByteString.copyFromUtf8(chunk))
                    .setEndOfStream(endOfStream))
            .build());
    return this;
  }

  EnvoyStream requestTrailers() {
    requests.onNext(
        ProcessingRequest.newBuilder()
            .setRequestTrailers(
                HttpTrailers.newBuilder()
                    .setTrailers(HeaderMap.newBuilder().addHeaders(raw("x-trailer", "1"))))
            .build());
    return this;
  }

  EnvoyStream responseTrailers() {
    requests.onNext(
        ProcessingRequest.newBuilder()
            .setResponseTrailers(
                HttpTrailers.newBuilder()
                    .setTrailers(HeaderMap.newBuilder().addHeaders(raw("grpc-status", "0"))))
            .build());
    return this;
  }

  /** The client resets the stream (Envoy's downstream went away). */
  void cancel() {
    requests.onError(Status.CANCELLED.withDescription("client went away").asRuntimeException());
  }

  void complete() {
    requests.onCompleted();
  }

  /** The next answer, waiting up to ten seconds. */
  ProcessingResponse next() throws InterruptedException {
    return next(10);
  }

  /** The next answer, waiting up to {@code seconds}. */
  ProcessingResponse next(long seconds) throws InterruptedException {
    ProcessingResponse r = answers.poll(seconds, TimeUnit.SECONDS);
    assertNotNull(r, "no ext_proc answer within " + seconds + " s (error: " + error + ")");
    return r;
  }

  /** The value of header {@code name} set by a headers answer, or null. */
  static String setHeader(ProcessingResponse r, String name) {
    for (var o : r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
      if (o.getHeader().getKey().equals(name)) {
        return o.getHeader().getRawValue().isEmpty()
            ? o.getHeader().getValue()
            : o.getHeader().getRawValue().toString(StandardCharsets.UTF_8);
      }
    }
    return null;
  }

  static Value list(String... entries) {
    ListValue.Builder l = ListValue.newBuilder();
    for (String e : entries) {
      l.addValues(Value.newBuilder().setStringValue(e));
    }
    return Value.newBuilder().setListValue(l).build();
  }

  static Value string(String s) {
    return Value.newBuilder().setStringValue(s).build();
  }

  private static HeaderValue raw(String k, String v) {
    return HeaderValue.newBuilder().setKey(k).setRawValue(ByteString.copyFromUtf8(v)).build();
  }
}
