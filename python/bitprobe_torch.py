"""bitprobe_torch: record every ATen op a PyTorch program runs into a
bitprobe op ledger (docs/ledger-format.md), for `bitprobe diff A.ledger
B.ledger` and `bitprobe explain A.ledger B.ledger --op SEQ`.

    python -m bitprobe_torch record -o run.ledger script.py args...

    import bitprobe_torch
    with bitprobe_torch.record("run.ledger"):
        model(x)

A TorchDispatchMode sees each op after autograd, as the device runs it;
global module hooks say which module it ran under.  For each op the ledger
keeps its name, module path, non-tensor arguments, and per input and output
tensor: dtype, shape, strides, device, byte count and a 64-bit hash of its
raw bytes, computed where the tensor lives (a GPU run copies nothing to the
host but one 8-byte hash per tensor, in batches; a strided tensor is read
through its strides, not copied).  Inputs are hashed before
the op runs, so in-place ops are seen as they were.  Bytes are hashed once:
a tensor met again, or a view of bytes already hashed (a reshape of a
contiguous tensor, a dtype view), takes its hash from a cache that an op
writing to any tensor empties (Recorder._entry; tests/ledger_torch/
cache_check.py checks every hash written against the bytes).

The hash (HASH_NAME, the same in bitprobe's C reader, src/io/ledger_hash.c):
the tensor's bytes in row-major order of its logical shape (what
.contiguous() lays out, whatever its strides), zero-padded to a multiple of
4 and read as little-endian 32-bit words w_0..w_{n-1}:

    x_i = i * 2**32 + w_i   (w_i as a signed 32-bit integer), mod 2**64
    S   = sum of fmix64(x_i), mod 2**64
    H   = fmix64(S + nbytes mod 2**64)

fmix64 is MurmurHash3's 64-bit finaliser (a bijection).  A sum is what any
device reduces to the same bits in any order.  Changing one word always
changes S (fmix64 is a bijection and x_i encodes i); for other changes a
false "identical" needs a 64-bit collision, about 2**-64 per pair of
tensors if fmix64 behaves as a random function.  It is not a cryptographic
hash: it guards against accidents, not against someone crafting tensors.

Full tensors are captured (safetensors, next to the ledger) for ops whose
name matches --capture, for everything up to --capture-bytes, or, with
--reference A.ledger, for the first --diverging ops whose outputs appear
nowhere in A (this mode waits for each hash: slower).

Each op's common path (its arguments, its tensors' entries and caches,
the hashes and kernel launches, the record, the ledger's lines) runs in
one call of the C extension _bitprobe_rec (python/_bitprobe_rec.c, built
by make for configure's python3) where it loads and passes its self-check;
else in Python, to the same ledger (tests/ledger_torch/ext_check.py).

Works with PyTorch 1.13 and 2.x.  Standard library and torch only.
"""

import argparse
import array
import io
import json
import os
import platform
import re
import runpy
import struct
import sys
import threading
import time
import types
import weakref

try:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
except ImportError as _e:  # a command line gets one line, not a traceback
    if __name__ == "__main__":
        sys.stderr.write("bitprobe_torch: this Python (%s) cannot import torch: %s; install "
                         "PyTorch, or run a Python that has it (PYTHON3=...)\n" %
                         (sys.executable, _e))
        sys.exit(2)
    raise

LEDGER_FORMAT = "bitprobe-ledger"
LEDGER_VERSION = 1
HASH_NAME = "fmix64-sum/1"
__version__ = "1.0"

_MASK64 = (1 << 64) - 1
_C1 = 0xFF51AFD7ED558CCD
_C2 = 0xC4CEB9FE1A85EC53


def _signed64(v):
    v &= _MASK64
    return v - (1 << 64) if v >> 63 else v


def fmix64(x):
    """MurmurHash3's finaliser on a Python integer (mod 2**64)."""
    x &= _MASK64
    x ^= x >> 33
    x = (x * _C1) & _MASK64
    x ^= x >> 33
    x = (x * _C2) & _MASK64
    x ^= x >> 33
    return x


def hash_bytes(data):
    """The ledger hash of raw bytes, in plain Python: the reference that
    the torch and CUDA versions are checked against."""
    n = len(data)
    padded = bytes(data) + b"\0" * (-n % 4)
    s = 0
    for i, (w,) in enumerate(struct.iter_unpack("<i", padded)):
        s += fmix64((i << 32) + w)
    return fmix64((s + n) & _MASK64)


# dtype: (ledger name = safetensors name, bytes per element).  Names of
# dtypes safetensors lacks keep torch's name.
def _dtype_table():
    t = {
        torch.float64: "F64", torch.float32: "F32", torch.float16: "F16",
        torch.bfloat16: "BF16", torch.int64: "I64", torch.int32: "I32",
        torch.int16: "I16", torch.int8: "I8", torch.uint8: "U8", torch.bool: "BOOL",
        torch.complex64: "C64", torch.complex128: "C128",
    }
    for attr, name in (("float8_e4m3fn", "F8_E4M3"), ("float8_e5m2", "F8_E5M2"),
                       ("uint16", "U16"), ("uint32", "U32"), ("uint64", "U64")):
        if hasattr(torch, attr):
            t[getattr(torch, attr)] = name
    return t


_DTYPES = _dtype_table()
_DTINFO = {}  # dtype -> (ledger name, bytes per element, whether complex), one look-up


def _dtype_info(t):
    """_DTINFO's entry for t's dtype, from t (a constructor may be wrapped
    to make another dtype than asked: zero.Init's)."""
    dt = t.dtype
    info = _DTINFO[dt] = (dtype_name(dt), t.element_size(), dt.is_complex)
    return info


_HAS_NEG = hasattr(torch.Tensor, "is_neg")
_CPU = torch.device("cpu")
# The constructors as imported: the self-tests make their tensors with these,
# so that a context that wraps torch's constructors (zero.Init casts every
# floating result to bf16 or fp16) does not change what they check.
_RANDN, _RANDINT = torch.randn, torch.randint
# What bitprobe's safetensors reader takes: every safetensors dtype (complex
# tensors are hashed but not captured).
CAPTURABLE = {"F64", "F32", "F16", "BF16", "I64", "I32", "I16", "I8", "U8", "BOOL",
              "F8_E4M3", "F8_E5M2", "U16", "U32", "U64"}


def dtype_name(dt):
    return _DTYPES.get(dt) or str(dt).replace("torch.", "")


# Ops whose outputs hold whatever memory held: not hashed (their bits
# differ from run to run and mean nothing).
_UNINIT = re.compile(r"^aten::(empty|empty_like|empty_strided|new_empty|new_empty_strided|"
                     r"_empty_affine_quantized|empty_permuted)(\.|$)")


# In-place ops whose first argument's old contents do not matter: it is
# not hashed as an input (it may be uninitialised memory).
_OVERWRITE = re.compile(r"^aten::(normal_|uniform_|fill_|zero_|copy_|random_|bernoulli_|"
                        r"exponential_|geometric_|cauchy_|log_normal_|set_|resize_)(\.|$)")


# --- hashing on the tensor's device ------------------------------------

_CHUNK = 1 << 22  # words per torch-ops pass: bounds the int64 temporaries
_LOW31 = (1 << 31) - 1


def _byte_view(t):
    """t's bytes in row-major order as a 1-D uint8 tensor (a view where t
    is contiguous, else of a contiguous copy).  A contiguous tensor may
    still have a stride other than 1 in a dimension of size 1 ([1] with
    stride [2]), which .view(uint8) refuses: its elements are read as the
    dense run they are."""
    c = t.contiguous()
    return c.as_strided((c.numel(),), (1,)).view(torch.uint8)


def _words(t):
    """A 1-D int32 view of t's bytes in row-major order, zero-padded to a
    multiple of 4 bytes."""
    t = t.detach()
    if t.dtype.is_complex:
        t = torch.view_as_real(t)
    nbytes = t.numel() * t.element_size()
    if nbytes == 0:
        return t.new_empty(0, dtype=torch.int32), 0
    b = _byte_view(t)
    if nbytes % 4:
        b = torch.cat([b, b.new_zeros(4 - nbytes % 4)])
    try:
        w = b.view(torch.int32)
    except RuntimeError:  # storage offset not a multiple of 4
        w = b.clone().view(torch.int32)
    return w, nbytes


def _fmix64_(x):
    """fmix64 of each element of an int64 tensor, in place (int64
    arithmetic wraps; >> is arithmetic, so each shift is masked to make it
    logical); returns x."""
    x.bitwise_xor_((x >> 33).bitwise_and_(_LOW31))
    x.mul_(_signed64(_C1))
    x.bitwise_xor_((x >> 33).bitwise_and_(_LOW31))
    x.mul_(_signed64(_C2))
    x.bitwise_xor_((x >> 33).bitwise_and_(_LOW31))
    return x


class _TorchHasher:
    """S, the sum of fmix64(x_i), with torch integer ops on the tensor's
    device (int64 arithmetic wraps; >> is arithmetic, so each shift is
    masked to make it logical)."""

    def __init__(self):
        self._pos = {}

    def _positions(self, dev, n):
        p = self._pos.get(dev)
        if p is None or p.numel() < n:
            p = torch.arange(max(n, 1024), dtype=torch.int64, device=dev) << 32
            self._pos[dev] = p
        return p[:n]

    def partial(self, w):
        total = None
        for base in range(0, w.numel(), _CHUNK):
            c = w[base:base + _CHUNK]
            x = c.to(torch.int64)
            x += self._positions(c.device, c.numel())
            if base:
                x += _signed64(base << 32)
            s = _fmix64_(x).sum()
            total = s if total is None else total + s
        if total is None:
            total = torch.zeros((), dtype=torch.int64, device=w.device)
        return total


# Tensors (of at most 16 KiB: the extension's BP_BATCH_BYTES) one launch of
# the batch kernel hashes, and how many of them may be strided: the
# extension's BP_BATCH and BP_SBATCH, which it checks (struct bp_batch).
_BATCH = 64
_SBATCH = 16

