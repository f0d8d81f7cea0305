#!/bin/sh
# The acceptance bench of `bitprobe invariance --collective` on real NCCL,
# per rank count W (2 and 4, as the GPUs here allow, or $RANKS; W ranks
# on the first W GPUs through CUDA_VISIBLE_DEVICES, so that a 4-GPU host
# runs both):
#   1. the map, timed (target: at most $TARGET = 300 s per rank count, the
#      whole command: launch, NCCL start-up, every communicator, inputs,
#      probes, the oracle, the reports): all_reduce, reduce_scatter and
#      all_gather in fp32 and bf16 over 1K..256M (powers of two and the
#      sizes models send), every NCCL_ALGO x NCCL_PROTO (the ones NCCL does
#      not run here are results, NVLS kept off unless NCCL_NVLS_ENABLE is
#      set), each cell twice (the second after another allocation
#      pattern); then tests/refs/coll_check.py: every reduction group
#      with its inferred order (recomputing the values' bits) and, where
#      groups differ, the oracle's verdict; every all-gather a bit-exact
#      copy (or the exception named); the ranks agreeing;
#   2. the reference, in the same run: PyTorch's own NCCL calls of the same
#      collectives and sizes, one configuration (bench/collectives_torch.py
#      under torchrun), beside bitprobe's time per configuration;
#   3. on 4 ranks, llama2-7b's o_proj partials (stack --ranks 4 --no-params
#      --dtype fp32: [16, 4096], 256K) under default, Ring and Tree: the
#      stack's bits equal exactly where the map's groups at 256K say so
#      (Tree against Ring, Ring against the default);
#   4. repeatability: the all-reduce of 64K..64M in bf16 and fp32 under
#      default, Ring and Tree, three times in the process (other
#      allocations each time) and in two fresh jobs holding other
#      allocations (NVIDIA/nccl#2360): any change is named (a finding,
#      printed as such, not a failure of the bench).
# GPU machine with 2 or more GPUs only (exit 77 elsewhere); exit 1 when a
# check fails or a map is over its target.  Logs, JSON, SVG, Markdown under
# ${OUT:-/tmp/out}.
#   BITPROBE=src/bitprobe sh bench/collectives.sh
#   RANKS=2 BYTES=1K:64M sh bench/collectives.sh
set -u
BITPROBE=${BITPROBE:-src/bitprobe}
HERE=$(dirname "$0")
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" || exit 2
. "$HERE/lib.sh"
bench_header "bench/collectives.sh: collective maps on NCCL, ${BYTES:-1K:256M}, every algorithm and protocol"
bench_python json
. "$HERE/../tests/gpu/nccl_lib.sh"
CHECK="$HERE/../tests/refs/coll_check.py"
BYTES=${BYTES:-1K:256M}
TARGET=${TARGET:-300}
NGPU=$("$BITPROBE" env --json 2>/dev/null |
    "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["gpu"].get("devices", [])))' 2>/dev/null ||
    echo 0)
[ "$NGPU" -ge 2 ] || { echo "SKIP: $NGPU GPU(s) here, 2 or more needed"; exit 77; }
"$BITPROBE" env | grep -iE "gpu|cuda|driver" | head -10
echo "GPUs: $NGPU; NCCL_NVLS_ENABLE=$NCCL_NVLS_ENABLE"
if [ -z "${RANKS:-}" ]; then
    RANKS=
    for w in 2 4; do [ "$w" -le "$NGPU" ] && RANKS="$RANKS $w"; done
fi
ALL_GPUS=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPU - 1)))}
now() { "$PY" -c 'import time; print("%.3f" % time.time())'; }
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }

for W in $RANKS; do
    export CUDA_VISIBLE_DEVICES=$(echo "$ALL_GPUS" | cut -d, -f1-"$W")
    echo
    echo "== W=$W (CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES)"
    J="$OUT/coll-W$W"
    t0=$(now)
    "$BITPROBE" invariance --collective all --engine nccl --ranks "$W" --dtype fp32,bf16 \
        --bytes "$BYTES" --algo all --proto all --repeat 2 \
        --json "$J.json" --svg "$J.svg" --markdown "$J.md" >"$J.txt" 2>"$J.err"
    rc=$?
    t1=$(now)
    secs=$("$PY" -c "print('%.1f' % ($t1 - $t0))")
    sed -n '1,12p' "$J.txt"
    [ $rc -le 1 ] || { tail -20 "$J.err"; bad "W=$W: invariance exit $rc"; continue; }
    echo "-- W=$W: the map in $secs s (target <= $TARGET s; exit $rc: 1 = configurations differ)"
    "$PY" -c "import sys; sys.exit(0 if $t1 - $t0 <= $TARGET else 1)" ||
        bad "W=$W: the map took $secs s, over $TARGET s"
    "$PY" "$CHECK" maps "$J.json" >"$J.check.txt"
    crc=$?
    cat "$J.check.txt"
    [ $crc -eq 0 ] || bad "W=$W: coll_check maps (see $J.check.txt)"
    # where the time went, and the bare calls' reference
    "$PY" - "$J.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
