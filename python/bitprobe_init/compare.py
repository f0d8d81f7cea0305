"""The ways against the reference, with bitprobe's own comparison engine.

For each way: the tensors of the reference and of the way are paired by
name and grouped (pattern: layer numbers as '*'; one group holds the
tensors whose reference and way bytes are the same, so 32 layers' inv_freq
are one line); one tensor per group goes into a pair of plain safetensors
files, the reference's side cast (round to nearest even, as .to() does) to
the dtype the way holds, and, for floating tensors held wider than the
model dtype, both sides cast to the model dtype as well (NAME@bf16: what
the model holds after .to(dtype)); `bitprobe diff` compares them and its
JSON gives the counts, ulps, histogram and first mismatches in bits.  The
oracle's values (rope.py) are compared the same way with each side.

Provenance: a tensor's bytes are the output of the last recorded op whose
output has its hash, dtype and shape; its producers' inputs lead further
back.  `bitprobe diff REF.ledger WAY.ledger` says which ops introduced a
difference; the first of them among a buffer's producers introduced that
buffer's difference."""
import bisect
import json
import os
import re
import subprocess

import torch

from . import stio

_LAYER = re.compile(r"(?<![^.:])\d+(?=[.:]|$)")


def pattern(name):
    return _LAYER.sub("*", name)


class Way:
    """A built way: its way.json and, on demand, its tensors."""

    def __init__(self, name, path):
        self.name, self.dir = name, path
        with open(os.path.join(path, "way.json")) as f:
            self.info = json.load(f)
        self.facts = {t["name"]: t for t in self.info.get("tensors", [])}
        self._tensors = None

    @property
    def ok(self):
        return self.info.get("status") == "ok"

    def tensors(self):
        if self._tensors is None:
            b = self.info.get("bundle")
            self._tensors = stio.read(os.path.join(self.dir, b))[0] if b else {}
        return self._tensors

    def ledger(self):
        lg = self.info.get("ledger")
        return os.path.join(self.dir, lg) if lg else None


def bitprobe_json(bitprobe, args, out_json, env):
    """Runs `bitprobe ARGS --json OUT_JSON` (exit 0 or 1: its verdict) and
    returns the JSON; raises with bitprobe's last error line on trouble."""
    r = subprocess.run([bitprobe] + args + ["--json", out_json], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, universal_newlines=True)
    if r.returncode not in (0, 1):
        raise RuntimeError("bitprobe %s: %s" % (" ".join(args[:3]), (
            r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]))
    with open(out_json) as f:
        return json.load(f)


def run_diff(bitprobe, a, b, out_json, first, env):
    """bitprobe diff a b: {tensor name: result}."""
    j = bitprobe_json(bitprobe, ["diff", a, b, "--first", str(first), "--quiet"], out_json, env)
    return {x.get("probe"): x for x in j.get("results", [])}


def _floating(dtype_name):
    return dtype_name in ("F32", "BF16", "F16", "F64", "F8_E4M3", "F8_E5M2")


_WIDTH = {"F64": 8, "F32": 4, "BF16": 2, "F16": 2}


def ulp_value(d):
    """A result's largest ulp distance as a number: a change of class (a
    NaN against a number) is infinitely far."""
    m = (d or {}).get("max_ulp")
    v = m.get("value", 0) if isinstance(m, dict) else 0
    return v if isinstance(v, (int, float)) else float("inf")


def summary(res):
    """The figures of one bitprobe diff result that the report keeps."""
    if res is None:
        return None
    keys = ("status", "total", "mismatched", "mismatched_percent", "max_ulp", "max_abs",
            "max_rel", "histogram", "first", "class_changes", "zero_sign_diffs", "note")
    return {k: res[k] for k in keys if k in res}


