package io.kvselect.server.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Worker numbers that do not fit kvselect's rank and block types are refused, never wrapped. */
class WorkerFieldBoundsHttpTest {

  @Test
  void dpRanksThatWouldOverflowAndHugeBlockSizesAre422AndChangeNothing() throws Exception {
    try (NodeHarness n = NodeHarness.approximate()) {
      String before = n.get("/workers").raw();
      NodeHarness.Reply ranks =
          n.post(
              "/workers",
              "{\"worker_id\":1,\"endpoint\":\"http://w1\",\"block_size\":16,"
                  + "\"data_parallel_start_rank\":2147483647,\"data_parallel_size\":2}");
      assertEquals(422, ranks.status(), ranks.raw());
      assertTrue(ranks.raw().contains("data_parallel_start_rank"), ranks.raw());
      NodeHarness.Reply block =
          n.post(
              "/workers", "{\"worker_id\":1,\"endpoint\":\"http://w1\",\"block_size\":4294967295}");
      assertEquals(422, block.status(), block.raw());
      assertTrue(block.raw().contains("block_size"), block.raw());
      assertEquals(before, n.get("/workers").raw(), "a refused registration changes nothing");
      NodeHarness.Reply edge =
          n.post(
              "/workers",
              "{\"worker_id\":1,\"endpoint\":\"http://w1\",\"block_size\":16,"
                  + "\"data_parallel_start_rank\":2147483646,\"data_parallel_size\":2}");
      assertEquals(201, edge.status(), edge.raw());
    }
  }
}
