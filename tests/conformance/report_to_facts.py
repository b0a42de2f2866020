#!/usr/bin/env python3
"""Turn a `flinkstate inspect --json` report into the conformance harness's
canonical facts (the shape `harness.sh verify` prints from real Flink), so that
the two can be compared with compare_facts.py.

usage: report_to_facts.py REPORT.json > FACTS.json
"""
import json
import sys


def properties(report):
    p = report.get("properties")
    if not p or p.get("kind") in ("", "null"):
        return None
    if report.get("kind") == "metadata" and report.get("formatVersion", 0) < 4:
        return None  # the properties follow the body only from version 4
    return {
        "type": p["kind"],
        "name": p.get("typeName", ""),
        "formatType": p.get("formatType") or None,
        "discardSubsumed": p.get("discardSubsumed", False),
        "forced": p.get("forced", False),
        "discardFinished": p.get("discardFinished", False),
        "discardCancelled": p.get("discardCancelled", False),
        "discardFailed": p.get("discardFailed", False),
        "discardSuspended": p.get("discardSuspended", False),
        "unclaimed": p.get("unclaimed"),  # absent before Flink 1.15
    }


def main():
    report = json.load(open(sys.argv[1]))
    operators = []
    for op in report.get("operators", []):
        operators.append({
            "operatorId": op["operatorId"],
            "parallelism": op["parallelism"],
            "maxParallelism": op["maxParallelism"],
            "fullyFinished": op.get("fullyFinished", False),
            "hasCoordinatorState": op.get("hasCoordinatorState", False),
            "subtasks": sorted(
                ({"index": st.get("index", 0), "finished": st.get("finished", False),
                  "handles": [{"slot": h["slot"], "kind": h["kind"], "paths": h.get("paths", [])}
                              for h in st.get("handles", [])]}
                 for st in op.get("subtasks", [])),
                key=lambda s: s["index"]),
            "operatorStates": sorted(
                ({"name": s["name"], "distributionMode": s["distributionMode"],
                  "entryCount": int(s["entryCount"])} for s in op.get("operatorStates", [])),
                key=lambda s: s["name"]),
        })
    operators.sort(key=lambda o: o["operatorId"])
    facts = {
        "kind": report.get("kind"),
        "checkpointId": int(report.get("checkpointId", 0)),
        "properties": properties(report),
        "masterStates": [{"name": m["name"], "version": m.get("version", 0)}
                         for m in report.get("masterStates", [])],
        "operators": operators,
    }
    json.dump(facts, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
