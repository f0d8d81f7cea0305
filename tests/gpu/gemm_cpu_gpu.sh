#!/bin/sh
# PyTorch's CPU GEMMs for the order fits (tests/refs/gemm_fit.py), on
# the GPU host (its CPU is the one whose MKL and oneDNN paths matter:
# PyTorch 2.11's x86 wheel, MKL 2024.2, oneDNN v3).  No build needed:
#   OUT=/tmp/out sh tests/gpu/gemm_cpu_gpu.sh
# Four dumps (gemm_fit_torch.py: F.linear, mm on a contiguous copy,
# F.linear with a bias, fp32/bf16/fp16, 28 shapes M 1..64, K 256..16384,
# N 256..4096, and cancellation rows for the classes not fitted yet):
# the host's ISA and MKL/oneDNN capped at AVX2 (MKL_ENABLE_INSTRUCTIONS,
# ONEDNN_MAX_CPU_ISA: ATEN_CPU_CAPABILITY does not reach either), each
# with 1 thread and with every core; then MKL's and oneDNN's verbose
# lines for one call of each class (which kernel ran).  A few minutes;
# everything lands in one file, $OUT/gemm-cpu.tgz (npz dumps and logs).
# QUICK=1 dumps a few shapes only (a smoke test of the script).
# Offline:  tar xzf gemm-cpu.tgz && python3 tests/refs/gemm_fit.py gemm/*.npz
set -u
HERE=$(dirname "$0")
ROOT_OUT=${OUT:-/tmp/out}
OUT=$ROOT_OUT/gemm
. "$HERE/steps.sh"
PY=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import torch, numpy' >/dev/null 2>&1 && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "$0: SKIP: no python3 with torch and numpy"; exit 77; }
NCPU=$(nproc 2>/dev/null || echo 16)
D="$PY $HERE/../refs/gemm_fit_torch.py${QUICK:+ --quick}"
"$PY" -c 'import torch; print(torch.__version__); print(torch.__config__.show())' \
    >"$OUT/torch-config.txt" 2>&1
grep -m1 'model name' /proc/cpuinfo >"$OUT/cpu.txt" 2>&1
grep -o -w 'avx512[a-z_0-9]*\|amx[a-z_0-9]*\|avx2\|fma' /proc/cpuinfo | sort -u | tr '\n' ' ' \
    >>"$OUT/cpu.txt" 2>&1

step "dump, host ISA, 1 thread" 0 env OMP_NUM_THREADS=1 $D --out "$OUT/host-t1.npz"
step "dump, host ISA, $NCPU threads" 0 env OMP_NUM_THREADS="$NCPU" $D --threads "$NCPU" \
    --out "$OUT/host-t$NCPU.npz"
step "dump, AVX2, 1 thread" 0 env OMP_NUM_THREADS=1 MKL_ENABLE_INSTRUCTIONS=AVX2 \
    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 $D --out "$OUT/avx2-t1.npz"
step "dump, AVX2, $NCPU threads" 0 env OMP_NUM_THREADS="$NCPU" MKL_ENABLE_INSTRUCTIONS=AVX2 \
    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 $D --threads "$NCPU" \
    --out "$OUT/avx2-t$NCPU.npz"
# which kernel each class reaches (MKL_VERBOSE names the code path,
# ONEDNN_VERBOSE the primitive's implementation, brgemm/AMX or not)
VERB='import torch, torch.nn.functional as F
torch.set_num_threads(1)
for dt in (torch.float32, torch.bfloat16, torch.float16):
    for m, k, n in ((1, 4096, 1024), (3, 4096, 1024), (8, 4096, 1024), (64, 4096, 1024)):
        x, w = torch.randn(m, k).to(dt), torch.randn(n, k).to(dt)
        for name, f in (("linear", lambda: F.linear(x, w)),
                        ("mm contiguous", lambda: torch.mm(x, w.t().contiguous())),
                        ("linear bias", lambda: F.linear(x, w, w[:, 0]))):
            print("===", name, dt, m, k, n, flush=True)
            try:
                f()
            except RuntimeError as e:
                print("refused:", str(e).splitlines()[0], flush=True)'
step "verbose, host ISA" 0 env MKL_VERBOSE=1 ONEDNN_VERBOSE=1 OMP_NUM_THREADS=1 "$PY" -c "$VERB"
step "verbose, AVX2" 0 env MKL_VERBOSE=1 ONEDNN_VERBOSE=1 OMP_NUM_THREADS=1 \
    MKL_ENABLE_INSTRUCTIONS=AVX2 ONEDNN_MAX_CPU_ISA=AVX2 "$PY" -c "$VERB"
# one file back (the device machine returns few): the folder, tarred
tar czf "$ROOT_OUT/gemm-cpu.tgz" -C "$ROOT_OUT" gemm && echo "wrote $ROOT_OUT/gemm-cpu.tgz"
cp "$OUT/failed" "$ROOT_OUT/gemm-failed" && rm -rf "$OUT" && OUT=$ROOT_OUT &&
    mv "$OUT/gemm-failed" "$OUT/failed"
finish
