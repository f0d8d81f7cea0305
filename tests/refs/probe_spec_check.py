"""The Python probe reader (probe_spec.py) against bitprobe's own reading
(tests/ops/probe_values: src/ops/probe_yaml.c's tree, bp_yaml_number's numbers,
the loaded probe's scalar operands), for tests/cli/probe_loader.sh.

    probe_spec_check.py PROBE_VALUES [--reader spec|pyyaml] FILE.yaml...

Every scalar of every file, its type (int, float, bool, string) and its
value (floats bit for bit), every op's numeric a and b after `$param`
substitution, and a table of number spellings (hex floats, exponents
without a dot, .inf and .nan, integers past 2**53, YAML 1.1's forms that
the probe language does not have) through both.  `--reader pyyaml` holds
PyYAML's safe_load against the same, to show that the check tells a
wrong reader apart (it must fail).  Exit 0 when all agree and something
was compared, 1 on a difference, 2 on usage or a file neither reads.
"""
import json
import math
import os
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import probe_spec  # noqa: E402

# Spellings of numbers and of what only looks like one; each goes through
# bp_yaml_number and probe_spec.number.
SPELLINGS = """0 -0 +0 1 -7 +42 007 123456789 9007199254740993 18446744073709551617
1.5 -1.5 .5 -.5 +.5 1. 1.e3 0.1 1e6 1E6 1e-6 1e+6 -2.5e-3 1e308 1e309 1e999 -1e999
1e-999 4.9e-324 2.4703282292062328e-324 2.4703282292062327e-324 1.7976931348623157e308
1.7976931348623159e308 0x1p-9 0x1P-9 -0x1.8p+3 0x.8p1 0x1. 0x1.8 0x1f 0X1F -0x1f
0x20000000000001 0x1p1023 0x1p1024 0x1p-1074 0x1p-1075 0x1.fffffffffffff8p1023
0xffffffffffffffffffffffffffffffff 0x 0x. 0x.p1 0x1p 0x1p+ 0xg 0x1g 1e 1e+ .e5 e5 . - +
.inf .Inf .INF -.inf +.inf -.Inf .nan .NaN .NAN -.nan +.nan .nAn inf nan Infinity
1_000 0o17 0b101 0xdead_beef 1:30 +1:30 yes no on off y n ~ null Null NULL
true True TRUE false False FALSE tRUE fAlse $x $dtype fp32 x1 1x 1.5.2 --1 ++1
\u0661\u0662 1\u00a0""".split()


def bits(v):
    return struct.pack("<d", v)


def same_number(kind, hexval, v):
    """Whether v is the number bitprobe read: kind "i" (an int) or "f" (a
    float), value hexval (%a)."""
    want = float.fromhex(hexval)
    if kind == "i":
        return isinstance(v, int) and not isinstance(v, bool) and v == int(want)
    if not isinstance(v, float):
        return False
    return (math.isnan(want) and math.isnan(v)) or bits(want) == bits(v)


def describe(v):
    return "%s %r" % (type(v).__name__, v)


class Checker:
    def __init__(self):
        self.compared = 0
        self.diffs = []

    def diff(self, where, what):
        self.diffs.append("%s: %s" % (where, what))

    def scalar(self, where, node, v, text_key):
        self.compared += 1
        kind = node[0]
        if text_key:  # bitprobe takes the text
            want = node[-1]
            if not (isinstance(v, str) and v == want):
                self.diff(where, "bitprobe reads the text %r, the reader %s" % (
                    node[-1], describe(v)))
            return
        if kind in ("i", "f"):
            if not same_number(kind, node[1], v):
                self.diff(where, "bitprobe reads %s %s (%s), the reader %s" % (
                    "the integer" if kind == "i" else "the float", node[2], node[1],
                    describe(v)))
        elif kind == "b":
            if v is not node[1]:
                self.diff(where, "bitprobe reads %s, the reader %s" % (node[1], describe(v)))
        elif kind in ("s", "q"):
            if not isinstance(v, str) or v != node[1]:
                self.diff(where, "bitprobe reads the string %r, the reader %s" % (
                    node[1], describe(v)))
        else:
            self.diff(where, "bitprobe refuses %r (%s)" % (node[1], kind))

    def tree(self, where, node, v, text_key=False, in_params=False, depth=0):
        if isinstance(node, list):
            return self.scalar(where, node, v, text_key)
        if "l" in node:
            if not isinstance(v, list) or len(v) != len(node["l"]):
                return self.diff(where, "bitprobe reads a list of %d, the reader %s" % (
                    len(node["l"]), describe(v)))
            for i, n in enumerate(node["l"]):
                self.tree("%s[%d]" % (where, i), n, v[i], False, in_params, depth + 1)
            return
        keys = [k for k, _ in node["m"]]
        if not isinstance(v, dict) or [str(k) for k in v] != keys:
            return self.diff(where, "bitprobe reads a mapping of keys %s, the reader %s" % (
                keys, describe(v)))
        for (k, n), (_, x) in zip(node["m"], v.items()):
            p = in_params or (depth == 0 and k == "params")
            self.tree("%s.%s" % (where, k), n, x, k in probe_spec.TEXT_KEYS and not p, p,
                      depth + 1)

    def ops(self, where, want, spec):
        if len(want) != len(spec["ops"]):
            return self.diff(where, "bitprobe loads %d ops, the reader %d" % (
                len(want), len(spec["ops"])))
        for i, (w, op) in enumerate(zip(want, spec["ops"])):
            for key in ("a", "b"):
                if w[key] is None:
                    continue
                self.compared += 1
                v = op.get(key)
                if not same_number(w[key][0], w[key][1], v):
                    self.diff("%s: op %d (%s) %s" % (where, i, op.get("out"), key),
                              "bitprobe's loaded probe holds %s %s, the reader %s" % (
                                  "an integer" if w[key][0] == "i" else "a float",
                                  w[key][1], describe(v)))


