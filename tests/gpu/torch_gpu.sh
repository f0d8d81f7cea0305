# Sourced by the GPU scripts that compare with PyTorch (fuzz_gpu.sh,
# cpu_isa_gpu.sh): sets B (bitprobe, $BITPROBE or ./src/bitprobe) and PY
# (a python3 that imports torch, numpy and PyYAML: $PYTHON3, python3, then
# /usr/bin/python3); exits 2 without a built bitprobe, 77 without such a
# python, and need_cuda exits 77 where bitprobe or PyTorch has no GPU.
B=${BITPROBE:-./src/bitprobe}
[ -x "$B" ] || { echo "$0: no bitprobe at $B (build the tree first, or set BITPROBE)"; exit 2; }
PY=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import torch, numpy, yaml' >/dev/null 2>&1 && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "$0: SKIP: no python3 with torch, numpy and PyYAML"; exit 77; }

need_cuda() {
    if ! "$B" list 2>/dev/null | grep -q '^  cuda  *available'; then
        echo "$0: cuda: SKIP: bitprobe has no usable CUDA device here" \
            "($("$B" list 2>/dev/null | grep '^  cuda' | sed 's/^ *//'))"
        exit 77
    fi
    "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' ||
        { echo "$0: cuda: SKIP: PyTorch sees no CUDA device"; exit 77; }
}
