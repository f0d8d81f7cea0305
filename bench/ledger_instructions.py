"""The workload of bench/ledger_instructions.sh: K forwards of the tiny
Llama-style block (bench/ledger_overhead.py's preset tiny, CPU), plain,
under a dispatch mode that only calls each op (the floor any such mode
pays), or recorded by the bitprobe_torch found first on PYTHONPATH;
valgrind's instruction count is switched on around the K forwards only
(after one warm-up), by callgrind_control.  Prints the ops per forward.

    valgrind --tool=callgrind --instr-atstart=no python3 ledger_instructions.py MODE K"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "ledger_torch"))

import torch  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

import bitprobe_torch  # noqa: E402
import llama_block  # noqa: E402
from ledger_overhead import PRESETS  # noqa: E402


class Null(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def main():
    mode, k = sys.argv[1], int(sys.argv[2])
    model, ids = llama_block.build(llama_block.parser().parse_args(PRESETS["tiny"]))
    path = os.path.join(tempfile.mkdtemp(prefix="ledger-ir."), "run.ledger")

    def forward():
        with torch.no_grad():
            if mode == "plain":
                model(ids)
            elif mode == "null":
                with Null():
                    model(ids)
            else:
                with bitprobe_torch.record(path):
                    model(ids)

    forward()
    toggle = ["callgrind_control", "-i"]
    subprocess.run(toggle + ["on", str(os.getpid())], stdout=subprocess.DEVNULL, check=True)
    for _ in range(k):
        forward()
    subprocess.run(toggle + ["off", str(os.getpid())], stdout=subprocess.DEVNULL, check=True)
    with torch.no_grad():
        with bitprobe_torch.record(path):
            model(ids)
    n = bitprobe_torch.read_ledger(path)[2]["records"]
    os.remove(path)
    os.rmdir(os.path.dirname(path))
    print("ops per forward:", n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
