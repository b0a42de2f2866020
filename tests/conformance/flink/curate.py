#!/usr/bin/env python3
"""Copy a small selection of harness output into tests/testdata/flink-<release>/<case>/.

usage: curate.py OUTDIR [OUTDIR...] --dest tests/testdata [--budget-kb 450]

OUTDIR is a ci.sh output directory (flink-<release>/generate and flink-<release>/incident with
their MANIFEST.txt). Files are copied as Flink wrote them, never regenerated. For every kept
_metadata the directory's other small files (relative state files) come along; for every kept
completedCheckpoint file its zk-node.bin/zk-path.txt; facts.json (harness verify output at
generation time) sits beside each. Writes INDEX.tsv per release with where each file came from.
"""
import argparse
import os
import shutil
import sys

# (case in generate or incident manifest, kind, label); "first"/"last" picks the checkpoint id
PICKS = [  # in priority order: what does not fit the per-release budget is left out
    ("gen3-v2", "checkpoint", "last", "incident-gen3-checkpoint"),
    ("gen3-v2", "completedCheckpoint", "last", "incident-gen3-completedCheckpoint"),
    ("gen0-v1", "savepoint-canonical", "last", "incident-gen0-savepoint"),
    ("hashmap", "checkpoint", "last", "hashmap-checkpoint"),
    ("hashmap", "completedCheckpoint", "last", "hashmap-completedCheckpoint"),
    ("hashmap", "savepoint-canonical", "last", "hashmap-savepoint-canonical"),
    ("rocksdb-incremental", "checkpoint", "last", "rocksdb-incremental-checkpoint"),
    ("unaligned", "completedCheckpoint", "smallest", "unaligned-completedCheckpoint"),
    ("file-merging", "checkpoint", "last", "file-merging-checkpoint"),
    ("changelog", "checkpoint", "last", "changelog-checkpoint"),
    ("hashmap", "savepoint-native", "last", "hashmap-savepoint-native"),
    ("file-merging", "completedCheckpoint", "last", "file-merging-completedCheckpoint"),
    ("changelog", "completedCheckpoint", "last", "changelog-completedCheckpoint"),
    ("unaligned", "checkpoint", "smallest", "unaligned-checkpoint"),
    ("rocksdb-incremental", "completedCheckpoint", "last", "rocksdb-incremental-completedCheckpoint"),
    ("rocksdb-incremental", "savepoint-native", "last", "rocksdb-incremental-savepoint-native"),
    ("rocksdb-full", "checkpoint", "last", "rocksdb-full-checkpoint"),
    ("rocksdb-full", "savepoint-canonical", "last", "rocksdb-savepoint-canonical"),
]
SKIP_SUFFIX = (".reverify.json",)
MAX_FILE = 400 * 1024


def read_manifest(path):
    rows = []
    with open(path) as f:
        header = f.readline().rstrip("\n").split("\t")
        for line in f:
            rows.append(dict(zip(header, line.rstrip("\n").split("\t"))))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdirs", nargs="+")
    ap.add_argument("--dest", required=True)
    ap.add_argument("--budget-kb", type=int, default=450)
    a = ap.parse_args()
    total = 0
    done = set()  # a release found in several OUTDIRs is taken from the first one
    for out in a.outdirs:
        for rel in sorted(os.listdir(out)):
            if not rel.startswith("flink-") or rel in done:
                continue
            release = rel[len("flink-"):]
            rows = []
            for sub in ("generate", "incident"):
                m = os.path.join(out, rel, sub, "MANIFEST.txt")
                if os.path.isfile(m):
                    rows += [dict(r, _root=os.path.join(out, rel, sub), _sub=sub) for r in read_manifest(m)]
            if not rows:
                continue
            done.add(rel)
            dest_rel = os.path.join(a.dest, rel)
            used = 0
            index = ["case\tkind\trelease\tjob\tbackend\tcheckpointId\tsource\tharness"]
            for case, kind, which, label in PICKS:
                cand = [r for r in rows if r["case"] == case and r["kind"] == kind]
                if not cand:
                    continue
                cand.sort(key=lambda r: int(r["checkpointId"] or 0))
                if which == "smallest":
                    # the checkpoint whose directory is smallest; a completedCheckpoint follows its _metadata's id
                    def dsize(x):
                        dd = os.path.dirname(os.path.join(x["_root"], x["file"]))
                        return sum(os.path.getsize(os.path.join(dd, n)) for n in os.listdir(dd))
                    cps = [x for x in rows if x["case"] == case and x["kind"] == "checkpoint"]
                    best = min(cps, key=dsize)["checkpointId"] if cps else None
                    same = [x for x in cand if x["checkpointId"] == best]
                    r = same[0] if same else cand[0]
                else:
                    r = cand[-1] if which == "last" else cand[0]
                src_file = os.path.join(r["_root"], r["file"])
                src_dir = os.path.dirname(src_file)
                files = []
                for n in sorted(os.listdir(src_dir)):
                    p = os.path.join(src_dir, n)
                    if not os.path.isfile(p) or n.endswith(SKIP_SUFFIX):
                        continue
                    if kind == "completedCheckpoint" and not (n == os.path.basename(src_file) or n in ("zk-node.bin", "zk-path.txt", "facts.json")):
                        continue
                    files.append(p)
                size = sum(os.path.getsize(p) for p in files)
                if any(os.path.getsize(p) > MAX_FILE for p in files) or used + size > a.budget_kb * 1024:
                    print(f"skip {rel}/{label}: {size} bytes (budget used {used})", file=sys.stderr)
                    continue
                d = os.path.join(dest_rel, label)
                os.makedirs(d, exist_ok=True)
                for p in files:
                    shutil.copy2(p, os.path.join(d, os.path.basename(p)))
                used += size
                cmd = (f"harness.sh generate --release {release} --out OUT" if r["_sub"] == "generate"
                       else f"harness.sh incident --release {release} --out OUT")
                index.append("\t".join([label, kind, release, r["job"], r["backend"], r["checkpointId"],
                                        os.path.join(r["_sub"], r["file"]), cmd]))
            # ConfigMap value written by Flink's KubernetesStateHandleStore (ci.sh k8s step)
            k8s = os.path.join(out, rel, "k8s")
            if os.path.isfile(os.path.join(k8s, "k8s-value.b64")):
                files = [os.path.join(k8s, n) for n in sorted(os.listdir(k8s)) if os.path.isfile(os.path.join(k8s, n))]
                size = sum(os.path.getsize(p) for p in files)
                if used + size <= (a.budget_kb + 60) * 1024:
                    d = os.path.join(dest_rel, "incident-gen3-k8s")
                    os.makedirs(d, exist_ok=True)
                    for p in files:
                        shutil.copy2(p, os.path.join(d, os.path.basename(p)))
                    used += size
                    index.append("\t".join(["incident-gen3-k8s", "k8s-value+completedCheckpoint", release, "incident-v2", "hashmap", "",
                                            "k8s/", f"harness.sh k8s-ha --release {release} --in <incident gen3 completedCheckpoint> --out OUT"]))
                else:
                    print(f"skip {rel}/incident-gen3-k8s: {size} bytes (budget used {used})", file=sys.stderr)
            with open(os.path.join(dest_rel, "INDEX.tsv"), "w") as f:
                f.write("\n".join(index) + "\n")
            print(f"{rel}: {used} bytes in {len(index) - 1} cases")
            total += used
    print(f"total {total} bytes")
    write_readme(a.dest)


