#!/bin/sh
# Invariance acceptance on the GPU machine (a configured, built tree with
# CUDA; python3 with torch).  One step per claim, each logged under
# ${OUT:-/tmp/out}; exit 1 listing the failed steps (a step fails on an
# internal failure: exit 2, a crash, or a check that does not hold; exit 1
# of `bitprobe invariance` is a finding, not a failure).
#   - the invariance test suites with the GPU required;
#   - cuBLAS default (torch.mm's call) bf16 4096 x 4096, M 1..1024, three
#     placements: the map, the cuBLASLt algorithm at each boundary, the
#     oracle's verdicts; and PyTorch's own sweep on the same inputs gives
#     the same groups, boundaries and bits;
#   - pedantic and cuBLASLt maps of the same shape, run to run checked
#     (repeats and a fresh process); the CPU engine's invariance;
#   - fp32, TF32 and fp16 maps; the LLM GEMM shapes;
#   - rms_norm, softmax, log_softmax, mean and sum at LLM shapes under batch
#     size: bitprobe's implementations, and PyTorch's kernels on the same
#     inputs;
#   - split-KV attention (32 heads of 128, 32768 keys) at S = 1, 2, 4, 8
#     against the unsplit math: bits and the oracle's verdicts; PyTorch's
#     SDPA backends on the same inputs;
#   - split-K (cuBLASLt's own, forced; the formulations) and tensor
#     parallelism emulated on one device.
#   sh tests/gpu/invariance_gpu.sh
# (about 10 minutes on an H100; STEPS=LO-HI runs a part, see steps.sh)
. "$(dirname "$0")/steps.sh"
B=${BITPROBE:-./src/bitprobe}
T="$(dirname "$0")/../refs/invariance_torch.py"
PY=
for p in "${PYTHON3:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c "import torch" >/dev/null 2>&1 && { PY=$p; break; }
done
[ -n "$PY" ] || PY=python3
if ! "$B" list 2>/dev/null | grep -q '^ *cuda *available'; then
    echo "SKIP: no CUDA device for bitprobe ($("$B" list 2>&1 | grep '^ *cuda'))"
    exit 77
fi
# inputs saved for PyTorch are large (x of softmax-128256: 262 MB): they
# stay out of $OUT
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bitprobe-inv.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# show N STEP...: a step whose log's last N lines are shown
show() {
    TAIL=$1
    shift
    step "$@"
    r=$?
    TAIL=5
    return $r
}

step "environment" 0 "$B" env
inv_suites() {
    env BP_REQUIRE_GPU=1 make check TESTS="tests/invariance/check_inv tests/cli/invariance.sh tests/cli/invariance_cuda.sh" && return 0
    for f in tests/invariance/check_inv.log tests/cli/invariance.sh.log tests/cli/invariance_cuda.sh.log; do
        echo "--- $f"; tail -n 25 "$f"
    done
    return 1
}
TAIL=60 step "invariance test suites, GPU required" 0 inv_suites

# torch.mm's cuBLAS call, the headline map
step "inputs of the 4096x4096 bf16 sweep" 0 \
    "$B" invariance --engine cublas --shape 4096x4096 --m 1024 --no-oracle \
    --save-inputs "$WORK/gemm-inputs.safetensors"
show 40 "cublas bf16 4096x4096 M 1:1024, three placements" "0|1" \
    "$B" invariance --engine cublas --shape 4096x4096 --m 1:1024 --place all \
    --json "$OUT/cublas.json" --svg "$OUT/cublas.svg" --markdown "$OUT/cublas.md"
check "every configuration names its cuBLASLt algorithm" grep -q '"algo_id"' "$OUT/cublas.json"
if command -v rsvg-convert >/dev/null 2>&1; then
    check "the SVG renders" rsvg-convert -o "$OUT/cublas.png" "$OUT/cublas.svg"
else  # no renderer on the GPU machine: the SVG must at least be well-formed XML
    check "the SVG is well-formed XML" "$PY" -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$OUT/cublas.svg"
