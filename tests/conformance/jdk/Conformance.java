// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The JDK as referee for the C++ javaobj engine (plain JDK 17, no libraries).
//
//   java Conformance generate DIR        writes DIR/<case>.bin (ObjectOutputStream)
//                                        and DIR/<case>.expected.txt, the canonical
//                                        description of the graph that was written
//                                        (format: javaobj/canonical.h); for rewrite
//                                        cases also DIR/<case>.rw.expected.txt
//   java Conformance check-rewrites DIR  reads every DIR/<case>.rw.bin (written by
//                                        the C++ rewriter) with ObjectInputStream and
//                                        compares its description with
//                                        DIR/<case>.rw.expected.txt
//
// Needs --add-opens for java.base/java.util, java.lang, java.lang.reflect, java.net
// (field values of JDK classes are read by reflection).

import java.io.*;
import java.lang.reflect.*;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.stream.*;

public class Conformance {

  // ---------------------------------------------------------------- describer
  interface Custom {  // classes whose writeObject/writeExternal data we describe
    void describeData(Canon c, Class<?> level, int depth) throws Exception;
  }

  static final class Canon {
    final StringBuilder sb = new StringBuilder();
    final IdentityHashMap<Object, Integer> ids = new IdentityHashMap<>();
    int next = 0;

    void line(int d, String s) {
      for (int i = 0; i < d; i++) sb.append("  ");
      sb.append(s).append('\n');
    }
    void reset() { ids.clear(); }

    static String esc(String s) {
      StringBuilder b = new StringBuilder();
      for (int i = 0; i < s.length(); i++) {
        char ch = s.charAt(i);
        if (ch >= 0x20 && ch < 0x7F && ch != '"' && ch != '\\') b.append(ch);
        else b.append(String.format("\\u%04X", (int) ch));
      }
      return b.toString();
    }
    static String hex(byte[] b) {
      StringBuilder s = new StringBuilder();
      for (byte x : b) s.append(String.format("%02x", x & 0xFF));
      return s.toString();
    }
    static String className(Class<?> c) {
      if (Proxy.isProxyClass(c)) {
        return "proxy(" + Arrays.stream(c.getInterfaces()).map(Class::getName)
            .collect(Collectors.joining(",")) + ")";
      }
      return c.getName();
    }
    static String prim(char t, Object v) {
      switch (t) {
        case 'B': return "byte " + v;
        case 'S': return "short " + v;
        case 'I': return "int " + v;
        case 'J': return "long " + v;
        case 'Z': return "boolean " + v;
        case 'C': return String.format("char 0x%04X", (int) (Character) v);
        case 'F': return String.format("float 0x%08x", Float.floatToIntBits((Float) v));
        case 'D': return String.format("double 0x%016x", Double.doubleToLongBits((Double) v));
      }
      throw new IllegalArgumentException("type " + t);
    }
    static boolean hasWriteObject(Class<?> k) {
      try {
        Method m = k.getDeclaredMethod("writeObject", ObjectOutputStream.class);
        return Modifier.isPrivate(m.getModifiers()) && !Modifier.isStatic(m.getModifiers());
      } catch (NoSuchMethodException e) {
        return false;
      }
    }

    // ObjectOutputStream writes the result of writeReplace (spec 9.7), e.g.
    // Collections$UnmodifiableRandomAccessList -> Collections$UnmodifiableList.
    static Object writeReplaced(Object o) throws Exception {
      if (!o.getClass().getName().startsWith("java.util.Collections$")) return o;
      for (Class<?> k = o.getClass(); k != null; k = k.getSuperclass()) {
        try {
          Method m = k.getDeclaredMethod("writeReplace");
          m.setAccessible(true);
          return m.invoke(o);
        } catch (NoSuchMethodException e) { /* try the super class */ }
      }
      return o;
    }

    void block(int d, byte[] b) { if (b.length > 0) line(d, "block " + hex(b)); }

    void value(Object o, int d) throws Exception {
      if (o == null) { line(d, "null"); return; }
      Integer seen = ids.get(o);
      if (seen != null) { line(d, "ref #" + seen); return; }
      int n = next++;
      ids.put(o, n);
      o = writeReplaced(o);
      Class<?> c = o.getClass();
      if (o instanceof String) {
        line(d, "#" + n + " string \"" + esc((String) o) + "\"");
      } else if (o instanceof Enum) {
        Enum<?> e = (Enum<?>) o;
        line(d, "#" + n + " enum " + e.getDeclaringClass().getName() + " " + e.name());
      } else if (o instanceof Class) {
        line(d, "#" + n + " class " + className((Class<?>) o));
      } else if (c.isArray()) {
        array(o, n, d);
      } else if (c.getName().startsWith("java.util.ImmutableCollections$")) {
        collSer(o, n, d);
      } else {
        object(o, n, d);
      }
    }

