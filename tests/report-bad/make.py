#!/usr/bin/env python3
"""Writes tests/report-bad: one file per class of bad report input (run
once; the output is committed).  Plain Python only.

Most files are ../report-good/minimal.json with one thing broken, so that
each is refused for that thing alone; tests/cli/report.sh holds the
message each must give.  The oversized file (over 256 MiB) is not kept
here: report.sh makes it, sparse, when it runs.
"""
import copy
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "..", "report-good", "minimal.json")) as f:
    GOOD = json.load(f)


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def variant(name, change):
    doc = copy.deepcopy(GOOD)
    change(doc)
    write(name, json.dumps(doc, indent=1) + "\n")


def res(doc):
    return doc["results"][0]


def setitem(path, value):
    def change(doc):
        obj = doc
        for k in path[:-1]:
            obj = obj[k]
        obj[path[-1]] = value
    return change


def delitem(path):
    def change(doc):
        obj = doc
        for k in path[:-1]:
            obj = obj[k]
        del obj[path[-1]]
    return change


R = ["results", 0]
# Text that is not JSON: a comma missing at line 3.
write("malformed.json", '{\n "tool": "bitprobe",\n "version": "0.1.0"\n "results": []\n}\n')
write("duplicate-key.json", '{\n "tool": "bitprobe",\n "tool": "bitprobe",\n "results": []\n}\n')
write("empty.json", "")
write("truncated.json", json.dumps(GOOD, indent=1)[:600])
variant("missing-field.json", delitem(R + ["max_ulp", "value"]))
variant("wrong-type.json", setitem(R + ["total"], "2"))
variant("wrong-type-bool.json", setitem(R + ["compared"], 1))
variant("unknown-kind.json", setitem(R + ["kind"], "golden-ish"))
variant("unknown-dtype.json", setitem(R + ["dtype"], "fp8"))
variant("bad-policy.json", setitem(R + ["policy"], "ulp<=two"))
variant("negative-count.json", setitem(R + ["beyond_policy"], -1))
variant("mismatched-over-total.json", setitem(R + ["mismatched"], 3))
variant("total-not-shape.json", setitem(R + ["total"], 3))
variant("too-many-dims.json", setitem(R + ["shape"], [1] * 9))
variant("negative-size.json", setitem(R + ["shape"], [-2]))
variant("index-outside.json", setitem(R + ["max_abs", "index"], [2]))
variant("index-rank.json", setitem(R + ["max_rel", "index"], [0, 1]))
variant("index-not-flat.json", setitem(R + ["first", 0, "flat"], 0))
variant("histogram-sum.json", setitem(R + ["histogram"], {"0": 1, "1": 2}))
variant("histogram-label.json", setitem(R + ["histogram"], {"0": 1, "1-2": 1}))
variant("first-too-many.json", setitem(R + ["first"], GOOD["results"][0]["first"] * 2))
variant("bad-hex.json", setitem(R + ["first", 0, "b", "hex"], "0x4000001"))
variant("bad-ulp.json", setitem(R + ["max_ulp", "value"], "many"))
variant("too-many-values.json",
        setitem(["values", 0, "values"], [{"hex": "0x3f800000"}] * 17))
variant("summary-drift.json", setitem(["summary"], {"comparisons": 1, "identical": 0,
                                                     "differ": 1, "drift": 0}))
variant("summary-exit.json", setitem(["summary"], {"comparisons": 1, "identical": 0,
                                                    "differ": 1, "drift": 1,
                                                    "exit_status": 0}))
variant("summary-verdict.json", setitem(["summary"], {"comparisons": 1, "identical": 0,
                                                       "differ": 1, "drift": 1,
                                                       "verdict": "passed"}))
variant("unknown-status.json", setitem(R + ["status"], "fine"))
variant("status-contradicts.json", setitem(R + ["status"], "identical"))
variant("status-not-compared.json", setitem(["results", 1, "status"], "within_policy"))
variant("schema-future.json", setitem(["schema_version"], 4))
variant("result-not-object.json", setitem(["results", 1], "tiny"))
variant("note-not-string.json", setitem(["notes", 0], 7))
variant("no-tool.json", delitem(["tool"]))
variant("no-results.json", delitem(["results"]))
# Not reports at all: a probe definition, a safetensors file, the JSON
# of another command (fingerprint --json: "tool" but no "results").
write("probe.yaml", "name: tiny\ndescription: not a report\nops:\n  - op: arange\n")
header = b'{"x":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}}'
header += b" " * (-len(header) % 8)
write("tensors.safetensors", struct.pack("<Q", len(header)) + header + b"\0\0\x80\x3f")
write("fingerprint.json", json.dumps({"tool": "bitprobe", "version": "0.1.0",
                                      "backends": []}, indent=1) + "\n")
# A directory that is not a bundle (no manifest.json).
os.makedirs(os.path.join(HERE, "no-manifest"), exist_ok=True)
write(os.path.join("no-manifest", "README"), "A directory without manifest.json.\n")
# A bundle whose manifest carries no report.
os.makedirs(os.path.join(HERE, "manifest-no-report"), exist_ok=True)
write(os.path.join("manifest-no-report", "manifest.json"),
      json.dumps({"tool": "bitprobe", "files": []}, indent=1) + "\n")