fi
show 20 "PyTorch torch.mm map equals bitprobe's cublas map (groups, boundaries, bits)" 0 \
    "$PY" "$T" gemm "$WORK/gemm-inputs.safetensors" "$OUT/cublas.json" --dtype bf16 --engine cublas

# pedantic, cuBLASLt, the CPU: invariance stated with evidence
show 12 "cublas-pedantic bf16 4096x4096 M 1:1024, repeats and a fresh process" "0|1" \
    "$B" invariance --engine cublas-pedantic --shape 4096x4096 --m 1:1024 --place all \
    --repeat 2 --processes 1 --json "$OUT/pedantic.json"
show 12 "cublaslt bf16 4096x4096 M 1:1024 (PyTorch's Lt path)" "0|1" \
    "$B" invariance --engine cublaslt --shape 4096x4096 --m 1:1024 --place all \
    --repeat 2 --json "$OUT/cublaslt.json"
show 8 "cpu engine: bitprobe's CPU matmul is invariant" 0 \
    "$B" invariance --engine cpu --shape 1024x1024 --m 1:64 --place all \
    --dtype fp32,bf16,fp16 --repeat 2 --processes 1 --no-oracle
show 20 "fp32, tf32, fp16 through cublas and cublaslt, M 1:512" "0|1" \
    "$B" invariance --engine cublas,cublaslt --shape 4096x4096 --m 1:512 \
    --dtype fp32,tf32,fp16 --json "$OUT/dtypes.json"
show 30 "LLM GEMM shapes (K 4096, 11008, 14336; vocab 32000, 128256), cublas" "0|1" \
    "$B" invariance --preset llm-gemm --engine cublas --dtype bf16 \
    --json "$OUT/llm-gemm.json" --svg "$OUT/llm-gemm.svg"

# the row ops under batch size: bitprobe's, then PyTorch's kernels
show 30 "row ops at LLM shapes (bitprobe: cuda engine, cpu formulations)" "0|1" \
    "$B" invariance --preset llm-rows --dtype bf16 --json "$OUT/llm-rows.json" \
    --svg "$OUT/llm-rows.svg"
for job in "rms_norm 4096" "sum 4096" "mean 4096" "softmax 32000" "softmax 128256" \
           "log_softmax 32000" "log_softmax 128256"; do
    set -- $job
    step "inputs $1 $2" 0 "$B" invariance --engine cpu --op "$1" --shape "$2" --m 1024 \
        --no-oracle --save-inputs "$WORK/rows-$1-$2.safetensors"
    show 6 "PyTorch $1 over $2 under batch size M 1:1024" 0 \
        "$PY" "$T" rows "$WORK/rows-$1-$2.safetensors" --op "$1" --m 1:1024
done

# split-KV attention, split-K, tensor parallelism
show 40 "split-KV attention 32x32768x128, S 1,2,4,8 vs unsplit: bits, oracle" "0|1" \
    "$B" invariance --preset decode-32k --dtype bf16,fp32 -v --json "$OUT/decode.json"
step "inputs of the decode" 0 "$B" invariance --engine cpu --op attention \
    --shape 32x32768x128 --split 1 --no-oracle --save-inputs "$WORK/decode-inputs.safetensors"
show 8 "PyTorch SDPA backends on the decode inputs" 0 \
    "$PY" "$T" attention "$WORK/decode-inputs.safetensors" --head-dim 128
show 30 "split-K: cuBLASLt's own (forced) and the formulations, 4096x4096" "0|1" \
    "$B" invariance --preset splitk-4096 --dtype bf16,fp32 --json "$OUT/splitk.json"
show 30 "tensor parallel on one device, T 1,2,4,8, ring/tree/rank" "0|1" \
    "$B" invariance --preset tp-4096 --dtype bf16 --json "$OUT/tp.json" --svg "$OUT/tp.svg"
finish
