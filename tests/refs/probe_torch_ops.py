"""The probe ops in PyTorch: each op of a probe's YAML executed the way
PyTorch code states it (`a / 10`, `10 ** t`, `torch.arange(...)`,
`torch.outer`, `x.to(dtype)`, ...).  Shared by tests/refs/torch_probe.py
(bitprobe's CUDA buffers against PyTorch) and bench/suite_torch.py (the
PyTorch script bitprobe's suite is timed against).  The importer checks
that torch imports."""
import math

import torch

DT = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16,
      "fp64": torch.float64, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
      "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool}
for _name, _attr in (("fp8_e4m3", "float8_e4m3fn"), ("fp8_e5m2", "float8_e5m2")):
    if hasattr(torch, _attr):  # PyTorch 2.1 and later
        DT[_name] = getattr(torch, _attr)
# ATen's opmath_type: the type bf16 and f16 compute in.
OPMATH = {torch.bfloat16: torch.float32, torch.float16: torch.float32}
UNARY = {"reciprocal": torch.reciprocal, "exp": torch.exp, "log": torch.log,
         "sin": torch.sin, "cos": torch.cos, "tanh": torch.tanh, "sqrt": torch.sqrt,
         "rsqrt": torch.rsqrt, "neg": torch.neg, "sigmoid": torch.sigmoid,
         "silu": torch.nn.functional.silu, "erf": torch.erf, "exp2": torch.exp2,
         "log2": torch.log2, "log1p": torch.log1p, "expm1": torch.expm1, "abs": torch.abs,
         "sign": torch.sign, "floor": torch.floor, "ceil": torch.ceil, "trunc": torch.trunc}


