package io.kvselect.server.api;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * A JSON document model for request generators that can also express what a JSON serializer never
 * writes: duplicate keys, raw number text of any size, lone surrogate escapes. Immutable: every
 * edit returns a new tree. Nodes are addressed by paths of child indexes.
 */
final class JsonDoc {

  private JsonDoc() {}

  /** A JSON value. */
  sealed interface J permits Obj, Arr, Lit {}

  /** One member of an object; keys may repeat. */
  record Member(String key, J value) {}

  /**
   * An object. {@code map} objects are keyed by data (DP ranks, header names, taint names), the
   * others by field names of the request schema.
   */
  record Obj(List<Member> members, boolean map) implements J {
    Obj {
      members = List.copyOf(members);
    }
  }

  /** An array. */
  record Arr(List<J> items) implements J {
    Arr {
      items = List.copyOf(items);
    }
  }

  /** A literal in its JSON text: number, string, true, false, null, or any raw text. */
  record Lit(String json) implements J {}

  static final Lit NULL = new Lit("null");

  /** A schema object from alternating keys and values; a null value leaves its key out. */
  static Obj obj(Object... kv) {
    return members(false, kv);
  }

  /** A data-keyed object from alternating keys and values. */
  static Obj map(Object... kv) {
    return members(true, kv);
  }

  private static Obj members(boolean map, Object... kv) {
    List<Member> m = new ArrayList<>();
    for (int i = 0; i + 1 < kv.length; i += 2) {
      if (kv[i + 1] != null) {
        m.add(new Member((String) kv[i], of(kv[i + 1])));
      }
    }
    return new Obj(m, map);
  }

  /** A value from a Java value: J, String, Number, Boolean, int[], long[], List. */
  static J of(Object v) {
    if (v instanceof J j) {
      return j;
    }
    if (v instanceof String s) {
      return str(s);
    }
    if (v instanceof Number || v instanceof Boolean) {
      return new Lit(String.valueOf(v));
    }
    List<J> items = new ArrayList<>();
    if (v instanceof int[] a) {
      for (int x : a) {
        items.add(new Lit(Integer.toUnsignedString(x)));
      }
    } else if (v instanceof long[] a) {
      for (long x : a) {
        items.add(new Lit(Long.toString(x)));
      }
    } else if (v instanceof List<?> l) {
      for (Object o : l) {
        items.add(o == null ? NULL : of(o));
      }
    } else {
      throw new IllegalArgumentException("not a JSON value: " + v);
    }
    return new Arr(items);
  }

  static Lit str(String s) {
    return new Lit(quote(s));
  }

  static Lit raw(String json) {
    return new Lit(json);
  }

