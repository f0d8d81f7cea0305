#!/bin/sh
# GPU acceptance pass: the test suite, fidelity, sanitizers and the CUDA
# acceptance commands of explain and fingerprint; one log per part in $OUT.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
B=./src/bitprobe
(autoreconf -fi && ./configure -q && make -j"$(nproc)" && make -j"$(nproc)" tests/check_be_cuda) >"$OUT/build.txt" 2>&1 || { echo BUILD FAILED; tail -20 "$OUT/build.txt"; exit 1; }
make -j"$(nproc)" check >"$OUT/check.txt" 2>&1; echo "make check: exit $?"; grep -E '^(# |FAIL|ERROR|SKIP)' "$OUT/check.txt"
$B run --device cuda --no-golden --save /tmp/b --intermediates --quiet >/dev/null
python3 tests/fidelity/torch_probe.py /tmp/b --probes probes >"$OUT/fidelity.txt" 2>&1; echo "fidelity: exit $?"; grep -E "^FAIL|^fidelity" "$OUT/fidelity.txt"
BP_CUDA_DEBUG=1 compute-sanitizer --tool initcheck --error-exitcode 9 ./tests/check_be_cuda >"$OUT/initcheck.txt" 2>&1; echo "initcheck: exit $?"; grep SUMMARY "$OUT/initcheck.txt"
{ $B explain seed-inv-freq --a cpu --b cuda; echo "exit $?"; $B explain rope-llama2 --a cpu --b cuda --dtype fp32; echo "exit $?"; } >"$OUT/explain.txt" 2>&1
{ $B fingerprint --device cuda; echo "exit $?"; $B fingerprint --device cpu; echo "exit $?"; } >"$OUT/fingerprint.txt" 2>&1
$B run --device cpu,cuda,oracle --quiet >"$OUT/run.txt" 2>&1; echo "run vs goldens: exit $?"; tail -2 "$OUT/run.txt"
