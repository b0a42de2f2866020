#!/usr/bin/env python3
"""Turns bench/run_all.sh's CSV into BENCHMARKS.md and SVG charts (matplotlib).

    report.py --csv bench/results/bench.csv [--gbench gbench.csv] [--machine machine.txt]
              [--copy-pairs copy_pairs.csv] --charts DIR --out BENCHMARKS.md
    report.py --copy-pairs copy_pairs.csv      (only the paired copy table, on stdout)
"""
import argparse
import collections
import csv
import os

COUNTERPART = {  # flinkstate command -> (Java command it replaces, for the ratio)
    "_metadata": {"inspect --json": "load", "verify --nocheck-files": "load+store",
                  "strip-state": "load+strip+store", "strip-state --nofsync": "load+strip+store",
                  "relocate": "load+relocate+store"},
    "completedCheckpoint": {"inspect --json": "read", "verify --nocheck-files": "read+write",
                            "strip-state": "read+strip+write", "strip-state --nofsync": "read+strip+write",
                            "relocate": "read+relocate+write"},
    "java-stream": {"verify": "readObject", "inspect --json": "readObject"},
}
CP_PAIR = {"strip-state": "cp+fsync", "strip-state --nofsync": "cp"}


def f(x):
    try:
        return float(x)
    except (TypeError, ValueError):
        return None


