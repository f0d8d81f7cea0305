#!/bin/sh
# Everything the GPU machine checks, in one call: build, the test suite with
# the GPU suites running, the CUDA acceptance commands, the PyTorch fidelity
# check over every probe and dtype, run-to-run determinism, and (with
# BLESS=1) cuda goldens.  Logs go under $OUT (default ./gpu-out).
#   . .devdeps/env.sh && sh tests/fidelity/gpu_session.sh
set -u
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
B=./src/bitprobe
log() { echo "== $*"; }
{
log build
(autoreconf -fi >/dev/null 2>&1 && ./configure -q && make -j"$(nproc)" >/dev/null) || { echo "BUILD FAILED"; exit 1; }
$B env
log make check
make -j"$(nproc)" check >"$OUT/check.txt" 2>&1; echo "make check: exit $?"
grep -E '^(# |FAIL|ERROR|SKIP)' "$OUT/check.txt"
for f in tests/*.log; do grep -l -E 'FAIL|ERROR' "$f" >/dev/null 2>&1 && { echo "--- $f"; tail -30 "$f"; }; done
log acceptance
$B run seed-div --device cpu,cuda --no-golden --dtype fp32
$B run seed-inv-freq --device cpu,cuda --no-golden --dtype fp32
$B run rope-llama2 --dtype fp32 --device cpu,cuda --no-golden --first 8 | grep -A20 'inv_freq'
log div true vs reciprocal: cpu, cuda, oracle
$B run div-by-3-and-7 --device oracle,cpu,cuda --no-golden --dtype fp32 --quiet --first 2
log fidelity
rm -rf "$OUT/bundle"
$B run --device cuda --no-golden --save /tmp/bundle --intermediates --quiet >/dev/null
python3 tests/fidelity/torch_probe.py /tmp/bundle --probes probes; echo "fidelity: exit $?"
log repeat
$B run --device cuda --no-golden --repeat 10 --quiet; echo "repeat: exit $?"
if [ "${SANITIZE:-0}" = 1 ]; then
  log compute-sanitizer
  make tests/check_be_cuda >/dev/null 2>&1
  for tool in memcheck initcheck racecheck; do
    BP_CUDA_DEBUG=1 timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 ./tests/check_be_cuda >"$OUT/san-unit-$tool.txt" 2>&1
    echo "check_be_cuda under $tool: exit $?"; grep -E "SUMMARY|Checks:" "$OUT/san-unit-$tool.txt"
  done
  for tool in memcheck initcheck racecheck; do
    timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 $B run --device cuda --no-golden --save /tmp/san-$tool --quiet >/dev/null 2>"$OUT/san-$tool.txt"
    echo "bitprobe run under $tool: exit $?"; grep -E "SUMMARY" "$OUT/san-$tool.txt"
  done
fi
if [ "${BLESS:-0}" = 1 ]; then
  log bless
  $B bless --device cuda | grep -v unchanged
  tar czf "$OUT/golden-cuda.tgz" golden/*/cuda-*.safetensors.gz
fi
} 2>&1 | tee "$OUT/session.txt"
