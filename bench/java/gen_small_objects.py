#!/usr/bin/env python3
"""Writes the "1 M small Java objects" stream with the JDK's own ObjectOutputStream.

    gen_small_objects.py --out FILE [--entries 1000000] [--classes 1200] [--work DIR]

Emits Java sources for a base class SmallPojo and CLASSES-1 subclasses (so the stream holds
CLASSES class descriptors), compiles them with javac into WORK/classes, and runs the writer: a
HashMap<String, SmallPojo> of ENTRIES entries, each value an instance of one of the classes,
written by ObjectOutputStream.writeObject. WORK/classes is what a JVM reading the stream back
needs on its class path (bench/run_all.sh passes it to JavaPath read).
"""
import argparse
import os
import subprocess
import sys

BASE = """package smallobj;
public class SmallPojo implements java.io.Serializable {
    private static final long serialVersionUID = 1L;
    public int id;
    public long ts;
    public String name;
}
"""

SUB = """package smallobj;
public class P%(n)04d extends SmallPojo {
    private static final long serialVersionUID = %(n)dL;
    public int v%(n)d;
}
"""

MAIN = """package smallobj;
import java.io.*;
import java.util.HashMap;
public class Write {
    public static void main(String[] a) throws Exception {
        int entries = Integer.parseInt(a[1]);
        int classes = Integer.parseInt(a[2]);
        Class<?>[] cs = new Class<?>[classes];
        cs[0] = SmallPojo.class;
        for (int i = 1; i < classes; i++) cs[i] = Class.forName(String.format("smallobj.P%04d", i));
        HashMap<String, SmallPojo> m = new HashMap<>();
        java.util.Random r = new java.util.Random(7);
        for (int i = 0; i < entries; i++) {
            SmallPojo p = (SmallPojo) cs[i % classes].getDeclaredConstructor().newInstance();
            p.id = i;
            p.ts = 1_700_000_000_000L + r.nextInt(1_000_000);
            p.name = (i % 4 == 0) ? ("n" + (i % 5000)) : null;
            m.put("k" + i, p);
        }
        try (ObjectOutputStream os = new ObjectOutputStream(
                new BufferedOutputStream(new FileOutputStream(a[0]), 1 << 20))) {
            os.writeObject(m);
        }
    }
}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--entries", type=int, default=1_000_000)
    ap.add_argument("--classes", type=int, default=1200)
    ap.add_argument("--work", default=None)
    o = ap.parse_args()
    work = o.work or os.path.dirname(os.path.abspath(o.out))
    src = os.path.join(work, "smallobj-src", "smallobj")
    classes = os.path.join(work, "classes")
    os.makedirs(src, exist_ok=True)
    os.makedirs(classes, exist_ok=True)
    files = []
    def emit(name, text):
        p = os.path.join(src, name)
        with open(p, "w") as f:
            f.write(text)
        files.append(p)
    emit("SmallPojo.java", BASE)
    for n in range(1, o.classes):
        emit("P%04d.java" % n, SUB % {"n": n})
    emit("Write.java", MAIN)
    if not os.path.exists(os.path.join(classes, "smallobj", "Write.class")):
        argfile = os.path.join(work, "smallobj-src", "sources.txt")
        with open(argfile, "w") as f:
            f.write("\n".join(files) + "\n")
        subprocess.check_call(["javac", "-nowarn", "-d", classes, "@" + argfile])
    subprocess.check_call(["java", "-Xmx4g", "-cp", classes, "smallobj.Write", o.out,
                           str(o.entries), str(o.classes)])
    return 0


if __name__ == "__main__":
    sys.exit(main())
