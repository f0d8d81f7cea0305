# bitprobe invariance --collective on the CPU's emulation: two ranks give
# one result whatever the configuration (one addition), all-gathers are
# copies; four ranks split Ring from Tree with their orders named, checked
# and arbitrated; every report carries the verdict; repeats and fresh
# processes agree; bad options are refused with their message; NCCL
# without GPUs says why.
. "$top_srcdir/tests/cli/lib.sh"
unset RANK WORLD_SIZE LOCAL_RANK OMPI_COMM_WORLD_RANK OMPI_COMM_WORLD_SIZE SLURM_PROCID \
    SLURM_NTASKS BP_RANKS_CHILD BP_NCCL_ID BP_NCCL_ID_FILE TORCHELASTIC_RUN_ID MASTER_ADDR \
    MASTER_PORT BP_COLL_ALLOC

emu="--engine emulate --bytes 1K:16K:pow2"

# two ranks: one addition, no order: every configuration, one group
run 0 invariance --collective all_reduce,reduce_scatter $emu --ranks 2 --dtype fp32,bf16 \
    --algo Ring,Tree --proto LL,Simple --redop all
head -1 "$TMP/out" | grep -q '^invariance: passed: 8 collective maps' ||
    fail "verdict: $(head -1 "$TMP/out")"
[ "$(grep -c 'one result group everywhere' "$TMP/out")" -eq 8 ] || fail "8 maps of one group expected"
out_has "order at 16K: r0+r1 everywhere; one addition: no order to infer"
out_has "the order recomputes all 4096 of 4096 elements of the values, bit for bit"
out_lacks "the order recomputes 4"
# an all-gather is a copy
run 0 invariance --collective all_gather $emu --ranks 4 --dtype fp16
out_has "copies: every rank's output equals the inputs bit for bit at every size"

# the configurations that cannot run: one line per reason, not one per configuration
run 1 invariance --collective all_reduce $emu --ranks 4 --dtype fp32 --algo all --proto all
out_has "  not available: PAT/LL, PAT/LL128, PAT/Simple: the emulation models Ring, Tree, Pairwise and Rank, not PAT"
[ "$(grep -c 'not available:' "$TMP/out")" -eq 5 ] || fail "5 lines of configurations not available expected"

# four ranks: Ring's chains start after the piece's owner, Tree's chain
# ends at rank 0; the emulated Simple ring has one piece below 128K
run 1 invariance --collective all_reduce $emu --ranks 4 --dtype fp32 --algo Ring,Tree \
    --proto LL,Simple --repeat 2 --processes 1 --json "$TMP/r.json" --junit "$TMP/r.xml" \
    --markdown "$TMP/r.md" --svg "$TMP/r.svg"
out_has "invariance: DRIFT: 1 of 1 collective maps break invariance (policy exact)"
out_has "all_reduce fp32 sum, 4 ranks: 5 sizes 1K-16K x 5 configurations: up to 3 result groups"
out_has "    group 0: default, Ring/Simple"
out_has "      order at 16K: ((r1+r2)+r3)+r0 everywhere; every partial sum rounded to fp32"
out_has "    group 2: Tree/LL, Tree/Simple: at 16K"
out_has "      order at 16K: ((r2+r3)+r1)+r0 everywhere"
out_has "      the order recomputes all 4092 of 4092 elements of the values, bit for bit"
# LL's pieces of 1K elements: four chains in turn
out_has "4 orders in 4 runs of 1024 elements"
out_has "    4K|8K: the configurations regroup: 2 groups -> 3"
out_has "    oracle at 16K (the exact sum rounded once to fp32, 4096 elements):"
out_has "closest to the exact result: group"
out_has "run to run: 2 runs per cell (each after another allocation pattern), 1 fresh process: the same bits every time"
out_has "  all_reduce fp32 sum, 4 ranks: 12 of 25 cells break invariance (first: Tree/LL at 1K)"
grep -q '<testsuites name="bitprobe" tests="12" failures="7"' "$TMP/r.xml" ||
    fail "JUnit: $(grep -m1 testsuite "$TMP/r.xml")"
