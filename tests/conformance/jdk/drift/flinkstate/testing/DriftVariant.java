// Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
package flinkstate.testing;

/** The drift HaDrift writes; set by its main before any look-alike class loads. */
public final class DriftVariant {
  public static String name = "none";

  public static boolean is(String n) {
    return name.equals(n);
  }

  /** The serialVersionUID a look-alike declares: Flink's, or another in "changed-suid". */
  public static long suid(long flink) {
    return is("changed-suid") ? flink ^ 0x5AL : flink;
  }

  private DriftVariant() {}
}
