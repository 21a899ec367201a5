package io.kvselect.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.server.bus.BusAddresses;
import io.kvselect.server.bus.LocalAddresses;
import io.kvselect.server.cluster.ClusterBootstrap;
import io.kvselect.server.cluster.HazelcastKvcState;
import io.kvselect.server.cluster.SyncAddresses;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every event-bus address and Hazelcast structure name kvselect uses is declared once, in its
 * constants class, and no two collide: two consumers on one address would split its messages
 * between unrelated handlers, and two structures under one name would share their entries. Also
 * every map the code names is declared in the top-level {@code cluster.xml} and vice versa.
 */
class NamesTest {

  /** The classes that hold kvselect's names. */
  private static final List<Class<?>> HOLDERS =
      List.of(
          BusAddresses.class,
          LocalAddresses.class,
          SyncAddresses.class,
          ClusterBootstrap.class,
          HazelcastKvcState.class);

  /** Constant -> value for every {@code public static final String} starting with "kvselect". */
  private static Map<String, String> names() throws IllegalAccessException {
    Map<String, String> out = new HashMap<>();
    for (Class<?> c : HOLDERS) {
      for (Field f : c.getDeclaredFields()) {
        int m = f.getModifiers();
        if (Modifier.isPublic(m)
            && Modifier.isStatic(m)
            && Modifier.isFinal(m)
            && f.getType() == String.class) {
          String v = (String) f.get(null);
          if (v.startsWith("kvselect")) {
            out.put(c.getSimpleName() + "." + f.getName(), v);
          }
        }
      }
    }
    return out;
  }

  @Test
  void everyAddressAndStructureNameIsUniqueAndNoneIsThePrefixOfAnother() throws Exception {
    Map<String, String> names = names();
    assertTrue(names.size() >= 20, "the holders were read: " + names);
    Map<String, String> byValue = new HashMap<>();
    for (Map.Entry<String, String> e : names.entrySet()) {
      String before = byValue.put(e.getValue(), e.getKey());
      assertEquals(
          null, before, e.getValue() + " is declared by both " + before + " and " + e.getKey());
    }
    for (String prefix : List.of(SyncAddresses.NODE_PREFIX, SyncAddresses.LIFECYCLE_PREFIX)) {
      assertTrue(prefix.endsWith("."), prefix);
      for (Map.Entry<String, String> e : names.entrySet()) {
        if (!e.getValue().equals(prefix)) {
          assertFalse(
              e.getValue().startsWith(prefix),
              e.getKey() + " lies under the per-node prefix " + prefix);
        }
      }
    }
    assertFalse(SyncAddresses.node("n1").equals(SyncAddresses.lifecycle("n1")));
  }

  @Test
  void busAddressesAreShapedCapabilityThenName() throws Exception {
    Pattern shape =
        Pattern.compile(
            "kvselect\\.(api|events|sync|replica|index|session)\\.[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)*\\.?");
    List<String> addresses = new ArrayList<>(BusAddresses.API);
    addresses.addAll(
        List.of(
            BusAddresses.EVENTS_SELECTIONS,
            BusAddresses.EVENTS_WORKERS,
            SyncAddresses.STREAM,
            SyncAddresses.NODE_PREFIX,
            SyncAddresses.LIFECYCLE_PREFIX));
    addresses.addAll(LocalAddresses.ALL);
    for (String a : addresses) {
      assertTrue(shape.matcher(a).matches(), a + " is not kvselect.<capability>.<name>");
    }
    assertEquals(
        BusAddresses.API.size(),
        BusAddresses.API.stream().distinct().count(),
        "API lists an address twice");
  }

  @Test
  void theMapsTheCodeNamesAreTheMapsClusterXmlDeclares() throws Exception {
    String xml = Files.readString(Path.of("cluster.xml"));
    Matcher m = Pattern.compile("<map name=\"([^\"]+)\"").matcher(xml);
    List<String> declared = new ArrayList<>();
    while (m.find()) {
      declared.add(m.group(1));
    }
    List<String> named =
        List.of(
            ClusterBootstrap.SESSIONS_MAP,
            ClusterBootstrap.PENDING_MAP,
            HazelcastKvcState.SESSIONS_MAP,
            HazelcastKvcState.WORKERS_MAP);
    assertEquals(
        named.stream().sorted().toList(),
        declared.stream().filter(n -> n.startsWith("kvselect")).sorted().toList(),
        "maps in cluster.xml");
  }
}