# The kernels.  Each thread's share of S is a function of the thread's
# index and the thread count alone (the *_sum functions), the warp
# reduction and the atomic add apart: tests/ledger_torch/cuda_emul.py
# compiles the same text for the host (BP_LEDGER_HOST) and runs those
# functions thread by thread against hash_bytes, so that the kernels'
# arithmetic is checked where there is no GPU.
_CUDA_SOURCE = r"""
#define BP_BATCH @BATCH@
#define BP_SBATCH @SBATCH@
#ifndef BP_LEDGER_HOST
#define BP_FN __device__ __forceinline__
#define BP_UNROLL _Pragma("unroll")
#define BP_UNROLL4 _Pragma("unroll 4")
#else
#define BP_UNROLL
#define BP_UNROLL4
#endif
typedef unsigned long long bp_u64;
typedef long long bp_i64;

#ifdef BP_LEDGER_HOST
static inline unsigned int __umulhi(unsigned int a, unsigned int b)
{
    return (unsigned int)(((bp_u64)a * b) >> 32);
}
#endif

/* fmix64 of word i holding w (sign-extended, as the format says:
 * x = (i << 32) + (int64)(int32)w; x ^= x >> 33; x *= 0xff51afd7ed558ccd;
 * x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53; x ^= x >> 33) in 32-bit halves:
 * x's high half is i's low 32 bits plus w's sign, x >> 33 is the high
 * half >> 1, and each product mod 2^64 is three 32-bit ones.  The same
 * bits in fewer instructions than 64-bit arithmetic: the contiguous
 * kernel went from 3.0 to 4.0 TB/s on an H200 with it. */
BP_FN bp_u64 bp_term(bp_u64 i, unsigned int w)
{
    unsigned int lo = w, hi = (unsigned int)i + (unsigned int)((int)w >> 31), t;
    lo ^= hi >> 1;
    t = lo * 0xed558ccdu;
    hi = __umulhi(lo, 0xed558ccdu) + lo * 0xff51afd7u + hi * 0xed558ccdu;
    lo = t ^ (hi >> 1);
    t = lo * 0x1a85ec53u;
    hi = __umulhi(lo, 0x1a85ec53u) + lo * 0xc4ceb9feu + hi * 0x1a85ec53u;
    lo = t ^ (hi >> 1);
    return ((bp_u64)hi << 32) | lo;
}

/* A thread's share of S over nbytes contiguous bytes at p (4-byte
 * aligned): words tid, tid + nthreads, ... */
BP_FN bp_u64 bp_contig_sum(const unsigned char *p, bp_u64 nbytes, bp_u64 tid, bp_u64 nthreads)
{
    bp_u64 full = nbytes / 4, nw = (nbytes + 3) / 4, acc = 0, start = 0;
    const unsigned int *w = (const unsigned int *)p;
    if (((bp_u64)p & 15) == 0) { /* 16-byte loads: the sum's order is free */
        const uint4 *q = (const uint4 *)p;
        bp_u64 nq = full / 4;
        bp_u64 i = tid;
        for (; i + nthreads < nq; i += 2 * nthreads) { /* two loads in flight */
            uint4 v = q[i], u = q[i + nthreads];
            bp_u64 b = 4 * i, c = 4 * (i + nthreads);
            acc += bp_term(b, v.x) + bp_term(b + 1, v.y) + bp_term(b + 2, v.z) +
                   bp_term(b + 3, v.w);
            acc += bp_term(c, u.x) + bp_term(c + 1, u.y) + bp_term(c + 2, u.z) +
                   bp_term(c + 3, u.w);
        }
        for (; i < nq; i += nthreads) {
            uint4 v = q[i];
            bp_u64 b = 4 * i;
            acc += bp_term(b, v.x) + bp_term(b + 1, v.y) + bp_term(b + 2, v.z) +
                   bp_term(b + 3, v.w);
        }
        start = 4 * nq;
    }
    for (bp_u64 i = start + tid; i < nw; i += nthreads) {
        unsigned int v = 0;
        if (i < full)
            v = w[i];
        else
            for (bp_u64 k = 4 * i; k < nbytes; k++)
                v |= (unsigned int)p[k] << (8 * (k - 4 * i));
        acc += bp_term(i, v);
    }
    return acc;
}

/* A strided tensor as the strided kernel reads it (passed by value):
 * d[0..ndim) its sizes, d[ndim..2 ndim) its strides in elements (any
 * sign; 0 for an expanded dim; overlapping is fine, nothing is written). */
struct bp_strided {
    int ndim;   /* 1..8 */
    int elsize; /* bytes per element: 1, 2, 4, 8 or 16 */
    bp_i64 d[16];
};

/* The address of element k in row-major order. */
BP_FN const unsigned char *bp_elem_at(const unsigned char *p, const bp_strided &a, bp_u64 k)
{
    bp_i64 off = 0;
    for (int d = a.ndim - 1; d >= 0; d--) {
        bp_u64 n = (bp_u64)a.d[d];
        off += (bp_i64)(k % n) * a.d[a.ndim + d];
        k /= n;
    }
    return p + off * a.elsize;
}

/* An element of 1 or 2 bytes, zero-extended. */
BP_FN unsigned int bp_small(const unsigned char *q, int es)
{
    return es == 1 ? (unsigned int)q[0] : (unsigned int)*(const unsigned short *)q;
}

#define BP_CHUNK 256 /* elements of a row a warp takes at a time */

/* A thread's share of S over a strided tensor's bytes in row-major order,
 * read where they lie, any layout (bp_strided_sum's last resort).  Words
 * are summed in any order, so the threads walk the memory, not the logical
 * order: the dim of the smallest stride (f) is the one consecutive lanes of
 * a warp step along (a transposed tensor is read in coalesced rows), each
 * "row" being one index of the other dims.  A row of 32 elements or more is
 * taken BP_CHUNK elements at a time by a warp; shorter rows, 32 / nf of
 * them at once.  An element of 4 bytes or more holds whole words; smaller
 * ones make a word with the next 1 or 3 in row-major order, read by the
 * lane holding the word's first element (the next along the last dim, or,
 * past its end, found from its row-major index). */
BP_FN bp_u64 bp_strided_any(const unsigned char *p, const bp_strided &a, bp_u64 tid,
                            bp_u64 nthreads)
{
    const int n = a.ndim, es = a.elsize;
    const bp_i64 *size = a.d, *str = a.d + n;
    bp_u64 numel = 1, best = ~0ULL;
    int f = n - 1;
    for (int d = n - 1; d >= 0; d--) {
        numel *= (bp_u64)size[d];
        bp_u64 s = (bp_u64)(str[d] < 0 ? -str[d] : str[d]);
        if (size[d] > 1 && s < best) {
            best = s;
            f = d;
        }
    }
    if (numel == 0)
        return 0;
    bp_u64 cf = 1; /* f's stride in row-major order */
    for (int d = n - 1; d > f; d--)
        cf *= (bp_u64)size[d];
    const bp_u64 nf = (bp_u64)size[f], rows = numel / nf, sizeL = (bp_u64)size[n - 1];
    const bp_i64 sf = str[f], strL = str[n - 1];
    const int wsh = es >= 4 ? 0 : es == 2 ? 1 : 2; /* log2 of elements per word */
    const bp_u64 wmask = (1ULL << wsh) - 1;
    const bp_u64 warp = tid / 32, nwarps = nthreads / 32, lane = tid % 32;
    const bp_u64 rpi = nf >= 32 ? 1 : 32 / nf;                        /* rows per item */
    const bp_u64 cpr = nf >= 32 ? (nf + BP_CHUNK - 1) / BP_CHUNK : 1; /* items per row */
    const bp_u64 items = (rows + rpi - 1) / rpi * cpr;
    bp_u64 acc = 0;
    for (bp_u64 it = warp; it < items; it += nwarps) {
        bp_u64 r, i, iend, istep;
        if (nf >= 32) {
            bp_u64 c = it % cpr;
            r = it / cpr;
            i = c * BP_CHUNK + lane;
            iend = (c + 1) * BP_CHUNK < nf ? (c + 1) * BP_CHUNK : nf;
            istep = 32;
        } else {
            r = it * rpi + lane / nf;
            if (lane >= rpi * nf || r >= rows)
                continue;
            i = lane % nf;
            iend = i + 1;
            istep = 1;
        }
        /* the row's indices in the other dims (the last fastest): its
         * offset, its first row-major index, its index in the last dim */
        bp_i64 off0 = 0;
        bp_u64 e0 = 0, cs = 1, iL = 0;
        for (int d = n - 1; d >= 0; d--) {
            if (d != f) {
                bp_u64 sz = (bp_u64)size[d], q = r % sz;
                r /= sz;
                off0 += (bp_i64)q * str[d];
                e0 += q * cs;
                if (d == n - 1)
                    iL = q;
            }
            cs *= (bp_u64)size[d];
        }
        for (; i < iend; i += istep) {
            const unsigned char *q = p + (off0 + (bp_i64)i * sf) * es;
            bp_u64 e = e0 + i * cf;
            if (es >= 4) {
                for (int k = 0; k < es / 4; k++)
                    acc += bp_term(e * (es / 4) + k, ((const unsigned int *)q)[k]);
            } else if ((e & wmask) == 0) {
                bp_u64 il = f == n - 1 ? i : iL;
                unsigned int w = bp_small(q, es);
                for (int j = 1; j <= (int)wmask && e + j < numel; j++) {
                    const unsigned char *qj = il + j < sizeL ? q + (bp_i64)j * strL * es
                                                             : bp_elem_at(p, a, e + j);
                    w |= bp_small(qj, es) << (8 * es * j);
                }
                acc += bp_term(e >> wsh, w);
            }
        }
    }
    return acc;
}

/* q / d and q % d (in *r), in 32 bits where both fit: a 64-bit division
 * costs several times more. */
BP_FN bp_u64 bp_divmod(bp_u64 q, bp_u64 d, bp_u64 *r)
{
    if (!((q | d) >> 32)) {
        unsigned int x = (unsigned int)q / (unsigned int)d;
        *r = (unsigned int)q - x * (unsigned int)d;
        return x;
    }
    *r = q % d;
    return q / d;
}

#define BP_ROW_WORDS 1024 /* words of a row a warp takes at a time (lanes along a row) */
#define BP_LANE_WORDS 64  /* words of a row a lane takes at a time (lanes across rows) */

/* A thread's share of S over a tensor whose rows (the last dim, wpr words
 * each: no word holds elements of two rows) lie anywhere; the row-major
 * index of word k of row r is r * wpr + k.  Two ways, both reading
 * coalesced and dividing once per item, not per element:
 *  - along: each row's elements are adjacent (stride 1) and its words
 *    4-byte aligned, so lanes read consecutive words of a row (a slice,
 *    a transpose of other dims, an expand): an item is `tr` rows (a
 *    short row) or BP_ROW_WORDS of one row (a long one);
 *  - across: lanes take 32 rows apart by dim f (the smallest stride but
 *    the last dim's), each lane its own row's words, BP_LANE_WORDS at a
 *    time, element by element (a transposed matrix, K^T); an item is one
 *    index of the other dims, 32 indices of f, BP_LANE_WORDS words. */
BP_FN bp_u64 bp_rows_sum(const unsigned char *p, const bp_strided &a, bool along, int f,
                         bp_u64 tid, bp_u64 nthreads)
{
    const int n = a.ndim, es = a.elsize, L = n - 1;
    const bp_i64 *size = a.d, *str = a.d + n, sL = str[L];
    bp_u64 rows = 1;
    for (int d = 0; d < L; d++)
        rows *= (bp_u64)size[d];
    const bp_u64 wpr = (bp_u64)size[L] * es / 4;
    const bp_u64 warp = tid / 32, nwarps = nthreads / 32, lane = tid % 32;
    bp_u64 acc = 0, r;
    if (along) {
        const bp_u64 kc = (wpr + BP_ROW_WORDS - 1) / BP_ROW_WORDS;
        const bp_u64 tr = wpr >= 512 ? 1 : 512 / wpr; /* rows per item */
        const bp_u64 items = (rows + tr - 1) / tr * kc;
        for (bp_u64 it = warp; it < items; it += nwarps) {
            bp_u64 ch, r0 = bp_divmod(it, kc, &ch) * tr, rest = r0, q;
            unsigned int idx[7]; /* the row's index in dims 0..L-1 (each < 2^32) */
            bp_i64 off = 0;
BP_UNROLL
            for (int d = 6; d >= 0; d--)
                if (d < L) {
                    rest = bp_divmod(rest, (bp_u64)size[d], &q);
                    idx[d] = (unsigned int)q;
                    off += (bp_i64)q * str[d];
                }
            const bp_u64 k1 = (ch + 1) * BP_ROW_WORDS < wpr ? (ch + 1) * BP_ROW_WORDS : wpr;
            const bp_u64 r1 = r0 + tr < rows ? r0 + tr : rows;
            for (r = r0; r < r1; r++) {
                const unsigned int *w = (const unsigned int *)(p + off * es);
BP_UNROLL4
                for (bp_u64 k = ch * BP_ROW_WORDS + lane; k < k1; k += 32)
                    acc += bp_term(r * wpr + k, w[k]);
BP_UNROLL
                for (int d = 6; d >= 0; d--) /* the next row */
                    if (d < L) {
                        off += str[d];
                        if (++idx[d] < (unsigned int)size[d])
                            break;
                        off -= str[d] * size[d];
                        idx[d] = 0;
                    }
            }
        }
        return acc;
    }
    const bp_u64 nf = (bp_u64)size[f], nfb = (nf + 31) / 32, nb = rows / nf;
    const bp_u64 kc = (wpr + BP_LANE_WORDS - 1) / BP_LANE_WORDS, items = nb * nfb * kc;
    const bp_i64 step = sL * es; /* bytes from an element of a row to the next */
    for (bp_u64 it = warp; it < items; it += nwarps) {
        bp_u64 ch, fb, g = bp_divmod(it, kc, &ch), b = bp_divmod(g, nfb, &fb), q;
        const bp_u64 fi = fb * 32 + lane;
        if (fi >= nf)
            continue;
        bp_i64 off = 0;
        bp_u64 ri = 0, cs = 1; /* the row's offset and row-major index */
BP_UNROLL
        for (int d = 6; d >= 0; d--)
            if (d < L) {
                if (d == f)
                    q = fi;
                else
                    b = bp_divmod(b, (bp_u64)size[d], &q);
                off += (bp_i64)q * str[d];
                ri += q * cs;
                cs *= (bp_u64)size[d];
            }
        const bp_u64 k0 = ch * BP_LANE_WORDS,
                     k1 = k0 + BP_LANE_WORDS < wpr ? k0 + BP_LANE_WORDS : wpr;
        bp_u64 wi = ri * wpr + k0, k = k0;
        if (es == 2) { /* a word: elements 2k and 2k + 1; four words' loads at once */
            const unsigned char *e = p + off * es + (bp_i64)(2 * k0) * step;
            for (; k + 4 <= k1; k += 4, wi += 4, e += 8 * step) {
                unsigned int v[8];
BP_UNROLL
                for (int j = 0; j < 8; j++)
                    v[j] = *(const unsigned short *)(e + j * step);
BP_UNROLL
                for (int j = 0; j < 4; j++)
                    acc += bp_term(wi + j, v[2 * j] | v[2 * j + 1] << 16);
            }
            for (; k < k1; k++, wi++, e += 2 * step)
                acc += bp_term(wi, *(const unsigned short *)e |
                                       (unsigned int)*(const unsigned short *)(e + step) << 16);
        } else if (es == 1) { /* a word: elements 4k .. 4k + 3 */
            const unsigned char *e = p + off + (bp_i64)(4 * k0) * step;
            for (; k < k1; k++, wi++, e += 4 * step)
                acc += bp_term(wi, e[0] | (unsigned int)e[step] << 8 |
                                       (unsigned int)e[2 * step] << 16 |
                                       (unsigned int)e[3 * step] << 24);
        } else { /* whole words: wpe per element (k0 a multiple of wpe) */
            const int wpe = es / 4;
            const unsigned char *e = p + off * es + (bp_i64)(k0 / wpe) * step;
BP_UNROLL4
            for (; k < k1; k += wpe, e += step)
                for (int j = 0; j < wpe; j++)
                    acc += bp_term(wi + (k - k0) + j, ((const unsigned int *)e)[j]);
        }
    }
    return acc;
}

/* A thread's share of S over a strided tensor's bytes in row-major order:
 * bp_rows_sum where rows hold whole words (at least 2 dims, the last
 * dim's bytes a multiple of 4), lanes along a row where its words are
 * adjacent, aligned and at least 16, else across rows by the smallest
 * other stride; bp_strided_any otherwise. */
BP_FN bp_u64 bp_strided_sum(const unsigned char *p, const bp_strided &a, bp_u64 tid,
                            bp_u64 nthreads)
{
    const int n = a.ndim, es = a.elsize, L = n - 1;
    const bp_i64 *size = a.d, *str = a.d + n;
    if (n >= 2 && ((bp_u64)size[L] * es) % 4 == 0) {
        bool along = str[L] == 1 && (bp_u64)size[L] * es >= 64 && ((bp_u64)p & 3) == 0;
        int f = -1;
        bp_u64 best = ~0ULL;
        bool small = (bp_u64)size[L] >> 32 == 0;
        for (int d = 0; d < L; d++) {
            if (size[d] == 0)
                return 0;
            small = small && (bp_u64)size[d] >> 32 == 0;
            bp_u64 s = (bp_u64)(str[d] < 0 ? -str[d] : str[d]);
            if (size[d] > 1 && (s * es) % 4)
                along = false; /* a row not 4-byte aligned */
            if (size[d] > 1 && s <= best) {
                best = s;
                f = d;
            }
        }
        if (size[L] == 0)
            return 0;
        if (small && (along || f >= 0))
            return bp_rows_sum(p, a, along, f, tid, nthreads);
    }
    return bp_strided_any(p, a, tid, nthreads);
}

/* A strided tensor of a batch: bp_strided's fields in 32 bits (a small
 * tensor's sizes and strides fit). */
struct bp_sdesc {
    int ndim, elsize;
    int d[16];
};

/* Up to BP_BATCH small tensors, one block each: n, then for each its
 * address, byte count and slot's address; a strided one (at most
 * BP_SBATCH, aligned to its element or 4 bytes) has BP_STRIDED | k for
 * its byte count, its layout in s[k]; a contiguous one is 4-byte
 * aligned. */
#define BP_STRIDED (1ULL << 63)
struct bp_batch {
    bp_u64 n;
    bp_u64 e[3 * BP_BATCH];
    bp_sdesc s[BP_SBATCH];
};

/* A thread's share of S over tensor k of a batch, and its byte count in
 * *nbytes. */
BP_FN bp_u64 bp_batch_sum(const bp_batch &b, bp_u64 k, bp_u64 tid, bp_u64 nthreads,
                          bp_u64 *nbytes)
{
    const bp_u64 *e = b.e + 3 * k;
    const unsigned char *p = (const unsigned char *)e[0];
    if (!(e[1] & BP_STRIDED)) {
        *nbytes = e[1];
        return bp_contig_sum(p, e[1], tid, nthreads);
    }
    const bp_sdesc &s = b.s[e[1] & ~BP_STRIDED];
    bp_strided a;
    a.ndim = s.ndim;
    a.elsize = s.elsize;
    bp_u64 n = (bp_u64)s.elsize;
    for (int d = 0; d < 16; d++)
        a.d[d] = d < 2 * s.ndim ? s.d[d] : 0;
    for (int d = 0; d < s.ndim; d++)
        n *= (bp_u64)s.d[d];
    *nbytes = n;
    return bp_strided_sum(p, a, tid, nthreads);
}

#ifndef BP_LEDGER_HOST
/* The block's sum added to *out: each warp's by shuffles, then the
 * warps' (at most 32) by warp 0, so one atomic per block: a grid of a
 * thousand blocks made eight thousand atomics on the one slot when each
 * warp added its own.  S is a sum modulo 2^64, the same in any order.
 * Every thread of the block calls it (the block size a multiple of 32). */
__device__ __forceinline__ void bp_block_add(bp_u64 acc, bp_u64 *out)
{
    __shared__ bp_u64 part[32];
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    const unsigned warp = threadIdx.x >> 5, nw = blockDim.x >> 5;
    if ((threadIdx.x & 31) == 0)
        part[warp] = acc;
    __syncthreads();
    if (warp == 0) {
        acc = threadIdx.x < nw ? part[threadIdx.x] : 0;
        for (int o = 16; o > 0; o >>= 1)
            acc += __shfl_down_sync(0xffffffffu, acc, o);
        if (threadIdx.x == 0 && acc)
            atomicAdd(out, acc);
    }
}

/* S + nbytes of the ledger hash over nbytes bytes at p (4-byte
 * aligned), added to *out (zero before): one pass, no temporaries; H is
 * fmix64 of it.  (nbytes as a double: what compile_kernel's own launcher
 * passes for a Python number.) */
extern "C" __global__ void bp_ledger_hash(const unsigned char *p, double nbytes_d, bp_u64 *out)
{
    bp_u64 tid = blockIdx.x * (bp_u64)blockDim.x + threadIdx.x, nbytes = (bp_u64)nbytes_d;
    bp_u64 acc = bp_contig_sum(p, nbytes, tid, (bp_u64)gridDim.x * blockDim.x);
    bp_block_add(tid ? acc : acc + nbytes, out);
}

/* S + nbytes of each tensor of a batch added to its slot (zero before);
 * the grid as many blocks as tensors, the block size a multiple of 32.
 * One launch for many small tensors, contiguous or strided: the
 * recorder's C extension gathers them, since a launch costs the host
 * more than such a hash costs the GPU. */
extern "C" __global__ void bp_ledger_hash_batch(bp_batch b)
{
    bp_u64 nbytes, acc = bp_batch_sum(b, blockIdx.x, threadIdx.x, blockDim.x, &nbytes);
    bp_block_add(threadIdx.x ? acc : acc + nbytes, (bp_u64 *)b.e[3 * blockIdx.x + 2]);
}

/* The same over a strided tensor's bytes in row-major order; the block
 * size a multiple of 32.  At most 64 registers, 4 blocks of 256 threads
 * on an SM: an H200 hashed a transposed [2048, 32000] bf16 weight at 2.1
 * TB/s so, 1.3 TB/s with the 88 registers the compiler takes unbounded. */
extern "C" __global__ void __launch_bounds__(256, 4)
bp_ledger_hash_strided(const unsigned char *p, bp_strided a, bp_u64 *out)
{
    bp_u64 tid = blockIdx.x * (bp_u64)blockDim.x + threadIdx.x, nbytes = (bp_u64)a.elsize;
    for (int d = 0; d < a.ndim; d++)
        nbytes *= (bp_u64)a.d[d];
    bp_u64 acc = bp_strided_sum(p, a, tid, (bp_u64)gridDim.x * blockDim.x);
    bp_block_add(tid ? acc : acc + nbytes, out);
}
#endif
""".replace("@BATCH@", str(_BATCH)).replace("@SBATCH@", str(_SBATCH))

