#!/bin/sh
# The known-answer screen, cross-GPU consensus and the NCCL ranks on one
# GPU (every step also runs on more):
#   - screen of every visible GPU: exit 0, every SM covered, within 10 s
#     per GPU (the time is printed next to the budget);
#   - an injected wrong bit per kind of test: exit 1, each named by GPU,
#     SM and test; compute-sanitizer over the pinned kernels;
#   - the math library's goldens blessed from this GPU into $OUT/golden
#     (copy $OUT/golden/screen/*.safetensors.gz into golden/screen/ to
#     ship them) and a screen against them;
#   - run --gpu all (consensus of the GPUs; one GPU: itself);
#   - stack --ranks 1: the NCCL-gathered init equals the unsharded init and
#     the one-device emulation; the all-reduce with one rank per NCCL_ALGO;
#     the same under a launcher's variables with the id in a file, and
#     under torchrun where it is installed;
#   - NCCL's version and the GPU kind in the logs.
# Logs under $OUT (default /tmp/out); exit 1 when a step fails, 77 without
# a GPU.   sh tests/gpu/screen_gpu.sh    (after building with CUDA)
. tests/gpu/steps.sh
B=./src/bitprobe
# NCCL: the toolkit's, else the one PyTorch's wheels carry
if [ -z "${BP_NCCL_LIB:-}" ] && ! ldconfig -p 2>/dev/null | grep -q libnccl.so.2 &&
    [ ! -e "$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)")")/lib64/libnccl.so.2" ]; then
    lib=$(python3 -c 'import os, nvidia.nccl as m; print(os.path.join(list(m.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
    [ -n "$lib" ] && [ -f "$lib" ] && export BP_NCCL_LIB="$lib" && echo "NCCL from $lib"
fi
"$B" env --json 2>/dev/null | grep -q '"devices"' || { echo "no GPU here: SKIP"; exit 77; }
step "environment" 0 "$B" env
cat "$log"
NGPU=$("$B" env --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpu"]["devices"]))' 2>/dev/null ||
       "$B" env | grep -c '^gpu [0-9]')
echo "GPUs: $NGPU"

# --- screen ---------------------------------------------------------------
t0=$(date +%s.%N)
TAIL=8 step "screen --gpu all" 0 "$B" screen --gpu all -v --json "$OUT/screen.json"
t1=$(date +%s.%N)
S=$log
awk -v a="$t0" -v b="$t1" -v n="$NGPU" 'BEGIN { printf "screen wall time: %.2f s for %d GPU(s) (budget 10 s per GPU, GPUs in parallel)\n", b - a, n }' |
    tee "$OUT/screen-time.txt"
check "screen: verdict PASS with every SM covered" grep -q "^screen: PASS: .*every SM covered" "$S"
check "screen: every GPU line shows all its SMs" sh -c \
    "grep '^GPU ' '$S' | awk '{ for (i = 1; i <= NF; i++) if (\$i == \"SMs\") { split(\$(i-1), f, \"/\"); if (f[1] != f[2]) bad = 1 } } END { exit bad }'"
check "screen: within 10 s per GPU" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 10) }'
TAIL=3 step "screen --depth 5 (soak)" 0 "$B" screen --gpu all --depth 5
# the highest SM id of GPU 0, to inject into it
LAST=$(python3 -c 'import json; g = json.load(open("'"$OUT"'/screen.json"))["gpus"][0]; print(max(g["sm_ids"]))' 2>/dev/null || echo 7)
TAIL=6 step "inject GPU 0 SM 0 div-fp32" 1 env BP_SCREEN_INJECT=0:0:div-fp32 "$B" screen --gpu 0
check "  named: GPU 0 SM 0 (div-fp32)" grep -q "^screen: FAIL: wrong bits on GPU 0 SM 0 (div-fp32)" "$log"
TAIL=12 step "inject one wrong bit into each kind of test" 1 env \
    BP_SCREEN_INJECT=0:$LAST:fma-bf16,0:1:pow-fp32,0:2:sfu-sin,0:3:gemm-ffma,0:4:mma-bf16,0:5:mem-addr,0:6:smem,0:0:cublas-fp16 \
    "$B" screen --gpu 0 --test fma-bf16,pow-fp32,sfu-sin,gemm-ffma,mma-bf16,mem-addr,smem,cublas-fp16,div-fp64
