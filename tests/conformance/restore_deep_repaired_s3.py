#!/usr/bin/env python3
# Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
"""The remote variant of restore_deep_stripped_ha.sh steps 6-9: real Flink loads and recovers a job
whose file-backed operator state `flinkstate repair --deep --apply` repaired where it lies in an
object store, writing the new state files there as new objects.

  1. takes the last generation of the incident that flink/harness.sh reproduced with RELEASE and
     points its HA file at this copy (flinkstate relocate); recovers the job from that HA file
     through ZooKeeper HA with the inline-state threshold at 0 (harness.sh restore --from-ha
     --memory-threshold 0): the checkpoint that run takes keeps every non-empty operator-state
     stream in a state file of its chk-<n> directory (RelativeFileStateHandle), and its ZooKeeper
     HA store writes the HA completedCheckpoint of it;
  2. uploads that checkpoint directory and the HA directory to moto on loopback at the keys Flink
     wrote them under (their paths below WORK_DIR), and repairs them there over s3://
     (`repair --deep --apply`; a dry run first): one new object per stream, beside the originals,
     named by both repaired files; the originals byte for byte as Flink wrote them; no key of the
     transaction left over;
  3. downloads the repaired objects and the new state files over the local copy, and
     a. reads the repaired HA file's streams with that release's classes (harness.sh streams):
        flinkstate reads them the same, and they are the reading of the input less the state;
     b. recovers the job from the downloaded HA file the way a JobManager does on failover
        (harness.sh restore --from-ha): Flink restores that checkpoint, every other state comes
        back with the values logged when it was taken, the state is not registered, and the
        checkpoint Flink takes next holds no entry of it.

  restore_deep_repaired_s3.py FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
Needs moto[server] and boto3 (scripts/install-deps.sh --s3-tests).
"""

import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "objstore"))
import s3_server_test  # noqa: E402  (Moto, s3_client, base_env)

STATE = "topic-partition-offset-states"


def run(*cmd, **kw):
    print("== " + " ".join(cmd), flush=True)
    return subprocess.run(list(cmd), check=True, **kw)


def output(*cmd):
    return subprocess.run(list(cmd), check=True, capture_output=True, text=True).stdout


def fail(msg):
    print("FAIL: " + msg, flush=True)
    sys.exit(1)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def less(j, name):
    """A streams reading without the state `name`: per operator and stream, the other meta infos
    and states."""
    return {o["operatorId"]: ({(s["index"], s["slot"]): (
        [m for m in s["metaInfos"] if m["name"] != name],
        [t for t in s["states"] if t["name"] != name]) for s in o["subtasks"]},
        [t for t in o["states"] if t["name"] != name]) for o in j["operators"]}


