package io.kvselect.server.cluster;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kvselect.core.service.LifecycleStep;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.junit.jupiter.api.Test;

/**
 * {@link FreeHandoff}'s rules with a courier that answers what each member is told to answer
 * (the event bus itself is exercised by {@code ForwardedLifecycleTest} and the fault harness):
 * which frees are kept, when they go, and what a member that does not answer costs.
 */
class FreeHandoffTest {

  /** Records every free sent and answers per member; holds members it was told to silence. */
  static class Bus implements FreeHandoff.Courier {
    final Map<String, FreeHandoff.Delivery> answer = new HashMap<>();
    final List<String> sent = new ArrayList<>();
    final Set<String> silenced = new HashSet<>();

    @Override
    public CompletionStage<FreeHandoff.Delivery> free(String node, String id) {
      sent.add(node + ":" + id);
      return CompletableFuture.completedFuture(
          answer.getOrDefault(node, FreeHandoff.Delivery.FREED));
    }

    @Override
    public boolean silent(String node, long now) {
      return silenced.contains(node);
    }

    @Override
    public void silence(String node) {
      silenced.add(node);
    }
  }

  private final Bus bus = new Bus();
  private final FreeHandoff handoff = new FreeHandoff("a", bus);

  @Test
  void aFreeKeptForAMemberIsDeliveredOnceItIsAMember() {
    handoff.start(List.of("a", "b"));
    assertTrue(handoff.keepFor("c", new LifecycleStep.Free("x")));
    assertFalse(
        handoff.keepFor("c", new LifecycleStep.PrefillComplete("x")), "only frees are kept");
    handoff.tick(List.of("a", "b"));
    assertEquals(List.of(), bus.sent, "c is not a member: nothing sent");
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(List.of("c:x"), bus.sent);
    assertEquals(1L, handoff.counters().get("delivered"));
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(1, bus.sent.size(), "a delivered free is gone");
  }

  @Test
  void aFreeNobodyHeldGoesToEveryMemberThatComesBackAfterADeparture() {
    handoff.start(List.of("a", "b", "c"));
    assertFalse(
        handoff.keepForAny(new LifecycleStep.Free("early")), "nobody went missing: an unknown id");
    handoff.noteDepartures(List.of("a", "b"));
    assertTrue(
        handoff.keepForAny(new LifecycleStep.Free("y")), "kept the moment c is seen missing");
    handoff.tick(List.of("a", "b"));
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(List.of("c:y"), bus.sent);
    handoff.tick(List.of("a", "b", "c", "d"));
    assertEquals(List.of("c:y"), bus.sent, "d is new, not a return: it held nothing");
  }

  @Test
  void aSilentMemberKeepsItsFreesAndIsHeldAMemberWithoutConsumerIsNot() {
    handoff.start(List.of("a", "b", "c"));
    handoff.keepFor("b", new LifecycleStep.Free("p"));
    handoff.keepFor("c", new LifecycleStep.Free("q"));
    bus.answer.put("b", FreeHandoff.Delivery.SILENT);
    bus.answer.put("c", FreeHandoff.Delivery.NO_CONSUMER);
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(Set.of("b"), bus.silenced, "only silence is waited out");
    assertEquals(2L, handoff.counters().get("pending"));
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(
        List.of("b:p", "c:q", "c:q"),
        bus.sent,
        "the held member is skipped, the other asked again");
    bus.answer.put("c", FreeHandoff.Delivery.NOT_HELD);
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(1L, handoff.counters().get("not_held"));
    assertEquals(1L, handoff.counters().get("pending"));
  }

  /** A courier whose answers the test gives, one call at a time. */
  static final class ManualBus extends Bus {
    final List<CompletableFuture<FreeHandoff.Delivery>> open = new ArrayList<>();

    @Override
    public CompletionStage<FreeHandoff.Delivery> free(String node, String id) {
      sent.add(node + ":" + id);
      CompletableFuture<FreeHandoff.Delivery> f = new CompletableFuture<>();
      open.add(f);
      return f;
    }

    /** Answers every open call with {@code d}; returns how many. */
    int answerAll(FreeHandoff.Delivery d) {
      List<CompletableFuture<FreeHandoff.Delivery>> now = List.copyOf(open);
      open.clear();
      now.forEach(f -> f.complete(d));
      return now.size();
    }
  }

  @Test
  void anAnsweredBatchIsFollowedByTheNextAtOnceNotOnTheNextTick() {
    handoff.start(List.of("a", "b", "c"));
    int kept = 3 * FreeHandoff.DELIVERY_BATCH + 10;
    for (int i = 0; i < kept; i++) {
      handoff.keepFor("c", new LifecycleStep.Free("f" + i));
    }
    handoff.tick(List.of("a", "b", "c"));
    assertEquals(kept, bus.sent.size(), "one tick delivers every batch while each is answered");
    assertEquals(0L, handoff.counters().get("pending"));
    assertEquals((long) kept, handoff.counters().get("delivered"));
  }

  @Test
  void oneBatchAtATimeAndTheDeliveryEndsWhenTheMemberLeavesOrDoesNotAnswer() {
    ManualBus manual = new ManualBus();
    FreeHandoff h = new FreeHandoff("a", manual);
    h.start(List.of("a", "b", "c"));
    int batch = FreeHandoff.DELIVERY_BATCH;
    for (int i = 0; i < 5 * batch; i++) {
      h.keepFor("c", new LifecycleStep.Free("f" + i));
    }
    h.tick(List.of("a", "b", "c"));
    assertEquals(batch, manual.sent.size(), "one batch in flight");
    h.tick(List.of("a", "b", "c"));
    assertEquals(batch, manual.sent.size(), "a tick starts no second batch while one is in flight");
    assertEquals(batch, manual.answerAll(FreeHandoff.Delivery.FREED));
    assertEquals(
        2 * batch, manual.sent.size(), "the answered batch is followed by the next at once");

    manual.answerAll(FreeHandoff.Delivery.NO_CONSUMER);
    assertEquals(
        2 * batch, manual.sent.size(), "an unanswered batch ends the delivery until the next tick");
    assertEquals(4L * batch, h.counters().get("pending"), "the unanswered frees are kept");

    h.tick(List.of("a", "b", "c"));
    assertEquals(3 * batch, manual.sent.size(), "the next tick resumes");
    h.tick(List.of("a", "b"));
    manual.answerAll(FreeHandoff.Delivery.FREED);
    assertEquals(3 * batch, manual.sent.size(), "c left meanwhile: no next batch");

    h.tick(List.of("a", "b", "c"));
    assertEquals(4 * batch, manual.sent.size());
    h.stop();
    manual.answerAll(FreeHandoff.Delivery.FREED);
    h.tick(List.of("a", "b", "c"));
    assertEquals(4 * batch, manual.sent.size(), "nothing is sent once the handoff stopped");
    assertEquals(2L * batch, h.counters().get("pending"), "three batches freed of five");
  }
}
