"""The fuzzer's checker: every op of every probe replayed in PyTorch on
bitprobe's own inputs, one device at a time, and compared bit for bit
(NaNs by class) with bitprobe's output of that op.

Each op reads the buffers bitprobe saved (`run --save --intermediates`)
for the same device, so one op's difference is never counted again
downstream.  An op's verdict:
  identical     bit-identical, dtype and shape equal
  differ        a required op that is not identical: a failure
  mkl           CPU, an op PyTorch's x86 builds take from MKL VML (fp32 and
                fp64 sin, cos, exp, log, tanh, sqrt, ...), which bitprobe
                does not reproduce: counted and reported, not a failure
  version       CPU, PyTorch before 2.0, where bitprobe follows 2.x's kernel:
                silu of bf16/fp16 and round(decimals) of bf16/fp16 (1.13
                rounds each operation to the dtype), linspace of every float dtype (1.13 fills vector registers
                with Vectorized::arange from each register's first element;
                2.x computes every element by the scalar lambda), exp2 of
                every float dtype (1.13: std::exp2 on every element; 2.x:
                SLEEF's exp2 in the vector lanes), erf of bf16/fp16 (1.13:
                SLEEF's erf; 2.x: Vectorized<float>::erf, ATen's polynomial),
                mean of bf16/fp16 (1.13 sums into the dtype, rounding the
                sum, and divides there; 2.x's mean_out sums into float),
                fp16 sum in the default order (1.13's SumKernel adds
                neighbouring pairs of a 16-lane fp16 register, 2.x its two
                8-lane float halves, as for bf16 in both),
                var with more than one result (1.13's build fuses the m2
                update of WelfordOps into an fma, PyTorch 2.11's does not),
                layer_norm of every float dtype (1.13's build contracts
                nothing in RowwiseMoments, 2.11's contracts the Welford
                updates, be_cpu_moments.c; 1.13 normalises as x * rstd +
                (-rstd * mean), 2.x as fma((x - mean) * rstd, w, b)),
                fp64 erf and fp64 gelu(approximate='none') (SLEEF's erf in
                the vector lanes: SLEEF 3.5's in 1.13, Debian's build
                linking the system's 3.5.1; 2.11 bundles 3.8/3.9, whose erf
                is another algorithm, 1 ulp apart on a few % of inputs),
                fp32/bf16 log1p (1.13 gives inf beyond about 1e38), bf16
                log_softmax (1.13 gives infs over another than the last axis)
  unpinned      PyTorch's order is not fixed or not replayed (matmul through
                BLAS/cuBLAS heuristics): reported, not required
  layout        PyTorch, on the op's operands as it holds them (views of a
                layout op, and the layouts elementwise ops keep from their
                operands), computes other bits than bitprobe's model of them
                (contiguous copies; a GEMM's view chains): a reduction over
                a transposed view adds in its memory order, a batch-1
                attention's q after RoPE reaches bmm in its heads-transposed
                layout; bitprobe gives the model's bits: not modelled
  lookback      CUDA, a floating-point cumsum over the whole tensor beyond 3
                of cub's tiles, whose decoupled look-back adds the prefixes
                in an order that depends on timing: reported, not required
  own           bitprobe's own generator (`uniform`): nothing to replay
  no-replay     the op has no PyTorch counterpart in probe_torch_ops.py: a
                failure of coverage, reported apart
  unsupported   this PyTorch build has no kernel for it (fp16 on the CPU
                before PyTorch 2.x): reported, not a failure
  refused       PyTorch raises on an input bitprobe computes (an exponent
                beyond float's range on CUDA): reported with its message
  replay-error  the replay itself failed (a Python error in
                probe_torch_ops.py): a failure, the op unchecked
  old-pytorch   CPU, a PyTorch before 2.1 (Debian's 1.13): bf16/fp16 `t * s`,
                `t / s` and `s / t` with a number (or one-element tensor) s
                second, where these versions round s to the dtype first and
                later ones take it in float (BinaryOpsKernel.cpp mul_kernel,
                div_true_kernel: original_scalar_value<opmath_t>); counted
                only where bitprobe equals the later formula, computed here
                in this PyTorch
"""
import collections
import glob
import math
import os
from fractions import Fraction

