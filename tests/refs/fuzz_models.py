"""Probes drawn from real models, for the differential fuzzer: model code
as transformers writes it, a pure function of (seed, index).

Each probe is one block of a decoder or encoder in the run dtype:
  linear   `x @ w.t()` (+ bias), x 2-D [M, K] or 3-D [B, T, K] (folded to
           [B*T, K] as F.linear folds it, then unfolded), w [N, K]
  swiglu   LlamaMLP: down(silu(gate(x)) * up(x))
  gelu     a BERT/GPT MLP: fc2(gelu(fc1(x) + b1)) + b2, erf or tanh form
  attn     q, k, v projections, heads split and permuted, causal
           attention (sdpa, or written out: q k^T * scale, softmax, @ v)
  rmsnorm  LlamaRMSNorm written out (x.float(), pow 2, mean, + eps, rsqrt,
           x * r, .to(dtype), w *), or F.rms_norm
  layernorm F.layer_norm with weight and bias
  rope     inv_freq = 1 / base ** (arange(0, d, 2) / d), positions (plain,
           linearly scaled), outer, cat, cos/sin, q * cos + rotate_half(q) * sin
Hidden sizes 512..16384; inputs normal with std 0.02..4; weights normal
std 0.02 (as initialised) or a product of two normals (as trained: heavier
tails).  The CPU cost stays sane: every GEMM is capped at GEMM_FLOPS
multiply-adds and every tensor at MAX_NUMEL elements, by shrinking the
rows (and the output features of a layer wider than that allows).

A Linear layer is written `linear` (inputs [x, w] or [x, w, b], F.linear)
where bitprobe's op table has it (`bitprobe list --ops --json`), else
`transpose` then `matmul` (`addmm` where a bias is added to a 2-D product
and the table has it).  Run alone it prints probes of a seed (--help).
"""
import math
import random

HIDDEN = [512, 768, 1024, 2048, 3072, 4096, 5120, 8192, 16384]
STDS_X = [0.02, 0.1, 0.5, 1.0, 2.0, 4.0]
GEMM_FLOPS = 1 << 24
MAX_NUMEL = 1 << 20
KINDS = ("linear", "swiglu", "gelu", "attn", "rmsnorm", "layernorm", "rope")


def chosen(seed, index, fraction):
    """Whether probe index of seed is drawn from model code."""
    return fraction > 0 and random.Random(f"{seed}:{index}:model").random() < fraction


