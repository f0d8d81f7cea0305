"""The recorder's CUDA hash kernels (bitprobe_torch._CUDA_SOURCE) checked
where there is no GPU: the same source compiled for the host
(BP_LEDGER_HOST: every thread's share of S is a function of its index and
the thread count), each thread run in turn for several grid sizes, the sum
finished as the recorder does and compared with the plain-Python reference
(bitprobe_torch.hash_bytes) over the bytes in row-major order.  Cases: the
contiguous kernel on awkward sizes and alignments; the strided kernel on
bitprobe_torch.strided_cases (what its run-time self-test uses) and on
layouts PyTorch cannot make but the kernel takes (negative strides,
overlapping elements, empty and 8-dim tensors, rows longer than a warp's
chunk in every element size).  Where nvcc is found ($NVCC, PATH,
/usr/local/cuda/bin), the source is also compiled for sm_90 with warnings
as errors.  Exit 0 when all agree, 1 on a difference, 77 without a C++
compiler.

    python3 cuda_emul.py"""
import ctypes
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import torch

import bitprobe_torch as bt

# What the host build lacks of CUDA's: the vector type the contiguous kernel
# loads 16 bytes into.  The kernels themselves (__global__, warp shuffles,
# atomics) are left out by BP_LEDGER_HOST.
SHIM = r"""
#define BP_LEDGER_HOST
#define BP_FN static inline
struct uint4 { unsigned int x, y, z, w; };
"""

HARNESS = r"""
extern "C" bp_u64 emul_contig(const unsigned char *p, bp_u64 nbytes, bp_u64 nthreads)
{
    bp_u64 s = 0;
    for (bp_u64 tid = 0; tid < nthreads; tid++)
        s += bp_contig_sum(p, nbytes, tid, nthreads);
    return s;
}

extern "C" bp_u64 emul_strided(const unsigned char *p, const bp_strided *a, bp_u64 nthreads)
{
    bp_u64 s = 0;
    for (bp_u64 tid = 0; tid < nthreads; tid++)
        s += bp_strided_sum(p, *a, tid, nthreads);
    return s;
}

/* The batch kernel: each block (gx of them, bx threads) a tensor. */
static int emul_batch(unsigned gx, unsigned bx, void **params)
{
    const bp_batch *b = (const bp_batch *)params[0];
    if (gx != b->n || gx > BP_BATCH)
        return 1; /* CUDA_ERROR_INVALID_VALUE */
    for (unsigned k = 0; k < gx; k++) {
        const bp_u64 *e = b->e + 3 * k;
        if ((e[1] & BP_STRIDED) && (e[1] & ~BP_STRIDED) >= BP_SBATCH)
            return 1;
        bp_u64 s = 0, nbytes = 0;
        for (bp_u64 tid = 0; tid < bx; tid++)
            s += bp_batch_sum(*b, k, tid, bx, &nbytes);
        *(bp_u64 *)e[2] += s + nbytes;
    }
    return 0;
}

/* cuLaunchKernel as the recorder's C extension calls it, run on the host:
 * "function" 1 is the contiguous kernel, 2 the strided one, 3 the batch
 * kernel (each block a tensor); each adds its grid's sum and nbytes
 * (thread 0's share) into the slot, as the kernels' wrappers do.  Any
 * other function: CUDA_ERROR_INVALID_HANDLE (400). */
extern "C" int emul_launch(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
                           unsigned by, unsigned bz, unsigned shmem, void *stream,
                           void **params, void **extra)
{
    (void)gy; (void)gz; (void)by; (void)bz; (void)shmem; (void)stream; (void)extra;
    if ((bp_u64)f == 3)
        return emul_batch(gx, bx, params);
    if ((bp_u64)f != 1 && (bp_u64)f != 2) /* before reading params: a refused */
        return 400;                        /* launch's may hold fewer than 3 */
    const unsigned char *p = *(const unsigned char **)params[0];
    bp_u64 *out = *(bp_u64 **)params[2], nt = (bp_u64)gx * bx, n;
    if ((bp_u64)f == 1) {
        n = (bp_u64)*(const double *)params[1];
        *out += emul_contig(p, n, nt) + n;
        return 0;
    }
    const bp_strided *a = (const bp_strided *)params[1];
    n = (bp_u64)a->elsize;
    for (int d = 0; d < a->ndim; d++)
        n *= (bp_u64)a->d[d];
    *out += emul_strided(p, a, nt) + n;
    return 0;
}

/* cuStreamSynchronize, cuCtxPushCurrent, cuCtxPopCurrent: nothing to do on
 * the host (each "launch" above is done when it returns). */
extern "C" int emul_sync(void *stream) { (void)stream; return 0; }
extern "C" int emul_push(void *ctx) { (void)ctx; return 0; }
extern "C" int emul_pop(void **ctx) { *ctx = 0; return 0; }
"""

