package io.kvselect.server.security;

import io.vertx.core.Handler;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The first handler of the router when a token is configured: a request passes when its route is
 * open (its first path segment is one of the open names, such as {@code health}) or when it
 * carries {@code Authorization: Bearer <token>}; otherwise it is answered 401 with {@code
 * WWW-Authenticate: Bearer} and the node's error envelope, before any body is read.
 *
 * <p>The comparison is constant-time in the token's content ({@link MessageDigest#isEqual} on the
 * UTF-8 bytes). Immutable; one instance may serve every HTTP verticle.
 */
public final class BearerAuth implements Handler<RoutingContext> {

  private static final String SCHEME = "bearer ";

  private final byte[] token;
  private final Set<String> open;

  /** {@code token} is non-empty; {@code open} holds route names without a slash. */
  public BearerAuth(String token, List<String> open) {
    if (token == null || token.isEmpty()) {
      throw new IllegalArgumentException("token must not be empty");
    }
    this.token = token.getBytes(StandardCharsets.UTF_8);
    this.open = Set.copyOf(open);
  }

  @Override
  public void handle(RoutingContext ctx) {
    if (isOpen(ctx.normalizedPath())) {
      ctx.next();
      return;
    }
    String header = ctx.request().getHeader("authorization");
    if (header == null) {
      reject(ctx, "missing bearer token (send 'Authorization: Bearer <token>')");
    } else if (!header.regionMatches(true, 0, SCHEME, 0, SCHEME.length())
        || !MessageDigest.isEqual(
            token, header.substring(SCHEME.length()).strip().getBytes(StandardCharsets.UTF_8))) {
      reject(ctx, "invalid bearer token");
    } else {
      ctx.next();
    }
  }

  /**
   * Whether {@code path}'s first segment names an open route, or the path is one of the status
   * page's static files ({@link io.kvselect.server.api.UiRoutes#ASSETS}), which hold no data.
   */
  boolean isOpen(String path) {
    if (path == null) {
      return false;
    }
    if (io.kvselect.server.api.UiRoutes.ASSETS.contains(path)) {
      return true;
    }
    if (open.isEmpty()) {
      return false;
    }
    String p = path.startsWith("/") ? path.substring(1) : path;
    int slash = p.indexOf('/');
    return open.contains((slash < 0 ? p : p.substring(0, slash)).toLowerCase(Locale.ROOT));
  }

  private static void reject(RoutingContext ctx, String message) {
    ctx.response()
        .setStatusCode(401)
        .putHeader("www-authenticate", "Bearer realm=\"kvselect\"")
        .putHeader("content-type", "application/json")
        .end(new JsonObject().put("error", message).encode());
  }
}