COMPARE = {"lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
           "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b}


def param(v, params):
    if isinstance(v, str) and v.startswith("$"):
        return params[v[1:]]
    return v


def operand(v, params, bufs):
    v = param(v, params)
    if isinstance(v, str):
        return bufs[v]
    return v


def seq_sum(x, axis):
    x = x.movedim(axis, -1) if axis is not None else x.reshape(-1)
    if not x.is_floating_point():  # integers wrap in int64: no order to pin
        return x.sum(-1)
    acc_dt = torch.float64 if x.dtype == torch.float64 else torch.float32
    xs = x.to(acc_dt)
    acc = torch.zeros(xs.shape[:-1], dtype=acc_dt, device=xs.device)  # from +0
    for i in range(xs.shape[-1]):
        acc = acc + xs[..., i]
    return acc.to(x.dtype)


def pair_sum(x, axis):
    x = x.movedim(axis, -1) if axis is not None else x.reshape(-1)
    if not x.is_floating_point():
        return x.sum(-1)
    acc_dt = torch.float64 if x.dtype == torch.float64 else torch.float32

    def rec(v):
        n = v.shape[-1]
        if n == 0:
            return torch.zeros(v.shape[:-1], dtype=v.dtype, device=v.device)
        if n == 1:
            return v[..., 0]
        h = n // 2
        return rec(v[..., :h]) + rec(v[..., h:])
    return rec(x.to(acc_dt)).to(x.dtype)


# bitprobe's own generators: no PyTorch counterpart computes their bits
# (probes/README.md states them); a replay takes bitprobe's tensor.
OWN = ("uniform", "randn", "normal")


def run_op(op, params, bufs, dt_out, device, uniform):
    """Computes op on device; returns (tensor, required).

    dt_out is the output dtype of the ops that take one (tensor, arange,
    cast; None: PyTorch's default; sum and mean take it as torch's dtype=),
    uniform(op) the tensor of one of OWN (no PyTorch counterpart) or of a
    `load` op (its file's).  required is false where PyTorch's kernel has
    no fixed order or bitprobe does not replay it (matmul; an Aside names
    another reason: cumsum beyond cub's fixed tiles)."""
    k = op["op"]
    P = lambda key, d=None: param(op.get(key, d), params)
    if k == "tensor":
        t = torch.tensor(op["values"], dtype=dt_out, device=device)
        return t.reshape(op["shape"]) if "shape" in op else t, True
    if k == "arange":
        return torch.arange(P("start", 0), P("end"), P("step", 1), dtype=dt_out, device=device), True
    if k in OWN + ("load",):  # a load's tensor is its file's: nothing to compute
        return uniform(op).to(device), True
    if k == "cast":
        return operand(op["a"], params, bufs).to(dt_out), True
    if k in ("add", "sub", "mul", "div", "pow"):
        a = operand(op["a"], params, bufs)
        b = operand(op["b"], params, bufs)
        if k == "div":
            form = op.get("formulation", "default")
            if form is True:  # YAML 1.1 reads a bare `true` as a boolean
                form = "true"
            if form == "true" and not torch.is_tensor(b):
                # One division in opmath by the number as opmath holds it
                # (a divisor tensor reaches DivFunctor, not the CPU-scalar
                # reciprocal path), rounded once to the result dtype.
                rt = torch.result_type(a, b)
                rt = rt if rt.is_floating_point else torch.float32  # true division
                om = OPMATH.get(rt, rt)
                bt = torch.tensor(float(b), dtype=torch.float64).to(om).to(a.device)
                return (a.to(om) / bt).to(rt), True
            elif form == "reciprocal" and not torch.is_tensor(b):
                # CUDA's tensor / number: 1.0 / b in double, rounded once to
                # opmath (BinaryDivTrueKernel.cu), then one multiplication.
                rt = torch.result_type(a, b)
                rt = rt if rt.is_floating_point else torch.float32  # true division
                om = OPMATH.get(rt, rt)
                one = torch.tensor(1.0, dtype=torch.float64)
                r = (one / float(b)).to(om).to(a.device)
                return (a.to(om) * r).to(rt), True
            elif form == "reciprocal":
                # Both operands in the result dtype, 1/b rounded in opmath,
                # one multiplication, one rounding to the result dtype.
                rt = torch.result_type(a, b) if torch.is_tensor(a) else b.dtype
                rt = rt if rt.is_floating_point else torch.float32
                om = OPMATH.get(rt, rt)
                if torch.is_tensor(a):
                    av = a.to(rt).to(om)
                else:  # the number as opmath holds it
                    av = torch.tensor(float(a), dtype=torch.float64).to(om).to(b.device)
                return (av * (1 / b.to(rt).to(om))).to(rt), True
            elif form == "true" and not torch.is_tensor(a):
                # The number cast to b's dtype, then true division
                # (Tensor.__rtruediv__ would take reciprocal(b) * a).
                rt = b.dtype if b.is_floating_point() else torch.float32
                at = torch.tensor(float(a), dtype=torch.float64).to(rt).to(b.device)
                return at.expand_as(b) / b, True
            return a / b, True
        # Python's operators, as code states them: `2.5 * t` is
        # t.__rmul__(2.5), i.e. torch.mul(t, 2.5) with the number second
        # (where ATen's CPU kernels take it in opmath), not torch.mul(2.5, t).
        if k == "add":
            return a + b, True
        if k == "sub":
            return a - b, True
        if k == "mul":
            return a * b, True
        return a ** b, True
    if k == "silu" and op.get("formulation", "default") == "fixed":
        # CUDA's silu itself; on the CPU bitprobe takes SLEEF's scalar exp
        # for every element, which PyTorch's kernel does not: not required
        a = operand(op["a"], params, bufs)
        if device != "cpu":
            return torch.nn.functional.silu(a), True
        om = OPMATH.get(a.dtype, a.dtype)
        return (a.to(om) / (1 + torch.exp(-a.to(om)))).to(a.dtype), False
    if k in UNARY:
        return UNARY[k](operand(op["a"], params, bufs)), True
    if k in COMPARE:  # Python's operators take a number on either side
        return COMPARE[k](operand(op["a"], params, bufs), operand(op["b"], params, bufs)), True
    if k == "where":
        return torch.where(operand(op["cond"], params, bufs), operand(op["a"], params, bufs),
                           operand(op["b"], params, bufs)), True
    if k == "gelu":
        return torch.nn.functional.gelu(operand(op["a"], params, bufs),
                                        approximate=op.get("approximate", "none")), True
    if k == "round":
        a = operand(op["a"], params, bufs)
        d = P("decimals", 0)
        return (torch.round(a, decimals=d) if d else torch.round(a)), True
    if k in ("minimum", "maximum"):
        fn = torch.minimum if k == "minimum" else torch.maximum
        return fn(operand(op["a"], params, bufs), operand(op["b"], params, bufs)), True
    if k == "clamp":
        return torch.clamp(operand(op["a"], params, bufs), min=P("min"), max=P("max")), True
    if k == "clamp_tensor":  # torch.clamp's Tensor overload
        bound = lambda key: bufs[op[key]] if key in op else None
        return torch.clamp(operand(op["a"], params, bufs), min=bound("min"), max=bound("max")), True
    if k in ("full", "zeros", "ones"):
        shape = [param(d, params) for d in op["shape"]]
        if k == "full":
            return torch.full(shape, P("value"), dtype=dt_out, device=device), True
        fn = torch.zeros if k == "zeros" else torch.ones
        return fn(shape, dtype=dt_out or torch.float32, device=device), True
    if k == "linspace":
        return torch.linspace(P("start"), P("end"), P("steps"), dtype=dt_out or torch.float32,
                              device=device), True
    if k == "outer":
        return torch.outer(operand(op["a"], params, bufs), operand(op["b"], params, bufs)), True
    if k == "concat":
        return torch.cat([bufs[n] for n in op["inputs"]], dim=P("axis", 0)), True
    if k == "slice":
        a = operand(op["a"], params, bufs)
        ax = P("axis", 0) % a.dim()
        idx = [slice(None)] * a.dim()
        idx[ax] = slice(P("start", None), P("end", None), P("step", 1))
        return a[tuple(idx)], True
    if k == "rotate_half":
        x = operand(op["a"], params, bufs)
        h = x.shape[-1] // 2
        return torch.cat((-x[..., h:], x[..., :h]), dim=-1), True
    layout = {  # copies; .to() applies a probe's explicit dtype
        "reshape": lambda a: a.reshape(op["shape"]),
        "view": lambda a: a.view(op["shape"]),
        "transpose": lambda a: a.transpose(P("dim0"), P("dim1")),
        "permute": lambda a: a.permute(op["dims"]),
        "unsqueeze": lambda a: a.unsqueeze(P("axis")),
        "squeeze": lambda a: a.squeeze() if "axis" not in op else a.squeeze(P("axis")),
        "expand": lambda a: a.expand(op["shape"]),
        "index_select": lambda a: torch.index_select(a, P("axis"), operand(op["b"], params, bufs)),
        "embedding": lambda a: torch.nn.functional.embedding(a, operand(op["b"], params, bufs)),
    }
    if k in layout:
        return layout[k](operand(op["a"], params, bufs)).contiguous().to(dt_out), True
    if k == "matmul":
        return operand(op["a"], params, bufs) @ operand(op["b"], params, bufs), False
    if k == "sum":
        a = operand(op["a"], params, bufs)
        ax = op.get("axis")
        form = op.get("formulation", "default")
        if form in ("sequential", "pairwise"):
            a = a if dt_out is None else a.to(dt_out)
            r, req = (seq_sum if form == "sequential" else pair_sum)(a, ax), True
        else:
            # torch.sum(a, dtype=): on CUDA Reduce.cuh's order, on the CPU
            # SumKernel.cpp's cascade_sum, both replayed by bitprobe
            kw = {} if dt_out is None else {"dtype": dt_out}
            r, req = (a.sum(**kw) if ax is None else a.sum(ax, **kw)), True
        if op.get("keepdim"):  # torch.sum(a, dim, keepdim=True)
            shape = [1] * a.dim() if ax is None else list(a.shape)
            if ax is not None:
                shape[ax % a.dim()] = 1
            r = r.reshape(shape)
        return r, req
    if k == "mean" and dt_out is not None and op.get("formulation", "default") == "default":
        a, ax = operand(op["a"], params, bufs), P("axis")
        if a.dtype != dt_out:  # torch.mean(a, dtype=)
            r = a.mean(dtype=dt_out) if ax is None else a.mean(ax, dtype=dt_out)
            return _keep(r, a, ax, op.get("keepdim")), True
    if k in ROWS:
        return ROWS[k](op, P, lambda key: operand(op[key], params, bufs),
                       [bufs[n] for n in op.get("inputs", [])], device)
    raise ValueError(f"op '{k}' has no PyTorch counterpart here")


def _keep(r, a, ax, keep):
    """r with the reduced dimension(s) kept as 1 (keepdim)."""
    if not keep:
        return r
    shape = [1] * a.dim() if ax is None else list(a.shape)
    if ax is not None:
        shape[ax % a.dim()] = 1
    return r.reshape(shape)


def _acc(x):
    return torch.float64 if x.dtype == torch.float64 else torch.float32


def _mean(op, P, A, ins, device):
    a, ax, form = A("a"), P("axis"), op.get("formulation", "default")
    n = a.numel() if ax is None else a.shape[ax]
    if form == "default":  # ATen's own order on both devices (CUDA: Reduce.cuh)
        r = a.mean() if ax is None else a.mean(ax)
        return _keep(r, a, ax, op.get("keepdim")), True
    if not a.is_floating_point():
        a = a.to(torch.float32)  # bitprobe's mean is a float function
    s = (seq_sum if form == "sequential" else pair_sum)(a.to(_acc(a)), ax)
    if device == "cpu":  # mean_out: the sum, then div_(n)
        r = s / n
    else:  # MeanOps: the sum times the factor 1/n, taken in float
        f = torch.tensor(float(torch.tensor(1.0, dtype=torch.float32) /
                               torch.tensor(float(n), dtype=torch.float32)),
                         dtype=s.dtype, device=s.device)
        r = s * f
    return _keep(r.to(a.dtype), a, ax, op.get("keepdim")), True


class Aside:
    """A `required` of run_op that is not: false, with the fuzzer's verdict
    naming why (fuzz_check.REASONS)."""

    def __init__(self, verdict):
        self.verdict = verdict

    def __bool__(self):
        return False


# The tile of cub's DeviceScan::InclusiveScan for PyTorch's whole-tensor
# cumsum on CUDA (std::plus<scalar_t> takes cub's default policy: 128
# threads x 15, 7 or 30 items; kernels/scan.cu), and the tiles up to which
# its look-back adds the prefixes in one order whatever the timing.
CUB_SCAN_TILE = {torch.float32: 128 * 15, torch.float64: 128 * 7,
                 torch.bfloat16: 128 * 30, torch.float16: 128 * 30}
CUB_FIXED_TILES = 3
LOOKBACK = Aside("lookback")


def _cumsum_required(r, ax, device):
    """CUDA: scan_dim hands a tensor whose axis holds all of it to cub's
    inclusive_scan (ScanUtils.cuh), whose order bitprobe reproduces up to
    3 tiles; beyond, its decoupled look-back reduces the prefixes of tiles
    that have published only their totals in an order that depends on
    timing (not required: LOOKBACK).  PyTorch itself takes
    inclusive_deterministic_scan only under use_deterministic_algorithms;
    integer sums are exact in any order.  r is the result."""
    if device == "cpu" or not r.is_floating_point() or r.dim() == 0 or \
            r.numel() != r.shape[ax]:
        return True
    return True if r.numel() <= CUB_FIXED_TILES * CUB_SCAN_TILE[r.dtype] else LOOKBACK


def _cumsum(op, P, A, ins, d):
    r = torch.cumsum(A("a"), P("axis"))
    return r, _cumsum_required(r, P("axis"), d)


def fixed_sum(x, device):
    """x summed over its last axis (keepdim) in the order of the `fixed`
    formulation, in x's dtype: left to right from +0 on the CPU; on CUDA
    as one block of 256 threads (thread k folds elements k, k + 256, ... in
    order, then the 256 partials meet in a binary tree, k with k + 128,
    then k + 64, ...: kernels/bpk_rows.cuh)."""
    n = x.shape[-1]
    if device == "cpu":
        acc = torch.zeros(x.shape[:-1], dtype=x.dtype, device=x.device)
        for i in range(n):
            acc = acc + x[..., i]
        return acc.unsqueeze(-1)
    pad = (-n) % 256
    xp = torch.cat([x, torch.zeros(x.shape[:-1] + (pad,), dtype=x.dtype, device=x.device)], -1)
    acc = torch.zeros(x.shape[:-1] + (256,), dtype=x.dtype, device=x.device)
    for i in range(0, n + pad, 256):  # each thread's elements in order (a padding 0 adds +0)
        acc = acc + xp[..., i:i + 256]
    k = 128
    while k:
        acc = torch.cat([acc[..., :k] + acc[..., k:2 * k], acc[..., k:]], -1)
        k //= 2
    return acc[..., :1]


def _rms_norm_fixed(x, w, eps, device):
    """rms_norm's `fixed` formulation (transformers' LlamaRMSNorm in
    bitprobe's order): ss in opmath, r = 1/sqrt(ss/H + eps) on the CPU
    (two roundings), CUDA's rsqrt there; y = x*r rounded to the dtype, then
    w*y rounded to it."""
    om = OPMATH.get(x.dtype, x.dtype)
    xu = x.to(om)
    e = torch.finfo(om).eps if eps is None else eps
    h = torch.tensor(float(x.shape[-1]), dtype=om, device=x.device)  # a true division
    v = fixed_sum(xu * xu, device) / h + e
    r = 1 / _sqrt_rounded(v) if device == "cpu" else torch.rsqrt(v)
    return w.to(x.dtype) * (xu * r).to(x.dtype), True


def _sqrt_rounded(v):
    """sqrt correctly rounded to v's dtype, as bitprobe's `fixed` form takes
    it: torch.sqrt on x86 CPU wheels is MKL VML's, which is not (a few
    elements 1 ulp off), so the reference would carry VML's error.  Python's
    math.sqrt in double, then one rounding (exact for fp32: 53 >= 2*24+2)."""
    def one(e):
        return math.sqrt(e) if e >= 0 or e != e else float("nan")
    vals = [one(e) for e in v.detach().double().cpu().flatten().tolist()]
    return torch.tensor(vals, dtype=torch.float64).reshape(v.shape).to(v.dtype)


def _softmax_fixed(a, axis, log, device):
    """softmax's and log_softmax's `fixed` formulation along axis: on the
    CPU bitprobe takes SLEEF's scalar exp and log, which PyTorch's CPU
    kernels do not (vector lanes, or MKL): not required there.  A 0-d
    tensor is one row of one value."""
    if a.dim() == 0:
        r, req = _softmax_fixed(a.reshape(1), 0, log, device)
        return r.reshape(()), req
    dt = a.dtype if a.is_floating_point() else torch.float32
    if not a.numel():  # no row to reduce (amax refuses an empty dim)
        return a.to(dt).clone(), True
    om = OPMATH.get(a.dtype, a.dtype) if a.is_floating_point() else torch.float32
    x = a.to(om).movedim(axis, -1)
    m = x.amax(-1, keepdim=True)
    e = torch.exp(x - m)
    s = fixed_sum(e, device)
    r = (x - m) - torch.log(s) if log else e / s
    return r.to(dt).movedim(-1, axis), device != "cpu"


def _softmax(op, P, A, ins, device):
    log = op["op"] == "log_softmax"
    if op.get("formulation", "default") == "fixed":
        return _softmax_fixed(A("a"), P("axis"), log, device)
    return (torch.log_softmax if log else torch.softmax)(A("a"), P("axis")), True


def _rms_norm(op, P, A, ins, device):
    x, w, eps = A("a"), A("b"), P("eps")
    if op.get("formulation", "default") == "fixed":
        return _rms_norm_fixed(x, w, eps, device)
    f = getattr(torch.nn.functional, "rms_norm", None)
    if f is not None:  # CUDA: layer_norm_kernel.cu's rms path, as bitprobe's
        return f(x, [x.shape[-1]], w, eps), True
    # PyTorch 2.x's CPU composite (layer_norm.cpp rms_norm_composite): the
    # weight multiplies the upcast result, one rounding to the dtype
    om = OPMATH.get(x.dtype, x.dtype)
    xu = x.to(om)
    e = torch.finfo(om).eps if eps is None else eps
    r = torch.rsqrt(xu.pow(2).mean(-1, keepdim=True).add_(e))
    return xu.mul(r).mul(w).type_as(x), device == "cpu"


def _sdpa(op, P, A, ins, device):
    q, k, v = ins
    causal, scale = bool(op.get("is_causal", False)), P("scale")
    try:  # PyTorch 2.x: the math path itself (required on CUDA: its products
        # are cuBLAS's calls, which bitprobe makes as matmul does)
        return torch.ops.aten._scaled_dot_product_attention_math(
            q, k, v, None, 0.0, causal, None, scale=scale)[0], device != "cpu"
    except (AttributeError, RuntimeError, TypeError):
        pass
    # attention.cpp's math path, written out (PyTorch without it)
    om = OPMATH.get(q.dtype, q.dtype)
    s = (scale if scale is not None else 1.0 / q.shape[-1] ** 0.5)
    sf = abs(s) ** 0.5
    qs = q.to(om) * (-sf if s < 0 else sf)
    sc = qs @ (k.to(om).transpose(-2, -1) * sf)
    if causal:
        L, S = q.shape[-2], k.shape[-2]
        m = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        sc = sc.masked_fill(~m, float("-inf"))
    p = torch.softmax(sc, -1)
    p = torch.where((sc == float("-inf")).all(-1, keepdim=True), torch.zeros_like(p), p)
    return (p @ v.to(om)).to(q.dtype), False


ROWS = {
    # CUDA: every path of SoftMax.cu's host_softmax (persistent, Reg, Smem,
    # ILP, spatial) is bitprobe's; CPU: ATen's formulations
    "softmax": _softmax,
    "log_softmax": _softmax,
    "mean": _mean,
    "var": lambda op, P, A, ins, d: (
        torch.var(A("a"), P("axis"), correction=P("correction", 1),
                  keepdim=bool(op.get("keepdim"))), True),
    "amax": lambda op, P, A, ins, d: (
        torch.amax(A("a"), () if P("axis") is None else P("axis"), bool(op.get("keepdim"))), True),
    "amin": lambda op, P, A, ins, d: (
        torch.amin(A("a"), () if P("axis") is None else P("axis"), bool(op.get("keepdim"))), True),
    "logsumexp": lambda op, P, A, ins, d: (
        torch.logsumexp(A("a"), list(range(A("a").dim())) if P("axis") is None else P("axis"),
                        bool(op.get("keepdim"))),
        # CPU: the composite with SumKernel.cpp's order; CUDA: with
        # Reduce.cuh's order; both as bitprobe's
        True),
    "prod": lambda op, P, A, ins, d: (
        _keep(A("a").prod() if P("axis") is None else A("a").prod(P("axis")), A("a"), P("axis"),
              op.get("keepdim")), True),
    "cumsum": _cumsum,
    "rms_norm": _rms_norm,
    "layer_norm": lambda op, P, A, ins, d: (
        torch.nn.functional.layer_norm(ins[0], [ins[0].shape[-1]],
                                       ins[1] if len(ins) > 1 else None,
                                       ins[2] if len(ins) > 2 else None,
                                       1e-5 if P("eps") is None else P("eps")),
        True),  # CPU: RowwiseMoments; CUDA: layer_norm_kernel.cu; both as bitprobe's
    "bmm": lambda op, P, A, ins, d: (torch.bmm(A("a"), A("b")), False),
    # unpinned as bmm: PyTorch's CPU takes MKL/oneDNN's gemm beyond tiny sizes
    "baddbmm": lambda op, P, A, ins, d: (
        torch.baddbmm(ins[0], ins[1], ins[2], beta=P("beta", 1), alpha=P("alpha", 1)), False),
    "sdpa": _sdpa,
    # unpinned as matmul (PyTorch's CPU takes MKL/oneDNN's gemm; on CUDA the
    # replay's operands are contiguous copies, not the views bitprobe's
    # cuda backend multiplies: tests/gpu/linear_gpu.sh checks those)
    "linear": lambda op, P, A, ins, d: (
        torch.nn.functional.linear(ins[0], ins[1], ins[2] if len(ins) > 2 else None), False),
    "addmm": lambda op, P, A, ins, d: (
        torch.addmm(ins[0], ins[1], ins[2], beta=P("beta", 1), alpha=P("alpha", 1)), False),
}


def bits(t):
    t = t.detach().cpu().contiguous()
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.view(torch.int16), t.isnan()
    if t.dtype == torch.float32:
        return t.view(torch.int32), t.isnan()
    if t.dtype == torch.float64:
        return t.view(torch.int64), t.isnan()
    if t.is_floating_point() and t.element_size() == 1:  # fp8
        return t.view(torch.uint8), t.float().isnan()
    return t, torch.zeros_like(t, dtype=torch.bool)


def mismatches(a, b):
    ab, an = bits(a)
    bb, bn = bits(b)
    if ab.shape != bb.shape:
        return -1
    return int(((ab != bb) & ~(an & bn)).sum())
