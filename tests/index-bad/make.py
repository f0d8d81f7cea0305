#!/usr/bin/env python3
"""Writes tests/index-bad: one Hugging Face checkpoint index per rule the
reader enforces (hostile input), beside the shards they name (run once; the
output is committed).  Plain Python only.

s1.safetensors holds "a" and "b", s2.safetensors "c", dup.safetensors "a"
again, extra.safetensors "c" and "x".  good.safetensors.index.json names
them rightly; every other index breaks one rule, and tests/cli/diff_index.sh
checks that diff refuses it with exit 2 and the message printed below.
Cases a committed file cannot hold (a symbolic link out of the directory,
a FIFO, a directory as a shard) are made by the test itself.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def shard(name, tensors):
    off, hdr, data = 0, {}, b""
    for t in tensors:
        raw = struct.pack("<2f", 1.0, 2.0)
        hdr[t] = {"dtype": "F32", "shape": [2], "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        data += raw
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    put(name, struct.pack("<Q", len(h)) + h + data)


shard("s1.safetensors", ["a", "b"])
shard("s2.safetensors", ["c"])
shard("dup.safetensors", ["a"])
shard("extra.safetensors", ["c", "x"])

GOOD = {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}
CASES = []


def case(name, text, msg):
    fn = name + ".safetensors.index.json"
    put(fn, text if isinstance(text, str) else json.dumps(text))
    CASES.append((fn, msg))


def wm(**over):
    m = dict(GOOD)
    m.update(over)
    return {"metadata": {"total_size": 24}, "weight_map": m}


put("good.safetensors.index.json", json.dumps({"metadata": {}, "weight_map": GOOD}))
case("dotdot", wm(c="../s2.safetensors"),
     "shard '../s2.safetensors' of tensor 'c': '..' leaves the directory")
case("dotdot-inner", wm(c="sub/../../s2.safetensors"),
     "shard 'sub/../../s2.safetensors' of tensor 'c': '..' leaves the directory")
case("absolute", wm(c="/etc/hostname"),
     "shard '/etc/hostname' of tensor 'c': an absolute path leaves the directory")
case("backslash", wm(c="..\\s2.safetensors"),
     "backslashes are not path separators here")
case("empty-name", wm(c=""), "shard '' of tensor 'c': the name is empty")
case("missing-shard", wm(c="model-00009-of-00009.safetensors"),
     "shard 'model-00009-of-00009.safetensors' of tensor 'c' does not exist")
case("tensor-absent", {"weight_map": dict(GOOD, nope="s2.safetensors")},
     "tensor 'nope' is listed in shard 's2.safetensors', which has no such tensor")
case("tensor-twice", {"weight_map": dict(GOOD, a="dup.safetensors")},
     "tensor 'a' is in two shards, 'dup.safetensors' and 's1.safetensors' (a tensor must be in exactly one)")
case("tensor-unlisted", {"weight_map": dict(GOOD, c="extra.safetensors")},
     "tensor 'x' of shard 'extra.safetensors' is not in weight_map (every tensor of a shard must be listed)")
case("wrong-shard", {"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors",
                                     "c": "s2.safetensors"}},
     "tensor 'b' is listed in shard 's2.safetensors' but is in 's1.safetensors'")
case("not-json", '{"weight_map": {"a": "s1.safetensors",}}',
     "not valid JSON:")
case("duplicate-key", '{"weight_map": {"a": "s1.safetensors", "a": "s1.safetensors"}}',
     "not valid JSON: duplicate object key")
case("deep", '{"metadata": ' + "[" * 100 + "]" * 100 + ', "weight_map": {}}',
     "JSON nested deeper than 64 levels at byte 76")  # the 64th "[" (byte 13 + 63) opens level 65
case("not-object", '["s1.safetensors"]', "not a JSON object")
case("no-weight-map", {"metadata": {}}, "no \"weight_map\" object")
case("empty-weight-map", {"weight_map": {}}, "no \"weight_map\" object")
case("shard-not-string", {"weight_map": {"a": {"file": "s1.safetensors"}}},
     "weight_map[\"a\"] is not a string")
case("metadata-not-object", {"metadata": 3, "weight_map": GOOD},
     "\"metadata\" is not an object")

for fn, msg in CASES:
    print("%s\t%s" % (fn, msg))
