#!/usr/bin/env python3
# Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
"""The remote variant of restore_stripped.sh: real Flink restores a checkpoint
that `flinkstate repair --apply` repaired where it lies in an object store.

Takes the last generation of the incident that flink/harness.sh reproduced
with RELEASE (as restore_stripped.sh does), uploads its retained checkpoint
directory and the HA directory to moto on loopback at the keys Flink wrote
them under (<gen>/checkpoints/<job>/chk-<n>/..., <gen>/ha/chk-<n>/...),
repairs them there over s3://, downloads the repaired objects over a local
copy, and then
  1. loads the downloaded HA completedCheckpoint with that release's classes:
     the state must be gone, the facts must agree with ours;
  2. restores the job from the downloaded checkpoint with that release: the
     job must run, the state must stay empty, every other state keep its
     values (harness.sh restore --expect-stripped).

  restore_repaired_s3.py FLINKSTATE_BIN INCIDENT_DIR RELEASE WORK_DIR
Needs moto[server] and boto3 (scripts/install-deps.sh --s3-tests).
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "objstore"))
import s3_server_test  # noqa: E402  (Moto, s3_client, base_env)

STATE = "topic-partition-offset-states"


def main():
    flinkstate, incident, release, work = sys.argv[1:5]
    with open(os.path.join(incident, "MANIFEST.txt")) as f:
        rows = [line.rstrip("\n").split("\t") for line in f][1:]
    last = [r[6] for r in rows
            if len(r) > 6 and r[4] == "checkpoint" and r[1].startswith("gen") and
            r[1].endswith("-v2")][-1]
    gen = last.split("/")[0]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.copytree(os.path.join(incident, gen), os.path.join(work, gen))
    chk_rel = os.path.dirname(last)  # <gen>/checkpoints/<job>/chk-<n>
    ha_rel = sorted(os.path.dirname(os.path.join(gen, "ha", d, n))
                    for d in os.listdir(os.path.join(work, gen, "ha"))
                    for n in os.listdir(os.path.join(work, gen, "ha", d))
                    if n.startswith("completedCheckpoint"))[-1]

    moto = s3_server_test.Moto()
    try:
        s3 = s3_server_test.s3_client(moto.url)
        s3.create_bucket(Bucket="flink")
        for rel in (chk_rel, ha_rel):
            for n in sorted(os.listdir(os.path.join(work, rel))):
                path = os.path.join(work, rel, n)
                if os.path.isfile(path):
                    s3.upload_file(path, "flink", "%s/%s" % (rel, n))
        env = s3_server_test.base_env(moto.url)
        cmd = [flinkstate, "repair", "--state", STATE, "--ha-dir", "s3://flink/" + ha_rel,
               "--apply", "s3://flink/" + chk_rel]
        print("== " + " ".join(cmd), flush=True)
        subprocess.run(cmd, env=env, check=True)
        downloaded = []
        for rel in (chk_rel, ha_rel):
            keys = {o["Key"] for o in
                    s3.list_objects_v2(Bucket="flink", Prefix=rel + "/")["Contents"]}
            for key in sorted(keys):
                n = key[len(rel) + 1:]
                # What the repair replaced (it kept a backup); an HA directory
                # may also hold other jobs' files, left alone.
                if key + ".bak" in keys:
                    local = os.path.join(work, rel, n)
                    s3.download_file("flink", key, local)
                    downloaded.append(local)
    finally:
        moto.stop()
    print("downloaded: " + ", ".join(downloaded), flush=True)

    harness = os.path.join(HERE, "flink", "harness.sh")
    subprocess.run([flinkstate, "verify", os.path.join(work, chk_rel, "_metadata")], check=True)
    ha_files = [f for f in downloaded if os.path.basename(f).startswith("completedCheckpoint")]
    if not ha_files or os.path.join(work, chk_rel, "_metadata") not in downloaded:
        sys.exit("FAIL: the repair did not replace both _metadata and an HA file: %s" % downloaded)
    for f in ha_files:
        print("== %s: load with Flink %s's classes" % (f, release), flush=True)
        facts = subprocess.run([harness, "verify", "--release", release, f], check=True,
                               capture_output=True, text=True).stdout
        if '"%s"' % STATE in facts:
            sys.exit("FAIL: %s still in %s as Flink reads it" % (STATE, f))
        ours = subprocess.run([flinkstate, "inspect", "--json", f], check=True,
                              capture_output=True, text=True).stdout
        with open(os.path.join(work, "ha.facts.json"), "w") as out:
            out.write(facts)
        with open(os.path.join(work, "ha.report.json"), "w") as out:
            out.write(ours)
        with open(os.path.join(work, "ha.ours.json"), "w") as out:
            subprocess.run([sys.executable, os.path.join(HERE, "report_to_facts.py"),
                            os.path.join(work, "ha.report.json")], check=True, stdout=out)
        subprocess.run([sys.executable, os.path.join(HERE, "flink", "compare_facts.py"),
                        os.path.join(work, "ha.facts.json"), os.path.join(work, "ha.ours.json")],
                       check=True)
    print("== restore with Flink %s from the downloaded checkpoint" % release, flush=True)
    subprocess.run([harness, "restore", "--release", release, "--from",
                    os.path.join(work, chk_rel), "--expect-stripped", STATE, "--state-log",
                    os.path.join(incident, "statelog"), "--out", os.path.join(work, "restore")],
                   check=True)
    print("OK")


if __name__ == "__main__":
    main()