import torch

import fuzz_gen
import refio
from probe_torch_ops import DT, OWN, bits, mismatches, run_op

# aten/src/ATen/cpu/vml.h: IMPLEMENT_VML_MKL (float and double only), for
# the kernels that call vml::v<op> (UnaryOpsKernel.cpp).  log1p and expm1
# are commented out there ("not vectorized in MKL version tested",
# "expm1(nan)=-1"): SLEEF's, as in the other dtypes, so identity applies.
MKL_OPS = {"sin", "cos", "exp", "log", "tanh", "sqrt", "acos", "asin", "atan", "erf", "erfc",
           "erfinv", "log10", "log2", "tan", "trunc"}
TORCH_MAJOR = int(torch.__version__.split(".")[0])
NAMES = {v: k for k, v in DT.items()}


def mkl_op(op, out_dtype):
    """True where PyTorch's CPU result comes from MKL VML: the op itself,
    or pow with exponent 0.5, which PowKernel.cpp sends to sqrt."""
    if out_dtype not in (torch.float32, torch.float64) or not torch.backends.mkl.is_available():
        return False
    if op["op"] in MKL_OPS:
        return True
    # logsumexp_out_impl composes (self - maxes).exp_() and result.log_():
    # both VML on fp32/fp64 (ReduceOps.cpp)
    if op["op"] == "logsumexp":
        return True
    return op["op"] == "pow" and not isinstance(op.get("b"), str) and op.get("b") == 0.5


def version_op(op, out_dtype, numel=None):
    """An op whose PyTorch 1.x CPU kernel differs from the 2.x one bitprobe
    models (see the top); numel is the result's size."""
    if TORCH_MAJOR >= 2:
        return False
    if op["op"] == "var" and numel != 1:  # 1.13 fuses Welford's m2 update, 2.11 does not
        return True
    if op["op"] == "layer_norm":  # 1.13 contracts nothing in RowwiseMoments, 2.11's
        # build does (be_cpu_moments.c); 1.13 normalises as x * rstd + (-rstd * mean)
        return out_dtype.is_floating_point
    if op["op"] == "silu" or (op["op"] == "round" and op.get("decimals")):
        return out_dtype in (torch.bfloat16, torch.float16)
    if op["op"] == "exp2":  # std::exp2 on every element in 1.13, SLEEF's in 2.x's lanes
        return out_dtype.is_floating_point
    if op["op"] == "erf":  # bf16: SLEEF's erf in 1.13, ATen's float polynomial in 2.x;
        # fp64: SLEEF 3.5's erf in 1.13, 3.6's (PyTorch's bundled 3.8/3.9) in 2.11
        return out_dtype in (torch.bfloat16, torch.float16, torch.float64)
    if op["op"] == "gelu" and op.get("approximate") == "tanh":  # 1.13's bf16 rounds in bf16
        return out_dtype == torch.bfloat16
    if op["op"] == "gelu" and op.get("approximate", "none") == "none":
        # fp64: the same erf in the vector lanes; fp32/bf16: 1.13's oneDNN
        # 2.x has only the Abramowitz-Stegun form, 2.x's AVX-512 takes
        # oneDNN 3.x's polynomial (be_cpu_onednn.c), and 1.13's bf16
        # kernel rounds in bf16
        return out_dtype in (torch.float64, torch.float32, torch.bfloat16)
    if op["op"] == "mean":  # 1.13 sums bf16/fp16 into the dtype, 2.x into float (mean_out)
        return out_dtype in (torch.bfloat16, torch.float16)
    if op["op"] == "sum" and op.get("formulation", "default") == "default":
        # 1.13 reads an fp16 register as 8 sums of neighbours (load_reduce_vec),
        # 2.x as its two float halves added (InnerSumCastLoadPolicy), as for bf16
        return out_dtype == torch.float16
    if op["op"] == "log1p":  # 1.13's float kernel gives inf beyond ~1e38 (log1p(1.01e38))
        return out_dtype in (torch.float32, torch.bfloat16)
    if op["op"] == "log_softmax":  # 1.13's bf16 kernel over another than the last
        # axis gives infs where float gives none (checked on Debian's 1.13)
        return out_dtype == torch.bfloat16
    return op["op"] == "linspace" and out_dtype.is_floating_point