# The strided kernel's argument (struct bp_strided): ndim, elsize, then
# the sizes and the strides, packed by one call per launch into a buffer
# that is passed by value.
_STRIDED_MAX_DIMS = 8
_STRIDED_ARG_BYTES = 8 + 8 * 2 * _STRIDED_MAX_DIMS
_STRIDED_PACK = [None] + [struct.Struct("<ii%dq" % (2 * n)).pack_into
                          for n in range(1, _STRIDED_MAX_DIMS + 1)]


def _raw_stream_fn():
    """A function device index -> the current CUDA stream's handle, as
    cheap as this PyTorch allows."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw
    return lambda index: torch.cuda.current_stream(index).cuda_stream


class _Launcher:
    """cuLaunchKernel called through ctypes with argument buffers built
    once: what compile_kernel's callable redoes on every launch (opening
    the driver library, converting each argument, looking up the stream)
    is done once here, and the recorder launches once per tensor.  The
    strided kernel (sfunc, from the same module) is launched only this
    way: compile_kernel's callable passes no structure by value."""

    def __init__(self, kernel):
        import ctypes
        func = getattr(kernel, "func", None)
        if func is None or getattr(torch.version, "hip", None):
            raise RuntimeError("no kernel handle")
        lib = ctypes.CDLL("libcuda.so.1")
        launch = lib.cuLaunchKernel
        u, vp = ctypes.c_uint, ctypes.c_void_p
        launch.argtypes = [vp, u, u, u, u, u, u, u, vp, vp, vp]
        launch.restype = ctypes.c_int
        self.launch, self.func = launch, func
        self.c_launch = ctypes.cast(launch, vp).value  # for the C extension (_make_core)
        self.p, self.n, self.o = vp(), ctypes.c_double(), vp()
        self.argv = (vp * 3)(ctypes.addressof(self.p), ctypes.addressof(self.n),
                             ctypes.addressof(self.o))
        self.sarg = (ctypes.c_char * _STRIDED_ARG_BYTES)()
        self.sargv = (vp * 3)(ctypes.addressof(self.p), ctypes.addressof(self.sarg),
                              ctypes.addressof(self.o))
        self.sfunc = self.bfunc = None
        module = getattr(kernel, "module", None)
        if module is not None:
            getf = lib.cuModuleGetFunction
            getf.argtypes = [ctypes.POINTER(vp), vp, ctypes.c_char_p]
            getf.restype = ctypes.c_int
            f, g = vp(), vp()
            if getf(ctypes.byref(f), module, b"bp_ledger_hash_strided") == 0 and f.value:
                self.sfunc = f
            if getf(ctypes.byref(g), module, b"bp_ledger_hash_batch") == 0 and g.value:
                self.bfunc = g
        # what the extension's batches need of the driver (_core_add_cuda)
        self.c_sync = ctypes.cast(lib.cuStreamSynchronize, vp).value
        self.c_push = ctypes.cast(lib.cuCtxPushCurrent_v2, vp).value
        self.c_pop = ctypes.cast(lib.cuCtxPopCurrent_v2, vp).value
        self.ctx_get = lib.cuCtxGetCurrent
        self.ctx_get.argtypes = [ctypes.POINTER(vp)]
        self.ctx_get.restype = ctypes.c_int
        self.stream = _raw_stream_fn()

    def context(self, dev):
        """The CUDA context of dev (its primary context, PyTorch's), as an
        int; 0 where it cannot be had."""
        import ctypes
        ctx = ctypes.c_void_p()
        with torch.cuda.device(dev):
            ok = self.ctx_get(ctypes.byref(ctx)) == 0
        return (ctx.value or 0) if ok else 0

    def __call__(self, index, blocks, ptr, nbytes, out_ptr):
        self.p.value, self.n.value, self.o.value = ptr, float(nbytes), out_ptr
        rc = self.launch(self.func, blocks, 1, 1, 256, 1, 1, 0, self.stream(index), self.argv,
                         None)
        if rc:
            raise RuntimeError("cuLaunchKernel: CUDA error %d" % rc)

    def strided(self, index, blocks, ptr, es, shape, stride, out_ptr):
        _STRIDED_PACK[len(shape)](self.sarg, 0, len(shape), es, *shape, *stride)
        self.p.value, self.o.value = ptr, out_ptr
        rc = self.launch(self.sfunc, blocks, 1, 1, 256, 1, 1, 0, self.stream(index), self.sargv,
                         None)
        if rc:
            raise RuntimeError("cuLaunchKernel (strided): CUDA error %d" % rc)