def main():
    flinkstate, incident, release, work = sys.argv[1:5]
    harness = os.path.join(HERE, "flink", "harness.sh")
    with open(os.path.join(incident, "MANIFEST.txt")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    last = [r[6] for r in rows
            if len(r) > 6 and r[4] == "checkpoint" and r[1].startswith("gen") and
            r[1].endswith("-v2")][-1]
    gen = last.split("/")[0]
    cid = os.path.dirname(last).rsplit("chk-", 1)[1]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.copytree(os.path.join(incident, gen), os.path.join(work, gen))
    ha_in = [f for f in glob.glob(os.path.join(work, gen, "ha", "chk-" + cid, "completedCheckpoint*"))
             if not f.endswith(".bak")]
    if len(ha_in) != 1:
        fail("no single HA file of checkpoint %s in %s/ha: %s" % (cid, gen, ha_in))
    ha_in = ha_in[0]

    print("== 1. a checkpoint with state files and its HA file (Flink %s, memory threshold 0)"
          % release, flush=True)
    pointer = json.loads(output(flinkstate, "inspect", "--json", ha_in))[
        "completedCheckpoint"]["externalPointer"]
    prefix = pointer.split("/" + gen + "/")[0] + "/" + gen
    if prefix == pointer:
        fail("the HA file's checkpoint %s is not under %s" % (pointer, gen))
    run(flinkstate, "relocate", "--from", prefix, "--to", "file:" + os.path.join(work, gen),
        "--in-place", ha_in)
    os.remove(ha_in + ".bak")
    first = os.path.join(work, "first")
    run(harness, "restore", "--release", release, "--from-ha", ha_in, "--state-log",
        os.path.join(incident, "statelog"), "--memory-threshold", "0", "--generations", "1",
        "--out", first)
    ha_dir = os.path.join(first, "restore1", "ha", "restore1")
    ha_of = {}
    for f in glob.glob(os.path.join(ha_dir, "completedCheckpoint*")):
        ha_of[int(json.loads(output(flinkstate, "inspect", "--json", f))["checkpointId"])] = f
    chks = [(int(d.rsplit("chk-", 1)[1]), d)
            for d in glob.glob(os.path.join(first, "restore1", "checkpoints", "*", "chk-*"))
            if os.path.isfile(os.path.join(d, "_metadata"))]
    chks = [(n, d) for n, d in chks if n in ha_of]
    if not chks:
        fail("no checkpoint of the run has both its _metadata and an HA file in " + ha_dir)
    fid, chk = max(chks)
    ha_file = ha_of[fid]
    print("checkpoint %d: %s, HA file %s" % (fid, chk, ha_file), flush=True)
    before_ours = json.loads(output(flinkstate, "state", "--json", ha_file))
    files_with_state = [s for o in before_ours["operators"] for s in o["subtasks"]
                        if s["source"] != "inline" and
                        any(m["name"] == STATE for m in s["metaInfos"])]
    if not files_with_state:
        fail("no state file named by the HA file holds " + STATE)
    print("%d state file(s) named by the HA file hold %s" % (len(files_with_state), STATE))
    before = json.loads(output(harness, "streams", "--release", release, ha_file))
    originals = {n: sha(os.path.join(chk, n)) for n in os.listdir(chk)}

    print("== 2. repair --deep --apply in the object store", flush=True)
    chk_rel = os.path.relpath(chk, work)
    ha_rel = os.path.relpath(ha_dir, work)
    moto = s3_server_test.Moto()
    try:
        s3 = s3_server_test.s3_client(moto.url)
        s3.create_bucket(Bucket="flink")
        uploaded = {}
        for rel in (chk_rel, ha_rel):
            for n in sorted(os.listdir(os.path.join(work, rel))):
                path = os.path.join(work, rel, n)
                if os.path.isfile(path):
                    s3.upload_file(path, "flink", "%s/%s" % (rel, n))
                    uploaded["%s/%s" % (rel, n)] = sha(path)
        env = s3_server_test.base_env(moto.url)
        repair = [flinkstate, "repair", "--deep", "--state", STATE, "--ha-dir",
                  "s3://flink/" + ha_rel, "s3://flink/" + chk_rel]
        plan = json.loads(run(*repair, "--json", env=env, capture_output=True,
                              text=True).stdout)
        keys = lambda: {o["Key"] for p in (chk_rel, ha_rel)  # noqa: E731
                        for o in s3.list_objects_v2(Bucket="flink", Prefix=p + "/")
                        .get("Contents", [])}
        if keys() != set(uploaded):
            fail("the dry run wrote to the store: %s" % sorted(keys() ^ set(uploaded)))
        done = json.loads(run(*repair, "--apply", "--json", env=env, capture_output=True,
                              text=True).stdout)
        md = [f for f in done["files"] if f["kind"] == "metadata"]
        ha = [f for f in done["files"] if f["kind"] == "completedCheckpoint"]
        if len(md) != 1 or len(ha) != 1:
            fail("expected the _metadata and one HA file repaired: %s" % done["files"])
        new = sorted(f["path"] for f in md[0].get("newStateFiles", []))
        planned = sorted(f["path"] for p in plan["files"] if p["kind"] == "metadata"
                         for f in p.get("newStateFiles", []))
        if not new or new != planned:
            fail("new state files %s, the dry run planned %s" % (new, planned))
        if sorted(f["path"] for f in ha[0].get("newStateFiles", [])) != new or \
                not all(f["writtenForMetadata"] for f in ha[0]["newStateFiles"]):
            fail("the HA file does not name the _metadata's new state files: %s"
                 % ha[0].get("newStateFiles"))
        new_keys = {u[len("s3://flink/"):] for u in new}
        want = set(uploaded) | new_keys | {chk_rel + "/_metadata.bak",
                                          "%s/%s.bak" % (ha_rel, os.path.basename(ha_file))}
        if keys() != want:
            fail("keys after the repair: extra %s, missing %s"
                 % (sorted(keys() - want), sorted(want - keys())))
        for key, digest in uploaded.items():
            if key in (chk_rel + "/_metadata", "%s/%s" % (ha_rel, os.path.basename(ha_file))):
                continue
            body = s3.get_object(Bucket="flink", Key=key)["Body"].read()
            if hashlib.sha256(body).hexdigest() != digest:
                fail("%s changed in the store" % key)
        print("%d new object(s) beside the originals, which are as Flink wrote them; "
              "no key of the transaction left" % len(new_keys), flush=True)

        print("== 3. download the repaired objects and the new state files", flush=True)
        for key in sorted(new_keys | {chk_rel + "/_metadata",
                                      "%s/%s" % (ha_rel, os.path.basename(ha_file))}):
            s3.download_file("flink", key, os.path.join(work, key))
    finally:
        moto.stop()
    for n, digest in originals.items():
        if n != "_metadata" and sha(os.path.join(chk, n)) != digest:
            fail("%s changed" % n)

    print("== 3a. Flink %s reads the repaired HA file's streams from the new state files"
          % release, flush=True)
    after_path = os.path.join(work, "after.json")
    ours_path = os.path.join(work, "ours.json")
    with open(after_path, "w") as out:
        run(harness, "streams", "--release", release, ha_file, stdout=out)
    with open(ours_path, "w") as out:
        run(flinkstate, "state", "--json", ha_file, stdout=out)
    run(sys.executable, os.path.join(HERE, "compare_state_streams.py"), after_path, ours_path)
    after = json.load(open(after_path))
    has = sum(1 for o in after["operators"] for s in o["subtasks"] for m in s["metaInfos"]
              if m["name"] == STATE)
    if has or less(before, STATE) != less(after, STATE):
        fail("%d stream(s) still hold %s, or the other states changed in Flink's reading"
             % (has, STATE))
    print("PASS: the new state files hold every other state as before, in Flink's reading")
    # The downloaded _metadata names the same new state files (relative handles).
    md_after = os.path.join(work, "md-after.json")
    md_ours = os.path.join(work, "md-ours.json")
    with open(md_after, "w") as out:
        run(harness, "streams", "--release", release, os.path.join(chk, "_metadata"), stdout=out)
    with open(md_ours, "w") as out:
        run(flinkstate, "state", "--json", os.path.join(chk, "_metadata"), stdout=out)
    run(sys.executable, os.path.join(HERE, "compare_state_streams.py"), md_after, md_ours)
    if less(json.load(open(md_after)), STATE) != less(after, STATE) or \
            STATE in json.dumps(json.load(open(md_after))["operators"]):
        fail("Flink reads the repaired _metadata's streams differently from the HA file's")
    print("PASS: the repaired _metadata's streams read as the HA file's, in Flink's reading")

    print("== 3b. Flink %s recovers the job from the downloaded HA file" % release, flush=True)
    run(harness, "restore", "--release", release, "--from-ha", ha_file, "--expect-stripped",
        STATE, "--expect-unregistered", STATE, "--state-log", os.path.join(first, "statelog"),
        "--generations", "1", "--out", os.path.join(work, "restore"))
    print("DEEP REPAIR IN THE OBJECT STORE RECOVERED")


if __name__ == "__main__":
    main()
