"""Random probes for the differential fuzzer: a pure function of the seed.

A probe is a random program over the op table (fuzz_ops): sources
(`tensor` literals holding the values users and edge cases bring, `arange`
with integer and decimal steps, `uniform` draws over random ranges, `randn`
and `normal` draws) in random shapes (0-D, one element, lengths that are
not multiples of 8 or 16, long tails, beyond ATen's 32768-element grain),
then ops drawn from the
whole table reading earlier buffers: chains, mixed dtypes (type
promotion), Python numbers such as 0.001, 0.3, 1/3, 2.5, large and tiny
magnitudes, negatives, integers, +-0, subnormals, inf and nan, every
formulation, and now and then an explicit result dtype.

A probe is kept as a spec (a dict: name, dtypes, ops, outputs), written as
YAML for bitprobe (to_yaml) and as JSON for the replay, which must not
read numbers back through a YAML 1.1 parser (PyYAML reads 1e-05 as a
string).  Ops of the table the generator has no rule for still get
generated from their operand class and key types; bitprobe's loader is
the judge (validate), and ops it refuses are dropped with their
dependants."""
import math
import os
import random
import re
import shutil
import subprocess

import fuzz_rules
import probe_spec

RUN_DTYPES = ["fp32", "bf16", "fp16"]
SOURCES = ("tensor", "arange", "uniform", "randn", "normal", "linspace", "full")  # the creation ops drawn
DTYPES = ["fp32", "bf16", "fp16", "fp64", "i64", "i32"]
FLOATS = ("fp32", "bf16", "fp16", "fp64")
# Cast targets beyond DTYPES, drawn now and then where every backend of the
# run computes them (fuzz_torch.py asks bitprobe: extra_dtypes).
EXTRA_DTYPES = ["fp8_e4m3", "fp8_e5m2", "bool", "u8", "i8", "i16"]
NOT_DRAWN = ("load",)
# Ops whose CUDA kernels copy elements as they are: no `dtype:` that
# changes them (bitprobe refuses it there).
COPY_AS_IS = ("slice", "rotate_half")  # creation ops that need more than keys (a file)
INF, NAN = float("inf"), float("nan")

# Python numbers as users write them, then the edges.
SCALARS_FLOAT = [
    0.001, 0.3, 1e-3, 1 / 3, 2.5, 0.1, 0.2, 0.7, 1.1, 0.5, 1.5, 2.0, 3.0, 10.0, 0.25,
    3.14159, math.pi, math.e, math.log(2), 0.1 + 0.2, 1e-5, 1e-6, 1e-7, 6.1e-05, 1234.5678,
    0.999, 1.001, 100.0, 1e3, 1e4, 1e10, 1e20, 1e30, 3.4e38, 1e39, 1e-10, 1e-20, 1e-30, 1e-38,
    1e-40, 1e-45, 5e-324, 1e300, 65504.0, 65520.0, 16777217.0, 0.0, -0.0, -0.001, -0.3,
    -2.5, -1.0, -0.5, -1e10, -1e-30, INF, -INF, NAN, 7.0, 9.0, 1e-3 * 3,
]
SCALARS_INT = [0, 1, 2, 3, 5, 7, 10, 16, 100, 128, 255, 256, 1000, 4096, 65536, 16777217,
               2147483647, -1, -2, -3, -7, -10, -128, -2147483648, 123456789]
POW_EXPONENTS = [0.5, -0.5, -1, -1.0, 2, 2.0, 3, 3.0, -2, -2.0, 1.5, 1 / 3, 0, 0.0, 1, 10,
                 0.1, 2.5, -0.3, 0.25, 4, 100, -100, 1e-3, NAN, INF]
POW_BASES = [10, 10.0, 2, 2.0, 10000, 10000.0, 0.5, math.e, -2.0, 1, 1.0, 0.001, 1.5, 0, -1]
# Values for tensor literals beyond random ones: signed zeros, subnormals
# of each format (f32 from 2^-149, f16 from 2^-24, bf16 at f32's), the
# largest finite values and just past them, powers of two and ties.
SPECIAL_VALUES = [
    0.0, -0.0, 1.0, -1.0, 2.0, 0.5, INF, -INF, NAN, 1e-45, -1e-45, 2 ** -149, 2 ** -126,
    1e-39, 1.17e-38, 2 ** -24, 6e-08, 6.1e-05, 65504.0, 65519.0, 65520.0, 3.4028234663852886e38,
    3.4e38, 1e38, 1e-38, 16777216.0, 16777217.0, 256.0, 257.0, 255.5, 1e-300, 1e300, 0.1, 0.3,
    1 / 3, 2.5, 3.5, -2.5, math.pi, 1e-7, 1e7, 88.7, -87.3, 89.0, -104.0, 710.0, 1e-3, 100.5,
]
# Lengths: tiny, around the 8/16/32/64-lane boundaries and their tails,
# and beyond ATen's GRAIN_SIZE of 32768.
LENGTHS_SMALL = [1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 23, 31, 32, 33, 47, 63, 64, 65, 100, 127, 129, 200,
                 255, 257]