class _CudaHasher:
    """S in one kernel launch per tensor (NVRTC through torch.cuda's
    compile_kernel, PyTorch 2.8 and later), into a slot of a device buffer
    that is read back in batches.  A strided tensor is read through its
    sizes and strides where the strided kernel is there (direct launch)
    and passed its self-test; else it is copied contiguous first."""

    SLOTS = 4096

    def __init__(self, dev, setup=None):
        """setup: (kernel, whether the direct launch works, launch_note,
        whether the strided kernel is used) of an earlier hasher on dev
        (compiled once per process), or None to compile.  Each hasher has a
        launcher, with argument buffers, of its own: two recorders in two
        threads do not share them."""
        if setup is not None:
            self.kernel, direct, self.launch_note, strided = setup
            self.launcher = _Launcher(self.kernel) if direct else None
            if self.launcher is not None and not strided:
                self.launcher.sfunc = None
        else:
            compile_kernel = (getattr(torch.cuda, "compile_kernel", None) or
                              getattr(torch.cuda, "_compile_kernel", None))
            if compile_kernel is None:
                raise RuntimeError("this PyTorch has no torch.cuda.compile_kernel")
            with torch.cuda.device(dev):
                self.kernel = compile_kernel(_CUDA_SOURCE, "bp_ledger_hash")
            self.launch_note = None
            try:
                self.launcher = _Launcher(self.kernel)
            except Exception as e:  # compile_kernel's own callable, slower
                self.launcher = None
                self.launch_note = str(e).splitlines()[0][:200]
        self.dev, self.index = dev, dev.index
        self.slots = torch.zeros(self.SLOTS, dtype=torch.int64, device=dev)
        self.base = self.slots.data_ptr()
        self.used = 0
        self.values = None
        self.held = []  # storages of tensors hashed in the extension's batches, until read()
        self.lost = None  # why the extension lost a batch's hashes: read() raises
        props = torch.cuda.get_device_properties(dev)
        self.max_blocks = props.multi_processor_count * 8
        getdev = getattr(torch._C, "_cuda_getDevice", None)
        self.current = getdev if getdev is not None else torch.cuda.current_device

    def strided_ok(self):
        return self.launcher is not None and self.launcher.sfunc is not None

    def launch(self, t, nbytes, ptr=None, shape=None, stride=None, es=0):
        """Starts the hash of t's bytes into a free slot (S + nbytes, made
        H by read()); returns the slot, or None when every slot is taken.
        t: a contiguous tensor of any dtype (shape None), or one read
        through shape and stride, in elements of es bytes, by the strided
        kernel (the caller has checked that it is there, that there are at
        most _STRIDED_MAX_DIMS dims and that ptr is aligned to min(es, 4));
        nbytes: its byte count; ptr: t.data_ptr() where the caller has
        it."""
        slot = self.used
        if slot == self.SLOTS:
            return None
        self.used = slot + 1
        if not nbytes:  # S + nbytes = 0: the slot as it is
            return slot
        if ptr is None:
            ptr = t.data_ptr()
        if shape is None and ptr & 3:  # the kernel reads aligned 32-bit words
            t = t.clone()
            ptr = t.data_ptr()
        blocks = (nbytes // 4 + 255) // 256
        if blocks > self.max_blocks:
            blocks = self.max_blocks
        elif not blocks:
            blocks = 1
        out = self.base + 8 * slot
        launcher = self.launcher
        if self.current() != self.index:
            with torch.cuda.device(self.dev):
                self._launch(t, ptr, nbytes, blocks, slot, shape, stride, es)
        elif shape is not None:
            launcher.strided(self.index, blocks, ptr, es, shape, stride, out)
        elif launcher is not None:
            launcher(self.index, blocks, ptr, nbytes, out)
        else:
            self._launch(t, ptr, nbytes, blocks, slot, shape, stride, es)
        return slot

    def _launch(self, t, ptr, nbytes, blocks, slot, shape, stride, es):
        if shape is not None:
            self.launcher.strided(self.index, blocks, ptr, es, shape, stride, self.base + 8 * slot)
        elif self.launcher is not None:
            self.launcher(self.index, blocks, ptr, nbytes, self.base + 8 * slot)
        else:
            self.kernel(grid=(blocks, 1, 1), block=(256, 1, 1),
                        args=[t, float(nbytes), self.slots[slot:slot + 1]])

    def read(self):
        """The slots' hashes, H (unsigned), read back once per batch in one
        transfer: fmix64 of each slot's S + nbytes taken by the C extension
        on the host (without it: by torch ops on the device, before the
        transfer)."""
        if self.lost:  # slots a kernel never added to: no ledger may show them
            raise RuntimeError(self.lost)
        if self.values is None:
            if self.slots.is_cuda:  # every stream's launches done, not only the current one's
                torch.cuda.synchronize(self.dev)
            if _REC is not None:  # one copy, fmix64 in C
                host = self.slots[:self.used].cpu()
                self.values = _REC.finish(host.data_ptr(), self.used)
            else:
                self.values = [v & _MASK64 for v in
                               _fmix64_(self.slots[:self.used].clone()).tolist()]
        return self.values

    def hash_now(self, t):
        """H of t's bytes, now, by the path the recorder takes (for the
        self-tests): a contiguous tensor by the contiguous kernel, another
        by the strided one where it is used, else copied contiguous first;
        then read()."""
        self.reset()
        es = t.element_size()
        nbytes = t.numel() * es
        if t.is_contiguous():
            slot = self.launch(t, nbytes)
        elif self.strided_ok() and t.dim() <= _STRIDED_MAX_DIMS:
            slot = self.launch(t, nbytes, t.data_ptr(), tuple(t.shape), t.stride(), es)
        else:
            slot = self.launch(t.contiguous(), nbytes)
        h = self.read()[slot]
        self.reset()
        return h

    def reset(self):
        if self.used:
            self.slots[:self.used].zero_()
        self.used = 0
        self.values = None
        self.held = []


def _selftest(hash_fn, dev):
    """Checks a hasher (hash_fn: a uint8 tensor on dev -> H) against the
    pure-Python reference on awkward sizes, odd tails included; returns an
    error string or None."""
    g = torch.Generator().manual_seed(1234)
    # (the last two: a view 4 bytes into its storage, so that a kernel
    # reading 16 bytes at a time where it can takes its other path too)
    for n, off in ((0, 0), (1, 0), (5, 0), (4096 + 3, 0), (4096 + 64 + 7, 0), (4096 + 7, 4)):
        data = _RANDINT(0, 256, (n + off,), generator=g, dtype=torch.uint8)
        t = data.to(dev)[off:]
        data = data[off:]
        got = hash_fn(t)
        want = hash_bytes(data.numpy().tobytes())
        if got != want:
            return "hash of %d bytes on %s: %016x, expected %016x" % (n, dev, got, want)
    return None


def strided_cases(dev):
    """Non-contiguous views on dev that a hash must read through their
    strides, one of each kind the strided kernel treats apart: transposed
    (the smallest stride not in the last dim), sliced with steps, expanded
    (stride 0), permuted in 3 and 8 dims, rows shorter than a warp and
    longer than its chunk, last dims of odd length (a word made of
    elements of two rows), total sizes not a multiple of 4 bytes, at an
    odd element offset; in elements of 1, 2, 4, 8 and 16 bytes.  Also
    views PyTorch calls contiguous whose size-1 dims have strides other
    than the dense ones ([1] with stride [3]): a byte view of them must
    not trip on the stride."""
    g = torch.Generator().manual_seed(2024)
    x = _RANDN(21, 50, generator=g) * 40
    cases = []
    for dt in (torch.float32, torch.bfloat16, torch.float16, torch.int8, torch.uint8):
        y = x.to(dt).to(dev)
        cases += [y.t(), y[1:, ::3], y[::2, 1:-2], y[:, 7:8].expand(21, 37),
                  y.reshape(3, 7, 50).permute(2, 0, 1), y.t()[3:, 1:], y[:5, :7].t(),
                  y[2:9, 1:].t()[1:], y[5, ::3][:1], y[4:5, 1::2][:, :1]]
    y = _RANDN(7, 300, generator=g).to(dev)
    cases += [y[:, ::2], y.t(), y.to(torch.bfloat16)[:, 1:].t(), y.to(torch.int8)[1:, ::5]]
    z = _RANDN(2, 3, 2, 3, 2, 1, 2, 3, generator=g).to(dev)
    cases += [z.permute(7, 6, 5, 4, 3, 2, 1, 0), z.to(torch.float16).transpose(0, 6)]
    cases += [x.to(torch.float64).to(dev)[::3, 1::4].t(),
              torch.complex(x, -x).to(dev)[1:, ::7].t(),
              torch.complex(x, x).to(torch.complex128).to(dev).t()[::5],
              (x > 0).to(dev).t()[1:]]
    return cases


def _host_bytes(t):
    """A tensor's bytes in row-major order, on the host (the reference's
    input)."""
    c = t.detach().to("cpu").contiguous()
    if c.is_complex():
        c = torch.view_as_real(c).contiguous()
    return _byte_view(c).numpy().tobytes() if c.numel() else b""


def _selftest_strided(hash_fn, dev):
    """Checks a hasher of strided views (hash_fn: a tensor on dev -> H)
    against the pure-Python reference on strided_cases; an error string or
    None."""
    for t in strided_cases(dev):
        got = hash_fn(t)
        want = hash_bytes(_host_bytes(t))
        if got != want:
            return "hash of a %s view %s strides %s on %s: %016x, expected %016x" % (
                dtype_name(t.dtype), tuple(t.shape), t.stride(), dev, got, want)
    return None


def _finish(s, nbytes):
    return fmix64((s + nbytes) & _MASK64)


# --- the native helper (python/bitprobe_torch_native.c) ------------------

_NATIVE_VERSION = 1
_NATIVE_STRIDED_MAX = 1 << 20  # bytes: a larger strided tensor is copied, then hashed


def _load_native():
    """The native helper, or None (then torch ops hash host tensors, to
    the same bits): libbitprobe_torch.so beside this file, or the file
    $BITPROBE_TORCH_NATIVE names; BITPROBE_TORCH_NATIVE=0 turns it off.
    A file named there that does not load is an error, not a fallback."""
    import ctypes
    env = os.environ.get("BITPROBE_TORCH_NATIVE")
    if env == "0":
        return None
    path = env or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "libbitprobe_torch.so")
    try:
        lib = ctypes.CDLL(path)
        version = lib.bp_torch_native_version()
    except (OSError, AttributeError) as e:
        if env:
            raise RuntimeError("bitprobe_torch: BITPROBE_TORCH_NATIVE=%s: %s" % (env, e))
        return None
    if version != _NATIVE_VERSION:
        if env:
            raise RuntimeError("bitprobe_torch: %s is version %d of the native helper, "
                               "this recorder needs %d" % (path, version, _NATIVE_VERSION))
        return None
    u64, i64 = ctypes.c_uint64, ctypes.c_int64
    lib.bp_torch_hash.argtypes = [ctypes.c_void_p, u64]
    lib.bp_torch_hash.restype = u64
    lib.bp_torch_hash_strided.argtypes = [ctypes.c_void_p, i64, ctypes.c_int, ctypes.c_void_p]
    lib.bp_torch_hash_strided.restype = u64
    lib.path = path
    return lib


