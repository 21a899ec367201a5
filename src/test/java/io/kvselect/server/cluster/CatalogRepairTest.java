package io.kvselect.server.cluster;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.kvselect.core.service.SelectionService;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@link CatalogRepair}'s pull rule on a real (standalone) Vert.x event bus: a peer whose answer
 * this node refuses is not asked again while neither catalog changes, a peer whose catalog
 * changed is, and a pull that got no answer is retried at the next digest.
 */
class CatalogRepairTest {

  private final Vertx vertx = Vertx.vertx();

  @AfterEach
  void close() throws Exception {
    vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
  }

  private static ObjectNode digest(long catalog) {
    ObjectNode d = SyncCodec.doc("digest");
    d.put("catalog", catalog);
    return d;
  }

  /** Runs {@code check} on the sync context and returns once it has (a pull, if any, has been sent). */
  private static void check(Context sync, CatalogRepair repair, String peer, long catalog)
      throws Exception {
    java.util.concurrent.CompletableFuture<Void> done =
        new java.util.concurrent.CompletableFuture<>();
    sync.runOnContext(
        v -> {
          repair.check(peer, digest(catalog));
          done.complete(null);
        });
    done.get(10, TimeUnit.SECONDS);
  }

  @Test
  void aRefusedAnswerIsNotFetchedAgainUntilACatalogChanges() throws Exception {
    SelectionService service = SelectionService.builder().build();
    // the peer answers with an entry this node cannot read (a newer version's kind, say)
    vertx
        .eventBus()
        .consumer(
            SyncAddresses.node("newer"),
            m -> {
              ObjectNode reply = SyncCodec.doc("catalog");
              reply.putArray("entries").addObject().put("kind", "mystery");
              m.reply(SyncCodec.buffer(reply));
            })
        .completion()
        .toCompletionStage()
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
    CatalogRepair repair = new CatalogRepair(vertx, service, Duration.ofSeconds(2), Duration.ZERO);
    Context sync = vertx.getOrCreateContext();
    long other = service.catalogDigest() + 1;

    check(sync, repair, "newer", other);
    await().atMost(Duration.ofSeconds(10)).until(() -> repair.pullFailures.get() == 1);
    for (int i = 0; i < 5; i++) {
      check(sync, repair, "newer", other);
    }
    assertEquals(1, repair.pulls.get(), "the same refused answer is not fetched once per digest");
    // the peer's next change is a new hash: one more pull
    check(sync, repair, "newer", other + 1);
    await().atMost(Duration.ofSeconds(10)).until(() -> repair.pullFailures.get() == 2);
    check(sync, repair, "newer", other + 1);
    assertEquals(2, repair.pulls.get(), "one pull per catalog state");
  }

  @Test
  void aPullThatGotNoAnswerIsRetriedAtTheNextDigest() throws Exception {
    SelectionService service = SelectionService.builder().build();
    CatalogRepair repair = new CatalogRepair(vertx, service, Duration.ofSeconds(2), Duration.ZERO);
    Context sync = vertx.getOrCreateContext();
    long other = service.catalogDigest() + 1;
    for (int i = 1; i <= 3; i++) {
      check(sync, repair, "gone", other); // no handler: NO_HANDLERS at once
      int n = i;
      await().atMost(Duration.ofSeconds(10)).until(() -> repair.pullFailures.get() == n);
    }
    assertEquals(3, repair.pulls.get());
  }
}
