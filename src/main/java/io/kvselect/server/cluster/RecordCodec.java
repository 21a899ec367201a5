package io.kvselect.server.cluster;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.RecordComponent;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Bytes for the service's own records (pending-selection keys and values), which the core keeps
 * free of any serialization framework: a record is written as its class name and its components
 * in order; components may be records of the same kind, {@code String}, {@code long[]}, {@code
 * int[]}, primitives and their boxes, or null.
 *
 * <p>Only records under {@code io.kvselect.} are decoded, so bytes from another member can never
 * instantiate any other class. Stateless apart from a concurrent cache of record shapes; safe
 * from any thread. Cost is linear in the encoded size.
 */
final class RecordCodec {

  private static final String TRUSTED_PREFIX = "io.kvselect.";

  private static final byte NULL = 0;
  private static final byte RECORD = 1;
  private static final byte STRING = 2;
  private static final byte LONG = 3;
  private static final byte INT = 4;
  private static final byte BOOLEAN = 5;
  private static final byte DOUBLE = 6;
  private static final byte LONGS = 7;
  private static final byte INTS = 8;

  private record Shape(RecordComponent[] components, Constructor<?> constructor) {}

  private static final ConcurrentHashMap<Class<?>, Shape> SHAPES = new ConcurrentHashMap<>();

  private RecordCodec() {}

  static byte[] encode(Object value) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      write(out, value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  static Object decode(byte[] data) {
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
      return read(in);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void write(DataOutputStream out, Object v) throws IOException {
    if (v == null) {
      out.writeByte(NULL);
    } else if (v instanceof String s) {
      out.writeByte(STRING);
      byte[] b = s.getBytes(StandardCharsets.UTF_8);
      out.writeInt(b.length);
      out.write(b);
    } else if (v instanceof Long l) {
      out.writeByte(LONG);
      out.writeLong(l);
    } else if (v instanceof Integer i) {
      out.writeByte(INT);
      out.writeInt(i);
    } else if (v instanceof Boolean z) {
      out.writeByte(BOOLEAN);
      out.writeBoolean(z);
    } else if (v instanceof Double d) {
      out.writeByte(DOUBLE);
      out.writeDouble(d);
    } else if (v instanceof long[] a) {
      out.writeByte(LONGS);
      out.writeInt(a.length);
      for (long x : a) {
        out.writeLong(x);
      }
    } else if (v instanceof int[] a) {
      out.writeByte(INTS);
      out.writeInt(a.length);
      for (int x : a) {
        out.writeInt(x);
      }
    } else if (v instanceof Record r && r.getClass().getName().startsWith(TRUSTED_PREFIX)) {
      out.writeByte(RECORD);
      out.writeUTF(r.getClass().getName());
      for (RecordComponent c : shape(r.getClass()).components()) {
        try {
          write(out, c.getAccessor().invoke(r));
        } catch (ReflectiveOperationException e) {
          throw new IllegalStateException("cannot read " + c, e);
        }
      }
    } else {
      throw new IllegalArgumentException("cannot encode a " + v.getClass().getName());
    }
  }

  private static Object read(DataInputStream in) throws IOException {
    byte tag = in.readByte();
    switch (tag) {
      case NULL:
        return null;
      case STRING:
        {
          byte[] b = new byte[in.readInt()];
          in.readFully(b);
          return new String(b, StandardCharsets.UTF_8);
        }
      case LONG:
        return in.readLong();
      case INT:
        return in.readInt();
      case BOOLEAN:
        return in.readBoolean();
      case DOUBLE:
        return in.readDouble();
      case LONGS:
        {
          long[] a = new long[in.readInt()];
          for (int i = 0; i < a.length; i++) {
            a[i] = in.readLong();
          }
          return a;
        }
      case INTS:
        {
          int[] a = new int[in.readInt()];
          for (int i = 0; i < a.length; i++) {
            a[i] = in.readInt();
          }
          return a;
        }
      case RECORD:
        {
          String name = in.readUTF();
          if (!name.startsWith(TRUSTED_PREFIX)) {
            throw new IOException("refusing to decode " + name);
          }
          Class<?> type;
          try {
            type = Class.forName(name, false, RecordCodec.class.getClassLoader());
          } catch (ClassNotFoundException e) {
            throw new IOException("unknown record " + name, e);
          }
          if (!type.isRecord()) {
            throw new IOException(name + " is not a record");
          }
          Shape shape = shape(type);
          Object[] args = new Object[shape.components().length];
          for (int i = 0; i < args.length; i++) {
            args[i] = read(in);
          }
          try {
            return shape.constructor().newInstance(args);
          } catch (ReflectiveOperationException e) {
            throw new IOException("cannot build " + name, e);
          }
        }
      default:
        throw new IOException("unknown tag " + tag);
    }
  }

  private static Shape shape(Class<?> type) {
    return SHAPES.computeIfAbsent(
        type,
        t -> {
          RecordComponent[] components = t.getRecordComponents();
          Class<?>[] types = new Class<?>[components.length];
          for (int i = 0; i < components.length; i++) {
            types[i] = components[i].getType();
            components[i].getAccessor().setAccessible(true);
          }
          try {
            Constructor<?> ctor = t.getDeclaredConstructor(types);
            ctor.setAccessible(true);
            return new Shape(components, ctor);
          } catch (NoSuchMethodException e) {
            throw new IllegalStateException("record without a canonical constructor: " + t, e);
          }
        });
  }
}