L=$log
for want in "GPU 0 SM $LAST  fma-bf16" "GPU 0 SM 1    pow-fp32" "GPU 0 SM 2    sfu-sin" \
            "GPU 0 SM 3    gemm-ffma" "GPU 0 SM 4    mma-bf16" "GPU 0 SM 5    mem-addr" \
            "GPU 0 SM 6    smem" "GPU 0 any SM  cublas-fp16"; do
    check "  named: $want" grep -qF "$want" "$L"
done
check "  8 wrong results, nothing else" grep -q "FAIL  8 wrong results" "$L"
if command -v compute-sanitizer >/dev/null 2>&1; then
    # (a sanitizer may keep blocks off some SMs: coverage trouble, exit 2,
    # is not the question here; its own error count is)
    TAIL=4 step "compute-sanitizer memcheck: the pinned kernels" "0|2" compute-sanitizer \
        --tool memcheck --error-exitcode 3 "$B" screen --gpu 0 \
        --test div-fp32,fma-fp16,pow-fp32,sfu-ex2,gemm-ffma,mma-fp16,mma-bf16,mem-addr,smem,cublas-bf16
    check "  memcheck: 0 errors" grep -q "ERROR SUMMARY: 0 errors" "$log"
    TAIL=4 step "compute-sanitizer racecheck: shared memory" "0|2" compute-sanitizer \
        --tool racecheck --error-exitcode 3 "$B" screen --gpu 0 --test smem,mma-bf16,div-fp32
    check "  racecheck: 0 hazards" grep -qE "RACECHECK SUMMARY: 0 hazards|ERROR SUMMARY: 0 errors" "$log"
fi
TAIL=6 step "bless the math library's goldens from GPU 0" 0 "$B" screen --gpu 0 --bless --golden "$OUT/golden"
TAIL=40 step "screen against the goldens" 0 "$B" screen --gpu all -v --golden "$OUT/golden"
check "  the sweeps judged by the golden" grep -qE "^  pow-fp32 +golden" "$log"
TAIL=4 step "inject against the golden" 1 env BP_SCREEN_INJECT=0:0:exp-fp32 "$B" screen --gpu 0 --test exp-fp32 --golden "$OUT/golden"

# --- consensus of the GPUs ------------------------------------------------
if "$B" run --help 2>/dev/null | grep -q -- "--gpu .*all"; then
    TAIL=10 step "run --device cpu,cuda --gpu all" 0 "$B" run --device cpu,cuda --gpu all --no-golden --quiet
fi
for g in $(seq 0 $((NGPU - 1))); do
    step "run --device cpu,cuda --gpu $g --save" 0 "$B" run --device cpu,cuda --gpu $g --no-golden --quiet \
        --save "$OUT/run-gpu$g"
done
# (one GPU: its run against itself, saved twice, must agree)
[ "$NGPU" -gt 1 ] || step "run --device cpu,cuda --save (again)" 0 "$B" run --device cpu,cuda --no-golden \
    --quiet --save "$OUT/run-gpu0-again"
TAIL=6 step "diff --consensus of the GPUs' runs" 0 "$B" diff --consensus "$OUT"/run-gpu*

# --- NCCL ranks -------------------------------------------------------------
TAIL=12 step "stack --ranks 1 (bitprobe's launch)" 0 "$B" stack --ranks 1 --json "$OUT/ranks1.json"
R=$log
check "  NCCL version printed" grep -q "NCCL [0-9]" "$R"
check "  gathered = unsharded = emulation" grep -q "are bit-identical to the unsharded init and to the one-device emulation" "$R"
check "  all-reduce with one rank: Ring identical to the unsharded" grep -qE "^  Ring +bit-identical" "$R"
TAIL=12 step "stack --ranks 1, llama2-7b" 0 "$B" stack --ranks 1 --preset llama2-7b --json "$OUT/ranks1-llama2.json"
TAIL=4 step "stack --ranks 1 under a launcher's variables, id in a file" 0 env RANK=0 WORLD_SIZE=1 \
    LOCAL_RANK=0 BP_NCCL_ID_FILE="$OUT/nccl.id" "$B" stack --ranks 1 --no-tp
check "  rank 0 removed the id file" test ! -e "$OUT/nccl.id"
if command -v torchrun >/dev/null 2>&1; then
    TAIL=6 step "torchrun --nproc_per_node 1 bitprobe stack --ranks 1" 0 torchrun --standalone \
        --nproc_per_node 1 --no-python "$B" stack --ranks 1
fi
TAIL=3 step "stack --ranks 2 with one GPU fails cleanly" "0|2" "$B" stack --ranks 2 --no-tp
finish