_NATIVE = _load_native()


def _native_hash(t):
    """(H, nbytes) of a host tensor's bytes by the native helper (a complex
    element is its pair of reals; conjugate and negative views resolved by
    the caller)."""
    es = t.element_size()
    n = t.numel() * es
    if not n:
        return _NATIVE.bp_torch_hash(None, 0), 0
    if t.is_contiguous():
        return _NATIVE.bp_torch_hash(t.data_ptr(), n), n
    return _native_strided(t, t.data_ptr(), es, t.shape, t.stride(), n), n


def _native_strided(t, ptr, es, shape, stride, nbytes):
    """H of a non-contiguous host tensor t by the native helper, from what
    the caller has of it: its address, element size, shape, strides and
    byte count."""
    if nbytes > _NATIVE_STRIDED_MAX or len(shape) > 8:
        c = t.contiguous()  # (held while its bytes are read)
        return _NATIVE.bp_torch_hash(c.data_ptr(), nbytes)
    dims = array.array("q", shape)
    dims.extend(stride)
    return _NATIVE.bp_torch_hash_strided(ptr, es, len(shape), dims.buffer_info()[0])


def _native_selftest():
    """The native helper against the pure-Python reference on awkward
    sizes, offsets, strided views and dtypes; an error string or None."""
    g = torch.Generator().manual_seed(4321)
    cases = []
    for n, off in ((0, 0), (1, 0), (3, 0), (5, 1), (4096 + 3, 0), (4096 + 7, 2)):
        cases.append(_RANDINT(0, 256, (n + off,), generator=g, dtype=torch.uint8)[off:])
    x = _RANDN(7, 5, generator=g)
    cases += [x.t(), x[:, 1:4], x[::2], x.to(torch.float16).t(), x.expand(2, 7, 5),
              x.to(torch.float64)[1:, ::3], _RANDN(300, 300, generator=g).t(),
              torch.complex(x, -x), torch.complex(x, x + 1).t()]
    for t in cases:
        c = t.contiguous()
        c = torch.view_as_real(c) if c.is_complex() else c
        want = hash_bytes(_byte_view(c).numpy().tobytes() if c.numel() else b"")
        got, n = _native_hash(t)
        if got != want:
            return "native hash of %s %s strides %s: %016x, expected %016x" % (
                t.dtype, tuple(t.shape), t.stride(), got, want)
    return None


# --- the C extension (python/_bitprobe_rec.c) ----------------------------

_REC_VERSION = 4


def _load_rec():
    """(the extension module _bitprobe_rec, None) or (None, why not): the
    build beside this file for this Python (its EXT_SUFFIX), or the file
    $BITPROBE_TORCH_EXT names; BITPROBE_TORCH_EXT=0 turns it off.  Without
    it the recorder runs the same steps in Python, to the same ledger."""
    env = os.environ.get("BITPROBE_TORCH_EXT")
    if env == "0":
        return None, "turned off (BITPROBE_TORCH_EXT=0)"
    import importlib.machinery
    import importlib.util
    import sysconfig
    path = env or os.path.join(os.path.dirname(os.path.abspath(__file__)),
                               "_bitprobe_rec" + (sysconfig.get_config_var("EXT_SUFFIX") or ".so"))
    if not os.path.exists(path):
        return None, "not built for this Python (no %s)" % path
    try:
        loader = importlib.machinery.ExtensionFileLoader("_bitprobe_rec", path)
        mod = importlib.util.module_from_spec(
            importlib.util.spec_from_file_location("_bitprobe_rec", path, loader=loader))
        loader.exec_module(mod)
        version = mod.VERSION
    except Exception as e:  # built for another Python, or broken
        return None, "%s does not load: %s" % (path, str(e).splitlines()[0][:200])
    if version != _REC_VERSION:
        return None, "%s is version %d, this recorder needs %d" % (path, version, _REC_VERSION)
    return mod, None


_REC, _REC_WHY = _load_rec()
_REC_CHECK = []  # the extension's self-check, once per process: [None] or [why it failed]


def _make_core(rec):
    """The extension's Core for a recorder: its dicts, lock and hasher, and
    what this module holds that an entry or a record is made of."""
    return _REC.Core(rec, {
        "ops": _OPS, "entry": _Entry, "hash": _Hash, "dtinfo": _DTINFO,
        "cuda_names": _CUDA_NAMES, "trefs": _TREFS, "targs": _TARGS_JSON, "tensor": _TENSOR,
        "parameter": _PARAMETER, "strided": _STRIDED, "no_ret": _NO_RET,
        "not_hashed": _not_hashed, "has_neg": _HAS_NEG, "json": _json, "encode": _JSON.encode,
        "meta_json": _meta_json, "meta_cache": _META_JSON,
        "py_dispatch": type(rec).__torch_dispatch__,
        "storage": "untyped_storage" if hasattr(torch.Tensor, "untyped_storage") else "_storage"})


def _handle(v):
    return v.value if hasattr(v, "value") else int(v)


def _core_add_cuda(core, h):
    """Lets core launch h's kernels into h's slots itself (where h launches
    directly: its launcher knows cuLaunchKernel's address)."""
    la = h.launcher
    addr = getattr(la, "c_launch", None) if la is not None else None
    if not addr:
        return False
    # small tensors in batches where the batch kernel is there and the
    # device's context is known
    bfunc = getattr(la, "bfunc", None)
    ctx = la.context(h.dev) if bfunc is not None else 0
    return core.add_cuda(h, addr, _handle(la.func),
                         _handle(la.sfunc) if la.sfunc is not None else 0, h.index, h.base,
                         h.max_blocks, h.SLOTS, h.current,
                         getattr(la, "stream", None) or (lambda index: 0),
                         _handle(bfunc) if bfunc is not None and ctx else 0, _BATCH, ctx,
                         la.c_sync, la.c_push, la.c_pop, _SBATCH)


def _core_program(x):
    """What the extension's self-check records: views, strides, in-place
    writes, aliases, lists of tensors, a scalar result."""
    y = x.t() * 2
    z = y[1:, ::2].contiguous() + 1
    w = x.clone()
    w.add_(1)
    w.data.mul_(w)
    v = torch.cat([x, w, x[:1]]).sum(0)
    c = torch.complex(x, x).conj() * 2
    r = (y.reshape(-1)[:7] + z.sum() + v.max() + c.real.sum() + (x > 0).sum()).float()
    return float(r.sum())


def _core_selftest():
    """The same program recorded by the Python path and by the extension's:
    the same records, or why not."""
    texts = []
    x = _RANDN(6, 5, generator=torch.Generator().manual_seed(77))
    for ext in (False, True):
        rec = Recorder(os.devnull, argv=[], extension=False)
        if ext:
            rec.core = rec.hasher.core = _make_core(rec)
        rec.out = io.BytesIO()
        TorchDispatchMode.__enter__(rec)
        try:
            _core_program(x)
        finally:
            TorchDispatchMode.__exit__(rec, None, None, None)
        rec._flush()
        texts.append(rec.out.getvalue())
        if ext and not rec.core.stats()["ops"]:
            return "it recorded no op"
    if texts[0] != texts[1]:
        a, b = texts[0].splitlines(), texts[1].splitlines()
        k = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
        return "its record %d differs from the Python path's" % k
    return None


def _core_check():
    """None when the extension is there and passed its self-check, else why
    it is not used."""
    if _REC is None:
        return _REC_WHY
    if not _REC_CHECK:
        try:
            err = _core_selftest()
        except Exception as e:
            err = "its self-check raised %s: %s" % (type(e).__name__, str(e)[:200])
        _REC_CHECK.append(err)
    return _REC_CHECK[0]


class _Hash:
    """A tensor's hash: value, or pending until its batch is read back
    (s: a 0-d device tensor holding S; or src: the _CudaHasher and slot
    holding it)."""
    __slots__ = ("s", "nbytes", "value", "src", "slot")

    def __init__(self, s, nbytes, value=None, src=None, slot=None):
        self.s, self.nbytes, self.value, self.src, self.slot = s, nbytes, value, src, slot


# Once per process (a recorder opened per forward compiles and checks
# nothing again): (CUDA device, fast_cuda) -> ((kernel, whether the direct
# launch works, launch_note, whether the strided kernel is used) or None
# for torch ops, notes); (host device, native) whose hash passed its
# self-test.
_CUDA_SETUP = {}
_TORCH_CHECKED = set()
_MODJSON = {}  # module path -> its JSON, for every recorder
# (CUDA device, fast_cuda) -> hashers of closed recorders, their slots read
# and cleared: the next recorder takes one (its slots' allocation and its
# launcher's set-up are a recorder's largest fixed cost on a short forward).
_CUDA_IDLE = {}
_CUDA_IDLE_LOCK = threading.Lock()
_CUDA_IDLE_MAX = 8


