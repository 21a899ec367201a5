package io.kvselect.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@link ClusterStages#hop} hands a Hazelcast future's outcome over on the thread that completed
 * it (a Hazelcast thread) or on the caller's, never on a thread of Hazelcast's default async
 * executor: the JDK's common pool where it has more than one thread, and a new thread per callback
 * where it has one (every 2-core machine). A real one-member Hazelcast cluster on loopback.
 */
class ClusterStagesTest {

  @Test
  void aHazelcastOutcomeIsHandedOverOnAHazelcastThreadOrTheCaller() throws Exception {
    SyncTestNode.Cluster c = SyncTestNode.Cluster.random();
    HazelcastInstance hz = Hazelcast.newHazelcastInstance(SyncTestNode.hazelcast(c));
    try {
      IMap<String, String> map = hz.getMap("stages-test");
      Set<String> handedOverOn = ConcurrentHashMap.newKeySet();
      Executor completions =
          task -> {
            handedOverOn.add(Thread.currentThread().getName());
            task.run();
          };
      String caller = Thread.currentThread().getName();
      List<CompletionStage<?>> stages = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        stages.add(ClusterStages.hop(map.setAsync("k" + i, "v" + i), completions));
        stages.add(ClusterStages.hop(map.getAsync("k" + (i / 2)), completions));
      }
      for (CompletionStage<?> s : stages) {
        s.toCompletableFuture().get(30, TimeUnit.SECONDS);
      }
      assertEquals(
          "v7",
          ClusterStages.hop(map.getAsync("k7"), completions)
              .toCompletableFuture()
              .get(30, TimeUnit.SECONDS));
      List<String> elsewhere =
          handedOverOn.stream()
              .filter(name -> !name.equals(caller) && !name.startsWith("hz."))
              .sorted()
              .toList();
      assertTrue(
          elsewhere.isEmpty(),
          elsewhere.size()
              + " hand-overs ran on threads that are neither"
              + " Hazelcast's nor the caller's, e.g. "
              + elsewhere.subList(0, Math.min(5, elsewhere.size())));
    } finally {
      hz.shutdown();
    }
  }
}
