// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
//
// Inputs and the JDK baseline for bench/javaobj_benchmark.cc (plain JDK 17).
//
//   java -Xmx3g BenchStreams large FILE   ~512 MiB stream shaped like a bloated
//       CompletedCheckpoint: a HashMap of state names to holders of a long[]
//       (4 x 16M entries) plus 5000 small metadata objects
//   java BenchStreams small FILE          one million small objects in a HashMap
//   java BenchStreams longs FILE          2 M distinct java.lang.Long objects in a
//       Long[] (~28 MB; the input of `dump --summary` in BENCHMARKS.md)
//   java -Xmx3g BenchStreams read FILE [N] reads FILE N times with
//       ObjectInputStream and prints the best wall time and throughput

import java.io.*;
import java.nio.file.*;
import java.util.*;

public class BenchStreams {
  static class Meta implements Serializable {
    private static final long serialVersionUID = 21L;
    int id; String name; long offset;
    Meta(int id, String name, long offset) { this.id = id; this.name = name; this.offset = offset; }
  }
  static class StateHolder implements Serializable {
    private static final long serialVersionUID = 22L;
    String stateName; long[] offsets; ArrayList<Meta> meta = new ArrayList<>();
  }
  static class Small implements Serializable {
    private static final long serialVersionUID = 23L;
    int a; long b; String c;
    Small(int a, long b, String c) { this.a = a; this.b = b; this.c = c; }
  }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    Path file = Paths.get(args[1]);
    if (mode.equals("large")) {
      HashMap<String, StateHolder> m = new HashMap<>();
      for (int s = 0; s < 4; s++) {
        StateHolder h = new StateHolder();
        h.stateName = "state-" + s;
        h.offsets = new long[16 << 20];
        for (int i = 0; i < h.offsets.length; i++) h.offsets[i] = (long) i * 7 + s;
        for (int i = 0; i < 1250; i++) h.meta.add(new Meta(i, "meta-" + s + "-" + i, i * 11L));
        m.put(h.stateName, h);
      }
      write(file, m);
    } else if (mode.equals("small")) {
      HashMap<Integer, Small> m = new HashMap<>();
      for (int i = 0; i < 1_000_000; i++) m.put(i, new Small(i, i * 3L, "s" + i));
      write(file, m);
    } else if (mode.equals("longs")) {
      Long[] a = new Long[2_000_000];
      for (int i = 0; i < a.length; i++) a[i] = Long.valueOf(1_000_003L * i + 1000);
      write(file, a);
    } else if (mode.equals("read")) {
      int n = args.length > 2 ? Integer.parseInt(args[2]) : 3;
      long size = Files.size(file);
      double best = Double.MAX_VALUE;
      for (int r = 0; r < n; r++) {
        long t0 = System.nanoTime();
        try (ObjectInputStream in = new ObjectInputStream(
                 new BufferedInputStream(new FileInputStream(file.toFile()), 1 << 16))) {
          Object o = in.readObject();
          if (o == null) throw new IllegalStateException();
        }
        double s = (System.nanoTime() - t0) / 1e9;
        best = Math.min(best, s);
        System.out.printf("run %d: %.3f s%n", r, s);
      }
      System.out.printf("JDK ObjectInputStream: best %.3f s, %.1f MiB/s over %d bytes%n",
          best, size / best / (1 << 20), size);
    } else {
      throw new IllegalArgumentException(mode);
    }
  }

  static void write(Path file, Object o) throws IOException {
    try (ObjectOutputStream out = new ObjectOutputStream(
             new BufferedOutputStream(Files.newOutputStream(file), 1 << 16))) {
      out.writeObject(o);
    }
    System.out.println("wrote " + Files.size(file) + " bytes to " + file);
  }
}