class Hasher:
    """Hashes tensors where they live; resolve() reads the pending sums back
    in one transfer per device."""

    def __init__(self, fast_cuda=True, native=True):
        self.torch_ops = _TorchHasher()
        self.native = native and _NATIVE is not None
        self.native_checked = False
        self.cuda = {}       # device -> _CudaHasher, or None when unavailable
        self.kinds = {}      # device name -> (is CUDA, its _CudaHasher or None)
        self.fast_cuda = fast_cuda
        self.pending = []
        self.paths = {}      # device -> which implementation, for the header
        self.checked = set()  # devices whose torch-ops hash passed its self-test
        self.notes = []
        self.core = None     # the recorder's C extension core, told of new CUDA hashers

    def _cuda_for(self, dev):
        if dev not in self.cuda:
            key = (dev, self.fast_cuda)
            setup = _CUDA_SETUP.get(key)
            if setup is not None:  # compiled and checked by an earlier recorder
                h = None
                if setup[0]:
                    with _CUDA_IDLE_LOCK:
                        idle = _CUDA_IDLE.get(key)
                        h = idle.pop() if idle else None
                    if h is None:
                        h = _CudaHasher(dev, setup[0])
                notes = setup[1]
            else:
                h, notes = self._cuda_setup(dev)
                _CUDA_SETUP[key] = ((h.kernel, h.launcher is not None, h.launch_note,
                                     h.strided_ok()) if h else None, notes)
            self.notes.extend(notes)
            self.cuda[dev] = h
            self.paths[str(dev)] = "cuda-kernel" if h else "torch-ops"
        return self.cuda[dev]

    def release(self):
        """Hands this hasher's CUDA hashers to the next recorder (see
        _CUDA_IDLE) where resolve() has read and cleared them (one with
        slots in use stays here); this hasher hashes nothing more."""
        for dev, h in self.cuda.items():
            if h is not None and not h.used and not h.lost:
                with _CUDA_IDLE_LOCK:
                    idle = _CUDA_IDLE.setdefault((dev, self.fast_cuda), [])
                    if len(idle) < _CUDA_IDLE_MAX:
                        idle.append(h)
        self.cuda = {}
        self.kinds = {}

    def _cuda_setup(self, dev):
        """The hasher for dev (None: torch ops), both checked against the
        reference, and notes on what was not used."""
        h, notes = None, []
        if self.fast_cuda:
            try:
                h = _CudaHasher(dev)
                err = self._selftest_cuda(h)
                if err and h.launcher is not None:
                    # the direct launch failed: compile_kernel's callable
                    notes.append("direct launch of the CUDA hash kernel failed (%s): "
                                 "compile_kernel's launcher used" % err)
                    h.launcher = None
                    err = self._selftest_cuda(h)
                if err:
                    notes.append("CUDA hash kernel disagrees (%s): torch ops used" % err)
                    h = None
                elif h.strided_ok():
                    err = self._selftest_cuda(h, _selftest_strided)
                    if err:
                        notes.append("strided CUDA hash kernel disagrees (%s): strided "
                                     "tensors copied contiguous first" % err)
                        h.launcher.sfunc = None
            except Exception as e:  # no NVRTC, old PyTorch: torch ops
                notes.append("CUDA hash kernel unavailable (%s): torch ops used" %
                             str(e).splitlines()[0][:200])
                h = None
        if h is None:
            err = _selftest(self._torch_hash, dev)
            if err:
                raise RuntimeError("bitprobe_torch: " + err)
        elif h.launch_note:
            notes.append("no direct launch of the CUDA hash kernel (%s): compile_kernel's "
                         "launcher used" % h.launch_note)
        return h, notes

    @staticmethod
    def _selftest_cuda(h, test=_selftest):
        try:
            err = test(h.hash_now, h.dev)
        except Exception as e:
            err = str(e).splitlines()[0][:200]
        h.reset()
        return err

    def _torch_hash(self, t):
        """H of t's bytes by torch ops (for the self-tests)."""
        w, nbytes = _words(t)
        return _finish(int(self.torch_ops.partial(w)) & _MASK64, nbytes)

    def _check_host(self, dev):
        """The host hash of dev checked once per process: the native
        helper's on the CPU where it is loaded, else torch ops'."""
        native = self.native and dev.type == "cpu"
        if (dev, native) not in _TORCH_CHECKED:
            err = _native_selftest() if native else _selftest(self._torch_hash, dev)
            if err:
                raise RuntimeError("bitprobe_torch: " + err)
            _TORCH_CHECKED.add((dev, native))
        self.paths[str(dev)] = "native" if native else "torch-ops"
        self.checked.add(dev)

    def submit(self, t):
        """t's hash: a _Hash whose value is there now (host) or after
        resolve() (CUDA)."""
        h = self.hash_of(t)
        return h if isinstance(h, _Hash) else _Hash(None, t.numel() * t.element_size(), h)

    def hash_of(self, t):
        """submit()'s hash, or the value itself where it is there at once
        (the native helper's)."""
        # Conjugate and negative views hold other bytes than they show.
        if t.is_complex() and t.is_conj():
            t = t.resolve_conj()
        if getattr(t, "is_neg", None) and t.is_neg():
            t = t.resolve_neg()
        dev = t.device
        es = t.element_size()
        meta = (None, tuple(t.shape), t.stride(), _DEVICE_NAMES.get(dev) or _device_name(dev),
                t.numel() * es)
        return self.hash_plain(t, None, t.is_contiguous(), meta, es)

    def hash_plain(self, t, ptr, contig, meta, es):
        """hash_of() for a strided tensor that shows its own bytes (no
        conjugate or negative view), whose address (or None), contiguity,
        _Entry meta (shape, strides, device name, byte count) and element
        size the caller has."""
        dn, nbytes = meta[3], meta[4]
        if dn == "cpu" and self.native:
            if not self.native_checked:
                self._check_host(_CPU)
                self.native_checked = True
            # Synchronous on the host: the value now.
            if ptr is None:
                ptr = t.data_ptr()
            if contig:
                return _NATIVE.bp_torch_hash(ptr, nbytes)
            return _native_strided(t, ptr, es, meta[1], meta[2], nbytes)
        kind = self.kinds.get(dn)
        if kind is None:  # the first tensor on this device
            dev = t.device
            cuda = dev.type == "cuda"
            kind = self.kinds[dn] = (cuda, self.cuda[dev] if dev in self.cuda else
                                     self._cuda_for(dev) if cuda else None)
            if self.core is not None and kind[1] is not None:
                _core_add_cuda(self.core, kind[1])
        h = kind[1]
        if h is not None:  # the kernel reads the bytes where they are
            if contig:
                args = (t, nbytes, ptr)
            elif (h.launcher is not None and h.launcher.sfunc is not None and
                  len(meta[1]) <= _STRIDED_MAX_DIMS and
                  not (t.data_ptr() if ptr is None else ptr) & ((es if es < 4 else 4) - 1)):
                args = (t, nbytes, ptr, meta[1], meta[2], es)
            else:
                args = (t.contiguous(), nbytes)
            slot = h.launch(*args)
            if slot is None:  # slots full: read them back first
                self.resolve()
                slot = h.launch(*args)
            hh = _Hash(None, nbytes, None, h, slot)
            self.pending.append(hh)
            return hh
        if kind[0]:
            w, nbytes = _words(t)
            hh = _Hash(self.torch_ops.partial(w), nbytes)
            self.pending.append(hh)
            return hh
        dev = t.device
        if dev not in self.checked:
            self._check_host(dev)
        w, nbytes = _words(t)
        return _Hash(None, nbytes, _finish(int(self.torch_ops.partial(w)) & _MASK64, nbytes))

    def resolve(self):
        if not self.pending:
            return
        if self.core is not None:  # the batches launched, then the same loop in C
            self.core.flush()
            rest = self.core.fill(self.pending)
        else:
            rest = []
            read = {}  # each hasher's slots, read once
            for h in self.pending:
                src = h.src
                if src is not None:
                    vals = read.get(src)
                    if vals is None:
                        vals = read[src] = src.read()
                    h.value = vals[h.slot]
                    h.src = None
                else:
                    rest.append(h)
        by_dev = {}
        for h in rest:
            by_dev.setdefault(h.s.device, []).append(h)
        for dev, hs in by_dev.items():
            sums = torch.stack([h.s for h in hs]).cpu().tolist()
            for h, s in zip(hs, sums):
                h.value = _finish(s & _MASK64, h.nbytes)
                h.s = None
        for h in self.cuda.values():
            if h is not None:
                h.reset()
        self.pending = []


# --- the ledger ---------------------------------------------------------

_JSON = json.JSONEncoder(separators=(",", ":"))


def _json_writer():
    """A function writing the compact JSON _JSON.encode writes, without
    building an encoder on every call (json's C encoder, made once; about
    3 us less per record), or _JSON.encode where the C encoder is missing
    or writes other text."""
    try:
        from json import encoder as je
        enc = je.c_make_encoder(None, _JSON.default, je.encode_basestring_ascii, None, ":", ",",
                                False, False, True)

        def write(o):
            return "".join(enc(o, 0))
        sample = [{"t": 0}, [1, -2, [3]], 1.5, 1e300, -0.0, None, True, False, "a\u00e9\"\n",
                  {"k": {"dtype": "F32"}, "int": "1" * 30}]
        if write(sample) == _JSON.encode(sample):
            return write
    except Exception:
        pass
    return _JSON.encode


_json = _json_writer()
_OP_OVERLOAD = getattr(torch._ops, "OpOverload", None)
_OPS = {}  # id(func) -> _op_info's tuple
_HELD = []  # the funcs of _OPS, held: their ids are not reused


def _op_info(func):
    """(what runs func: its C++ operator where func is a plain OpOverload,
    whose __call__ only calls that (a subclass's may do more);
    "aten::div.Tensor", its JSON, whether it
    writes to an argument, whether its results are uninitialised, whether
    it overwrites its first argument), cached per op."""
    n = _OPS.get(id(func))
    if n is None:
        s = func._schema
        ov = getattr(func, "_overloadname", "") or s.overload_name
        mutates = any(a.alias_info is not None and a.alias_info.is_write for a in s.arguments)
        name = s.name + ("." + ov if ov and ov != "default" else "")
        call = func._op if type(func) is _OP_OVERLOAD and hasattr(func, "_op") else func
        n = (call, name, _JSON.encode(name), mutates, bool(_UNINIT.match(name)),
             bool(_OVERWRITE.match(name)))
        _OPS[id(func)] = n
        _HELD.append(func)
    return n


def _host_copy(t):
    return t.detach().to("cpu", copy=True)


def _float(v):
    if v != v:
        return {"float": "nan"}
    if v in (float("inf"), float("-inf")):
        return {"float": "inf" if v > 0 else "-inf"}
    return v


# meta -> the entry's JSON up to its hash: '{"dtype":...,"nbytes":N,"hash":'
_META_JSON = {}


class _Entry:
    """One tensor operand or result of a recorded op: meta is (dtype name,
    shape, strides or None, device, nbytes), made into JSON only when the
    record is written.  An entry is shared by the records of one tensor
    until it is captured (copy()).  Its JSON is made once, when the
    record is written (the hash is known then), and kept: an entry shared
    by several records is written several times."""
    __slots__ = ("meta", "hash", "why", "cap", "js")

    def __init__(self, meta, h, why=None):
        self.meta, self.hash, self.why, self.cap, self.js = meta, h, why, None, None

    def copy(self):
        return _Entry(self.meta, self.hash, self.why)

    def json(self):
        js = self.js
        if js is not None:
            return js
        meta = self.meta
        head = _META_JSON.get(meta) or _meta_json(meta)
        h = self.hash
        if h is None:
            js = head + 'null,"why":' + _JSON.encode(self.why)
        else:  # the native helper's hash is an int
            js = '%s"%016x"' % (head, h if type(h) is int else h.value)
        if self.cap:
            js += ',"capture":' + _JSON.encode(self.cap)
        js = self.js = js + "}"
        return js


def _meta_json(meta):
    """An entry's JSON up to its hash, '{"dtype":...,"nbytes":N,"hash":'."""
    dt, shape, stride, dev, nb = meta
    d = {"dtype": dt, "shape": list(shape), "stride": None if stride is None else list(stride),
         "device": dev, "nbytes": nb, "hash": None}
    head = _JSON.encode(d)[:-5]  # without 'null}'
    if len(_META_JSON) > 100000:
        _META_JSON.clear()
    _META_JSON[meta] = head
    return head


_DEVICE_NAMES = {}  # torch.device -> its name (str() costs on every tensor)
_TENSOR, _PARAMETER = torch.Tensor, torch.nn.Parameter
_I64_MIN, _I64_MAX = -(1 << 63), (1 << 63) - 1
# An argument's reference to its tensor k, {"t": k}, made once (it is only
# ever encoded), and the arguments' JSON when they are n tensors.
_NTREFS = 64
_TREFS = [{"t": k} for k in range(_NTREFS)]
_TARGS_JSON = [_JSON.encode(_TREFS[:n]) for n in range(_NTREFS)]
_NO_RET = object()  # a record with no "ret"
_STRIDED = torch.strided
_SLOW = _REC.SLOW if _REC is not None else object()  # Core.dispatch: "in Python"


_CUDA_NAMES = {}    # CUDA device index -> its name


def _device_name(dev):
    name = _DEVICE_NAMES[dev] = str(dev)
    if dev.type == "cuda" and dev.index is not None:
        _CUDA_NAMES[dev.index] = name
    return name


