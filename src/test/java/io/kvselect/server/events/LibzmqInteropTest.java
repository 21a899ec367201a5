package io.kvselect.server.events;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kvselect.core.index.WorkerRank;
import io.kvselect.server.events.RecordingSink.Delivery;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;

/**
 * Interop with libzmq, which vLLM and SGLang use: an independent publisher in Python (Debian's
 * python3-zmq and python3-msgpack, {@code src/test/resources/interop/pub.py}) serves a PUB and a
 * ROUTER replay socket in vLLM's 0.26 layout. The ingest subscribes late, so the batches it
 * missed (PUB/SUB slow joiner) must come back through the replay. The test fails, never skips,
 * when {@code /usr/bin/python3} cannot import zmq and msgpack.
 */
class LibzmqInteropTest {

  private static final String PYTHON = "/usr/bin/python3";
  private static final int COUNT = 100;
  private static final WorkerRank RANK = new WorkerRank(42, 0);

  @Test
  void libzmqPublisherWithReplayDeliversEverySequenceOnceInOrder() throws Exception {
    requirePythonZmq();
    Path script = Path.of(getClass().getResource("/interop/pub.py").toURI());
    File stderr = Files.createTempFile("kvselect-interop-pub", ".log").toFile();
    Process proc =
        new ProcessBuilder(
                PYTHON,
                script.toString(),
                "--count",
                Integer.toString(COUNT),
                "--interval-ms",
                "20",
                "--max-seconds",
                "60")
            .redirectError(stderr)
            .start();
    BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    Thread reader = new Thread(() -> readLines(proc, lines), "interop-pub-stdout");
    reader.start();
    RecordingSink sink = new RecordingSink();
    try (KvEventIngest ingest = new KvEventIngest(KvEventIngestOptions.defaults(), sink)) {
      int pubPort = Integer.parseInt(expect(lines, "PUB ", proc, stderr));
      int replayPort = Integer.parseInt(expect(lines, "REPLAY ", proc, stderr));
      while (Integer.parseInt(expect(lines, "SENT ", proc, stderr)) < 5) {
        // subscribe only once a few batches are gone
      }
      ingest.subscribe(RANK, "tcp://127.0.0.1:" + pubPort, "tcp://127.0.0.1:" + replayPort);

      List<Delivery> got = sink.take(RANK, COUNT);
      String expected =
          LongStream.range(0, COUNT).mapToObj(Long::toString).collect(Collectors.joining(" "));
      assertEquals(expected, RecordingSink.trace(got));
      sink.assertQuiet(RANK, Duration.ofMillis(100));
      for (Delivery d : got) {
        assertEquals(1000 + d.seq(), storedHash(d.payload()), "payload of seq " + d.seq());
      }
      RankStats stats = ingest.stats().get(RANK);
      assertTrue(stats.replays() >= 1, "the late subscriber needed no replay: " + stats);
      assertEquals(0, stats.resets(), stats.toString());
      assertEquals(0, stats.droppedFrames(), stats.toString());
    } finally {
      stop(proc);
      reader.join(5_000);
      Files.deleteIfExists(stderr.toPath());
    }
  }

  private static void requirePythonZmq() throws Exception {
    Process check =
        new ProcessBuilder(PYTHON, "-c", "import zmq, msgpack").redirectErrorStream(true).start();
    boolean ended = check.waitFor(30, TimeUnit.SECONDS);
    String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (!ended) {
      check.destroyForcibly();
    }
    if (!ended || check.exitValue() != 0) {
      fail(
          PYTHON
              + " cannot import zmq and msgpack; install Debian's packages with "
              + "'apt-get install -y python3-zmq python3-msgpack' (.ci/run does). Output: "
              + out);
    }
  }

  /** The first block hash of the batch's first event: [ts, [["BlockStored", [hash], ...]], rank]. */
  private static long storedHash(byte[] payload) throws IOException {
    try (MessageUnpacker u = MessagePack.newDefaultUnpacker(payload)) {
      assertEquals(3, u.unpackArrayHeader());
      u.unpackDouble();
      assertEquals(1, u.unpackArrayHeader());
      u.unpackArrayHeader();
      assertEquals("BlockStored", u.unpackString());
      assertEquals(1, u.unpackArrayHeader());
      return u.unpackLong();
    }
  }

  private static void readLines(Process proc, BlockingQueue<String> lines) {
    try (BufferedReader r =
        new BufferedReader(new InputStreamReader(proc.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line; (line = r.readLine()) != null; ) {
        lines.add(line);
      }
    } catch (IOException ignored) {
      // the process is gone
    }
  }

  private static String expect(
      BlockingQueue<String> lines, String prefix, Process proc, File stderr) throws Exception {
    while (true) {
      String line = lines.poll(10, TimeUnit.SECONDS);
      if (line == null) {
        fail(
            "publisher printed no '"
                + prefix.trim()
                + "' line (alive="
                + proc.isAlive()
                + "): "
                + Files.readString(stderr.toPath()));
      }
      assertNotNull(line);
      if (line.startsWith(prefix)) {
        return line.substring(prefix.length()).trim();
      }
    }
  }

  private static void stop(Process proc) throws InterruptedException {
    try {
      proc.getOutputStream().close();
    } catch (IOException ignored) {
      // already gone
    }
    proc.destroy();
    if (!proc.waitFor(5, TimeUnit.SECONDS)) {
      proc.destroyForcibly();
      proc.waitFor(5, TimeUnit.SECONDS);
    }
  }
}
