#!/bin/sh
# GPU performance pass: build, the test suite, the run against every golden
# on cpu, cuda and oracle, the PyTorch fidelity check, racecheck of a whole
# run, then bench/suite.sh; logs under $OUT.
set -u
OUT=${OUT:-gpu-out}; mkdir -p "$OUT"
B=./src/bitprobe
(autoreconf -fi && ./configure -q && make -j"$(nproc)") >"$OUT/build.txt" 2>&1 || { echo BUILD FAILED; tail -20 "$OUT/build.txt"; exit 1; }
$B env
ldd $B | grep -i -E "cuda|cublas" || echo "ldd: no CUDA library linked"
make -j"$(nproc)" check >"$OUT/check.txt" 2>&1; echo "make check: exit $?"; grep -E '^(# |FAIL|ERROR)' "$OUT/check.txt"
for f in tests/*.log tests/cli/*.log; do grep -l -E '^(FAIL|ERROR)' "$f" >/dev/null 2>&1 && { echo "--- $f"; tail -30 "$f"; }; done
$B run --device cpu,cuda,oracle --quiet >"$OUT/run.txt" 2>&1; echo "run vs goldens: exit $?"; tail -1 "$OUT/run.txt"
$B run --device cuda --no-golden --save /tmp/b --intermediates --quiet >/dev/null
python3 tests/fidelity/torch_probe.py /tmp/b --probes probes >"$OUT/fidelity.txt" 2>&1; echo "fidelity: exit $?"; grep -E "^FAIL|^fidelity" "$OUT/fidelity.txt" | tail -3
for tool in memcheck racecheck; do
  timeout 120 compute-sanitizer --tool $tool --error-exitcode 9 $B run --device cpu,cuda,oracle --quiet >/dev/null 2>"$OUT/san-$tool.txt"
  echo "run cpu,cuda,oracle under $tool: exit $?"; grep -E "SUMMARY" "$OUT/san-$tool.txt"
done
$B run --device cpu,cuda,oracle --quiet --timing 2>"$OUT/timing.txt" >/dev/null; cat "$OUT/timing.txt"
python3 - "$B" <<'PY'
import subprocess, sys, time
# How long the process takes to exit after main printed its timing.
for dev in ("cuda", "cpu,cuda,oracle", "cpu,oracle"):
    t0 = time.monotonic()
    p = subprocess.Popen([sys.argv[1], "run", "--device", dev, "--quiet", "--timing"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t_total = None
    for line in p.stderr:
        if line.strip().startswith("total"):
            t_total = time.monotonic()
            inner = line.strip()
    p.wait()
    t1 = time.monotonic()
    print(f"{dev}: wall {t1 - t0:.3f} s, {inner}; after main's last line {t1 - t_total:.3f} s")
PY
if command -v nsys >/dev/null 2>&1; then
  timeout 200 nsys profile -o "$OUT/run" --force-overwrite true --stats=true $B run --device cpu,cuda,oracle --quiet >"$OUT/nsys.txt" 2>&1
  echo "nsys: exit $?"; grep -A25 "cuda_api_sum" "$OUT/nsys.txt" | head -30
else
  echo "no nsys; $(command -v ncu || echo no ncu)"
fi
SUITE_RUNS=${SUITE_RUNS:-5} sh bench/suite.sh 2>&1 | tee "$OUT/suite.txt" | tail -22
