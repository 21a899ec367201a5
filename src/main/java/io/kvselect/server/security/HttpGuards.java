package io.kvselect.server.security;

import io.kvselect.server.config.OperationsSettings;
import io.kvselect.server.drain.RequestGate;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.ext.web.Router;

/**
 * What the HTTP verticles put in front of the routes and into their server options: the request
 * gate a drain waits on, the bearer-token check, and the TLS key material. Immutable; shared by
 * every HTTP verticle instance.
 *
 * @param gate counts in-flight requests, or null
 * @param auth the token check, or null when every route is open
 * @param tls PEM certificate and key, or null for plain HTTP
 */
public record HttpGuards(RequestGate gate, BearerAuth auth, PemKeyCertOptions tls) {

  /** No gate, no token, plain HTTP. */
  public static final HttpGuards NONE = new HttpGuards(null, null, null);

  /** The guards {@code s} asks for, around {@code gate}. */
  public static HttpGuards of(OperationsSettings s, RequestGate gate) {
    BearerAuth auth = s.authEnabled() ? new BearerAuth(s.authToken(), s.authOpen()) : null;
    PemKeyCertOptions tls =
        s.tlsEnabled()
            ? new PemKeyCertOptions()
                .setCertPath(s.tlsCert().toString())
                .setKeyPath(s.tlsKey().toString())
            : null;
    return new HttpGuards(gate, auth, tls);
  }

  /** Installs the gate, then the token check, on every route of {@code router}. */
  public void mount(Router router) {
    if (gate != null) {
      router.route().handler(gate);
    }
    if (auth != null) {
      router.route().handler(auth);
    }
  }

  /** {@code options} with TLS switched on when key material is set. */
  public HttpServerOptions apply(HttpServerOptions options) {
    return tls == null ? options : options.setSsl(true).setKeyCertOptions(tls);
  }
}