OLD_SCALAR = tuple(int(x) for x in torch.__version__.split(".")[:2]) < (2, 1)


def later_scalar_formula(op, bufs, out_dtype):
    """The result PyTorch 2.1 and later give on the CPU for a bf16/fp16 mul,
    div or outer whose second operand is a number or one element
    (is_scalar(2)):
    the other operand in float times (or over) that element taken in float
    from its own dtype, rounded once.  None where that path does not apply.
    `s / t` is t.reciprocal() * s: the reciprocal rounded to the dtype,
    then the same multiplication."""
    k = op["op"]
    if k not in ("mul", "div", "outer") or out_dtype not in (torch.bfloat16, torch.float16):
        return None
    if op.get("formulation", "default") not in ("default", "true"):
        return None
    a, b = op.get("a"), op.get("b")
    if k == "div" and not isinstance(a, str):
        if op.get("formulation", "default") != "default":
            return None
        return (bufs[b].to(out_dtype).reciprocal().float() * float(a)).to(out_dtype)
    if k == "mul" and not isinstance(a, str):
        a, b = b, a  # `s * t` is t.__rmul__(s): the number second
    if not isinstance(a, str):
        return None
    if isinstance(b, str):
        if bufs[b].numel() != 1 or bufs[b].dtype == out_dtype:
            return None
        s = bufs[b].reshape(()).float()
    else:
        s = torch.tensor(float(b), dtype=torch.float64).float()
    x = bufs[a].to(out_dtype).float()
    if k == "outer":  # a.reshape(-1, 1) * b (LinearAlgebra.cpp)
        x = x.reshape(-1, 1)
    return (x / s if k == "div" else x * s).to(out_dtype)


def container(bundle, probe, device):
    """The probe's container for a device in a bundle ('cpu' or 'cuda')."""
    fs = sorted(glob.glob(os.path.join(bundle, probe, f"{device}-*.safetensors.gz")) +
                glob.glob(os.path.join(bundle, probe, f"{device}.safetensors.gz")))
    return fs[0] if fs else None


# Why an op is not required to be identical, per verdict (the account's
# exclusion rows say it beside the count).
REASONS = {
    "mkl": "PyTorch's x86 wheels take fp32/fp64 sin, cos, exp, log, tanh, sqrt, erf, log2 "
           "(and logsumexp's exp_ and log_) "
           "(vml.h IMPLEMENT_VML_MKL) from MKL VML, which is closed",
    "unpinned": "PyTorch's order is not replayed, or not everywhere: on the CPU its GEMMs are "
                "MKL's sgemm (fp32: bitprobe replays the classes fitted on MKL's AVX-512 path, "
                "the rates per shape class show which) and oneDNN's (bf16, fp16), whose "
                "blocking and summation order depend on the shape, the ISA and the threads; "
                "on CUDA cuBLAS heuristics",
    "lookback": "not reproducible: cub's decoupled look-back (a whole-tensor CUDA cumsum of "
                "more than 3 tiles: 1920 fp32, 896 fp64, 3840 bf16/fp16 values each) adds the "
                "prefixes of tiles that have published only their totals in an order that "
                "depends on timing",
    "version": "a PyTorch before 2.0 computes it with another kernel than the 2.x one "
               "bitprobe models",
    "layout": "PyTorch computes it on its operands as it holds them (a layout op's view, or "
              "an elementwise result in its operand's layout) in their memory order (a sum "
              "over a transposed tensor adds in another order); bitprobe computes on "
              "contiguous copies there: not modelled yet",
    "old-pytorch": "a PyTorch before 2.1 rounds the scalar operand to the dtype first",
    "unsupported": "this PyTorch has no kernel for the dtype",
    "refused": "PyTorch raises on the input bitprobe computes",
    "own": "bitprobe's own generator: nothing to replay",
    "no-replay": "no PyTorch counterpart in probe_torch_ops.py (a coverage failure)",
    "replay-error": "the replay failed (a failure)",
}


GEMMS = ("matmul", "bmm", "baddbmm", "linear", "addmm", "sdpa")


