"""RoPE-family buffers and their correctly rounded values.

A build process reports each rotary module it finds (a module holding an
inv_freq buffer, or a rotary/rope class holding buffers) with its
attributes and config.  Here that becomes a formula: transformers' code for
the module's rope type, op by op as PyTorch runs it (`1.0 / t` is
t.reciprocal() * 1.0, `number - t` one subtraction, a Python number's own
arithmetic done in Python first), written as a bitprobe probe whose outputs
are the module's inv_freq, its cos/sin caches and its forward's cos/sin,
each cast to the dtypes the ways hold.  bitprobe runs the probes on its
MPFR oracle (every op correctly rounded to its dtype): those values say
which way is right, whatever device computed it.

Rope types (transformers' modeling_rope_utils): default, linear, dynamic
(at init: the default formula with the base transformers computes for
seq_len = max_position_embeddings), yarn, longrope (short factors at init),
llama3, mrope (the default inv_freq); 2023-style modules (dim, base,
max_position_embeddings and scaling_factor attributes, caches as buffers).
"""
import math
import os
import re
import subprocess

_CACHE = re.compile(r"^_?(cos|sin)(_cached|_cache)?$")
_DT = {"F32": "fp32", "BF16": "bf16", "F16": "fp16"}


class Unsupported(Exception):
    pass


def _num(v):
    if isinstance(v, bool):
        raise Unsupported("boolean where a number goes")
    if isinstance(v, int):
        return str(v)
    if math.isnan(v) or math.isinf(v):
        raise Unsupported("non-finite number %r" % v)
    r = repr(float(v))
    return r if ("." in r or "e" in r) else r + ".0"


def _scaling(facts):
    c = facts.get("config") or {}
    s = c.get("rope_parameters") or c.get("rope_scaling") or {}
    if isinstance(s, dict) and s and all(isinstance(v, dict) for v in s.values()):
        s = s.get("full_attention") or next(iter(s.values()))  # per layer type: the full one
    return s if isinstance(s, dict) else {}


def rope_type(facts):
    a, s = facts.get("attrs", {}), _scaling(facts)
    t = a.get("rope_type") or s.get("rope_type") or s.get("type")
    if t:
        return t
    cls = facts.get("class", "")
    if "LinearScaling" in cls:
        return "linear-2023"
    if "DynamicNTK" in cls:
        return "dynamic-2023"
    return "default"


def _base(facts):
    a, s, c = facts.get("attrs", {}), _scaling(facts), facts.get("config") or {}
    for v in (a.get("base"), a.get("rope_theta"), s.get("rope_theta"), c.get("rope_theta")):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return v
    return None


class Probe:
    """Ops written as flow mappings, buffers named in order."""

    def __init__(self):
        self.ops = []
        self.n = 0

    def op(self, prefix, **kw):
        self.n += 1
        out = "%s%d" % (prefix, self.n)
        parts = ["out: %s" % out]
        for k, v in kw.items():
            if isinstance(v, str):
                parts.append("%s: %s" % (k, v))
            elif isinstance(v, (list, tuple)):
                parts.append("%s: [%s]" % (k, ", ".join(x if isinstance(x, str) else _num(x)
                                                          for x in v)))
            else:
                parts.append("%s: %s" % (k, _num(v)))
        self.ops.append("  - {%s}" % ", ".join(parts))
        return out


def _default_inv(p, dim, base):
    """1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))"""
    idx = p.op("idx", op="arange", start=0, end=dim, step=2)
    idf = p.op("idx_f", op="cast", a=idx, dtype="fp32")
    ex = p.op("expo", op="div", a=idf, b=dim)
    den = p.op("denom", op="pow", a=base, b=ex)
    rec = p.op("recip", op="reciprocal", a=den)
    return p.op("inv", op="mul", a=rec, b=1.0), ex


