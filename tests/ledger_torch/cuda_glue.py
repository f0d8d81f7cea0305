"""The recorder's CUDA path where there is no GPU: the Python between the
ops and the kernels (Hasher.hash_plain's choice of kernel, _CudaHasher's
slots, launches, batches read back and finished by torch ops, a batch
fuller than the slots) run on the host, with a launcher whose "kernels"
are the host build of the CUDA source (cuda_emul.py) adding into the
slots in host memory.  The Llama-style block, cache_check's cases,
native_check's odd tensors, the strided kernel's self-test views and an op of
more tensors than there are slots are recorded three times: with the native
helper, with the CUDA path (strided kernel on) and with the CUDA path
without the strided kernel (strided tensors copied contiguous first);
every record must be the same text, and the strided kernel must have been
launched.  The same again with the recorder's C extension
(python/_bitprobe_rec.c) where it is built: it launches the "kernels" itself,
through the address of a host function with cuLaunchKernel's signature,
small tensors, contiguous and strided, in batches (which must have been
launched: the in-place ops of the program check that a batch is launched
before an op writes one of its tensors).
Exit 0 when so, 1 otherwise, 77 without a C++ compiler or the native
helper.

    python3 cuda_glue.py"""
import collections
import ctypes
import json
import os
import shutil
import sys
import tempfile

import torch

import bitprobe_torch as bt

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.argv = sys.argv[:1]  # cache_check (native_check.mixed_program) reads its device from it
import cuda_emul  # noqa: E402
import native_check  # noqa: E402


class HostLauncher:
    """_Launcher's two calls, run on the host: each thread of the grid's
    share by the host build of the kernels' *_sum functions, and nbytes
    (thread 0's, as the kernels' wrappers add it), added to the slot."""

    def __init__(self, lib, strided):
        self.lib = lib
        # the kernels' "handles" and the launch function for the extension;
        # the batch kernel and the driver's other functions, for its batches
        self.func, self.sfunc, self.bfunc = 1, 2 if strided else None, 3
        vp = ctypes.c_void_p
        self.c_launch = ctypes.cast(lib.emul_launch, vp).value
        self.c_sync, self.c_push, self.c_pop = (ctypes.cast(f, vp).value for f in (
            lib.emul_sync, lib.emul_push, lib.emul_pop))
        self.sarg = ctypes.create_string_buffer(bt._STRIDED_ARG_BYTES)
        self.launches = collections.Counter()

    @staticmethod
    def context(dev):
        return 1  # (the host's stand-ins take any)

    @staticmethod
    def _add(out_ptr, v):
        c = ctypes.c_uint64.from_address(out_ptr)
        c.value = (c.value + v) & bt._MASK64

    def __call__(self, index, blocks, ptr, nbytes, out_ptr):
        self._add(out_ptr, self.lib.emul_contig(ptr, nbytes, blocks * 256) + nbytes)
        self.launches["contiguous"] += 1

    def strided(self, index, blocks, ptr, es, shape, stride, out_ptr):
        bt._STRIDED_PACK[len(shape)](self.sarg, 0, len(shape), es, *shape, *stride)
        n = es
        for d in shape:
            n *= d
        self._add(out_ptr, self.lib.emul_strided(ptr, self.sarg, blocks * 256) + n)
        self.launches["strided"] += 1


class HostCudaHasher(bt._CudaHasher):
    """A _CudaHasher whose slots are in host memory and whose launcher is
    HostLauncher; the rest (launch, read, reset) is the recorder's."""

    def __init__(self, lib, strided):
        self.kernel, self.launch_note = None, None
        self.launcher = HostLauncher(lib, strided)
        self.dev, self.index = torch.device("cpu"), 0
        self.slots = torch.zeros(self.SLOTS, dtype=torch.int64)
        self.base = self.slots.data_ptr()
        self.used = 0
        self.values = None
        self.held = []
        self.lost = None
        self.max_blocks = 4  # a grid of 1024 threads at most: the host runs each
        self.current = lambda: 0