class Recorder(TorchDispatchMode):
    """Records every op run inside `with Recorder(path): ...` into the ledger
    at path (written when the block ends).

    capture: a regular expression; ops whose name matches (re.search) have
      their tensor inputs and outputs captured.
    capture_bytes: capture every tensor until this many bytes are held.
    reference: a ledger path; with diverging=N, the first N ops with an
      output found nowhere in it are captured (inputs and outputs).
    fast_cuda: hash CUDA tensors with the compiled kernel (else torch ops).
    native: hash CPU tensors with the native helper where it is loaded
      (else torch ops); the ledger is the same either way.
    capture_seqs: op numbers (seq) whose tensors are captured: the ops an
      earlier recording of the same program named.
    extension: run each op's common path in the C extension (_bitprobe_rec)
      where it loads and passed its self-check (else in Python); the ledger
      is the same either way, its header's "ops_path" says which ran.
    direct: with the extension, PyTorch calls it per op with no Python
      frame between (else through this class's __torch_dispatch__); the
      ledger is the same either way.
    """

    def __init__(self, path, capture=None, capture_bytes=0, reference=None, diverging=8,
                 argv=None, fast_cuda=True, native=True, capture_seqs=None, extension=True,
                 direct=True):
        super().__init__()
        self.path = path
        self.capture_re = re.compile(capture) if capture else None
        self.capture_bytes = int(capture_bytes or 0)
        self.capture_seqs = frozenset(capture_seqs or ())
        self.capturing = bool(self.capture_re is not None or self.capture_seqs or
                              self.capture_bytes > 0)  # whether _wants_capture can say yes
        self.reference = reference
        self.diverging = int(diverging) if reference else 0
        self.ref_keys = _tensor_keys(reference) if reference else None
        self.argv = list(argv) if argv is not None else list(sys.argv)
        self.hasher = Hasher(fast_cuda=fast_cuda, native=native)
        self.records = []      # written when their hashes are known
        self.cache = {}        # id(tensor) -> (weakref, version, data_ptr, epoch, _Entry)
        self.bytes_cache = {}  # where the bytes are -> (weakref, version, epoch, _Hash)
        self.epoch = 0         # ops that wrote to a tensor so far
        self.captures = {}     # name -> CPU tensor
        self.cap_names = {}    # (hash, dtype, shape) -> name
        self.cap_held = 0
        self.cap_limit = self.capture_bytes or (1 << 30)
        self.cap_skipped = 0
        self.diverged = 0
        self.seq = 0
        self.lock = threading.Lock()
        self.stack = []        # module paths
        self.names = {}        # id(module) -> path
        self.modjson = _MODJSON  # module path -> its JSON (shared: a path's JSON is fixed)
        self.hooks = []
        self.out = None
        self.status = "ok"
        self.t0 = None
        # The C extension's core: made last, from the attributes above.
        self.core = None
        self.direct = direct
        why = _core_check() if extension else None
        if why is not None:
            self.hasher.notes.append("the recorder's C extension is not used (%s): ops "
                                     "recorded in Python" % why)
        elif extension:
            self.core = self.hasher.core = _make_core(self)

    # --- module paths
    def _pre_hook(self, mod, args):
        name = self.names.get(id(mod))
        if name is None:
            if self.stack:
                name = self.stack[-1] + "/" + type(mod).__name__
            else:
                name = type(mod).__name__
            self.names[id(mod)] = name
            for sub, m in mod.named_modules():
                if sub and id(m) not in self.names:
                    self.names[id(m)] = sub if not self.stack else name + "." + sub
        self.stack.append(name)

    def _post_hook(self, mod, args, out):
        name = self.names.get(id(mod))
        while self.stack:  # an exception may have skipped inner pops
            if self.stack.pop() == name:
                break

    # --- hashing, with two caches
    def _entry(self, t, why=None, fresh=False):
        """t's entry; why: a reason not to hash it.  fresh: t was just
        written in place; PyTorch bumps its version counter only after the
        op returns, so the caches are bypassed and the result kept for the
        next version.

        An entry holds while no op has written to a tensor since it was
        made (epoch: a write through an alias with a version counter of its
        own, as x.data has, is seen too).  The first cache is keyed on the
        tensor object (id, checked through a weak reference), its version
        counter and address (__torch_dispatch__ looks its inputs up there
        itself, the same way).  The second on where
        its bytes are: a contiguous tensor's hash is its address and byte
        count's, whatever its shape or dtype (views, reshapes, expands of
        it and the tensors an op returns as they came hash the same bytes
        in the same order), a strided one's its address, dtype, shape and
        strides'; an entry there also needs the tensor hashed alive (so
        that the memory is not reused) and its version counter unchanged.

        This runs for every tensor of every op: what it asks of the tensor
        is asked once (each call and attribute costs on every op)."""
        try:
            ver = t._version
        except Exception:  # inference tensors have no version counter
            ver = None
        epoch = self.epoch
        if why is None and not fresh and ver is not None:
            hit = self.cache.get(id(t))
            if (hit is not None and hit[1] == ver and hit[3] == epoch and hit[0]() is t and
                    hit[2] == t.data_ptr()):
                return hit[4]
        dt = t.dtype
        info = _DTINFO.get(dt) or _dtype_info(t)
        if t.is_cuda:  # (two cheap calls: t.device makes an object to hash)
            dn = _CUDA_NAMES.get(t.get_device()) or _device_name(t.device)
        else:
            dn = "cpu" if t.is_cpu else _DEVICE_NAMES.get(t.device) or _device_name(t.device)
        stride = t.stride() if t.layout is _STRIDED else None
        shape = t.shape
        meta = (info[0], shape, stride, dn, t.numel() * info[1])
        key = ptr = e = None
        if why is None and (stride is None or dn == "meta"):
            why = "layout %s on %s" % (t.layout, t.device)
        # An uninitialised result goes into the bytes cache too (hash None):
        # an alias of it (x.data, a view) read before anything writes is
        # uninitialised memory as well, not bytes to hash.
        uninit = why == "uninitialized"
        if (why is None or uninit) and ver is not None and not (_HAS_NEG and t.is_neg()) and not (
                info[2] and t.is_conj()):
            try:
                ptr = t.data_ptr()
                contig = t.is_contiguous()
            except Exception:  # no storage to point at
                ptr = None
            if ptr is not None:
                key = (ptr, meta[4], dn) if contig else (ptr, info[0], shape, stride, dn)
                if not fresh and not uninit:
                    hit = self.bytes_cache.get(key)
                    if hit is not None and hit[2] == epoch:
                        src = hit[0]()
                        if src is not None and src._version == hit[1]:
                            h = hit[3]
                            e = _Entry(meta, h, None if h is not None else "uninitialized")
                            key = None  # (there already)
        if e is None:
            if uninit or why is not None:
                e = _Entry(meta, None, why)
            else:
                try:
                    if key is not None:  # shows its own bytes: what is known goes along
                        e = _Entry(meta, self.hasher.hash_plain(t, ptr, contig, meta, info[1]))
                    else:
                        e = _Entry(meta, self.hasher.hash_of(t))
                except Exception as ex:
                    e = _Entry(meta, None, _not_hashed(ex))
                    key = None
        if ver is not None and why != "overwritten by the op":
            # Into the caches.  No callback on the weak reference (it costs
            # on every tensor): a dead or reused id fails the identity
            # check; the caches are emptied now and then instead.
            cache = self.cache
            if len(cache) > 200000:
                cache.clear()
            try:
                wr = weakref.ref(t)
                if ptr is None:
                    ptr = t.data_ptr()
            except Exception:  # no weak reference, or no storage to point at
                return e
            cache[id(t)] = (wr, ver + fresh, ptr, epoch, e)
            if key is not None:
                bc = self.bytes_cache
                if len(bc) > 200000:
                    bc.clear()
                bc[key] = (wr, ver + fresh, epoch, e.hash)
        return e

    def _encode(self, v, tensors):
        tp = type(v)  # the common exact types first; the rest as below
        if tp is int:
            return v if -(1 << 63) <= v < (1 << 63) else {"int": str(v)}
        if tp is list or tp is tuple:
            return [self._encode(x, tensors) for x in v]
        if tp is float:
            return _float(v)
        if isinstance(v, torch.Tensor):
            tensors.append(v)
            return {"t": len(tensors) - 1}
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return v if -(1 << 63) <= v < (1 << 63) else {"int": str(v)}
        if isinstance(v, float):
            return _float(v)
        if isinstance(v, (list, tuple)):
            return [self._encode(x, tensors) for x in v]
        if isinstance(v, torch.dtype):
            return {"dtype": dtype_name(v)}
        if isinstance(v, torch.device):
            return {"device": str(v)}
        if isinstance(v, complex):
            return {"complex": [_float(v.real), _float(v.imag)]}
        return {"repr": repr(v)[:200]}

    def _flatten_out(self, out):
        if isinstance(out, torch.Tensor):
            return [out]
        if isinstance(out, (list, tuple)):
            r = []
            for o in out:
                r.extend(self._flatten_out(o))
            return r
        return []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        core = self.core
        if core is not None:  # the C extension's path, the same steps as below
            out = core.dispatch(func, args, kwargs)
            if out is not _SLOW:
                return out
        # Runs for every op: no comprehension (each makes a function
        # object), one call per tensor, the common cases inline.
        call, name, name_json, mutates, uninit_op, overwrites = (_OPS.get(id(func)) or
                                                                 _op_info(func))
        with self.lock:
            # The arguments as _encode makes them, the common cases inline:
            # a tensor (its reference object shared), an int in range.
            ins = []
            enc_args = []
            only_tensors = True
            for a in args:
                tp = type(a)
                if tp is _TENSOR or tp is _PARAMETER:
                    k = len(ins)
                    enc_args.append(_TREFS[k] if k < _NTREFS else {"t": k})
                    ins.append(a)
                else:
                    only_tensors = False
                    enc_args.append(a if tp is int and _I64_MIN <= a <= _I64_MAX else
                                    self._encode(a, ins))
            nin_args = len(ins)
            if only_tensors and nin_args < _NTREFS:
                enc_args = _TARGS_JSON[nin_args]  # their JSON already
            entry = self._entry
            if kwargs:
                enc_kwargs = {}
                for k, v in kwargs.items():
                    enc_kwargs[k] = self._encode(v, ins)
            else:
                enc_kwargs = None
            if nin_args == len(ins) and not (overwrites and nin_args):
                # _entry's first cache, inline (inputs are mostly tensors
                # seen before); an inference tensor (no version counter)
                # is never in it
                cache, epoch = self.cache, self.epoch
                in_entries = []
                for t in ins:
                    hit = cache.get(id(t))
                    in_entries.append(hit[4] if (
                        hit is not None and hit[3] == epoch and hit[0]() is t and
                        hit[1] == t._version and hit[2] == t.data_ptr()) else entry(t))
            else:
                in_entries = []
                for k, t in enumerate(ins):
                    why = None
                    if k >= nin_args and "out" in kwargs and _contains(kwargs["out"], t):
                        why = "out= argument"
                    elif k == 0 and nin_args and overwrites:
                        why = "overwritten by the op"
                    in_entries.append(entry(t, why))
            want = self.capturing and self._wants_capture(name)
            # Inputs are copied before the op when it may overwrite them.
            early = want or (mutates and self.diverged < self.diverging)
            pre = self._host_copies(ins, in_entries) if early else None
            if self.core is not None:  # the extension's batches read their bytes first
                self.core.flush()
        out = call(*args, **kwargs) if kwargs else call(*args)
        with self.lock:
            if mutates:
                self.epoch += 1
            uninit = "uninitialized" if uninit_op else None
            if isinstance(out, _TENSOR):
                outs = [out]
                out_entries = [entry(out, uninit, mutates)]
                ret = _NO_RET
            else:
                outs = self._flatten_out(out)
                out_entries = []
                for t in outs:
                    out_entries.append(entry(t, uninit, mutates))
                ret = self._encode(out, []) if not outs and out is not None else _NO_RET
            seq = self.seq
            self.seq = seq + 1
            stack = self.stack
            # What the record's line is made of: made into text by _flush,
            # a batch at a time (the arguments' encoding made now: they
            # may change after the op).
            self.records.append((seq, name_json, self.modjson.get(stack[-1] if stack else "") or
                                 self._module_json(), enc_args, enc_kwargs, ret, in_entries,
                                 out_entries))
            if not want and self.diverged < self.diverging:
                self.hasher.resolve()
                if any(e.hash is not None and _key(e) not in self.ref_keys for e in out_entries):
                    self.diverged += 1
                    want = True
                    if not early:
                        pre = self._host_copies(ins, in_entries)
            if want:
                self._capture(seq, "in", in_entries, pre)
                self._capture(seq, "out", out_entries, outs)
            if len(self.records) >= 1024:
                self._flush()
        return out

    @staticmethod
    def _host_copies(ins, in_entries):
        return [_host_copy(t) if e.hash is not None else None for t, e in zip(ins, in_entries)]

    def _module_json(self):
        m = self.stack[-1] if self.stack else ""
        j = self.modjson.get(m)
        if j is None:
            if len(self.modjson) > 65536:
                self.modjson.clear()
            j = self.modjson[m] = _JSON.encode(m)
        return j

    def _wants_capture(self, name):
        if self.capture_re is not None and self.capture_re.search(name):
            return True
        if self.seq in self.capture_seqs:
            return True
        return self.capture_bytes > 0 and self.cap_held < self.capture_bytes

    def _capture(self, seq, role, entries, tensors):
        if any(e.hash is not None and isinstance(e.hash, _Hash) and e.hash.value is None
               for e in entries):
            self.hasher.resolve()
        for k, t in enumerate(tensors):
            e = entries[k]
            if e.hash is None or t is None:
                continue
            key = _key(e)
            if key in self.cap_names:
                e = entries[k] = e.copy()  # entries are shared between records
                e.cap = self.cap_names[key]
                continue
            nb = e.meta[4]
            if e.meta[0] not in CAPTURABLE or self.cap_held + nb > self.cap_limit:
                self.cap_skipped += 1
                continue
            name = "%d.%s%d" % (seq, role, k)
            self.captures[name] = t.detach().to("cpu", copy=True).contiguous()
            self.cap_names[key] = name
            self.cap_held += nb
            e = entries[k] = e.copy()
            e.cap = name

    # --- writing
    def _flush(self):
        self.hasher.resolve()
        if self.core is not None:  # the same lines, made in C
            self.out.write(self.core.lines(self.records))  # (bytes)
            self.records = []
            return
        lines = []
        add = lines.append
        ej = _Entry.json
        for seq, name_json, mod_json, args, kwargs, ret, ins, outs in self.records:
            # (a record has mostly one or two inputs and one output: the
            # single entry's JSON, as _Entry.json keeps it, without a join)
            if type(args) is not str:
                args = _json(args)
            if kwargs:
                args += ',"kwargs":' + _json(kwargs)
            if ret is not _NO_RET:
                args += ',"ret":' + _JSON.encode(ret)
            if len(ins) == 1:
                e = ins[0]
                ins = e.js or ej(e)
            else:
                ins = ",".join(map(ej, ins))
            if len(outs) == 1:
                e = outs[0]
                outs = e.js or ej(e)
            else:
                outs = ",".join(map(ej, outs))
            add('{"seq":%d,"op":%s,"module":%s,"args":%s,"in":[%s],"out":[%s]}\n' % (
                seq, name_json, mod_json, args, ins, outs))
        self.out.write("".join(lines).encode())
        self.records = []


    def _header(self):
        capturing = (self.capture_re is not None or self.capture_bytes or self.diverging or
                     self.capture_seqs)
        h = {
            "format": LEDGER_FORMAT, "version": LEDGER_VERSION, "hash": HASH_NAME,
            "recorder": "bitprobe_torch " + __version__,
            "torch": torch.__version__, "python": platform.python_version(),
            "platform": _host_facts()["platform"], "argv": self.argv,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "captures": os.path.basename(self.path) + ".safetensors" if capturing else None,
            "settings": _settings(),
            "ops_path": "c-extension" if self.core is not None else "python",
        }
        if _host_facts()["cuda"] is not None:
            h["cuda"] = _host_facts()["cuda"]
        return h

    def _direct(self, on):
        """Lets PyTorch call the C extension's dispatch itself, as this
        recorder's own __torch_dispatch__ (no Python frame, and none of the
        wrapper PyTorch 2 puts around a mode class's method, per op; the
        uncommon ops still go to the class's method); on=False takes it
        away (it holds the recorder: a cycle).  Not where a subclass has
        a __torch_dispatch__ of its own."""
        if not on:
            self.__dict__.pop("__torch_dispatch__", None)
        elif (self.core is not None and self.direct and
              type(self).__torch_dispatch__ is Recorder.__torch_dispatch__):
            self.__dict__["__torch_dispatch__"] = types.MethodType(self.core.torch_dispatch, self)

    def __enter__(self):
        self._direct(True)
        # bytes, the JSON being ASCII: no text layer encoding it again
        self.out = open(self.path + ".tmp", "wb")
        self.out.write(json.dumps(self._header(), separators=(",", ":")).encode() + b"\n")
        self.t0 = time.time()
        mm = torch.nn.modules.module
        self.hooks = [mm.register_module_forward_pre_hook(self._pre_hook),
                      mm.register_module_forward_hook(self._post_hook)]
        return super().__enter__()

    def __exit__(self, etype, evalue, tb):
        r = super().__exit__(etype, evalue, tb)
        for h in self.hooks:
            h.remove()
        self.hooks = []
        if etype is not None and not issubclass(etype, SystemExit):
            self.status = "exception: %s: %s" % (etype.__name__, str(evalue)[:200])
        elif etype is not None and evalue.code not in (None, 0):
            self.status = "exit %s" % (evalue.code,)
        self.close()
        return r

    def close(self):
        """Writes what is pending, the end record and the captures; the
        ledger appears under its name only now, complete."""
        self._direct(False)
        if self.out is None:
            return
        self._flush()
        self.hasher.release()
        notes = list(self.hasher.notes)
        if self.cap_skipped:
            notes.append("%d tensors not captured (dtype not capturable or over the byte "
                         "limit)" % self.cap_skipped)
        end = {"end": {"records": self.seq, "captures": len(self.captures),
                       "status": self.status, "hash_paths": self.hasher.paths,
                       "notes": notes, "seconds": round(time.time() - self.t0, 3)}}
        self.out.write(json.dumps(end, separators=(",", ":")).encode() + b"\n")
        self.out.close()
        self.out = None
        cap_path = self.path + ".safetensors"
        if self.captures:
            write_safetensors(cap_path + ".tmp", self.captures,
                              {"format": "bitprobe-ledger-captures",
                               "ledger": os.path.basename(self.path)})
            _put_in_place(cap_path + ".tmp", cap_path)
        elif os.path.exists(cap_path):
            os.remove(cap_path)  # left by an earlier run: it would not match
        _put_in_place(self.path + ".tmp", self.path)


