// Over 400 lines: every bounds-checked msgpack read the KV-event decoder needs, kept together so
// every length check is in one place.
package io.kvselect.core.events;

import io.kvselect.core.hash.BlockHasher;
import it.unimi.dsi.fastutil.longs.LongArrayList;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.msgpack.core.MessageFormat;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ValueType;

/**
 * Typed, bounds-checked reads over one msgpack payload for {@link KvEventDecoder}.
 *
 * <p>Every declared length (array, map, str, bin) is checked against the bytes left before
 * anything is allocated, so a hostile header cannot make the decoder allocate more than the
 * payload size, and each element read consumes at least one byte, so every loop ends. msgpack-core
 * failures surface as {@link IOException} or {@code MessagePackException}; the decoder wraps them.
 *
 * <p>Fast paths: token ids, hashes and strings are read straight from the payload array when
 * their msgpack form is one engines send (unsigned ints up to 32 bits for tokens, any int for
 * hashes, str for keys and names); the unpacker is then advanced past the bytes read, and anything
 * else (other forms, truncation, bad bytes) goes through the checked unpacker path from the same
 * position, so errors and their positions are the same. Strings equal to a field name or value
 * that every batch carries are returned as shared constants ({@link KnownStrings}).
 *
 * <p>Not thread-safe: one instance per {@code decode} call.
 */
final class WireReader {

