"""The recorder's overhead: the same Llama-style forward
(tests/ledger_torch/llama_block.py) timed without bitprobe_torch and
under it (hashes only: no captures), alternately, in one process, on one
device.  Prints the machine, the shapes, the hash implementation the
recorder used, the ops per forward, the median wall time of each and their
ratio (target: at most 2x on a GPU) with the recording time per op in
microseconds, and the ledger's size per forward.  The reference measured
beside them: the same forward under a TorchDispatchMode that does nothing
but run each op, what PyTorch costs any recorder of this kind per op on
this host (hosts of one kind differ in it by up to 2x).

    python3 bench/ledger_overhead.py [--device cpu|cuda] [--preset tiny|small|gpu|realistic]
                                     [--repeat N]
"""
import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "ledger_torch"))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import bitprobe_torch  # noqa: E402
import llama_block  # noqa: E402

PRESETS = {
    # tensors of a few hundred bytes: the recorder's cost per op that does
    # not grow with the bytes (Python, kernel launches, the host hash's
    # torch calls) is what shows
    "tiny": ["--dim", "16", "--heads", "2", "--hidden", "16", "--layers", "4", "--seq", "4",
             "--vocab", "16"],
    # a forward of about a tenth of a second on one CPU core
    "small": ["--dim", "256", "--heads", "8", "--hidden", "688", "--layers", "4",
              "--seq", "256", "--vocab", "1024"],
    # Llama-style layers on a GPU: 4 layers of hidden 2048, 2 x 2048 tokens (a
    # forward of ~15 ms on an H100, where the per-op cost shows)
    "gpu": ["--dim", "2048", "--heads", "16", "--hidden", "5632", "--layers", "4",
            "--seq", "2048", "--vocab", "32000", "--batch", "2", "--dtype", "bf16"],
    # a small Llama-style model at a realistic batch: the same 4 layers, batch
    # 4 x seq 4096 in bf16
    "realistic": ["--dim", "2048", "--heads", "16", "--hidden", "5632", "--layers", "4",
                  "--seq", "4096", "--vocab", "32000", "--batch", "4", "--dtype", "bf16"],
}


def cpu_name():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.machine()


def sync(dev):
    if dev.startswith("cuda"):
        torch.cuda.synchronize()


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--preset", default=None, choices=sorted(PRESETS))
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--no-cuda-kernel", action="store_true",
                   help="hash CUDA tensors with torch ops (the fallback), not the kernel")
    p.add_argument("--no-native", action="store_true",
                   help="hash CPU tensors with torch ops (the fallback), not the native helper")
    p.add_argument("--no-extension", action="store_true",
                   help="record each op in Python (the fallback), not in the C extension")
    a = p.parse_args()
    preset = a.preset or ("gpu" if a.device.startswith("cuda") else "small")
    m_args = llama_block.parser().parse_args(PRESETS[preset] + ["--device", a.device])
    model, ids = llama_block.build(m_args)
    tmp = tempfile.mkdtemp(prefix="ledger-bench.")
    path = os.path.join(tmp, "run.ledger")

    def plain():
        with torch.no_grad():
            model(ids)

    def recorded():
        with torch.no_grad():
            with bitprobe_torch.record(path, fast_cuda=not a.no_cuda_kernel,
                                       native=not a.no_native,
                                       extension=not a.no_extension):
                model(ids)

    class Null(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    def null():
        with torch.no_grad():
            with Null():
                model(ids)

    times = {"plain": [], "recorded": [], "null": []}
    cpu = {"plain": [], "recorded": [], "null": []}
    for f in (plain, recorded, null):  # warm-up: allocator, cuBLAS, the hash kernel
        f()
    sync(a.device)
    for _ in range(a.repeat):
        for name, f in (("plain", plain), ("recorded", recorded), ("null", null)):
            sync(a.device)
            t0, c0 = time.perf_counter(), time.process_time()
            f()
            sync(a.device)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
    with open(path) as fh:
        lines = fh.readlines()
    end = json.loads(lines[-1])["end"]
    ops_path = json.loads(lines[0]).get("ops_path")
    size = os.path.getsize(path)
    os.remove(path)
    os.rmdir(tmp)
    tp, tr = statistics.median(times["plain"]), statistics.median(times["recorded"])
    dev = torch.cuda.get_device_name(0) if a.device.startswith("cuda") else cpu_name()
    print("machine: %s (%s), torch %s, %d CPU threads" % (dev, a.device, torch.__version__,
                                                        torch.get_num_threads()))
    print("model: preset %s: %s" % (preset, " ".join(PRESETS[preset])))
    print("hash: %s; ops recorded by: %s" % (
        ", ".join("%s %s" % kv for kv in end["hash_paths"].items()), ops_path))
    for n in end["notes"]:
        print("note:", n)
    print("ops per forward: %d, ledger %.1f KiB" % (end["records"], size / 1024))
    per_op = 1e6 * (tr - tp) / max(end["records"], 1)
    print("forward, median of %d: plain %.4f s, recorded %.4f s: %.2fx, %.1f us per op "
          "(target on a GPU: at most 2x)" % (a.repeat, tp, tr, tr / tp, per_op))
    cp, cr = statistics.median(cpu["plain"]), statistics.median(cpu["recorded"])
    print("CPU time, median: plain %.4f s, recorded %.4f s: %.2fx, %.1f us per op" % (
        cp, cr, cr / cp, 1e6 * (cr - cp) / max(end["records"], 1)))
    null_op = 1e6 * (statistics.median(times["null"]) - tp) / max(end["records"], 1)
    print("reference: a dispatch mode that does nothing, %.1f us per op (PyTorch's own "
          "part of any such recorder on this host)" % null_op)
    if a.device.startswith("cuda"):  # the targets (bench/gpu.sh's table)
        if preset == "tiny":
            print("figure: ledger recorder, preset tiny on %s: recording per op | %.1f us "
                  "(a mode doing nothing: %.1f us) | <= 25 us | %s" % (
                      a.device, per_op, null_op, "met" if per_op <= 25 else "MISSED"))
        else:
            print("figure: ledger recorder, preset %s on %s: recorded / plain forward | "
                  "%.2fx (%.1f / %.1f ms) | <= 2x | %s" % (
                      preset, a.device, tr / tp, 1e3 * tr, 1e3 * tp,
                      "met" if tr / tp <= 2 else "MISSED"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