_HOST = {}


def _host_facts():
    """What each ledger's header says of the host that does not change in a
    process (the platform, the CUDA runtime and devices), asked once: 80 us
    a recorder otherwise."""
    if not _HOST:
        cuda = None
        if torch.cuda.is_available():
            cuda = {"runtime": torch.version.cuda,
                    "devices": [torch.cuda.get_device_name(i)
                                for i in range(torch.cuda.device_count())]}
        _HOST.update(platform=platform.platform(), cuda=cuda)
    return _HOST


def _put_in_place(tmp, path):
    """tmp, complete, renamed to path, whose old file goes first: renamed
    over an old file, a new one is written out to the disk before the
    rename returns on ext4 (auto_da_alloc), 0.4 ms for a ledger of 120 KB,
    against 0.01 ms so.  Readers still see the old ledger or the new one
    whole, never part of one (or, for those microseconds, none)."""
    try:
        os.unlink(path)
    except OSError:  # none there (or not a file: the rename says why)
        pass
    os.replace(tmp, path)


def _not_hashed(ex):
    """An entry's why when its hash raised ex."""
    return "not hashed: %s" % str(ex).splitlines()[0][:120]


def _contains(v, t):
    if v is t:
        return True
    return isinstance(v, (list, tuple)) and any(x is t for x in v)


def _key(e):
    h = e.hash
    return ("%016x" % (h.value if isinstance(h, _Hash) else h),
            e.meta[0], tuple(e.meta[1]))


def _settings():
    s = {"default_dtype": dtype_name(torch.get_default_dtype()),
         "deterministic": torch.are_deterministic_algorithms_enabled(),
         "num_threads": torch.get_num_threads()}
    b = torch.backends
    for key, obj, attr in (("matmul_allow_tf32", getattr(b.cuda, "matmul", None), "allow_tf32"),
                           ("cudnn_allow_tf32", b.cudnn, "allow_tf32"),
                           ("matmul_bf16_reduced", getattr(b.cuda, "matmul", None),
                            "allow_bf16_reduced_precision_reduction"),
                           ("matmul_fp16_reduced", getattr(b.cuda, "matmul", None),
                            "allow_fp16_reduced_precision_reduction")):
        try:
            s[key] = bool(getattr(obj, attr))
        except Exception:
            pass
    return s


def write_safetensors(path, tensors, metadata=None):
    """tensors: name -> contiguous CPU tensor of a safetensors dtype."""
    header, blobs, off = {}, [], 0
    for name, t in tensors.items():
        raw = _byte_view(t).numpy().tobytes() if t.numel() else b""
        header[name] = {"dtype": dtype_name(t.dtype), "shape": list(t.shape),
                        "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    hj = json.dumps(header, separators=(",", ":")).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hj)))
        f.write(hj)
        for b in blobs:
            f.write(b)


def read_ledger(path):
    """(header, records, end) of a ledger: the format is JSON Lines, so
    [json.loads(l) for l in open(path)] reads it too."""
    lines = [json.loads(l) for l in open(path)]
    if not lines or lines[0].get("format") != LEDGER_FORMAT:
        raise ValueError("%s: not a bitprobe ledger" % path)
    end = lines[-1].get("end") if len(lines) > 1 else None
    return lines[0], lines[1:-1] if end else lines[1:], end


def _tensor_keys(path):
    _, recs, _ = read_ledger(path)
    keys = set()
    for r in recs:
        for e in r.get("in", []) + r.get("out", []):
            if e.get("hash"):
                keys.add((e["hash"], e["dtype"], tuple(e["shape"])))
    return keys


def record(path, **kw):
    """A context manager recording the ops run inside it (see Recorder)."""
    return Recorder(path, **kw)


def _size(s):
    m = re.fullmatch(r"(\d+)([KMG]i?B?)?", s.strip(), re.I)
    if not m:
        raise argparse.ArgumentTypeError("not a byte count: %r (e.g. 512M, 2G)" % s)
    mult = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[(m.group(2) or "")[:1].upper()]
    return int(m.group(1)) * mult


# The init audit's commands (python/bitprobe_init): name -> module.
_INIT_COMMANDS = {"init-audit": "audit", "init-build": "build", "init-effect": "effect"}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in _INIT_COMMANDS:
        import importlib
        mod = importlib.import_module("bitprobe_init." + _INIT_COMMANDS[argv[0]])
        return mod.main(argv[1:])
    p = argparse.ArgumentParser(
        prog="python -m bitprobe_torch",
        description="Record every ATen op a PyTorch script runs into a bitprobe ledger.")
    sub = p.add_subparsers(dest="cmd")
    r = sub.add_parser("record", help="run a script under the recorder",
                       description="Run SCRIPT with ARGS under the recorder; write the ledger "
                                   "to -o (and captured tensors to LEDGER.safetensors).")
    r.add_argument("-o", "--output", required=True, metavar="LEDGER")
    r.add_argument("--capture", metavar="REGEX",
                   help="capture the tensors of ops whose name matches (e.g. 'aten::(div|pow)')")
    r.add_argument("--capture-bytes", type=_size, default=0, metavar="N",
                   help="capture every tensor until N bytes are held (e.g. 256M)")
    r.add_argument("--reference", metavar="LEDGER",
                   help="a ledger of another run: capture the first --diverging ops whose "
                        "outputs it does not hold")
    r.add_argument("--diverging", type=int, default=8, metavar="N",
                   help="with --reference: how many diverging ops to capture (default 8)")
    r.add_argument("--no-cuda-kernel", action="store_true",
                   help="hash CUDA tensors with torch ops, not the compiled kernel")
    r.add_argument("--no-native", action="store_true",
                   help="hash CPU tensors with torch ops, not the native helper")
    r.add_argument("--no-extension", action="store_true",
                   help="record each op in Python, not in the C extension (_bitprobe_rec)")
    r.add_argument("script")
    r.add_argument("args", nargs=argparse.REMAINDER)
    h = sub.add_parser("hash", help="print the ledger hash of a file's bytes")
    h.add_argument("file")
    a = p.parse_args(argv)
    if a.cmd == "hash":
        with open(a.file, "rb") as f:
            print("%016x" % hash_bytes(f.read()))
        return 0
    if a.cmd != "record":
        p.print_help()
        return 2
    if a.reference and not os.path.exists(a.reference):
        p.error("--reference %s: no such file" % a.reference)
    sys.argv = [a.script] + a.args
    sys.path.insert(0, os.path.dirname(os.path.abspath(a.script)))
    code = 0
    rec = Recorder(a.output, capture=a.capture, capture_bytes=a.capture_bytes,
                   reference=a.reference, diverging=a.diverging,
                   argv=[a.script] + a.args, fast_cuda=not a.no_cuda_kernel,
                   native=not a.no_native, extension=not a.no_extension)
    try:
        with rec:
            runpy.run_path(a.script, run_name="__main__")
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    print("bitprobe_torch: %d ops recorded to %s%s" % (
        rec.seq, a.output, ", %d tensors captured" % len(rec.captures) if rec.captures else ""),
        file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