tot, cfgs = {}, set()
for m in r["invariance"]["collectives"]:
    for s in m["sizes"]:
        for c in s["cells"]:
            if c["state"] == "ran":
                tot[m["collective"]] = tot.get(m["collective"], 0) + c["seconds"]
                cfgs.add(c["config"])
print("cells' seconds by collective: " + ", ".join("%s %.1f" % kv for kv in sorted(tot.items())))
print("configurations that ran: %d; per configuration %.1f s" % (len(cfgs), sum(tot.values()) / max(1, len(cfgs))))
EOF
    if command -v torchrun >/dev/null 2>&1; then
        sizes=$("$PY" -c "import json,sys; m=json.load(open(sys.argv[1]))['invariance']['collectives'][0]; print(','.join(str(s['bytes']) for s in m['sizes']))" "$J.json")
        t2=$(now)
        torchrun --standalone --nproc_per_node "$W" "$HERE/collectives_torch.py" --sizes "$sizes" \
            --dtypes fp32,bf16 >"$J.torch.txt" 2>&1 || bad "W=$W: the PyTorch reference failed"
        t3=$(now)
        echo "reference: $(grep '^torch:' "$J.torch.txt") (PyTorch, NCCL's default configuration, every size once;" \
            "wall $("$PY" -c "print('%.1f' % ($t3 - $t2))") s with start-up)"
    else
        echo "reference: no torchrun here"
    fi
    if [ "$W" -eq 4 ]; then
        echo "-- llama2-7b o_proj partials over 4 ranks, fp32: default, Ring, Tree"
        "$BITPROBE" stack --ranks 4 --no-params --dtype fp32 --preset llama2-7b \
            --algos default,Ring,Tree --json "$OUT/coll-stack4.json" >"$OUT/coll-stack4.txt" 2>&1 ||
            bad "stack --ranks 4 failed: $(tail -3 "$OUT/coll-stack4.txt")"
        sed -n '/tensor-parallel/,$p' "$OUT/coll-stack4.txt"
        REQUIRE_BOTH=1 "$PY" "$CHECK" stack "$OUT/coll-stack4.json" "$J.json" ||
            bad "stack --ranks 4 against the map at 256K"
    fi
    echo "-- run to run: 3 runs in the process, 2 fresh jobs with other allocations"
    R="$OUT/coll-repeat-W$W"
    "$BITPROBE" invariance --collective all_reduce --engine nccl --ranks "$W" --dtype bf16,fp32 \
        --bytes 64K:64M:pow2 --algo default,Ring,Tree --proto default --repeat 3 --processes 2 \
        --json "$R.json" >"$R.txt" 2>&1
    rc=$?
    [ $rc -le 1 ] || bad "W=$W: repeat run exit $rc: $(tail -3 "$R.txt")"
    "$PY" - "$R.json" <<'EOF' || echo "FINDING: W=$W: run-to-run nondeterminism (named above)"
import json, sys
r = json.load(open(sys.argv[1]))
bad = 0
for m in r["invariance"]["collectives"]:
    for s in m["sizes"]:
        for c in s["cells"]:
            if c["repeat_differ"] or c["process_differ"] or c["ranks_differ"]:
                bad += 1
                print("RUN-TO-RUN: %s %s %s at %d bytes: %d of %d repeats, %d of %d fresh jobs, "
                      "%d ranks differ" % (m["collective"], m["dtype"], c["config"], s["bytes"],
                                           c["repeat_differ"], c["repeats"] - 1,
                                           c["process_differ"], c["processes"], c["ranks_differ"]))
print("run to run: %d cells changed" % bad)
sys.exit(1 if bad else 0)
EOF
done
echo
[ $fails -eq 0 ] && { echo "== all checks passed"; exit 0; }
echo "== $fails check(s) FAILED"
exit 1
