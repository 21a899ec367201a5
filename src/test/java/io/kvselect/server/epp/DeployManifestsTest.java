package io.kvselect.server.epp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.google.protobuf.TypeRegistry;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.bootstrap.v3.Bootstrap;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ExternalProcessor;
import io.envoyproxy.envoy.extensions.filters.http.ext_proc.v3.ProcessingMode;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.kvselect.server.config.NodeSettings;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The deployment pieces under {@code deploy/} validate without a cluster: the InferencePool
 * against the v1 CRD's required fields and enums, the Deployment and Service against the
 * Kubernetes fields they need (selectors matching labels, probes and Service ports naming
 * container ports, the picker flags parsing as kvselect parses them), and the Envoy bootstrap by
 * parsing it into Envoy's own protos (unknown fields and bad enums fail) and checking the
 * ext_proc modes and the ORIGINAL_DST cluster.
 */
class DeployManifestsTest {

  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Path K8S = Path.of("deploy/kubernetes");

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

  private static Map<String, JsonNode> byKind() throws Exception {
    Map<String, JsonNode> out = new HashMap<>();
    try (var files = Files.list(K8S)) {
      for (Path p : files.filter(f -> f.toString().endsWith(".yaml")).toList()) {
        for (JsonNode d : documents(p)) {
          assertTrue(d.path("apiVersion").isTextual() && d.path("kind").isTextual(), p + ": apiVersion and kind");
          assertTrue(d.path("metadata").path("name").asText().matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?"),
              p + ": metadata.name is a DNS label");
          assertTrue(out.put(d.get("kind").asText(), d) == null, "one " + d.get("kind") + " per kind");
        }
      }
    }
    return out;
  }

  @Test
  void theInferencePoolHasTheV1RequiredFieldsAndPointsAtKvselect() throws Exception {
    Map<String, JsonNode> k = byKind();
    JsonNode pool = k.get("InferencePool");
    assertEquals("inference.networking.k8s.io/v1", pool.get("apiVersion").asText());
    JsonNode spec = pool.get("spec");
    assertFalse(spec.path("selector").path("matchLabels").isEmpty(), "spec.selector.matchLabels");
    JsonNode ports = spec.get("targetPorts");
    assertTrue(ports.isArray() && ports.size() >= 1 && ports.size() <= 8, "spec.targetPorts: 1..8 items");
    Set<Integer> seen = new HashSet<>();
    for (JsonNode p : ports) {
      int n = p.path("number").asInt(-1);
      assertTrue(n >= 1 && n <= 65535 && seen.add(n), "targetPorts numbers unique in 1..65535");
    }
    JsonNode ref = spec.get("endpointPickerRef");
    assertNotNull(ref, "spec.endpointPickerRef");
    assertEquals("Service", ref.path("kind").asText("Service"));
    assertTrue(Set.of("FailOpen", "FailClose").contains(ref.path("failureMode").asText("FailClose")));
    JsonNode svc = k.get("Service");
    assertEquals(svc.path("metadata").path("name").asText(), ref.path("name").asText(), "the picker's Service");
    int pickerPort = ref.path("port").path("number").asInt();
    boolean found = false;
    for (JsonNode p : svc.path("spec").path("ports")) {
      found |= p.path("port").asInt() == pickerPort;
    }
    assertTrue(found, "endpointPickerRef.port.number is a port of the Service");
  }

