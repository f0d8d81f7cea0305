#!/bin/sh
# Every GPU of a host at once: the screen of all of them, the consensus of
# their runs, the sharded init over W real ranks (W = 2, 4, 8 up to the
# GPUs here, or $RANKS) and the all-reduce per NCCL_ALGO (the environment's
# choice, Ring, Tree) with bits and oracle verdicts, launched by bitprobe
# and by torchrun where it is installed; NCCL's own log of the algorithms
# it picked is kept (NCCL_DEBUG=INFO).  Logs and JSON under $OUT (default
# /tmp/out); exit 1 when a step fails, 77 with fewer than 2 GPUs.
#   sh tests/gpu/multigpu.sh          (after building with CUDA)
#   RANKS="2 8" sh tests/gpu/multigpu.sh
. tests/gpu/steps.sh
B=./src/bitprobe
. tests/gpu/nccl_lib.sh
NGPU=$("$B" env --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpu"].get("devices", [])))' 2>/dev/null || echo 0)
[ "$NGPU" -ge 2 ] || { echo "$NGPU GPU(s) here, 2 or more needed: SKIP"; exit 77; }
step "environment" 0 "$B" env
cat "$log"
echo "GPUs: $NGPU"
if [ -z "${RANKS:-}" ]; then
    RANKS=
    for w in 2 4 8; do [ "$w" -le "$NGPU" ] && RANKS="$RANKS $w"; done
fi

# --- the screen of every GPU at once -----------------------------------------
t0=$(date +%s.%N)
TAIL=$((NGPU + 4)) step "screen --gpu all" 0 "$B" screen --gpu all --json "$OUT/screen.json"
t1=$(date +%s.%N)
S=$log
awk -v a="$t0" -v b="$t1" -v n="$NGPU" 'BEGIN { printf "screen wall time: %.2f s for %d GPUs at once (budget 10 s per GPU)\n", b - a, n }' |
    tee "$OUT/screen-time.txt"
check "screen: PASS, every SM covered" grep -q "^screen: PASS: $NGPU GPUs, .*every SM covered" "$S"
check "screen: within 10 s" awk -v a="$t0" -v b="$t1" 'BEGIN { exit !(b - a < 10) }'
LASTGPU=$((NGPU - 1))
TAIL=6 step "screen: a wrong bit on the last GPU only" 1 env BP_SCREEN_INJECT=$LASTGPU:0:fma-fp32 \
    "$B" screen --gpu all --test fma-fp32,mma-fp16
check "  named: GPU $LASTGPU SM 0 (fma-fp32), 1 of $NGPU GPUs" \
    grep -q "^screen: FAIL: wrong bits on GPU $LASTGPU SM 0 (fma-fp32) (1 of $NGPU GPUs" "$log"
TAIL=3 step "screen --gpu 0,$LASTGPU" 0 "$B" screen --gpu 0,$LASTGPU --test div-fp32,smem

# --- consensus of the GPUs ----------------------------------------------------
if "$B" run --help 2>/dev/null | grep -q -- "--gpu .*all"; then
    TAIL=12 step "run --device cpu,cuda --gpu all" 0 "$B" run --device cpu,cuda --gpu all --no-golden \
        --save "$OUT/run-all"
    TAIL=6 step "diff --consensus of run --gpu all's bundle" 0 "$B" diff --consensus "$OUT/run-all"
fi
for g in $(seq 0 $LASTGPU); do
    step "run --device cpu,cuda --gpu $g --save" 0 "$B" run --device cpu,cuda --gpu $g --no-golden --quiet \
        --save "$OUT/run-gpu$g"
done
TAIL=8 step "diff --consensus of the $NGPU GPUs' runs" 0 "$B" diff --consensus "$OUT"/run-gpu*

# --- sharded init over real ranks, all-reduce ring vs tree -------------------
for W in $RANKS; do
    TAIL=$((W + 12)) step "stack --ranks $W (tiny)" 0 env NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING \
        "$B" stack --ranks $W --json "$OUT/ranks$W-tiny.json"
    grep -E "NCCL INFO .*(Algo|algorithm|NCCL version)" "$log" | head -20 >"$OUT/ranks$W-nccl-algos.txt"
    check "  W=$W: gathered = unsharded = emulation" grep -q "are bit-identical to the unsharded init and to the one-device emulation" "$log"
    TAIL=$((W + 12)) step "stack --ranks $W (llama2-7b)" 0 "$B" stack --ranks $W --preset llama2-7b \
        --json "$OUT/ranks$W-llama2.json"
    TAIL=8 step "all-reduce, W=$W, fp32 partials" 0 "$B" stack --ranks $W --no-params --dtype fp32 \
        --preset llama2-7b --json "$OUT/ranks$W-llama2-fp32.json"
    if command -v torchrun >/dev/null 2>&1; then
        TAIL=8 step "torchrun --nproc_per_node $W bitprobe stack --ranks $W" 0 torchrun --standalone \
            --nproc_per_node $W --no-python "$B" stack --ranks $W --no-oracle
    fi
    TAIL=4 step "W=$W, the ids through a file (launcher variables set by hand)" 0 sh -c '
        B=$1 W=$2 F=$3; pids=
        for r in $(seq 0 $((W - 1))); do
            RANK=$r WORLD_SIZE=$W LOCAL_RANK=$r BP_NCCL_ID_FILE=$F "$B" stack --ranks $W --no-tp \
                >"$F.out$r" 2>&1 & pids="$pids $!"
        done
        rc=0; for p in $pids; do wait $p || rc=1; done; cat "$F.out0"; exit $rc' sh "$B" "$W" "$OUT/nccl-$W.id"
done
echo "== the all-reduce tables (bits vs unsharded, vs the first algorithm, vs the oracle):"
for f in "$OUT"/ranks*.json; do
    python3 - "$f" <<'PYEOF' || true
import json, sys
r = json.load(open(sys.argv[1]))
t = r.get("tp") or {}
print("%s: W=%d NCCL %s %s %s" % (sys.argv[1].split("/")[-1], r["world"], r["nccl"], r["dtype"], t.get("weight")))
for a in t.get("algos", []):
    if not a["ran"]:
        print("  %-8s not run: %s" % (a["algo"], a["error"]))
        continue
    f = lambda c: "-" if not c else "%d of %d differ (max %d ulp)" % (c["differ"], c["elements"], c["max_ulp"])
    print("  %-8s vs unsharded %s; vs first %s; vs oracle %s; nearer/farther %d/%d" % (
        a["algo"], f(a["vs_unsharded"]), f(a["vs_first"]), f(a["vs_oracle"]),
        a["nearer_oracle"], a["farther_oracle"]))
PYEOF
done | tee "$OUT/allreduce-tables.txt"
finish