  private static final java.lang.invoke.VarHandle INT_BE =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
          int[].class, java.nio.ByteOrder.BIG_ENDIAN);
  private static final java.lang.invoke.VarHandle SHORT_BE =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
          short[].class, java.nio.ByteOrder.BIG_ENDIAN);
  private static final java.lang.invoke.VarHandle LONG_BE =
      java.lang.invoke.MethodHandles.byteArrayViewVarHandle(
          long[].class, java.nio.ByteOrder.BIG_ENDIAN);

  private final MessageUnpacker in;
  private final byte[] buf;
  private final int base;
  private final int end;
  private final long length;
  private final byte[] u64 = new byte[9];
  private byte[] scratch = new byte[256];

  WireReader(byte[] payload, int offset, int length) {
    this.in = MessagePack.newDefaultUnpacker(payload, offset, length);
    this.buf = payload;
    this.base = offset;
    this.end = offset + length;
    this.length = length;
  }

  /** Index in {@link #buf} of the next unread byte. */
  private int at() {
    return base + (int) in.getTotalReadBytes();
  }

  /**
   * Consumes {@code n} bytes already read from {@link #buf} directly. msgpack-core has no public
   * skip of raw bytes; copying them into a scratch array is cheaper than its
   * {@code readPayloadAsReference}, which builds a buffer slice.
   */
  private void advance(int n) throws IOException {
    if (n > 0) {
      if (scratch.length < n) {
        scratch = new byte[Math.max(n, 2 * scratch.length)];
      }
      in.readPayload(scratch, 0, n);
    }
  }

  long position() {
    return in.getTotalReadBytes();
  }

  boolean atEnd() throws IOException {
    return !in.hasNext();
  }

  MalformedEventException malformed(String what) {
    return new MalformedEventException(what + " (at byte " + position() + ")");
  }

  ValueType peek() throws IOException, MalformedEventException {
    MessageFormat f = in.getNextFormat();
    if (f == MessageFormat.NEVER_USED) {
      throw malformed("invalid msgpack byte 0xc1");
    }
    return f.getValueType();
  }

  boolean tryNil() throws IOException {
    return in.tryUnpackNil();
  }

  void skip() throws IOException {
    in.skipValue();
  }

  void skip(int count) throws IOException {
    for (int i = 0; i < count; i++) {
      in.skipValue();
    }
  }

  int arrayHeader(String what) throws IOException, MalformedEventException {
    expect(ValueType.ARRAY, what);
    return checkedCount(in.unpackArrayHeader(), 1, what);
  }

  int mapHeader(String what) throws IOException, MalformedEventException {
    expect(ValueType.MAP, what);
    return checkedCount(in.unpackMapHeader(), 2, what);
  }

  String string(String what) throws IOException, MalformedEventException {
    expect(ValueType.STRING, what);
    int n = checkedCount(in.unpackRawStringHeader(), 1, what);
    String known = KnownStrings.match(buf, at(), n);
    if (known != null) {
      advance(n);
      return known;
    }
    return new String(in.readPayload(n), StandardCharsets.UTF_8);
  }

  /** A str or nil (null); any other type is malformed. */
  String optionalString(String what) throws IOException, MalformedEventException {
    return tryNil() ? null : string(what);
  }

  /** A str, or null for nil or a value of another type (skipped). Empty strings become null. */
  String lenientString() throws IOException, MalformedEventException {
    if (peek() != ValueType.STRING) {
      skip();
      return null;
    }
    String s = string("string");
    return s.isEmpty() ? null : s;
  }

  /** An int in {@code [0, 2^31)}, or null for nil or a value of another type (skipped). */
  Integer lenientIndex() throws IOException, MalformedEventException {
    if (peek() != ValueType.INTEGER) {
      skip();
      return null;
    }
    long v = bits();
    return v >= 0 && v <= Integer.MAX_VALUE ? (int) v : null;
  }

  /** Any msgpack int, uint64 values above {@code Long.MAX_VALUE} keeping their 64 bits. */
  long bits() throws IOException {
    if (in.getNextFormat() == MessageFormat.UINT64) {
      in.readPayload(u64, 0, 9);
      long v = 0;
      for (int i = 1; i < 9; i++) {
        v = (v << 8) | (u64[i] & 0xFF);
      }
      return v;
    }
    return in.unpackLong();
  }

  long integer(String what, long min, long max) throws IOException, MalformedEventException {
    expect(ValueType.INTEGER, what);
    boolean u64Big = in.getNextFormat() == MessageFormat.UINT64;
    long v = bits();
    if ((u64Big && v < 0) || v < min || v > max) {
      throw malformed(what + " out of range: " + (u64Big ? Long.toUnsignedString(v) : v));
    }
    return v;
  }

  double number(String what) throws IOException, MalformedEventException {
    ValueType t = peek();
    if (t == ValueType.FLOAT) {
      return in.unpackDouble();
    }
    if (t == ValueType.INTEGER) {
      return (double) bits();
    }
    throw malformed(what + " must be a number, got " + t);
  }

  /**
   * An engine block hash: an int of any width (its 64 bits) or a bin of at least 8 bytes whose
   * last 8 bytes are read big-endian (vLLM's int form is the low 64 bits of the digest).
   */
  long hash(String what) throws IOException, MalformedEventException {
    ValueType t = peek();
    if (t == ValueType.INTEGER) {
      return bits();
    }
    if (t == ValueType.BINARY) {
      int n = checkedCount(in.unpackBinaryHeader(), 1, what);
      if (n < 8) {
        throw malformed(what + " bin has " + n + " bytes, needs at least 8");
      }
      byte[] b = in.readPayload(n);
      long v = 0;
      for (int i = n - 8; i < n; i++) {
        v = (v << 8) | (b[i] & 0xFF);
      }
      return v;
    }
    throw malformed(what + " must be an int or bin, got " + t);
  }

  long[] hashes(String what) throws IOException, MalformedEventException {
    int n = arrayHeader(what);
    long[] out = new long[n];
    int start = at();
    int p = start;
    int i = 0;
    for (; i < n && p < end; i++) {
      int b = buf[p] & 0xFF;
      if (b <= 0x7f || b >= 0xe0) {
        out[i] = (byte) b;
        p++;
      } else if (b == 0xcf || b == 0xd3) {
        if (p + 9 > end) {
          break;
        }
        out[i] = (long) LONG_BE.get(buf, p + 1);
        p += 9;
      } else if (b == 0xcc || b == 0xcd || b == 0xce) {
        int w = 1 << (b - 0xcc);
        if (p + 1 + w > end) {
          break;
        }
        out[i] = be(p + 1, w);
        p += 1 + w;
      } else if (b == 0xd0 || b == 0xd1 || b == 0xd2) {
        int w = 1 << (b - 0xd0);
        if (p + 1 + w > end) {
          break;
        }
        out[i] = (be(p + 1, w) << (64 - 8 * w)) >> (64 - 8 * w);
        p += 1 + w;
      } else {
        break;
      }
    }
    advance(p - start);
    for (; i < n; i++) {
      out[i] = hash(what);
    }
    return out;
  }

  /** {@code w} bytes of {@link #buf} at {@code p}, big-endian, unsigned. */
  private long be(int p, int w) {
    long v = 0;
    for (int k = 0; k < w; k++) {
      v = (v << 8) | (buf[p + k] & 0xFF);
    }
    return v;
  }

  /**
   * {@code token_ids}: a list of u32, or a list of u32 pairs (eagle bigrams) flattened to the
   * first token of each pair plus the last pair's second token. Returns the tokens; sets
   * {@code eagle[0]} to whether the bigram form was seen.
   */
  int[] tokenIds(boolean[] eagle) throws IOException, MalformedEventException {
    int n = arrayHeader("token_ids");
    eagle[0] = false;
    if (n == 0) {
      return new int[0];
    }
    if (peek() != ValueType.ARRAY) {
      int[] out = new int[n];
      int start = at();
      int p = start;
      int i = 0;
      for (; i < n && p < end; i++) {
        int b = buf[p];
        if (b >= 0) {
          out[i] = b;
          p++;
        } else if (b == (byte) 0xce && p + 5 <= end) {
          out[i] = (int) INT_BE.get(buf, p + 1);
          p += 5;
        } else if (b == (byte) 0xcd && p + 3 <= end) {
          out[i] = (char) (short) SHORT_BE.get(buf, p + 1);
          p += 3;
        } else if (b == (byte) 0xcc && p + 2 <= end) {
          out[i] = buf[p + 1] & 0xFF;
          p += 2;
        } else {
          break;
        }
      }
      advance(p - start);
      for (; i < n; i++) {
        out[i] = tokenId();
      }
      return out;
    }
    eagle[0] = true;
    int[] out = new int[n + 1];
    for (int i = 0; i < n; i++) {
      if (arrayHeader("token bigram") != 2) {
        throw malformed("token bigram must have 2 elements");
      }
      out[i] = tokenId();
      out[i + 1] = tokenId();
    }
    return out;
  }

  /**
   * One u32 token id. Unsigned msgpack ints up to 32 bits (what engines send) are read after a
   * single format check; every other form goes through the checked {@link #integer} path.
   */
  private int tokenId() throws IOException, MalformedEventException {
    switch (in.getNextFormat()) {
      case POSFIXINT:
      case UINT8:
      case UINT16:
      case UINT32:
        return (int) in.unpackLong();
      default:
        return (int) integer("token id", 0, 0xFFFF_FFFFL);
    }
  }

  /**
   * vLLM {@code extra_keys}: one entry per block, nil or a list of keys. Multimodal hashes are
   * taken from a 64-hex-digit string (first 16 digits as u64; a string equal to {@code loraName}
   * is the LoRA key, not MM) or from a {@code [identifier, offset]} pair (the hex rule, else
   * XXH3-64 seed 0 of the identifier), as Dynamo does. Anything else is skipped. Returns null when
   * no block has an MM hash.
   */
  long[][] extraKeys(String loraName) throws IOException, MalformedEventException {
    if (peek() != ValueType.ARRAY) {
      skip();
      return null;
    }
    int blocks = arrayHeader("extra_keys");
    long[][] out = null;
    LongArrayList mm = new LongArrayList();
    for (int b = 0; b < blocks; b++) {
      if (peek() != ValueType.ARRAY) {
        skip();
        continue;
      }
      int keys = arrayHeader("extra_keys entry");
      mm.clear();
      for (int k = 0; k < keys; k++) {
        Long h = mmKey(loraName);
        if (h != null) {
          mm.add(h.longValue());
        }
      }
      if (!mm.isEmpty()) {
        if (out == null) {
          out = new long[blocks][];
        }
        out[b] = mm.toLongArray();
      }
    }
    return out;
  }

  private Long mmKey(String loraName) throws IOException, MalformedEventException {
    ValueType t = peek();
    if (t == ValueType.STRING) {
      String s = string("extra key");
      return s.equals(loraName) ? null : hex64(s);
    }
    if (t != ValueType.ARRAY) {
      skip();
      return null;
    }
    int n = arrayHeader("extra key");
    if (n != 2 || peek() != ValueType.STRING) {
      skip(n);
      return null;
    }
    String id = string("mm identifier");
    ValueType offset = peek();
    skip();
    if (offset != ValueType.INTEGER || id.isEmpty()) {
      return null;
    }
    Long hex = hex64(id);
    return hex != null ? hex : BlockHasher.xxh3(id.getBytes(StandardCharsets.UTF_8), 0L);
  }

  private static Long hex64(String s) {
    if (s.length() != 64) {
      return null;
    }
    for (int i = 0; i < 64; i++) {
      char c = s.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
        return null;
      }
    }
    return Long.parseUnsignedLong(s.substring(0, 16), 16);
  }

  private void expect(ValueType type, String what) throws IOException, MalformedEventException {
    ValueType t = peek();
    if (t != type) {
      throw malformed(
          what
              + " must be "
              + type.name().toLowerCase(Locale.ROOT)
              + ", got "
              + t.name().toLowerCase(Locale.ROOT));
    }
  }

  private int checkedCount(int declared, int minBytesEach, String what)
      throws MalformedEventException {
    long left = length - position();
    if (declared < 0 || (long) declared * minBytesEach > left) {
      throw malformed(
          what
              + " declares "
              + Integer.toUnsignedString(declared)
              + " elements/bytes but only "
              + left
              + " bytes remain");
    }
    return declared;
  }
}