def shape_class(op, bufs, views=None):
    """A GEMM's shape class for the rates: bands of K, of M (the rows, x's
    leading dimensions folded) and of N at the bounds of the CPU's fitted
    MKL classes (probes/README.md "The CPU's GEMM orders"), and for a 2-D
    product the BLAS call its second operand makes (TN: a transposed view,
    F.linear's weight; NN: contiguous)."""
    if op["op"] not in GEMMS:
        return ""
    views = views or {}
    try:
        ins = op.get("inputs", [])
        if op["op"] in ("baddbmm", "addmm"):
            a, b = bufs[ins[1]], ins[2]
        elif op["op"] in ("sdpa", "linear"):
            a, b = bufs[ins[0]], ins[1]
        else:
            a, b = bufs[op["a"]], op["b"]
        k = a.shape[-1]
        m = a.numel() // k if op["op"] in ("linear", "matmul") and k else \
            a.shape[-2] if a.dim() >= 2 else 1
        bt = bufs[b]
        n = bt.shape[0] if op["op"] == "linear" else bt.shape[-1]
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""
    kb = "K<=64" if k <= 64 else "K<=1024" if k <= 1024 else "K<=4096" if k <= 4096 \
        else "K>4096"
    mb = "M=1" if m == 1 else "M 2-4" if m <= 4 else "M 5-15" if m < 16 else \
        "M 16-64" if m <= 64 else "M>64"
    nb = "N<=64" if n <= 64 else "N>64"
    call = ""
    if op["op"] in ("linear", "addmm", "matmul") and bt.dim() == 2:
        v = views.get(b)  # a transposed view: stride 1 along its rows
        view = v is not None and v.dim() == 2 and v.stride(0) == 1 and v.stride(1) != 1
        call = " TN" if view != (op["op"] == "linear") else " NN"
    return f"{kb} {mb} {nb}{call}"


def _zero_rates():
    """A rate row, [checked, differ, ...] (a function, not a lambda: a Result
    crosses process boundaries in --jobs runs and must pickle)."""
    return [0, 0, 0, 0]


class Result:
    """Counts per (device, op, dtype) and verdict, and the failures; for
    unpinned ops, rates per shape class: [ops, ops that differ, elements,
    elements that differ]."""

    def __init__(self):
        self.counts = collections.Counter()
        self.failures = []
        self.refusals = []
        self.rates = collections.defaultdict(_zero_rates)

    def add(self, device, op, dtype, verdict):
        self.counts[(device, op, dtype, verdict)] += 1

    def total(self, device=None, verdict=None):
        return sum(n for (dv, _, _, v), n in self.counts.items()
                   if (device is None or dv == device) and (verdict is None or v == verdict))

    def merge(self, other):
        self.counts.update(other.counts)
        for k, v in other.rates.items():
            r = self.rates[k]
            for i in range(4):
                r[i] += v[i]
        self.failures.extend(other.failures)
        self.refusals.extend(other.refusals)


def _dt_out(op, run_dtype):
    d = op.get("dtype")
    if d is None:
        return None
    return DT[run_dtype if d == "$dtype" else d]


# Ops whose dtype is the one they create (passed to PyTorch as dtype=).
_DTYPE_ARG = ("tensor", "arange", "cast", "full", "zeros", "ones", "linspace")
# Reductions whose dtype is torch's dtype= (an accumulation dtype): on CUDA
# a bf16/fp16 tensor summed into fp32 is read as it is (make_reduction's
# gpu_lowp_to_f32), which a conversion first would not replay.
_DTYPE_KW = ("sum", "mean")


