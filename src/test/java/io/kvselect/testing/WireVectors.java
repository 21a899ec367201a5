package io.kvselect.testing;

import java.util.HexFormat;

/**
 * The golden KV-event payloads of the wire specification (section 4), as hex: vLLM array events
 * (4.1), vLLM 0.26 map events (4.2) and the SGLang page (4.3, array and map). Shared by the
 * decoder, applier and encoder tests so every side is checked against the same bytes.
 */
public final class WireVectors {

  public static final String V41_STORED =
      "93cb41d954fc402000009198ab426c6f636b53746f72656492cfdab89baa7b5857c0cf3b76f40347536421c0dc0020"
          + "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2010c0a3475055c000";
  public static final String V41_REMOVED =
      "93cb41d954fc402000009193ac426c6f636b52656d6f76656491cf3b76f40347536421a347505500";
  public static final String V41_CLEARED =
      "93cb41d954fc402000009191b0416c6c426c6f636b73436c656172656400";
  public static final String V42_STORED =
      "93cb41d954fc40200000918ba474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657392cfdab8"
          + "9baa7b5857c0cf3b76f40347536421b1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f696473"
          + "dc00200102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20aa626c6f636b5f7369"
          + "7a6510a76c6f72615f6964c0a66d656469756da3475055a96c6f72615f6e616d65c0aa65787472615f6b6579"
          + "7392c0c0a967726f75705f69647800b26b765f63616368655f737065635f6b696e64ae66756c6c5f61747465"
          + "6e74696f6e00";
  public static final String V42_REMOVED =
      "93cb41d954fc402000009184a474797065ac426c6f636b52656d6f766564ac626c6f636b5f68617368657391cf3b"
          + "76f40347536421a66d656469756da3475055a967726f75705f6964780000";
  public static final String V42_CLEARED =
      "93cb41d954fc402000009181a474797065b0416c6c426c6f636b73436c656172656400";
  public static final String V43_ARRAY =
      "93cb41d954fc402000009197ab426c6f636b53746f72656491d3cf97adeedb59e05bc0940102030404c0a347505500";
  public static final String V43_MAP =
      "93cb41d954fc402000009187a474797065ab426c6f636b53746f726564ac626c6f636b5f68617368657391d3cf97"
          + "adeedb59e05bb1706172656e745f626c6f636b5f68617368c0a9746f6b656e5f6964739401020304aa626c6f"
          + "636b5f73697a6504a76c6f72615f6964c0a66d656469756da347505500";

  private WireVectors() {}

  /** The bytes of a hex string. */
  public static byte[] bytes(String hex) {
    return HexFormat.of().parseHex(hex);
  }
}