class Block:
    def __init__(self, rng, ops_table, dtype):
        self.r, self.ops, self.n, self.table = rng, [], 0, ops_table
        self.dtype = dtype

    def fresh(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def add(self, op):
        self.ops.append(op)
        return op["out"]

    def normal(self, shape, std, stem="x"):
        return self.add({"out": self.fresh(stem), "op": "normal", "shape": list(shape),
                         "seed": self.r.randint(0, 2 ** 31), "mean": 0, "std": std,
                         "dtype": "$dtype"})

    def weight(self, shape, stem="w"):
        """As initialised (std 0.02) or as trained: a product of two
        normals (kurtosis 9, tails far beyond a normal's)."""
        if self.r.random() < 0.5:
            return self.normal(shape, 0.02, stem)
        a = self.normal(shape, 0.1, stem)
        b = self.normal(shape, self.r.choice([0.2, 0.5, 1.0]), stem)
        return self.add({"out": self.fresh(stem), "op": "mul", "a": a, "b": b})

    def input(self, shape):
        return self.normal(shape, self.r.choice(STDS_X), "x")

    def linear(self, x, xshape, n_out, bias=None):
        """F.linear(x, w, b) on a 2-D or 3-D x (K last): returns (y, shape)."""
        k = xshape[-1]
        w = self.weight((n_out, k))
        b = self.weight((n_out,), "b") if bias is None and self.r.random() < 0.5 else bias
        lead = list(xshape[:-1])
        if "linear" in self.table:  # the hook: F.linear as PyTorch calls it
            y = self.add({"out": self.fresh("y"), "op": "linear",
                          "inputs": [x, w] + ([b] if b else [])})
            return y, tuple(lead + [n_out])
        x2 = x
        if len(xshape) == 3:
            x2 = self.add({"out": self.fresh("xf"), "op": "reshape", "a": x,
                           "shape": [math.prod(lead), k]})
        wt = self.add({"out": self.fresh("wt"), "op": "transpose", "a": w, "dim0": 0, "dim1": 1})
        if b and "addmm" in self.table:
            y = self.add({"out": self.fresh("y"), "op": "addmm", "inputs": [b, x2, wt]})
        else:
            y = self.add({"out": self.fresh("y"), "op": "matmul", "a": x2, "b": wt})
            if b:
                y = self.add({"out": self.fresh("y"), "op": "add", "a": y, "b": b})
        if len(xshape) == 3:
            y = self.add({"out": self.fresh("y"), "op": "reshape", "a": y,
                          "shape": lead + [n_out]})
        return y, tuple(lead + [n_out])


def rows_for(r, k, n, cap_rows=4096):
    """Rows M of an [M, K] @ [K, N] product within the caps."""
    m = r.choice([1, 2, 3, 7, 16, 33, 128, 512, 1000, 2048, cap_rows])
    while m > 1 and (m * k * n > GEMM_FLOPS or m * max(k, n) > MAX_NUMEL):
        m //= 2
    return max(m, 1)


def width_for(r, k, want):
    """Output features of a layer: want, cut down so that one row's product
    and the weight stay within the caps."""
    n = want
    while n > 8 and (k * n > MAX_NUMEL or k * n > GEMM_FLOPS):
        n //= 2
    return n


def shape_of(r, k, n):
    m = rows_for(r, k, n)
    if r.random() < 0.5 and m >= 4:
        b = r.choice([1, 2, 4])
        return (b, max(m // b, 1), k)
    return (m, k)


def gen_linear(g):
    r = g.r
    k = r.choice(HIDDEN)
    n = width_for(r, k, r.choice(HIDDEN))
    xs = shape_of(r, k, n)
    x = g.input(xs)
    y, _ = g.linear(x, xs, n)
    return [y]


def gen_swiglu(g):
    r = g.r
    h = r.choice(HIDDEN[:6])
    inter = width_for(r, h, r.choice([h * 2, h * 8 // 3 // 64 * 64, h * 4]))
    xs = shape_of(r, h, inter)
    x = g.input(xs)
    gate, _ = g.linear(x, xs, inter, bias=False)
    up, us = g.linear(x, xs, inter, bias=False)
    act = g.add({"out": g.fresh("a"), "op": "silu", "a": gate})
    hm = g.add({"out": g.fresh("h"), "op": "mul", "a": act, "b": up})
    down, _ = g.linear(hm, us, h, bias=False)
    return [act, hm, down]


def gen_gelu(g):
    r = g.r
    h = r.choice(HIDDEN[:5])
    inter = width_for(r, h, 4 * h)
    xs = shape_of(r, h, inter)
    x = g.input(xs)
    y, ys = g.linear(x, xs, inter)
    op = {"out": g.fresh("a"), "op": "gelu", "a": y}
    if r.random() < 0.3:
        op["approximate"] = "tanh"
    a = g.add(op)
    out, _ = g.linear(a, ys, h)
    return [a, out]


def gen_attn(g):
    r = g.r
    hd = r.choice([64, 128])
    heads = r.choice([1, 2, 4, 8])
    d = hd * heads
    t = r.choice([1, 7, 16, 64, 128, 256])
    while t > 1 and t * d * d * 3 > GEMM_FLOPS * 2:
        t //= 2
    xs = (1, t, d)
    x = g.input(xs)
    q, _ = g.linear(x, xs, d, bias=False)
    k, _ = g.linear(x, xs, d, bias=False)
    v, _ = g.linear(x, xs, d, bias=False)
    heads_of = []
    for z in (q, k, v):
        z4 = g.add({"out": g.fresh("r"), "op": "reshape", "a": z, "shape": [1, t, heads, hd]})
        heads_of.append(g.add({"out": g.fresh("p"), "op": "permute", "a": z4,
                               "dims": [0, 2, 1, 3]}))
    if r.random() < 0.5:
        o = g.add({"out": g.fresh("o"), "op": "sdpa", "inputs": heads_of, "is_causal": True})
        return [o]
    q3, k3, v3 = [g.add({"out": g.fresh("h"), "op": "reshape", "a": z, "shape": [heads, t, hd]})
                  for z in heads_of]
    kt = g.add({"out": g.fresh("kt"), "op": "transpose", "a": k3, "dim0": 1, "dim1": 2})
    s = g.add({"out": g.fresh("s"), "op": "bmm", "a": q3, "b": kt})
    s = g.add({"out": g.fresh("s"), "op": "mul", "a": s, "b": 1 / math.sqrt(hd)})
    p = g.add({"out": g.fresh("pr"), "op": "softmax", "a": s, "axis": -1})
    o = g.add({"out": g.fresh("o"), "op": "bmm", "a": p, "b": v3})
    return [p, o]


def gen_rmsnorm(g):
    r = g.r
    h = r.choice(HIDDEN)
    rows = max(1, min(r.choice([1, 4, 64, 1000, 4096]), MAX_NUMEL // h))
    x = g.input((rows, h))
    w = g.add({"out": g.fresh("w"), "op": "normal", "shape": [h], "seed": r.randint(0, 2 ** 31),
               "mean": 1, "std": r.choice([0.0, 0.02, 0.2]), "dtype": "$dtype"})
    eps = r.choice([1e-5, 1e-6])
    if r.random() < 0.3:
        return [g.add({"out": g.fresh("n"), "op": "rms_norm", "a": x, "b": w, "eps": eps})]
    xf = g.add({"out": g.fresh("f"), "op": "cast", "a": x, "dtype": "fp32"})
    sq = g.add({"out": g.fresh("q"), "op": "pow", "a": xf, "b": 2})
    var = g.add({"out": g.fresh("v"), "op": "mean", "a": sq, "axis": -1, "keepdim": True})
    ve = g.add({"out": g.fresh("v"), "op": "add", "a": var, "b": eps})
    rs = g.add({"out": g.fresh("r"), "op": "rsqrt", "a": ve})
    y = g.add({"out": g.fresh("y"), "op": "mul", "a": xf, "b": rs})
    yc = g.add({"out": g.fresh("y"), "op": "cast", "a": y, "dtype": "$dtype"})
    return [rs, g.add({"out": g.fresh("n"), "op": "mul", "a": w, "b": yc})]


def gen_layernorm(g):
    r = g.r
    h = r.choice(HIDDEN)
    rows = max(1, min(r.choice([1, 4, 64, 1000]), MAX_NUMEL // h))
    x = g.input((rows, h))
    w = g.weight((h,))
    b = g.weight((h,), "b")
    return [g.add({"out": g.fresh("n"), "op": "layer_norm", "inputs": [x, w, b],
                   "eps": r.choice([1e-5, 1e-12])})]


def gen_rope(g):
    r = g.r
    d = r.choice([64, 128])
    t = r.choice([16, 128, 1024, 4096])
    base = r.choice([10000.0, 500000.0, 1000000.0])
    ar = g.add({"out": g.fresh("i"), "op": "arange", "start": 0, "end": d, "step": 2,
                "dtype": "i64"})
    arf = g.add({"out": g.fresh("i"), "op": "cast", "a": ar, "dtype": "fp32"})
    ex = g.add({"out": g.fresh("e"), "op": "div", "a": arf, "b": d})
    pw = g.add({"out": g.fresh("p"), "op": "pow", "a": base, "b": ex})
    inv = g.add({"out": g.fresh("inv"), "op": "reciprocal", "a": pw})
    pos = g.add({"out": g.fresh("t"), "op": "arange", "start": 0, "end": t, "dtype": "fp32"})
    if r.random() < 0.3:  # linear scaling
        pos = g.add({"out": g.fresh("t"), "op": "div", "a": pos, "b": r.choice([2.0, 4.0, 8.0])})
    fr = g.add({"out": g.fresh("f"), "op": "outer", "a": pos, "b": inv})
    emb = g.add({"out": g.fresh("m"), "op": "concat", "inputs": [fr, fr], "axis": -1})
    cos = g.add({"out": g.fresh("c"), "op": "cos", "a": emb})
    sin = g.add({"out": g.fresh("s"), "op": "sin", "a": emb})
    cd = g.add({"out": g.fresh("c"), "op": "cast", "a": cos, "dtype": "$dtype"})
    sd = g.add({"out": g.fresh("s"), "op": "cast", "a": sin, "dtype": "$dtype"})
    q = g.input((t, d))
    rh = g.add({"out": g.fresh("h"), "op": "rotate_half", "a": q})
    a = g.add({"out": g.fresh("a"), "op": "mul", "a": q, "b": cd})
    b = g.add({"out": g.fresh("b"), "op": "mul", "a": rh, "b": sd})
    return [g.add({"out": g.fresh("q"), "op": "add", "a": a, "b": b})]


GENERATORS = {"linear": gen_linear, "swiglu": gen_swiglu, "gelu": gen_gelu, "attn": gen_attn,
              "rmsnorm": gen_rmsnorm, "layernorm": gen_layernorm, "rope": gen_rope}
WEIGHTS = {"linear": 4, "swiglu": 2, "gelu": 2, "attn": 2, "rmsnorm": 2, "layernorm": 1,
           "rope": 1}


def probe(seed, index, op_names):
    """The index-th model probe of a seed (a fuzz_gen spec); op_names: the
    ops bitprobe's table has (the linear/addmm hook)."""
    r = random.Random(f"{seed}:{index}:model-code")
    kind = r.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
    dtypes = sorted(r.sample(["fp32", "bf16", "fp16"], r.randint(1, 3)),
                    key=["fp32", "bf16", "fp16"].index)
    g = Block(r, set(op_names), "$dtype")
    outs = GENERATORS[kind](g)
    return {"name": f"fm{seed}-{index:04d}", "description": f"model code ({kind}), seed {seed} "
            f"probe {index}", "origin": f"seed {seed}, model probe {index} ({kind})",
            "dtypes": dtypes, "ops": g.ops, "outputs": outs}


def main():
    import argparse
    import json
    ap = argparse.ArgumentParser(
        description="Print model probes (fuzz_gen specs, JSON) of a seed; the fuzzer draws "
                    "them with `fuzz_torch.py run --models F` (a fraction F of its probes), "
                    "e.g. fuzz_torch.py run --bitprobe src/bitprobe --seed 1 --probes 20 "
                    "--models 1 --devices cpu --small.",
        epilog="Kinds: " + ", ".join(KINDS))
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--index", type=int, default=0, help="the first probe's index")
    ap.add_argument("--count", type=int, default=1)
    ap.add_argument("--ops", default="linear,addmm",
                    help="ops of bitprobe's table the generators may write beyond the "
                         "always-present ones (the linear/addmm hook); '' for none")
    args = ap.parse_args()
    names = [o for o in args.ops.split(",") if o]
    for i in range(args.index, args.index + args.count):
        print(json.dumps(probe(args.seed, i, names)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