def replay_op(op, bufs, dt_out, device, saved):
    """PyTorch's result of op on bufs (tensors on device).  An explicit
    dtype on an op that computes is its common dtype: the tensor operands
    are converted to it first (`op(a.to(dtype), ...)`), as bitprobe's
    backends do, and for an integer dtype the numbers are integers."""
    k = op["op"]
    native = k in _DTYPE_KW and op.get("formulation", "default") == "default"
    if dt_out is not None and k not in _DTYPE_ARG + OWN and not native:
        # converted copies under names of their own: the same buffer may
        # also be read unconverted (where's cond, an index)
        conv, renamed = {}, {}
        index = {"index_select": "b", "embedding": "a"}.get(k)  # indices stay integers
        for key in ("a", "b", "min", "max") if k == "clamp_tensor" else ("a", "b"):
            v = op.get(key)
            if isinstance(v, str) and key != index:
                conv[v + "@dtype"] = bufs[v].to(dt_out)
                renamed[key] = v + "@dtype"
        if "inputs" in op:
            renamed["inputs"] = [v + "@dtype" for v in op["inputs"]]
            for v in op["inputs"]:
                conv[v + "@dtype"] = bufs[v].to(dt_out)
        bufs = dict(bufs, **conv)
        op = dict(op, **renamed)
        if not dt_out.is_floating_point:  # the numbers are integral (bitprobe checks);
            # as ints, or torch.clamp(int tensor, min=-1.0) would promote to float32
            op = dict(op, **{k: int(op[k]) for k in ("a", "b", "min", "max")
                             if isinstance(op.get(k), float)})
    t, required = run_op(op, {}, bufs, dt_out if k in _DTYPE_ARG or native else None,
                         device, lambda _op: saved)
    if dt_out is not None and t.dtype != dt_out:
        t = t.to(dt_out)
    return t, required


def _as_view(op, a):
    """PyTorch's result of layout op `op` on a (a view, or a's own view),
    where PyTorch makes it a view: transpose, permute, unsqueeze, squeeze,
    expand, slice, and reshape or view where strides allow (strided.h's
    chains, which bitprobe's CUDA backend reads a GEMM's or sdpa's operand
    through); None where PyTorch copies (a reshape no strides can view, an
    explicit dtype) or the op is no view."""
    k = op["op"]
    if op.get("dtype") is not None:
        return None
    try:
        if k == "transpose":
            v = a.transpose(op["dim0"], op["dim1"])
        elif k == "permute":
            v = a.permute(op["dims"])
        elif k == "unsqueeze":
            v = a.unsqueeze(op["axis"])
        elif k == "squeeze":
            v = a.squeeze() if "axis" not in op else a.squeeze(op["axis"])
        elif k == "expand":
            v = a.expand(op["shape"])
        elif k in ("reshape", "view"):
            v = a.reshape(op["shape"])
        elif k == "slice":
            ax = op.get("axis", 0) % a.dim()
            idx = [slice(None)] * a.dim()
            idx[ax] = slice(op.get("start"), op.get("end"), op.get("step", 1))
            v = a[tuple(idx)]
        else:
            return None
    except (RuntimeError, TypeError, ValueError, IndexError, KeyError):
        return None
    return v if v._is_view() else None


def _on_views(op, reads, bufs, views, held, dt_out, device, mine, t):
    """PyTorch's result of op on its operands as PyTorch holds them (held:
    views through view ops, and TensorIterator's layouts through
    elementwise ops), where one is held otherwise than bitprobe models it
    (views: a GEMM's or sdpa's view chains; for other ops the contiguous
    copy) and that result's bits differ from t: a sum over a transposed
    view adds in its memory order, a batch-1 attention's q after RoPE
    reaches bmm in its heads-transposed layout.  None otherwise."""
    gemm = op["op"] in GEMMS
    lv = {}
    for v in reads:
        h = held.get(v)
        if h is None or h.is_contiguous():
            continue
        m = views.get(v) if gemm else None
        if m is None or m.stride() != h.stride():
            lv[v] = h
    if not lv:
        return None
    try:
        base = gemm_operands(op, bufs, views)
        tv, _ = replay_op(op, dict(base, **lv), dt_out, device, mine.to(device))
    except Exception:  # noqa: BLE001 -- the modelled replay stands
        return None
    if tv.dtype != t.dtype or tuple(tv.shape) != tuple(t.shape) or mismatches(tv, t) == 0:
        return None
    return tv


def _held_like(r, values):
    """values (bitprobe's, contiguous) laid out as PyTorch's result r."""
    h = torch.empty_strided(tuple(r.shape), r.stride(), dtype=values.dtype,
                            device=values.device)
    h.copy_(values)
    return h


