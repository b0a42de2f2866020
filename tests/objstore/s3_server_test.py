#!/usr/bin/env python3
# Copyright 2026 The flinkstate Authors. Licensed under the Apache License 2.0.
"""flinkstate against a real S3 server on loopback (moto in server mode).

Uploads the real-Flink test data (tests/testdata/flink-*/) at the keys Flink
wrote them under (INDEX.tsv's `source`: <job dir>/<job id>/chk-<n>/_metadata,
the HA directory's completedCheckpoint<hex>), then checks that every command's
facts over s3:// equal the local run (the referee here is the local file: the
same bytes), that prefixes open their _metadata, that wrong credentials (moto
with IAM authentication: it recomputes the SigV4 signature curl made), missing
buckets/keys, a 503 storm and flaky 503s (a fault-injecting proxy in front of
moto) give clear errors or retried successes, that web-identity credentials
(STS AssumeRoleWithWebIdentity) work, and that `inspect` of an incident-shaped
_metadata fetches less than 1% of it.

Usage: s3_server_test.py FLINKSTATE GEN_INCIDENT TESTDATA_DIR
Needs moto[server] and boto3 (scripts/install-deps.sh --s3-tests).
"""

import csv
import glob
import http.client
import http.server
import json
import os
import re
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import unittest

FLINKSTATE = GEN_INCIDENT = TESTDATA = None


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Moto:
    """moto in server mode on a free loopback port."""

    def __init__(self, auth_free_actions=None):
        self.port = free_port()
        env = dict(os.environ)
        if auth_free_actions is not None:
            # The first N actions go unauthenticated (setting up IAM), then
            # every request's SigV4 signature is verified.
            env["INITIAL_NO_AUTH_ACTION_COUNT"] = str(auth_free_actions)
        self.log = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            stdout=self.log, stderr=self.log, env=env)
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("moto server did not start")
                time.sleep(0.1)
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)


class FaultProxy:
    """Forwards to `target`; `mode` 'pass', 'storm' (every request 503
    SlowDown) or an int N (the next N requests 503, then pass)."""

    def __init__(self, target_port):
        proxy = self
        self.mode = "pass"
        self.lock = threading.Lock()
        self.seen = 0
        self.headers = []  # of every request forwarded
        # Called as hook(method, path, headers, when) with when "before" or
        # "after" forwarding; used to change objects or kill the client at a
        # chosen request.
        self.hook = None

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def handle_any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                with proxy.lock:
                    proxy.seen += 1
                    fail = proxy.mode == "storm" or (isinstance(proxy.mode, int) and proxy.mode > 0)
                    if isinstance(proxy.mode, int) and proxy.mode > 0:
                        proxy.mode -= 1
                if fail:
                    err = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                           b"<Message>Please reduce your request rate.</Message>"
                           b"<RequestId>proxy</RequestId></Error>")
                    self.send_response(503)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(err)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(err)
                    return
                c = http.client.HTTPConnection("127.0.0.1", target_port, timeout=30)
                headers = {k: v for k, v in self.headers.items()}
                headers_seen = dict(headers, _path=self.path)
                with proxy.lock:
                    proxy.headers.append(headers_seen)
                if proxy.hook and proxy.hook(self.command, self.path, headers, "before"):
                    self.close_connection = True
                    return  # dropped: never reaches the server
                c.request(self.command, self.path, body=body, headers=headers)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", r.getheader("Content-Length") or str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                c.close()
                if proxy.hook:
                    proxy.hook(self.command, self.path, headers, "after")

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def s3_client(endpoint, key="test", secret="test"):
    import boto3
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret)


def base_env(endpoint, key="test", secret="test"):
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_ENDPOINT_URL": endpoint, "AWS_REGION": "us-east-1",
                "AWS_ACCESS_KEY_ID": key, "AWS_SECRET_ACCESS_KEY": secret,
                "AWS_MAX_ATTEMPTS": "3", "FLINKSTATE_S3_RETRY_BASE_MS": "10",
                "HOME": tempfile.gettempdir()})
    return env


