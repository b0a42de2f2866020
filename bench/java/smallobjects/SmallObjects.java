// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// The "1 M small objects" shape of issue 10: a HashMap<String, SmallPojo> of
// N entries written by the JDK's own ObjectOutputStream, whose values are
// instances of C generated subclasses of SmallPojo (so the stream defines C+1
// class descriptors and references them ~N times), plus `read` mode, the JDK
// baseline for `flinkstate verify` on the same file.
//
//   ./build.sh /work/bench-data/smallobjects-classes     # javac, no Maven
//   java -cp /work/bench-data/smallobjects-classes SmallObjects write OUT [N] [C]
//   /usr/bin/time -v java -Xmx256m -cp ... SmallObjects read OUT
//
// Each entry is five stream items: the key (TC_STRING), the value
// (TC_OBJECT), its class descriptor (TC_REFERENCE after the first use), the
// `name` field (TC_STRING) and the `tag` field (TC_REFERENCE to one of 16
// shared strings). Defaults: N = 1,000,000, C = 1200 (~45 MB).

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.HashMap;
import java.util.Map;

public final class SmallObjects {
  /** The base class; the generated subclasses P0..P(C-1) add no fields. */
  public static class SmallPojo implements Serializable {
    private static final long serialVersionUID = 1L;
    int id;
    long timestamp;
    String name;
    String tag;
  }

  public static void main(String[] args) throws Exception {
    if (args.length < 2) {
      System.err.println("usage: SmallObjects write OUT [N] [C] | read IN");
      System.exit(2);
    }
    if (args[0].equals("write")) {
      int n = args.length > 2 ? Integer.parseInt(args[2]) : 1_000_000;
      int c = args.length > 3 ? Integer.parseInt(args[3]) : 1200;
      Class<?>[] classes = new Class<?>[c];
      for (int i = 0; i < c; ++i) classes[i] = Class.forName("P" + i);
      String[] tags = new String[16];
      for (int i = 0; i < tags.length; ++i) tags[i] = "tag-" + i;
      Map<String, SmallPojo> map = new HashMap<>();
      for (int i = 0; i < n; ++i) {
        SmallPojo p = (SmallPojo) classes[i % c].getDeclaredConstructor().newInstance();
        p.id = i;
        p.timestamp = 1_700_000_000_000L + i;
        p.name = "n" + i;
        p.tag = tags[i % tags.length];
        map.put("k" + i, p);
      }
      try (ObjectOutputStream out = new ObjectOutputStream(
          new BufferedOutputStream(new FileOutputStream(args[1]), 1 << 16))) {
        out.writeObject(map);
      }
    } else if (args[0].equals("read")) {
      long t0 = System.nanoTime();
      Object o;
      try (ObjectInputStream in = new ObjectInputStream(
          new BufferedInputStream(new FileInputStream(args[1]), 1 << 16))) {
        o = in.readObject();
      }
      long t1 = System.nanoTime();
      System.out.printf("read %d entries in %.3f s%n", ((Map<?, ?>) o).size(), (t1 - t0) / 1e9);
    } else {
      System.err.println("unknown mode " + args[0]);
      System.exit(2);
    }
  }
}
