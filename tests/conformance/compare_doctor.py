#!/usr/bin/env python3
"""Judge `flinkstate doctor --json` against the referee (`harness.sh payload`, real Flink).

    compare_doctor.py ORACLE.json DOCTOR.json [--tolerance 0.05] [--heap-factor 2]

ORACLE.json is written by tests/conformance/flink/harness.sh payload (Flink's own repartitioner
and Java serialization; optionally `deployment` from harness.sh deploy and `heap` from a measured
JobManager). DOCTOR.json is the doctor's report. Checks, each printed as PASS/FAIL:

* every oracle task (operatorId, subtaskIndex) has a doctor entry whose payloadBytes is within
  +-tolerance of the oracle's, and the doctor has no task the oracle lacks;
* where both have restore.chains (doctor given --plan), the same per chain;
* restore.minFrameSize >= the largest real payload: deployment.encodedBytes (Flink's "actual size of
  encoded class") where measured, else the largest JobManagerTaskRestore, else the largest task;
* where deployment was measured (deployment.encodedBytes N): minFrameSize <= N*(1+tolerance) +
  deployment.aboveSlackBytes, and no try that failed to deploy had a frame >= minFrameSize (the try
  at the doctor's own minFrameSize, which the driver adds, must deploy);
* where heap was measured: heap.checkpointBytes within a factor heap-factor of heap.measuredBytes;
* where a JobManager's heap during a real restore was measured (jobManagerHeap.duringRestoreBytes,
  harness.sh jmheap: every task's restore assigned, none deployed): heap.checkpointBytes +
  heap.assignedRestoreBytes within a factor heap-factor of it, and heap.restorePeakBytes (the
  descriptors in flight added; for one retained checkpoint) not below it.

Exit 0 when every check passes, 1 otherwise, 2 on usage errors.
"""
import argparse
import json
import sys


