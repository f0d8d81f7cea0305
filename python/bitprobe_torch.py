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
host but one 8-byte sum per tensor, in batches).  Inputs are hashed before
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

Works with PyTorch 1.13 and 2.x.  Standard library and torch only.
"""

import argparse
import array
import json
import os
import platform
import re
import runpy
import struct
import sys
import threading
import time
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


def _words(t):
    """A 1-D int32 view of t's bytes in row-major order, zero-padded to a
    multiple of 4 bytes."""
    t = t.detach()
    if t.dtype.is_complex:
        t = torch.view_as_real(t)
    if not t.is_contiguous():
        t = t.contiguous()
    flat = t.reshape(-1)
    nbytes = flat.numel() * flat.element_size()
    if nbytes == 0:
        return flat.new_empty(0, dtype=torch.int32), 0
    try:
        b = flat.view(torch.uint8)
    except RuntimeError:
        b = flat.clone().view(torch.uint8)
    if nbytes % 4:
        b = torch.cat([b, b.new_zeros(4 - nbytes % 4)])
    try:
        w = b.view(torch.int32)
    except RuntimeError:  # storage offset not a multiple of 4
        w = b.clone().view(torch.int32)
    return w, nbytes


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
            x.bitwise_xor_((x >> 33).bitwise_and_(_LOW31))
            x.mul_(_signed64(_C1))
            x.bitwise_xor_((x >> 33).bitwise_and_(_LOW31))
            x.mul_(_signed64(_C2))
            x.bitwise_xor_((x >> 33).bitwise_and_(_LOW31))
            s = x.sum()
            total = s if total is None else total + s
        if total is None:
            total = torch.zeros((), dtype=torch.int64, device=w.device)
        return total


_CUDA_SOURCE = r"""
__device__ __forceinline__ unsigned long long bp_fmix64(unsigned long long x)
{
    x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33; return x;
}
/* S of the ledger hash over nbytes bytes at p (4-byte aligned), added to
 * *out: one pass, no temporaries. */
extern "C" __global__ void bp_ledger_hash(const unsigned char *p, double nbytes_d,
                                          unsigned long long *out)
{
    unsigned long long nbytes = (unsigned long long)nbytes_d;
    unsigned long long full = nbytes / 4, nw = (nbytes + 3) / 4;
    unsigned long long tid = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned int *w = (const unsigned int *)p;
    unsigned long long acc = 0, start = 0;
    if (((unsigned long long)p & 15) == 0) { /* 16-byte loads: the sum's order is free */
        const uint4 *q = (const uint4 *)p;
        unsigned long long nq = full / 4;
        for (unsigned long long i = tid; i < nq; i += stride) {
            uint4 v = q[i];
            unsigned long long b = 4 * i;
            acc += bp_fmix64((b << 32) + (unsigned long long)(long long)(int)v.x);
            acc += bp_fmix64(((b + 1) << 32) + (unsigned long long)(long long)(int)v.y);
            acc += bp_fmix64(((b + 2) << 32) + (unsigned long long)(long long)(int)v.z);
            acc += bp_fmix64(((b + 3) << 32) + (unsigned long long)(long long)(int)v.w);
        }
        start = 4 * nq;
    }
    for (unsigned long long i = start + tid; i < nw; i += stride) {
        unsigned int v = 0;
        if (i < full)
            v = w[i];
        else
            for (unsigned long long k = 4 * i; k < nbytes; k++)
                v |= (unsigned int)p[k] << (8 * (k - 4 * i));
        acc += bp_fmix64((i << 32) + (unsigned long long)(long long)(int)v);
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_down_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0 && acc)
        atomicAdd(out, acc);
}
"""


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
    is done once here, and the recorder launches once per tensor."""

    def __init__(self, kernel):
        import ctypes
        func = getattr(kernel, "func", None)
        if func is None or getattr(torch.version, "hip", None):
            raise RuntimeError("no kernel handle")
        lib = ctypes.CDLL("libcuda.so.1")
        launch = lib.cuLaunchKernel
        u = ctypes.c_uint
        launch.argtypes = [ctypes.c_void_p, u, u, u, u, u, u, u, ctypes.c_void_p,
                           ctypes.c_void_p, ctypes.c_void_p]
        launch.restype = ctypes.c_int
        self.launch, self.func = launch, func
        self.p, self.n, self.o = ctypes.c_void_p(), ctypes.c_double(), ctypes.c_void_p()
        self.argv = (ctypes.c_void_p * 3)(ctypes.addressof(self.p), ctypes.addressof(self.n),
                                          ctypes.addressof(self.o))
        self.stream = _raw_stream_fn()

    def __call__(self, index, blocks, ptr, nbytes, out_ptr):
        self.p.value, self.n.value, self.o.value = ptr, float(nbytes), out_ptr
        rc = self.launch(self.func, blocks, 1, 1, 256, 1, 1, 0, self.stream(index), self.argv,
                         None)
        if rc:
            raise RuntimeError("cuLaunchKernel: CUDA error %d" % rc)


