"""The op table the differential fuzzer draws from.

`bitprobe list --ops --json` is the one source: every op bitprobe knows,
with its operands, keys, formulations, result-dtype rule, kind and flags,
so an op added to bitprobe's op list joins the fuzzer without a change
here.  A bitprobe without that listing falls back to BUILTIN below, the
same facts for the ops of src/ops/op.h at the time it was written.

Each op becomes a dict:
  name      the YAML `op:` value
  operands  none | a | ab | ab_ts | inputs, or the listing's own words
            for another operand list (e.g. cond,a,b)
  operand_list  the listing's operand list as written (a,b:tensor-or-number)
  keys      {key name: type} beyond operands, out, op, dtype, formulation
            (type: number, numbers, integer, shape, dtype, buffer, buffers)
  required  key names that must be present
  forms     formulation names besides `default`
  kind      creation | elemwise | layout | reduction | fused
  flags     set of: float_fn (integer results become fp32), int (integer
            dtypes computed), float_in (float operands only: PyTorch refuses
            integers), and the listing's others
  rule      the result dtype without `dtype:`: literal, f32, same, promote,
            acc (integers sum to i64), matmul (one float dtype, no promotion)
  backends  the backends that implement it
"""
import json
import subprocess

BUILTIN = [
    # name, operands, keys, required, forms, kind, flags, result dtype rule
    ("tensor", "none", {"values": "numbers", "shape": "shape"}, ["values"], [], "creation", {"int"}, "literal"),
    ("arange", "none", {"start": "number", "end": "number", "step": "number"}, ["end"], [], "creation",
     {"int"}, "literal"),
    ("uniform", "none", {"shape": "shape", "seed": "integer", "stream": "integer", "low": "number",
                         "high": "number"}, ["shape", "seed"], [], "creation", {"float_fn"}, "f32"),
    ("cast", "a", {}, ["dtype"], [], "elemwise", {"int"}, "same"),
    ("add", "ab_ts", {}, [], [], "elemwise", {"int"}, "promote"),
    ("sub", "ab_ts", {}, [], [], "elemwise", {"int"}, "promote"),
    ("mul", "ab_ts", {}, [], [], "elemwise", {"int"}, "promote"),
    ("div", "ab_ts", {}, [], ["true", "reciprocal"], "elemwise", {"float_fn"}, "promote"),
    ("pow", "ab_ts", {}, [], [], "elemwise", {"int"}, "promote"),
    ("reciprocal", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("exp", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("log", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("sin", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("cos", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("tanh", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("sqrt", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("rsqrt", "a", {}, [], [], "elemwise", {"float_fn"}, "same"),
    ("neg", "a", {}, [], [], "elemwise", {"int"}, "same"),
    ("outer", "ab", {}, [], [], "elemwise", {"int"}, "promote"),
    ("concat", "inputs", {"axis": "integer"}, [], [], "layout", {"int"}, "promote"),
    ("slice", "a", {"axis": "integer", "start": "integer", "end": "integer", "step": "integer"}, [], [],
     "layout", {"int"}, "same"),
    ("matmul", "ab", {}, [], [], "reduction", {"int"}, "matmul"),
    ("sum", "a", {"axis": "integer"}, [], ["sequential", "pairwise"], "reduction", {"int"}, "acc"),
    ("rotate_half", "a", {}, [], [], "layout", {"int"}, "same"),
]

# Keys every op has, or that the generator sets from the operands' class.
_IMPLIED = {"out", "op", "a", "b", "inputs", "dtype", "formulation"}


_OPERANDS = {"none": "none", "a": "a", "a,b": "ab", "a,b:tensor-or-number": "ab_ts",
             "inputs": "inputs"}
_KINDS = {"elementwise": "elemwise"}
_RULES = {"fp32": "f32", "accumulate": "acc"}
_OPERAND_LISTS = {"none": "none", "a": "a", "ab": "a,b", "ab_ts": "a,b:tensor-or-number",
                  "inputs": "inputs"}


def _norm(entry):
    """One op of `bitprobe list --ops --json` as the dict described at the
    top."""
    keys, required = {}, []
    for k in entry.get("keys", []):
        if k.get("required"):
            required.append(k["name"])
        if k["name"] not in _IMPLIED:
            keys[k["name"]] = str(k.get("type", "number")).lower()
    opd = str(entry.get("operands", "a")).lower()
    return {
        "name": entry["name"],
        "operands": _OPERANDS.get(opd, opd),
        "operand_list": opd,
        "keys": keys,
        "required": [k for k in required if k not in ("a", "b", "inputs")],
        "forms": [f for f in entry.get("formulations", []) if f != "default"],
        "kind": _KINDS.get(entry.get("kind", ""), entry.get("kind", "elemwise")),
        "flags": {str(f).lower() for f in entry.get("flags", [])},
        "rule": _RULES.get(entry.get("dtype_rule", ""), entry.get("dtype_rule", "same")),
        "backends": set(entry.get("backends", ["cpu", "cuda"])),
        "torch": entry.get("torch", ""),
    }


def builtin():
    return [{"name": n, "operands": o, "operand_list": _OPERAND_LISTS[o], "keys": k,
             "required": r, "forms": f, "kind": kd, "flags": set(fl), "rule": ru,
             "backends": {"cpu", "cuda"}, "torch": ""}
            for n, o, k, r, f, kd, fl, ru in BUILTIN]


def load(bitprobe):
    """The op table from `bitprobe list --ops --json`, else BUILTIN; and
    where it came from."""
    try:
        p = subprocess.run([bitprobe, "list", "--ops", "--json"], capture_output=True,
                           text=True, timeout=60)
        if p.returncode == 0 and p.stdout.strip():
            doc = json.loads(p.stdout)
            ops = doc.get("ops", doc) if isinstance(doc, dict) else doc
            return [_norm(e) for e in ops], "bitprobe list --ops --json"
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    return builtin(), "the built-in table (bitprobe has no `list --ops --json`)"
