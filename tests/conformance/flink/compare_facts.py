#!/usr/bin/env python3
"""Compare two canonical facts JSON files (harness.sh verify output vs. flinkstate inspect --json).

usage: compare_facts.py EXPECTED.json ACTUAL.json [--ignore-missing]

Compares field by field and prints one line per disagreement (a JSON-pointer-like path, the
expected and the actual value). Exit 0 only when they agree, 1 on disagreement, 2 on bad input.

Rules:
* Operators are matched by operatorId, subtasks by index, handles by position within a subtask,
  operator states by name, master states by name (both files are sorted that way by contract).
* "paths" are compared as sets (order does not matter).
* With --ignore-missing, a key that ACTUAL does not have at all is reported as a note, not as a
  disagreement (for a reader that does not produce that fact yet, e.g. "properties" fields the
  C++ side cannot know). Keys that ACTUAL has with a different value always disagree. Keys that
  ACTUAL has and EXPECTED lacks are reported as notes.
"""
import json
import sys

KEYED_LISTS = {
    "operators": "operatorId",
    "subtasks": "index",
    "operatorStates": "name",
    "masterStates": "name",
}


def compare(exp, act, path, out, notes, ignore_missing):
    if isinstance(exp, dict) and isinstance(act, dict):
        for k, v in exp.items():
            if k not in act:
                (notes if ignore_missing else out).append(f"{path}/{k}: missing in ACTUAL (expected {json.dumps(v)[:200]})")
                continue
            compare(v, act[k], f"{path}/{k}", out, notes, ignore_missing)
        for k in act:
            if k not in exp:
                notes.append(f"{path}/{k}: only in ACTUAL")
        return
    if isinstance(exp, list) and isinstance(act, list):
        field = path.rsplit("/", 1)[-1]
        if field == "paths":
            if sorted(exp) != sorted(act):
                out.append(f"{path}: expected {sorted(exp)} actual {sorted(act)}")
            return
        key = KEYED_LISTS.get(field)
        if key and all(isinstance(x, dict) and key in x for x in exp + act):
            em = {x[key]: x for x in exp}
            am = {x[key]: x for x in act}
            for k in em:
                if k not in am:
                    out.append(f"{path}[{key}={k}]: missing in ACTUAL")
                else:
                    compare(em[k], am[k], f"{path}[{key}={k}]", out, notes, ignore_missing)
            for k in am:
                if k not in em:
                    out.append(f"{path}[{key}={k}]: not expected (only in ACTUAL)")
            if [x[key] for x in act] != sorted(am, key=lambda v: (isinstance(v, str), v)) and field != "masterStates":
                notes.append(f"{path}: ACTUAL is not sorted by {key}")
            return
        if len(exp) != len(act):
            out.append(f"{path}: expected {len(exp)} items, actual {len(act)}")
        for i, (e, a) in enumerate(zip(exp, act)):
            compare(e, a, f"{path}[{i}]", out, notes, ignore_missing)
        return
    if exp != act or type(exp) != type(act):
        out.append(f"{path}: expected {json.dumps(exp)} actual {json.dumps(act)}")


def main(argv):
    args = [a for a in argv[1:] if not a.startswith("--")]
    ignore_missing = "--ignore-missing" in argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        with open(args[0]) as f:
            exp = json.load(f)
        with open(args[1]) as f:
            act = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compare_facts: {e}", file=sys.stderr)
        return 2
    out, notes = [], []
    compare(exp, act, "", out, notes, ignore_missing)
    for n in notes:
        print("note: " + n)
    for d in out:
        print("DIFF " + d)
    print(f"{len(out)} disagreement(s)")
    return 0 if not out else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
