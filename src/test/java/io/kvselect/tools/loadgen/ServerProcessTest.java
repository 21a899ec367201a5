package io.kvselect.tools.loadgen;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link ServerProcess}: the bare receiver started as its own JVM from this JVM's class path on a
 * free loopback port, measured by the generator, and stopped by its PID.
 */
class ServerProcessTest {

  @Test
  @Timeout(120)
  void bareReceiverRunsInItsOwnJvmAndStopsByPid() throws Exception {
    ProcessHandle handle;
    try (ServerProcess bare =
        ServerProcess.start(
            "bare", BareReceiver.class.getName(), List.of("{port}"), Map.of(), "/")) {
      handle = ProcessHandle.of(bare.pid()).orElseThrow();
      assertTrue(handle.isAlive());
      assertTrue(bare.pid() != ProcessHandle.current().pid());

      OpenLoopGenerator.Result r =
          OpenLoopGenerator.run(
              new OpenLoopOptions()
                  .target("127.0.0.1", bare.port(), "/")
                  .bodies(OpenLoopBodies.select(2, 256, 1))
                  .eventLoops(1)
                  .connections(4)
                  .open(100)
                  .window(0, 1));

      assertEquals(0, r.errors(), () -> "errors: " + r.stats().errors);
      assertEquals(r.stats().dispatched, r.stats().latency.getTotalCount());
    }
    assertFalse(handle.isAlive(), "close() waited for the process to exit");
  }
}