    void array(Object a, int n, int d) throws Exception {
      Class<?> ct = a.getClass().getComponentType();
      int len = Array.getLength(a);
      line(d, "#" + n + " array " + a.getClass().getName() + " length=" + len);
      if (!ct.isPrimitive()) {
        for (int i = 0; i < len; i++) value(Array.get(a, i), d + 1);
        return;
      }
      char t = ct == int.class ? 'I' : ct == long.class ? 'J' : ct == byte.class ? 'B'
          : ct == short.class ? 'S' : ct == char.class ? 'C' : ct == boolean.class ? 'Z'
          : ct == float.class ? 'F' : 'D';
      if (len <= 32) {
        StringBuilder v = new StringBuilder("values");
        for (int i = 0; i < len; i++) {
          String p = prim(t, Array.get(a, i));
          v.append(' ').append(p.substring(p.indexOf(' ') + 1));
        }
        line(d + 1, v.toString());
        return;
      }
      int w = t == 'B' || t == 'Z' ? 1 : t == 'S' || t == 'C' ? 2 : t == 'I' || t == 'F' ? 4 : 8;
      long h = 0xcbf29ce484222325L;
      ByteBuffer bb = ByteBuffer.allocate(8);
      for (int i = 0; i < len; i++) {
        bb.clear();
        Object v = Array.get(a, i);
        switch (t) {
          case 'B': bb.put((Byte) v); break;
          case 'Z': bb.put((byte) ((Boolean) v ? 1 : 0)); break;
          case 'S': bb.putShort((Short) v); break;
          case 'C': bb.putChar((Character) v); break;
          case 'I': bb.putInt((Integer) v); break;
          case 'F': bb.putInt(Float.floatToIntBits((Float) v)); break;
          case 'J': bb.putLong((Long) v); break;
          default: bb.putLong(Double.doubleToLongBits((Double) v)); break;
        }
        for (int k = 0; k < w; k++) { h ^= (bb.get(k) & 0xFF); h *= 0x100000001b3L; }
      }
      line(d + 1, String.format("fnv64=%016x", h));
    }

    void collSer(Object o, int n, int d) throws Exception {
      int tag;
      List<Object> elems = new ArrayList<>();
      if (o instanceof List) {
        tag = 1;
        try {
          Field f = o.getClass().getDeclaredField("allowNulls");
          f.setAccessible(true);
          if ((Boolean) f.get(o)) tag = 4;
        } catch (NoSuchFieldException e) { /* List12 */ }
        elems.addAll((List<?>) o);
      } else if (o instanceof Set) {
        tag = 2;
        if (((Set<?>) o).size() > 1) throw new IllegalStateException("Set.of order is unspecified");
        elems.addAll((Set<?>) o);
      } else {
        tag = 3;
        Map<?, ?> m = (Map<?, ?>) o;
        if (m.size() > 1) throw new IllegalStateException("Map.of order is unspecified");
        for (Map.Entry<?, ?> e : m.entrySet()) { elems.add(e.getKey()); elems.add(e.getValue()); }
      }
      line(d, "#" + n + " object java.util.CollSer");
      line(d + 1, "class java.util.CollSer");
      line(d + 2, "tag = int " + tag);
      line(d + 2, "elements " + elems.size());
      for (Object e : elems) value(e, d + 3);
    }

