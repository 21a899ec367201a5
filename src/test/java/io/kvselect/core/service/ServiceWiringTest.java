package io.kvselect.core.service;

import static io.kvselect.core.service.ServiceFixture.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.kvselect.core.config.RouterConfig;
import io.kvselect.core.index.BlockIndex;
import io.kvselect.core.kvc.LocalKvcState;
import io.kvselect.core.select.Candidate;
import io.kvselect.core.select.PolicyContext;
import io.kvselect.core.select.SelectionPolicy;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * What the builder hands to the service: Dynamo's service defaults, a whole {@link
 * ServiceSettings} taken over, the KVC state and pick stage it is given, and the counters of a
 * service without session affinity.
 */
class ServiceWiringTest {

  @Test
  void theServiceDefaultsAreDynamos() {
    Supplier<BlockIndex> index = SelectionServiceBuilder.DEFAULT_INDEX;
    ServiceSettings d = ServiceSettings.defaults(index);
    assertEquals(RouterConfig.DEFAULTS, d.router());
    assertNull(d.sessionAffinityTtl(), "no session affinity unless asked");
    assertEquals(Duration.ofSeconds(120), d.selectionCacheTtl());
    assertEquals(4096, d.selectionCacheMaxEntries());
    assertEquals(256L * 1024 * 1024, d.selectionCacheMaxBytes());
    assertSame(index, d.eventIndexFactory());
    assertEquals(
        d, SelectionService.builder().build().settings(), "the builder's defaults are the same");
  }

  @Test
  void aWholeSettingsRecordIsTakenOver() {
    ServiceSettings s =
        new ServiceSettings(
            ServiceFixture.approximate(),
            Duration.ofSeconds(9),
            Duration.ofSeconds(3),
            7,
            1234,
            SelectionServiceBuilder.DEFAULT_INDEX);
    SelectionService svc = SelectionService.builder().settings(s).build();
    assertEquals(s, svc.settings());
    assertEquals(0, svc.sessionCount());
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.select(ServiceFixture.session("a", "s1", 1, 2, 3, 4), true));
    assertEquals(1, svc.sessionCount(), "affinity is on with the settings' TTL");
  }

  @Test
  void withoutSessionAffinityThereIsNoTableAndNoBinding() {
    SelectionService svc =
        SelectionService.builder().routerConfig(ServiceFixture.approximate()).build();
    assertNull(svc.sessionAffinity());
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.select(ServiceFixture.session("a", "s1", 1, 2, 3, 4), true));
    assertEquals(0, svc.sessionCount());
    assertEquals(1, svc.bookingCount());
  }

  @Test
  void theGivenKvcStateIsTheOneTheServiceUses() {
    LocalKvcState st = new LocalKvcState();
    SelectionService svc = SelectionService.builder().kvcState(st).build();
    assertSame(st, svc.kvcState());
  }

  @Test
  void aGivenPickStageChoosesForEveryRequest() {
    SelectionPolicy last =
        new SelectionPolicy() {
          @Override
          public String name() {
            return "kv";
          }

          @Override
          public int choose(List<Candidate> candidates, PolicyContext ctx) {
            return candidates.size() - 1;
          }
        };
    SelectionService svc =
        SelectionService.builder().routerConfig(ServiceFixture.approximate()).policy(last).build();
    for (long id = 1; id <= 3; id++) {
      join(svc.upsertWorker(ServiceFixture.worker(id, 4)));
    }
    for (int i = 0; i < 3; i++) {
      assertEquals(3, join(svc.select(ServiceFixture.req("r" + i, 1, 2, 3, 4), true)).workerId());
    }
  }

  @Test
  void queryOnlySelectionsWithAnIdAreCachedForAReplay() {
    SelectionService svc =
        SelectionService.builder().routerConfig(ServiceFixture.approximate()).build();
    join(svc.upsertWorker(ServiceFixture.worker(1, 4)));
    join(svc.select(ServiceFixture.req("cached", 1, 2, 3, 4), false));
    join(svc.select(SelectRequest.of(ServiceFixture.P, PromptInput.tokens(1, 2, 3, 4)), false));
    assertEquals(1, svc.pendingSelections(), "only the selection with an id");
    assertEquals(0, svc.bookingCount());
  }
}
