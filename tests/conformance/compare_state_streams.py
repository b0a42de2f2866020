#!/usr/bin/env python3
"""Compares `flinkstate state --json` (ACTUAL) with what Flink's own classes read from the same
operator-state streams (EXPECTED: `harness.sh streams FILE`, StateStreams.java).

Checked per operator (by id) and per stream (subtask index + slot): the proxy version, every meta
info (name, backend state type, distribution mode, serializer keys and snapshot classes), every
state name's element count and broadcast entry count; per operator and state name the element
count and the number of distinct elements (Flink: distinct deserialized values; flinkstate:
distinct element bytes); the legacy Kafka consumer's (state, topic, partition, offset) rows with
their entry counts. Exit 0 only on full agreement.

  compare_state_streams.py EXPECTED ACTUAL
"""
import json
import sys


def main():
    exp = json.load(open(sys.argv[1]))
    act = json.load(open(sys.argv[2]))
    problems = []
    ours = {o.get("operatorId", ""): o for o in act.get("operators", [])}
    if {o["operatorId"] for o in exp["operators"]} != set(ours):
        problems.append("operators: expected %s, found %s" % (
            sorted(o["operatorId"] for o in exp["operators"]), sorted(ours)))
    for eo in exp["operators"]:
        ao = ours.get(eo["operatorId"])
        if ao is None:
            continue
        where = "operator " + eo["operatorId"]
        asubs = {(s.get("subtaskIndex", 0), s.get("slot", "")): s for s in ao.get("subtasks", [])}
        for es in eo["subtasks"]:
            key = (es["index"], es["slot"])
            s_where = "%s subtask %d %s" % (where, key[0], key[1])
            a = asubs.pop(key, None)
            if a is None:
                problems.append(s_where + ": missing")
                continue
            if a.get("error"):
                problems.append(s_where + ": unreadable: " + a["error"])
                continue
            if a.get("headerStopped"):
                problems.append(s_where + ": header not decoded: " + a["headerStopped"])
            if a.get("proxyVersion", 0) != es["proxyVersion"]:
                problems.append("%s: proxy version %s, expected %s" % (
                    s_where, a.get("proxyVersion"), es["proxyVersion"]))
            am = [{"name": m["name"], "backendStateType": m["backendStateType"],
                   "distributionMode": m["distributionMode"],
                   "serializers": {x.get("key", ""): x.get("snapshotClass", "")
                                   for x in m.get("serializers", [])}}
                  for m in a.get("metaInfos", [])]
            if am != es["metaInfos"]:
                problems.append("%s: meta infos\n    expected %s\n    found    %s" % (
                    s_where, es["metaInfos"], am))
            ast = {x["name"]: x for x in a.get("states", [])}
            for st in es["states"]:
                x = ast.get(st["name"])
                if x is None:
                    problems.append("%s: state %s missing" % (s_where, st["name"]))
                    continue
                if int(x.get("elements", 0)) != st["elements"]:
                    problems.append("%s: %s: %s elements, expected %d" % (
                        s_where, st["name"], x.get("elements"), st["elements"]))
                if "broadcastEntries" in st and int(x.get("broadcastEntries", 0)) != st["broadcastEntries"]:
                    problems.append("%s: %s: %s broadcast entries, expected %d" % (
                        s_where, st["name"], x.get("broadcastEntries"), st["broadcastEntries"]))
        for key in asubs:
            problems.append("%s subtask %d %s: not in Flink's view" % (where, key[0], key[1]))
        atot = {t["name"]: t for t in ao.get("states", [])}
        for et in eo["states"]:
            t = atot.get(et["name"])
            if t is None:
                problems.append("%s: total of %s missing" % (where, et["name"]))
                continue
            if int(t.get("elements", 0)) != et["elements"]:
                problems.append("%s: %s: %s elements in total, expected %d" % (
                    where, et["name"], t.get("elements"), et["elements"]))
            if "distinct" in et and int(t.get("distinctElements", 0)) != et["distinct"]:
                problems.append("%s: %s: %s distinct elements, expected %d" % (
                    where, et["name"], t.get("distinctElements"), et["distinct"]))
        # Kafka rows (legacy consumer state): (state, topic, partition, offset) -> entries
        if "kafka" in eo:
            ek = {(k["state"], k["topic"], k["partition"], k["offset"]): k["entries"] for k in eo["kafka"]}
            ak = {(k["state"], k.get("topic", ""), k.get("partition", 0), int(k.get("offset", 0))):
                  int(k.get("entries", 0)) for k in ao.get("kafkaOffsets", [])
                  if k["state"] != "SourceReaderState"}
            if ek != ak:
                problems.append("%s: kafka offsets\n    expected %s\n    found    %s" % (where, ek, ak))
            if ao.get("kafkaErrors"):
                problems.append("%s: kafka elements not decoded: %s" % (where, ao["kafkaErrors"][:3]))
    for p in problems:
        print(p)
    print("%s: %d problem(s)" % (sys.argv[2], len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