LENGTHS_LARGE = [511, 1000, 1023, 1025, 4095, 4096, 4097, 10007, 32767, 32769, 65536 + 37, 100003]
INT_RANK = {"u8": 0, "i8": 1, "i16": 2, "i32": 3, "i64": 4}
# The largest finite magnitude a number may have to convert to the dtype
# (c10's checked conversion, bitprobe's scalar_fits in src/ops/op.c).
SCALAR_LIMITS = {"fp16": 65504.0, "bf16": 3.3895313892515355e38}
# torch.where converts its number to the result's dtype, checked, fp32 too
WHERE_LIMITS = dict(SCALAR_LIMITS, fp32=3.4028234663852886e38)


def fits(dt, v, limits=SCALAR_LIMITS):
    """Whether the number v converts to dt without overflow as PyTorch's
    checked conversion does (a comparison's number on CUDA, a pow
    exponent): infinities and NaN pass; bitprobe refuses the rest."""
    if dt == "i32":
        return -2 ** 31 <= v <= 2 ** 31 - 1
    return not math.isfinite(v) or abs(v) <= limits.get(dt, math.inf)


def fmt_num(v):
    """A number as bitprobe's YAML reads it back exactly: ints as
    integers, floats in repr (shortest round-trip), specials as .inf."""
    if isinstance(v, bool):
        raise TypeError("bool is not a probe number")
    if isinstance(v, int):
        return str(v)
    if math.isnan(v):
        return ".nan"
    if math.isinf(v):
        return ".inf" if v > 0 else "-.inf"
    r = repr(v)
    return r if ("." in r or "e" in r or "n" in r) else r + ".0"


def _fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, str):
        return v
    return fmt_num(v)


KEY_ORDER = ["out", "op", "a", "b", "inputs", "values", "shape", "start", "end", "step", "seed",
             "stream", "low", "high", "axis", "keepdim", "dtype", "formulation"]


def to_yaml(spec):
    """The probe as bitprobe's YAML, one op per line; returns (text, the
    1-based line of each op)."""
    lines = ["# generated by tests/refs/fuzz_torch.py: " + spec.get("origin", ""),
             f"name: {spec['name']}",
             f"description: \"{spec['description']}\"",
             "dtypes: [" + ", ".join(spec["dtypes"]) + "]",
             "ops:"]
    op_lines = []
    for op in spec["ops"]:
        keys = [k for k in KEY_ORDER if k in op] + sorted(k for k in op if k not in KEY_ORDER)
        op_lines.append(len(lines) + 1)
        lines.append("  - {" + ", ".join(f"{k}: {_fmt(op[k])}" for k in keys) + "}")
    lines.append("outputs:")
    for o in spec["outputs"]:
        lines.append(f"  - {{name: {o}}}")
    return "\n".join(lines) + "\n", op_lines


def from_yaml(text, label="<fuzzer probe>"):
    """A spec back from a probe's text (what to_yaml wrote), its numbers
    read as bitprobe reads them (probe_spec.py), with the origin that
    to_yaml's first line names."""
    spec = probe_spec.loads(text, label)
    first = text.split("\n", 1)[0]
    if first.startswith("# generated by") and ": " in first[2:]:
        spec["origin"] = first.split(": ", 1)[1]
    return spec


def promote(a, b):
    """torch.promote_types of two dtype names: bool gives way to any
    other dtype, a float to none, u8 with i8 is i16."""
    if a == b or b == "bool":
        return a
    if a == "bool":
        return b
    fa, fb = a in FLOATS, b in FLOATS
    if fa != fb:
        return a if fa else b
    if not fa:
        return "i16" if {a, b} == {"u8", "i8"} else max(a, b, key=lambda t: INT_RANK.get(t, 4))
    if "fp64" in (a, b):
        return "fp64"
    return "fp32"


class Buf:
    """A buffer the generator knows: its shape (None: unknown, never read
    again) and its dtype in each run dtype of the probe."""

    def __init__(self, name, shape, dt):
        self.name, self.shape, self.dt = name, shape, dt

    def numel(self):
        return math.prod(self.shape) if self.shape is not None else 0


