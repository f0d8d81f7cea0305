#!/bin/sh
# Real model code on PyTorch's bits, on the GPU machine (PyTorch 2.11):
#  1. GELU's exact form on the CPU (gelu_check.py): F.gelu of normal(0, 3)
#     over every length 1..10000, fp32/bf16/fp16, 0 differences wanted at
#     ATen's AVX512, AVX2 and DEFAULT capabilities, each with oneDNN at
#     the host's ISA and capped (ONEDNN_MAX_CPU_ISA) as a host of that
#     capability would run it; bitprobe resolves the same variables.
#  2. The regression probes fid-gelu-erf-normal3-{fp32,lowp} with PyTorch
#     2.11's bits, written under $OUT/regress (copy them to
#     tests/regress/ with the commit that makes them pass).
#  3. The CPU GEMM fitting dumps (gemm_fit_torch.py): F.linear, mm and
#     F.linear with a bias per shape class, with cancellation rows, as
#     $OUT/gemm_fit-t1.npz and -t16.npz (gemm_cpu_gpu.sh adds the AVX2
#     paths; tests/refs/gemm_fit.py fits them offline).
#  4. The differential fuzzer with the model generators (fuzz_models.py),
#     seeded, on cpu and cuda: >= MIN_OPS (20000) ops per device, CPU
#     matmul/linear/addmm/bmm/sdpa counted as unpinned with their rates per
#     shape class (fp32 in MKL's fitted classes: 0 differ expected;
#     fuzz-summary-models.json; fuzz_account.py prints the account).
# Run from a configured and built tree (CUDA enabled):
#   OUT=/tmp/out SEED=20261201 sh tests/gpu/model_fidelity_gpu.sh
# MAX_LEN (10000) bounds the GELU lengths, BUDGET_S (240) the fuzzer's
# time, MODELS (0.35) the fraction of model probes.
set -u
HERE=$(dirname "$0")
. "$HERE/torch_gpu.sh"
. "$HERE/steps.sh"
SEED=${SEED:-20261201}
MAX_LEN=${MAX_LEN:-10000}
BUDGET_S=${BUDGET_S:-240}
MODELS=${MODELS:-0.35}
MIN_OPS=${MIN_OPS:-20000}
G="$PY $HERE/../refs/gelu_check.py --bitprobe $B --max-len $MAX_LEN"
"$PY" -c 'import torch; print("torch", torch.__version__, "fp16 to oneDNN:",
    torch.ops.mkldnn._is_mkldnn_fp16_supported())' | tee "$OUT/torch.txt"
"$B" fingerprint --device cpu --json | "$PY" -c 'import json, sys
m = json.load(sys.stdin)["backends"][0]["model"]
print("bitprobe models ATen", m["aten_cpu_capability"], "and oneDNN", m["onednn_isa"])'

step "gelu avx512, oneDNN as detected" 0 env ATEN_CPU_CAPABILITY=avx512 $G
step "gelu avx512, oneDNN avx512_core" 0 env ATEN_CPU_CAPABILITY=avx512 \
    ONEDNN_MAX_CPU_ISA=AVX512_CORE $G
step "gelu avx2, oneDNN as detected" 0 env ATEN_CPU_CAPABILITY=avx2 $G
step "gelu avx2, oneDNN avx2" 0 env ATEN_CPU_CAPABILITY=avx2 ONEDNN_MAX_CPU_ISA=AVX2 $G
step "gelu default, oneDNN sse41" 0 env ATEN_CPU_CAPABILITY=default ONEDNN_MAX_CPU_ISA=SSE41 $G
step "gelu avx512, mkldnn off (ATen's kernel)" 0 env ATEN_CPU_CAPABILITY=avx512 $PY -c "
import runpy, sys, torch
torch.backends.mkldnn.enabled = False
sys.argv = ['gelu_check.py', '--bitprobe', '$B', '--max-len', '2000', '--bitprobe-arg=--onednn-isa',
            '--bitprobe-arg=none']
sys.path.insert(0, '$HERE/../refs')
runpy.run_path('$HERE/../refs/gelu_check.py', run_name='__main__')"
mkdir -p "$OUT/regress"
for cfg in "avx512 -" "avx512 AVX512_CORE" "avx2 AVX2" "default SSE41"; do
    set -- $cfg
    if [ "$2" = - ]; then
        step "gelu regress bits $1" 0 env ATEN_CPU_CAPABILITY=$1 $G --regress "$OUT/regress"
    else
        step "gelu regress bits $1 $2" 0 env ATEN_CPU_CAPABILITY=$1 ONEDNN_MAX_CPU_ISA=$2 \
            $G --regress "$OUT/regress"
    fi
done
step "gemm fit dump, 1 thread" 0 "$PY" "$HERE/../refs/gemm_fit_torch.py" --out "$OUT/gemm_fit-t1.npz"
step "gemm fit dump, 16 threads" 0 "$PY" "$HERE/../refs/gemm_fit_torch.py" --out "$OUT/gemm_fit-t16.npz" \
    --threads 16
step "fuzzer with model code, cpu and cuda" 0 "$PY" "$HERE/../refs/fuzz_torch.py" run --bitprobe "$B" \
    --seed "$SEED" --probes 4000 --ops 40 --models "$MODELS" --devices cpu,cuda \
    --jobs 8 --batch 8 --budget-s "$BUDGET_S" --require "$MIN_OPS" --minimise \
    --minimise-s 120 --regress "$OUT/regress" --out "$OUT/fuzz-models"
cp "$OUT/fuzz-models/summary.json" "$OUT/fuzz-summary-models.json" 2>/dev/null
step "fuzz account" 0 "$PY" "$HERE/../refs/fuzz_account.py" "$OUT/fuzz-summary-models.json"
step "counts" 0 grep -h -E "^gelu (fp32|bf16|fp16):|^gemm_fit_torch: |ops replayed|differences by op" \
    "$OUT"/*.txt
finish
