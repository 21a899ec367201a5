package io.kvselect.examples;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.HeaderMap;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.envoyproxy.envoy.service.ext_proc.v3.ExternalProcessorGrpc;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpBody;
import io.envoyproxy.envoy.service.ext_proc.v3.HttpHeaders;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingRequest;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.RequestOptions;
import java.util.Map;

/**
 * A minimal gateway that plays Envoy's part in front of kvselect's endpoint picker, for trying the
 * picker without Kubernetes: for each HTTP request it opens an {@code ext_proc} stream
 * ({@code FULL_DUPLEX_STREAMED}), sends the headers and the body, proxies the request to the
 * first endpoint of {@code x-gateway-destination-endpoint} (the next one when a connection fails,
 * reported back as {@code x-gateway-destination-endpoint-served}), and streams the response
 * through the picker to the client. An immediate response from the picker is answered as is.
 * No TLS, no retries on HTTP errors, one picker: a demonstration, not a proxy to deploy.
 *
 * <p>Run from the repository root with the fat jar (it carries Vert.x, grpc-java and Envoy's API):
 * {@code java -cp target/kvselect-*-fat.jar examples/java/io/kvselect/examples/EppGateway.java
 * 127.0.0.1:9002 8080}: picker address, then the gateway's HTTP port.
 */
public final class EppGateway implements AutoCloseable {

  private final Vertx vertx;
  private final ManagedChannel channel;
  private final HttpClient upstream;
  private HttpServer server;

  public EppGateway(Vertx vertx, String pickerHost, int pickerPort) {
    this.vertx = vertx;
    this.channel = NettyChannelBuilder.forAddress(pickerHost, pickerPort).usePlaintext().build();
    this.upstream = vertx.createHttpClient();
  }