def gemm_operands(op, bufs, views):
    """bufs with a GEMM's (and sdpa's) operands that are views as PyTorch
    holds them (x @ w.t() multiplies the view: the BLAS call's transpose
    flag and leading dimension, bp_probe_gemm_layout's and strided.h's
    rules); bitprobe's saved buffers are contiguous copies."""
    if op["op"] not in GEMMS:
        return bufs
    sub = {v: views[v] for v in fuzz_gen.reads(op) if v in views}
    return dict(bufs, **sub) if sub else bufs


def check_probe(spec, bundle, device, res, log=print, keep=None):
    """Replays one probe's saved container for device ('cpu'/'cuda') in
    every run dtype; adds to res.  keep(op_index) limits which ops count
    (the minimiser's focus); returns False when the container is missing."""
    path = container(bundle, spec["name"], device)
    if path is None:
        return False
    lacking = set()
    data = refio.st_tensors(path, lacking)
    tdev = "cuda" if device == "cuda" else "cpu"
    for d in spec["dtypes"]:
        bufs, views, held = {}, {}, {}
        for i, op in enumerate(spec["ops"]):
            key = f"{op['out']}.{d}"
            mine = data.get(key)
            counted = keep is None or keep(i)
            reads = fuzz_gen.reads(op)
            if key in lacking or any(v not in bufs for v in reads):
                # a dtype this torch lacks, here or upstream
                if counted:
                    res.add(device, op["op"], key in lacking and "unknown" or
                            NAMES.get(mine.dtype, str(mine.dtype)), "unsupported")
                continue
            if mine is None:
                raise RuntimeError(f"{path}: buffer {key} missing (save with --intermediates)")
            dt_out = _dt_out(op, d)
            verdict, tv = None, None
            if op["op"] in OWN:
                verdict = "own"
            else:
                try:
                    t, required = replay_op(op, gemm_operands(op, bufs, views), dt_out, tdev,
                                            mine.to(tdev))
                    tv = _on_views(op, reads, bufs, views, held, dt_out, tdev, mine, t)
                except ValueError as e:
                    if "no PyTorch counterpart" not in str(e):
                        verdict = "replay-error"
                        if counted:
                            res.failures.append(_failure(
                                spec, d, i, op, device, mine, None,
                                f"the replay raised {type(e).__name__}: {e}"))
                    else:
                        verdict = "no-replay"
                except (RuntimeError, NotImplementedError) as e:
                    # PyTorch refuses what bitprobe ran: a kernel this
                    # build lacks, or an input it rejects (fp32 ** 1e39
                    # on CUDA); reported apart, with the first messages.
                    msg = str(e).splitlines()[0]
                    verdict = "unsupported" if "not implemented for" in msg else "refused"
                    if counted and verdict == "refused":
                        res.refusals.append(_failure(spec, d, i, op, device, mine, None,
                                                     f"PyTorch raised: {msg}"))
                except Exception as e:  # noqa: BLE001 -- a bug of the replay, not of bitprobe
                    # probe_torch_ops.py failed on this input: a failure
                    # (the op went unchecked), and the run goes on
                    verdict = "replay-error"
                    if counted:
                        res.failures.append(_failure(
                            spec, d, i, op, device, mine, None,
                            f"the replay raised {type(e).__name__}: {e} "
                            f"(tests/refs/probe_torch_ops.py)"))
            if verdict is None:
                n = mismatches(mine, t) if t.dtype == mine.dtype else -2
                if tv is not None:  # PyTorch on the views computes other bits
                    if mismatches(mine, tv) == 0:
                        n = 0
                    elif n == 0:
                        n, verdict = mismatches(mine, tv), "layout"
                if verdict is not None:
                    pass
                elif n == 0:
                    verdict = "identical"
                elif not required:
                    verdict = getattr(required, "verdict", "unpinned")
                elif device == "cpu" and mkl_op(op, mine.dtype):
                    verdict = "mkl"
                elif device == "cpu" and version_op(op, mine.dtype, mine.numel()):
                    verdict = "version"
                elif device == "cpu" and OLD_SCALAR and _later(op, bufs, mine):
                    verdict = "old-pytorch"
                else:
                    verdict = "differ"
                    if counted:
                        res.failures.append(_failure(spec, d, i, op, device, mine, t, None, n))
            if counted:
                res.add(device, op["op"], NAMES.get(mine.dtype, str(mine.dtype)), verdict)
                if verdict in ("unpinned", "identical") and op["op"] in GEMMS:
                    r = res.rates[(device, op["op"], NAMES.get(mine.dtype, str(mine.dtype)),
                                   shape_class(op, bufs, views))]
                    r[0] += 1
                    r[1] += verdict == "unpinned"
                    r[2] += mine.numel()
                    r[3] += n if verdict == "unpinned" and n > 0 else 0
            out = bufs[op["out"]] = mine.to(tdev)
            src = op.get("a")
            if isinstance(src, str) and src in bufs:
                v = _as_view(op, views.get(src, bufs[src]))
                if v is not None and tuple(v.shape) == tuple(out.shape):
                    views[op["out"]] = v
                v = _as_view(op, held.get(src, views.get(src, bufs[src])))
                if v is not None and tuple(v.shape) == tuple(out.shape):
                    held[op["out"]] = v
            if (op["out"] not in held and op["op"] not in GEMMS and
                    any(r in held for r in reads) and verdict not in (
                        "unsupported", "refused", "replay-error", "no-replay", "own")):
                # the layout PyTorch gives the result of an op on held
                # operands (TensorIterator's: an elementwise op keeps its
                # operand's), with bitprobe's values
                try:
                    r = replay_op(op, dict(bufs, **{k: held[k] for k in reads if k in held}),
                                  dt_out, tdev, out)[0]
                    if tuple(r.shape) == tuple(out.shape) and not r.is_contiguous():
                        held[op["out"]] = _held_like(r, out)
                except Exception:  # noqa: BLE001 -- then held as the copy
                    pass
    return True


