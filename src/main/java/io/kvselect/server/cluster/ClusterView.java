package io.kvselect.server.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.core.HazelcastInstance;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code GET /cluster} and the {@code cluster} field of {@code /ready} report: whether the
 * node is clustered, the cluster's name, this node's id and the members with their addresses, and
 * a {@code state}:
 * <ul>
 *   <li>{@code standalone}: started without {@code --cluster};
 *   <li>{@code joined}: this member sees at least one other member;
 *   <li>{@code alone}: a cluster of one (no listed member answered, or every other member left);
 *   <li>{@code down}: the Hazelcast member is no longer running (the node is stopping).
 * </ul>
 *
 * <p>Threading: immutable apart from the Hazelcast instance, whose member list is read locally
 * (no remote call), so every method is safe on an event loop.
 */
public final class ClusterView {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterView.class);

  /** The member attribute in which Vert.x's Hazelcast cluster manager publishes its node id. */
  private static final String VERTX_NODE_ID = "__vertx.nodeId";

  private static final ClusterView STANDALONE = new ClusterView(null, null, null);

  private final ClusterSettings settings;
  private final HazelcastInstance hazelcast;
  private final String nodeId;

  /**
   * Why {@code /ready} answers 503 whatever the service says (a joining node still recovering its
   * catalog and index from a peer), or null. Written by the start-up path, read by any thread.
   */
  private volatile String notReady;

  /** What node-to-node sync reports under {@code sync}; set once the node is in step. */
  private volatile java.util.function.Supplier<Map<String, Object>> sync;

  private volatile java.util.function.Supplier<String> fence;
  private volatile java.util.function.Supplier<
          io.kvselect.core.session.BudgetedSessionAffinity.Stats>
      fallbacks;
  private volatile io.kvselect.core.budget.CallBudget budget;
  private volatile io.kvselect.core.kvc.BudgetedKvcState kvc;

  /** The repair of this member's event-bus registrations, or null (an embedded node has none). */
  private volatile SubscriptionRepair subscriptionRepair;

  private volatile StalledHandshakeReaper handshakeReaper;

  ClusterView(ClusterSettings settings, HazelcastInstance hazelcast, String nodeId) {
    this.settings = settings;
    this.hazelcast = hazelcast;
    this.nodeId = nodeId;
  }

  /**
   * The view of kvselect deployed into an application's clustered Vert.x: the name and TCP-IP
   * member list as the application's Hazelcast configuration has them.
   */
  public static ClusterView embedded(HazelcastInstance hz, String nodeId) {
    com.hazelcast.config.Config c = hz.getConfig();
    com.hazelcast.config.TcpIpConfig tcp = c.getNetworkConfig().getJoin().getTcpIpConfig();
    ClusterSettings s =
        new ClusterSettings(
            true,
            c.getClusterName(),
            tcp.isEnabled() ? tcp.getMembers() : List.of(),
            c.getNetworkConfig().getPort(),
            hz.getCluster().getLocalMember().getAddress().getHost());
    return new ClusterView(s, hz, nodeId);
  }

  /** The view of a node started without {@code --cluster}. */
  public static ClusterView standalone() {
    return STANDALONE;
  }

  public boolean enabled() {
    return hazelcast != null;
  }

  /** {@code standalone}, {@code joined}, {@code alone} or {@code down}. */
  public String state() {
    if (hazelcast == null) {
      return "standalone";
    }
    if (!hazelcast.getLifecycleService().isRunning()) {
      return "down";
    }
    return hazelcast.getCluster().getMembers().size() > 1 ? "joined" : "alone";
  }

  /** This member's address as the others reach it ({@code host:port}), or null when standalone. */
  public String address() {
    if (hazelcast == null || !hazelcast.getLifecycleService().isRunning()) {
      return null;
    }
    return address(hazelcast.getCluster().getLocalMember());
  }

  /** {@code /ready} answers 503 with {@code reason} until {@link #releaseReady}. */
  public void holdReady(String reason) {
    this.notReady = reason;
  }

  /** Ends {@link #holdReady}: the node's recovery finished (done, no peer, or failed and given up). */
  public void releaseReady() {
    this.notReady = null;
  }

  /** The reason {@code /ready} must answer 503 now (recovering, or fenced after a pause), or null. */
  public String notReadyReason() {
    String r = notReady;
    java.util.function.Supplier<String> f = fence;
    return r != null || f == null ? r : f.get();
  }

  /** Adds the pause fence's reason ({@link PeerSync#fenceReason}) to {@link #notReadyReason}. */
  public void attachFence(java.util.function.Supplier<String> reason) {
    this.fence = reason;
  }

  /** Adds the KVC-Router state's fallbacks to {@code GET /cluster} under {@code fallbacks.kvc_state}. */
  public void attachKvcFallbacks(io.kvselect.core.kvc.BudgetedKvcState k) {
    this.kvc = k;
  }

  /** Adds node-to-node sync's report ({@link PeerSync#json}) to {@code GET /cluster} as {@code sync}. */
  public void attachSync(java.util.function.Supplier<Map<String, Object>> report) {
    this.sync = report;
  }

  /**
   * Adds the session table's fallbacks ({@link io.kvselect.core.session.BudgetedSessionAffinity})
   * to {@code GET /cluster} as {@code fallbacks}.
   */
  public void attachFallbacks(
      java.util.function.Supplier<io.kvselect.core.session.BudgetedSessionAffinity.Stats> f,
      io.kvselect.core.budget.CallBudget budget) {
    this.fallbacks = f;
    this.budget = budget;
  }

  /** The body of {@code GET /cluster}. */
  public Map<String, Object> json() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("enabled", enabled());
    String state = state();
    m.put("state", state);
    if (hazelcast == null) {
      return m;
    }
    m.put("name", settings.name());
    m.put("node_id", nodeId);
    m.put("address", address());
    m.put("listed_members", settings.members());
    List<Map<String, Object>> members = new ArrayList<>();
    if (!"down".equals(state)) {
      for (Member member : hazelcast.getCluster().getMembers()) {
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("id", nodeId(member));
        row.put("member_uuid", member.getUuid().toString());
        row.put("address", address(member));
        row.put("local", member.localMember());
        String role = member.getAttribute(ClusterBootstrap.ROLE_ATTRIBUTE);
        row.put("role", role == null ? "unknown" : role);
        row.put("lite", member.isLiteMember());
        members.add(row);
      }
    }
    m.put("members", members);
    if ("alone".equals(state)) {
      m.put("note", aloneNote());
    }
    java.util.function.Supplier<io.kvselect.core.session.BudgetedSessionAffinity.Stats> f =
        fallbacks;
    if (f != null) {
      io.kvselect.core.session.BudgetedSessionAffinity.Stats st = f.get();
      Map<String, Object> fb = new LinkedHashMap<>();
      fb.put("call_budget_ms", settings.callBudgetMillis());
      fb.put("session_lookups", st.lookupFallbacks());
      fb.put("session_binds", st.bindFallbacks());
      fb.put("session_releases", st.releaseFallbacks());
      fb.put("unconfirmed_bindings", st.unconfirmed());
      fb.put("written_back", st.writeBacks());
      fb.put("write_back_conflicts", st.writeBackConflicts());
      fb.put("near_cache_entries", st.nearCacheSize());
      fb.put("restored_from_near_cache", st.restoredLookups());
      io.kvselect.core.kvc.BudgetedKvcState k = kvc;
      if (k != null) {
        fb.put("kvc_state", k.fallbacks());
      }
      io.kvselect.core.budget.CallBudget b = budget;
      if (b != null) {
        fb.put("breaker_trips", b.trips());
        fb.put("members_not_waited_for", b.tripped());
      }
      m.put("fallbacks", fb);
    }
    SubscriptionRepair repair = subscriptionRepair;
    if (repair != null) {
      m.put("subscription_repair", Map.of("republished", repair.republished()));
    }
    StalledHandshakeReaper reaper = handshakeReaper;
    if (reaper != null) {
      m.put(
          "unanswered_connections",
          Map.of("closed", reaper.closed(), "limit_ms", reaper.limitMillis()));
    }
    java.util.function.Supplier<Map<String, Object>> report = sync;
    if (report != null) {
      m.put("sync", report.get());
    }
    return m;
  }

  /** Reports {@code repair}'s re-puts under {@code subscription_repair}; set once at start-up. */
  void subscriptionRepair(SubscriptionRepair repair) {
    this.subscriptionRepair = repair;
  }

  /** Reports {@code reaper}'s closed connections under {@code unanswered_connections}; set once at start-up. */
  void handshakeReaper(StalledHandshakeReaper reaper) {
    this.handshakeReaper = reaper;
  }

  /** The {@code cluster} field of {@code /ready}: enabled, state and member count. */
  public Map<String, Object> readyJson() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("enabled", enabled());
    String state = state();
    m.put("state", state);
    if (hazelcast != null) {
      m.put("name", settings.name());
      m.put("members", "down".equals(state) ? 0 : hazelcast.getCluster().getMembers().size());
    }
    return m;
  }

  /** The start-up lines: clustered, name, members, this member's address; a cluster of one says so. */
  List<String> startLines() {
    List<String> lines = new ArrayList<>();
    Set<Member> members = hazelcast.getCluster().getMembers();
    lines.add(
        "cluster: clustered as '"
            + settings.name()
            + "', this member "
            + address()
            + " (node id "
            + nodeId
            + "), "
            + members.size()
            + (members.size() == 1 ? " member: " : " members: ")
            + String.join(", ", members.stream().map(ClusterView::address).toList()));
    if (members.size() == 1) {
      lines.add("cluster: " + aloneNote());
    }
    return lines;
  }

  /** Logs every later membership change. */
  void logMembership() {
    hazelcast
        .getCluster()
        .addMembershipListener(
            new MembershipListener() {
              @Override
              public void memberAdded(MembershipEvent e) {
                LOG.info(
                    "cluster: member {} joined; {} members",
                    address(e.getMember()),
                    e.getMembers().size());
              }

              @Override
              public void memberRemoved(MembershipEvent e) {
                LOG.warn(
                    "cluster: member {} left; {} members{}",
                    address(e.getMember()),
                    e.getMembers().size(),
                    e.getMembers().size() == 1 ? " (this node now runs as a cluster of one)" : "");
              }
            });
  }

  private String aloneNote() {
    String self = address();
    List<String> others = settings.members().stream().filter(m -> !m.equals(self)).toList();
    return others.isEmpty()
        ? "no other member listed; running as a cluster of one until others join"
        : "none of the listed members ("
            + String.join(", ", others)
            + ") answered; running as a cluster of one";
  }

  /** The Vert.x node id of a member (what {@code node_id} reports for the local one), else its Hazelcast UUID. */
  private static String nodeId(Member m) {
    String id = m.getAttribute(VERTX_NODE_ID);
    return id != null ? id : m.getUuid().toString();
  }

  private static String address(Member m) {
    return m.getAddress().getHost() + ":" + m.getAddress().getPort();
  }
}
