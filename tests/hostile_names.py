#!/usr/bin/env python3
"""Writes files whose names would steer what reads bitprobe's text output
(tests/cli/escape.sh), into DIR:

  a.safetensors, b.safetensors   the same tensor names, one value apart:
      a name holding a newline and a GitHub workflow command, a name that
      is one ("::warning ..."), terminal escape sequences (OSC title, clear
      screen) and C1 controls (U+0085, U+009B)
  bad.safetensors                a tensor of an unknown dtype whose name
      holds a newline: the message on stderr names it
  probes/p.yaml                  a probe whose description holds ESC/BEL
      and whose op line names a buffer with a newline (refused: the
      message quotes it)
  a.ledger, b.ledger             SRCDIR's good ledgers with a module and an
      op name holding a newline and a workflow command

usage: hostile_names.py DIR SRCDIR/tests/ledger-good
"""
import json
import os
import struct
import sys

NAMES = ["a\n::error::x", "::warning file=x::y", "t\x1b]0;pwned\x07\x1b[2J",
         "c\u0085\u009bd"]


def safetensors(path, tensors, dtype="F32"):
    hdr, data, off = {}, b"", 0
    for name, vals in tensors:
        raw = struct.pack("<%df" % len(vals), *vals)
        hdr[name] = {"dtype": dtype, "shape": [len(vals)],
                     "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        data += raw
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    open(path, "wb").write(struct.pack("<Q", len(h)) + h + data)


def ledger(src, dst):
    out = []
    for line in open(src):
        rec = json.loads(line)
        if "module" in rec and rec["module"]:
            rec["module"] = rec["module"] + "\n::error::m"
        if "op" in rec and rec.get("seq") == 1:
            rec["op"] = rec["op"] + "\x1b[2J\n::error::op"
        if "captures" in rec:
            del rec["captures"]
        for t in rec.get("in", []) + rec.get("out", []):
            t.pop("capture", None)
        if "end" in rec:
            rec["end"]["captures"] = 0
        out.append(json.dumps(rec, separators=(",", ":")))
    open(dst, "w").write("\n".join(out) + "\n")


def main():
    d, ledgers = sys.argv[1], sys.argv[2]
    safetensors(d + "/a.safetensors", [(n, [1.0, 2.0]) for n in NAMES])
    safetensors(d + "/b.safetensors", [(n, [1.0, 2.5]) for n in NAMES])
    safetensors(d + "/bad.safetensors", [("q\n::error::bad", [1.0])], dtype="Q8")
    os.makedirs(d + "/probes", exist_ok=True)
    open(d + "/probes/p.yaml", "w").write(
        'name: p\ndescription: "d\\e]0;title\\a"\ndtypes: [fp32]\nops:\n'
        '  - {out: x, op: tensor, values: [1, 2], dtype: fp32}\noutputs:\n  - {name: x}\n')
    open(d + "/probes/q.yaml", "w").write(
        'name: q\ndescription: d\ndtypes: [fp32]\nops:\n'
        '  - {out: "y\\n::error::z", op: tensor, values: [1], dtype: fp32}\n'
        'outputs:\n  - {name: y}\n')
    ledger(ledgers + "/good.ledger", d + "/a.ledger")
    ledger(ledgers + "/good-b.ledger", d + "/b.ledger")


if __name__ == "__main__":
    main()
