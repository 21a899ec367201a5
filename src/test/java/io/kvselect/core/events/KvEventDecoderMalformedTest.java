package io.kvselect.core.events;

import static io.kvselect.core.events.Payloads.GPU;
import static io.kvselect.core.events.Payloads.H1_HEX;
import static io.kvselect.core.events.Payloads.TAG_REMOVED;
import static io.kvselect.core.events.Payloads.TAG_STORED;
import static io.kvselect.core.events.Payloads.TS;
import static io.kvselect.core.events.Payloads.hex;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Bad payloads raise {@link MalformedEventException} and nothing else. */
class KvEventDecoderMalformedTest {

  private static final String EV = "93" + TS + "91";

  /** A valid 5-element BlockStored body after its header, for variations. */
  private static final String STORED_5 = TAG_STORED + "91" + H1_HEX + "c0" + "9401020304" + "04";

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "empty                       | ''",
        "reserved byte c1            | c1",
        "text, not msgpack           | 68656c6c6f",
        "batch is an int             | 05",
        "batch is nil                | c0",
        "batch is a string           | a3616263",
        "batch array of one          | 91" + TS,
        "ts is a string              | 92a17890",
        "events is nil               | 92" + TS + "c0",
        "event is an int             | " + EV + "0500",
        "event array empty           | " + EV + "9000",
        "event tag is an int         | " + EV + "910100",
        "BlockStored too short       | "
            + EV
            + "94"
            + TAG_STORED
            + "91"
            + H1_HEX
            + "c0"
            + "90"
            + "00",
        "block_hashes is a string    | " + EV + "95" + TAG_STORED + "a1" + "78c0900400",
        "hash is a float             | " + EV + "95" + TAG_STORED + "91cb3ff0000000000000c0900400",
        "bin hash of 4 bytes         | " + EV + "95" + TAG_STORED + "91c40401020304c0900400",
        "parent is a string          | " + EV + "95" + TAG_STORED + "9101a178900400",
        "token id negative           | " + EV + "95" + TAG_STORED + "9101c091ff0400",
        "token id above u32          | "
            + EV
            + "95"
            + TAG_STORED
            + "9101c091cf00000001000000000400",
        "token id is a string        | " + EV + "95" + TAG_STORED + "9101c091a1780400",
        "token ids is a map          | " + EV + "95" + TAG_STORED + "9101c0800400",
        "bigram of three             | " + EV + "95" + TAG_STORED + "9101c09193010203" + "0400",
        "mixed flat then bigram      | " + EV + "95" + TAG_STORED + "9101c0920192010200" + "0400",
        "block_size negative         | " + EV + "95" + TAG_STORED + "9101c090ff00",
        "block_size is a string      | " + EV + "95" + TAG_STORED + "9101c090a13400",
        "medium is an int            | " + EV + "96" + STORED_5 + "c00100",
        "lora_name is an int         | " + EV + "97" + STORED_5 + "c0" + GPU + "0100",
        "removed medium is an int    | " + EV + "93" + TAG_REMOVED + "910101" + "00",
        "BlockRemoved without hashes | " + EV + "91" + TAG_REMOVED + "00",
        "dp_rank is a string         | 93" + TS + "90a130",
        "dp_rank above int32         | 93" + TS + "90ce80000000",
        "map event without type      | " + EV + "81a17801" + "00",
        "map event type is an int    | " + EV + "81a47479706501" + "00",
        "map event key is an int     | " + EV + "810101" + "00",
        "map BlockStored no tokens   | "
            + EV
            + "82a474797065"
            + TAG_STORED
            + "ac626c6f636b5f68617368657391"
            + "01"
            + "00",
        "map BlockRemoved no hashes  | " + EV + "81a474797065" + TAG_REMOVED + "00",
        "map envelope without events | 81a2747301",
        "map envelope key is an int  | 810101",
        "trailing bytes after batch  | 92" + TS + "90" + "00",
        "huge array32 batch          | dd7fffffff" + TS,
        "huge array32 events         | 93" + TS + "ddffffffff00",
        "huge map32 event            | " + EV + "df7fffffff00",
        "huge str32 tag              | " + EV + "91db7fffffff4142",
        "huge bin32 hash             | " + EV + "92" + TAG_REMOVED + "91c67fffffff0102",
        "huge array16 token ids      | " + EV + "95" + TAG_STORED + "9101c0dcffff010203",
        "huge map16 envelope         | deffff",
        "truncated float64 ts        | 92cb41d954",
        "truncated uint64 hash       | " + EV + "92" + TAG_REMOVED + "91cfdab89b",
        "reserved byte inside skip   | " + EV + "92a3466f6fc100",
      })
  void rejected(String name, String payloadHex) {
    byte[] payload = HexFormat.of().parseHex(payloadHex.strip());
    MalformedEventException e =
        assertThrows(MalformedEventException.class, () -> KvEventDecoder.decode(payload), name);
    assertFalse(e.getMessage() == null || e.getMessage().isBlank());
  }

  @Test
  void everyTruncationOfEveryGoldenFrameIsRejected() {
    for (byte[] golden : corpus()) {
      for (int len = 0; len < golden.length; len++) {
        byte[] cut = Arrays.copyOf(golden, len);
        assertThrows(
            MalformedEventException.class,
            () -> KvEventDecoder.decode(cut),
            () -> "prefix of " + cut.length + " bytes: " + HexFormat.of().formatHex(cut));
      }
    }
  }

  @Test
  void messageSaysWhatWasWrong() {
    MalformedEventException e =
        assertThrows(
            MalformedEventException.class,
            () -> KvEventDecoder.decode(hex(EV, "95", TAG_STORED, "a178c0900400")));
    assertTrue(e.getMessage().contains("block_hashes"), e.getMessage());
    assertTrue(e.getMessage().contains("at byte"), e.getMessage());
  }

  /**
   * 10,000 seeded random mutations (byte flips, random bytes, inserts, deletes, truncations,
   * spliced runs) of valid payloads: each decode yields a batch or MalformedEventException, never
   * another exception; the loop is bounded, so a hang would show as a test timeout.
   */
  @Test
  void fuzzedPayloadsOnlyDecodeOrFailCleanly() {
    List<byte[]> corpus = corpus();
    for (byte[] valid : corpus) {
      assertDoesNotThrow(() -> KvEventDecoder.decode(valid));
    }
    Random rnd = new Random(0x5EED_CAFEL);
    int decoded = 0;
    for (int i = 0; i < 10_000; i++) {
      byte[] p = mutate(corpus.get(rnd.nextInt(corpus.size())), rnd);
      try {
        KvEventDecoder.decode(p);
        decoded++;
      } catch (MalformedEventException expected) {
        // the only permitted failure
      } catch (Throwable t) {
        fail("iteration " + i + " threw " + t + " for " + HexFormat.of().formatHex(p), t);
      }
    }
    assertTrue(decoded > 0, "some mutations should stay decodable");
  }

  private static byte[] mutate(byte[] seed, Random rnd) {
    byte[] p = seed.clone();
    int rounds = 1 + rnd.nextInt(4);
    for (int r = 0; r < rounds && p.length > 0; r++) {
      int at = rnd.nextInt(p.length);
      switch (rnd.nextInt(6)) {
        case 0 -> p[at] ^= (byte) (1 << rnd.nextInt(8));
        case 1 -> p[at] = (byte) rnd.nextInt(256);
        case 2 -> {
          byte[] q = new byte[p.length + 1];
          System.arraycopy(p, 0, q, 0, at);
          q[at] = (byte) rnd.nextInt(256);
          System.arraycopy(p, at, q, at + 1, p.length - at);
          p = q;
        }
        case 3 -> {
          byte[] q = new byte[p.length - 1];
          System.arraycopy(p, 0, q, 0, at);
          System.arraycopy(p, at + 1, q, at, p.length - at - 1);
          p = q;
        }
        case 4 -> p = Arrays.copyOf(p, at);
        default -> {
          int len = 1 + rnd.nextInt(Math.min(8, p.length - at));
          byte[] q = new byte[p.length + len];
          System.arraycopy(p, 0, q, 0, at + len);
          System.arraycopy(p, at, q, at + len, p.length - at);
          p = q;
        }
      }
    }
    return p;
  }

  /** Valid frames: the §4 golden vectors plus hand-packed maps, bigrams and bin hashes. */
  static List<byte[]> corpus() {
    List<byte[]> c = new ArrayList<>();
    for (String v :
        new String[] {
          "93cb41d954fc402000009198ab426c6f636b53746f72656492cfdab89baa7b5857c0cf3b76f40347536421c0dc0020"
              + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c000",
          "93cb41d954fc402000009193ac426c6f636b52656d6f76656491cf3b76f40347536421a347505500",
          "93cb41d954fc402000009191b0416c6c426c6f636b73436c656172656400",
          "93cb41d954fc402000009181a474797065b0416c6c426c6f636b73436c656172656400",
          "93cb41d954fc402000009197ab426c6f636b53746f72656491d3cf97adeedb59e05bc0940102030404c0a347505500",
          "93cb41d954fc402000009187a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657391d3cf97"
              + "adeedb59e05bb1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f6964739401020304aa626c6f"
              + "636b5f73697a6504a76c6f72615f6964c0a66d656469756da347505500",
        }) {
      c.add(hex(v));
    }
    c.add(
        Payloads.batchOf(
            p -> {
              p.packArrayHeader(13)
                  .packString("BlockStored")
                  .packArrayHeader(2)
                  .packBinaryHeader(32)
                  .writePayload(new byte[32])
                  .packLong(-7)
                  .packLong(Long.MIN_VALUE);
              p.packArrayHeader(3);
              for (int t = 0; t < 3; t++) {
                p.packArrayHeader(2).packInt(t).packInt(t + 1);
              }
              p.packInt(1).packNil().packString("CPU").packString("lora");
              p.packArrayHeader(2).packArrayHeader(1).packString("ab".repeat(32)).packNil();
              p.packInt(0).packString("full_attention").packNil().packString("LOCAL");
            }));
    c.add(
        Payloads.pack(
            p -> {
              p.packMapHeader(3)
                  .packString("ts")
                  .packDouble(1.0)
                  .packString("attn_dp_rank")
                  .packInt(2);
              p.packString("events")
                  .packArrayHeader(1)
                  .packMapHeader(4)
                  .packString("type")
                  .packString("BlockRemoved")
                  .packString("block_hashes")
                  .packArrayHeader(1)
                  .packInt(3)
                  .packString("medium")
                  .packString("DISK")
                  .packString("unknown")
                  .packMapHeader(1)
                  .packInt(1)
                  .packFloat(2.0f);
            }));
    return c;
  }
}
