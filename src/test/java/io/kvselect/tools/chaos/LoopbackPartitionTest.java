package io.kvselect.tools.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The outgoing connections of a member, read from {@code /proc/net/tcp} lines. */
class LoopbackPartitionTest {

  private static final List<String> TCP =
      List.of(
          "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode",
          // 127.0.0.1:40000 -> 127.0.0.1:5701, inode 111 (the member's own, to a peer's member
          // port)
          "   0: 0100007F:9C40 0100007F:1645 01 00000000:00000000 00:00000000 00000000     0        0 111 1",
          // 127.0.0.1:40001 -> 127.0.0.1:5801, inode 222 (to a peer's bus port)
          "   1: 0100007F:9C41 0100007F:16A9 01 00000000:00000000 00:00000000 00000000     0        0 222 1",
          // another process's socket to the same peer port, inode 333
          "   2: 0100007F:9C42 0100007F:1645 01 00000000:00000000 00:00000000 00000000     0        0 333 1",
          // the member's socket to something else, inode 444
          "   3: 0100007F:9C43 0100007F:0050 01 00000000:00000000 00:00000000 00000000     0        0 444 1");

  @Test
  void onlyTheMembersOwnSocketsToPeerPortsAreCut() {
    Set<Integer> ports =
        LoopbackPartition.localPortsTo(TCP, Set.of("111", "222", "444"), Set.of(5701, 5801));
    assertEquals(Set.of(40000, 40001), ports);
  }
}
