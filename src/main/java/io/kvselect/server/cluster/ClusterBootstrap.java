package io.kvselect.server.cluster;

import com.hazelcast.config.Config;
import com.hazelcast.config.EvictionConfig;
import com.hazelcast.config.EvictionPolicy;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.MapConfig;
import com.hazelcast.config.MaxSizePolicy;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.HazelcastInstance;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.spi.VertxMetricsFactory;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.io.File;
import java.io.FileNotFoundException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the clustered Vert.x of a node started with {@code --cluster}: a
 * {@link HazelcastClusterManager} over the Hazelcast configuration of the top-level
 * {@code cluster.xml} (carried by the jar), with the node's {@link ClusterSettings} applied on
 * top: cluster name, TCP-IP member list, member port (auto-increment) and the interface to bind
 * and advertise. The event bus listens on the same interface, on {@code busPort} (ephemeral when 0).
 *
 * <p>An operator who needs another join mechanism (Kubernetes discovery, say) points the
 * {@value #CONFIG_PROPERTY} system property at their own file (a path, or {@code classpath:name});
 * when that file enables a join other than TCP-IP, the member list is left as the file has it.
 *
 * <p>Stateless; called once per node start, off the event loops.
 */
public final class ClusterBootstrap {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterBootstrap.class);

  /** The system property Vert.x's Hazelcast manager reads too: a file path or {@code classpath:NAME}. */
  public static final String CONFIG_PROPERTY = "vertx.hazelcast.config";

  /** The jar's Hazelcast configuration, the repository's top-level {@code cluster.xml}. */
  public static final String CONFIG_RESOURCE = "cluster.xml";

  /** Session bindings ({@link HazelcastSessionAffinity}). */
  public static final String SESSIONS_MAP = "kvselect.sessions";

  /** Pending selections ({@link HazelcastPendingStore}). */
  public static final String PENDING_MAP = "kvselect.pending";

  private ClusterBootstrap() {}

  /** A clustered Vert.x, its Hazelcast member and the view {@code /cluster} serves. */
  public record Clustered(Vertx vertx, HazelcastInstance hazelcast, ClusterView view) {}

  /**
   * The Hazelcast configuration of a node: {@code cluster.xml} (or the {@value #CONFIG_PROPERTY}
   * file) with {@code s} applied, and the pending-selection map capped at {@code pendingMaxEntries}
   * entries per member.
   */
  public static Config config(ClusterSettings s, int pendingMaxEntries) {
    Config c = load();
    c.setClusterName(s.name());
    c.setProperty("hazelcast.phone.home.enabled", "false");
    failureDetection(c, s.failureTimeoutSecs());
    outputThreads(c);
    c.getMemberAttributeConfig().setAttribute(ROLE_ATTRIBUTE, ROLE_NODE);
    NetworkConfig n = c.getNetworkConfig();
    n.setPort(s.port()).setPortAutoIncrement(true);
    n.getInterfaces().setEnabled(true).clear().addInterface(s.host());
    JoinConfig join = n.getJoin();
    boolean otherJoin =
        join.getKubernetesConfig().isEnabled()
            || join.getDiscoveryConfig().isEnabled()
            || join.getAwsConfig().isEnabled()
            || join.getGcpConfig().isEnabled()
            || join.getAzureConfig().isEnabled()
            || join.getEurekaConfig().isEnabled();
    if (!otherJoin) {
      join.getMulticastConfig().setEnabled(false);
      join.getAutoDetectionConfig().setEnabled(false);
      join.getTcpIpConfig().setEnabled(true).clear().setMembers(s.members());
    }
    MapConfig pending = c.getMapConfig(PENDING_MAP);
    pending.setEvictionConfig(
        new EvictionConfig()
            .setEvictionPolicy(EvictionPolicy.LRU)
            .setMaxSizePolicy(MaxSizePolicy.PER_NODE)
            .setSize(pendingMaxEntries));
    return c;
  }

  /**
   * Failure detection in seconds, not a minute: heartbeats every second and a member silent for
   * {@code timeoutSecs} (paused, cut off) is removed, its partitions served from their backups;
   * an invocation waits for a silent member at most twice that; a write waits for a silent
   * backup at most 2 s; split clusters look for each other 5 s after the split and every 5 s
   * after that (Hazelcast's defaults: 60 s, 60 s, 5 s, 300 s and 120 s); a node that is stopped
   * (SIGTERM included) hands its partitions over before it leaves (graceful shutdown, at most
   * 30 s) instead of dropping them. Hazelcast's own settings in the file or on the command line
   * ({@code -Dhazelcast.*}) take precedence over these.
   */
  static void failureDetection(Config c, int timeoutSecs) {
    setDefault(c, "hazelcast.heartbeat.interval.seconds", "1");
    setDefault(c, "hazelcast.max.no.heartbeat.seconds", Integer.toString(timeoutSecs));
    setDefault(c, "hazelcast.heartbeat.failuredetector.type", "deadline");
    setDefault(c, "hazelcast.operation.call.timeout.millis", Long.toString(2000L * timeoutSecs));
    setDefault(c, "hazelcast.operation.backup.timeout.millis", "2000");
    setDefault(c, "hazelcast.merge.first.run.delay.seconds", "5");
    setDefault(c, "hazelcast.merge.next.run.delay.seconds", "5");
    setDefault(c, "hazelcast.shutdownhook.policy", "GRACEFUL");
    setDefault(c, "hazelcast.graceful.shutdown.max.wait", "30");
  }

  /** Hazelcast's output threads on a node unless set: {@value}. */
  static final int OUTPUT_THREADS = 8;

  /**
   * More output threads than Hazelcast's default 3, so that one connection that cannot make
   * progress rarely holds back another. Each member connection is served by one output thread,
   * given round-robin as connections are made, and {@code NioThread} drains its task queue before
   * it selects again. While a member was paused (SIGSTOP runs of 2026-12-04, {@code jstack} of
   * the survivors every 0.5 s), one output thread of each survivor ran without pause in
   * {@code processTaskQueue -> NioOutboundPipeline.process -> postProcessClean -> addTask} (a
   * pipeline that finds nothing to encode yet has frames queued, so it queues itself again),
   * while the survivors' input threads received nothing from each other: the link between them
   * stopped until the paused member woke. With 3 threads that happened in 5 of 13 runs,
   * for longer than the 5 s failure timeout, so the survivors removed each other and split; with
   * 8 threads none of 3 runs stalled or split (docs/benchmarks.md, "Cluster: the SIGSTOP
   * phase"). The looping pipeline is a connection this node opened to the paused member (its
   * kernel completes the connect, nothing answers the protocol header, and
   * {@code UnifiedProtocolEncoder} answers "clean" with the member handshake still queued):
   * {@link StalledHandshakeReaper} closes such a connection after a second, which bounds the
   * stall; the extra threads make a stall of that second on the survivors' link rarer still.
   * {@code -Dhazelcast.io.output.thread.count} or the property in {@code cluster.xml} takes
   * precedence.
   */
  static void outputThreads(Config c) {
    setDefault(c, "hazelcast.io.output.thread.count", Integer.toString(OUTPUT_THREADS));
  }

  private static void setDefault(Config c, String name, String value) {
    if (c.getProperty(name) == null && System.getProperty(name) == null) {
      c.setProperty(name, value);
    }
  }

  /**
   * The Hazelcast configuration for another Vert.x application that joins a kvselect cluster to
   * use its event-bus API ({@code docs/event-bus.md}): the same name, members and interface, as a
   * <em>lite member</em>, which owns no partition, so its coming and going never moves or loses
   * kvselect's session bindings, pending selections or KVC state.
   */
  public static Config applicationConfig(ClusterSettings s) {
    Config c = config(s, 1);
    c.setLiteMember(true);
    c.getMemberAttributeConfig().setAttribute(ROLE_ATTRIBUTE, ROLE_APPLICATION);
    return c;
  }

  /** The member attribute naming what a member is: {@value #ROLE_NODE} or {@value #ROLE_APPLICATION}. */
  public static final String ROLE_ATTRIBUTE = "kvselect.role";

  public static final String ROLE_NODE = "node";
  public static final String ROLE_APPLICATION = "application";

  /**
   * Mutual TLS on the clustered event bus when a keystore is set: every node presents the
   * cluster's certificate and accepts only peers presenting a certificate its keystore trusts, so a
   * process without it can neither send nor receive kvselect messages.
   */
  public static void busTls(
      io.vertx.core.eventbus.EventBusOptions bus, ClusterSettings.BusSecurity sec) {
    if (sec == null || sec.keystore() == null) {
      return;
    }
    io.vertx.core.net.PfxOptions pfx =
        new io.vertx.core.net.PfxOptions().setPath(sec.keystore()).setPassword(sec.password());
    bus.setSsl(true)
        .setKeyCertOptions(pfx)
        .setTrustOptions(pfx)
        .setClientAuth(io.vertx.core.http.ClientAuth.REQUIRED);
  }

  private static void warnIfForeignDataMember(com.hazelcast.cluster.Member m) {
    if (!m.isLiteMember() && !ROLE_NODE.equals(m.getAttribute(ROLE_ATTRIBUTE))) {
      LOG.warn(
          "cluster: member {} is a data member but not a kvselect node: it holds partitions of the session"
              + " table and pending selections, so its leaving can lose them; join applications as lite members"
              + " (ClusterBootstrap.applicationConfig, docs/event-bus.md)",
          m.getAddress());
    }
  }

  private static Config load() {
    String override = System.getProperty(CONFIG_PROPERTY);
    ClassLoader cl = ClusterBootstrap.class.getClassLoader();
    if (override == null || override.isBlank()) {
      return Config.loadFromClasspath(cl, CONFIG_RESOURCE);
    }
    if (override.startsWith("classpath:")) {
      return Config.loadFromClasspath(cl, override.substring("classpath:".length()));
    }
    try {
      return Config.loadFromFile(new File(override));
    } catch (FileNotFoundException e) {
      throw new IllegalArgumentException(
          "-D" + CONFIG_PROPERTY + "=" + override + ": no such file", e);
    }
  }

  /**
   * Builds the clustered Vert.x. Completes once this member has joined a cluster, or formed one
   * of its own when no listed member answered (the log and {@code /cluster} say which).
   */
  public static Future<Clustered> start(
      VertxOptions options, VertxMetricsFactory metrics, ClusterSettings s, int pendingMaxEntries) {
    Config config;
    try {
      s.requireBusProtection();
      config = config(s, pendingMaxEntries);
    } catch (RuntimeException e) {
      return Future.failedFuture(e);
    }
    HazelcastClusterManager manager = new MembershipHandoffClusterManager(config);
    options.getEventBusOptions().setHost(s.host()).setPort(s.busPort());
    busTls(options.getEventBusOptions(), s.busSecurity());
    LOG.info(
        "cluster: starting clustered as '{}' on {} (member port {} or the next free one), members to try: {}",
        s.name(),
        s.host(),
        s.port(),
        s.members().isEmpty() ? "none" : String.join(",", s.members()));
    Promise<Clustered> result = Promise.promise();
    Vertx.builder()
        .with(options)
        .withMetrics(metrics)
        .withClusterManager(manager)
        .buildClustered()
        .onComplete(
            ar -> {
              if (ar.failed()) {
                LOG.error("cluster: the Hazelcast member did not start", ar.cause());
                // no cause attached: the launcher prints the innermost message, and this one names
                // the setting
                result.fail(
                    new IllegalStateException(
                        "cannot start the cluster member on "
                            + s.host()
                            + " (--cluster-host, an IPv4 address of this machine), member port "
                            + s.port()
                            + " or the next free one (--cluster-port): "
                            + String.valueOf(ar.cause().getMessage())
                                .replaceAll("\\s+", " ")
                                .strip()));
                return;
              }
              HazelcastInstance hz = manager.getHazelcastInstance();
              java.util.Optional<SubscriptionRepair> repair =
                  SubscriptionRepair.start(ar.result(), manager);
              hz.getCluster()
                  .addMembershipListener(
                      new com.hazelcast.cluster.MembershipListener() {
                        @Override
                        public void memberAdded(com.hazelcast.cluster.MembershipEvent e) {
                          warnIfForeignDataMember(e.getMember());
                        }

                        @Override
                        public void memberRemoved(com.hazelcast.cluster.MembershipEvent e) {}
                      });
              hz.getCluster().getMembers().forEach(ClusterBootstrap::warnIfForeignDataMember);
              ClusterView view = new ClusterView(s, hz, manager.getNodeId());
              repair.ifPresent(view::subscriptionRepair);
              StalledHandshakeReaper.start(hz).ifPresent(view::handshakeReaper);
              view.logMembership();
              for (String line : view.startLines()) {
                LOG.info(line);
              }
              result.complete(new Clustered(ar.result(), hz, view));
            });
    return result.future();
  }
}