def group_way(ref, way):
    """Groups of tensors (name order of the way, then the reference's
    one-sided ones): [{pattern, names, key facts, status}]."""
    groups, index = [], {}
    rf, wf = ref.facts, way.facts
    order = list(wf) + [n for n in rf if n not in wf]
    for n in order:
        a, b = rf.get(n), wf.get(n)
        side = "both" if a and b else "ref" if a else "way"
        k = (pattern(n), side,
             a and (a["dtype"], tuple(a["shape"]), a.get("hash")),
             b and (b["dtype"], tuple(b["shape"]), b.get("hash")))
        g = index.get(k)
        if g is None:
            g = index[k] = {"pattern": pattern(n), "names": [], "ref": a, "way": b,
                            "kind": (a or b).get("kind"), "persistent": (a or b).get("persistent"),
                            "owner": (a or b).get("owner")}
            groups.append(g)
        g["names"].append(n)
    for g in groups:
        a, b = g["ref"], g["way"]
        if a is None:
            g["status"] = "only_in_way"
        elif b is None:
            g["status"] = "only_in_reference"
        elif a.get("hash") is None or b.get("hash") is None:
            g["status"] = "not_comparable"
            g["why"] = (b.get("why") if b.get("hash") is None else a.get("why"))
        elif list(a["shape"]) != list(b["shape"]):
            g["status"] = "not_comparable"
            g["why"] = "shapes differ: %s in the reference, %s here" % (a["shape"], b["shape"])
        elif a["dtype"] == b["dtype"] and a["hash"] == b["hash"]:
            g["status"] = "identical"
        elif _floating(a["dtype"]) != _floating(b["dtype"]):
            g["status"] = "not_comparable"
            g["why"] = "dtypes differ: %s in the reference, %s here" % (a["dtype"], b["dtype"])
        else:
            g["status"] = "compare"
    return groups


def write_pairs(ref, way, groups, model_dtype, d, also=()):
    """Writes d/a.safetensors (the reference as the way holds it) and
    d/b.safetensors (the way): one tensor per group to compare, and per
    identical group named in also (the oracle compares those too)."""
    os.makedirs(d, exist_ok=True)
    A, B = {}, {}
    rt, wt = ref.tensors(), way.tensors()
    mname = {"bf16": "BF16", "fp16": "F16", "fp32": "F32"}[model_dtype]
    mdt = stio.torch_dtype(mname)
    for g in groups:
        if g["status"] != "compare" and not (g["status"] == "identical" and
                                             g["names"][0] in also):
            continue
        n = g["names"][0]
        ta, tb = rt[n], wt[n]
        g["compared_in"] = g["way"]["dtype"]
        if ta.dtype != tb.dtype:
            ta = ta.to(tb.dtype)
            g["cast"] = "the reference's %s cast to %s, as the way holds it" % (
                g["ref"]["dtype"], g["way"]["dtype"])
        A[n], B[n] = ta, tb
        wd = g["way"]["dtype"]
        if _floating(wd) and wd in _WIDTH and _WIDTH[wd] > _WIDTH[mname] and \
                g["kind"] != "param":
            A[n + "@" + model_dtype] = rt[n].to(mdt)
            B[n + "@" + model_dtype] = tb.to(mdt)
            g["model_dtype_name"] = n + "@" + model_dtype
    stio.write(os.path.join(d, "a.safetensors"), A)
    stio.write(os.path.join(d, "b.safetensors"), B)
    return A, B


def values_note(t, ref):
    """What a tensor holds, against the reference: NaN, inf, subnormal,
    zero counts (for uninitialised memory)."""
    if not t.is_floating_point() or t.numel() == 0:
        return None
    x = t.float()
    r = ref.float() if ref is not None and ref.is_floating_point() and ref.shape == t.shape \
        else None
    fi = torch.finfo(t.dtype)
    nan = int(torch.isnan(x).sum())
    inf = int(torch.isinf(x).sum())
    fin = torch.isfinite(x)
    sub = int(((x != 0) & (x.abs() < fi.tiny) & fin).sum())
    zero = int((x == 0).sum())
    out = {"elements": t.numel(), "nan": nan, "inf": inf, "subnormal": sub, "zero": zero}
    if fin.any():
        out["max_abs"] = float(x[fin].abs().max())
    if r is not None:
        rf = torch.isfinite(r)
        out["reference"] = {"nan": int(torch.isnan(r).sum()), "inf": int(torch.isinf(r).sum()),
                            "subnormal": int(((r != 0) & (r.abs() < fi.tiny) & rf).sum()),
                            "zero": int((r == 0).sum())}
    return out