    void object(Object o, int n, int d) throws Exception {
      Class<?> c = o.getClass();
      line(d, "#" + n + " object " + className(c));
      if (o instanceof Externalizable) {
        line(d + 1, "external");
        ((Custom) o).describeData(this, c, d + 2);
        return;
      }
      ArrayDeque<Class<?>> chain = new ArrayDeque<>();
      for (Class<?> k = c; k != null && Serializable.class.isAssignableFrom(k); k = k.getSuperclass()) {
        chain.addFirst(k);
      }
      for (Class<?> k : chain) {
        line(d + 1, "class " + className(k));
        ObjectStreamClass osc = ObjectStreamClass.lookup(k);
        for (ObjectStreamField f : osc.getFields()) {
          Field jf = k.getDeclaredField(f.getName());
          jf.setAccessible(true);
          if (f.isPrimitive()) {
            line(d + 2, f.getName() + " = " + prim(f.getTypeCode(), jf.get(o)));
          } else {
            line(d + 2, f.getName() + " =");
            value(jf.get(o), d + 3);
          }
        }
        if (!hasWriteObject(k)) continue;
        if (k == HashMap.class || k == TreeMap.class) {
          Map<?, ?> m = (Map<?, ?>) o;
          line(d + 2, "entries " + m.size());
          for (Map.Entry<?, ?> e : m.entrySet()) {
            line(d + 3, "key");
            value(e.getKey(), d + 4);
            line(d + 3, "value");
            value(e.getValue(), d + 4);
          }
        } else if (k == HashSet.class || k == ArrayList.class || k == LinkedList.class) {
          Collection<?> m = (Collection<?>) o;
          line(d + 2, "elements " + m.size());
          for (Object e : m) value(e, d + 3);
        } else if (k == TreeSet.class) {
          TreeSet<?> t = (TreeSet<?>) o;
          line(d + 2, "comparator");
          value(t.comparator(), d + 3);
          line(d + 2, "elements " + t.size());
          for (Object e : t) value(e, d + 3);
        } else if (o instanceof Custom) {
          line(d + 2, "data");
          ((Custom) o).describeData(this, k, d + 3);
        } else if (k == java.net.URI.class) {
          line(d + 2, "data");
        } else {
          throw new IllegalStateException("no description for writeObject of " + k);
        }
      }
    }
  }

  // ------------------------------------------------------------- test classes
  static class Prims implements Serializable {
    private static final long serialVersionUID = 1L;
    byte b = -7; char c = '\u00e9'; double d = -0.0; float f = Float.NaN; int i = -123456;
    long l = Long.MIN_VALUE; short s = 32000; boolean z = true; boolean Zed = false;
    int _u = 5; int aB = 6; String str = "s"; Object obj = null; int[] arr = {1, 2};
  }
  static class Holder implements Serializable {
    private static final long serialVersionUID = 2L;
    Object x, y;
    Holder(Object x, Object y) { this.x = x; this.y = y; }
  }
  static class Node implements Serializable {
    private static final long serialVersionUID = 3L;
    String name; Node next; Object payload;
    Node(String n) { name = n; }
  }
  static class Base implements Serializable {
    private static final long serialVersionUID = 4L;
    int baseValue = 11; String baseName = "base";
  }
  static class Derived extends Base {
    private static final long serialVersionUID = 5L;
    long derivedValue = 22; Object extra = List.of(1, 2);
  }
  static class Foo implements Serializable {
    private static final long serialVersionUID = 6L;
    int id; String label;
    Foo(int id, String label) { this.id = id; this.label = label; }
  }
  enum Color { RED, GREEN, BLUE }
  enum Op {
    PLUS { int apply(int a, int b) { return a + b; } },
    MINUS { int apply(int a, int b) { return a - b; } };
    abstract int apply(int a, int b);
  }