def inv_freq_ops(p, facts, L):
    """Adds the ops of the module's inv_freq (fp32, L elements) to p;
    returns (buffer, description, attention factor or None, notes)."""
    t = rope_type(facts)
    dim = 2 * L
    base = _base(facts)
    if base is None:
        raise Unsupported("no base (rope_theta) found for %s" % facts.get("path"))
    s, c = _scaling(facts), facts.get("config") or {}
    notes = []
    if t in ("default", "linear-2023", "dynamic-2023", "mrope") or (
            t == "dynamic" and "factor" in s):
        b = base
        if t == "dynamic":
            # transformers: seq_len = max_position_embeddings at init
            mp = c.get("max_position_embeddings")
            f = s["factor"]
            b = base * ((f * mp / mp) - (f - 1)) ** (dim / (dim - 2))
        inv, _ = _default_inv(p, dim, b)
        desc = "1.0 / (%s ** (arange(0, %d, 2) / %d))" % (_num(b), dim, dim)
        return inv, desc, None, notes
    if t == "linear":
        inv, _ = _default_inv(p, dim, base)
        f = s.get("factor")
        out = p.op("inv_lin", op="div", a=inv, b=f)
        return out, "linear: 1.0 / (%s ** (arange(0, %d, 2) / %d)) / %s" % (
            _num(base), dim, dim, _num(f)), None, notes
    if t == "llama3":
        inv, _ = _default_inv(p, dim, base)
        factor, lo, hi = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
        old = s["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        r = p.op("inv_r", op="reciprocal", a=inv)
        wl = p.op("wavelen", op="mul", a=r, b=2 * math.pi)
        is_low = p.op("is_low", op="gt", a=wl, b=low_wl)
        idv = p.op("inv_div", op="div", a=inv, b=factor)
        l0 = p.op("llama0", op="where", cond=is_low, a=idv, b=inv)
        wr = p.op("wl_r", op="reciprocal", a=wl)
        ratio = p.op("ratio", op="mul", a=wr, b=old)
        rm = p.op("ratio_m", op="sub", a=ratio, b=lo)
        sm = p.op("smooth", op="div", a=rm, b=hi - lo)
        om = p.op("one_m", op="sub", a=1, b=sm)
        t1 = p.op("t1_", op="mul", a=om, b=l0)
        t2 = p.op("t2_", op="div", a=t1, b=factor)
        t3 = p.op("t3_", op="mul", a=sm, b=l0)
        smd = p.op("smoothed", op="add", a=t2, b=t3)
        ih = p.op("is_high", op="lt", a=wl, b=high_wl)
        nh = p.op("not_high", op="eq", a=ih, b=0)
        nl = p.op("not_low", op="eq", a=is_low, b=0)
        med = p.op("is_medium", op="where", cond=nh, a=nl, b=nh)
        out = p.op("llama3", op="where", cond=med, a=smd, b=l0)
        return out, ("llama3: factor %s, low_freq_factor %s, high_freq_factor %s, original "
                     "context %s" % (_num(factor), _num(lo), _num(hi), old)), None, notes
    if t == "yarn":
        mp = s.get("original_max_position_embeddings") or c.get("max_position_embeddings")
        factor = s["factor"]
        att = s.get("attention_factor")
        if att is None:
            mscale, msad = s.get("mscale"), s.get("mscale_all_dim")

            def get_mscale(scale, m=1):
                return 1.0 if scale <= 1 else 0.1 * m * math.log(scale) + 1.0
            if mscale and msad:
                att = float(get_mscale(factor, mscale) / get_mscale(factor, msad))
            else:
                att = get_mscale(factor)
        beta_fast = s.get("beta_fast") or 32
        beta_slow = s.get("beta_slow") or 1

        def corr_dim(rot):
            return (dim * math.log(mp / (rot * 2 * math.pi))) / (2 * math.log(base))
        low, high = corr_dim(beta_fast), corr_dim(beta_slow)
        if s.get("truncate", True):
            low, high = math.floor(low), math.ceil(high)
        low, high = max(low, 0), min(high, dim - 1)
        if low == high:
            high += 0.001
        idx = p.op("idx", op="arange", start=0, end=dim, step=2)
        idf = p.op("idx_f", op="cast", a=idx, dtype="fp32")
        ex = p.op("expo", op="div", a=idf, b=dim)
        pf = p.op("pos_freqs", op="pow", a=base, b=ex)
        r1 = p.op("r_ext", op="reciprocal", a=pf)
        ext = p.op("inv_ext", op="mul", a=r1, b=1.0)
        fp = p.op("f_pf", op="mul", a=pf, b=factor)
        r2 = p.op("r_int", op="reciprocal", a=fp)
        inter = p.op("inv_int", op="mul", a=r2, b=1.0)
        ar = p.op("ramp_x", op="arange", end=dim // 2, dtype="fp32")
        sb = p.op("ramp_s", op="sub", a=ar, b=low)
        lf = p.op("ramp_l", op="div", a=sb, b=high - low)
        rf = p.op("ramp", op="clamp", a=lf, min=0, max=1)
        ef = p.op("extra", op="sub", a=1, b=rf)
        om = p.op("one_m", op="sub", a=1, b=ef)
        a1 = p.op("yi", op="mul", a=inter, b=om)
        a2 = p.op("ye", op="mul", a=ext, b=ef)
        out = p.op("yarn", op="add", a=a1, b=a2)
        return out, ("yarn: factor %s, beta_fast %s, beta_slow %s, correction range [%s, %s], "
                     "attention factor %s" % (_num(factor), _num(beta_fast), _num(beta_slow),
                                              _num(low), _num(high), _num(att))), att, notes
    if t == "longrope":
        short = s.get("short_factor")
        if not isinstance(short, list) or len(short) != L:
            raise Unsupported("longrope short_factor is not a list of %d numbers" % L)
        omp = c.get("original_max_position_embeddings") or s.get(
            "original_max_position_embeddings")
        mp = c.get("max_position_embeddings")
        factor = s.get("factor")
        att = s.get("attention_factor")
        if omp:
            factor = mp / omp
            base_mp = omp
        else:
            base_mp = mp
        if att is None:
            att = 1.0 if factor is None or factor <= 1.0 else math.sqrt(
                1 + math.log(factor) / math.log(base_mp))
        ext = p.op("ext", op="tensor", values=[float(x) for x in short], dtype="fp32")
        idx = p.op("idx", op="arange", start=0, end=dim, step=2)
        idf = p.op("idx_f", op="cast", a=idx, dtype="fp32")
        sh = p.op("shape_", op="div", a=idf, b=dim)
        pw = p.op("pw", op="pow", a=base, b=sh)
        m = p.op("ext_pw", op="mul", a=ext, b=pw)
        r = p.op("recip", op="reciprocal", a=m)
        out = p.op("longrope", op="mul", a=r, b=1.0)
        notes.append("longrope: the short factors (what transformers uses at init)")
        return out, "longrope (short factors), attention factor %s" % _num(att), att, notes
    raise Unsupported("rope type '%s' has no formula here" % t)


def items_of(facts, tensors):
    """What of a rotary module the oracle computes: [(name, spec)], spec
    {"what": "inv_freq" | "cos" | "sin", "P", "last", "shape", "forward"}.
    tensors: name -> facts of the reference's tensors."""
    out, L = [], None
    bufs = facts.get("buffers", {})
    inv = bufs.get("inv_freq")
    if inv and inv in tensors and len(tensors[inv]["shape"]) == 1:
        L = tensors[inv]["shape"][0]
        out.append((inv, {"what": "inv_freq", "shape": tensors[inv]["shape"]}))
    if L is None:
        return None, []
    for leaf, name in bufs.items():
        m = _CACHE.match(leaf)
        if not m or name not in tensors:
            continue
        sh = tensors[name]["shape"]
        if len(sh) < 2 or any(d != 1 for d in sh[:-2]) or sh[-1] not in (L, 2 * L):
            continue
        out.append((name, {"what": m.group(1), "P": sh[-2], "last": sh[-1], "shape": sh,
                           "forward": False}))
    fw = facts.get("forward") or {}
    for name in fw.get("names") or []:
        if name in tensors:
            sh = tensors[name]["shape"]
            if len(sh) == 2 and sh[-1] in (L, 2 * L):
                out.append((name, {"what": name.rsplit(".", 1)[1], "P": sh[0], "last": sh[1],
                                   "shape": sh, "forward": True}))
    return L, out


def build_probe(name, facts, L, items, dtypes):
    """(YAML text, {tensor name: probe output}, description, notes) for one
    rotary module."""
    p = Probe()
    inv, desc, att, notes = inv_freq_ops(p, facts, L)
    t = rope_type(facts)
    a = facts.get("attrs", {})
    outs = {}
    emb_of = {}
    for tname, sp in items:
        if sp["what"] == "inv_freq":
            o = p.op("out_inv", op="cast", a=inv, dtype="$dtype")
        else:
            if sp["forward"] and t == "longrope":
                omp = (facts.get("config") or {}).get("original_max_position_embeddings")
                if omp and sp["P"] > omp:
                    notes.append("%s: positions beyond original_max_position_embeddings use the "
                                 "long factors: no oracle" % tname)
                    continue
            key = (sp["P"], sp["last"], sp["forward"])
            if key not in emb_of:
                pos = p.op("pos", op="arange", end=sp["P"], dtype="fp32")
                sf = a.get("scaling_factor")
                if sf not in (None, 1, 1.0) and (not sp["forward"] or t == "linear-2023"):
                    pos = p.op("pos_s", op="div", a=pos, b=sf)  # t / scaling_factor
                fr = p.op("freqs", op="outer", a=pos, b=inv)
                emb = p.op("emb", op="concat", inputs=[fr, fr], axis=-1) \
                    if sp["last"] == 2 * L else fr
                emb_of[key] = emb
            f = p.op(sp["what"] + "_", op=sp["what"], a=emb_of[key])
            if sp["forward"] and att not in (None, 1, 1.0):
                f = p.op("scaled", op="mul", a=f, b=att)
            sf = a.get("attention_scaling")
            if sp["forward"] and att is None and isinstance(sf, float) and sf != 1.0:
                f = p.op("scaled", op="mul", a=f, b=sf)
            o = p.op("out_" + sp["what"], op="cast", a=f, dtype="$dtype")
        outs[tname] = o
    if not outs:
        return None, {}, desc, notes
    text = ["# %s: the oracle's values of %s (%s), as transformers computes them" %
            (name, facts.get("path") or facts.get("class"), desc),
            "name: %s" % name,
            'description: "%s"' % desc.replace('"', "'"),
            "dtypes: [%s]" % ", ".join(sorted(dtypes, key=["fp32", "bf16", "fp16"].index)),
            "ops:"] + p.ops + ["outputs:"] + ["  - {name: %s}" % o for o in outs.values()]
    return "\n".join(text) + "\n", outs, desc, notes


def plan(ref_info, dtypes):
    """The probes for the reference's rotary modules: [{name, yaml, outs,
    desc, notes, module}], and notes on what has no oracle."""
    tensors = {t["name"]: t for t in ref_info.get("tensors", []) if t.get("hash")}
    probes, skipped, seen = [], [], {}
    for facts in ref_info.get("rope", []):
        L, items = items_of(facts, tensors)
        if not items:
            skipped.append("%s (%s): no inv_freq buffer to read the formula's size from" %
                           (facts.get("path") or facts.get("class"), facts.get("class")))
            continue
        # 32 layers with one formula: one probe
        key = repr((rope_type(facts), facts.get("attrs"), _scaling(facts), _base(facts), L,
                    [(sp["what"], sp.get("P"), sp.get("last"), sp.get("forward"))
                     for _, sp in items]))
        if key in seen:
            for (tname, sp), (t0, _) in zip(items, seen[key]["items"]):
                seen[key]["outs_all"][tname] = seen[key]["outs"].get(t0)
            continue
        name = "init-rope-%d" % (len(probes) + 1)
        try:
            text, outs, desc, notes = build_probe(name, facts, L, items, dtypes)
        except (Unsupported, KeyError, TypeError, ZeroDivisionError) as e:
            skipped.append("%s (%s, rope type %s): %s" % (facts.get("path"), facts.get("class"),
                                                           rope_type(facts), e))
            continue
        if text is None:
            skipped.append("%s: nothing the oracle computes" % facts.get("path"))
            continue
        pr = {"name": name, "yaml": text, "outs": outs, "outs_all": dict(outs), "desc": desc,
              "notes": notes, "module": facts.get("path"), "class": facts.get("class"),
              "rope_type": rope_type(facts), "items": items}
        seen[key] = pr
        probes.append(pr)
    return probes, skipped


def run_oracle(bitprobe, probes, outdir, env):
    """Writes the probes under outdir/probes, runs them on the oracle, and
    returns (name of a tensor -> {dtype: CPU tensor}, error or None)."""
    from . import stio
    pdir = os.path.join(outdir, "probes")
    os.makedirs(pdir, exist_ok=True)
    paths = []
    for pr in probes:
        path = os.path.join(pdir, pr["name"] + ".yaml")
        with open(path, "w") as f:
            f.write(pr["yaml"])
        paths.append(path)
    save = os.path.join(outdir, "run")
    cmd = [bitprobe, "run"] + paths + ["--device", "oracle", "--no-golden", "--save", save,
                                       "--quiet"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       universal_newlines=True)
    if r.returncode not in (0, 1):
        msg = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[-1]
        return {}, "bitprobe run on the oracle failed: %s" % msg
    values = {}
    for pr in probes:
        f = os.path.join(save, pr["name"], "oracle.safetensors.gz")
        if not os.path.exists(f):
            return {}, "the oracle saved nothing for %s" % pr["name"]
        ts, _ = stio.read(f)
        for tname, o in pr["outs_all"].items():
            if o is None:
                continue
            for k, v in ts.items():
                out, _, dt = k.rpartition(".")
                if out == o:
                    values.setdefault(tname, {})[dt] = v
    return values, None


def dtype_key(ledger_dtype):
    return _DT.get(ledger_dtype)
