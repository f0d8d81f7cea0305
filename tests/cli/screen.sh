# bitprobe screen without a GPU: options, and the whole path from the
# kernels' results to the verdict, the text, the JSON and the exit status
# on fake GPUs computed on the host (BP_SCREEN_FAKE), with faults injected
# the way BP_SCREEN_INJECT injects them into a GPU's kernels.
. "$top_srcdir/tests/cli/lib.sh"
unset BP_SCREEN_INJECT BP_SCREEN_FAKE
find_python || skip_later "no Python 3: the JSON report not parsed"

run 0 screen --help
out_has "bitprobe screen [--gpu all|LIST]"
run 0 screen --list
out_has "div-fp32"
out_has "mem-addr"
[ "$(grep -c '^[a-z]' "$TMP/out")" -eq 30 ] || fail "--list: expected a header and 29 tests"
run 2 screen --depth 0
err_has "--depth needs a number of rounds"
run 2 screen --test div-fp32,nope
err_has "unknown test 'nope'"
run 2 screen --test div-fp32,div-fp32
err_has "div-fp32 is named twice"
run 2 screen --bless --no-golden
run 2 screen extra
err_has "unexpected argument 'extra'"

# Without a GPU (and no fake) the screen is trouble, said on stderr.
if "$BITPROBE" screen --test div-fp32 >/dev/null 2>&1; then
    echo "a GPU is usable here: the no-GPU case is not tested"
else
    run 2 screen --test div-fp32
    grep -qiE "cuda|built without" "$TMP/err" || fail "the message does not say why"
    # a CUDA build says what is missing, not that it has no CUDA
    if "$BITPROBE" env --json | grep -q '"cuda": true'; then
        ! grep -q "built without CUDA" "$TMP/err" || fail "a CUDA build claims to have none"
    fi
fi

export BP_SCREEN_FAKE=2x8
run 0 screen
[ "$(head -n 1 "$TMP/out" | cut -c1-14)" = "screen: PASS: " ] || fail "the verdict is not first"
out_has "2 GPUs, 29 tests, every SM covered, no wrong bit"
[ "$(grep -c '^GPU ' "$TMP/out")" -eq 2 ] || fail "expected one line per GPU"
out_has "8/8 SMs  ok"
run 0 screen --gpu 1 --test div-fp32,mma-bf16 -v
[ "$(grep -c '^GPU ' "$TMP/out")" -eq 1 ] || fail "--gpu 1: expected one GPU"
out_has "GPU 1 "
out_has "  mma-bf16     host            8/8 SMs"
run 2 screen --gpu 2
err_has "--gpu 2: there are 2 GPUs here"
run 2 screen --gpu 0,0
err_has "named twice"
run 2 screen --gpu x
err_has "--gpu needs a device index (0 to 1023), all or a list (0,2), not 'x'"

