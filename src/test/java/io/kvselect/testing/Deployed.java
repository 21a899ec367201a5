package io.kvselect.testing;

import io.vertx.core.Vertx;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.internal.deployment.DeploymentContext;
import java.util.ArrayList;
import java.util.List;

/** What a Vert.x instance has deployed, read from its deployment manager (for tests of a node's shape). */
public final class Deployed {

  private Deployed() {}

  /** The verticle classes deployed on {@code vertx}, roots and children, sorted by simple name; a root is marked " (root)". */
  public static List<String> verticles(Vertx vertx) {
    List<String> out = new ArrayList<>();
    for (DeploymentContext d : ((VertxInternal) vertx).deploymentManager().deployments()) {
      d.deployment()
          .instances()
          .forEach(v -> out.add(v.getClass().getSimpleName() + (d.isChild() ? "" : " (root)")));
    }
    out.sort(null);
    return out;
  }
}