def program():
    """What is recorded: built afresh each time (the same bits), and more
    tensors than the slots hold, each new to the recorder, in one op: the
    batch is read back midway."""
    many = [torch.full((3,), float(i)) for i in range(bt._CudaHasher.SLOTS + 40)]
    return native_check.mixed_program(lambda x: torch.cat(many))


def record(path, hasher=None, extension=False):
    run = program()
    rec = bt.Recorder(path, argv=["cuda_glue"], native=hasher is None, extension=extension)
    if hasher is not None:  # CPU tensors take the CUDA path
        rec.hasher.kinds["cpu"] = (True, hasher)
        rec.hasher.cuda[torch.device("cpu")] = hasher  # (what resolve() resets)
        if rec.core is not None:  # as Hasher.hash_plain does for a new device
            bt._core_add_cuda(rec.core, hasher)
    with torch.no_grad():
        with rec:
            run()
    if rec.core is not None:
        hasher.core_stats = rec.core.stats()
    return native_check.ledger_records(path)[1]


def main():
    if bt._NATIVE is None:
        print("SKIP: the native helper did not load (BITPROBE_TORCH_NATIVE)")
        return 77
    tmp = tempfile.mkdtemp(prefix="cuda_glue.")
    try:
        lib, why = cuda_emul.compile_host(tmp)
        if lib is None:
            print(why if why.startswith("FAIL") else "SKIP: " + why)
            return 1 if why.startswith("FAIL") else 77
        want = record(os.path.join(tmp, "native.ledger"))
        bad = 0
        ext = bt._core_check() is None
        if os.environ.get("BITPROBE_TORCH_EXT", "0") != "0" and not ext:
            print("FAIL: the C extension is not used: %s" % bt._core_check())
            bad += 1
        # (the last: every launch of the batch kernel fails, each batch is
        # made again one tensor per launch)
        for extension, strided, bfails in ((False, True, False), (False, False, False),
                                           (True, True, False), (True, False, False),
                                           (True, True, True)):
            if extension and not ext:
                continue
            h = HostCudaHasher(lib, strided)
            if bfails:
                h.launcher.bfunc = 4  # a "kernel" emul_launch refuses
            got = record(os.path.join(tmp, "cuda.ledger"), h, extension)
            what = "the CUDA path%s%s%s" % (" in the C extension" if extension else "",
                                            "" if strided else " without the strided kernel",
                                            ", its batch launches failing" if bfails else "")
            if len(got) != len(want):
                print("FAIL %s: %d records, %d with the native helper" % (what, len(got),
                                                                         len(want)))
                bad += 1
            diff = [k for k, (a, b) in enumerate(zip(got, want)) if a != b]
            for k in diff[:3]:
                print("FAIL %s, record %d:\n  cuda:   %s\n  native: %s" % (what, k, got[k],
                                                                         want[k]))
            bad += len(diff)
            n = h.launcher.launches
            if extension:  # the launches the extension made itself, and Python's
                c = h.core_stats
                # small strided tensors in the batches too
                if (not c["contiguous"] or not c["batches"] or
                        (strided and not c["strided_batched"])):
                    print("FAIL %s: the extension launched %s (Python %s)" % (what, c, n))
                    bad += 1
                n = collections.Counter(n)
                n.update(contiguous=c["contiguous"], strided=c["strided"], batches=c["batches"],
                         strided_batched=c["strided_batched"])
            if strided and not n["strided"]:
                print("FAIL: the strided kernel was never launched")
                bad += 1
            if not strided and n["strided"]:
                print("FAIL: the strided kernel was launched while off")
                bad += 1
            hashed = sum(1 for r in got for e in json.loads(r)["in"] + json.loads(r)["out"]
                         if e.get("hash"))
            print("%s: %d records, %d hashes, %d by the contiguous kernel and %d by the strided "
                  "one (%d batch launches, %d strided in them): %s" % (
                      what, len(got), hashed, n["contiguous"], n["strided"], n["batches"],
                      n["strided_batched"],
                "the native helper's records" if not diff and len(got) == len(want) else
                "%d records differ" % len(diff)))
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
