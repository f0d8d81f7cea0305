#!/bin/sh
# PyTorch's references regenerated and checked bit for bit against the
# stored ones (tests/data/torch): torch_cpu_ref.py (the CPU backend tests'
# cases, on this machine's CPU), torch_reference.py (the RoPE caches on the
# CPU and CUDA, info.json), then torch_compare.py.  Builds nothing; needs a
# Python with torch and numpy ($PYTHON3, default python3) and a CUDA
# device.  The generated files and one log per step go under $OUT (default
# /tmp/out); exit 1 when a stored reference is not reproduced.
#   sh tests/gpu/torch_refs.sh
. tests/gpu/steps.sh
PY=${PYTHON3:-python3}
R="$OUT/torch"
step "torch_cpu_ref.py" 0 "$PY" tests/refs/torch_cpu_ref.py "$R"
step "torch_reference.py" 0 "$PY" tests/refs/torch_reference.py "$R"
TAIL=40 step "torch_compare.py tests/data/torch" 0 "$PY" tests/refs/torch_compare.py tests/data/torch "$R"
finish