grep -q '^## Invariance map' "$TMP/r.md" || fail "Markdown lacks the map"
grep -q 'Ring/LL' "$TMP/r.md" || fail "Markdown lacks the configurations"
grep -q '</svg>' "$TMP/r.svg" || fail "SVG incomplete"
grep -q 'message size (bytes)' "$TMP/r.svg" || fail "SVG lacks the size axis"
if command -v rsvg-convert >/dev/null 2>&1; then
    rsvg-convert -o "$TMP/r.png" "$TMP/r.svg" || fail "rsvg-convert cannot render the SVG"
fi
if find_python; then
    py - "$TMP/r.json" <<'EOF' || fail "JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
c = r["invariance"]["collectives"]
assert len(c) == 1, len(c)
m = c[0]
assert (m["collective"], m["dtype"], m["op"], m["world"], m["engine"]) == \
    ("all_reduce", "fp32", "sum", 4, "emulate"), m
assert m["configurations"] == ["default", "Ring/LL", "Ring/Simple", "Tree/LL", "Tree/Simple"]
assert [s["bytes"] for s in m["sizes"]] == [1024, 2048, 4096, 8192, 16384]
last = m["sizes"][-1]
g = last["groups"]
assert [x["members"] for x in g] == [["default", "Ring/Simple"], ["Ring/LL"],
                                     ["Tree/LL", "Tree/Simple"]], g
assert g[2]["order"]["orders"][0]["order"] == "((r2+r3)+r1)+r0"
assert g[2]["order"]["recomputed"]["same"] == g[2]["order"]["recomputed"]["checked"] == 4092
assert 0 < g[2]["mismatched"] < 4096 and g[2]["pass"] is False
assert g[2]["oracle"]["sampled"] == 4096
for cell in last["cells"]:
    assert cell["state"] == "ran" and cell["repeats"] == 2 and cell["repeat_differ"] == 0
    assert cell["processes"] == 1 and cell["process_differ"] == 0
assert {b["kind"] for b in m["boundaries"]} == {"regroup", "order"}
assert r["verdict"] == "fail" if "verdict" in r else True
EOF
else
    skip_later "no python3: the JSON report is not checked"
fi

# the GPU scripts' checker (tests/refs/coll_check.py) on this report,
# and its comparison of stack --ranks with the map on reports written here:
# Ring/LL shares default's bits at 1K, Tree/LL does not
if [ -n "${PY:-}" ]; then
    chk="$top_srcdir/tests/refs/coll_check.py"
    "$PY" "$chk" maps "$TMP/r.json" >"$TMP/chk" || fail "coll_check maps: $(tail -3 "$TMP/chk")"
    grep -q "1 collective maps, 25 cells ran, 0 problems" "$TMP/chk" || fail "coll_check: $(tail -1 "$TMP/chk")"
    cat >"$TMP/stack.json" <<'EOF'
{"world": 4, "dtype": "fp32", "nccl": "emulated", "tp": {"rows": 16, "n": 16, "algos": [
 {"algo": "default", "ran": true, "group": 0, "vs_unsharded": {"elements": 256, "differ": 9, "max_ulp": 2}},
 {"algo": "Ring/LL", "ran": true, "group": 0, "vs_unsharded": {"elements": 256, "differ": 9, "max_ulp": 2}},
 {"algo": "Tree/LL", "ran": true, "group": 2, "vs_unsharded": {"elements": 256, "differ": 12, "max_ulp": 3}}]}}
