#!/bin/sh
# The op ledger recorder's CUDA hashing on a GPU: the kernels' self-tests
# (contiguous and strided, run by the recorder when it first meets a CUDA
# tensor), the hash of every dtype and of device-made strided views against
# the plain-Python reference, the caches against the bytes, a ledger
# recorded on CUDA with the kernels (launched by the recorder's C extension,
# python/_bitprobe_rec.c, which must load, and from its Python path) = the
# same program's ledger with torch ops (the independent path: strided
# tensors copied, integer ops, each op recorded in Python), random
# strided views against the host's hash of the same values, the strided
# kernel timed against the copy it replaces; PyTorch's TransformerEncoder
# with a grouped conv recorded in three dtypes, with the kernels (strided
# tensors in the extension's batches) and with torch ops, the same records
# (model_check.py); the kernels' host build (no
# GPU needed); then the recorder's overhead (bench/ledger_overhead.sh on
# cuda: preset gpu <= 2x the plain forward, preset tiny <= 25 us per op).
#
# Builds nothing: run it from a built tree (python/libbitprobe_torch.so and
# python/_bitprobe_rec*.so: make, or make python/libbitprobe_torch.so pyext):
#   sh tests/gpu/ledger_strided_gpu.sh
# Logs under ${OUT:-/tmp/out}/ledger-strided/ (one per step).  Exit 0 when
# every step holds, 1 when one fails (listed at the end), 77 without a GPU
# for PyTorch.
set -u
OUT=${OUT:-/tmp/out}/ledger-strided
export OUT
PY=${PYTHON3:-python3}
export PYTHONPATH="$(pwd)/python${PYTHONPATH:+:$PYTHONPATH}"
export BITPROBE_TORCH_NATIVE="${BITPROBE_TORCH_NATIVE:-$(pwd)/python/libbitprobe_torch.so}"
# the recorder's C extension, as make built it for this Python (make pyext)
BITPROBE_TORCH_EXT="${BITPROBE_TORCH_EXT:-$(pwd)/python/_bitprobe_rec$("$PY" -c \
    'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' 2>/dev/null)}"
export BITPROBE_TORCH_EXT
"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null || {
    echo "SKIP: $PY has no torch with a CUDA device"
    exit 77; }
. tests/gpu/steps.sh
T=tests/ledger_torch

step "environment" 0 "$PY" -c '
import torch, bitprobe_torch as bt
print("PyTorch", torch.__version__, "CUDA", torch.version.cuda, "on", torch.cuda.get_device_name(0))
print("native helper:", bt._NATIVE.path if bt._NATIVE is not None else None)
print("C extension:", bt._core_check() or "used")'
# the C extension (python/_bitprobe_rec.c) must load and pass its self-check:
# cuda_check then compares its kernel launches with the Python path's
step "the C extension" 0 "$PY" -c '
import sys, bitprobe_torch as bt
why = bt._core_check()
print("C extension:", why or "loaded, self-check passed")
sys.exit(1 if why else 0)'
# The recorder's own set-up on cuda:0: compiles the kernels, runs both
# self-tests; the strided kernel must be used (no note saying otherwise).
step "the kernels' self-tests" 0 "$PY" -c '
import sys, torch, bitprobe_torch as bt
h = bt.Hasher()
c = h._cuda_for(torch.device("cuda", torch.cuda.current_device()))
print("paths:", h.paths, "notes:", h.notes)
print("direct launch:", c is not None and c.launcher is not None,
      "strided kernel:", c is not None and c.strided_ok())
sys.exit(0 if c is not None and c.strided_ok() and not h.notes else 1)'
step "hash_check --device cuda" 0 "$PY" $T/hash_check.py --device cuda
step "cache_check --device cuda" 0 "$PY" $T/cache_check.py --device cuda
step "cuda_check: ledgers, random views, timings" 0 "$PY" $T/cuda_check.py
step "model_check: a model not written for the tests, three ways" 0 "$PY" $T/model_check.py
TAIL=2 step "cuda_emul: the kernels' host build" 0 "$PY" $T/cuda_emul.py
TAIL=12 step "DEVICE=cuda sh bench/ledger_overhead.sh" 0 env DEVICE=cuda sh bench/ledger_overhead.sh
finish