# One injected wrong bit per family: each named by GPU, SM and test.
for spec in "1:6:div-fp32" "0:0:fma-bf16" "1:14:pow-fp32" "0:2:sfu-rsqrt" \
            "0:4:gemm-ffma" "1:8:mma-fp16" "0:10:mem-addr" "1:12:smem"; do
    gpu=${spec%%:*}; rest=${spec#*:}; sm=${rest%%:*}; test=${rest#*:}
    BP_SCREEN_INJECT=$spec run 1 screen --test "$test,div-fp64"
    head -n 1 "$TMP/out" | grep -qF "screen: FAIL: wrong bits on GPU $gpu SM $sm ($test)" ||
        fail "$spec: the verdict does not name GPU $gpu SM $sm ($test)"
    out_has "  GPU $gpu SM $sm"
    out_has "FAIL  1 wrong result on 1 SM"
done
BP_SCREEN_INJECT=0:0:cublas-bf16 run 1 screen --test cublas-bf16
out_has "GPU 0 any SM  cublas-bf16 round 0 index 0: expected"
# Every round repeats the injection: two rounds, two wrong results.
BP_SCREEN_INJECT=0:2:sqrt-fp32 run 1 screen --test sqrt-fp32 --depth 2 --gpu 0
out_has "FAIL  2 wrong results on 1 SM"
out_has "round 1 index 0"
# Injections must reach a kernel: a wrong spec is trouble, not a pass.
BP_SCREEN_INJECT=0:1:div-fp32 run 2 screen --test div-fp32
out_has "screen: TROUBLE: GPU 0: BP_SCREEN_INJECT: GPU 0 has no SM 1"
out_has "0/8 SMs  TROUBLE"
BP_SCREEN_INJECT=5:0:div-fp32 run 2 screen --test div-fp32
err_has "GPU 5:0:div-fp32 is not screened"
BP_SCREEN_INJECT=0:0:smem run 2 screen --test div-fp32
err_has "test 0:0:smem is not screened"
BP_SCREEN_INJECT=0:0 run 2 screen
err_has "BP_SCREEN_INJECT: '0:0' is not GPU:SM:TEST"

# An SM that never runs is trouble; a wrong bit elsewhere still wins.
BP_SCREEN_FAKE=2x8,dead=1:4 run 2 screen --test div-fp32,smem
out_has "screen: TROUBLE: GPU 1: SM 4 never ran its share of div-fp32, smem"
out_has "7/8 SMs  TROUBLE"
BP_SCREEN_FAKE=2x8,dead=1:4 BP_SCREEN_INJECT=0:2:smem run 1 screen --test div-fp32,smem
out_has "  trouble: SM 4 never ran its share"
# Every SM wrong alike: the vote agrees, the oracle's bound does not.
BP_SCREEN_FAKE=1x4,skew=tanh-fp32 run 1 screen --test tanh-fp32 --no-golden
out_has "wrong bits on GPU 0 whole GPU (tanh-fp32)"
out_has "GPU 0 all SMs tanh-fp32   round 0 index 0"
out_has "[oracle bound]"

# JSON for a collector: one row per fault with what names it.
BP_SCREEN_INJECT=1:6:div-fp32 run 1 screen --test div-fp32,exp-fp32 --json "$TMP/r.json"
out_has "screen: FAIL"
py - "$TMP/r.json" <<'PYEOF' || fail "the JSON report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["command"] == "screen" and r["verdict"] == "fail" and r["exit_status"] == 1
assert r["host"] and r["time"].endswith("Z") and r["tests"] == ["div-fp32", "exp-fp32"]
assert len(r["gpus"]) == 2
for g in r["gpus"]:
    for k in ("uuid", "pci_bus_id", "name", "driver", "sms", "verdict", "tests"):
        assert k in g, k
    assert [t["sms_covered"] for t in g["tests"]] == [8, 8]
    assert g["sm_ids"] == list(range(0, 16, 2)) and g["sms"] == 8
assert [g["verdict"] for g in r["gpus"]] == ["pass", "fail"]
(f,) = r["faults"]
assert f["gpu"] == 1 and f["sm"] == 6 and f["test"] == "div-fp32" and f["index"] == 0
assert f["uuid"] == r["gpus"][1]["uuid"] and f["pci_bus_id"] == r["gpus"][1]["pci_bus_id"]
assert int(f["expected"], 16) ^ int(f["got"], 16) == 1
PYEOF
run 0 screen --test div-fp32 --json -
head -c 1 "$TMP/out" | grep -q '{' || fail "--json -: stdout is not the JSON"
out_lacks "screen: PASS"

# Bless from a passing screen, then judge against the golden.
run 0 screen --bless --golden "$TMP/g" --test exp-fp32,sfu-ex2,div-fp32
out_has "blessed $TMP/g/screen/fake.safetensors.gz: 2 golden sweeps from GPU 0"
run 0 screen --golden "$TMP/g" --test exp-fp32,sfu-ex2 -v
out_has "  exp-fp32     golden "
out_lacks "note:"
BP_SCREEN_INJECT=1:2:sfu-ex2 run 1 screen --golden "$TMP/g" --test sfu-ex2
out_has "GPU 1 SM 2    sfu-ex2"
run 0 screen --golden "$TMP/g" --test log-fp32
out_has "note: GPU 0: log-fp32 is not in $TMP/g/screen/fake.safetensors.gz: the SMs vote"
# A failing screen blesses nothing.
BP_SCREEN_INJECT=0:0:exp-fp32 run 1 screen --bless --golden "$TMP/g2" --test exp-fp32
err_has "the screen did not pass: nothing written"
[ -e "$TMP/g2/screen/fake.safetensors.gz" ] && fail "a failing screen wrote a golden"
done_ok