class Gen:
    def __init__(self, rng, table, max_numel=120000, large=True, extra_dtypes=(), focus=None):
        self.r = rng
        self.focus = focus
        self.flags = set()  # the flags of the op being drawn
        self.extra_dtypes = list(extra_dtypes)
        self.table = [o for o in table if o["name"] in drawn(table)]
        self.creation = {o["name"] for o in table if o["kind"] == "creation"}
        self.max_numel = max_numel
        self.large = large

    # -- values ---------------------------------------------------------
    def decimal(self):
        """A number as a person types it: few significant digits."""
        r = self.r
        mag = r.choice([0.001, 0.01, 0.1, 1, 1, 1, 10, 100, 1000, 1e5])
        return round(r.uniform(-10, 10) * mag, r.choice([0, 1, 2, 3, 4, 6]))

    def scalar(self, for_int=False):
        r = self.r
        k = r.random()
        if for_int or k < 0.25:
            return r.choice(SCALARS_INT)
        if k < 0.8:
            return r.choice(SCALARS_FLOAT)
        return float(self.decimal())

    def literal_values(self, n, dt):
        r = self.r
        if dt in ("i64", "i32"):
            lim = 2 ** 31 - 1 if dt == "i32" else 2 ** 53
            pool = [v for v in SCALARS_INT if -lim <= v <= lim]
            return [r.choice(pool) if r.random() < 0.3 else r.randint(-1000, 1000) for _ in range(n)]
        mode = r.random()
        if mode < 0.1:
            # spikes: small integers among large powers of two, where a
            # reduction's order decides which small values are absorbed
            # (bf16/fp16 sums in float differ only at such a cancellation)
            return [r.choice([-1.0, 1.0]) * 2.0 ** r.choice([11, 12, 24, 25, 26])
                    if r.random() < 0.15 else float(r.choice([1, 1, 2, 3, -1]))
                    for _ in range(n)]
        out = []
        for _ in range(n):
            k = r.random()
            if k < 0.3:
                out.append(float(r.choice(SPECIAL_VALUES)) * r.choice([1, 1, -1]))
            elif k < 0.6:
                out.append(float(self.decimal()))
            elif k < 0.8 or mode < 0.5:
                out.append(r.uniform(-4, 4) * 2.0 ** r.randint(-20, 20))
            else:
                out.append(float(r.randint(-300, 300)))
        return out

    def length(self):
        r = self.r
        if self.large and r.random() < 0.18:
            return r.choice(LENGTHS_LARGE)
        if r.random() < 0.7:
            return r.choice(LENGTHS_SMALL)
        return r.randint(1, 300)

    def shape(self, small=False):
        r = self.r
        k = r.random()
        if k < 0.08:
            return ()
        if k < 0.14:
            return (1,)
        if k < 0.7 or small:
            n = r.choice(LENGTHS_SMALL) if small else self.length()
            return (n,)
        if k > 0.92 and not small:
            return (r.choice([1, 2, 3, 4]), r.choice([1, 3, 8, 17]), r.choice([1, 2, 5, 16, 64]))
        rows = r.choice([1, 2, 3, 4, 7, 8, 16, 33, 64])
        cols = r.choice([1, 2, 5, 8, 9, 16, 17, 31, 64, 100, 128, 129, 257])
        while rows * cols > self.max_numel:
            rows = max(1, rows // 2)
        return (rows, cols)

    def cast_dtypes(self):
        """The dtypes a `dtype:` key is drawn from."""
        return DTYPES + (self.extra_dtypes if self.r.random() < 0.25 else [])

    def dtype_spec(self, float_only=False):
        """'$dtype' or a concrete dtype, for a source."""
        r = self.r
        if r.random() < 0.5:
            return "$dtype"
        return r.choice(FLOATS if float_only else DTYPES + ["fp32", "fp64"])

    # -- sources --------------------------------------------------------
    def source(self, p, shape=None, dspec=None, float_only=False):
        r = self.r
        shape = self.shape() if shape is None else shape
        dspec = dspec or self.dtype_spec(float_only)
        n = math.prod(shape)
        name = p.fresh()
        k = r.random()
        if n <= 300 and (k < 0.45 or len(shape) != 1) and "tensor" in self.creation and \
                (n > 0 and (len(shape) != 1 or k < 0.45) or len(shape) == 0):
            dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
            conc = "i64" if any(v in ("i64", "i32") for v in dts.values()) else "fp32"
            vals = self.literal_values(n, "i32" if "i32" in dts.values() else conc)
            op = {"out": name, "op": "tensor", "values": vals, "dtype": dspec}
            if len(shape) != 1 or r.random() < 0.3:
                op["shape"] = list(shape)
            return p.add(op, shape, dts)
        if len(shape) == 1 and 0.75 <= k < 0.82 and "linspace" in self.creation:
            dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
            if any(v not in FLOATS for v in dts.values()):
                dspec = r.choice(["$dtype", "fp32", "fp64", "bf16"])
                dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
            start = r.choice([0.0, -1.0, 0.1, -3.3, 1000.0, 1e-3, 0])
            end = r.choice([1.0, 0.3, 10000.0, -7.5, 2 * math.pi, 1])
            return p.add({"out": name, "op": "linspace", "start": start, "end": end,
                          "steps": shape[0], "dtype": dspec}, shape, dts)
        if 0.82 <= k < 0.86 and "full" in self.creation:
            dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
            v = self.scalar(for_int=any(v not in FLOATS for v in dts.values()))
            if any(d not in FLOATS for d in dts.values()) and isinstance(v, float):
                v = int(v) if math.isfinite(v) and abs(v) < 2 ** 31 else 3
            if not all(fits(t, v) for t in dts.values()):  # torch.full refuses it
                v = r.choice([v for v in SCALARS_INT if all(fits(t, v) for t in dts.values())])
            return p.add({"out": name, "op": "full", "shape": list(shape), "value": v,
                          "dtype": dspec}, shape, dts)
        if len(shape) == 1 and k < 0.75 and "arange" in self.creation:
            return self.arange(p, shape[0], dspec, float_only)
        gauss = [g for g in ("randn", "normal") if g in self.creation]
        if gauss and (r.random() < 0.3 or "uniform" not in self.creation):
            return self.normal(p, r.choice(gauss), shape, dspec)
        if "uniform" not in self.creation:
            return None
        lo = r.choice([0.0, -1.0, 0.01, -100.0, 1.0, -4.0, 1e-3, -1e4, 0.5, -30.0, 80.0])
        width = r.choice([1.0, 2.0, 8.0, 10.0, 100.0, 1e3, 1e4, 7.0, 0.01])
        dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
        if any(v not in FLOATS for v in dts.values()):
            dspec = r.choice(["$dtype", "fp32", "fp64"])
            dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
        op = {"out": name, "op": "uniform", "shape": list(shape), "seed": r.randint(0, 2 ** 31),
              "low": lo, "high": lo + width, "dtype": dspec}
        if r.random() < 0.3:
            op["stream"] = r.randint(0, 9)
        return p.add(op, shape, dts)

    def normal(self, p, kind, shape, dspec):
        """randn or normal (bitprobe's own normal stream), in a float dtype."""
        r = self.r
        dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
        if any(v not in FLOATS for v in dts.values()):
            dspec = r.choice(["$dtype", "fp32", "fp64"])
            dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
        op = {"out": p.fresh(), "op": kind, "shape": list(shape), "seed": r.randint(0, 2 ** 31),
              "dtype": dspec}
        if r.random() < 0.3:
            op["stream"] = r.randint(0, 9)
        if kind == "normal":
            op["mean"] = r.choice([0.0, 1.0, -2.5, 100.0, 1e-3, -1e4])
            op["std"] = r.choice([1.0, 0.02, 0.5, 3.0, 1e3, 0.0])
        return p.add(op, shape, dts)

    def arange(self, p, n, dspec, float_only):
        r = self.r
        name = p.fresh()
        if r.random() < 0.5 and not float_only:
            start = r.choice([0, 0, 1, -5, 100, 255, 1000, -100000, 16777210])
            step = r.choice([1, 1, 2, 3, 7, -1, -3])
            end = start + step * n
            op = {"out": name, "op": "arange", "start": start, "end": end, "step": step}
            if r.random() < 0.7:
                op["dtype"] = dspec
            else:
                dspec = None
        else:
            start = r.choice([0.0, 0.5, -1.0, 0.1, -3.3, 1000.0, 1e-3])
            step = r.choice([0.3, 0.1, 0.001, 0.25, -0.5, 1 / 3, 0.7, 2.5, 1e-3, 1.1, -0.3])
            end = start + step * (n - 0.5) if n else start  # n = 0: empty
            op = {"out": name, "op": "arange", "start": start, "end": end, "step": step,
                  "dtype": dspec}
            if dspec not in FLOATS and dspec != "$dtype":
                op["dtype"] = dspec = r.choice(["$dtype", "fp32", "fp64", "bf16"])
            n = math.ceil((end - start) / step)
        if dspec is None:
            allint = all(isinstance(op[k], int) for k in ("start", "end", "step"))
            dts = {d: "i64" if allint else "fp32" for d in p.dtypes}
        else:
            dts = {d: (d if dspec == "$dtype" else dspec) for d in p.dtypes}
        return p.add(op, (n,), dts)

    # -- ops ------------------------------------------------------------
    def pick(self, p, pred=lambda b: True):
        """A buffer of the probe that pred accepts and the op being drawn
        reads: bool and fp8 buffers only for ops flagged for them."""
        c = [b for b in self.readable(p) if pred(b)]
        return self.r.choice(c) if c else None

    def readable(self, p):
        """The buffers of known shape the op being drawn may read."""
        flags = self.flags
        return [b for b in p.bufs if b.shape is not None and
                ("bool" in flags or "bool" not in b.dt.values()) and
                ("fp8" in flags or not any(t.startswith("fp8") for t in b.dt.values())) and
                ("float_in" not in flags or all(t in FLOATS for t in b.dt.values()))]

    def result(self, op, p, ins, scalar_is_int=None):
        """Dtype of the op's result in each run dtype, by the table's rule."""
        rule, flags = op["rule"], op["flags"]
        out = {}
        for d in p.dtypes:
            ds = [b.dt[d] for b in ins]
            if rule == "promote" and scalar_is_int is not None and len(ds) == 1:
                t = ds[0]  # a tensor and a number: the number's kind counts
                dt = t if t in FLOATS else "i64" if scalar_is_int and t == "bool" else \
                    t if scalar_is_int else "fp32"
            elif rule in ("promote", "matmul"):
                dt = ds[0]
                for x in ds[1:]:
                    dt = promote(dt, x)
            elif rule == "acc":
                dt = ds[0] if ds[0] in FLOATS else "i64"
            elif rule == "f32":
                dt = "fp32"
            elif rule == "bool":
                dt = "bool"
            elif rule == "b":  # embedding: the weight's dtype
                dt = ds[1]
            else:
                dt = ds[0] if ds else "fp32"
            if "float_fn" in flags and dt not in FLOATS:
                dt = "fp32"
            out[d] = dt
        return out

    def op(self, p):
        r = self.r
        focus = [o for o in self.table if o["name"] == self.focus]
        o = focus[0] if focus and r.random() < 0.6 else r.choice(self.table)
        name, opd = o["name"], o["operands"]
        self.flags = o["flags"]
        spec = {"out": None, "op": name}
        ins = []
        shape = None
        scalar_int = None
        rule = fuzz_rules.RULES.get(name)
        known = ("none", "a", "ab", "ab_ts", "inputs")
        # ops of a known operand class but another kind than the ops the
        # branches below were written for (rms_norm's a, b; layer_norm's and
        # sdpa's inputs) take the generic rule too
        other = (opd == "ab" and o["kind"] not in ("elemwise",) and o["rule"] != "matmul") or \
            (opd == "inputs" and o["kind"] != "layout")
        if rule is not None or opd not in known or opd == "none" or other:
            got = (rule or fuzz_rules.generic)(self, o, p, spec)
            if got is None:
                return None
            ins, shape = got
            if rule is None and "cond" in spec:  # where: a and b decide the dtype
                ins, scalar_int = self.values_of(p, spec)
        elif o["rule"] == "matmul":
            m, k, n = r.choice([1, 3, 8, 16, 17, 64]), r.choice([1, 7, 16, 31, 64]), \
                r.choice([1, 5, 8, 33, 64])
            batch = () if name == "matmul" else (r.choice([1, 2, 3, 5]),)  # bmm
            if len(batch) and m * n * batch[0] > self.max_numel:
                return None
            ds = self.dtype_spec(float_only=True)
            a = self.source(p, batch + (m, k), ds, float_only=True)
            b = self.source(p, batch + (k, n), ds, float_only=True)
            if a is None or b is None:
                return None
            ins, shape = [a, b], batch + (m, n)
            spec.update(a=a.name, b=b.name)
        elif name == "outer":
            a = self.pick(p, lambda b: len(b.shape) == 1 and b.numel() <= 512)
            b = self.pick(p, lambda b: len(b.shape) == 1 and b.numel() <= 512)
            if a is None or b is None:
                return None
            ins, shape = [a, b], (a.shape[0], b.shape[0])
            spec.update(a=a.name, b=b.name)
        elif opd == "ab_ts" or opd == "ab":
            a = self.pick(p)
            if a is None:
                return None
            mode = r.random() if opd == "ab_ts" else 0.0
            if mode < 0.5:
                same = [b for b in self.readable(p) if b.shape == a.shape]
                b = r.choice(same) if same and r.random() < 0.6 else None
                if b is None and o["kind"] == "elemwise" and r.random() < 0.4:
                    b = self.source(p, self.bcast_of(a.shape), self.dtype_spec(), False)
                    if b is None:
                        return None
                if b is None:
                    b = self.source(p, a.shape, self.dtype_spec(), False)
                    if b is None:
                        return None
                if r.random() < 0.5:
                    a, b = b, a
                ins, shape = [a, b], broadcast(a.shape, b.shape)
                spec.update(a=a.name, b=b.name)
            else:
                s = self.pow_scalar(name, mode >= 0.8) if name == "pow" else self.scalar()
                int_res = any(a.dt[d] not in FLOATS for d in p.dtypes)
                if name == "pow" and mode < 0.8 and int_res and isinstance(s, int) and s < 0:
                    s = -s
                if isinstance(s, float) and s.is_integer() and int_res and r.random() < 0.5:
                    s = int(s) if abs(s) < 2 ** 53 else s
                scalar_int = isinstance(s, int)
                ins, shape = [a], a.shape
                if mode < 0.8:
                    spec.update(a=a.name, b=s)
                else:
                    spec.update(a=s, b=a.name)
        elif opd == "inputs":
            a = self.pick(p, lambda b: len(b.shape) >= 1)
            if a is None:
                return None
            ax = r.randrange(len(a.shape))
            like = [b for b in self.readable(p) if len(b.shape) == len(a.shape) and
                    all(b.shape[i] == a.shape[i] for i in range(len(a.shape)) if i != ax)]
            ins = [a] + [r.choice(like) for _ in range(r.randint(0, 3))]
            if r.random() < 0.3:
                s2 = list(a.shape)
                s2[ax] = r.choice([1, 3, 8, 17])
                extra = self.source(p, tuple(s2))
                if extra is not None:
                    ins.append(extra)
            r.shuffle(ins)
            total = sum(b.shape[ax] for b in ins)
            shape = tuple(total if i == ax else a.shape[i] for i in range(len(a.shape)))
            if math.prod(shape) > self.max_numel:
                return None
            spec["inputs"] = [b.name for b in ins]
            axv = ax - len(a.shape) if r.random() < 0.3 else ax
            if axv != 0 or r.random() < 0.5:
                spec["axis"] = axv
        else:  # "a", or an operand class this generator does not know
            need_even = name == "rotate_half"
            a = self.pick(p, lambda b: not need_even or (len(b.shape) >= 1 and b.shape[-1] % 2 == 0))
            if a is None:
                if not need_even:
                    return None
                a = self.source(p, (r.choice([2, 4, 16, 64, 128, 130]),) if r.random() < 0.6
                                else (r.choice([1, 3, 16]), r.choice([2, 8, 64, 128])))
                if a is None:
                    return None
            ins, shape = [a], a.shape
            spec["a"] = a.name
            shape = self.keys(o, p, spec, a)
            if shape is False:
                return None
        if "approximate" in o["keys"]:  # gelu: its formulation under PyTorch's name
            if r.random() < 0.6:
                spec["approximate"] = r.choice(["none", "tanh"])
        elif o["forms"] and r.random() < 0.6:
            spec["formulation"] = r.choice(o["forms"] + ["default"])
        dts = self.result(o, p, ins, scalar_int)
        if name == "cast" or "dtype" in o["required"]:
            ds = r.choice(self.cast_dtypes())
            spec["dtype"] = ds
            dts = {d: ds for d in p.dtypes}
        elif "dtype" in spec:  # the op's rule drew it (sdpa)
            dts = {d: (d if spec["dtype"] == "$dtype" else spec["dtype"]) for d in p.dtypes}
        elif r.random() < 0.06 and o["rule"] != "bool" and "views" not in o["flags"] and \
                name not in COPY_AS_IS:
            # not on an op reading views (CUDA's GEMMs take operands of the
            # result's dtype alone; sdpa's rule draws its own), nor where a
            # kernel copies elements as they are
            float_only = "float_fn" in o["flags"] or "int" not in o["flags"]
            ds = self.dtype_spec(float_only)
            nums = [v for v in (spec.get("a"), spec.get("b")) if isinstance(v, (int, float))]
            if ds not in FLOATS and ds != "$dtype" and (float_only or any(
                    not (math.isfinite(v) and float(v).is_integer()) for v in nums)):
                ds = "fp32"
            spec["dtype"] = ds
            dts = {d: (d if ds == "$dtype" else ds) for d in p.dtypes}
        if o["rule"] == "matmul" and any(ins[0].dt[d] != ins[1].dt[d] for d in p.dtypes):
            return None
        if name == "round" and any(t not in FLOATS for t in dts.values()):
            spec.pop("decimals", None)  # decimals round a float only
        if not self.fit_number(o, p, spec, ins, scalar_int, dts):
            return None
        spec["out"] = p.fresh()
        if shape is not None and math.prod(shape) > self.max_numel:
            return None
        return p.add(spec, shape, dts)

    def values_of(self, p, spec):
        """The tensors among spec's a and b, and whether a number among
        them is an integer (None: no number): what decides where's dtype
        (its cond does not)."""
        bufs = {b.name: b for b in p.bufs}
        ins = [bufs[spec[k]] for k in ("a", "b") if isinstance(spec.get(k), str)]
        nums = [spec[k] for k in ("a", "b") if isinstance(spec.get(k), (int, float))]
        return ins, (all(isinstance(v, int) for v in nums) if nums else None)

    def fit_number(self, o, p, spec, ins, scalar_int, dts):
        """A number of a comparison (or a pow exponent, where's a or b) that
        overflows the dtype it is converted to (the comparison's compute
        dtype, the result's) drawn again: bitprobe refuses the first two,
        as PyTorch does, and PyTorch the third.  False when no number
        fits."""
        name, limits = o["name"], WHERE_LIMITS if "cond" in spec else SCALAR_LIMITS
        if o["rule"] == "bool" and ins:
            cdt = self.result(dict(o, rule="promote"), p, ins, scalar_int)
        elif (name == "pow" and isinstance(spec.get("a"), str)) or "cond" in spec:
            cdt = dts  # where's number meets its result's dtype (torch.where refuses it)
        else:
            return True
        for k in ("a", "b"):
            v = spec.get(k)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or \
                    all(fits(cdt[d], v, limits) for d in p.dtypes):
                continue
            pool = POW_EXPONENTS if name == "pow" else SCALARS_INT + SCALARS_FLOAT
            ok = [w for w in pool if isinstance(w, int) == isinstance(v, int) and
                  (name != "pow" or not isinstance(v, int) or w >= 0) and
                  all(fits(cdt[d], w, limits) for d in p.dtypes)]
            if not ok:
                return False
            spec[k] = self.r.choice(ok)
        return True

    def bcast_of(self, shape):
        """A shape that broadcasts against shape (torch.broadcast_shapes):
        a suffix of it, some dimensions 1, or 0-D."""
        r = self.r
        k = r.random()
        if k < 0.15 or not shape:
            return ()
        sh = list(shape[r.randint(0, len(shape) - 1):]) if k < 0.5 else list(shape)
        for i in range(len(sh)):
            if r.random() < 0.5:
                sh[i] = 1
        return tuple(sh)

    def pow_scalar(self, name, base):
        r = self.r
        if base:
            return r.choice(POW_BASES) if r.random() < 0.7 else self.scalar()
        return r.choice(POW_EXPONENTS) if r.random() < 0.7 else self.scalar()

    def keys(self, o, p, spec, a):
        """Fills an 'a' op's keys; returns the result shape (None: not
        known to this generator), or False to give the op up."""
        r = self.r
        name, nd = o["name"], len(a.shape)
        shape = a.shape if o["kind"] in ("elemwise", "fused") else None
        if name == "rotate_half" or name == "gelu":
            return a.shape
        if name == "round":
            if r.random() < 0.4 and all(a.dt[d] in FLOATS for d in a.dt):
                spec["decimals"] = r.choice([1, 2, 3, -1, -2])
            return a.shape
        if name == "clamp":
            k = r.random()
            lo = r.choice([-1.0, 0.0, -0.5, -100.0, 0.25, -3])
            hi = r.choice([1.0, 0.0, 0.5, 100.0, 6.0, 3])
            if any(a.dt[d] not in FLOATS for d in a.dt):  # PyTorch would promote
                lo, hi = int(lo), int(hi)
            if k < 0.7:
                spec["min"] = lo
            if k >= 0.35:
                spec["max"] = hi
            return a.shape
        if name == "slice":
            if nd == 0:
                return False
            ax = r.randrange(nd)
            dim = a.shape[ax]
            st = r.choice([1, 1, 2, 3, 7, 16])
            s = r.choice([0, 0, 1, 3, -5, dim // 2, dim + 3, -dim - 2])
            e = r.choice([None, dim, dim - 1, -1, -3, 5, dim * 2, 1])
            spec["axis"] = ax - nd if r.random() < 0.3 else ax
            if s != 0 or r.random() < 0.3:
                spec["start"] = s
            if e is not None:
                spec["end"] = e
            if st != 1 or r.random() < 0.3:
                spec["step"] = st
            first, length = _slice(s, e, st, dim)
            return tuple(length if i == ax else a.shape[i] for i in range(nd))
        if "axis" in o["keys"]:
            keep = "keepdim" in o["keys"] and r.random() < 0.3
            if keep:
                spec["keepdim"] = True
            if fuzz_rules.fill_keys(self, o, p, spec, a, skip=("axis", "keepdim")) is False:
                return False
            # an axis without keepdim (softmax, log_softmax, cumsum) keeps
            # the shape; a 0-d tensor has the one axis 0 (or -1)
            keeps = o["kind"] != "reduction" or "keepdim" not in o["keys"]
            if nd == 0 and "axis" in o["required"]:
                spec["axis"] = r.choice([0, -1])
                return a.shape if keeps else ()
            if nd == 0 or (r.random() < 0.4 and "axis" not in o["required"]):
                if o["kind"] != "reduction":
                    return shape
                return (1,) * nd if keep else ()
            ax = r.randrange(nd)
            spec["axis"] = ax - nd if r.random() < 0.3 else ax
            if keeps:
                return a.shape if o["kind"] == "reduction" else shape
            if o["kind"] == "reduction":
                return tuple(1 if i == ax else a.shape[i] for i in range(nd)
                             if keep or i != ax)
            return shape
        res = fuzz_rules.fill_keys(self, o, p, spec, a)  # keys without a rule here
        if res is False or (res is None and o["kind"] not in ("elemwise", "fused")):
            return res if res is False else None
        return shape if res is None else res


def broadcast(a, b):
    """torch.broadcast_shapes of two shapes known to broadcast."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(x if y == 1 else y for x, y in zip(a, b))


def _slice(s, e, st, dim):
    """Python's a[s:e:st] along a dimension of size dim: (first, length)."""
    if s < 0:
        s = max(0, s + dim)
    if e is None:
        e = dim
    elif e < 0:
        e = max(0, e + dim)
    s, e = min(s, dim), min(e, dim)
    return s, ((e - s - 1) // st + 1 if e > s else 0)


class Probe:
    def __init__(self, name, dtypes):
        self.name, self.dtypes = name, dtypes
        self.ops, self.bufs, self.n = [], [], 0

    def fresh(self):
        self.n += 1
        return f"b{self.n}"

    def add(self, op, shape, dts):
        self.ops.append(op)
        b = Buf(op["out"], tuple(shape) if shape is not None else None, dts)
        self.bufs.append(b)
        return b


def drawn(table):
    """The ops of the table the generator draws as ops (not as sources)."""
    return [o["name"] for o in table if o["kind"] != "creation" or
            o["name"] not in SOURCES + NOT_DRAWN]


def probe(seed, index, table, nops, large=True, max_numel=120000, extra_dtypes=(),
          focus=None):
    """The index-th probe of a seed: a spec dict; with focus (an op name),
    most of its ops are that op."""
    rng = random.Random(f"{seed}:{index}")
    g = Gen(rng, table, max_numel=max_numel, large=large, extra_dtypes=extra_dtypes,
            focus=focus)
    k = rng.random()
    dtypes = ["fp32"] if k < 0.3 else rng.sample(RUN_DTYPES, rng.randint(1, 3))
    dtypes = [d for d in RUN_DTYPES if d in dtypes]
    p = Probe(f"fz{seed}-{index:04d}", dtypes)
    for _ in range(rng.randint(2, 4)):
        g.source(p)
    tries = 0
    while len([o for o in p.ops if o["op"] not in g.creation]) < nops and tries < nops * 4:
        tries += 1
        g.op(p)
    return {"name": p.name, "description": f"fuzz seed {seed} probe {index}",
            "origin": f"seed {seed}, probe {index}", "dtypes": dtypes, "ops": p.ops,
            "outputs": [p.ops[-1]["out"]]}


def reads(op):
    """The buffer names an op of a spec reads (its operands: a, b, where's
    cond, clamp_tensor's min and max, inputs), not numbers or $params."""
    return [v for v in [op.get(k) for k in ("a", "b", "cond", "min", "max")] +
            list(op.get("inputs", [])) if isinstance(v, str) and not v.startswith("$")]


def prune(spec, drop):
    """spec without the ops named in drop and every op reading them."""
    gone = set(drop)
    ops = []
    for op in spec["ops"]:
        if op["out"] in gone or any(x in gone for x in reads(op)):
            gone.add(op["out"])
            continue
        ops.append(op)
    s = dict(spec, ops=ops)
    outs = [o for o in spec["outputs"] if o not in gone]
    s["outputs"] = outs or ([ops[-1]["out"]] if ops else [])
    return s


def write(spec, d):
    text, lines = to_yaml(spec)
    with open(os.path.join(d, spec["name"] + ".yaml"), "w") as f:
        f.write(text)
    return lines


_ERR = re.compile(r"^bitprobe: (?P<path>[^:]+\.yaml):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$", re.M)


def extra_dtypes(bitprobe, devices, d):
    """The EXTRA_DTYPES every device's backend computes a cast to: one
    small probe each, run by bitprobe in directory d."""
    ok = []
    for dt in EXTRA_DTYPES:
        with open(os.path.join(d, "dt.yaml"), "w") as f:
            f.write("name: dt\ndescription: \"a cast\"\ndtypes: [fp32]\nops:\n"
                    "  - {out: x, op: tensor, values: [0.0, 1.5, -2.0]}\n"
                    f"  - {{out: y, op: cast, a: x, dtype: {dt}}}\noutputs:\n  - {{name: y}}\n")
        p = subprocess.run([bitprobe, "run", "dt", "--probes", d, "--device", ",".join(devices),
                            "--no-golden", "--quiet", "--save", os.path.join(d, "dt-run")],
                           capture_output=True, text=True)
        if p.returncode in (0, 1):
            ok.append(dt)
        shutil.rmtree(os.path.join(d, "dt-run"), ignore_errors=True)
    os.remove(os.path.join(d, "dt.yaml"))
    return ok


def validate(specs, d, bitprobe, log=None):
    """Writes every spec to d and lets bitprobe load them all; an op that
    bitprobe refuses (named by file:line) is dropped with its dependants,
    until every probe loads.  Returns the specs that remain and the
    refusals as (probe, op, message).  One `bitprobe list` of d when every
    probe loads; otherwise each probe is loaded alone until it does."""
    for s in specs:
        write(s, d)
    p = subprocess.run([bitprobe, "list", "--probes", d], capture_output=True, text=True)
    if p.returncode == 0:
        return list(specs), []
    one = os.path.join(d, ".one")
    os.makedirs(one, exist_ok=True)
    kept, refused = [], []
    for spec in specs:
        name = spec["name"]
        os.remove(os.path.join(d, name + ".yaml"))
        spec = _load_alone(spec, one, bitprobe, refused, log)
        os.remove(os.path.join(one, name + ".yaml"))
        if spec is not None:
            write(spec, d)
            kept.append(spec)
    os.rmdir(one)
    return kept, refused


def _load_alone(spec, one, bitprobe, refused, log):
    """spec, less the ops bitprobe refuses, loaded alone in directory one;
    None when nothing is left."""
    name = spec["name"]
    for _ in range(len(spec["ops"]) + 1):
        lines = write(spec, one)
        p = subprocess.run([bitprobe, "list", "--probes", one], capture_output=True, text=True)
        if p.returncode == 0:
            return spec
        m = _ERR.search(p.stderr)
        if not m:
            raise RuntimeError("bitprobe list failed without a position: " + p.stderr.strip())
        idx = [i for i, ln in enumerate(lines) if ln == int(m["line"])]
        if not idx:  # the error is not at an op line: the whole probe goes
            refused.append((name, None, m["msg"]))
            return None
        op = spec["ops"][idx[0]]
        refused.append((name, op["op"], m["msg"]))
        if log:
            log(f"  refused by bitprobe: {name} {op['op']} ({m['msg']})")
        spec = prune(spec, [op["out"]])
        if not spec["ops"]:
            write(spec, one)
            return None
    raise RuntimeError(f"bitprobe keeps refusing {name}")