README_HEAD = """# Flink test data (real files written by real Flink releases)

Every file below `flink-<release>/` was written by the Apache Flink release named in the folder,
running in a local MiniCluster under `tests/conformance/flink/harness.sh`, and copied here by
`tests/conformance/flink/curate.py` (never regenerated or edited). Regenerate with
`tests/conformance/flink/ci.sh OUT` (or `FLINKSTATE_CI_RELEASES="..." ci.sh OUT`) and
`curate.py OUT... --dest tests/testdata`.

Each case folder holds:

* `_metadata` (+ the relative state files of that checkpoint/savepoint directory, e.g. channel
  state or savepoint state files), or
* `completedCheckpoint<12 hex>` from the HA storage directory + `zk-node.bin` (raw data of the
  ZooKeeper node that pointed to it: Java-serialized `RetrievableStreamStateHandle`) +
  `zk-path.txt` (the znode path), or
* for `incident-gen3-k8s`: `k8s-value.b64` (ConfigMap value, Base64 as Flink stores it) and
  `k8s-key.txt` (ConfigMap name, key) written by Flink's `KubernetesStateHandleStore#addAndLock`
  through an in-memory kube client, with the `completedCheckpoint<hex>` file Flink's
  `FileSystemStateStorageHelper` wrote for it (same CompletedCheckpoint object as the incident's
  ZooKeeper-HA file);
* `facts.json`: what `harness.sh verify` (that release's own `Checkpoints.loadCheckpointMetadata`
  or Java deserialization) prints for the file. Compare with
  `tests/conformance/flink/compare_facts.py facts.json ACTUAL.json`.

Absolute paths inside checkpoints (`file:/tmp/fsc...`) point to the machine that generated them;
those referenced files (RocksDB shared files, changelog files, file-merging segments) are not
here. Only files inside the checkpoint/savepoint directory (relative handles) are.

Jobs (see tests/conformance/flink/README.md for the full description):

* `all-kinds` (parallelism 2, 1.14+ with finished subtasks and a fully finished branch):
  FLIP-27 sequence source with coordinator state, operator list state `records-seen`
  (SPLIT_DISTRIBUTE), union state `union-counts`, broadcast state `rules`, keyed states
  `seen-per-key` and `count`. Cases: `hashmap` (checkpoint, canonical + native savepoint),
  `rocksdb-full` / `rocksdb-incremental` (RocksDB, incremental off/on), `unaligned` (unaligned
  checkpoint with channel state), `changelog` (1.15+ where the modules resolve), `file-merging` (1.20+).
* `incident` (parallelism 4): `incident-gen0-savepoint` is job v1's canonical savepoint with 8
  entries of the union state `topic-partition-offset-states` (legacy Kafka serializer);
  `incident-gen3-*` is job v2's checkpoint after three restores: 512 entries (8·4^3), in
  `_metadata`, in the HA `completedCheckpoint` and (where kept) in the Kubernetes value.

Settings common to all: checkpoint interval 1 s, retained 2, RETAIN_ON_CANCELLATION, ZooKeeper
HA (in-process ZooKeeper), Java 17, max parallelism 128.

## Index (generated from each folder's INDEX.tsv)
"""


def write_readme(dest):
    lines = [README_HEAD]
    for rel in sorted(os.listdir(dest), key=lambda n: [int(x) if x.isdigit() else x for x in n.replace("flink-", "").split(".")] if n.startswith("flink-") else [n]):
        idx = os.path.join(dest, rel, "INDEX.tsv")
        if not os.path.isfile(idx):
            continue
        rows = read_manifest(idx)
        lines.append(f"\n### {rel}\n")
        lines.append("| case | kind | job | backend | checkpoint id | written by |")
        lines.append("| --- | --- | --- | --- | --- | --- |")
        for r in rows:
            lines.append(f"| `{r['case']}` | {r['kind']} | {r['job']} | {r['backend']} | {r['checkpointId']} | `{r['harness']}` |")
    with open(os.path.join(dest, "README.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