# Grid sizes (threads): one warp, two, odd block counts, a wide grid.
THREADS = (32, 64, 96, 256, 1024 + 32)


def compile_host(tmp):
    cxx = os.environ.get("CXX") or shutil.which("c++") or shutil.which("g++") or \
        shutil.which("clang++")
    if not cxx:
        return None, "no C++ compiler (CXX, c++, g++, clang++)"
    src = os.path.join(tmp, "emul.cpp")
    so = os.path.join(tmp, "emul.so")
    with open(src, "w") as f:
        f.write(SHIM + bt._CUDA_SOURCE + HARNESS)
    r = subprocess.run([cxx, "-std=c++11", "-O1", "-fPIC", "-shared", "-fno-strict-aliasing",
                        "-Wall", "-Wextra", "-Werror", "-o", so, src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode:
        return None, "FAIL: the kernels' source does not compile for the host:\n" + r.stdout
    lib = ctypes.CDLL(so)
    u64, vp = ctypes.c_uint64, ctypes.c_void_p
    lib.emul_contig.argtypes = [vp, u64, u64]
    lib.emul_contig.restype = u64
    lib.emul_strided.argtypes = [vp, vp, u64]
    lib.emul_strided.restype = u64
    return lib, None


def compile_nvcc(tmp):
    """None when compiled, else why not (a string starting FAIL when nvcc
    rejects the source)."""
    nvcc = os.environ.get("NVCC") or shutil.which("nvcc") or (
        "/usr/local/cuda/bin/nvcc" if os.path.exists("/usr/local/cuda/bin/nvcc") else None)
    if not nvcc:
        return "not checked: no nvcc"
    src = os.path.join(tmp, "ledger_hash.cu")
    with open(src, "w") as f:
        f.write(bt._CUDA_SOURCE)
    r = subprocess.run([nvcc, "-arch=sm_90", "-c", "-Werror", "all-warnings", "-o",
                        os.path.join(tmp, "ledger_hash.o"), src],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    if r.returncode:
        return "FAIL: nvcc -arch=sm_90 rejects the kernels' source:\n" + r.stdout
    return None


def row_major_bytes(buf, base, es, shape, strides):
    """The bytes of the elements at base + (sum of index * stride) * es
    within buf, in row-major order of shape: the reference's input."""
    out = bytearray()
    idx = [0] * len(shape)
    n = 1
    for s in shape:
        n *= s
    for _ in range(n):
        off = base + sum(i * s for i, s in zip(idx, strides)) * es
        out += buf[off:off + es]
        for d in range(len(shape) - 1, -1, -1):
            idx[d] += 1
            if idx[d] < shape[d]:
                break
            idx[d] = 0
    return bytes(out)


def strided_arg(shape, strides, es):
    n = len(shape)
    b = ctypes.create_string_buffer(bt._STRIDED_ARG_BYTES)
    bt._STRIDED_PACK[n](b, 0, n, es, *shape, *strides)
    return b


def main():
    tmp = tempfile.mkdtemp(prefix="cuda_emul.")
    try:
        lib, why = compile_host(tmp)
        if lib is None:
            print(why if why.startswith("FAIL") else "SKIP: " + why)
            return 1 if why.startswith("FAIL") else 77
        bad = checked = 0

        def check(what, nbytes, s, want):
            nonlocal bad, checked
            checked += 1
            got = bt._finish(s & bt._MASK64, nbytes)
            if got != want:
                bad += 1
                if bad <= 10:
                    print("MISMATCH %s: %016x, reference %016x" % (what, got, want))

        # the contiguous kernel: tails of 1 to 3 bytes, 16-byte aligned or
        # not (its two loops), more words than threads and fewer
        g = torch.Generator().manual_seed(99)
        raw = torch.randint(0, 256, (40000 + 16,), generator=g, dtype=torch.uint8)
        rawb = raw.numpy().tobytes()
        for n in (0, 1, 3, 4, 5, 15, 16, 17, 64, 1000, 4099, 40000):
            for off in (0, 4, 8, 12):
                ref = bt.hash_bytes(rawb[off:off + n])
                for nt in THREADS:
                    check("contiguous %d bytes at +%d, %d threads" % (n, off, nt), n,
                          lib.emul_contig(raw.data_ptr() + off, n, nt), ref)

        # the strided kernel on what the recorder's self-test uses
        for t in bt.strided_cases("cpu"):
            es = t.element_size()
            ref = bt.hash_bytes(bt._host_bytes(t))
            arg = strided_arg(tuple(t.shape), t.stride(), es)
            for nt in THREADS:
                check("%s %s strides %s, %d threads" % (bt.dtype_name(t.dtype), tuple(t.shape),
                                                         t.stride(), nt),
                      t.numel() * es, lib.emul_strided(t.data_ptr(), arg, nt), ref)

        # layouts beyond PyTorch's views: (shape, strides in elements, first
        # element's index into the buffer) per element size
        store = torch.randint(0, 256, (1 << 16,), generator=g, dtype=torch.uint8)
        buf = store.numpy().tobytes()
        layouts = [((5, 7), (-7, 1), 28), ((5, 7), (7, -1), 6), ((4, 3), (-1, -4), 11),
                   ((9, 33), (-33, 1), 8 * 33),         # a warp's row read backwards
                   ((3, 300), (300, -1), 299),          # rows past a chunk, backwards
                   ((600,), (-1,), 599), ((600,), (3,), 0),
                   ((6, 5), (1, 1), 0), ((4, 4, 3), (2, 1, 1), 0),  # overlapping
                   ((3, 0, 4), (4, 4, 1), 0), ((0,), (1,), 0), ((1,), (5,), 3),
                   ((1, 1, 7), (0, 0, 0), 2), ((33, 1), (1, 0), 0), ((2, 1, 31), (31, 99, 1), 0),
                   ((2, 2, 2, 2, 2, 2, 2, 2), (1, 2, 4, 8, 16, 32, 64, 128), 0),
                   ((2, 2, 2, 2, 2, 2, 2, 3), (192, 96, 48, 24, 12, 6, 3, -1), 2),
                   ((3, 5, 7), (1, 105, 15), 0), ((7, 5, 3), (1, 7, 35), 0),
                   ((31, 3), (1, 31), 0), ((3, 31), (1, 3), 0), ((2, 513), (513, 1), 0),
                   ((1000, 3), (3, 1), 0), ((3, 1000), (1, 3), 0),
                   ((2, 255), (255, 1), 0), ((511, 2), (1, 511), 0),  # a chunk less 1
                   # rows of whole words (bp_rows_sum): across rows, a lane's
                   # words in several items, a batch dim, 32 rows and more
                   ((40, 520), (1, 40), 0), ((6, 7, 40), (280, 1, 7), 3),
                   ((45, 8), (1, 45), 0), ((3, 2, 36), (1, 3, 6), 0),
                   # along rows: longer than a warp's item, several rows an
                   # item, a row start not 4-byte aligned (across then)
                   ((3, 1100), (1200, 1), 0), ((50, 3, 24), (100, 25, 1), 0),
                   ((33, 70), (70, 1), 1), ((2, 5, 64), (0, 64, 1), 0)]
        for es in (1, 2, 4, 8, 16):
            for shape, strides, first in layouts:
                lo = first + sum(min(0, (s - 1) * st) for s, st in zip(shape, strides))
                hi = first + sum(max(0, (s - 1) * st) for s, st in zip(shape, strides))
                if min(shape) > 0 and (lo < 0 or (hi + 1) * es > len(buf)):
                    continue
                ref = bt.hash_bytes(row_major_bytes(buf, first * es, es, shape, strides))
                arg = strided_arg(shape, strides, es)
                n = es
                for s in shape:
                    n *= s
                for nt in THREADS:
                    check("%d-byte elements %s strides %s from %d, %d threads" % (
                        es, shape, strides, first, nt), n,
                        lib.emul_strided(store.data_ptr() + first * es, arg, nt), ref)
        print("host emulation of the CUDA hash kernels: %d sums checked, %d differ" % (
            checked, bad))
        why = compile_nvcc(tmp)
        if why is None:
            print("nvcc -arch=sm_90: the kernels' source compiles without warnings")
        else:
            print(why)
            if why.startswith("FAIL"):
                bad += 1
        return 1 if bad or not checked else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