  @Test
  void theDeploymentRunsThePickerItsServiceAndProbesName() throws Exception {
    Map<String, JsonNode> k = byKind();
    JsonNode dep = k.get("Deployment");
    assertEquals("apps/v1", dep.get("apiVersion").asText());
    JsonNode labels = dep.at("/spec/template/metadata/labels");
    dep.at("/spec/selector/matchLabels").fields().forEachRemaining(e ->
        assertEquals(e.getValue(), labels.get(e.getKey()), "selector matches the template's labels"));
    dep.at("/spec/selector/matchLabels").fields().forEachRemaining(e ->
        assertEquals(e.getValue(), k.get("Service").at("/spec/selector").get(e.getKey()), "Service selects the pods"));
    JsonNode c = dep.at("/spec/template/spec/containers/0");
    assertTrue(c.path("name").isTextual() && c.path("image").isTextual());
    Set<Integer> containerPorts = new HashSet<>();
    c.path("ports").forEach(p -> containerPorts.add(p.get("containerPort").asInt()));
    for (String probe : new String[] {"livenessProbe", "readinessProbe"}) {
      assertTrue(containerPorts.contains(c.path(probe).path("grpc").path("port").asInt()), probe + " port");
    }
    assertEquals("liveness", c.at("/livenessProbe/grpc/service").asText());
    assertEquals("readiness", c.at("/readinessProbe/grpc/service").asText());
    k.get("Service").at("/spec/ports").forEach(p -> assertTrue(containerPorts.contains(p.get("targetPort").asInt()),
        "Service targetPort " + p + " is a container port"));
    List<String> args = new ArrayList<>();
    c.path("args").forEach(a -> args.add(a.asText()));
    Path workers = Files.createTempDirectory("kvselect-workers").resolve("workers.yaml");
    Files.writeString(workers, k.get("ConfigMap").at("/data/workers.yaml").asText());
    args.replaceAll(a -> a.startsWith("--workers-file=") ? "--workers-file=" + workers : a);
    Map<String, String> env = new HashMap<>();
    c.path("env").forEach(e -> env.put(e.get("name").asText(), e.get("value").asText()));
    NodeSettings s = NodeSettings.parse(args.toArray(String[]::new), env);
    assertTrue(s.epp().enabled());
    assertTrue(containerPorts.contains(s.epp().port()), "--epp-port is a container port");
    assertTrue(containerPorts.contains(s.port()), "--port is a container port");
    JsonNode listed = YAML.readTree(workers.toFile());
    assertTrue(listed.isArray() && listed.size() >= 1, "the workers file lists workers");
  }

  @Test
  void theEnvoyBootstrapParsesAsEnvoysProtosAndRoutesByThePick() throws Exception {
    JsonNode yaml = YAML.readTree(Path.of("deploy/envoy/envoy.yaml").toFile());
    TypeRegistry types = TypeRegistry.newBuilder().add(HttpConnectionManager.getDescriptor())
        .add(ExternalProcessor.getDescriptor()).add(Router.getDescriptor()).add(HttpProtocolOptions.getDescriptor())
        .build();
    Bootstrap.Builder b = Bootstrap.newBuilder();
    JsonFormat.parser().usingTypeRegistry(types).merge(new ObjectMapper().writeValueAsString(yaml), b);
    Bootstrap boot = b.build();
    HttpConnectionManager hcm = boot.getStaticResources().getListeners(0).getFilterChains(0).getFilters(0)
        .getTypedConfig().unpack(HttpConnectionManager.class);
    ExternalProcessor ext = hcm.getHttpFilters(0).getTypedConfig().unpack(ExternalProcessor.class);
    assertEquals("envoy.filters.http.router", hcm.getHttpFilters(hcm.getHttpFiltersCount() - 1).getName());
    assertEquals(ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED, ext.getProcessingMode().getRequestBodyMode());
    assertEquals(ProcessingMode.BodySendMode.FULL_DUPLEX_STREAMED, ext.getProcessingMode().getResponseBodyMode());
    assertEquals(ProcessingMode.HeaderSendMode.SEND, ext.getProcessingMode().getRequestTrailerMode(),
        "FULL_DUPLEX_STREAMED needs trailers sent");
    assertTrue(ext.getMetadataOptions().getForwardingNamespaces().getUntypedList().contains("envoy.lb.subset_hint"));
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
    assertEquals("x-gateway-destination-endpoint", dst.getOriginalDstLbConfig().getHttpHeaderName());
    assertTrue(dst.getOriginalDstLbConfig().getUseHttpHeader());
    assertEquals(dst.getName(), hcm.getRouteConfig().getVirtualHosts(0).getRoutes(0).getRoute().getCluster());
  }
}