def num(v):
    """protobuf's JSON prints int64 as a string; accept both."""
    if v is None:
        return None
    return int(v)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("oracle")
    ap.add_argument("doctor")
    ap.add_argument("--tolerance", type=float, default=0.05)
    ap.add_argument("--heap-factor", type=float, default=2.0)
    a = ap.parse_args()
    with open(a.oracle) as f:
        oracle = json.load(f)
    with open(a.doctor) as f:
        doctor = json.load(f)

    fails = []
    passes = 0

    def check(ok, what):
        nonlocal passes
        if ok:
            passes += 1
        else:
            fails.append(what)
        return ok

    o_restore = oracle["restore"]
    d_restore = doctor.get("restore")
    if not check(isinstance(d_restore, dict), "doctor JSON has no restore object"):
        return report(a, fails, passes)

    o_tasks = {(t["operatorId"], int(t["subtaskIndex"])): t for t in o_restore["tasks"]}
    d_tasks = {}
    for t in d_restore.get("tasks", []):
        d_tasks[(t.get("operatorId"), int(t.get("subtaskIndex", 0)))] = t
    worst = 0.0
    for key, ot in sorted(o_tasks.items()):
        want = int(ot["payloadBytes"])
        dt = d_tasks.get(key)
        if not check(dt is not None, "task %s/%d: missing from doctor (oracle %d bytes)" % (key[0], key[1], want)):
            continue
        got = num(dt.get("payloadBytes")) or 0
        rel = abs(got - want) / want if want else (0.0 if got == 0 else float("inf"))
        worst = max(worst, rel)
        check(rel <= a.tolerance, "task %s/%d: doctor %d bytes, Flink %d bytes (%+.1f%%, tolerance %.0f%%)"
              % (key[0], key[1], got, want, 100.0 * (got - want) / want if want else float("inf"), 100 * a.tolerance))
    for key in sorted(set(d_tasks) - set(o_tasks)):
        check(False, "task %s/%d: doctor has it, Flink assigns no such task" % key)
    print("tasks: %d compared, worst deviation %.2f%%" % (len(o_tasks), 100 * worst))

    o_chains = {(tuple(c["operatorIds"]), int(c["subtaskIndex"])): c for c in o_restore.get("chains", [])}
    d_chains = {(tuple(c.get("operatorIds", [])), int(c.get("subtaskIndex", 0))): c for c in d_restore.get("chains", [])}
    if o_chains and d_chains:
        # the doctor may list a chain's operators in another order than the JobVertex does
        d_by_set = {(frozenset(k[0]), k[1]): v for k, v in d_chains.items()}
        for key, oc in sorted(o_chains.items()):
            want = int(oc["payloadBytes"])
            dc = d_by_set.get((frozenset(key[0]), key[1]))
            if not check(dc is not None, "chain %s/%d: missing from doctor" % ("+".join(key[0]), key[1])):
                continue
            got = num(dc.get("payloadBytes")) or 0
            check(want and abs(got - want) <= a.tolerance * want,
                  "chain %s/%d: doctor %d bytes, Flink's JobManagerTaskRestore %d bytes" % ("+".join(key[0]), key[1], got, want))
        print("chains: %d compared" % len(o_chains))

    dep = oracle.get("deployment")
    real = None
    what = None
    if dep and dep.get("encodedBytes"):
        real, what = int(dep["encodedBytes"]), "Flink's encoded RPC (deployment.encodedBytes)"
    elif o_restore.get("maxChainPayloadBytes"):
        real, what = int(o_restore["maxChainPayloadBytes"]), "largest JobManagerTaskRestore"
    else:
        real, what = int(o_restore["maxPayloadBytes"]), "largest task payload"
    mfs = num(d_restore.get("minFrameSize"))
    if check(mfs is not None, "doctor JSON has no restore.minFrameSize"):
        check(mfs >= real, "restore.minFrameSize %d < %s %d" % (mfs, what, real))
        print("minFrameSize: doctor %d, %s %d (margin %+d bytes)" % (mfs, what, real, mfs - real))
    if dep and mfs is not None:
        if dep.get("encodedBytes"):
            n = int(dep["encodedBytes"])
            slack = int(dep.get("aboveSlackBytes", 0))
            limit = int(n * (1 + a.tolerance)) + slack
            check(mfs <= limit, "restore.minFrameSize %d overshoots Flink's encoded size %d by more than %.0f%% + %d bytes"
                  % (mfs, n, 100 * a.tolerance, slack))
        for case in dep.get("cases", []):
            frame = int(case["frameSize"])
            deployed = bool(case["deployed"])
            says = frame >= mfs
            print("deployment at frame %d: Flink %s, doctor says %s" % (frame, "deployed" if deployed else "failed",
                                                                       "deploys" if says else "fails"))
            # the dangerous direction: the doctor says it deploys and Flink did not; the other is
            # bounded by the overshoot check above
            check(deployed or not says, "deployment at frame size %d failed, but the doctor's minFrameSize is %d" % (frame, mfs))

    heap = oracle.get("heap")
    if heap and heap.get("measuredBytes"):
        measured = int(heap["measuredBytes"])
        d_heap = doctor.get("heap", {})
        got = num(d_heap.get("checkpointBytes"))
        if check(got is not None, "doctor JSON has no heap.checkpointBytes"):
            ok = measured / a.heap_factor <= got <= measured * a.heap_factor
            check(ok, "heap.checkpointBytes %d not within %gx of the JobManager's measured %d" % (got, a.heap_factor, measured))
            print("heap: doctor %d, measured %d (ratio %.2f, allowed 1/%g..%g)" % (got, measured, got / measured, a.heap_factor, a.heap_factor))
    # The JobManager during a real restore (harness.sh jmheap): every task's restore assigned, none
    # deployed. A restore from a path puts that one checkpoint in the CompletedCheckpointStore, so the
    # doctor's figure for it is one checkpoint plus the assigned restores, whatever --retained says.
    jmh = oracle.get("jobManagerHeap")
    if jmh and jmh.get("duringRestoreBytes") is not None:
        measured = int(jmh["duringRestoreBytes"])
        d_heap = doctor.get("heap", {})
        ckpt = num(d_heap.get("checkpointBytes"))
        assigned = num(d_heap.get("assignedRestoreBytes"))
        peak = num(d_heap.get("restorePeakBytes"))
        retained = int(d_heap.get("retained", 1))
        if check(ckpt is not None and assigned is not None and peak is not None,
                 "doctor JSON lacks heap.checkpointBytes, heap.assignedRestoreBytes or heap.restorePeakBytes"):
            before = ckpt + assigned
            check(measured > 0, "the JobManager's measured restore heap %d is not positive" % measured)
            ok = measured > 0 and measured / a.heap_factor <= before <= measured * a.heap_factor
            check(ok, "heap before deployment (checkpointBytes %d + assignedRestoreBytes %d = %d) not within %gx of "
                  "the JobManager's measured %d during the restore" % (ckpt, assigned, before, a.heap_factor, measured))
            # the peak adds the descriptors in flight: it may not be below what the JobManager held
            check(peak - (retained - 1) * ckpt >= measured,
                  "heap.restorePeakBytes %d (for one retained checkpoint: %d) is below the JobManager's measured %d"
                  % (peak, peak - (retained - 1) * ckpt, measured))
            print("jobmanager heap during the restore: doctor %d (checkpoint %d + assigned restores %d), measured %d "
                  "(ratio %.2f, allowed 1/%g..%g); peak forecast %d" % (before, ckpt, assigned, measured,
                                                                      before / measured if measured else float("inf"),
                                                                      a.heap_factor, a.heap_factor, peak))
    return report(a, fails, passes)


def report(a, fails, passes):
    for f in fails:
        print("FAIL " + f)
    print("%s: %d passed, %d failed (%s vs %s)" % ("PASS" if not fails else "FAIL", passes, len(fails), a.doctor, a.oracle))
    return 0 if not fails else 1


if __name__ == "__main__":
    sys.exit(main())
