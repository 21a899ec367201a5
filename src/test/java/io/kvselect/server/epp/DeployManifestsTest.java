package io.kvselect.server.epp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.util.JsonFormat;
import com.hazelcast.config.Config;
import com.hazelcast.config.InvalidConfigurationException;
import com.hazelcast.config.KubernetesConfig;
import com.hazelcast.config.XmlConfigBuilder;
import com.hazelcast.config.properties.PropertyDefinition;
import com.hazelcast.kubernetes.HazelcastKubernetesDiscoveryStrategyFactory;
import com.hazelcast.logging.Logger;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.kvselect.server.cluster.ClusterBootstrap;
import io.kvselect.server.cluster.ClusterSettings;
import io.kvselect.server.config.CliException;
import io.kvselect.server.config.NodeSettings;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The deployment pieces under {@code deploy/} validate without a cluster: the InferencePool
 * against the v1 CRD's required fields and enums; each picker manifest ({@code kvselect.yaml},
 * standalone, and {@code kvselect-clustered.yaml}) against the Kubernetes fields it needs
 * (selectors matching labels, probes and Service ports naming container ports, the picker flags
 * parsing as kvselect parses them); the clustered one also for what a cluster member needs (its
 * Hazelcast file parsed by Hazelcast's own XML builder and its Kubernetes properties by
 * Hazelcast's Kubernetes discovery, mounted where {@code -Dvertx.hazelcast.config} names it, the
 * headless discovery Service, bus TLS from a mounted secret); and the Envoy bootstrap by parsing
 * it into Envoy's own protos (unknown fields and bad enums fail) and checking the ext_proc modes
 * and the ORIGINAL_DST cluster.
 */
class DeployManifestsTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Path K8S = Path.of("deploy/kubernetes");
  private static final Path POOL = K8S.resolve("inferencepool.yaml");
  private static final Path CLUSTERED = K8S.resolve("kvselect-clustered.yaml");

  /** What the downward API gives {@code status.podIP} in these tests. */
  private static final String POD_IP = "10.4.0.7";

  @TempDir Path tmp;

  private static List<JsonNode> documents(Path p) throws Exception {
    List<JsonNode> out = new ArrayList<>();
    try (var it = YAML.readerFor(JsonNode.class).readValues(Files.readString(p))) {
      while (it.hasNext()) {
        JsonNode n = (JsonNode) it.next();
        if (n != null && !n.isNull()) {
          out.add(n);
        }
      }
    }
    return out;
  }

  /** The documents of {@code files} by {@code kind/name}; the same name twice for one kind fails. */
  private static Map<String, JsonNode> byName(Path... files) throws Exception {
    Map<String, JsonNode> out = new LinkedHashMap<>();
    for (Path p : files) {
      for (JsonNode d : documents(p)) {
        assertTrue(
            d.path("apiVersion").isTextual() && d.path("kind").isTextual(),
            p + ": apiVersion and kind");
        String name = d.path("metadata").path("name").asText();
        assertTrue(
            name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"), p + ": metadata.name is a DNS label");
        assertTrue(
            out.put(d.get("kind").asText() + "/" + name, d) == null,
            p + ": one " + d.get("kind") + " " + name);
      }
    }
    return out;
  }

  /** The only document of {@code kind} among {@code docs}. */
  private static JsonNode only(Map<String, JsonNode> docs, String kind) {
    List<JsonNode> found =
        docs.entrySet().stream()
            .filter(e -> e.getKey().startsWith(kind + "/"))
            .map(Map.Entry::getValue)
            .toList();
    assertEquals(1, found.size(), "one " + kind);
    return found.get(0);
  }

  private static JsonNode named(Map<String, JsonNode> docs, String kind, String name) {
    JsonNode d = docs.get(kind + "/" + name);
    assertNotNull(d, kind + " " + name);
    return d;
  }

  @Test
  void everyManifestIsKubernetesShaped() throws Exception {
    try (var files = Files.list(K8S)) {
      List<Path> yaml = files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList();
      assertEquals(
          List.of(POOL, K8S.resolve("kvselect-clustered.yaml"), K8S.resolve("kvselect.yaml"))
              .stream()
              .sorted()
              .toList(),
          yaml,
          "the manifests this test knows");
      for (Path p : yaml) {
        assertFalse(byName(p).isEmpty(), p + " has documents");
      }
    }
  }

  @ParameterizedTest
  @ValueSource(strings = {"kvselect.yaml", "kvselect-clustered.yaml"})
  void theInferencePoolHasTheV1RequiredFieldsAndPointsAtKvselect(String picker) throws Exception {
    Map<String, JsonNode> k = byName(POOL, K8S.resolve(picker));
    JsonNode pool = only(k, "InferencePool");
    assertEquals("inference.networking.k8s.io/v1", pool.get("apiVersion").asText());
    JsonNode spec = pool.get("spec");
    assertFalse(spec.path("selector").path("matchLabels").isEmpty(), "spec.selector.matchLabels");
    JsonNode ports = spec.get("targetPorts");
    assertTrue(
        ports.isArray() && ports.size() >= 1 && ports.size() <= 8, "spec.targetPorts: 1..8 items");
    Set<Integer> seen = new HashSet<>();
    for (JsonNode p : ports) {
      int n = p.path("number").asInt(-1);
      assertTrue(n >= 1 && n <= 65535 && seen.add(n), "targetPorts numbers unique in 1..65535");
    }
    JsonNode ref = spec.get("endpointPickerRef");
    assertNotNull(ref, "spec.endpointPickerRef");
    assertEquals("Service", ref.path("kind").asText("Service"));
    assertTrue(
        Set.of("FailOpen", "FailClose").contains(ref.path("failureMode").asText("FailClose")));
    JsonNode svc = named(k, "Service", ref.path("name").asText());
    int pickerPort = ref.path("port").path("number").asInt();
    boolean found = false;
    for (JsonNode p : svc.path("spec").path("ports")) {
      found |= p.path("port").asInt() == pickerPort;
    }
    assertTrue(found, "endpointPickerRef.port.number is a port of the Service");
  }

  /** The container's environment: literal values, the pod IP for {@code status.podIP}, "pw-" + key for secrets. */
  private static Map<String, String> env(JsonNode container) {
    Map<String, String> env = new HashMap<>();
    container
        .path("env")
        .forEach(
            e -> {
              JsonNode from = e.path("valueFrom");
              String v;
              if (e.has("value")) {
                v = e.get("value").asText();
              } else if (from.at("/fieldRef/fieldPath").asText().equals("status.podIP")) {
                v = POD_IP;
              } else if (from.has("secretKeyRef")) {
                v = "pw-" + from.at("/secretKeyRef/key").asText();
              } else {
                throw new AssertionError("env " + e + ": a value, status.podIP or a secret key");
              }
              env.put(e.get("name").asText(), v);
            });
    return env;
  }

  /**
   * {@code env} with the bus keystore (a file the pod reads from a mounted Secret, which must exist
   * at start) replaced by a stand-in file of that name under {@code tmp}.
   */
  private Map<String, String> withSecretFiles(JsonNode pod, Map<String, String> env)
      throws Exception {
    Map<String, String> out = new HashMap<>(env);
    String keystore = env.get(ClusterSettings.TLS_KEYSTORE_ENV);
    if (keystore != null) {
      Mounted m = mounted(pod, keystore);
      assertTrue(m.volume().has("secret"), keystore + " comes from a Secret");
      Path standIn = Files.createDirectories(tmp.resolve("secret")).resolve(m.key());
      Files.write(standIn, new byte[] {0});
      out.put(ClusterSettings.TLS_KEYSTORE_ENV, standIn.toString());
    }
    return out;
  }

  private static List<String> args(JsonNode container) {
    List<String> args = new ArrayList<>();
    container.path("args").forEach(a -> args.add(a.asText()));
    return args;
  }

  /** Where {@code path} (a file in the container) comes from: the volume mounted above it and the key inside. */
  private record Mounted(JsonNode volume, String key) {}

  private static Mounted mounted(JsonNode pod, String path) {
    for (JsonNode m : pod.at("/containers/0/volumeMounts")) {
      String dir = m.get("mountPath").asText();
      if (path.startsWith(dir + "/") && path.indexOf('/', dir.length() + 1) < 0) {
        for (JsonNode v : pod.path("volumes")) {
          if (v.get("name").asText().equals(m.get("name").asText())) {
            return new Mounted(v, path.substring(dir.length() + 1));
          }
        }
        throw new AssertionError("volumeMount " + m + " names no volume");
      }
    }
    throw new AssertionError(path + " is under no volumeMount");
  }

  /** The text of a file the pod reads from a mounted ConfigMap of {@code docs}. */
  private static String configMapFile(Map<String, JsonNode> docs, JsonNode pod, String path) {
    Mounted m = mounted(pod, path);
    JsonNode cm = named(docs, "ConfigMap", m.volume().at("/configMap/name").asText());
    JsonNode text = cm.at("/data/" + m.key());
    assertTrue(text.isTextual(), "ConfigMap " + cm.at("/metadata/name") + " has " + m.key());
    return text.asText();
  }

  @ParameterizedTest
  @ValueSource(strings = {"kvselect.yaml", "kvselect-clustered.yaml"})
  void theDeploymentRunsThePickerItsServiceAndProbesName(String picker) throws Exception {
    Map<String, JsonNode> k = byName(K8S.resolve(picker));
    JsonNode dep = only(k, "Deployment");
    assertEquals("apps/v1", dep.get("apiVersion").asText());
    JsonNode labels = dep.at("/spec/template/metadata/labels");
    JsonNode picker0 = named(k, "Service", "kvselect-epp");
    dep.at("/spec/selector/matchLabels")
        .fields()
        .forEachRemaining(
            e ->
                assertEquals(
                    e.getValue(),
                    labels.get(e.getKey()),
                    "selector matches the template's labels"));
    dep.at("/spec/selector/matchLabels")
        .fields()
        .forEachRemaining(
            e ->
                assertEquals(
                    e.getValue(),
                    picker0.at("/spec/selector").get(e.getKey()),
                    "Service selects the pods"));
    JsonNode pod = dep.at("/spec/template/spec");
    JsonNode c = pod.at("/containers/0");
    assertTrue(c.path("name").isTextual() && c.path("image").isTextual());
    Set<Integer> containerPorts = new HashSet<>();
    c.path("ports").forEach(p -> containerPorts.add(p.get("containerPort").asInt()));
    for (String probe : new String[] {"livenessProbe", "readinessProbe"}) {
      assertTrue(
          containerPorts.contains(c.path(probe).path("grpc").path("port").asInt()),
          probe + " port");
    }
    assertEquals("liveness", c.at("/livenessProbe/grpc/service").asText());
    assertEquals("readiness", c.at("/readinessProbe/grpc/service").asText());
    for (JsonNode svc : k.values()) {
      if (svc.get("kind").asText().equals("Service")) {
        svc.at("/spec/ports")
            .forEach(
                p ->
                    assertTrue(
                        containerPorts.contains(p.get("targetPort").asInt()),
                        "Service targetPort " + p + " is a container port"));
      }
    }
    List<String> args = args(c);
    String workersPath =
        args.stream()
            .filter(a -> a.startsWith("--workers-file="))
            .findFirst()
            .orElseThrow()
            .substring("--workers-file=".length());
    Path workers = tmp.resolve("workers.yaml");
    Files.writeString(workers, configMapFile(k, pod, workersPath));
    args.replaceAll(a -> a.startsWith("--workers-file=") ? "--workers-file=" + workers : a);
    NodeSettings s = NodeSettings.parse(args.toArray(String[]::new), withSecretFiles(pod, env(c)));
    assertTrue(s.epp().enabled());
    assertTrue(containerPorts.contains(s.epp().port()), "--epp-port is a container port");
    assertTrue(containerPorts.contains(s.port()), "--port is a container port");
    JsonNode listed = YAML.readTree(workers.toFile());
    assertTrue(listed.isArray() && listed.size() >= 1, "the workers file lists workers");
    double drainSecs = s.operations().drainTimeoutSecs();
    assertTrue(
        pod.path("terminationGracePeriodSeconds").asInt(30) >= drainSecs + 10,
        "terminationGracePeriodSeconds above the drain timeout plus closing");
  }

  /** The Hazelcast configuration file the clustered pods read, as {@code -Dvertx.hazelcast.config} names it. */
  private static String clusterXml(Map<String, JsonNode> k, JsonNode pod) {
    String opts = env(pod.at("/containers/0")).getOrDefault("KVSELECT_JAVA_OPTS", "");
    String prefix = "-D" + ClusterBootstrap.CONFIG_PROPERTY + "=";
    String path =
        Arrays.stream(opts.split("\\s+"))
            .filter(o -> o.startsWith(prefix))
            .findFirst()
            .orElseThrow(() -> new AssertionError("KVSELECT_JAVA_OPTS names the cluster config"))
            .substring(prefix.length());
    return configMapFile(k, pod, path);
  }

  /**
   * The file parsed by Hazelcast's XML builder (the schema rejects an unknown element), and the
   * Kubernetes join's properties by the discovery Hazelcast ships (an unknown property, a value
   * of the wrong type or two modes at once fail), as a member would at start.
   */
  private static Config parsedByHazelcast(String xml) {
    Config c =
        new XmlConfigBuilder(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)))
            .build();
    KubernetesConfig join = c.getNetworkConfig().getJoin().getKubernetesConfig();
    HazelcastKubernetesDiscoveryStrategyFactory factory =
        new HazelcastKubernetesDiscoveryStrategyFactory();
    Map<String, PropertyDefinition> known = new HashMap<>();
    factory.getConfigurationProperties().forEach(d -> known.put(d.key(), d));
    Map<String, Comparable> props = new HashMap<>();
    join.getProperties()
        .forEach(
            (key, value) -> {
              PropertyDefinition d = known.get(key);
              if (d == null) {
                throw new InvalidConfigurationException(
                    "kubernetes join: unknown property "
                        + key
                        + " (Hazelcast knows "
                        + new java.util.TreeSet<>(known.keySet())
                        + ")");
              }
              props.put(key, d.typeConverter().convert(value));
            });
    factory.newDiscoveryStrategy(null, Logger.getLogger(DeployManifestsTest.class), props);
    return c;
  }

  @Test
  void theClusteredPickerJoinsThroughKubernetesDiscoveryWithBusTls() throws Exception {
    Map<String, JsonNode> k = byName(CLUSTERED);
    JsonNode dep = only(k, "Deployment");
    JsonNode pod = dep.at("/spec/template/spec");
    JsonNode c = pod.at("/containers/0");
    assertTrue(dep.at("/spec/replicas").asInt() >= 2, "clustered: several replicas");
    Map<String, String> env = env(c);
    List<String> args = args(c);
    args.removeIf(a -> a.startsWith("--workers-file="));
    NodeSettings s = NodeSettings.parse(args.toArray(String[]::new), withSecretFiles(pod, env));
    ClusterSettings cs = s.cluster();
    assertTrue(cs.enabled(), "--cluster");
    assertEquals(POD_IP, cs.host(), "the pod's own IP as --cluster-host (downward API)");
    Set<Integer> containerPorts = new HashSet<>();
    c.path("ports").forEach(p -> containerPorts.add(p.get("containerPort").asInt()));
    assertTrue(
        containerPorts.contains(cs.port()) && containerPorts.contains(cs.busPort()),
        "member port and a fixed event-bus port are container ports");

    // the bus TLS rule: on the pod network the node starts only with the keystore, which a secret
    // provides
    cs.requireBusProtection();
    assertEquals(
        tmp.resolve("secret")
            .resolve(Path.of(env.get(ClusterSettings.TLS_KEYSTORE_ENV)).getFileName()),
        Path.of(cs.busSecurity().keystore()),
        "the keystore the node reads");
    Mounted keystore = mounted(pod, env.get(ClusterSettings.TLS_KEYSTORE_ENV));
    String secret = keystore.volume().at("/secret/secretName").asText();
    assertFalse(secret.isEmpty(), "the keystore comes from a Secret");
    boolean itemed = false;
    for (JsonNode item : keystore.volume().at("/secret/items")) {
      itemed |= item.get("path").asText().equals(keystore.key());
    }
    assertTrue(
        itemed || keystore.volume().at("/secret/items").isMissingNode(),
        "the secret's item is the keystore");
    JsonNode pw = null;
    for (JsonNode e : c.path("env")) {
      if (e.get("name").asText().equals(ClusterSettings.TLS_PASSWORD_ENV)) {
        pw = e.at("/valueFrom/secretKeyRef");
      }
    }
    assertNotNull(pw, "the keystore password from a secret");
    assertEquals(secret, pw.get("name").asText(), "password and keystore from one secret");
    Map<String, String> noTls = new HashMap<>(env);
    noTls.remove(ClusterSettings.TLS_KEYSTORE_ENV);
    ClusterSettings plain = NodeSettings.parse(args.toArray(String[]::new), noTls).cluster();
    assertThrows(
        CliException.class,
        plain::requireBusProtection,
        "without the secret the node would refuse");

    // the Hazelcast file: mounted where the property names it, valid to Hazelcast, kept by kvselect
    String xml = clusterXml(k, pod);
    Config file = parsedByHazelcast(xml);
    KubernetesConfig kube = file.getNetworkConfig().getJoin().getKubernetesConfig();
    assertTrue(kube.isEnabled(), "the kubernetes join");
    Path written = tmp.resolve("cluster.xml");
    Files.writeString(written, xml);
    String before = System.getProperty(ClusterBootstrap.CONFIG_PROPERTY);
    System.setProperty(ClusterBootstrap.CONFIG_PROPERTY, written.toString());
    Config applied;
    try {
      applied = ClusterBootstrap.config(cs, 100);
    } finally {
      if (before == null) {
        System.clearProperty(ClusterBootstrap.CONFIG_PROPERTY);
      } else {
        System.setProperty(ClusterBootstrap.CONFIG_PROPERTY, before);
      }
    }
    var join = applied.getNetworkConfig().getJoin();
    assertTrue(join.getKubernetesConfig().isEnabled(), "kvselect keeps the file's join");
    assertFalse(
        join.getTcpIpConfig().isEnabled()
            || join.getMulticastConfig().isEnabled()
            || join.getAutoDetectionConfig().isEnabled(),
        "no other join");
    assertEquals(
        List.of(POD_IP), List.copyOf(applied.getNetworkConfig().getInterfaces().getInterfaces()));
    assertEquals(cs.name(), applied.getClusterName());
    Config jar =
        Config.loadFromClasspath(getClass().getClassLoader(), ClusterBootstrap.CONFIG_RESOURCE);
    for (String map : jar.getMapConfigs().keySet()) {
      assertEquals(
          jar.getMapConfig(map),
          file.getMapConfigs().get(map),
          "map " + map + " as the jar's cluster.xml");
    }
    assertEquals(
        jar.getMultiMapConfigs(),
        file.getMultiMapConfigs(),
        "Vert.x's multimap as the jar's cluster.xml");
    assertEquals(jar.getProperties(), file.getProperties(), "the jar's Hazelcast properties");

    // DNS lookup: the headless Service lists the replicas, ready or not, on the member port
    String dns = kube.getProperty("service-dns");
    assertNotNull(dns, "DNS lookup mode (no Kubernetes API access, so no RBAC)");
    JsonNode headless = named(k, "Service", dns.split("\\.")[0]);
    assertEquals("None", headless.at("/spec/clusterIP").asText(), "headless");
    assertTrue(
        headless.at("/spec/publishNotReadyAddresses").asBoolean(),
        "a replica is listed before it is ready (it becomes ready only once joined)");
    dep.at("/spec/selector/matchLabels")
        .fields()
        .forEachRemaining(
            e ->
                assertEquals(
                    e.getValue(),
                    headless.at("/spec/selector").get(e.getKey()),
                    "it selects the replicas"));
    int servicePort =
        Integer.parseInt(
            kube.getProperty("service-port") == null ? "5701" : kube.getProperty("service-port"));
    assertEquals(cs.port(), servicePort, "members are looked for on --cluster-port");
    boolean listed = false;
    for (JsonNode p : headless.at("/spec/ports")) {
      listed |= p.get("port").asInt() == servicePort && p.get("targetPort").asInt() == cs.port();
    }
    assertTrue(listed, "the headless Service carries the member port");
    assertFalse(
        pod.path("automountServiceAccountToken").asBoolean(true),
        "DNS lookup reads no Kubernetes API");

    // only the replicas reach the member and bus ports; one replica down at a time
    JsonNode policy = only(k, "NetworkPolicy");
    assertEquals(dep.at("/spec/selector/matchLabels"), policy.at("/spec/podSelector/matchLabels"));
    Set<Integer> clusterPorts = Set.of(cs.port(), cs.busPort());
    Set<Integer> peerOnly = new HashSet<>();
    for (JsonNode rule : policy.at("/spec/ingress")) {
      boolean fromPeers =
          rule.has("from")
              && rule.get("from").size() == 1
              && rule.at("/from/0/podSelector/matchLabels")
                  .equals(dep.at("/spec/selector/matchLabels"));
      assertTrue(fromPeers || rule.has("ports"), "a rule for any source names its ports: " + rule);
      for (JsonNode p : rule.path("ports")) {
        int port = p.get("port").asInt();
        if (fromPeers) {
          peerOnly.add(port);
        } else {
          assertFalse(clusterPorts.contains(port), "port " + port + " open beyond the replicas");
        }
      }
    }
    assertEquals(clusterPorts, peerOnly, "member and bus ports reachable from the replicas");
    JsonNode pdb = only(k, "PodDisruptionBudget");
    assertEquals(
        1,
        pdb.at("/spec/maxUnavailable").asInt(),
        "one member down at a time (one backup per map)");
    assertEquals(0, dep.at("/spec/strategy/rollingUpdate/maxUnavailable").asInt(-1));
    assertTrue(
        pod.path("terminationGracePeriodSeconds").asInt()
            >= s.operations().drainTimeoutSecs()
                + Integer.parseInt(applied.getProperty("hazelcast.graceful.shutdown.max.wait")),
        "the grace covers the drain and Hazelcast's partition hand-over");
    assertEquals(
        "liveness", c.at("/startupProbe/grpc/service").asText(), "a startup probe covers the join");
  }

  /** The shell block of docs/epp.md that makes the bus TLS secret, one command per entry (continuations joined). */
  private static List<String> secretCommands() throws Exception {
    List<String> block = null;
    for (String line : Files.readAllLines(Path.of("docs/epp.md"))) {
      if (block == null && line.equals("```bash")) {
        block = new ArrayList<>();
      } else if (block != null && line.equals("```")) {
        if (block.stream().anyMatch(c -> c.startsWith("kubectl create secret"))) {
          return block;
        }
        block = null;
      } else if (block != null) {
        if (!block.isEmpty() && block.get(block.size() - 1).endsWith("\\")) {
          String prev = block.remove(block.size() - 1);
          block.add(prev.substring(0, prev.length() - 1) + line.strip());
        } else {
          block.add(line.strip());
        }
      }
    }
    throw new AssertionError("docs/epp.md has no bash block making the secret");
  }

  @Test
  void theDocumentedSecretIsTheOneTheClusteredPodsMount() throws Exception {
    List<String> commands = secretCommands();
    List<String> local = commands.stream().filter(c -> !c.startsWith("kubectl ")).toList();
    assertEquals(2, local.size(), "the password and the keystore: " + local);
    Process p =
        new ProcessBuilder(
                "bash",
                "-euo",
                "pipefail",
                "-c",
                String.join("\n", local)
                    + "\nprintf '\\nPASSWORD=%s\\n' \"$KVSELECT_CLUSTER_TLS_PASSWORD\"")
            .directory(tmp.toFile())
            .redirectErrorStream(true)
            .start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the commands end");
    assertEquals(0, p.exitValue(), output);
    String password =
        output
            .lines()
            .filter(l -> l.startsWith("PASSWORD="))
            .findFirst()
            .orElseThrow()
            .substring("PASSWORD=".length());
    assertTrue(password.length() >= 16, "a generated password");
    java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
    try (var in = Files.newInputStream(tmp.resolve("cluster.p12"))) {
      ks.load(in, password.toCharArray());
    }
    assertTrue(ks.isKeyEntry("kvselect"), "the keystore holds the cluster's key and certificate");

    String create =
        commands.stream()
            .filter(c -> c.startsWith("kubectl create secret generic "))
            .findFirst()
            .orElseThrow();
    String[] words = create.split("\\s+");
    String secret = words[4];
    Set<String> keys = new HashSet<>();
    for (String w : words) {
      if (w.startsWith("--from-file=")) {
        keys.add(Path.of(w.substring("--from-file=".length())).getFileName().toString());
      } else if (w.startsWith("--from-literal=")) {
        keys.add(
            w.substring("--from-literal=".length(), w.indexOf('=', "--from-literal=".length())));
      }
    }
    Map<String, JsonNode> k = byName(CLUSTERED);
    JsonNode pod = only(k, "Deployment").at("/spec/template/spec");
    JsonNode c = pod.at("/containers/0");
    Mounted keystore = mounted(pod, env(c).get(ClusterSettings.TLS_KEYSTORE_ENV));
    assertEquals(
        secret, keystore.volume().at("/secret/secretName").asText(), "the Secret the pods mount");
    Set<String> used = new HashSet<>();
    keystore.volume().at("/secret/items").forEach(i -> used.add(i.get("key").asText()));
    for (JsonNode e : c.path("env")) {
      JsonNode ref = e.at("/valueFrom/secretKeyRef");
      if (!ref.isMissingNode()) {
        assertEquals(secret, ref.get("name").asText(), e.toString());
        used.add(ref.get("key").asText());
      }
    }
    assertEquals(used, keys, "the command makes exactly the keys the Deployment reads");
    String apply =
        commands.stream().filter(x -> x.startsWith("kubectl apply ")).findFirst().orElseThrow();
    for (String w : apply.split("\\s+")) {
      if (w.startsWith("deploy/")) {
        assertTrue(Files.isRegularFile(Path.of(w)), w);
      }
    }
    assertTrue(apply.contains(CLUSTERED.toString()), "the command applies the clustered picker");
  }

  @Test
  void aMisspeltClusterFileFailsTheCheck() throws Exception {
    Map<String, JsonNode> k = byName(CLUSTERED);
    String xml = clusterXml(k, only(k, "Deployment").at("/spec/template/spec"));
    parsedByHazelcast(xml);
    assertThrows(
        InvalidConfigurationException.class,
        () ->
            parsedByHazelcast(
                xml.replace("<backup-count>", "<backup-cuont>")
                    .replace("</backup-count>", "</backup-cuont>")));
    assertThrows(
        InvalidConfigurationException.class,
        () ->
            parsedByHazelcast(
                xml.replace("<service-dns>", "<service-dsn>")
                    .replace("</service-dns>", "</service-dsn>")));
    assertThrows(
        RuntimeException.class,
        () ->
            parsedByHazelcast(
                xml.replace(
                    "<service-port>5701</service-port>", "<service-port>five</service-port>")));
    assertThrows(
        InvalidConfigurationException.class,
        () ->
            parsedByHazelcast(
                xml.replace(
                    "<service-port>",
                    "<service-name>kvselect-hazelcast</service-name><service-port>")));
  }

  @Test
  void theEnvoyBootstrapParsesAsEnvoysProtosAndRoutesByThePick() throws Exception {
    JsonNode yaml = YAML.readTree(Path.of("deploy/envoy/envoy.yaml").toFile());
    TypeRegistry types =
        TypeRegistry.newBuilder()
            .add(HttpConnectionManager.getDescriptor())
            .add(ExternalProcessor.getDescriptor())
            .add(Router.getDescriptor())
            .add(HttpProtocolOptions.getDescriptor())
            .build();
    Bootstrap.Builder b = Bootstrap.newBuilder();
    JsonFormat.parser()
        .usingTypeRegistry(types)
        .merge(new ObjectMapper().writeValueAsString(yaml), b);
    Bootstrap boot = b.build();
    HttpConnectionManager hcm =
        boot.getStaticResources()
            .getListeners(0)
            .getFilterChains(0)
            .getFilters(0)
            .getTypedConfig()
            .unpack(HttpConnectionManager.class);
    ExternalProcessor ext = hcm.getHttpFilters(0).getTypedConfig().unpack(ExternalProcessor.class);
    assertEquals(
        "envoy.filters.http.router", hcm.getHttpFilters(hcm.getHttpFiltersCount() - 1).getName());
    assertEquals(
        ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED,
        ext.getProcessingMode().getRequestBodyMode());
    assertEquals(
        ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED,
        ext.getProcessingMode().getResponseBodyMode());
    assertEquals(
        ProcessingMode.HeaderSendMode.SEND,
        ext.getProcessingMode().getRequestTrailerMode(),
        "FULL_DUPLEX_STREAMED needs trailers sent");
    assertTrue(
        ext.getMetadataOptions()
            .getForwardingNamespaces()
            .getUntypedList()
            .contains("envoy.lb.subset_hint"));
    String epp = ext.getGrpcService().getEnvoyGrpc().getClusterName();
    Cluster dst = null;
    boolean eppCluster = false;
    for (Cluster c : boot.getStaticResources().getClustersList()) {
      if (c.getType() == Cluster.DiscoveryType.ORIGINAL_DST) {
        dst = c;
      }
      eppCluster |= c.getName().equals(epp);
    }
    assertTrue(eppCluster, "the ext_proc cluster exists");
    assertNotNull(dst, "an ORIGINAL_DST cluster");
    assertEquals(
        "x-gateway-destination-endpoint", dst.getOriginalDstLbConfig().getHttpHeaderName());
    assertTrue(dst.getOriginalDstLbConfig().getUseHttpHeader());
    assertEquals(
        dst.getName(),
        hcm.getRouteConfig().getVirtualHosts(0).getRoutes(0).getRoute().getCluster());
  }
}
