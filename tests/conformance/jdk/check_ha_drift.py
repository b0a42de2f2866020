#!/usr/bin/env python3
# Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
"""JDK-written CompletedCheckpoint drift streams through `flinkstate inspect`.

  check_ha_drift.py JAVA CLASSES FLINKSTATE OUTDIR

For every variant HaDrift.java knows, the JDK writes the stream and states
what its ObjectInputStream reads back (VARIANT.expected.json); inspect --json
must report the same checkpoint id, job id, external pointer, checkpoint
properties, operators
(id, parallelism, max parallelism, subtask count) and keyed handles (class
recognised, file path), and the variant's warning (code, class, nearest
shape, byte offset) - and no drift warning for the undrifted stream.
`dump` must read every stream too (it never depends on Flink's shapes).
"""
import json
import subprocess
import sys

VARIANTS = ["none", "renamed-class", "extra-field", "missing-field", "changed-suid",
            "renamed-handle", "renamed-properties"]
DRIFT_CODES = {"CLASS_SHAPE_DRIFT", "CLASS_FIELDS_DRIFT", "SERIAL_VERSION_UID_CHANGED"}


def main():
    java, classes, exe, out = sys.argv[1:5]
    failures = []
    for v in VARIANTS:
        subprocess.run([java, "--add-opens", "java.base/java.io=ALL-UNNAMED", "-cp", classes,
                        "HaDrift", "write", out, v], check=True, stdout=subprocess.DEVNULL)
        want = json.load(open(f"{out}/{v}.expected.json"))
        r = subprocess.run([exe, "inspect", "--json", f"{out}/{v}.bin"], capture_output=True,
                           text=True)
        if r.returncode != 0:
            failures.append(f"{v}: inspect exit {r.returncode}: {r.stderr.strip()}")
            continue
        got = json.loads(r.stdout)

        def check(what, a, b):
            if a != b:
                failures.append(f"{v}: {what}: inspect {a!r}, JDK {b!r}")

        check("checkpoint id", int(got["checkpointId"]), want["checkpoint_id"])
        cc = got["completedCheckpoint"]
        check("job id", cc["jobId"], want["job_id"])
        check("external pointer", cc["externalPointer"], want["external_pointer"])
        p, wp = got.get("properties", {}), want["properties"]
        check("properties kind", p.get("kind"), "checkpoint")
        check("properties forced", p.get("forced", False), wp["forced"])
        check("properties discardSubsumed", p.get("discardSubsumed", False),
              wp["discard_subsumed"])
        check("properties type name", p.get("typeName"), wp["type_name"])
        check("properties sharing strategy", p.get("sharingFilesStrategy"),
              wp["sharing_files_strategy"])
        ops = {o["operatorId"]: o for o in got["operators"]}
        check("operator ids", sorted(ops), sorted(o["id"] for o in want["operators"]))
        for w in want["operators"]:
            o = ops.get(w["id"])
            if o is None:
                continue
            check(f"operator {w['id']} parallelism", o["parallelism"], w["parallelism"])
            check(f"operator {w['id']} max parallelism", o["maxParallelism"],
                  w["max_parallelism"])
            check(f"operator {w['id']} subtasks", o["subtaskCount"], w["subtasks"])
            paths = []
            for st in sorted(o["subtasks"], key=lambda s: s["index"]):
                for h in st["handles"]:
                    if h["slot"] == "managedKeyedState":
                        check(f"operator {w['id']} subtask {st['index']} handle kind", h["kind"],
                              "KeyGroupsStateHandle")
                        paths += h.get("paths", [])
            check(f"operator {w['id']} handle paths", paths, w["handle_paths"])
        drift = [x for x in got.get("warnings", []) if x["code"] in DRIFT_CODES]
        if not want["warning"]["code"]:
            check("drift warnings", drift, [])
        else:
            hits = [x for x in drift if x["code"] == want["warning"]["code"]
                    and x.get("className") == want["warning"]["class"]]
            if not hits:
                failures.append(f"{v}: no {want['warning']['code']} warning for "
                                f"{want['warning']['class']}: {drift}")
            for x in hits:
                if not x.get("nearestShape") or int(x.get("offset", 0)) <= 4:
                    failures.append(f"{v}: warning without nearest shape or offset: {x}")
        for mode in (["--summary"], ["--json"], []):
            d = subprocess.run([exe, "dump", *mode, f"{out}/{v}.bin"], capture_output=True,
                               text=True)
            if d.returncode != 0:
                failures.append(f"{v}: dump {mode} exit {d.returncode}: {d.stderr.strip()}")
        print(f"{v}: checked")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
