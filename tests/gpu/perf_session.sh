#!/bin/sh
# GPU performance pass: build, the test suite (BP_REQUIRE_GPU=1), the run
# against every golden on cpu, cuda and oracle, the PyTorch fidelity check,
# memcheck and racecheck of a whole run, where the time goes (--timing,
# process exit, nsys where installed), then bench/suite.sh.  One log per
# step under $OUT (default /tmp/out); exit 1 when any step fails.
. tests/gpu/steps.sh
B=./src/bitprobe
J=$(nproc)
step build 0 sh -c "autoreconf -fi && ./configure -q && make -j$J" || finish
step env 0 $B env
step "CUDA libraries linked" 0 sh -c "ldd $B | grep -i -E 'cuda|cublas' || echo 'ldd: no CUDA library linked'"
step "make check (BP_REQUIRE_GPU=1)" 0 env BP_REQUIRE_GPU=1 make -j"$J" check
step "run cpu,cuda,oracle vs goldens" 0 $B run --device cpu,cuda,oracle --quiet
step "cuda bundle" 0 $B run --device cuda --no-golden --save "$OUT/bundle" --intermediates --quiet
step "fidelity: torch_probe.py" 0 python3 tests/refs/torch_probe.py "$OUT/bundle" --probes probes
for tool in memcheck racecheck; do
    step "run cpu,cuda,oracle under $tool" 0 timeout 120 \
        compute-sanitizer --tool $tool --error-exitcode 9 $B run --device cpu,cuda,oracle --quiet
done
TAIL=30 step "--timing" 0 $B run --device cpu,cuda,oracle --quiet --timing
TAIL=3 step "process exit after main" 0 python3 - "$B" <<'PY'
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
    if p.returncode:
        sys.exit(p.returncode)
PY
if command -v nsys >/dev/null 2>&1; then
    TAIL=30 step nsys 0 timeout 200 nsys profile -o "$OUT/run" --force-overwrite true --stats=true \
        $B run --device cpu,cuda,oracle --quiet
else
    echo "no nsys; $(command -v ncu || echo no ncu)"
fi
TAIL=22 step "bench/suite.sh" 0 env SUITE_RUNS="${SUITE_RUNS:-5}" sh bench/suite.sh
finish