  // writeObject with defaultWriteObject, primitives, nested objects.
  static class Inner implements Serializable, Custom {
    private static final long serialVersionUID = 7L;
    int tagValue = 9;
    transient String note = "inner-note";
    private void writeObject(ObjectOutputStream out) throws IOException {
      out.defaultWriteObject();
      out.writeUTF(note);
      out.writeLong(42L);
      out.writeObject(Color.BLUE);
      out.writeShort(7);
    }
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
      in.defaultReadObject();
      note = in.readUTF(); in.readLong(); in.readObject(); in.readShort();
    }
    public void describeData(Canon c, Class<?> level, int d) throws Exception {
      ByteArrayOutputStream bo = new ByteArrayOutputStream();
      DataOutputStream o = new DataOutputStream(bo);
      o.writeUTF(note); o.writeLong(42L);
      c.block(d, bo.toByteArray());
      c.value(Color.BLUE, d);
      c.block(d, new byte[] {0, 7});
    }
  }
  static class Outer implements Serializable, Custom {
    private static final long serialVersionUID = 8L;
    String name = "outer";
    transient Inner inner = new Inner();
    transient byte[] bulk;
    Outer(int bulkSize) {
      bulk = new byte[bulkSize];
      for (int i = 0; i < bulkSize; i++) bulk[i] = (byte) (i * 31);
    }
    private void writeObject(ObjectOutputStream out) throws IOException {
      out.defaultWriteObject();
      out.writeInt(bulk.length);
      out.write(bulk);
      out.writeObject(inner);
      out.writeInt(-1);
    }
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
      in.defaultReadObject();
      bulk = new byte[in.readInt()]; in.readFully(bulk);
      inner = (Inner) in.readObject(); in.readInt();
    }
    public void describeData(Canon c, Class<?> level, int d) throws Exception {
      ByteArrayOutputStream bo = new ByteArrayOutputStream();
      DataOutputStream o = new DataOutputStream(bo);
      o.writeInt(bulk.length); o.write(bulk);
      c.block(d, bo.toByteArray());
      c.value(inner, d);
      c.block(d, new byte[] {-1, -1, -1, -1});
    }
  }
  public static class Ext implements Externalizable, Custom {
    private static final long serialVersionUID = 9L;
    int n = 5; String s = "ext-string"; Object shared;
    public Ext() {}
    Ext(Object shared) { this.shared = shared; }
    public void writeExternal(ObjectOutput out) throws IOException {
      out.writeInt(n); out.writeObject(s); out.writeObject(shared); out.writeDouble(1.5);
    }
    public void readExternal(ObjectInput in) throws IOException, ClassNotFoundException {
      n = in.readInt(); s = (String) in.readObject(); shared = in.readObject(); in.readDouble();
    }
    public void describeData(Canon c, Class<?> level, int d) throws Exception {
      c.block(d, new byte[] {0, 0, 0, 5});
      c.value(s, d);
      c.value(shared, d);
      ByteArrayOutputStream bo = new ByteArrayOutputStream();
      new DataOutputStream(bo).writeDouble(1.5);
      c.block(d, bo.toByteArray());
    }
  }
  static class Handler implements InvocationHandler, Serializable {
    private static final long serialVersionUID = 10L;
    String label = "handler";
    public Object invoke(Object p, Method m, Object[] a) { return null; }
  }

  // Values that must be shown exactly (issue 12): floats and doubles by their
  // bits, longs beyond 2^53, chars including an unpaired surrogate.
  static class Exact implements Serializable {
    private static final long serialVersionUID = 12L;
    double pi = Math.PI; double d2 = 123456789.123; float f16m = 16777216f;
    double[] arr = {3.141592653589793, 0.1, 1e-300};
    double nan = Double.NaN; double inf = Double.POSITIVE_INFINITY;
    double ninf = Double.NEGATIVE_INFINITY; double nzero = -0.0; double pzero = 0.0;
    float fnan = Float.NaN; float fmin = Float.MIN_VALUE; float fmax = Float.MAX_VALUE;
    double dmin = Double.MIN_VALUE; double dmax = Double.MAX_VALUE; float ftenth = 0.1f;
    float[] farr = {0.1f, 1.0e10f, -0.0f, Float.NEGATIVE_INFINITY, 3.4028235e38f};
    long lmax = Long.MAX_VALUE; long lmin = Long.MIN_VALUE; long beyond = (1L << 53) + 1;
    long exact = 1L << 53; long[] larr = {-(1L << 53) - 1, 9007199254740993L, 42};
    char letter = 'A'; char lone = '\uD800'; char euro = '\u20ac'; char nul = '\u0000';
    char[] carr = {'a', '\uDC00', '"'};
  }
  // writeObject fails after writing part of the object, so ObjectOutputStream
  // writes TC_EXCEPTION (writeFatalException) and the stream goes on.
  static class Thrower implements Serializable {
    private static final long serialVersionUID = 13L;
    String before = "written-before-the-failure";
    private void writeObject(ObjectOutputStream out) throws IOException {
      out.defaultWriteObject();
      out.writeInt(7);
      throw new IOException("boom");
    }
  }

  // ObjectInputStream that records every object it resolves, in the order it
  // resolves them (strings when read, objects and arrays when complete): the
  // values the JDK reads, to compare with `flinkstate dump --json`.
  static final class Recorder extends ObjectInputStream {
    final StringBuilder sb;
    Recorder(InputStream in, StringBuilder sb) throws IOException {
      super(in);
      this.sb = sb;
      enableResolveObject(true);
    }
    @Override protected Object resolveObject(Object o) throws IOException {
      try {
        sb.append(record(o)).append('\n');
      } catch (IOException e) {
        throw e;
      } catch (Exception e) {
        throw new IOException(e);
      }
      return o;
    }
  }
  static String exactPrim(char t, Object v) {
    switch (t) {
      case 'B': return "byte:" + v;
      case 'S': return "short:" + v;
      case 'I': return "int:" + v;
      case 'J': return "long:" + v;
      case 'Z': return "boolean:" + v;
      case 'C': return String.format("char:0x%04X", (int) (Character) v);
      case 'F': return String.format("float:0x%08x", Float.floatToRawIntBits((Float) v));
      case 'D': return String.format("double:0x%016x", Double.doubleToRawLongBits((Double) v));
    }
    throw new IllegalArgumentException("type " + t);
  }
  static char typeCode(Class<?> ct) {
    return ct == int.class ? 'I' : ct == long.class ? 'J' : ct == byte.class ? 'B'
        : ct == short.class ? 'S' : ct == char.class ? 'C' : ct == boolean.class ? 'Z'
        : ct == float.class ? 'F' : 'D';
  }
  static String record(Object o) throws Exception {
    Class<?> c = o.getClass();
    if (o instanceof String) return "string \"" + Canon.esc((String) o) + "\"";
    if (o instanceof Enum) {
      Enum<?> e = (Enum<?>) o;
      return "enum " + e.getDeclaringClass().getName() + " " + e.name();
    }
    if (c.isArray()) {
      StringBuilder b = new StringBuilder("array " + c.getName());
      Class<?> ct = c.getComponentType();
      if (ct.isPrimitive()) {
        char t = typeCode(ct);
        for (int i = 0; i < Array.getLength(o); i++) b.append(' ').append(exactPrim(t, Array.get(o, i)));
      }
      return b.toString();
    }
    StringBuilder b = new StringBuilder("object " + Canon.className(c));
    ArrayDeque<Class<?>> chain = new ArrayDeque<>();
    for (Class<?> k = c; k != null && Serializable.class.isAssignableFrom(k); k = k.getSuperclass()) {
      chain.addFirst(k);
    }
    if (!(o instanceof Externalizable)) {
      for (Class<?> k : chain) {
        ObjectStreamClass osc = ObjectStreamClass.lookup(k);
        if (osc == null) continue;
        for (ObjectStreamField f : osc.getFields()) {
          if (!f.isPrimitive()) continue;
          // HashMap.readObject recomputes `threshold` from the capacity in
          // its custom data: the live value is not the one in the stream.
          if (k == HashMap.class && f.getName().equals("threshold")) continue;
          Field jf = k.getDeclaredField(f.getName());
          jf.setAccessible(true);
          b.append(' ').append(f.getName()).append('=').append(exactPrim(f.getTypeCode(), jf.get(o)));
        }
      }
    }
    return b.toString();
  }
  // Reads every top-level object of `bytes` like a program would (readObject
  // until the data ends; a WriteAbortedException is recorded and reading goes
  // on) and returns the records; `jdk` receives what the JDK did.
  static String readBack(byte[] bytes, int objectBytes, StringBuilder jdk) throws Exception {
    StringBuilder sb = new StringBuilder();
    ByteArrayInputStream bin = new ByteArrayInputStream(bytes, 0, objectBytes);
    try (Recorder in = new Recorder(bin, sb)) {
      while (bin.available() > 0 || in.available() > 0) {
        try {
          in.readObject();
        } catch (WriteAbortedException e) {
          sb.append("aborted ").append(e.detail.getClass().getName()).append('\n');
          jdk.append("WriteAbortedException ").append(e.detail).append('\n');
        } catch (OptionalDataException e) {
          if (!e.eof && e.length > 0) { in.skipBytes(e.length); continue; }  // top-level block data
          jdk.append("java.io.OptionalDataException eof=").append(e.eof).append('\n');
          return null;
        }
      }
    }
    return sb.toString();
  }

  // Streams whose expected values come only from the JDK's reading (no
  // canonical description of the written graph): name -> bytes, and for
  // trailing data, the size of the object part.
  static final LinkedHashMap<String, byte[]> RAW_CASES = new LinkedHashMap<>();
  static final HashMap<String, Integer> OBJECT_BYTES = new HashMap<>();

  static byte[] serialize(Object... objects) throws IOException {
    ByteArrayOutputStream bo = new ByteArrayOutputStream();
    try (ObjectOutputStream out = new ObjectOutputStream(bo)) {
      for (Object o : objects) out.writeObject(o);
    }
    return bo.toByteArray();
  }
  // The ArrayList `size` field value (i4) precedes TC_BLOCKDATA 4 + capacity.
  static byte[] patchArrayListSize(byte[] b, int size, int newSize) {
    byte[] pat = ByteBuffer.allocate(10).putInt(size).put((byte) 0x77).put((byte) 4).putInt(size).array();
    for (int i = 0; i + pat.length <= b.length; i++) {
      if (Arrays.equals(Arrays.copyOfRange(b, i, i + pat.length), pat)) {
        byte[] c = b.clone();
        ByteBuffer.wrap(c, i, 4).putInt(newSize);
        return c;
      }
    }
    throw new IllegalStateException("ArrayList size not found");
  }
  static void defineRawCases() throws IOException {
    {
      ByteArrayOutputStream bo = new ByteArrayOutputStream();
      ObjectOutputStream out = new ObjectOutputStream(bo);
      out.writeObject("first");
      try {
        out.writeObject(new ArrayList<>(List.of("inner-before", new Thrower())));
        throw new IllegalStateException("no exception");
      } catch (IOException expected) { /* writeFatalException wrote TC_EXCEPTION */ }
      out.writeObject("after-exception");
      out.close();
      RAW_CASES.put("exception_then_more", bo.toByteArray());
    }
    {
      byte[] obj = serialize(new Holder("keystore-entry", new byte[] {1, 2, 3}));
      byte[] tail = new byte[20];
      tail[0] = 0x16;  // a TLS/keystore-like byte: no type code
      for (int i = 1; i < tail.length; i++) tail[i] = (byte) (i * 37);
      byte[] all = Arrays.copyOf(obj, obj.length + tail.length);
      System.arraycopy(tail, 0, all, obj.length, tail.length);
      RAW_CASES.put("trailing_bytes", all);
      OBJECT_BYTES.put("trailing_bytes", obj.length);
    }
    byte[] list = serialize(new ArrayList<>(List.of("e1", "e2", "e3")));
    RAW_CASES.put("arraylist_size_more", patchArrayListSize(list, 3, 5));
    RAW_CASES.put("arraylist_size_less", patchArrayListSize(list, 3, 2));
  }

  // -------------------------------------------------------------------- cases
  interface Writer { void write(ObjectOutputStream out, Canon c) throws Exception; }

  static final LinkedHashMap<String, Writer> CASES = new LinkedHashMap<>();
  static final LinkedHashMap<String, Object> REWRITE_EXPECTED = new LinkedHashMap<>();

  static void single(String name, Object o) {
    CASES.put(name, (out, c) -> { out.writeObject(o); c.line(1, "top"); c.value(o, 2); });
  }

  static String repeat(String s, int n) { return s.repeat(n); }

  static void defineCases() {
    single("prims", new Prims());
    single("string_empty", "");
    single("string_ascii", "hello world");
    single("string_unicode", "a\u0000\u00e9\u20ac\uD83D\uDE00z\"\\");
    single("string_65535", repeat("x", 65535));
    single("string_65536", repeat("y", 65536));
    single("string_long_nonascii", repeat("\u00e9\uD83D\uDE00", 20000));
    single("derived", new Derived());
    Node a = new Node("a"), b = new Node("b");
    a.next = b; b.next = a; a.payload = a; b.payload = "shared-" + "payload";
    single("cycle", a);
    String sh = new String("shared-string");
    single("shared_strings", new Holder(sh, new Object[] {sh, sh, new String("shared-string")}));
    HashMap<String, Object> hm = new HashMap<>();
    hm.put("k1", 1); hm.put("k2", List.of("x")); hm.put("k3", null); hm.put(null, "nullkey");
    single("hashmap", hm);
    LinkedHashMap<Integer, String> lhm = new LinkedHashMap<>();
    for (int i = 20; i > 0; i--) lhm.put(i * 7, "v" + i);
    single("linkedhashmap", lhm);
    LinkedHashMap<String, Integer> acc = new LinkedHashMap<>(16, 0.75f, true);
    acc.put("a", 1); acc.put("b", 2); acc.put("c", 3); acc.get("a");
    single("linkedhashmap_access", acc);
    single("hashset", new HashSet<>(List.of("p", "q", "r")));
    single("linkedhashset", new LinkedHashSet<>(List.of("z", "y", "x")));
    single("arraylist", new ArrayList<>(List.of("one", 2, 3L, 4.0)));
    single("linkedlist", new LinkedList<>(List.of("l1", "l2")));
    TreeMap<String, Integer> tm = new TreeMap<>();
    tm.put("b", 2); tm.put("a", 1); tm.put("c", 3);
    single("treemap", tm);
    single("treeset", new TreeSet<>(List.of(5, 1, 3)));
    single("list_of", List.of(1, 2, 3));
    single("list_of1", List.of("single"));
    single("set_of1", Set.of("only"));
    single("map_of1", Map.of("k", Color.GREEN));
    single("stream_tolist", Stream.of("s1", "s2").toList());
    single("unmodifiable", new Object[] {
        Collections.unmodifiableMap(new HashMap<>(Map.of("m", 1))),
        Collections.unmodifiableList(new ArrayList<>(List.of("u"))),
        Collections.unmodifiableList(new LinkedList<>(List.of("ul"))),
        Collections.unmodifiableSet(new HashSet<>(List.of("us"))),
        Collections.unmodifiableCollection(new ArrayList<>(List.of("uc")))});
    single("empties_and_singletons", new Object[] {
        Collections.emptyList(), Collections.emptySet(), Collections.emptyMap(),
        Collections.emptyList(), Collections.singletonList("sl"),
        Collections.singleton("ss"), Collections.singletonMap("sk", "sv"),
        Arrays.asList("x", "y")});
    single("prim_arrays", new Object[] {
        new byte[] {1, -2}, new short[] {3, -4}, new char[] {'a', '\u20ac'},
        new int[] {5, -6}, new long[] {7, -8}, new float[] {1.5f, Float.NaN},
        new double[] {2.5, -0.0}, new boolean[] {true, false}, new int[0],
        new int[][] {{1}, {2, 3}, null}, new long[1000]});
    single("object_arrays", new Object[] {
        new String[] {"s1", null, "s2"}, new Object[] {new Object[] {"nested"}},
        new Color[] {Color.RED, Color.RED}, new Integer[] {1, 2}});
    HashMap<Object, Object> enums = new HashMap<>();
    enums.put(Color.RED, Op.PLUS);
    enums.put("key", Color.RED);
    enums.put(Color.GREEN, Op.MINUS);
    single("enums_in_maps", enums);
    single("class_objects", new Object[] {String.class, int[].class, Color.class,
        Object[].class, String.class});
    single("nested_custom", new Object[] {new Outer(10), new Outer(3000)});
    single("externalizable", new Object[] {new Ext("x"), new Ext(null)});
    single("uri_uuid", new Object[] {java.net.URI.create("hdfs://nn:8020/flink/chk-1"),
        new UUID(1L, 2L)});
    Object proxy = Proxy.newProxyInstance(Conformance.class.getClassLoader(),
        new Class<?>[] {Runnable.class, Comparable.class}, new Handler());
    single("proxy", new Object[] {proxy, proxy});
    CASES.put("reset_and_blocks", (out, c) -> {
      String s = new String("again");
      out.writeObject(s); c.line(1, "top"); c.value(s, 2);
      out.writeInt(12345);
      out.writeObject(s); c.block(1, new byte[] {0, 0, 0x30, 0x39}); c.line(1, "top"); c.value(s, 2);
      out.reset(); c.line(1, "reset"); c.reset();
      out.writeObject(s); c.line(1, "top"); c.value(s, 2);
      out.writeUnshared(s);
      c.line(1, "top");
      { Canon u = c; int n = u.next++; u.line(2, "#" + n + " string \"again\""); }
      out.writeObject(s); c.line(1, "top"); c.value(s, 2);
    });
    CASES.put("externalizable_protocol1", (out, c) -> {
      out.useProtocolVersion(ObjectStreamConstants.PROTOCOL_VERSION_1);
      out.writeObject(new Ext("p1"));
      c.sb.setLength(0);
      c.sb.append("error unimplemented\n");
    });
    single("exact_values", new Exact());
    single("json_strings", new Object[] {"pair \uD83D\uDE00 end", "lone high \uD800 end",
        "lone low \uDC00 end", "\uDBFF\uDFFF", repeat("\u20ac", 30000), "nul\u0000",
        "quote\" back\\ nl\n tab\t", "\uDC00\uD800"});
    // Large streams.
    HashMap<Integer, String> big = new HashMap<>();
    for (int i = 0; i < 100000; i++) big.put(i, "value-" + i);
    single("large_hashmap", big);
    long[] longs = new long[2_000_000];
    for (int i = 0; i < longs.length; i++) longs[i] = i * 3L;
    single("large_long_array", new Object[] {"before", longs, "after"});
    single("large_string", repeat("0123456789\u00e9", 100000));

    // Rewrite cases: base graph, and the graph the C++ rewrite must produce.
    Foo shared = new Foo(1, "shared");
    HashMap<String, Object> m1 = new HashMap<>();
    m1.put("k1", shared); m1.put("k2", "v2");
    single("rw_hashmap_remove_referenced", new ArrayList<>(List.of(m1, shared)));
    HashMap<String, Object> m1e = new HashMap<>();
    m1e.put("k2", "v2");
    REWRITE_EXPECTED.put("rw_hashmap_remove_referenced",
        new ArrayList<>(List.of(m1e, new Foo(1, "shared"))));

    single("rw_drop_first_shared_desc",
        new ArrayList<>(List.of(new Foo(1, "a"), new Foo(2, "b"), new Foo(3, "c"))));
    REWRITE_EXPECTED.put("rw_drop_first_shared_desc",
        new ArrayList<>(List.of(new Foo(2, "b"), new Foo(3, "c"))));

    String old = new String("old-value");
    single("rw_replace_string", new Holder(old, old));
    String nv = "new-" + repeat("\u00e9", 40000);
    REWRITE_EXPECTED.put("rw_replace_string", new Holder(nv, nv));

    HashMap<String, Object> em = new HashMap<>();
    em.put("a", Color.RED); em.put("b", Color.RED); em.put("c", Color.GREEN);
    single("rw_enum_map_remove", em);
    HashMap<String, Object> eme = new HashMap<>();
    eme.put("b", Color.RED); eme.put("c", Color.GREEN);
    REWRITE_EXPECTED.put("rw_enum_map_remove", eme);
  }

  static String describe(Object o) throws Exception {
    Canon c = new Canon();
    c.line(0, "stream");
    c.line(1, "top");
    c.value(o, 2);
    return c.sb.toString();
  }

  public static void main(String[] args) throws Exception {
    defineCases();
    Path dir = Paths.get(args[1]);
    Files.createDirectories(dir);
    if (args[0].equals("generate")) {
      for (Map.Entry<String, Writer> e : CASES.entrySet()) {
        Canon c = new Canon();
        c.line(0, "stream");
        ByteArrayOutputStream bo = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bo)) {
          e.getValue().write(out, c);
        }
        Files.write(dir.resolve(e.getKey() + ".bin"), bo.toByteArray());
        Files.write(dir.resolve(e.getKey() + ".expected.txt"),
            c.sb.toString().getBytes(StandardCharsets.UTF_8));
      }
      defineRawCases();
      for (Map.Entry<String, byte[]> e : RAW_CASES.entrySet()) {
        Files.write(dir.resolve(e.getKey() + ".bin"), e.getValue());
        int n = OBJECT_BYTES.getOrDefault(e.getKey(), e.getValue().length);
        if (n != e.getValue().length) {
          Files.write(dir.resolve(e.getKey() + ".trailing.txt"),
              ((e.getValue().length - n) + " " + n + "\n").getBytes(StandardCharsets.UTF_8));
        }
      }
      // What ObjectInputStream reads from every stream (the referee of
      // `dump --json`), and what it does with the damaged ones.
      for (String f : Files.list(dir).map(x -> x.getFileName().toString()).sorted()
               .collect(Collectors.toList())) {
        if (!f.endsWith(".bin") || f.endsWith(".rw.bin")) continue;
        String name = f.substring(0, f.length() - 4);
        byte[] b = Files.readAllBytes(dir.resolve(f));
        int n = OBJECT_BYTES.getOrDefault(name, b.length);
        StringBuilder jdk = new StringBuilder();
        String values;
        try {
          values = readBack(b, n, jdk);
        } catch (Exception ex) {
          values = null;
          jdk.append(ex.getClass().getName()).append('\n');
        }
        if (name.equals("arraylist_size_less")) {
          try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(b))) {
            jdk.append("java.util.ArrayList read with ").append(((List<?>) in.readObject()).size())
               .append(" of 3 elements written\n");
          }
        }
        if (values != null) {
          Files.write(dir.resolve(name + ".values.txt"), values.getBytes(StandardCharsets.UTF_8));
        }
        if (jdk.length() > 0) {
          Files.write(dir.resolve(name + ".jdk.txt"), jdk.toString().getBytes(StandardCharsets.UTF_8));
        }
      }
      for (Map.Entry<String, Object> e : REWRITE_EXPECTED.entrySet()) {
        Files.write(dir.resolve(e.getKey() + ".rw.expected.txt"),
            describe(e.getValue()).getBytes(StandardCharsets.UTF_8));
      }
      System.out.println("generated " + CASES.size() + " streams, "
          + REWRITE_EXPECTED.size() + " rewrite expectations in " + dir);
    } else if (args[0].equals("check-rewrites")) {
      int bad = 0, ok = 0;
      for (String name : REWRITE_EXPECTED.keySet()) {
        Path p = dir.resolve(name + ".rw.bin");
        String expected = Files.readString(dir.resolve(name + ".rw.expected.txt"));
        String actual;
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(Files.readAllBytes(p)))) {
          Object o = in.readObject();
          if (in.read() != -1) throw new IOException("trailing bytes");
          actual = describe(o);
        } catch (Exception ex) {
          actual = "exception " + ex;
        }
        if (actual.equals(expected)) {
          ok++;
          System.out.println("OK   " + name);
        } else {
          bad++;
          System.out.println("FAIL " + name + "\n--- expected\n" + expected + "--- actual\n" + actual);
        }
      }
      System.out.println(ok + " rewritten streams read back as expected, " + bad + " failed");
      System.exit(bad == 0 && ok == REWRITE_EXPECTED.size() ? 0 : 1);
    } else {
      throw new IllegalArgumentException(args[0]);
    }
  }
}
