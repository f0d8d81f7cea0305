#!/bin/sh
# GPU acceptance pass: the test suite with every GPU test required to run
# (BP_REQUIRE_GPU=1), PyTorch fidelity, initcheck, the CUDA acceptance
# commands of explain and fingerprint, and every backend against the
# goldens.  One log per step under $OUT; exit 1 when any step fails.
#   . .devdeps/env.sh && sh tests/gpu/gpu_accept.sh
. tests/gpu/steps.sh
B=./src/bitprobe
J=$(nproc)
step build 0 sh -c "autoreconf -fi && ./configure -q && make -j$J && make -j$J tests/backends/cuda/check_be_cuda" ||
    finish
step "make check (BP_REQUIRE_GPU=1)" 0 env BP_REQUIRE_GPU=1 make -j"$J" check
step "cuda bundle" 0 $B run --device cuda --no-golden --save "$OUT/bundle" --intermediates --quiet
step "fidelity: torch_probe.py" 0 python3 tests/refs/torch_probe.py "$OUT/bundle" --probes probes
step "initcheck: check_be_cuda" 0 env BP_CUDA_DEBUG=1 BP_REQUIRE_GPU=1 \
    compute-sanitizer --tool initcheck --error-exitcode 9 ./tests/backends/cuda/check_be_cuda
step "explain seed-inv-freq cpu/cuda" 1 $B explain seed-inv-freq --a cpu --b cuda
step "explain rope-llama2 fp32 cpu/cuda" 1 $B explain rope-llama2 --a cpu --b cuda --dtype fp32
step "fingerprint cuda" 0 $B fingerprint --device cuda
step "fingerprint cpu" 0 $B fingerprint --device cpu
step "run cpu,cuda,oracle vs goldens" 0 $B run --device cpu,cuda,oracle --quiet
finish