class _CudaHasher:
    """S in one kernel launch per tensor (NVRTC through torch.cuda's
    compile_kernel, PyTorch 2.8 and later), into a slot of a device buffer
    that is read back in batches."""

    SLOTS = 4096

    def __init__(self, dev, setup=None):
        """setup: (kernel, whether the direct launch works, launch_note) of
        an earlier hasher on dev (compiled once per process), or None to
        compile.  Each hasher has a launcher, with argument buffers, of its
        own: two recorders in two threads do not share them."""
        if setup is not None:
            self.kernel, direct, self.launch_note = setup
            self.launcher = _Launcher(self.kernel) if direct else None
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
        props = torch.cuda.get_device_properties(dev)
        self.max_blocks = props.multi_processor_count * 8
        getdev = getattr(torch._C, "_cuda_getDevice", None)
        self.current = getdev if getdev is not None else torch.cuda.current_device

    def launch(self, t, nbytes, ptr=None):
        """Starts S of t's bytes (a contiguous tensor of any dtype; nbytes:
        its byte count; ptr: t.data_ptr() where the caller has it) into a
        free slot; returns the slot, or None when every slot is taken."""
        if self.used == self.SLOTS:
            return None
        slot = self.used
        self.used += 1
        if nbytes:
            if ptr is None:
                ptr = t.data_ptr()
            if ptr % 4:  # the kernel reads aligned 32-bit words
                t = t.clone()
                ptr = t.data_ptr()
            blocks = max(1, min(self.max_blocks, (nbytes // 4 + 255) // 256))
            if self.current() != self.index:
                with torch.cuda.device(self.dev):
                    self._launch(t, ptr, nbytes, blocks, slot)
            else:
                self._launch(t, ptr, nbytes, blocks, slot)
        return slot

    def _launch(self, t, ptr, nbytes, blocks, slot):
        if self.launcher is not None:
            self.launcher(self.index, blocks, ptr, nbytes, self.base + 8 * slot)
        else:
            self.kernel(grid=(blocks, 1, 1), block=(256, 1, 1),
                        args=[t, float(nbytes), self.slots[slot:slot + 1]])

    def read(self):
        """The slots' sums (read back once per batch)."""
        if self.values is None:
            self.values = self.slots[:self.used].tolist()
        return self.values

    def partial(self, t):
        """S of t's bytes, now (for the self-test)."""
        t = t.contiguous()
        slot = self.launch(t, t.numel() * t.element_size())
        return int(self.slots[slot].item())

    def reset(self):
        if self.used:
            self.slots[:self.used].zero_()
        self.used = 0
        self.values = None


def _selftest(partial_fn, dev):
    """Checks a hasher (partial_fn: a uint8 tensor on dev -> S, an int or a
    0-d tensor) against the pure-Python reference on awkward sizes, odd
    tails included; returns an error string or None."""
    g = torch.Generator().manual_seed(1234)
    # (the last two: a view 4 bytes into its storage, so that a kernel
    # reading 16 bytes at a time where it can takes its other path too)
    for n, off in ((0, 0), (1, 0), (5, 0), (4096 + 3, 0), (4096 + 64 + 7, 0), (4096 + 7, 4)):
        data = _RANDINT(0, 256, (n + off,), generator=g, dtype=torch.uint8)
        t = data.to(dev)[off:]
        data = data[off:]
        got = _finish(int(partial_fn(t)) & _MASK64, n)
        want = hash_bytes(data.numpy().tobytes())
        if got != want:
            return "hash of %d bytes on %s: %016x, expected %016x" % (n, dev, got, want)
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
    if n > _NATIVE_STRIDED_MAX or t.dim() > 8:
        c = t.contiguous()
        return _NATIVE.bp_torch_hash(c.data_ptr(), n), n
    dims = array.array("q", t.shape)
    dims.extend(t.stride())
    return _NATIVE.bp_torch_hash_strided(t.data_ptr(), es, t.dim(), dims.buffer_info()[0]), n


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
        want = hash_bytes(c.reshape(-1).view(torch.uint8).numpy().tobytes() if c.numel() else b"")
        got, n = _native_hash(t)
        if got != want:
            return "native hash of %s %s strides %s: %016x, expected %016x" % (
                t.dtype, tuple(t.shape), t.stride(), got, want)
    return None


class _Hash:
    """A tensor's hash: value, or pending until its batch is read back
    (s: a 0-d device tensor holding S; or src: the _CudaHasher and slot
    holding it)."""
    __slots__ = ("s", "nbytes", "value", "src", "slot")

    def __init__(self, s, nbytes, value=None, src=None, slot=None):
        self.s, self.nbytes, self.value, self.src, self.slot = s, nbytes, value, src, slot


# Once per process (a recorder opened per forward compiles and checks
# nothing again): (CUDA device, fast_cuda) -> ((kernel, whether the direct
# launch works, launch_note) or None for torch ops, notes); (host device,
# native) whose hash passed its self-test.
_CUDA_SETUP = {}
_TORCH_CHECKED = set()


class Hasher:
    """Hashes tensors where they live; resolve() reads the pending sums back
    in one transfer per device."""

    def __init__(self, fast_cuda=True, native=True):
        self.torch_ops = _TorchHasher()
        self.native = native and _NATIVE is not None
        self.native_checked = False
        self.cuda = {}       # device -> _CudaHasher, or None when unavailable
        self.fast_cuda = fast_cuda
        self.pending = []
        self.paths = {}      # device -> which implementation, for the header
        self.checked = set()  # devices whose torch-ops hash passed its self-test
        self.notes = []

    def _cuda_for(self, dev):
        if dev not in self.cuda:
            key = (dev, self.fast_cuda)
            setup = _CUDA_SETUP.get(key)
            if setup is not None:  # compiled and checked by an earlier recorder
                h = _CudaHasher(dev, setup[0]) if setup[0] else None
                notes = setup[1]
            else:
                h, notes = self._cuda_setup(dev)
                _CUDA_SETUP[key] = ((h.kernel, h.launcher is not None, h.launch_note) if h
                                    else None, notes)
            self.notes.extend(notes)
            self.cuda[dev] = h
            self.paths[str(dev)] = "cuda-kernel" if h else "torch-ops"
        return self.cuda[dev]

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
            except Exception as e:  # no NVRTC, old PyTorch: torch ops
                notes.append("CUDA hash kernel unavailable (%s): torch ops used" %
                             str(e).splitlines()[0][:200])
                h = None
        if h is None:
            err = _selftest(self._torch_partial, dev)
            if err:
                raise RuntimeError("bitprobe_torch: " + err)
        elif h.launch_note:
            notes.append("no direct launch of the CUDA hash kernel (%s): compile_kernel's "
                         "launcher used" % h.launch_note)
        return h, notes

    @staticmethod
    def _selftest_cuda(h):
        try:
            err = _selftest(h.partial, h.dev)
        except Exception as e:
            err = str(e).splitlines()[0][:200]
        h.reset()
        return err

    def _torch_partial(self, t):
        return self.torch_ops.partial(_words(t)[0])

    def _check_host(self, dev):
        """The host hash of dev checked once per process: the native
        helper's on the CPU where it is loaded, else torch ops'."""
        native = self.native and dev.type == "cpu"
        if (dev, native) not in _TORCH_CHECKED:
            err = _native_selftest() if native else _selftest(self._torch_partial, dev)
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
        return self.hash_plain(t, t.device.type, None, t.is_contiguous(),
                               t.numel() * t.element_size())

    def hash_plain(self, t, kind, ptr, contig, nbytes):
        """hash_of() for a tensor that shows its own bytes (no conjugate or
        negative view) on a device of kind ("cpu", "cuda", ...), whose
        address (or None), contiguity and byte count the caller has."""
        if kind == "cuda":
            dev = t.device
            h = self.cuda[dev] if dev in self.cuda else self._cuda_for(dev)
            if h is not None:  # the kernel reads the bytes where they are
                c, p = (t, ptr) if contig else (t.contiguous(), None)
                slot = h.launch(c, nbytes, p)
                if slot is None:  # slots full: read them back first
                    self.resolve()
                    slot = h.launch(c, nbytes, p)
                hh = _Hash(None, nbytes, src=h, slot=slot)
                self.pending.append(hh)
                return hh
            w, nbytes = _words(t)
            hh = _Hash(self.torch_ops.partial(w), nbytes)
            self.pending.append(hh)
            return hh
        if kind == "cpu" and self.native:
            if not self.native_checked:
                self._check_host(_CPU)
                self.native_checked = True
            # Synchronous on the host: the value now.
            if contig:
                return _NATIVE.bp_torch_hash(t.data_ptr() if ptr is None else ptr, nbytes)
            return _native_hash(t)[0]
        dev = t.device
        if dev not in self.checked:
            self._check_host(dev)
        w, nbytes = _words(t)
        return _Hash(None, nbytes, _finish(int(self.torch_ops.partial(w)) & _MASK64, nbytes))

    def resolve(self):
        if not self.pending:
            return
        by_dev = {}
        for h in self.pending:
            if h.src is not None:
                h.value = _finish(h.src.read()[h.slot] & _MASK64, h.nbytes)
                h.src = None
            else:
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
_OPS = {}  # id(func) -> (func, name, name as JSON, mutates, uninit, overwrites)


def _op_info(func):
    """(func, "aten::div.Tensor", its JSON, whether it writes to an
    argument, whether its results are uninitialised, whether it overwrites
    its first argument), cached per op."""
    n = _OPS.get(id(func))
    if n is None:
        s = func._schema
        ov = getattr(func, "_overloadname", "") or s.overload_name
        mutates = any(a.alias_info is not None and a.alias_info.is_write for a in s.arguments)
        name = s.name + ("." + ov if ov and ov != "default" else "")
        n = (func, name, _JSON.encode(name), mutates, bool(_UNINIT.match(name)),
             bool(_OVERWRITE.match(name)))
        _OPS[id(func)] = n  # func is held: its id is not reused
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
    until it is captured (copy())."""
    __slots__ = ("meta", "hash", "why", "cap")

    def __init__(self, meta, h, why=None):
        self.meta, self.hash, self.why, self.cap = meta, h, why, None

    def copy(self):
        return _Entry(self.meta, self.hash, self.why)

    def json(self):
        meta = self.meta
        head = _META_JSON.get(meta)
        if head is None:
            dt, shape, stride, dev, nb = meta
            d = {"dtype": dt, "shape": list(shape),
                 "stride": None if stride is None else list(stride), "device": dev,
                 "nbytes": nb, "hash": None}
            head = _JSON.encode(d)[:-5]  # without 'null}'
            if len(_META_JSON) > 100000:
                _META_JSON.clear()
            _META_JSON[meta] = head
        h = self.hash
        if h is None:
            tail = 'null,"why":' + _JSON.encode(self.why)
        else:
            tail = '"%016x"' % (h.value if isinstance(h, _Hash) else h)
        if self.cap:
            tail += ',"capture":' + _JSON.encode(self.cap)
        return head + tail + "}"


_DEVICE_NAMES = {}
_STRIDED = torch.strided


def _meta(t):
    dev = t.device
    name = _DEVICE_NAMES.get(dev)
    if name is None:
        name = _DEVICE_NAMES[dev] = str(dev)
    dt = t.dtype
    return (_DTYPES.get(dt) or dtype_name(dt), tuple(t.shape),
            t.stride() if t.layout == _STRIDED else None, name, t.numel() * t.element_size())


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
    """

    def __init__(self, path, capture=None, capture_bytes=0, reference=None, diverging=8,
                 argv=None, fast_cuda=True, native=True, capture_seqs=None):
        super().__init__()
        self.path = path
        self.capture_re = re.compile(capture) if capture else None
        self.capture_bytes = int(capture_bytes or 0)
        self.capture_seqs = frozenset(capture_seqs or ())
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
        self.modjson = {}      # module path -> its JSON
        self.hooks = []
        self.out = None
        self.status = "ok"
        self.t0 = None

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
        counter and address.  The second on where
        its bytes are: a contiguous tensor's hash is its address and byte
        count's, whatever its shape or dtype (views, reshapes, expands of
        it and the tensors an op returns as they came hash the same bytes
        in the same order), a strided one's its address, dtype, shape and
        strides'; an entry there also needs the tensor hashed alive (so
        that the memory is not reused) and its version counter unchanged."""
        try:
            ver = t._version
        except Exception:  # inference tensors have no version counter
            ver = None
        if why is None and not fresh and ver is not None:
            hit = self.cache.get(id(t))
            if (hit is not None and hit[1] == ver and hit[3] == self.epoch and hit[0]() is t and
                    hit[2] == t.data_ptr()):
                return hit[4]
        meta = _meta(t)
        key = ptr = None
        if why is None and (meta[2] is None or meta[3] == "meta"):
            why = "layout %s on %s" % (t.layout, t.device)
        # An uninitialised result goes into the bytes cache too (hash None):
        # an alias of it (x.data, a view) read before anything writes is
        # uninitialised memory as well, not bytes to hash.
        uninit = why == "uninitialized"
        if why is None or uninit:
            if ver is not None and not (_HAS_NEG and t.is_neg()) and not (
                    meta[0][0] in "Cc" and t.is_conj()):
                try:
                    ptr = t.data_ptr()
                    contig = t.is_contiguous()
                    key = (ptr, meta[4], meta[3]) if contig else (
                        ptr, meta[0], meta[1], meta[2], meta[3])
                except Exception:  # no storage to point at
                    key = ptr = None
                if key is not None and not fresh and not uninit:
                    hit = self.bytes_cache.get(key)
                    if hit is not None and hit[2] == self.epoch:
                        src = hit[0]()
                        if src is not None and src._version == hit[1]:
                            e = _Entry(meta, hit[3], None if hit[3] is not None else
                                       "uninitialized")
                            self._remember(t, ver, e, ptr)
                            return e
        if uninit:
            e = _Entry(meta, None, why)
        elif why is None:
            try:
                if key is not None:  # shows its own bytes: what is known goes along
                    dn = meta[3]
                    kind = "cpu" if dn == "cpu" else "cuda" if dn[:4] == "cuda" else t.device.type
                    e = _Entry(meta, self.hasher.hash_plain(t, kind, ptr, contig, meta[4]))
                else:
                    e = _Entry(meta, self.hasher.hash_of(t))
            except Exception as ex:
                e = _Entry(meta, None, "not hashed: %s" % str(ex).splitlines()[0][:120])
                key = None
        else:
            e = _Entry(meta, None, why)
        if ver is not None and e.why != "overwritten by the op":
            self._remember(t, ver + fresh, e, ptr)
            if key is not None:
                if len(self.bytes_cache) > 200000:
                    self.bytes_cache.clear()
                try:
                    self.bytes_cache[key] = (weakref.ref(t), ver + fresh, self.epoch, e.hash)
                except TypeError:
                    pass
        return e

    def _remember(self, t, ver, e, ptr=None):
        # No callback on the weak reference (it costs on every tensor): a
        # dead or reused id fails the identity check; the cache is emptied
        # now and then instead.  ptr: t.data_ptr(), where the caller has it.
        if len(self.cache) > 200000:
            self.cache.clear()
        try:
            self.cache[id(t)] = (weakref.ref(t), ver, t.data_ptr() if ptr is None else ptr,
                                 self.epoch, e)
        except Exception:  # no weak reference, or no storage to point at
            pass

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
        if kwargs is None:
            kwargs = {}
        _, name, name_json, mutates, uninit_op, overwrites = _OPS.get(id(func)) or _op_info(func)
        with self.lock:
            ins = []
            enc_args = [self._encode(a, ins) for a in args]
            nin_args = len(ins)
            enc_kwargs = {k: self._encode(v, ins) for k, v in kwargs.items()} if kwargs else None
            entry = self._entry
            if nin_args == len(ins) and not (overwrites and nin_args):
                in_entries = [entry(t) for t in ins]
            else:
                in_entries = []
                for k, t in enumerate(ins):
                    why = None
                    if k >= nin_args and "out" in kwargs and _contains(kwargs["out"], t):
                        why = "out= argument"
                    elif k == 0 and nin_args and overwrites:
                        why = "overwritten by the op"
                    in_entries.append(entry(t, why))
            want = self._wants_capture(name)
            # Inputs are copied before the op when it may overwrite them.
            early = want or (mutates and self.diverged < self.diverging)
            pre = [_host_copy(t) if early and e.hash is not None else None
                   for t, e in zip(ins, in_entries)] if early else None
        out = func(*args, **kwargs)
        with self.lock:
            if mutates:
                self.epoch += 1
            outs = [out] if isinstance(out, torch.Tensor) else self._flatten_out(out)
            uninit = "uninitialized" if uninit_op else None
            out_entries = [entry(t, uninit, mutates) for t in outs]
            seq = self.seq
            head = '{"seq":%d,"op":%s,"module":%s,"args":%s' % (
                seq, name_json, self._module_json(), _json(enc_args))
            if enc_kwargs:
                head += ',"kwargs":' + _json(enc_kwargs)
            if not outs and out is not None:
                head += ',"ret":' + _JSON.encode(self._encode(out, []))
            self.seq += 1
            if not want and self.diverged < self.diverging:
                self.hasher.resolve()
                if any(e.hash is not None and _key(e) not in self.ref_keys for e in out_entries):
                    self.diverged += 1
                    want = True
                    if not early:
                        pre = [_host_copy(t) if e.hash is not None else None
                               for t, e in zip(ins, in_entries)]
            if want:
                self._capture(seq, "in", in_entries, pre)
                self._capture(seq, "out", out_entries, outs)
            self.records.append((head, in_entries, out_entries))
            if len(self.records) >= 1024:
                self._flush()
        return out

    def _module_json(self):
        m = self.stack[-1] if self.stack else ""
        j = self.modjson.get(m)
        if j is None:
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
        lines = []
        for head, ins, outs in self.records:
            lines.append('%s,"in":[%s],"out":[%s]}\n' % (
                head, ",".join([e.json() for e in ins]), ",".join([e.json() for e in outs])))
        self.out.write("".join(lines))
        self.records = []


    def _header(self):
        capturing = (self.capture_re is not None or self.capture_bytes or self.diverging or
                     self.capture_seqs)
        h = {
            "format": LEDGER_FORMAT, "version": LEDGER_VERSION, "hash": HASH_NAME,
            "recorder": "bitprobe_torch " + __version__,
            "torch": torch.__version__, "python": platform.python_version(),
            "platform": platform.platform(), "argv": self.argv,
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "captures": os.path.basename(self.path) + ".safetensors" if capturing else None,
            "settings": _settings(),
        }
        if torch.cuda.is_available():
            h["cuda"] = {"runtime": torch.version.cuda,
                         "devices": [torch.cuda.get_device_name(i)
                                     for i in range(torch.cuda.device_count())]}
        return h

    def __enter__(self):
        self.out = open(self.path + ".tmp", "w")
        self.out.write(json.dumps(self._header(), separators=(",", ":")) + "\n")
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
        if self.out is None:
            return
        self._flush()
        notes = list(self.hasher.notes)
        if self.cap_skipped:
            notes.append("%d tensors not captured (dtype not capturable or over the byte "
                         "limit)" % self.cap_skipped)
        end = {"end": {"records": self.seq, "captures": len(self.captures),
                       "status": self.status, "hash_paths": self.hasher.paths,
                       "notes": notes, "seconds": round(time.time() - self.t0, 3)}}
        self.out.write(json.dumps(end, separators=(",", ":")) + "\n")
        self.out.close()
        self.out = None
        cap_path = self.path + ".safetensors"
        if self.captures:
            write_safetensors(cap_path + ".tmp", self.captures,
                              {"format": "bitprobe-ledger-captures",
                               "ledger": os.path.basename(self.path)})
            os.replace(cap_path + ".tmp", cap_path)
        elif os.path.exists(cap_path):
            os.remove(cap_path)  # left by an earlier run: it would not match
        os.replace(self.path + ".tmp", self.path)


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
        raw = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
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
                   native=not a.no_native)
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