def who(r):
    return r["tool"] if r["release"] in ("-", "") else "%s %s" % (r["tool"], r["release"])


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return (xs[n // 2] + xs[(n - 1) // 2]) / 2 if n else None


def copy_pairs_table(rows):
    """Markdown lines summing up bench/copy_pairs.sh's runs: per file system, size and pair A:B,
    the median (min-max) of the per-round ratios A/B of wall time and of user+system time, the
    ratio of the fastest A to the fastest B (what a quiet machine approaches), the medians of A
    and B, and the range of the 1-minute load (and of the busy share of the CPUs before each
    run, when recorded) during the pair's runs."""
    runs = collections.OrderedDict()  # (fs, mib, pair) -> {round: {label: row}}
    for r in rows:
        runs.setdefault((r["fs"], r["mib"], r["pair"]), {}).setdefault(r["round"], {})[r["label"]] = r
    out = ["| file system | MiB | A vs B | rounds | A wall s: median (min) | B wall s: median (min) | "
           "A/B wall: median (min-max) | min A / min B | A/B user+sys: median (min-max) | "
           "load | CPUs busy % |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for (fs, mib, pair), by_round in runs.items():
        a, b = pair.split(":", 1)
        wall, cpu, wa, wb, loads, busy = [], [], [], [], [], []
        for rr in by_round.values():
            if a not in rr or b not in rr:
                continue
            ra, rb = rr[a], rr[b]
            wa.append(float(ra["wall_s"]))
            wb.append(float(rb["wall_s"]))
            wall.append(wa[-1] / wb[-1])
            ca = float(ra["user_s"]) + float(ra["sys_s"])
            cb = float(rb["user_s"]) + float(rb["sys_s"])
            if cb > 0:
                cpu.append(ca / cb)
            loads += [float(ra["load1"]), float(rb["load1"])]
            busy += [float(x["busy_pct"]) for x in (ra, rb) if x.get("busy_pct")]
        if not wall:
            continue
        rng = lambda xs: "%.2f (%.2f-%.2f)" % (median(xs), min(xs), max(xs)) if xs else ""
        out.append("| %s | %s | `%s` vs `%s` | %d | %.3f (%.3f) | %.3f (%.3f) | %s | %.2f | %s | "
                   "%.1f-%.1f | %s |" % (
                       fs, mib, a, b, len(wall), median(wa), min(wa), median(wb), min(wb),
                       rng(wall), min(wa) / min(wb), rng(cpu), min(loads), max(loads),
                       "%.0f-%.0f" % (min(busy), max(busy)) if busy else ""))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv")
    ap.add_argument("--gbench")
    ap.add_argument("--machine")
    ap.add_argument("--copy-pairs", help="bench/copy_pairs.sh's CSV")
    ap.add_argument("--charts")
    ap.add_argument("--out")
    o = ap.parse_args()
    if not o.csv:
        if not o.copy_pairs:
            ap.error("--csv (with --charts and --out) or --copy-pairs is required")
        print("\n".join(copy_pairs_table(list(csv.DictReader(open(o.copy_pairs))))))
        return
    if not o.charts or not o.out:
        ap.error("--csv needs --charts and --out")
    rows = list(csv.DictReader(open(o.csv)))
    out = []
    w = out.append
    w("# Benchmarks\n")
    w("Produced by `bench/run_all.sh BUILD_DIR` (see README.md, \"Benchmarks\") from its own CSV "
      "(`bench/results/bench.csv`); charts drawn from the same CSV by `bench/report.py`. "
      "Every figure is a whole process: wall time median of the runs (min-max in the CSV), peak RSS "
      "the largest of the runs (GNU time), MB/s = input bytes / median wall time. Ratios are taken "
      "within this one run. `origin` says who wrote the input: `generated` (flinkstate's generators) "
      "or `flink-1.20.5` (Flink's own serializers, bench/java WideJob). The 1-minute load average "
      "of each row is in the CSV: on a shared machine, read ratios rather than absolute times.\n")
    if o.machine and os.path.exists(o.machine):
        w("## Machine and command\n\n```\n" + open(o.machine).read().strip() + "\n```\n")

    groups = collections.OrderedDict()
    for r in rows:
        if r["section"] in ("edit", "javaobj"):
            groups.setdefault((r["shape"], r["format"], r["origin"]), []).append(r)
    minx = [r for r in rows if r["section"] == "minxmx"]
    w("## Shapes\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        plt = None
        w("(matplotlib is missing: no charts; `scripts/install-deps.sh --bench`)\n")
    os.makedirs(o.charts, exist_ok=True)
    for (shape, fmt, origin), rs in groups.items():
        w("### %s, %s (%s)\n" % (shape, fmt, origin))
        sizes = sorted({int(r["size_mib"]) for r in rs})
        byte_of = {}
        for r in rs:
            byte_of[int(r["size_mib"])] = int(r["bytes"])
        w("| command | " + " | ".join("%d MiB (%.0f MB)" % (s, byte_of[s] / 1e6) for s in sizes) + " |")
        w("|---|" + "---|" * len(sizes))
        cmds = collections.OrderedDict()
        for r in rs:
            cmds.setdefault((who(r), r["command"]), {})[int(r["size_mib"])] = r
        for (t, c), by in cmds.items():
            cells = []
            for s in sizes:
                r = by.get(s)
                if r is None:
                    cells.append("")
                elif r["note"].startswith("failed"):
                    cells.append(r["note"])
                else:
                    wall = f(r["wall_median_s"])
                    mbs = int(r["bytes"]) / 1e6 / wall if wall else float("inf")
                    cells.append("%.3f s, %.0f MiB, %.0f MB/s" % (wall, f(r["rss_max_mib"]), mbs))
            w("| %s `%s` | %s |" % (t, c, " | ".join(cells)))
        w("")
        # ratios
        lines = []
        idx = {(who(r), r["command"], int(r["size_mib"])): r for r in rs}
        for (t, c), by in cmds.items():
            if t != "flinkstate":
                continue
            for s in sizes:
                a = by.get(s)
                if a is None or not f(a["wall_median_s"]):
                    continue
                parts = []
                jc = COUNTERPART.get(fmt, {}).get(c)
                for (t2, c2, s2), b in idx.items():
                    if s2 == s and c2 == jc and t2.startswith("java") and f(b["wall_median_s"]):
                        parts.append("%.2fx the time, %.2fx the memory of %s `%s`" % (
                            f(a["wall_median_s"]) / f(b["wall_median_s"]),
                            f(a["rss_max_mib"]) / f(b["rss_max_mib"]), t2, c2))
                cpc = CP_PAIR.get(c)
                b = idx.get(("cp", cpc, s)) if cpc else None
                if b and f(b["wall_median_s"]):
                    parts.append("%.2fx `%s`" % (f(a["wall_median_s"]) / f(b["wall_median_s"]), cpc))
                if parts:
                    lines.append("| `%s` | %d | %s |" % (c, s, "; ".join(parts)))
        if lines:
            w("| flinkstate | MiB | ratio (flinkstate / other; < 1 is faster or smaller) |")
            w("|---|---|---|")
            out.extend(lines)
            w("")
        mx = [r for r in minx if r["shape"] == shape and r["format"] == fmt]
        for r in mx:
            w("* minimum `-Xmx` of %s `%s` at %s MiB: %s" % (who(r), r["command"], r["size_mib"],
                                                           r["note"].replace("min_xmx_mib=", "") + (" MiB" if "min_xmx" in r["note"] else "")))
        if mx:
            w("")
        if plt is not None and len(sizes) > 1:
            name = "%s-%s" % (shape, fmt.replace("_", ""))
            for metric, col, unit in (("time", "wall_median_s", "wall time, s"),
                                      ("memory", "rss_max_mib", "peak RSS, MiB")):
                fig, ax = plt.subplots(figsize=(7, 4.2))
                # More lines than the default colour cycle has colours: tab20, and the tool
                # in the line style (flinkstate solid, the JVM dashed, cp dotted).
                colours = plt.get_cmap("tab20").colors
                styles = {"flinkstate": "-", "cp": ":"}
                for i, ((t, c), by) in enumerate(cmds.items()):
                    pts = [(byte_of[s] / 1048576, f(by[s][col])) for s in sizes
                           if s in by and f(by[s][col])]
                    if pts:
                        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o",
                                color=colours[i % len(colours)],
                                linestyle=styles.get(t.split()[0], "--"),
                                label="%s %s" % (t, c))
                ax.set_xscale("log")
                ax.set_yscale("log")
                ax.set_xlabel("file size, MiB")
                ax.set_ylabel(unit)
                ax.set_title("%s %s (%s): %s" % (shape, fmt, origin, metric))
                ax.grid(True, which="both", alpha=0.3)
                ax.legend(fontsize=6, loc="upper left")
                fig.tight_layout()
                p = os.path.join(o.charts, "%s-%s.svg" % (name, metric))
                fig.savefig(p)
                plt.close(fig)
                w("![%s %s](%s)" % (name, metric, os.path.relpath(p, os.path.dirname(os.path.abspath(o.out)))))
            w("")
    copies = [r for r in rows if r["section"].startswith("copy-")]
    if copies:
        w("## Copy path (copy-dominated strip-state; bench/copy_path.cc methods)\n")
        w("Each method writes 3 inserted bytes and then copies the rest of the file (the pieces are "
          "not page-congruent, as after an edit that shifts them), except `cfr (congruent)`. "
          "Two interleaved rounds; the ratio is against `cp` of the same round (`cp+fsync` for fsynced rows).\n")
        w("| file system | round | command | wall s | sys s | RSS MiB | ratio | load |")
        w("|---|---|---|---|---|---|---|---|")
        rnd = collections.Counter()
        base = {}
        for r in copies:
            key = (r["section"], who(r), r["command"])
            rnd[key] += 1
            n = rnd[key]
            if r["command"] in ("cp", "cp+fsync"):
                base[(r["section"], n, r["command"])] = f(r["wall_median_s"])
            ref = base.get((r["section"], n, "cp+fsync" if "fsync" in r["command"] and "nofsync" not in r["command"] or r["command"] == "strip-state" else "cp"))
            wall = f(r["wall_median_s"])
            ratio = "%.2f" % (wall / ref) if wall and ref else ""
            w("| %s | %d | %s `%s` | %s | %s | %s | %s | %s |" % (
                r["section"][5:], n, who(r), r["command"], r["wall_median_s"], r["sys_median_s"],
                r["rss_max_mib"], ratio, r["load1"]))
        w("")
    if o.copy_pairs and os.path.exists(o.copy_pairs):
        pairs = list(csv.DictReader(open(o.copy_pairs)))
        if pairs:
            w("## Copy path, paired (bench/copy_pairs.sh)\n")
            w("A copy-dominated `strip-state` (a small-union `_metadata`: every byte but a few hundred "
              "copied, shifted by the edit) against `cp` like with like: `strip-nofsync` = "
              "`strip-state --nofsync` vs plain `cp`; `strip` = `strip-state` (fsyncs its output) vs "
              "`cp+fsync` = `cp` then `sync FILE` (an fsync of the copy). `METHOD/sN` rows: "
              "`bench/copy_path METHOD` after N inserted bytes (3 when not given: the output 3 bytes "
              "past the input, 4093: 3 bytes behind, 0: congruent). Per round A and B run back to "
              "back, B first in even rounds, each after `sync`; ratios are per round, then the "
              "median (min-max) of the rounds. Per-run figures: `bench/results/copy_pairs.csv`.\n")
            out.extend(copy_pairs_table(pairs))
            w("")
    if o.gbench and os.path.exists(o.gbench):
        g = list(csv.reader(open(o.gbench)))
        if len(g) > 1:
            w("## In-process (Google Benchmark)\n")
            w("| binary | benchmark | time | unit | bytes/s | items/s |")
            w("|---|---|---|---|---|---|")
            for r in g[1:]:
                if len(r) < 8:
                    continue
                bps = "%.0f MB/s" % (float(r[6]) / 1e6) if r[6] else ""
                ips = "%.3g" % float(r[7]) if r[7] else ""
                w("| %s | %s | %.4g | %s | %s | %s |" % (r[0], r[1].strip('"'), float(r[3]), r[5], bps, ips))
            w("")
    notes = os.path.join(os.path.dirname(os.path.abspath(o.csv)), "notes.md")
    if os.path.exists(notes):  # hand-written notes kept beside the CSV (e.g. earlier paired runs)
        w(open(notes).read().strip() + "\n")
    open(o.out, "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