def run(args, env):
    p = subprocess.run([FLINKSTATE] + args, env=env, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def cases():
    """(release, case, case dir, Flink's key for the case's directory)."""
    out = []
    for index in sorted(glob.glob(os.path.join(TESTDATA, "flink-*", "INDEX.tsv"))):
        rel_dir = os.path.dirname(index)
        release = os.path.basename(rel_dir)
        with open(index) as f:
            for row in csv.DictReader(f, delimiter="\t"):
                case_dir = os.path.join(rel_dir, row["case"])
                if not os.path.isdir(case_dir):
                    continue
                out.append((release, row["case"], case_dir,
                            "%s/%s" % (release, os.path.dirname(row["source"]))))
    return out


def state_files(case_dir):
    """The files of a case that Flink wrote (not our facts/INDEX sidecars)."""
    names = []
    for root, _, files in os.walk(case_dir):
        for n in files:
            if n in ("facts.json",) or n.endswith(".txt"):
                continue
            names.append(os.path.relpath(os.path.join(root, n), case_dir))
    return sorted(names)


class S3ServerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.moto = Moto()
        cls.proxy = FaultProxy(cls.moto.port)
        cls.s3 = s3_client(cls.moto.url)
        cls.s3.create_bucket(Bucket="flink")
        cls.uploaded = []
        for release, case, case_dir, prefix in cases():
            files = state_files(case_dir)
            for n in files:
                cls.s3.upload_file(os.path.join(case_dir, n), "flink", "%s/%s" % (prefix, n))
            cls.uploaded.append((release, case, case_dir, prefix, files))
        cls.env = base_env(cls.moto.url)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.moto.stop()

    def normalize(self, text, remote, local):
        text = text.replace(remote, local)
        text = re.sub(r"\(inspected in [0-9.]+ s\)", "", text)
        return text

    def test_every_case_inspects_and_verifies_as_locally(self):
        self.assertGreater(len(self.uploaded), 20)
        checked = 0
        for release, case, case_dir, prefix, files in self.uploaded:
            for n in files:
                if n.startswith("zk-") or n.endswith(".b64") or not (
                        n == "_metadata" or n.startswith("completedCheckpoint")):
                    continue
                local = os.path.join(case_dir, n)
                remote = "s3://flink/%s/%s" % (prefix, n)
                # (--json carries every fact the text shows; the text form is
                # compared in the prefix and incident tests.)
                for cmd in (["inspect", "--json"], ["verify"]):
                    lrc, lout, _ = run(cmd + [local], self.env)
                    rrc, rout, rerr = run(cmd + [remote], self.env)
                    with self.subTest(case="%s/%s" % (release, case), cmd=cmd[0]):
                        self.assertEqual(rrc, lrc, rerr)
                        self.assertEqual(self.normalize(rout, remote, local),
                                         self.normalize(lout, remote, local))
                checked += 1
        self.assertGreater(checked, 20)

    def test_doctor_of_remote_files_equals_the_local_run(self):
        # The incident's checkpoint and HA file of every release: the same report, every path
        # read as the remote one (the checkpoint directory too: it was a local path made of
        # the URL, "/cwd/s3:/flink/...").
        checked = 0
        for release, case, case_dir, prefix, files in self.uploaded:
            if case not in ("incident-gen3-checkpoint", "incident-gen3-completedCheckpoint"):
                continue
            n = [f for f in files if f == "_metadata" or f.startswith("completedCheckpoint")][0]
            local = os.path.join(case_dir, n)
            remote = "s3://flink/%s/%s" % (prefix, n)
            lrc, lout, lerr = run(["doctor", "--json", local], self.env)
            rrc, rout, rerr = run(["doctor", "--json", remote], self.env)
            with self.subTest(case="%s/%s" % (release, case)):
                self.assertEqual((rrc, lrc), (0, 0), rerr + lerr)
                self.assertEqual(json.loads(rout), json.loads(
                    lout.replace(local, remote).replace(case_dir, "s3://flink/" + prefix)))
                if n == "_metadata":
                    self.assertEqual(json.loads(rout)["paths"]["checkpointDir"],
                                     "s3://flink/" + prefix)
            checked += 1
        self.assertGreaterEqual(checked, 10)

    def test_dump_and_diff_of_remote_files(self):
        for release, case, case_dir, prefix, files in self.uploaded:
            if not case.endswith("completedCheckpoint"):
                continue
            n = [f for f in files if f.startswith("completedCheckpoint")][0]
            local = os.path.join(case_dir, n)
            remote = "s3://flink/%s/%s" % (prefix, n)
            _, lout, _ = run(["dump", local], self.env)
            rc, rout, err = run(["dump", remote], self.env)
            self.assertEqual(rc, 0, err)
            self.assertEqual(rout, lout)
            rc, out, err = run(["diff", remote, local], self.env)
            self.assertEqual((rc, out.strip()), (0, "no differences"), err)
            return
        self.fail("no completedCheckpoint case uploaded")

    def test_a_prefix_stands_for_its_metadata(self):
        release, case, case_dir, prefix, _ = next(
            u for u in self.uploaded if u[1] == "incident-gen3-checkpoint")
        _, want, _ = run(["inspect", "--json", os.path.join(case_dir, "_metadata")], self.env)
        for url in ("s3://flink/%s" % prefix, "s3://flink/%s/" % prefix,
                    "s3a://flink/%s" % prefix, "s3p://flink/%s/_metadata" % prefix):
            rc, out, err = run(["inspect", "--json", url], self.env)
            self.assertEqual(rc, 0, err)
            got = json.loads(out)
            self.assertEqual(got["file"], re.sub(r"/?$", "", url).replace("/_metadata", "") +
                             "/_metadata")
            got.pop("file")
            w = json.loads(want)
            w.pop("file")
            self.assertEqual(got, w)

    def test_missing_key_and_bucket(self):
        rc, _, err = run(["inspect", "s3://flink/no/such/_metadata"], self.env)
        self.assertEqual(rc, 1)
        self.assertIn("s3://flink/no/such/_metadata", err)
        self.assertIn("HTTP 404 NoSuchKey", err)
        rc, _, err = run(["inspect", "s3://no-such-bucket/job/chk-1"], self.env)
        self.assertEqual(rc, 1)
        self.assertIn("s3://no-such-bucket/job/chk-1", err)
        self.assertIn("HTTP 404 NoSuchBucket", err)
        rc, _, err = run(["inspect", "s3://flink/x"], dict(self.env, AWS_ENDPOINT_URL="http://127.0.0.1:1"))
        self.assertEqual(rc, 1)
        self.assertIn("Couldn't connect to server", err)
        self.assertIn("after 3 attempts", err)

    def test_503_storm_fails_clearly_and_flaky_503s_are_retried(self):
        release, case, case_dir, prefix, _ = next(
            u for u in self.uploaded if u[1] == "incident-gen3-checkpoint")
        url = "s3://flink/%s/_metadata" % prefix
        env = dict(self.env, AWS_ENDPOINT_URL=self.proxy.url, FLINKSTATE_S3_STATS="1")
        self.proxy.mode = "storm"
        try:
            rc, _, err = run(["inspect", url], env)
        finally:
            self.proxy.mode = "pass"
        self.assertEqual(rc, 1)
        self.assertIn(url, err)
        self.assertIn("HTTP 503 SlowDown: Please reduce your request rate.", err)
        self.assertIn("(after 3 attempts)", err)
        self.proxy.mode = 2
        rc, out, err = run(["inspect", url], env)
        self.assertEqual(rc, 0, err)
        self.assertIn("Flink _metadata", out)
        self.assertIn(" 2 retries", err)

    def test_incident_shaped_inspect_fetches_under_one_percent(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "_metadata")
            subprocess.run([GEN_INCIDENT, "--out", path, "--target_size_mib", "48"], check=True,
                           capture_output=True)
            size = os.path.getsize(path)
            self.s3.upload_file(path, "flink", "incident/job/chk-1742/_metadata")
            env = dict(self.env, FLINKSTATE_S3_STATS="1")
            for args in (["inspect"], ["inspect", "--json"]):
                rc, out, err = run(args + ["s3://flink/incident/job/chk-1742"], env)
                self.assertEqual(rc, 0, err)
                down = int(re.search(r"(\d+) bytes down", err).group(1))
                self.assertLess(down, size // 100, "%s fetched %d of %d bytes" % (args, down, size))
                _, lout, _ = run(args + [path], env)
                self.assertEqual(self.normalize(out, "s3://flink/incident/job/chk-1742/_metadata",
                                                path), self.normalize(lout, "", ""))


    def test_web_identity_credentials(self):
        # S3 through the proxy (which records the headers), STS at moto
        # itself. (moto answers 500 to unsigned STS calls once IAM
        # authentication is on, so this runs on the open server and checks
        # the signature's key and session token are the ones STS issued.)
        _, _, _, prefix, _ = next(u for u in self.uploaded if u[1] == "incident-gen3-checkpoint")
        with tempfile.NamedTemporaryFile("w", suffix=".jwt") as token:
            token.write("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.sig\n")
            token.flush()
            env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
            env.update({"HOME": tempfile.gettempdir(), "AWS_ENDPOINT_URL": self.proxy.url,
                        "AWS_ENDPOINT_URL_STS": self.moto.url,
                        "AWS_REGION": "us-east-1", "AWS_WEB_IDENTITY_TOKEN_FILE": token.name,
                        "AWS_ROLE_ARN": "arn:aws:iam::123456789012:role/flink"})
            self.proxy.headers.clear()
            rc, out, err = run(["inspect", "s3://flink/%s" % prefix], env)
            self.assertEqual(rc, 0, err)
            self.assertIn("Flink _metadata", out)
            self.assertTrue(self.proxy.headers)
            for h in self.proxy.headers:
                self.assertRegex(h.get("Authorization", ""), r"Credential=ASIA[A-Z0-9]+/")
                self.assertGreater(len(h.get("x-amz-security-token", "")), 20)
            env["AWS_WEB_IDENTITY_TOKEN_FILE"] = token.name + ".absent"
            rc, _, err = run(["inspect", "s3://flink/%s" % prefix], env)
            self.assertEqual(rc, 1)
            self.assertIn("cannot read the web identity token file", err)


class S3WriteTest(unittest.TestCase):
    """Edits written back to the store: strip-state --in-place on s3://."""

    STATE = "topic-partition-offset-states"

    @classmethod
    def setUpClass(cls):
        cls.moto = Moto()
        cls.proxy = FaultProxy(cls.moto.port)
        cls.s3 = s3_client(cls.moto.url)
        cls.s3.create_bucket(Bucket="flink")
        cls.local = sorted(glob.glob(os.path.join(TESTDATA, "flink-*", "incident-gen3-checkpoint",
                                                  "_metadata")))[-1]
        with open(cls.local, "rb") as f:
            cls.original = f.read()
        # The referee for the bytes: the local edit (whose outputs the
        # conformance suite loads in real Flink).
        cls.tmp = tempfile.TemporaryDirectory()
        out = os.path.join(cls.tmp.name, "stripped")
        subprocess.run([FLINKSTATE, "strip-state", "--state", cls.STATE, cls.local, out],
                       check=True, capture_output=True)
        with open(out, "rb") as f:
            cls.stripped = f.read()
        cls.env = base_env(cls.proxy.url)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.moto.stop()
        cls.tmp.cleanup()

    def setUp(self):
        self.proxy.hook = None
        self.prefix = "job-%s/chk-9" % self.id().split(".")[-1]
        self.s3.put_object(Bucket="flink", Key=self.prefix + "/_metadata", Body=self.original)

    def keys(self):
        r = self.s3.list_objects_v2(Bucket="flink", Prefix=self.prefix + "/")
        return sorted(o["Key"][len(self.prefix) + 1:] for o in r.get("Contents", []))

    def get(self, name):
        return self.s3.get_object(Bucket="flink", Key="%s/%s" % (self.prefix, name))["Body"].read()

    def strip(self, extra_env=None):
        return run(["strip-state", "--state", self.STATE, "--in-place", "s3://flink/" + self.prefix],
                   dict(self.env, **(extra_env or {})))

    def test_in_place_edit_replaces_the_object_and_keeps_a_backup(self):
        rc, out, err = self.strip()
        self.assertEqual(rc, 0, err)
        self.assertIn("original kept as s3://flink/%s/_metadata.bak" % self.prefix, out)
        self.assertEqual(self.keys(), ["_metadata", "_metadata.bak"])
        self.assertEqual(self.get("_metadata"), self.stripped)
        self.assertEqual(self.get("_metadata.bak"), self.original)
        rc, out, err = run(["verify", "s3://flink/" + self.prefix], self.env)
        self.assertEqual(rc, 0, err + out)
        # A second edit would overwrite the backup: refused, nothing left.
        self.s3.put_object(Bucket="flink", Key=self.prefix + "/_metadata", Body=self.original)
        rc, _, err = self.strip()
        self.assertEqual(rc, 1)
        self.assertIn("_metadata.bak exists already", err)
        self.assertIn("(nothing was replaced)", err)
        self.assertEqual(self.keys(), ["_metadata", "_metadata.bak"])
        self.assertEqual(self.get("_metadata"), self.original)

    def test_a_rerun_of_a_finished_in_place_edit_has_nothing_to_do(self):
        # As for a local file: planned over the backup object, the object is
        # its output (it was planned again over the edited object and failed
        # "no operator state named ...").
        rc, out, err = self.strip()
        self.assertEqual(rc, 0, err)
        for extra in ([], ["--dry-run"], ["--json"]):
            rc, out, err = run(["strip-state", "--state", self.STATE, "--in-place"] + extra +
                               ["s3://flink/" + self.prefix], self.env)
            self.assertEqual(rc, 0, err)
            if extra == ["--json"]:
                report = json.loads(out)
                self.assertTrue(report["alreadyDone"], report)
            else:
                self.assertIn("nothing to do: s3://flink/%s/_metadata holds what this command "
                              "writes over the original, kept as s3://flink/%s/_metadata.bak"
                              % (self.prefix, self.prefix), out)
            self.assertEqual(self.keys(), ["_metadata", "_metadata.bak"])
            self.assertEqual(self.get("_metadata"), self.stripped)
            self.assertEqual(self.get("_metadata.bak"), self.original)
        # Another edit over that backup is still refused for it.
        rc, _, err = run(["drop-operator", "--operator", "0" * 32, "--in-place",
                          "s3://flink/" + self.prefix], self.env)
        self.assertEqual(rc, 1)
        self.assertIn("_metadata.bak exists already", err)

    def test_a_concurrent_change_of_the_original_is_refused(self):
        concurrent = self.original[:-1] + b"\x00"
        target = "/flink/%s/_metadata" % self.prefix

        def flink_writes_meanwhile(method, path, headers, when):
            if when == "before" and method == "PUT" and ".flinkstate-tmp-" in path:
                self.s3.put_object(Bucket="flink", Key=self.prefix + "/_metadata", Body=concurrent)
        self.proxy.hook = flink_writes_meanwhile
        rc, _, err = self.strip()
        self.proxy.hook = None
        self.assertEqual(rc, 1)
        self.assertIn("s3://flink/%s/_metadata was changed by someone else" % self.prefix, err)
        self.assertIn("nothing was replaced", err)
        self.assertEqual(self.get("_metadata"), concurrent)
        self.assertEqual(self.keys(), ["_metadata"])

    def kill_at(self, copy_over_target, when):
        """Runs the edit, SIGKILLed at the copy onto the target (before or
        after the server did it: both after the commit record), then reruns
        it: the rerun's recovery completes the committed write (never restores
        the original) and the rerun recognises its own command."""
        target = "/flink/%s/_metadata" % self.prefix
        procs = []

        def kill(method, path, headers, w):
            copy = "x-amz-copy-source" in {k.lower() for k in headers}
            if (w == when and method == "PUT" and copy and path.split("?")[0] == target
                    and procs):
                procs[0].kill()
                procs[0].wait()
                return True
        self.proxy.hook = kill
        p = subprocess.Popen([FLINKSTATE, "strip-state", "--state", self.STATE, "--in-place",
                              "s3://flink/" + self.prefix], env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(p)
        p.communicate(timeout=120)
        self.proxy.hook = None
        self.assertEqual(p.returncode, -9)
        left = self.keys()
        self.assertTrue(any(k.startswith(".flinkstate-txn-") for k in left), left)
        rc, out, err = self.strip()
        self.assertEqual(rc, 0, err)
        self.assertIn("interrupted earlier run: completed", err)
        self.assertNotIn("rolled back", err)
        self.assertIn("nothing more to do", out)
        self.assertEqual(self.keys(), ["_metadata", "_metadata.bak"])
        self.assertEqual(self.get("_metadata"), self.stripped)
        self.assertEqual(self.get("_metadata.bak"), self.original)
        return err

    def test_killed_before_the_copy_rerun_completes(self):
        err = self.kill_at(True, "before")
        self.assertIn("completed s3://flink/%s/_metadata from" % self.prefix, err)

    def test_killed_after_the_copy_rerun_keeps_the_output(self):
        err = self.kill_at(True, "after")
        self.assertNotIn("restored", err)
        self.assertNotIn("completed s3://flink/%s/_metadata from" % self.prefix, err)


    def test_other_edits_in_place_equal_the_local_command(self):
        # drop-operator and convert --in-place over s3:// write the bytes the
        # local command writes, and keep the original as the backup.
        edits = [["drop-operator", "--operator", "61252f73469d3ffba207c548d29a0267"],
                 ["convert", "--to-version", "5"]]
        for i, edit in enumerate(edits):
            local_out = os.path.join(self.tmp.name, "edit-%d" % i)
            subprocess.run([FLINKSTATE] + edit + [self.local, local_out], check=True,
                           capture_output=True)
            with open(local_out, "rb") as f:
                want = f.read()
            self.assertNotEqual(want, self.original)
            prefix = "%s-%d" % (self.prefix, i)
            self.s3.put_object(Bucket="flink", Key=prefix + "/_metadata", Body=self.original)
            rc, out, err = run(edit + ["--in-place", "s3://flink/" + prefix], self.env)
            self.assertEqual(rc, 0, err)
            got = self.s3.get_object(Bucket="flink", Key=prefix + "/_metadata")["Body"].read()
            self.assertEqual(got, want, edit)
            bak = self.s3.get_object(Bucket="flink", Key=prefix + "/_metadata.bak")["Body"].read()
            self.assertEqual(bak, self.original)

    def test_a_large_output_to_a_new_key_goes_multipart(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "_metadata")
            # The union state small: the output is nearly as large as the input.
            subprocess.run([GEN_INCIDENT, "--out", src, "--shape", "small-union",
                            "--target_size_mib", "12"], check=True, capture_output=True)
            local_out = os.path.join(d, "stripped")
            subprocess.run([FLINKSTATE, "strip-state", "--state", self.STATE, src, local_out],
                           check=True, capture_output=True)
            self.proxy.headers.clear()
            rc, out, err = run(["strip-state", "--state", self.STATE, src,
                                "s3://flink/%s/out/_metadata" % self.prefix],
                               dict(self.env, FLINKSTATE_S3_MULTIPART_THRESHOLD=str(6 << 20),
                                    FLINKSTATE_S3_PART_SIZE=str(5 << 20)))
            self.assertEqual(rc, 0, err)
            with open(local_out, "rb") as f:
                want = f.read()
            self.assertGreater(len(want), 10 << 20)
            self.assertEqual(self.get("out/_metadata"), want)
            self.assertEqual(self.keys(), ["_metadata", "out/_metadata"])
            # 5 MiB parts: the UploadPart requests the server saw.
            parts = [h for h in self.proxy.headers if "partNumber=" in h.get("_path", "")]
            self.assertEqual(len(parts), (len(want) + (5 << 20) - 1) // (5 << 20))

    def test_a_large_in_place_edit_copies_the_kept_ranges_server_side(self):
        # An incident-shaped _metadata whose union state is small: the edit
        # keeps nearly every byte. Above the multipart threshold the kept
        # ranges are UploadPartCopy parts of the original; only the parts
        # around the edits go up. The object equals the local edit's output,
        # the dry run counts what the write moved, and with part copies off
        # (FLINKSTATE_S3_PART_COPY=0) the whole output goes up again.
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "_metadata")
            # Two subtasks: two edits, 24 MiB apart.
            subprocess.run([GEN_INCIDENT, "--out", src, "--shape", "small-union",
                            "--parallelism", "2", "--target_size_mib", "48"],
                           check=True, capture_output=True)
            local_out = os.path.join(d, "stripped")
            subprocess.run([FLINKSTATE, "strip-state", "--state", self.STATE, src, local_out],
                           check=True, capture_output=True)
            with open(src, "rb") as f:
                original = f.read()
            with open(local_out, "rb") as f:
                want = f.read()
        url = "s3://flink/" + self.prefix
        self.s3.put_object(Bucket="flink", Key=self.prefix + "/_metadata", Body=original)
        env = {"FLINKSTATE_S3_MULTIPART_THRESHOLD": str(8 << 20), "FLINKSTATE_S3_STATS": "1"}
        rc, out, err = run(["strip-state", "--state", self.STATE, "--in-place", "--dry-run",
                            "--json", url], dict(self.env, **env))
        self.assertEqual(rc, 0, err)
        plan = json.loads(out)["writePlan"]
        part_copies = [s for s in plan["steps"] if s.get("sourceRange")]
        self.assertGreater(len(part_copies), 1)
        moved = {"upload": 0, "part_copy": 0}

        def count(method, path, headers, when):
            h = {k.lower(): v for k, v in headers.items()}
            if when != "before" or method != "PUT" or ".flinkstate-tmp-" not in path:
                return
            if "x-amz-copy-source-range" in h:
                self.assertEqual(h["x-amz-copy-source"], "/flink/%s/_metadata" % self.prefix)
                self.assertTrue(h.get("x-amz-copy-source-if-match"))
                a, b = h["x-amz-copy-source-range"][len("bytes="):].split("-")
                moved["part_copy"] += int(b) - int(a) + 1
            elif not path.split("?")[0].endswith(".probe"):
                moved["upload"] += int(h.get("content-length", 0))
        self.proxy.hook = count
        rc, out, err = self.strip(env)
        self.proxy.hook = None
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.keys(), ["_metadata", "_metadata.bak"])
        self.assertEqual(self.get("_metadata"), want)
        self.assertEqual(self.get("_metadata.bak"), original)
        m = re.search(r"s3: (\d+) requests, (\d+) bytes down, (\d+) bytes up, (\d+) retries, "
                      r"(\d+) bytes part-copied", err)
        self.assertIsNotNone(m, err)
        up, part_copied = int(m.group(3)), int(m.group(5))
        # Bytes up: a 5 MiB part (S3's minimum) around each of the 2 edits
        # and the journals, not the 48 MiB object.
        self.assertLess(up, len(want) // 4)
        self.assertEqual(moved["upload"] + moved["part_copy"], len(want))
        self.assertEqual(part_copied, moved["part_copy"])
        self.assertEqual(int(plan["uploadBytes"]), moved["upload"])
        self.assertEqual(sum(int(s["bytes"]) for s in part_copies), moved["part_copy"])
        self.assertEqual(int(plan["serverSideCopyBytes"]),
                         moved["part_copy"] + len(original) + len(want))
        # Part copies off: the plain upload of the whole output.
        self.s3.delete_object(Bucket="flink", Key=self.prefix + "/_metadata.bak")
        self.s3.put_object(Bucket="flink", Key=self.prefix + "/_metadata", Body=original)
        rc, out, err = self.strip(dict(env, FLINKSTATE_S3_PART_COPY="0"))
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.get("_metadata"), want)
        self.assertNotIn("part-copied", err)
        self.assertGreater(int(re.search(r"(\d+) bytes up", err).group(1)), len(want))

    def test_an_object_replaced_while_being_read_is_reported(self):
        with tempfile.TemporaryDirectory() as d:
            src = os.path.join(d, "_metadata")
            subprocess.run([GEN_INCIDENT, "--out", src, "--target_size_mib", "4"], check=True,
                           capture_output=True)
            key = self.prefix + "/big/_metadata"
            self.s3.upload_file(src, "flink", key)
            gets = []

            def replace_after_first_get(method, path, headers, when):
                rng = {k.lower(): v for k, v in headers.items()}.get("range", "")
                # The first range read after the head (the open and the
                # sniffing read bytes 0-64 KiB, served from the cache after).
                if (when == "after" and method == "GET" and path.startswith("/flink/" + key)
                        and not rng.startswith("bytes=0-")):
                    gets.append(path)
                    if len(gets) == 1:
                        self.s3.put_object(Bucket="flink", Key=key, Body=b"replaced")
            self.proxy.hook = replace_after_first_get
            # --json: one open, streamed (the text form opens twice, and its
            # second open would just read the new object).
            rc, _, err = run(["inspect", "--json", "s3://flink/" + key], self.env)
            self.proxy.hook = None
            self.assertEqual(rc, 1)
            self.assertIn("s3://flink/%s: GET: HTTP 412: the object changed since it was opened"
                          % key, err)


    # --- --dry-run of the single-file edits -------------------------------

    EDITS = [["strip-state", "--state", STATE],
             ["drop-operator", "--operator", "61252f73469d3ffba207c548d29a0267"],
             ["relocate", "--from", "file:/tmp/fsc2", "--to", "s3://flink/moved"],
             ["convert", "--to-version", "5"]]

    def source_of(self, edit):
        """The real-Flink _metadata an edit applies to: the incident
        checkpoint, for relocate one whose handles name files."""
        if edit[0] != "relocate":
            return self.local
        return sorted(glob.glob(os.path.join(TESTDATA, "flink-*", "rocksdb-incremental-checkpoint",
                                             "_metadata")))[-1]

    def listing(self):
        """Every object of the test's prefixes with its ETag, size and time."""
        r = self.s3.list_objects_v2(Bucket="flink", Prefix=self.prefix.split("/")[0] + "/")
        return sorted((o["Key"], o["ETag"], o["Size"], str(o["LastModified"]))
                      for o in r.get("Contents", []))

    def local_edit(self, i, edit):
        """The bytes the local command writes: the referee for sizes."""
        out = os.path.join(self.tmp.name, "dry-%d" % i)
        subprocess.run([FLINKSTATE] + edit + [self.source_of(edit), out], check=True,
                       capture_output=True)
        with open(out, "rb") as f:
            return f.read()

    def writes_seen(self):
        """Records every request that could change the store (at the proxy)."""
        seen = []

        def record(method, path, headers, when):
            if when == "before" and method in ("PUT", "POST", "DELETE"):
                seen.append((method, path))
        self.proxy.hook = record
        return seen

    def test_dry_run_writes_nothing_and_plans_the_objects(self):
        for i, edit in enumerate(self.EDITS):
            want = self.local_edit(i, edit)
            with open(self.source_of(edit), "rb") as f:
                original = f.read()
            prefix = "%s/edit-%d" % (self.prefix, i)
            self.s3.put_object(Bucket="flink", Key=prefix + "/_metadata", Body=original)
            target = "s3://flink/%s/_metadata" % prefix
            for in_place in (True, False):
                out_url = "s3://flink/%s/out/_metadata" % prefix
                args = (edit + ["--dry-run", "--in-place", "s3://flink/" + prefix]
                        if in_place else edit + ["--dry-run", "s3://flink/" + prefix, out_url])
                written = target if in_place else out_url
                before = self.listing()
                seen = self.writes_seen()
                rc, out, err = run(args + ["--json"], self.env)
                rc2, text, err2 = run(args, self.env)
                self.proxy.hook = None
                with self.subTest(edit=edit[0], in_place=in_place):
                    self.assertEqual((rc, rc2), (0, 0), err + err2)
                    self.assertEqual(seen, [])
                    self.assertEqual(self.listing(), before)
                    rep = json.loads(out)
                    self.assertTrue(rep["dryRun"])
                    self.assertFalse(rep["verified"])
                    p = rep["writePlan"]
                    self.assertEqual(int(p["outputBytes"]), len(want))
                    self.assertEqual(int(p["uploadBytes"]), len(want))
                    self.assertEqual(int(p["readBackBytes"]), len(want))
                    # The backup copy of the original (in place), the output
                    # copied over the target: both server-side.
                    self.assertEqual(int(p["serverSideCopyBytes"]),
                                     len(want) + (len(original) if in_place else 0))
                    self.assertEqual(p["problems"], [])
                    steps = [(s["action"], s["object"], s["source"], int(s["bytes"]))
                             for s in p["steps"]]
                    temp = written + ".flinkstate-tmp-<token>"
                    self.assertIn(("upload", temp, "", len(want)), steps)
                    self.assertIn(("server-side copy", written, temp, len(want)), steps)
                    backup = ("server-side copy", target + ".bak", target, len(original))
                    self.assertEqual(backup in steps, in_place)
                    self.assertIn("upload %s (%d B)" % (temp, len(want)), text)
                    self.assertIn("dry run, nothing written", text)
                    if in_place:
                        self.assertIn("%s.bak <- %s (%d B)" % (target, target, len(original)),
                                      text)

    def test_dry_run_names_what_would_refuse_the_write(self):
        self.s3.put_object(Bucket="flink", Key=self.prefix + "/_metadata.bak", Body=b"older")
        before = self.listing()
        rc, out, err = run(self.EDITS[0] + ["--dry-run", "--in-place",
                                            "s3://flink/" + self.prefix], self.env)
        # Exit 1, as the write: a dry run whose write would be refused says so. The backup
        # is not what an earlier run of the edit left (it is no checkpoint), so the refusal
        # comes before any plan, as for a local file, and says why.
        self.assertEqual(rc, 1, err)
        self.assertIn("s3://flink/%s/_metadata.bak exists already" % self.prefix, err)
        self.assertIn("it is not what an earlier run of this command left", err)
        self.assertEqual(self.listing(), before)
        # As the real run says.
        rc, _, err = self.strip()
        self.assertEqual(rc, 1)
        self.assertIn("_metadata.bak exists already", err)

    def test_dry_run_transfer_equals_what_the_write_moved(self):
        rc, out, err = run(self.EDITS[0] + ["--dry-run", "--json", "--in-place",
                                            "s3://flink/" + self.prefix], self.env)
        self.assertEqual(rc, 0, err)
        p = json.loads(out)["writePlan"]
        moved = {"upload": 0, "read_back": 0, "copy": 0}
        sizes = {self.prefix + "/_metadata": len(self.original)}

        def count(method, path, headers, when):
            if when != "before":
                return
            h = {k.lower(): v for k, v in headers.items()}
            key = path.split("?")[0][len("/flink/"):]
            if method == "PUT" and "x-amz-copy-source" in h and key.endswith(".probe"):
                return  # the conditional-copy probe (the journal's few hundred bytes)
            if method == "PUT" and "x-amz-copy-source-range" in h:
                # A part copy of the original (UploadPartCopy): its range.
                a, b = h["x-amz-copy-source-range"][len("bytes="):].split("-")
                moved["copy"] += int(b) - int(a) + 1
            elif method == "PUT" and "x-amz-copy-source" in h:
                src = h["x-amz-copy-source"][len("/flink/"):]
                moved["copy"] += (len(self.stripped) if ".flinkstate-tmp-" in src
                                  else sizes[src])
            elif method == "PUT" and ".flinkstate-tmp-" in key and not key.endswith(".probe"):
                moved["upload"] += int(h.get("content-length", 0))
            elif method == "GET" and ".flinkstate-tmp-" in key:
                a, b = h["range"][len("bytes="):].split("-")
                moved["read_back"] += int(b) - int(a) + 1
        self.proxy.hook = count
        rc, _, err = self.strip()
        self.proxy.hook = None
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.get("_metadata"), self.stripped)
        self.assertEqual(int(p["uploadBytes"]), moved["upload"])
        self.assertEqual(int(p["readBackBytes"]), moved["read_back"])
        self.assertEqual(int(p["serverSideCopyBytes"]), moved["copy"])
        self.assertEqual(moved["upload"], len(self.stripped))


class S3RelocateTest(unittest.TestCase):
    """`relocate` of a checkpoint's _metadata in the store: the expected paths
    are computed from what real Flink read from the input (the case's
    facts.json, harness.sh verify), never from our output."""

    @classmethod
    def setUpClass(cls):
        cls.moto = Moto()
        cls.s3 = s3_client(cls.moto.url)
        cls.s3.create_bucket(Bucket="flink")
        cls.env = base_env(cls.moto.url)
        cls.case = os.path.dirname(sorted(glob.glob(os.path.join(
            TESTDATA, "flink-*", "rocksdb-incremental-checkpoint", "_metadata")))[-1])
        with open(os.path.join(cls.case, "_metadata"), "rb") as f:
            cls.original = f.read()
        with open(os.path.join(cls.case, "facts.json")) as f:
            cls.facts = json.load(f)
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.moto.stop()
        cls.tmp.cleanup()

    @staticmethod
    def handle_paths(report):
        """(operator, subtask, handle position) -> sorted paths."""
        out = {}
        for op in report["operators"]:
            for st in op["subtasks"]:
                for i, h in enumerate(st["handles"]):
                    out[(op["operatorId"], st["index"], i)] = sorted(h["paths"])
        return out

    @staticmethod
    def java_utf(text):
        """DataOutputStream.writeUTF of an ASCII path: u2 length, bytes."""
        b = text.encode("ascii")
        return struct.pack(">H", len(b)) + b

    def check_relocated(self, url, old_root, new_root, want):
        """Downloads `url`, checks its handles' paths are `want` and that no
        path under `old_root` is left in its bytes."""
        bucket, key = url[len("s3://"):].split("/", 1)
        data = self.s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        local = os.path.join(self.tmp.name, key.replace("/", "_"))
        with open(local, "wb") as f:
            f.write(data)
        rc, out, err = run(["inspect", "--json", local], self.env)
        self.assertEqual(rc, 0, err)
        self.assertEqual(self.handle_paths(json.loads(out)), want)
        for paths in want.values():
            for p in paths:
                self.assertIn(self.java_utf(p), data, p)
                if p.startswith(new_root + "/"):
                    self.assertNotIn(self.java_utf(old_root + p[len(new_root):]), data)
        rc, out, err = run(["verify", url], self.env)
        self.assertEqual(rc, 0, err + out)

    def test_relocate_of_a_remote_metadata_rewrites_every_path(self):
        before = self.handle_paths(self.facts)
        absolute = [p for ps in before.values() for p in ps if p.startswith("file:/")]
        self.assertGreater(len(absolute), 3)
        # The job's checkpoint directory as Flink named it,
        # file:/.../checkpoints/<job id> (the files are below it, in shared/).
        job_root = re.match(r"(file:/.*/checkpoints/[0-9a-f]{32})/",
                            os.path.commonprefix(absolute)).group(1)

        def moved(paths, old, new):
            return {k: sorted(new + p[len(old):] if p.startswith(old + "/") else p for p in ps)
                    for k, ps in paths.items()}
        key = "rocks/job/chk-6/_metadata"
        self.s3.put_object(Bucket="flink", Key=key, Body=self.original)
        # 1. From the local disk into the bucket, in place.
        a, b = "s3://flink/a/job", "s3://flink/b/job"
        rc, out, err = run(["relocate", "--from", job_root, "--to", a, "--in-place",
                            "s3://flink/rocks/job/chk-6"], self.env)
        self.assertEqual(rc, 0, err)
        self.assertIn("%d paths relocated" % len(absolute), out)
        in_a = moved(before, job_root, a)
        self.check_relocated("s3://flink/" + key, job_root, a, in_a)
        self.assertEqual(self.s3.get_object(Bucket="flink", Key=key + ".bak")["Body"].read(),
                         self.original)
        # 2. Bucket prefix to bucket prefix, to a new key.
        out_url = "s3://flink/rocks-b/job/chk-6/_metadata"
        rc, out, err = run(["relocate", "--from", a, "--to", b, "s3://flink/" + key, out_url],
                           self.env)
        self.assertEqual(rc, 0, err)
        self.assertIn("%d paths relocated" % len(absolute), out)
        self.check_relocated(out_url, a, b, moved(in_a, a, b))
        self.assertEqual(moved(in_a, a, b), moved(before, job_root, b))


class S3AuthTest(unittest.TestCase):
    """moto with IAM authentication: signatures are checked."""

    @classmethod
    def setUpClass(cls):
        import boto3
        # Unauthenticated set-up actions: user, key, user policy.
        cls.moto = Moto(auth_free_actions=3)
        iam = boto3.client("iam", endpoint_url=cls.moto.url, region_name="us-east-1",
                           aws_access_key_id="setup", aws_secret_access_key="setup")
        iam.create_user(UserName="operator")
        key = iam.create_access_key(UserName="operator")["AccessKey"]
        allow = json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "Action": "*", "Resource": "*"}]})
        iam.put_user_policy(UserName="operator", PolicyName="all", PolicyDocument=allow)
        cls.key, cls.secret = key["AccessKeyId"], key["SecretAccessKey"]
        s3 = s3_client(cls.moto.url, cls.key, cls.secret)
        s3.create_bucket(Bucket="flink")
        cls.local = sorted(glob.glob(os.path.join(TESTDATA, "flink-*", "incident-gen3-checkpoint",
                                                  "_metadata")))[-1]
        s3.upload_file(cls.local, "flink", "job/chk-9/_metadata")

    @classmethod
    def tearDownClass(cls):
        cls.moto.stop()

    def test_signed_requests_are_accepted(self):
        rc, out, err = run(["inspect", "s3://flink/job/chk-9"],
                           base_env(self.moto.url, self.key, self.secret))
        self.assertEqual(rc, 0, err)
        self.assertIn("Flink _metadata (format version", out)

    def test_wrong_credentials(self):
        rc, _, err = run(["inspect", "s3://flink/job/chk-9/_metadata"],
                         base_env(self.moto.url, self.key, "not-the-secret"))
        self.assertEqual(rc, 1)
        self.assertIn("s3://flink/job/chk-9/_metadata: HEAD: HTTP 403 SignatureDoesNotMatch", err)
        self.assertIn("credentials: environment (AWS_ACCESS_KEY_ID)", err)
        rc, _, err = run(["inspect", "s3://flink/job/chk-9/_metadata"],
                         base_env(self.moto.url, "AKIANOSUCHKEY", "x"))
        self.assertEqual(rc, 1)
        self.assertIn("HTTP 403 InvalidAccessKeyId", err)

    def test_profiles_from_the_shared_files(self):
        with tempfile.TemporaryDirectory() as home:
            os.makedirs(os.path.join(home, ".aws"))
            with open(os.path.join(home, ".aws", "credentials"), "w") as f:
                f.write("[default]\naws_access_key_id = wrong\naws_secret_access_key = x\n"
                        "[ops]\naws_access_key_id = %s\naws_secret_access_key = %s\n" %
                        (self.key, self.secret))
            with open(os.path.join(home, ".aws", "config"), "w") as f:
                f.write("[profile ops]\nregion = us-east-1\nendpoint_url = %s\n" % self.moto.url)
            env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
            env.update({"HOME": home, "AWS_PROFILE": "ops"})
            rc, out, err = run(["inspect", "s3://flink/job/chk-9"], env)
            self.assertEqual(rc, 0, err)
            env["AWS_PROFILE"] = "default"
            rc, _, err = run(["inspect", "--s3-endpoint", self.moto.url, "s3://flink/job/chk-9"],
                             env)
            self.assertEqual(rc, 1)
            self.assertIn("InvalidAccessKeyId", err)
            self.assertIn(".aws/credentials [default]", err)