def pyyaml_read(path):
    import yaml
    with open(path) as f:
        return yaml.safe_load(f)


def pyyaml_number(text):
    import yaml
    return yaml.safe_load("x: " + text)["x"]


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    prog, rest = argv[0], argv[1:]
    reader = "spec"
    if rest[:1] == ["--reader"] and len(rest) > 1:
        reader, rest = rest[1], rest[2:]
    if reader not in ("spec", "pyyaml"):
        print("--reader takes spec or pyyaml", file=sys.stderr)
        return 2
    c = Checker()
    files = 0
    for path in rest:
        p = subprocess.run([prog, path], capture_output=True, text=True)
        if p.returncode:
            print("probe_values %s: %s" % (path, p.stderr.strip()), file=sys.stderr)
            return 2
        dump = json.loads(p.stdout)
        try:
            doc = probe_spec.read(path) if reader == "spec" else pyyaml_read(path)
        except Exception as e:
            c.diff(path, "the reader fails: %s" % e)
            continue
        files += 1
        c.tree(path, dump["tree"], doc)
        if "ops" in dump and reader == "spec":
            c.ops(path, dump["ops"], probe_spec.spec_of(doc, path))
        elif "ops" in dump:  # PyYAML's document, its $params resolved by hand
            params = doc.get("params") or {}
            ops = [{k: params.get(v[1:], v) if isinstance(v, str) and v[:1] == "$" else v
                    for k, v in op.items()} for op in doc["ops"]]
            c.ops(path, dump["ops"], {"ops": ops})
        else:
            c.diff(path, "bitprobe does not load it: %s" % dump.get("error"))
    # the number table
    p = subprocess.run([prog, "--numbers"], input="\n".join(SPELLINGS) + "\n",
                       capture_output=True, text=True)
    if p.returncode:
        print("probe_values --numbers: %s" % p.stderr.strip(), file=sys.stderr)
        return 2
    nodes = [json.loads(line) for line in p.stdout.splitlines()]
    if len(nodes) != len(SPELLINGS):
        print("probe_values --numbers: %d answers for %d spellings" % (
            len(nodes), len(SPELLINGS)), file=sys.stderr)
        return 2
    for text, node in zip(SPELLINGS, nodes):
        where = "number %r" % text
        try:
            v = (probe_spec._typed(text, True, where) if reader == "spec"
                 else pyyaml_number(text))
        except probe_spec.ProbeError:
            c.compared += 1
            if node[0] != "e":
                c.diff(where, "the reader refuses it, bitprobe reads %s" % (node,))
            continue
        except Exception as e:
            c.compared += 1
            c.diff(where, "the reader fails: %s" % e)
            continue
        c.scalar(where, node, v, False)
    for d in c.diffs:
        print("DIFFERENT " + d)
    print("%s reader: %d files, %d scalars and operands compared with bitprobe's reading: "
          "%d differ" % ("probe_spec" if reader == "spec" else "PyYAML safe_load", files,
                         c.compared, len(c.diffs)))
    if not c.compared or not files:
        print("nothing compared")
        return 2
    return 1 if c.diffs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
