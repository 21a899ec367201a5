package io.kvselect.server;

import com.hazelcast.core.HazelcastInstance;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.PrefixChainIndex;
import io.kvselect.core.index.ShardedBlockIndex;
import io.kvselect.core.queue.QueueConfig;
import io.kvselect.core.service.SelectionService;
import io.kvselect.core.service.SelectionServiceBuilder;
import io.kvselect.core.service.ServiceSettings;
import io.kvselect.core.session.LocalSessionAffinity;
import io.kvselect.server.cluster.ClusterSeams;
import io.kvselect.server.cluster.PeerSync;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import io.kvselect.server.events.BusIndexShards;
import io.kvselect.server.kvc.HttpAdmissionClient;
import io.kvselect.server.session.BusSessionAffinity;
import io.kvselect.server.sync.replica.BusLoadSync;
import io.kvselect.server.sync.replica.ReplicaSync;
import io.vertx.core.Vertx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The parts of one node, built once from its settings before anything is deployed: the selection
 * service, Dynamo's replica sync (with {@code --replica-sync-port}; built, not started: its
 * verticle starts it) and, on a
 * clustered Vert.x, the node-to-node sync and the Hazelcast member. {@link NodeAssembly} deploys
 * them; {@link KvselectNode} and {@code Kvselect.deploy} are the two handles over it, so a part is
 * never handed from one to the other on the side.
 *
 * <p>Immutable; the parts themselves are owned by the node they are deployed as (started by
 * {@link NodeAssembly#deploy}, stopped by the handle's close or undeploy).
 *
 * @param service the selection service every verticle of the node shares
 * @param replica Dynamo's replica sync, or null without {@code --replica-sync-port}; owned by the
 *     {@code ReplicaSyncVerticle} the node's {@code MainVerticle} deploys
 * @param sync node-to-node sync, or null when standalone
 * @param hazelcast the Hazelcast member under a clustered Vert.x, or null when standalone
 */
public record NodeParts(
    SelectionService service, ReplicaSync replica, PeerSync sync, HazelcastInstance hazelcast) {

  /** A standalone node over a service built elsewhere (tests, tools): no replica sync, no cluster. */
  public static NodeParts of(SelectionService service) {
    return new NodeParts(service, null, null, null);
  }

  /**
   * The parts of a standalone node on {@code vertx} as {@code bin/kvselect} builds them. Every
   * partition's event index is a {@link ShardedBlockIndex} of {@code threads} shards (one with
   * {@code --threads 1}): the KV-event threads write it while selections read it, so even a single
   * shard sits behind its lock. With {@code --replica-sync-port} the service sends its booking
   * steps to the replica-sync verticle over {@code vertx}'s event bus ({@link BusLoadSync}); with
   * session affinity its session table is the session-affinity verticle's, called over the bus
   * ({@link BusSessionAffinity}).
   */
  public static NodeParts standalone(NodeSettings s, Vertx vertx) {
    ReplicaSync replica = replicaSync(s);
    SelectionServiceBuilder b = indexReads(builder(s), vertx);
    if (replica != null) {
      b.loadSync(new BusLoadSync(vertx));
    }
    if (s.sessionAffinityTtlSecs() != null) {
      // the table belongs to the session-affinity verticle; the service reaches it over the bus
      Duration ttl = Duration.ofSeconds(s.sessionAffinityTtlSecs());
      b.sessionAffinity(
          clock ->
              new BusSessionAffinity(
                  vertx,
                  replica == null
                      ? new LocalSessionAffinity(clock, ttl)
                      : replica.affinity(new LocalSessionAffinity(clock, ttl))));
    }
    return new NodeParts(b.build(), replica, null, null);
  }

  /**
   * The parts of a cluster member on the clustered {@code vertx} whose Hazelcast member is
   * {@code hz}: the shared seams ({@link ClusterSeams#build}) and a new {@link PeerSync}, with
   * Dynamo's replica sync beside them when {@code --replica-sync-port} is set. The one clustered
   * assembly of {@code bin/kvselect --cluster} and {@code Kvselect.deploy}.
   */
  public static NodeParts clustered(NodeSettings s, Vertx vertx, HazelcastInstance hz) {
    ReplicaSync replica = replicaSync(s);
    PeerSync sync = new PeerSync(vertx, PeerSync.options(s.cluster()));
    SelectionService service =
        ClusterSeams.build(
            indexReads(builder(s), vertx),
            s,
            vertx,
            hz,
            sync,
            replica == null ? null : new BusLoadSync(vertx));
    return new NodeParts(service, replica, sync, hz);
  }

  /** Members of the cluster this node sees (0 once its Hazelcast member stopped; 1 standalone). */
  public int members() {
    if (hazelcast == null) {
      return 1;
    }
    return hazelcast.getLifecycleService().isRunning()
        ? hazelcast.getCluster().getMembers().size()
        : 0;
  }

  /** Dynamo's replica sync when {@code --replica-sync-port} is set, else null (not started). */
  private static ReplicaSync replicaSync(NodeSettings s) {
    return s.replicaSyncPort() == null
        ? null
        : new ReplicaSync(
            s.replicaSyncPort(),
            s.host(),
            s.replicaSyncPeers(),
            s.sessionAffinityTtlSecs() != null);
  }

  /**
   * Selections read the event index's shards in place; only with {@code -Dkvselect.index.reads=bus}
   * do they ask each shard's verticle over the bus ({@link BusIndexShards}, kept so that the
   * measurement in {@code docs/design.md} can be repeated).
   */
  private static SelectionServiceBuilder indexReads(SelectionServiceBuilder b, Vertx vertx) {
    return BusIndexShards.selected()
        ? b.indexShards(indexOf -> new BusIndexShards(vertx, indexOf))
        : b;
  }

  /**
   * The builder of a node's service; a clustered node adds its shared seams to it, and
   * {@code bin/kvselect-sim} builds the service it replays workloads through with it (on its own
   * clock and a seeded RNG), so the simulator decides as a node does.
   */
  public static SelectionServiceBuilder builder(NodeSettings s) {
    ServiceSettings settings =
        new ServiceSettings(
            s.router(),
            s.sessionAffinityTtlSecs() == null
                ? null
                : Duration.ofSeconds(s.sessionAffinityTtlSecs()),
            Duration.ofNanos((long) (s.selectionCacheTtlSecs() * 1e9)),
            s.selectionCacheMaxEntries(),
            s.selectionCacheMaxBytes(),
            () -> new ShardedBlockIndex(Math.max(1, s.threads()), PrefixChainIndex::new));
    return SelectionService.builder()
        .settings(settings)
        .queue(queueConfig(s.router()), Duration.ofNanos((long) (s.routerQueueTimeoutSecs() * 1e9)))
        .admissionClient(new HttpAdmissionClient(HttpAdmissionClient.DEFAULT_TIMEOUT));
  }

  /**
   * The router queue's classes and ISL tiers from {@code router_policy_config}: a YAML file when
   * the value names one, else the YAML text itself; absent means one class with
   * {@code router_queue_policy}. A bad document stops the node with a message naming the field.
   */
  static QueueConfig queueConfig(RouterConfig router) {
    String v = router.queue().policyConfig();
    if (v == null || v.isBlank()) {
      return QueueConfig.defaults(router.queue().policy());
    }
    try {
      Path path = Path.of(v);
      String yaml = Files.isRegularFile(path) ? Files.readString(path) : v;
      return QueueConfig.parse(yaml, router.queue().policy());
    } catch (IOException | InvalidPathException e) {
      throw new CliException("router_policy_config: cannot read " + v + ": " + e.getMessage());
    } catch (io.kvselect.core.config.ConfigException e) {
      throw new CliException("router_policy_config: " + e.getMessage());
    }
  }
}