def incident_pair():
    """The newest release's incident checkpoint and its HA completedCheckpoint
    (both written by real Flink for checkpoint 9), with Flink's keys."""
    index = sorted(glob.glob(os.path.join(TESTDATA, "flink-*", "incident-gen3-checkpoint",
                                          "_metadata")))[-1]
    rel_dir = os.path.dirname(os.path.dirname(index))
    with open(os.path.join(rel_dir, "INDEX.tsv")) as f:
        rows = {r["case"]: r for r in csv.DictReader(f, delimiter="\t")}
    meta_key = rows["incident-gen3-checkpoint"]["source"]  # .../checkpoints/<job>/chk-9/_metadata
    ha_name = os.path.basename(rows["incident-gen3-completedCheckpoint"]["source"])
    return (index, os.path.join(rel_dir, "incident-gen3-completedCheckpoint", ha_name),
            os.path.dirname(meta_key), ha_name)


class S3RepairTest(unittest.TestCase):
    """`repair` of a whole job in the store: _metadata and the HA file as one
    object transaction (object_transaction.h CommitObjects)."""

    STATE = "topic-partition-offset-states"

    @classmethod
    def setUpClass(cls):
        cls.moto = Moto()
        cls.proxy = FaultProxy(cls.moto.port)
        cls.s3 = s3_client(cls.moto.url)
        cls.s3.create_bucket(Bucket="flink")
        cls.meta, cls.ha, cls.chk_key, cls.ha_name = incident_pair()
        with open(cls.meta, "rb") as f:
            cls.meta_bytes = f.read()
        with open(cls.ha, "rb") as f:
            cls.ha_bytes = f.read()
        # The referee for the bytes: the local repair of the same files, laid
        # out alike (its outputs are what the conformance suite restores).
        cls.tmp = tempfile.TemporaryDirectory()
        chk = os.path.join(cls.tmp.name, cls.chk_key)
        ha = os.path.join(cls.tmp.name, "ha", "default")
        os.makedirs(chk)
        os.makedirs(ha)
        with open(os.path.join(chk, "_metadata"), "wb") as f:
            f.write(cls.meta_bytes)
        with open(os.path.join(ha, cls.ha_name), "wb") as f:
            f.write(cls.ha_bytes)
        subprocess.run([FLINKSTATE, "repair", "--state", cls.STATE, "--ha-dir", ha, "--apply",
                        chk], check=True, capture_output=True)
        with open(os.path.join(chk, "_metadata"), "rb") as f:
            cls.want_meta = f.read()
        with open(os.path.join(ha, cls.ha_name), "rb") as f:
            cls.want_ha = f.read()
        assert cls.want_meta != cls.meta_bytes and cls.want_ha != cls.ha_bytes
        cls.env = base_env(cls.proxy.url)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.moto.stop()
        cls.tmp.cleanup()

    def setUp(self):
        self.proxy.hook = None
        self.root = "t-%s" % self.id().split(".")[-1]
        self.chk = "%s/%s" % (self.root, self.chk_key)
        self.ha_dir = "%s/ha/default" % self.root
        self.s3.put_object(Bucket="flink", Key=self.chk + "/_metadata", Body=self.meta_bytes)
        self.s3.put_object(Bucket="flink", Key="%s/%s" % (self.ha_dir, self.ha_name),
                           Body=self.ha_bytes)

    def keys(self):
        r = self.s3.list_objects_v2(Bucket="flink", Prefix=self.root + "/")
        return sorted(o["Key"][len(self.root) + 1:] for o in r.get("Contents", []))

    def get(self, key):
        return self.s3.get_object(Bucket="flink", Key=key)["Body"].read()

    def repair(self, *extra, env=None):
        return run(["repair", "--state", self.STATE, "--ha-dir", "s3://flink/" + self.ha_dir]
                   + list(extra) + ["s3://flink/" + self.chk], env or self.env)

    def originals(self):
        return sorted([self.chk_key + "/_metadata", "ha/default/" + self.ha_name])

    def repaired(self):
        return sorted(self.originals() + [self.chk_key + "/_metadata.bak",
                                          "ha/default/%s.bak" % self.ha_name])

    def assert_repaired(self):
        self.assertEqual(self.keys(), self.repaired())
        self.assertEqual(self.get(self.chk + "/_metadata"), self.want_meta)
        self.assertEqual(self.get("%s/%s" % (self.ha_dir, self.ha_name)), self.want_ha)
        self.assertEqual(self.get(self.chk + "/_metadata.bak"), self.meta_bytes)
        self.assertEqual(self.get("%s/%s.bak" % (self.ha_dir, self.ha_name)), self.ha_bytes)

    def test_dry_run_then_apply_equals_the_local_repair(self):
        rc, out, err = self.repair()
        self.assertEqual(rc, 0, err)
        self.assertIn("s3://flink/%s/_metadata (metadata, checkpoint 9)" % self.chk, out)
        self.assertIn("s3://flink/%s/%s (completedCheckpoint, checkpoint 9)"
                      % (self.ha_dir, self.ha_name), out)
        self.assertIn("dry run, nothing written", out)
        self.assertEqual(self.keys(), self.originals())
        rc, out, err = self.repair("--apply")
        self.assertEqual(rc, 0, err)
        self.assertIn("repaired 2 file(s)", out)
        self.assertIn("s3://flink/%s/_metadata.bak" % self.chk, out)
        self.assert_repaired()
        for key in (self.chk, "%s/%s" % (self.ha_dir, self.ha_name)):
            rc, out, err = run(["verify", "s3://flink/" + key], self.env)
            self.assertEqual(rc, 0, err + out)
        # Again: nothing left to strip, nothing written.
        rc, out, err = self.repair("--apply")
        self.assertEqual(rc, 0, err)
        self.assertIn("nothing to strip", out)
        self.assert_repaired()

    def test_dry_run_transfer_equals_what_apply_moved(self):
        rc, out, err = self.repair("--json")
        self.assertEqual(rc, 0, err)
        plan = json.loads(out)
        self.assertEqual(self.keys(), self.originals())
        rc, text, err = self.repair()
        self.assertEqual(rc, 0, err)
        self.assertIn("transfer in all: upload ", text)
        self.assertIn("backup s3://flink/%s/_metadata.bak (%d B)" % (self.chk, len(self.meta_bytes)),
                      text)
        # What the apply moves, counted at the proxy in front of moto.
        moved = {"upload": 0, "read_back": 0, "copy": 0}
        outputs = {self.chk + "/_metadata": len(self.want_meta),
                   "%s/%s" % (self.ha_dir, self.ha_name): len(self.want_ha)}
        originals = {self.chk + "/_metadata": len(self.meta_bytes),
                     "%s/%s" % (self.ha_dir, self.ha_name): len(self.ha_bytes)}

        def count(method, path, headers, when):
            if when != "before":
                return
            h = {k.lower(): v for k, v in headers.items()}
            key = path.split("?")[0][len("/flink/"):]
            if method == "PUT" and "x-amz-copy-source" in h and key.endswith(".probe"):
                return  # the conditional-copy probes (a journal's few hundred bytes)
            if method == "PUT" and "x-amz-copy-source" in h:
                src = h["x-amz-copy-source"][len("/flink/"):]
                base = src.split(".flinkstate-tmp-")[0]
                moved["copy"] += outputs[base] if ".flinkstate-tmp-" in src else originals[src]
            elif method == "PUT" and ".flinkstate-tmp-" in key and not key.endswith(".probe"):
                moved["upload"] += int(h.get("content-length", 0))
            elif method == "GET" and ".flinkstate-tmp-" in key:
                a, b = h["range"][len("bytes="):].split("-")
                moved["read_back"] += int(b) - int(a) + 1
        self.proxy.hook = count
        rc, out, err = self.repair("--apply", "--json")
        self.proxy.hook = None
        self.assertEqual(rc, 0, err)
        self.assert_repaired()
        want = plan["transfer"]
        self.assertEqual(int(want["uploadBytes"]), moved["upload"])
        self.assertEqual(int(want["readBackBytes"]), moved["read_back"])
        self.assertEqual(int(want["serverSideCopyBytes"]), moved["copy"])
        self.assertEqual(moved["upload"], len(self.want_meta) + len(self.want_ha))
        # The client's own counters agree.
        done = json.loads(out)["transferred"]
        self.assertEqual(int(done["uploadBytes"]), moved["upload"])
        self.assertEqual(int(done["readBackBytes"]), moved["read_back"])
        self.assertEqual(int(done["serverSideCopyBytes"]), moved["copy"])
        per_file = sum(int(f["transfer"]["uploadBytes"]) for f in plan["files"])
        self.assertEqual(per_file, moved["upload"])

    def test_deep_repair_equals_the_local_deep_repair(self):
        # The referee for the bytes: `repair --deep` of the same files laid out
        # locally (the outputs the conformance suite has Flink load and recover).
        with tempfile.TemporaryDirectory() as tmp:
            chk = os.path.join(tmp, self.chk_key)
            ha = os.path.join(tmp, "ha", "default")
            os.makedirs(chk)
            os.makedirs(ha)
            with open(os.path.join(chk, "_metadata"), "wb") as f:
                f.write(self.meta_bytes)
            with open(os.path.join(ha, self.ha_name), "wb") as f:
                f.write(self.ha_bytes)
            subprocess.run([FLINKSTATE, "repair", "--deep", "--state", self.STATE, "--ha-dir", ha,
                            "--apply", chk], check=True, capture_output=True)
            with open(os.path.join(chk, "_metadata"), "rb") as f:
                want_meta = f.read()
            with open(os.path.join(ha, self.ha_name), "rb") as f:
                want_ha = f.read()
        # Deeper than the plain repair: the streams lose the state too.
        self.assertLess(len(want_meta), len(self.want_meta))
        self.assertLess(len(want_ha), len(self.want_ha))
        rc, out, err = self.repair("--deep", "--json")
        self.assertEqual(rc, 0, err)
        plan = json.loads(out)
        self.assertTrue(plan["deep"])
        self.assertEqual([f["metaInfosRemoved"] for f in plan["files"]], ["4", "4"])
        self.assertEqual(self.keys(), self.originals())
        rc, out, err = self.repair("--deep", "--apply")
        self.assertEqual(rc, 0, err)
        self.assertIn("repaired 2 file(s)", out)
        self.assertEqual(self.keys(), self.repaired())
        self.assertEqual(self.get(self.chk + "/_metadata"), want_meta)
        self.assertEqual(self.get("%s/%s" % (self.ha_dir, self.ha_name)), want_ha)
        self.assertEqual(self.get(self.chk + "/_metadata.bak"), self.meta_bytes)
        self.assertEqual(self.get("%s/%s.bak" % (self.ha_dir, self.ha_name)), self.ha_bytes)
        rc, out, err = self.repair("--deep", "--apply")
        self.assertEqual(rc, 0, err)
        self.assertIn("nothing to strip", out)

    def test_deep_strip_of_a_remote_ha_file_equals_the_local_one(self):
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "deep")
            subprocess.run([FLINKSTATE, "strip-state", "--deep", "--state", self.STATE, self.ha, out],
                           check=True, capture_output=True)
            with open(out, "rb") as f:
                want = f.read()
        ha_key = "%s/%s" % (self.ha_dir, self.ha_name)
        rc, text, err = run(["strip-state", "--deep", "--state", self.STATE, "s3://flink/" + ha_key,
                             "s3://flink/%s/deep" % self.root], self.env)
        self.assertEqual(rc, 0, err)
        self.assertIn("of completedCheckpoint 9", text)
        self.assertEqual(self.get("%s/deep" % self.root), want)
        self.assertEqual(self.get(ha_key), self.ha_bytes)

    def test_ha_dir_one_level_too_high_names_the_right_one(self):
        rc, _, err = run(["repair", "--state", self.STATE, "--ha-dir",
                          "s3://flink/%s/ha" % self.root, "s3://flink/" + self.chk], self.env)
        self.assertEqual(rc, 1)
        self.assertIn("holds no completedCheckpoint files; they are in s3://flink/%s"
                      % self.ha_dir, err)

    def test_mixed_local_and_remote_is_a_usage_error(self):
        rc, _, err = run(["repair", "--state", self.STATE, "--ha-dir", self.tmp.name,
                          "s3://flink/" + self.chk], self.env)
        self.assertEqual(rc, 2, err)
        self.assertIn("all be s3:// or all be local", err)

    def test_a_concurrent_change_of_an_original_is_refused(self):
        ha_key = "%s/%s" % (self.ha_dir, self.ha_name)
        concurrent = self.ha_bytes[:-1] + b"\x00"

        def flink_writes_meanwhile(method, path, headers, when):
            # While the HA file's output is uploaded, the JobManager writes
            # the original again.
            if (when == "before" and method == "PUT" and ".flinkstate-tmp-" in path
                    and self.ha_name in path):
                self.s3.put_object(Bucket="flink", Key=ha_key, Body=concurrent)
        self.proxy.hook = flink_writes_meanwhile
        rc, _, err = self.repair("--apply")
        self.proxy.hook = None
        self.assertEqual(rc, 1)
        self.assertIn("s3://flink/%s was changed by someone else" % ha_key, err)
        self.assertIn("nothing was replaced", err)
        self.assertEqual(self.keys(), self.originals())
        self.assertEqual(self.get(ha_key), concurrent)
        self.assertEqual(self.get(self.chk + "/_metadata"), self.meta_bytes)

    def kill_at(self, pick):
        """Runs `repair --apply`, SIGKILLed when `pick(method, path, copy,
        when)` first says so (the request then never reaches the server if
        when == "before"), then reruns it."""
        procs = []

        def kill(method, path, headers, when):
            copy = "x-amz-copy-source" in {k.lower() for k in headers}
            if procs and procs[0].returncode is None and pick(method, path.split("?")[0], copy,
                                                              when):
                procs[0].kill()
                procs[0].wait()
                return True
        self.proxy.hook = kill
        p = subprocess.Popen([FLINKSTATE, "repair", "--state", self.STATE, "--ha-dir",
                              "s3://flink/" + self.ha_dir, "--apply", "s3://flink/" + self.chk],
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(p)
        p.communicate(timeout=120)
        self.proxy.hook = None
        self.assertEqual(p.returncode, -9)
        left = self.keys()
        self.assertTrue(any(".flinkstate-txn-" in k for k in left), left)
        rc, out, err = self.repair("--apply")
        self.assertEqual(rc, 0, err + out)
        self.assert_repaired()
        return out

    def test_killed_before_the_commit_rerun_rolls_back_and_repairs(self):
        # At the HA file's backup copy: outputs uploaded, one backup made.
        ha_backup = "/flink/%s/%s.bak" % (self.ha_dir, self.ha_name)
        out = self.kill_at(lambda m, p, copy, w: w == "before" and m == "PUT" and copy
                           and p == ha_backup)
        self.assertIn("recovered: removed s3://flink/%s/_metadata.bak" % self.chk, out)
        self.assertIn("1 rolled back", out)

    def test_killed_after_the_first_copy_rerun_completes(self):
        # After the commit point, between the two copies over the targets.
        meta = "/flink/%s/_metadata" % self.chk
        out = self.kill_at(lambda m, p, copy, w: w == "after" and m == "PUT" and copy
                           and p == meta)
        self.assertIn("recovered: completed s3://flink/%s/%s from" % (self.ha_dir, self.ha_name),
                      out)
        self.assertIn("1 completed, 0 rolled back", out)
        self.assertIn("nothing to strip", out)

    def kill_then_other_command(self, pick):
        """`repair --apply` SIGKILLed when `pick` says, then another command
        that writes in the checkpoint directory (strip-state --in-place of
        another state name, new backup suffix) runs the recovery."""
        procs = []

        def kill(method, path, headers, when):
            copy = "x-amz-copy-source" in {k.lower() for k in headers}
            if procs and procs[0].returncode is None and pick(method, path.split("?")[0], copy,
                                                              when):
                procs[0].kill()
                procs[0].wait()
                return True
        self.proxy.hook = kill
        p = subprocess.Popen([FLINKSTATE, "repair", "--state", self.STATE, "--ha-dir",
                              "s3://flink/" + self.ha_dir, "--apply", "s3://flink/" + self.chk],
                             env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(p)
        p.communicate(timeout=120)
        self.proxy.hook = None
        self.assertEqual(p.returncode, -9)
        rc, out, err = run(["strip-state", "--state", "no-such-state", "--in-place",
                            "--backup-suffix", ".other", "s3://flink/" + self.chk], self.env)
        return err

    def test_a_repair_killed_after_the_commit_is_completed_by_another_command(self):
        # D13: the recovery of a single-object command completes a committed
        # repair (it used to fail on the repair's journal, or roll back).
        meta = "/flink/%s/_metadata" % self.chk
        err = self.kill_then_other_command(lambda m, p, copy, w: w == "after" and m == "PUT"
                                           and copy and p == meta)
        self.assertIn("completed s3://flink/%s/%s from" % (self.ha_dir, self.ha_name), err)
        self.assertFalse([k for k in self.keys() if ".flinkstate-" in k], self.keys())
        self.assertEqual(self.get(self.chk + "/_metadata"), self.want_meta)
        self.assertEqual(self.get("%s/%s" % (self.ha_dir, self.ha_name)), self.want_ha)
        self.assertEqual(self.get(self.chk + "/_metadata.bak"), self.meta_bytes)
        self.assertEqual(self.get("%s/%s.bak" % (self.ha_dir, self.ha_name)), self.ha_bytes)

    def test_a_repair_killed_before_the_commit_is_rolled_back_by_another_command(self):
        ha_backup = "/flink/%s/%s.bak" % (self.ha_dir, self.ha_name)
        self.kill_then_other_command(lambda m, p, copy, w: w == "before" and m == "PUT" and copy
                                     and p == ha_backup)
        self.assertFalse([k for k in self.keys() if ".flinkstate-" in k], self.keys())
        self.assertEqual(self.get(self.chk + "/_metadata"), self.meta_bytes)
        self.assertEqual(self.get("%s/%s" % (self.ha_dir, self.ha_name)), self.ha_bytes)
        self.assertEqual(sorted(self.keys()), sorted(self.originals()))


def corpus_state_files_checkpoint():
    """A real Flink 1.17 checkpoint whose operator state lies in relative state files (the
    corpus's hashmap checkpoint of the new-stateful-udf migration test)."""
    src = os.path.join(TESTDATA, "..", "..", "..", "shared", "corpus", "CosmicBeing09__flink",
                       "flink-tests", "src", "test", "resources",
                       "new-stateful-udf-migration-itcase-flink1.17-hashmap-checkpoint")
    if not os.path.isdir(src):
        raise RuntimeError("corpus checkpoint missing: " + src)
    return src


class S3DeepStateFilesTest(unittest.TestCase):
    """`repair --deep` and `strip-state --deep` of a checkpoint in the store whose operator state
    lies in state files: the new state files are new objects of the object transaction
    (object_transaction.h, ObjectChange::create). The referee for the bytes is the same command
    on a local copy laid out alike (conformance/restore_deep_stripped_files.sh has real Flink
    restore those outputs; conformance/restore_deep_repaired_s3.py has it recover a job repaired
    in the store)."""

    STATE = "source-state"

    @classmethod
    def setUpClass(cls):
        cls.moto = Moto()
        cls.proxy = FaultProxy(cls.moto.port)
        cls.s3 = s3_client(cls.moto.url)
        cls.s3.create_bucket(Bucket="flink")
        cls.src = corpus_state_files_checkpoint()
        cls.files = {}
        for n in sorted(os.listdir(cls.src)):
            with open(os.path.join(cls.src, n), "rb") as f:
                cls.files[n] = f.read()
        cls.tmp = tempfile.TemporaryDirectory()
        # The local referee: repair --deep --apply of a copy.
        local = os.path.join(cls.tmp.name, "job", "chk-3")
        os.makedirs(local)
        for n, data in cls.files.items():
            with open(os.path.join(local, n), "wb") as f:
                f.write(data)
        subprocess.run([FLINKSTATE, "repair", "--deep", "--apply", "--state", cls.STATE, local],
                       check=True, capture_output=True)
        cls.want = {}
        for n in os.listdir(local):
            with open(os.path.join(local, n), "rb") as f:
                cls.want[n] = f.read()
        cls.new_names = sorted(set(cls.want) - set(cls.files) - {"_metadata.bak"})
        assert len(cls.new_names) == 2, cls.want.keys()
        assert cls.want["_metadata"] != cls.files["_metadata"]
        cls.env = base_env(cls.proxy.url)

    @classmethod
    def tearDownClass(cls):
        cls.proxy.stop()
        cls.moto.stop()
        cls.tmp.cleanup()

    def setUp(self):
        self.proxy.hook = None
        self.root = "t-%s" % self.id().split(".")[-1]
        self.chk = "%s/job/chk-3" % self.root
        for n, data in self.files.items():
            self.s3.put_object(Bucket="flink", Key="%s/%s" % (self.chk, n), Body=data)

    def keys(self):
        r = self.s3.list_objects_v2(Bucket="flink", Prefix=self.root + "/")
        return sorted(o["Key"][len(self.chk) + 1:] for o in r.get("Contents", []))

    def get(self, name):
        return self.s3.get_object(Bucket="flink", Key="%s/%s" % (self.chk, name))["Body"].read()

    def repair(self, *extra):
        return run(["repair", "--deep", "--state", self.STATE] + list(extra) +
                   ["s3://flink/" + self.chk], self.env)

    def assert_repaired(self):
        self.assertEqual(self.keys(), sorted(self.want))
        for n, data in self.want.items():
            self.assertEqual(self.get(n), data, n)

    def test_repair_writes_the_new_state_files_as_new_objects(self):
        rc, out, err = self.repair("--json")
        self.assertEqual(rc, 0, err)
        plan = json.loads(out)
        planned = sorted(f["path"] for f in plan["files"][0]["newStateFiles"])
        self.assertEqual(planned, ["s3://flink/%s/%s" % (self.chk, n) for n in self.new_names])
        self.assertEqual(self.keys(), sorted(self.files))  # a dry run writes nothing
        # What the apply moves, counted at the proxy in front of moto.
        moved = {"upload": 0, "read_back": 0}

        def count(method, path, headers, when):
            key = path.split("?")[0][len("/flink/"):]
            h = {k.lower(): v for k, v in headers.items()}
            if when != "before" or ".flinkstate-tmp-" not in key or key.endswith(".probe"):
                return
            if method == "PUT" and "x-amz-copy-source" not in h:
                moved["upload"] += int(h.get("content-length", 0))
            elif method == "GET":
                a, b = h["range"][len("bytes="):].split("-")
                moved["read_back"] += int(b) - int(a) + 1
        self.proxy.hook = count
        rc, out, err = self.repair("--apply")
        self.proxy.hook = None
        self.assertEqual(rc, 0, err)
        for n in self.new_names:
            self.assertIn("wrote new state file s3://flink/%s/%s (8 B), verified" % (self.chk, n),
                          out)
        self.assert_repaired()
        self.assertEqual(int(plan["transfer"]["uploadBytes"]), moved["upload"])
        self.assertEqual(int(plan["transfer"]["readBackBytes"]), moved["read_back"])
        self.assertEqual(moved["upload"],
                         len(self.want["_metadata"]) + sum(len(self.want[n])
                                                           for n in self.new_names))
        # The remote streams read as the local ones: the state is gone from both files.
        rc, out, err = run(["state", "--json", "s3://flink/%s/_metadata" % self.chk], self.env)
        self.assertEqual(rc, 0, err)
        self.assertNotIn('"%s"' % self.STATE, out)
        rc, out, err = self.repair("--apply")
        self.assertEqual(rc, 0, err)
        self.assertIn("nothing to strip", out)
        self.assert_repaired()

    def test_strip_state_deep_in_place_writes_the_new_objects(self):
        rc, out, err = run(["strip-state", "--deep", "--state", self.STATE, "--in-place",
                            "s3://flink/%s/_metadata" % self.chk], self.env)
        self.assertEqual(rc, 0, err)
        # The same bytes as repair --deep writes locally, and no key of the transaction left.
        self.assert_repaired()
        for n in self.new_names:
            self.assertIn("wrote new state file s3://flink/%s/%s (8 B), verified" % (self.chk, n),
                          out)

    def test_strip_state_deep_in_place_rerun_has_nothing_to_do(self):
        args = ["strip-state", "--deep", "--state", self.STATE, "--in-place",
                "s3://flink/%s/_metadata" % self.chk]
        rc, out, err = run(args, self.env)
        self.assertEqual(rc, 0, err)
        keys = self.keys()
        rc, out, err = run(args, self.env)
        self.assertEqual(rc, 0, err)
        self.assertIn("nothing to do: s3://flink/%s/_metadata holds" % self.chk, out)
        self.assertEqual(self.keys(), keys)
        self.assert_repaired()

    def test_strip_state_deep_dry_run_plans_the_new_objects(self):
        rc, out, err = run(["strip-state", "--deep", "--state", self.STATE, "--in-place",
                            "--dry-run", "s3://flink/%s/_metadata" % self.chk], self.env)
        self.assertEqual(rc, 0, err)
        for n in self.new_names:
            self.assertIn("check absent s3://flink/%s/%s" % (self.chk, n), out)
            self.assertIn("server-side copy s3://flink/%s/%s <- s3://flink/%s/%s.flinkstate-tmp-"
                          % (self.chk, n, self.chk, n), out)
        self.assertEqual(self.keys(), sorted(self.files))

    def kill_at(self, pick):
        """`repair --deep --apply` SIGKILLed when `pick(method, key, copy, when)` first says so
        (the request never reaches the server when when == "before"); returns the rerun's
        output after checking that the rerun repaired everything and left nothing stray."""
        procs = []

        def kill(method, path, headers, when):
            copy = "x-amz-copy-source" in {k.lower() for k in headers}
            key = path.split("?")[0][len("/flink/%s/" % self.chk):]
            if procs and procs[0].returncode is None and pick(method, key, copy, when):
                procs[0].kill()
                procs[0].wait()
                return True
        self.proxy.hook = kill
        p = subprocess.Popen([FLINKSTATE, "repair", "--deep", "--state", self.STATE, "--apply",
                              "s3://flink/" + self.chk], env=self.env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        procs.append(p)
        p.communicate(timeout=120)
        self.proxy.hook = None
        self.assertEqual(p.returncode, -9)
        self.assertTrue(any(".flinkstate-txn-" in k for k in self.keys()), self.keys())
        rc, out, err = self.repair("--apply")
        self.assertEqual(rc, 0, err + out)
        self.assert_repaired()
        return out

    def test_killed_before_the_commit_rerun_rolls_back_and_repairs(self):
        # At the _metadata's backup copy: every output (new state files too) uploaded.
        out = self.kill_at(lambda m, key, copy, w: w == "before" and m == "PUT" and copy
                           and key == "_metadata.bak")
        self.assertIn("1 rolled back", out)

    def test_killed_after_the_first_new_object_rerun_completes(self):
        # After the commit point: one new state file in place, the other and _metadata not.
        out = self.kill_at(lambda m, key, copy, w: w == "after" and m == "PUT" and copy
                           and key in self.new_names)
        self.assertIn("1 completed, 0 rolled back", out)
        self.assertIn("recovered: created s3://flink/%s/" % self.chk, out)
        self.assertIn("nothing to strip", out)

    def test_a_concurrent_creation_of_a_new_state_file_is_refused(self):
        theirs = b"written by someone else meanwhile"
        target = self.new_names[1]

        def create_meanwhile(method, path, headers, when):
            # While the new state file's bytes are uploaded, another writer creates its key.
            if (when == "before" and method == "PUT" and
                    "/%s.flinkstate-tmp-" % target in path and ".probe" not in path):
                self.s3.put_object(Bucket="flink", Key="%s/%s" % (self.chk, target), Body=theirs)
        self.proxy.hook = create_meanwhile
        rc, _, err = self.repair("--apply")
        self.proxy.hook = None
        self.assertEqual(rc, 1, err)
        self.assertIn("s3://flink/%s/%s exists: someone else created it" % (self.chk, target), err)
        self.assertIn("nothing was replaced", err)
        self.assertEqual(self.keys(), sorted(list(self.files) + [target]))
        self.assertEqual(self.get(target), theirs)
        for n, data in self.files.items():
            self.assertEqual(self.get(n), data, n)


class S3StallTest(unittest.TestCase):
    """An endpoint that accepts connections and never answers: each attempt
    ends after FLINKSTATE_S3_STALL_SECONDS, and the error says where, what
    and how often it tried."""

    def test_a_silent_endpoint_gives_a_bounded_clear_error(self):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        held = []
        stop = threading.Event()

        def accept_and_hold():
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    held.append(listener.accept()[0])  # never read, never answered
                except socket.timeout:
                    pass
        t = threading.Thread(target=accept_and_hold, daemon=True)
        t.start()
        endpoint = "http://127.0.0.1:%d" % listener.getsockname()[1]
        env = dict(base_env(endpoint), AWS_MAX_ATTEMPTS="2", FLINKSTATE_S3_STALL_SECONDS="1")
        try:
            rc, _, err = run(["inspect", "s3://flink/job/chk-9/_metadata"], env)
        finally:
            stop.set()
            t.join()
            for c in held:
                c.close()
            listener.close()
        self.assertEqual(rc, 1, err)
        self.assertIn("s3://flink/job/chk-9/_metadata: HEAD: connected, but no byte for 1 s "
                      "(FLINKSTATE_S3_STALL_SECONDS)", err)
        self.assertIn("endpoint %s/flink/job/chk-9/_metadata" % endpoint, err)
        self.assertIn("after 2 attempts with exponential backoff from 10 ms", err)
        self.assertEqual(len(held), 2)  # one connection per attempt


if __name__ == "__main__":
    FLINKSTATE, GEN_INCIDENT, TESTDATA = sys.argv[1:4]
    del sys.argv[1:4]
    unittest.main(verbosity=2)
