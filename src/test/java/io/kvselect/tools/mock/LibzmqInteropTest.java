package io.kvselect.tools.mock;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvselect.core.hash.BlockHasher;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The mocker's JeroMQ PUB and ROUTER against libzmq clients (Debian's python3-zmq and
 * python3-msgpack, as real routers use): a SUB decodes a BlockStored, a DEALER replays from 0.
 * Skipped when /usr/bin/python3 lacks those packages.
 */
class LibzmqInteropTest {

  private static final String PYTHON = "/usr/bin/python3";

  private static final String SCRIPT =
      String.join(
          "\n",
          "import json, sys, urllib.request, zmq, msgpack",
          "http, pub, replay = sys.argv[1:4]",
          "ctx = zmq.Context()",
          "sub = ctx.socket(zmq.SUB); sub.setsockopt(zmq.SUBSCRIBE, b''); sub.connect(pub); sub.RCVTIMEO = 200",
          "got = None",
          "for i in range(25):",
          "    toks = list(range(1000 + 100 * i, 1032 + 100 * i))",
          "    req = urllib.request.Request(http + '/generate', data=json.dumps({'token_ids': toks}).encode(),",
          "                                 method='POST', headers={'content-type': 'application/json'})",
          "    urllib.request.urlopen(req, timeout=5).read()",
          "    try:",
          "        got = sub.recv_multipart(); break",
          "    except zmq.Again:",
          "        pass",
          "batch = msgpack.unpackb(got[2], raw=False)",
          "ev = batch[1][0]",
          "d = ctx.socket(zmq.DEALER); d.connect(replay); d.RCVTIMEO = 5000",
          "d.send_multipart([b'', (0).to_bytes(8, 'big')])",
          "n = 0",
          "while True:",
          "    m = d.recv_multipart()",
          "    if m[-2] == b'\\xff' * 8:",
          "        end = [f.hex() for f in m]; break",
          "    n += 1",
          "print(json.dumps({'tokens': toks, 'type': ev['type'], 'hashes': [str(h) for h in ev['block_hashes']],",
          "                  'rank': batch[2], 'seq': int.from_bytes(got[1], 'big'), 'replayed': n, 'end': end}))",
          "ctx.destroy(linger=0)");

  @Test
  void libzmqSubscriberAndDealerTalkToTheMocker() throws Exception {
    assertTrue(
        Files.isExecutable(Path.of(PYTHON)),
        "no " + PYTHON + " (the interop test needs Debian python3; .ci/run installs it)");
    Process probe =
        new ProcessBuilder(PYTHON, "-c", "import zmq, msgpack").redirectErrorStream(true).start();
    assertTrue(
        probe.waitFor(20, TimeUnit.SECONDS) && probe.exitValue() == 0,
        "python3-zmq and python3-msgpack are required (apt-get install -y python3-zmq python3-msgpack; .ci/run does it)");

    try (MockFleet fleet = MockFleet.start(MockerOptions.local(1, 1, 1024, 16, WireFormat.MAP))) {
      EngineInfo e = fleet.engines().get(0);
      Process p =
          new ProcessBuilder(
                  PYTHON, "-c", SCRIPT, e.endpoint(), e.kvEventsEndpoint(0), e.replayEndpoint())
              .redirectErrorStream(true)
              .start();
      try {
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "python client did not finish");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.exitValue(), out);
        JsonNode r = MockClient.JSON.readTree(out.substring(out.lastIndexOf('\n') + 1));
        int[] tokens = new int[r.get("tokens").size()];
        for (int i = 0; i < tokens.length; i++) {
          tokens[i] = r.get("tokens").get(i).asInt();
        }
        long[] chain =
            BlockHasher.sequenceHashes(
                BlockHasher.localBlockHashes(
                    tokens, tokens.length, 16, BlockHasher.CHAIN_SEED, false, null));
        assertEquals("BlockStored", r.get("type").asText());
        assertEquals(Long.toUnsignedString(chain[0]), r.get("hashes").get(0).asText());
        assertEquals(Long.toUnsignedString(chain[1]), r.get("hashes").get(1).asText());
        assertEquals(0, r.get("rank").asInt());
        assertEquals(
            r.get("seq").asInt() + 1,
            r.get("replayed").asInt(),
            "replay from 0 returns every batch");
        assertEquals("[\"\",\"\",\"ffffffffffffffff\",\"\"]", r.get("end").toString());
      } finally {
        p.destroyForcibly();
      }
    }
  }
}