EOF
    REQUIRE_BOTH=1 "$PY" "$chk" stack "$TMP/stack.json" "$TMP/r.json" >"$TMP/chk" ||
        fail "coll_check stack: $(cat "$TMP/chk")"
    grep -q "default vs Tree/LL: different bits, different drift (as the map says)" "$TMP/chk" ||
        fail "coll_check stack: $(cat "$TMP/chk")"
    sed 's/"group": 2/"group": 0/' "$TMP/stack.json" >"$TMP/stack-bad.json"
    "$PY" "$chk" stack "$TMP/stack-bad.json" "$TMP/r.json" >"$TMP/chk" && fail "coll_check accepted a disagreement"
    grep -q "PROBLEM: default vs Tree/LL: the map says different, the stack's bits are equal" "$TMP/chk" ||
        fail "coll_check stack: $(cat "$TMP/chk")"
fi

# bf16 keeps its partial sums in bf16 on every hop: named
run 1 invariance --collective reduce_scatter $emu --ranks 4 --dtype bf16 --algo Ring,Tree --proto Simple
out_has "every partial sum rounded to bf16"
# reduce-scatter: rank c's piece ends at rank c
out_has "4 orders in 4 runs"

# the emulation's own orders, and --quiet
run 1 invariance --collective all_reduce $emu --ranks 8 --dtype fp32 --algo Pairwise,Rank --proto Simple --quiet
[ "$(wc -l <"$TMP/out")" -eq 3 ] || fail "--quiet: verdict and failures: $(cat "$TMP/out")"

# bad options
run 2 invariance --collective broadcast $emu
err_has "--collective: unknown collective 'broadcast' (all_reduce, reduce_scatter, all_gather, all)"
run 2 invariance --collective all_reduce $emu --redop max
err_has "--redop: unknown reduction 'max' (sum, avg, all)"
run 2 invariance --collective all_reduce --engine emulate --bytes 64K:1K
err_has "--bytes: '64K:1K' is not A:B or A:B:pow2 with sizes A <= B"
run 2 invariance --collective all_reduce --engine emulate --bytes 12Q
err_has "--bytes: '12Q' is not a size"
run 2 invariance --collective all_reduce $emu --algo Wheel
err_has "--algo: unknown name 'Wheel'"
run 2 invariance --collective all_reduce $emu --proto LL64
err_has "--proto: unknown name 'LL64'"
run 2 invariance --collective all_reduce $emu --channels 0
err_has "--channels: '0' is not default or 1 to 64"
run 2 invariance --collective all_reduce $emu --ranks 0
err_has "--ranks: '0' is not a rank count from 1 to 64"
run 2 invariance --collective all_reduce $emu --ranks 17
err_has "the emulation runs 1 to 16 ranks, not 17"
run 2 invariance --collective all_reduce $emu --dtype tf32
err_has "--collective: tf32 is no collective's dtype"
run 2 invariance --collective all_reduce --engine cublas
err_has "--collective runs on --engine nccl, emulate or auto, not 'cublas'"
run 2 invariance --collective all_reduce $emu --shape 64x64
err_has "--shape sweeps an op; --collective sweeps message sizes and configurations: not both"
run 2 invariance --bytes 1K --engine cpu --shape 32x24 --m 1:4
err_has "--bytes goes with --collective"
run 2 invariance --algo Ring --engine cpu --shape 32x24 --m 1:4
err_has "--algo goes with --collective"

# NCCL needs GPUs; auto falls back to the emulation and says so
if "$BITPROBE" env --json 2>/dev/null | grep -q '"devices"'; then
    echo "a GPU is here: the no-GPU paths are not tested"
else
    run 2 invariance --collective all_reduce --engine nccl --ranks 2 --bytes 1K
    grep -qE "needs CUDA GPUs|built without CUDA" "$TMP/err" || fail "the message does not say why: $(cat "$TMP/err")"
    run 0 invariance --collective all_reduce --ranks 2 --bytes 1K --dtype fp32 --algo Ring --proto Simple
    out_has "note: engine emulate: no GPU here"
    # under a launcher this process is one rank of an NCCL job
    RANK=1 WORLD_SIZE=2 run 2 invariance --collective all_reduce --bytes 1K
    grep -qE "set BP_NCCL_ID_FILE|built without CUDA" "$TMP/err" || fail "launcher: $(cat "$TMP/err")"
fi
done_ok