  /**
   * {@code s} as a JSON string literal: quotes, backslashes and control characters escaped, and
   * every unpaired surrogate written as a {@code \\uXXXX} escape (the only way to send one).
   */
  static String quote(String s) {
    StringBuilder b = new StringBuilder(s.length() + 2).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      boolean pair =
          Character.isHighSurrogate(c)
              && i + 1 < s.length()
              && Character.isLowSurrogate(s.charAt(i + 1));
      if (pair) {
        b.append(c).append(s.charAt(++i));
      } else if (c == '"' || c == '\\') {
        b.append('\\').append(c);
      } else if (c < 0x20 || Character.isSurrogate(c)) {
        b.append(String.format("\\u%04X", (int) c));
      } else {
        b.append(c);
      }
    }
    return b.append('"').toString();
  }

  static String json(J v) {
    StringBuilder b = new StringBuilder();
    write(b, v);
    return b.toString();
  }

  private static void write(StringBuilder b, J v) {
    if (v instanceof Lit l) {
      b.append(l.json());
    } else if (v instanceof Arr a) {
      b.append('[');
      for (int i = 0; i < a.items().size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        write(b, a.items().get(i));
      }
      b.append(']');
    } else if (v instanceof Obj o) {
      b.append('{');
      for (int i = 0; i < o.members().size(); i++) {
        if (i > 0) {
          b.append(',');
        }
        b.append(quote(o.members().get(i).key())).append(':');
        write(b, o.members().get(i).value());
      }
      b.append('}');
    }
  }

  /** Every node below {@code root}, depth first, as index paths. */
  static List<List<Integer>> paths(J root) {
    List<List<Integer>> out = new ArrayList<>();
    collect(root, new ArrayList<>(), out);
    return out;
  }

  private static void collect(J v, List<Integer> at, List<List<Integer>> out) {
    int n = v instanceof Obj o ? o.members().size() : v instanceof Arr a ? a.items().size() : 0;
    for (int i = 0; i < n; i++) {
      at.add(i);
      out.add(List.copyOf(at));
      collect(child(v, i), at, out);
      at.remove(at.size() - 1);
    }
  }

  static J child(J v, int i) {
    return v instanceof Obj o ? o.members().get(i).value() : ((Arr) v).items().get(i);
  }

  static J get(J root, List<Integer> path) {
    J v = root;
    for (int i : path) {
      v = child(v, i);
    }
    return v;
  }

  /** The tree with the node at {@code path} replaced by {@code f} of it. */
  static J update(J root, List<Integer> path, UnaryOperator<J> f) {
    if (path.isEmpty()) {
      return f.apply(root);
    }
    int i = path.get(0);
    List<Integer> rest = path.subList(1, path.size());
    if (root instanceof Obj o) {
      List<Member> m = new ArrayList<>(o.members());
      m.set(i, new Member(m.get(i).key(), update(m.get(i).value(), rest, f)));
      return new Obj(m, o.map());
    }
    Arr a = (Arr) root;
    List<J> items = new ArrayList<>(a.items());
    items.set(i, update(items.get(i), rest, f));
    return new Arr(items);
  }

  /** The tree without the node at {@code path} (an object member or an array element). */
  static J remove(J root, List<Integer> path) {
    List<Integer> parent = path.subList(0, path.size() - 1);
    int i = path.get(path.size() - 1);
    return update(
        root,
        parent,
        p -> {
          if (p instanceof Obj o) {
            List<Member> m = new ArrayList<>(o.members());
            m.remove(i);
            return new Obj(m, o.map());
          }
          List<J> items = new ArrayList<>(((Arr) p).items());
          items.remove(i);
          return new Arr(items);
        });
  }

  /** The tree with {@code value} inserted at position {@code at} of the array at {@code path}. */
  static J insert(J root, List<Integer> path, int at, J value) {
    return update(
        root,
        path,
        a -> {
          List<J> items = new ArrayList<>(((Arr) a).items());
          items.add(at, value);
          return new Arr(items);
        });
  }

  /** The tree with a second member of the same key (and value {@code value}) after the member at {@code path}. */
  static J duplicate(J root, List<Integer> path, J value) {
    List<Integer> parent = path.subList(0, path.size() - 1);
    int i = path.get(path.size() - 1);
    return update(
        root,
        parent,
        p -> {
          Obj o = (Obj) p;
          List<Member> m = new ArrayList<>(o.members());
          m.add(i + 1, new Member(m.get(i).key(), value));
          return new Obj(m, o.map());
        });
  }

  /** The tree with member {@code key: value} appended to the object at {@code path}. */
  static J addMember(J root, List<Integer> path, String key, J value) {
    return update(
        root,
        path,
        p -> {
          Obj o = (Obj) p;
          List<Member> m = new ArrayList<>(o.members());
          m.add(new Member(key, value));
          return new Obj(m, o.map());
        });
  }

  /**
   * The name an error about the node at {@code path} should carry: the last schema field on the
   * way there (the key of a map's entry is data, so the map's own field name stands for it).
   */
  static String fieldName(J root, List<Integer> path) {
    String name = null;
    J v = root;
    for (int i : path) {
      if (v instanceof Obj o && !o.map()) {
        name = o.members().get(i).key();
      }
      v = child(v, i);
    }
    return name;
  }

  /** The key under which the node at {@code path} sits in its parent object, or null. */
  static String key(J root, List<Integer> path) {
    if (path.isEmpty()) {
      return null;
    }
    J parent = get(root, path.subList(0, path.size() - 1));
    return parent instanceof Obj o ? o.members().get(path.get(path.size() - 1)).key() : null;
  }
}
