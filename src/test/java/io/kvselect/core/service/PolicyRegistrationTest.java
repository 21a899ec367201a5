package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kvselect.core.config.PolicySettings;
import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.KvcRoutePolicy;
import io.kvselect.core.select.PolicyContext;
import io.kvselect.core.select.SelectionPolicy;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A policy is one class and one registration: the service picks by the registered policy of the
 * request's configured name, and runs a dispatch stage only when the resolved policy declares one
 * (the {@code kvc} dispatcher is registered like any other policy).
 */
class PolicyRegistrationTest {

  /** Always the last candidate; counts its calls. */
  record Last(String name, AtomicInteger calls) implements SelectionPolicy {
    Last(String name) {
      this(name, new AtomicInteger());
    }

    @Override
    public int choose(List<Candidate> candidates, PolicyContext ctx) {
      calls.incrementAndGet();
      return candidates.size() - 1;
    }
  }

  private static RouterConfig policy(String name) {
    return ServiceFixture.approximate()
        .withSelectionPolicy(PolicySettings.defaults().withName(name));
  }

  private static SelectionService withWorkers(SelectionServiceBuilder b) {
    SelectionService svc = b.build();
    for (long w = 1; w <= 3; w++) {
      join(svc.upsertWorker(ServiceFixture.worker(w, 4)));
    }
    return svc;
  }

  @Test
  void aRegisteredPolicyPicksTheRequestsOfItsName() {
    Last last = new Last("round_robin");
    SelectionService svc =
        withWorkers(new ServiceFixture().builder(policy("round_robin"), null).registerPolicy(last));
    for (int i = 0; i < 4; i++) {
      assertEquals(
          3,
          join(svc.select(ServiceFixture.req(null, 1, 2, 3, 4), false)).workerId(),
          "always the last");
    }
    assertEquals(4, last.calls().get());

    Last unused = new Last("round_robin");
    SelectionService kv =
        withWorkers(new ServiceFixture().builder(policy("kv"), null).registerPolicy(unused));
    for (int i = 0; i < 4; i++) {
      join(kv.select(ServiceFixture.req(null, 1, 2, 3, 4), false));
    }
    assertEquals(
        0, unused.calls().get(), "kv requests never reach the policy registered as round_robin");
  }

  @Test
  void theKvcDispatchStageRunsBecauseItsPolicyDeclaresIt() {
    ServiceFixture f = new ServiceFixture();
    SelectionService svc = withWorkers(f.builder(policy("kvc"), Duration.ofMinutes(5)));
    Selection s = join(svc.select(ServiceFixture.session("a", "s1", 1, 2, 3, 4), true));
    assertNotNull(s.kvc(), "the dispatcher answered");
    assertEquals("seed", s.kvc().mode());
    assertNull(
        join(svc.select(ServiceFixture.req("b", 1, 2, 3, 4), true)).kvc(),
        "no session: the pick stage only");

    SelectionService plain =
        withWorkers(
            new ServiceFixture()
                .builder(policy("kvc"), Duration.ofMinutes(5))
                .registerPolicy(new KvcRoutePolicy()));
    assertNull(
        join(plain.select(ServiceFixture.session("a", "s1", 1, 2, 3, 4), true)).kvc(),
        "kvc registered without a dispatch stage: no dispatch");
  }
}