def round_to(q, dtype):
    """The Fraction q rounded once to fp32 or fp64 (nearest even)."""
    d = float(q)  # correctly rounded to double
    if dtype == torch.float64 or not math.isfinite(d) or not isinstance(q, Fraction):
        return d if dtype == torch.float64 else float(torch.tensor(d, dtype=torch.float32))
    f = float(torch.tensor(d, dtype=torch.float32))
    if f != d and math.isfinite(f):  # between two floats: a tie only by double rounding
        toward = math.inf if d > f else -math.inf
        other = float(torch.nextafter(torch.tensor(f, dtype=torch.float32),
                                      torch.tensor(toward, dtype=torch.float32)))
        if (Fraction(f) + Fraction(other)) / 2 == Fraction(d) and q != Fraction(d):
            f = other if abs(Fraction(other) - q) < abs(Fraction(f) - q) else f
    return f


def _later(op, bufs, mine):
    t = later_scalar_formula(op, bufs, mine.dtype)
    return t is not None and t.shape == mine.shape and mismatches(mine, t) == 0


def _failure(spec, d, i, op, device, mine, t, why, n=None):
    f = {"probe": spec["name"], "dtype": d, "index": i, "op": op["op"], "out": op["out"],
         "device": device, "numel": mine.numel()}
    if why is not None:
        f["why"] = why
        return f
    if n == -2:
        f["why"] = f"PyTorch gives {t.dtype}, bitprobe {mine.dtype}"
        return f
    if n == -1:
        f["why"] = f"PyTorch gives shape {list(t.shape)}, bitprobe {list(mine.shape)}"
        return f
    mb, mn = bits(mine)
    tb, tn = bits(t)
    bad = ((mb != tb) & ~(mn & tn)).reshape(-1).nonzero().reshape(-1)
    j = int(bad[0])
    f["mismatched"] = n
    f["first"] = j
    f["bitprobe"] = _show(mine.reshape(-1)[j], mb.reshape(-1)[j])
    f["pytorch"] = _show(t.reshape(-1)[j].cpu(), tb.reshape(-1)[j])
    f["why"] = (f"{n} of {mine.numel()} differ; first at flat index {j}: bitprobe "
                f"{f['bitprobe']}, PyTorch {f['pytorch']}")
    return f


def _show(v, b):
    width = {1: 2, 2: 4, 4: 8, 8: 16}[v.element_size()]
    if v.is_floating_point():
        return f"{float(v)!r} (0x{int(b) & ((1 << (4 * width)) - 1):0{width}x})"
    return str(int(v))
