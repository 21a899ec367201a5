package io.kvselect.server.sync.replica;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.catalog.PartitionKey;
import io.kvselect.core.load.LoadEvent;
import io.kvselect.core.load.LoadSync;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

class CompositeLoadSyncTest {

  @Test
  void publishesToBothAndCompletesWhenBothHandedOver() {
    List<LoadEvent> a = new ArrayList<>();
    CompletableFuture<Void> slow = new CompletableFuture<>();
    List<LoadEvent> b = new ArrayList<>();
    LoadSync first =
        e -> {
          a.add(e);
          return CompletableFuture.completedFuture(null);
        };
    LoadSync second =
        e -> {
          b.add(e);
          return slow;
        };
    LoadEvent e = new LoadEvent.Freed(new PartitionKey(null, null), "r");
    CompletableFuture<Void> done =
        CompositeLoadSync.of(first, second).publish(e).toCompletableFuture();
    assertEquals(List.of(e), a);
    assertEquals(List.of(e), b);
    assertFalse(done.isDone());
    slow.complete(null);
    assertTrue(done.isDone());
  }

  @Test
  void aMissingOrLocalSideIsSkipped() {
    LoadSync only = e -> CompletableFuture.completedFuture(null);
    assertSame(only, CompositeLoadSync.of(only, null));
    assertSame(only, CompositeLoadSync.of(only, LoadSync.LOCAL));
    assertSame(only, CompositeLoadSync.of(LoadSync.LOCAL, only));
  }
}