# --- the init ledgers ---------------------------------------------------------

class Ledger:
    """A ledger's records, indexed by output (hash, dtype, shape)."""

    def __init__(self, path):
        self.path = path
        self.recs = []
        with open(path) as f:
            lines = [json.loads(l) for l in f]
        self.recs = [r for r in lines[1:] if "seq" in r]
        self.by_out = {}
        for r in self.recs:
            for e in r.get("out", []):
                if e.get("hash"):
                    self.by_out.setdefault(self._key(e), []).append(r["seq"])

    @staticmethod
    def _key(e):
        return (e["hash"], e["dtype"], tuple(e["shape"]))

    def producer(self, key, before=None):
        seqs = self.by_out.get(key)
        if not seqs:
            return None
        if before is None:
            return seqs[-1]
        i = bisect.bisect_left(seqs, before)
        return seqs[i - 1] if i else None

    def ancestry(self, seq):
        """seq and every op that produced an input of it, transitively:
        {seq: [producer seqs of its inputs]}."""
        graph, todo = {}, [seq]
        while todo:
            s = todo.pop()
            if s in graph:
                continue
            ins = []
            for e in self.recs[s].get("in", []):
                if e.get("hash"):
                    p = self.producer(self._key(e), before=s)
                    if p is not None:
                        ins.append(p)
            graph[s] = ins
            todo.extend(ins)
        return graph

    def op(self, s):
        return self.recs[s]

    def consumer(self, s):
        """The first later op that reads op s's first output, or None."""
        outs = self.recs[s].get("out", [])
        if not outs or not outs[0].get("hash"):
            return None
        k = self._key(outs[0])
        for r in self.recs[s + 1:s + 64]:
            if any(e.get("hash") and self._key(e) == k for e in r.get("in", [])):
                return r["seq"]
        return None


_FACTORY = re.compile(r"^aten::(arange|full|zeros|ones|tensor|lift_fresh|lift_fresh_copy|scalar_"
                      r"tensor|linspace|logspace|eye|randn|rand|empty)(\.|$)")
_CAST = re.compile(r"^aten::(_to_copy|to|type_as|_to_dtype)(\.|$)")


def _tdesc(e):
    return "%s %s" % (e["dtype"], e["shape"])


def _describe(ledger, graph, s):
    """One introducing op in words: a cast of a factory's result reads as
    the factory in the cast's dtype ('aten::arange [4096] in BF16')."""
    r = ledger.op(s)
    ins, outs = r.get("in", []), r.get("out", [])
    d = {"seq": s, "op": r["op"], "module": r.get("module", ""),
         "out": _tdesc(outs[0]) if outs else None}
    if _CAST.match(r["op"]) and ins and outs:
        p = graph[s][0] if graph.get(s) else None
        src = ledger.op(p) if p is not None else None
        # through views and detach to what made the values
        while src is not None and re.match(r"^aten::(detach|alias|view|_reshape_alias)(\.|$)",
                                           src["op"]) and graph.get(p):
            p = graph[p][0]
            src = ledger.op(p)
        if src is not None and _FACTORY.match(src["op"]):
            d["source_op"], d["source_seq"] = src["op"], p
            what = "torch.tensor(NUMBER)" if "lift_fresh" in src["op"] else src["op"]
            use = ledger.consumer(s)
            if "lift_fresh" in src["op"] and use is not None and \
                    ledger.op(use)["op"].startswith("aten::pow.Tensor_Tensor"):
                d["hint"] = ("the base of `number ** tensor`: PyTorch 1.x's Tensor.__rpow__ "
                             "makes it with torch.tensor")
                d["fix"] = ("the base of `number ** tensor` is made by torch.tensor (PyTorch "
                            "1.x's Tensor.__rpow__) and cast to %s: write torch.pow(number, "
                            "tensor), or run PyTorch 2 (it passes the number to pow)" %
                            outs[0]["dtype"])
            elif "arange" in src["op"]:
                d["fix"] = ("a float arange is cast to %s as soon as it is made: build the "
                            "positions from an integer arange (torch.arange(n, dtype=torch."
                            "int64).float(), as transformers does since 4.37)" % outs[0]["dtype"])
            else:
                d["fix"] = ("%s's floating result is cast to %s as soon as it is made: build "
                            "the buffer outside the context, or from an integer tensor" %
                            (src["op"], outs[0]["dtype"]))
            d["summary"] = "%s %s in %s: %s B#%d casts %s's %s result (B#%d) to %s" % (
                what, ins[0]["shape"], outs[0]["dtype"], r["op"], s, src["op"], ins[0]["dtype"],
                p, outs[0]["dtype"])
            return d
        d["summary"] = "%s %s -> %s (B#%d)" % (r["op"], ins[0]["dtype"], outs[0]["dtype"], s)
        return d
    d["summary"] = "%s in %s %s (B#%d)" % (r["op"], outs[0]["dtype"] if outs else "?",
                                           outs[0]["shape"] if outs else "", s)
    return d


