#!/bin/sh
# Everything the GPU machine checks, in one call: build, the test suite with
# every GPU test required to run (BP_REQUIRE_GPU=1), the CUDA acceptance
# commands, the PyTorch fidelity check over every probe and dtype,
# run-to-run determinism, (with SANITIZE=1) compute-sanitizer, and (with
# BLESS=1) cuda goldens.  One log per step under $OUT (default /tmp/out);
# exit 1 when any step fails, with the failed steps listed.
#   . .devdeps/env.sh && sh tests/gpu/gpu_session.sh
. tests/gpu/steps.sh
B=./src/bitprobe
J=$(nproc)
step build 0 sh -c "autoreconf -fi && ./configure -q && make -j$J" || finish
step env 0 $B env
step "make check (BP_REQUIRE_GPU=1)" 0 env BP_REQUIRE_GPU=1 make -j"$J" check
for f in tests/*.log tests/cli/*.log; do
    grep -q -E '^(FAIL|ERROR)' "$f" 2>/dev/null && { echo "--- $f"; tail -30 "$f"; }
done
# The acceptance commands: CPU and CUDA differ (exit 0: no goldens, no --agree).
step "seed-div cpu,cuda" 0 $B run seed-div --device cpu,cuda --no-golden --dtype fp32
step "seed-inv-freq cpu,cuda" 0 $B run seed-inv-freq --device cpu,cuda --no-golden --dtype fp32
step "rope-llama2 fp32 cpu,cuda" 0 $B run rope-llama2 --dtype fp32 --device cpu,cuda --no-golden --first 8
step "div true vs reciprocal: oracle,cpu,cuda" 0 \
    $B run div-by-3-and-7 --device oracle,cpu,cuda --no-golden --dtype fp32 --quiet --first 2
step "cuda bundle" 0 $B run --device cuda --no-golden --save "$OUT/bundle" --intermediates --quiet
step "fidelity: torch_probe.py" 0 python3 tests/refs/torch_probe.py "$OUT/bundle" --probes probes
step "repeat 10 on cuda" 0 $B run --device cuda --no-golden --repeat 10 --quiet
if [ "${SANITIZE:-0}" = 1 ]; then
    step "build check_be_cuda" 0 make tests/backends/cuda/check_be_cuda
    for tool in memcheck initcheck racecheck; do
        step "check_be_cuda under $tool" 0 env BP_CUDA_DEBUG=1 BP_REQUIRE_GPU=1 timeout 200 \
            compute-sanitizer --tool $tool --error-exitcode 9 ./tests/backends/cuda/check_be_cuda
    done
    for tool in memcheck initcheck racecheck; do
        step "run under $tool" 0 timeout 150 \
            compute-sanitizer --tool $tool --error-exitcode 9 $B run --device cuda --no-golden \
            --save "$OUT/san-$tool" --quiet
    done
fi
if [ "${BLESS:-0}" = 1 ]; then
    step "bless cuda" 0 $B bless --device cuda
    # The cuda goldens' relation to the oracle's, pinned for make check
    # without a GPU (tests/backends/cpu/check_golden_pairs.c): written anew, archived
    # with them.
    step "golden_pairs.txt" 0 env BP_PAIRS_WRITE=tests/data/golden_pairs.txt make check \
        TESTS=tests/backends/cpu/check_golden_pairs
    step "cuda goldens archived" 0 tar czf "$OUT/golden-cuda.tgz" golden/*/cuda-*.safetensors.gz \
        tests/data/golden_pairs.txt
fi
finish