  /** Starts listening on {@code port} (0: ephemeral) of 127.0.0.1; returns the bound port. */
  public int listen(int port) throws Exception {
    server = vertx.createHttpServer().requestHandler(this::handle).listen(port, "127.0.0.1")
        .toCompletionStage().toCompletableFuture().get();
    return server.actualPort();
  }

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: EppGateway PICKER_HOST:PORT LISTEN_PORT");
      System.exit(2);
    }
    String[] picker = args[0].split(":");
    EppGateway g = new EppGateway(Vertx.vertx(), picker[0], Integer.parseInt(picker[1]));
    System.out.println("gateway listening on 127.0.0.1:" + g.listen(Integer.parseInt(args[1])));
  }

  private void handle(HttpServerRequest req) {
    Context ctx = vertx.getOrCreateContext();
    req.body().onSuccess(body -> new Exchange(ctx, req, body).start())
        .onFailure(e -> req.response().setStatusCode(400).end());
  }

  /** One proxied request and its ext_proc stream; every callback runs on {@code ctx}. */
  private final class Exchange implements StreamObserver<ProcessingResponse> {
    private final Context ctx;
    private final HttpServerRequest req;
    private final Buffer body;
    private final Buffer forwarded = Buffer.buffer();
    private StreamObserver<ProcessingRequest> picker;
    private String[] destinations;
    private Map<String, String> setHeaders = new java.util.HashMap<>();

    Exchange(Context ctx, HttpServerRequest req, Buffer body) {
      this.ctx = ctx;
      this.req = req;
      this.body = body;
    }

    void start() {
      picker = ExternalProcessorGrpc.newStub(channel).process(this);
      HeaderMap.Builder h = HeaderMap.newBuilder().addHeaders(header(":method", req.method().name()))
          .addHeaders(header(":path", req.uri())).addHeaders(header(":authority", req.authority().toString()));
      req.headers().forEach((k, v) -> h.addHeaders(header(k.toLowerCase(java.util.Locale.ROOT), v)));
      picker.onNext(ProcessingRequest.newBuilder().setRequestHeaders(HttpHeaders.newBuilder().setHeaders(h)).build());
      picker.onNext(ProcessingRequest.newBuilder().setRequestBody(HttpBody.newBuilder()
          .setBody(ByteString.copyFrom(body.getBytes())).setEndOfStream(true)).build());
    }

    @Override
    public void onNext(ProcessingResponse r) {
      ctx.runOnContext(v -> {
        if (r.hasImmediateResponse()) {
          var i = r.getImmediateResponse();
          req.response().setStatusCode(i.getStatus().getCodeValue()).putHeader("content-type", "application/json")
              .end(Buffer.buffer(i.getBody().toByteArray()));
        } else if (r.hasRequestHeaders()) {
          for (HeaderValueOption o : r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList()) {
            setHeaders.put(o.getHeader().getKey(), o.getHeader().getRawValue().toStringUtf8());
          }
          destinations = setHeaders.get("x-gateway-destination-endpoint").split(",");
        } else if (r.hasRequestBody()) {
          var s = r.getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
          forwarded.appendBytes(s.getBody().toByteArray());
          if (s.getEndOfStream()) {
            forward(0);
          }
        } else if (r.hasResponseBody()) {
          var s = r.getResponseBody().getResponse().getBodyMutation().getStreamedResponse();
          req.response().write(Buffer.buffer(s.getBody().toByteArray()));
          if (s.getEndOfStream()) {
            req.response().end();
            picker.onCompleted();
          }
        }
      });
    }

    /** Sends the request to destination {@code i}; a failed connection tries the next one. */
    private void forward(int i) {
      String[] hp = destinations[i].strip().split(":");
      RequestOptions o = new RequestOptions().setMethod(HttpMethod.POST).setHost(hp[0])
          .setPort(Integer.parseInt(hp[1])).setURI(req.uri());
      req.headers().forEach(o::putHeader);
      setHeaders.forEach(o::putHeader);
      upstream.request(o).compose(c -> c.send(forwarded)).onSuccess(res -> relay(res, destinations[i].strip()))
          .onFailure(e -> {
            if (i + 1 < destinations.length) {
              forward(i + 1);
            } else {
              req.response().setStatusCode(502).end("{\"error\":\"no destination reachable\"}");
              picker.onCompleted();
            }
          });
    }

    /** Streams the upstream's response through the picker to the client. */
    private void relay(HttpClientResponse res, String served) {
      req.response().setStatusCode(res.statusCode()).setChunked(true);
      res.headers().forEach((k, v) -> {
        if (!k.equalsIgnoreCase("content-length") && !k.equalsIgnoreCase("transfer-encoding")) {
          req.response().putHeader(k, v);
        }
      });
      picker.onNext(ProcessingRequest.newBuilder().setResponseHeaders(HttpHeaders.newBuilder()
          .setHeaders(HeaderMap.newBuilder().addHeaders(header(":status", Integer.toString(res.statusCode())))))
          .setMetadataContext(Metadata.newBuilder().putFilterMetadata("envoy.lb", Struct.newBuilder()
              .putFields("x-gateway-destination-endpoint-served", Value.newBuilder().setStringValue(served).build())
              .build()))
          .build());
      res.handler(chunk -> picker.onNext(ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder()
          .setBody(ByteString.copyFrom(chunk.getBytes()))).build()));
      res.endHandler(v -> picker.onNext(ProcessingRequest.newBuilder().setResponseBody(HttpBody.newBuilder()
          .setEndOfStream(true)).build()));
    }

    @Override
    public void onError(Throwable t) {
      ctx.runOnContext(v -> {
        if (!req.response().ended()) {
          req.response().setStatusCode(502).end("{\"error\":\"endpoint picker failed\"}");
        }
      });
    }

    @Override
    public void onCompleted() {}
  }

  private static HeaderValue header(String k, String v) {
    return HeaderValue.newBuilder().setKey(k).setRawValue(ByteString.copyFromUtf8(v)).build();
  }

  @Override
  public void close() throws Exception {
    channel.shutdownNow();
    if (server != null) {
      server.close().toCompletionStage().toCompletableFuture().get();
    }
  }
}
