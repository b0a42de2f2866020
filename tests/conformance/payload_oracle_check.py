#!/usr/bin/env python3
"""Plausibility of the referee itself (harness.sh payload / deploy), independent of flinkstate.

    payload_oracle_check.py DIR PARALLELISM NEW_PARALLELISM

DIR holds gen1.json, gen2.json, gen3.json (the incident's checkpoints after 1, 2, 3 restores at
PARALLELISM, 8 entries at the start), gen3-pN.json (gen 3 at NEW_PARALLELISM) and gen3-deploy.json
(gen 3 with the deployment measured). Checks, each printed PASS/FAIL:

* the union state's offsets are 8 * P^g (the incident multiplies by P at every restore);
* every subtask of the union operator receives >= 8 bytes per union offset of all old subtasks
  (union state is handed whole to every subtask, offsets are longs);
* the union operator's payload grows with every restore, and so does the heap of the loaded
  checkpoint (harness payload --heap), which holds at least the offsets' long[]s;
* at NEW_PARALLELISM every operator has NEW_PARALLELISM subtasks and the union operator's subtasks
  each receive within 5% of what they receive at PARALLELISM (the whole union either way);
* a chained task's JobManagerTaskRestore is at least as large as each of its operators' states
  minus one stream's class descriptors (the empty OperatorSubtaskState);
* Flink's encoded RPC is larger than the largest JobManagerTaskRestore (the descriptor carries it)
  by less than 64 KiB, the try just below it failed and the one above deployed.
"""
import json
import os
import sys

fails = []


def check(ok, what):
    print(("PASS " if ok else "FAIL ") + what)
    if not ok:
        fails.append(what)


def load(d, name):
    with open(os.path.join(d, name)) as f:
        return json.load(f)


def union_tasks(o):
    return [t for t in o["restore"]["tasks"] if t["unionOffsets"] > 0]


def main():
    d, p, newp = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    gens = [load(d, "gen%d.json" % g) for g in (1, 2, 3)]
    prev = 0
    for g, o in enumerate(gens, start=1):
        ut = union_tasks(o)
        check(len(ut) == p, "gen %d: %d subtasks of the union operator (want %d)" % (g, len(ut), p))
        if not ut:
            continue
        n = ut[0]["unionOffsets"]
        check(n == 8 * p ** g, "gen %d: %d union offsets (want 8 * %d^%d = %d)" % (g, n, p, g, 8 * p ** g))
        low = min(t["payloadBytes"] for t in ut)
        check(low >= 8 * n, "gen %d: every subtask receives >= 8 x %d offsets: smallest %d bytes" % (g, n, low))
        check(low > prev, "gen %d: union operator's smallest payload %d > previous generation's %d" % (g, low, prev))
        prev = low
        h = o["heap"]["measuredBytes"]
        check(h >= 8 * n, "gen %d: heap of the loaded checkpoint %d bytes >= 8 x %d union offsets (long[])" % (g, h, n))
        if g > 1:
            check(h > gens[g - 2]["heap"]["measuredBytes"], "gen %d: heap %d bytes > previous generation's %d"
                  % (g, h, gens[g - 2]["heap"]["measuredBytes"]))
        for c in o["restore"].get("chains", []):
            opbytes = [t["payloadBytes"] for t in o["restore"]["tasks"]
                       if t["operatorId"] in c["operatorIds"] and t["subtaskIndex"] == c["subtaskIndex"]]
            empty = min(t["payloadBytes"] for t in o["restore"]["tasks"] if not t["hasState"]) if any(
                not t["hasState"] for t in o["restore"]["tasks"]) else 0
            check(c["payloadBytes"] >= max(opbytes) - empty,
                  "gen %d: chain %s/%d JobManagerTaskRestore %d bytes holds its largest operator (%d bytes)"
                  % (g, "+".join(x[:8] for x in c["operatorIds"]), c["subtaskIndex"], c["payloadBytes"], max(opbytes)))

    q = load(d, "gen3-p%d.json" % newp)
    per_op = {}
    for t in q["restore"]["tasks"]:
        per_op.setdefault(t["operatorId"], []).append(t["subtaskIndex"])
    for op, idx in sorted(per_op.items()):
        check(sorted(idx) == list(range(newp)), "gen 3 at %d: operator %s has subtasks %s" % (newp, op, sorted(idx)))
    old = {t["subtaskIndex"]: t["payloadBytes"] for t in union_tasks(gens[2])}
    for t in union_tasks(q):
        ref = old[0]
        check(abs(t["payloadBytes"] - ref) <= 0.05 * ref,
              "gen 3 at %d: union subtask %d receives %d bytes, at %d: %d (the whole union either way)"
              % (newp, t["subtaskIndex"], t["payloadBytes"], p, ref))

    dep = load(d, "gen3-deploy.json")
    n = dep["deployment"]["encodedBytes"]
    mc = dep["restore"]["maxChainPayloadBytes"]
    check(n is not None and mc < n < mc + 65536,
          "encoded RPC %s bytes = largest JobManagerTaskRestore %d + %s bytes of descriptor" % (n, mc, None if n is None else n - mc))
    cases = dep["deployment"]["cases"]
    below = [c for c in cases if c["frameSize"] < n]
    above = [c for c in cases if c["frameSize"] >= n + dep["deployment"]["aboveSlackBytes"]]
    check(below and not any(c["deployed"] for c in below), "every try below %d bytes failed to deploy: %s" % (n, [c["frameSize"] for c in below]))
    check(above and all(c["deployed"] for c in above), "every try at >= %d + slack deployed: %s" % (n, [c["frameSize"] for c in above]))
    print("MiniCluster heap after restore (recorded, not judged: noise of a whole cluster): %s" % dep.get("miniClusterHeap"))
    print("%s: %d failed" % ("PASS" if not fails else "FAIL", len(fails)))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