def _producer(ledger, key, module):
    """The op that made a tensor: the last one with its bytes, preferring
    one in the tensor's own module (32 layers compute the same bytes)."""
    seqs = ledger.by_out.get(key) or []
    for s in reversed(seqs):
        if ledger.op(s).get("module") == module:
            return s
    return seqs[-1] if seqs else None


def introduced(ledger, diff_entries, facts):
    """For a tensor of the way (facts: dtype, shape, hash, module): the ops
    of the way's ledger that introduced its difference (the first, then the
    others among its producers), with the ops between, or why none."""
    key = (facts["hash"], facts["dtype"], tuple(facts["shape"]))
    prod = _producer(ledger, key, facts.get("module"))
    if prod is None:
        return {"found": False, "why": "no recorded op produced these bytes"}
    graph = ledger.ancestry(prod)
    cands = sorted(s for s in graph if diff_entries.get(s, {}).get("status") == "introduced")
    if not cands:
        st = diff_entries.get(prod, {}).get("status", "identical")
        return {"found": False, "producer": prod, "why": "no op among its producers introduced "
                "a difference (its producer is %s)" % st}
    out = _describe(ledger, graph, cands[0])
    out.update({"found": True, "producer": prod, "entry": diff_entries.get(cands[0])})
    out["also"] = [_describe(ledger, graph, s) for s in cands[1:8]]
    # the ops between the introducing ones and the tensor, in order
    down = set(cands)
    for q in sorted(graph):
        if q > cands[0] and any(i in down for i in graph[q]):
            down.add(q)
    chain, last = [], None
    for q in sorted(down - set(cands)):
        nm = ledger.op(q)["op"]
        if nm != last and not re.match(r"^aten::(detach|alias|_reshape_alias|view)(\.|$)", nm):
            chain.append(nm)
        last = nm
    out["then"] = chain
    return out


def ledger_diff(bitprobe, a, b, out_json, env):
    """bitprobe diff A.ledger B.ledger: {B seq: entry} and the diff."""
    lj = bitprobe_json(bitprobe, ["diff", a, b, "--quiet"], out_json, env).get("ledger", {})
    entries = {e["b"]: e for e in lj.get("entries", []) if e.get("b") is not None}
    return entries, lj


def explain(bitprobe, a, b, seq, outdir, env):
    """bitprobe explain A.ledger B.ledger --op bSEQ: its JSON, its text and
    its exit status (or the error line)."""
    os.makedirs(outdir, exist_ok=True)
    j = os.path.join(outdir, "explain-b%d.json" % seq)
    cmd = [bitprobe, "explain", a, b, "--op", "b%d" % seq, "--out", outdir, "--json", j]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       universal_newlines=True)
    res = {"command": "bitprobe explain %s %s --op b%d --out %s" % (a, b, seq, outdir),
           "exit": r.returncode, "text": r.stdout.strip().splitlines()}
    if r.returncode == 2 or not os.path.exists(j):
        res["error"] = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return res
    with open(j) as f:
        res["json"] = json.load(f).get("ledger_explain")
    return res
