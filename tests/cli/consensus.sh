# bitprobe diff --consensus: runs saved on several "hosts" (here: the CPU
# backend, four times, one run altered by hand with tests/tamper.py), the
# groups of identical results, the odd one out named, the JSON, the exit
# status.
. "$top_srcdir/tests/cli/lib.sh"
PY=
for p in "${PYTHON3:-}" python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import json, gzip, zlib' 2>/dev/null && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "no Python 3: SKIP"; exit 77; }
for h in a b c d; do
    run 0 run seed-div unary-sweep --device cpu --no-golden --quiet --save "$TMP/$h"
done
run 0 diff --consensus "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/d"
out_has "consensus: AGREE: 4 runs, 30 tensors, each bit-identical in every run that has it"
# one bit of one run: the majority holds, the odd one is named with its distance
"$PY" "$top_srcdir/tests/tamper.py" "$TMP/c/unary-sweep/cpu-sleef.safetensors.gz" exp.fp32 17 +1 \
    >/dev/null || fail "tamper"
run 1 diff --consensus "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/d"
[ "$(head -n 1 "$TMP/out")" = "consensus: DIFFER: 1 of 4 runs is an outlier in 1 of 30 tensors (29 agree in every run)" ] ||
    fail "the verdict line"
out_has "unary-sweep/cpu-sleef/exp.fp32 fp32 [4096]"
out_has "3 agree "
out_has "$TMP/a, $TMP/b, $TMP/d"
out_has "1 odd "
out_has "$TMP/c: 1 of 4096 differ, max 1 ulp, first at [17]"
grep -qE "^  $TMP/c +1 outlier tensor  CPU \(sleef-u10" "$TMP/out" || fail "the runs list"
run 1 diff --consensus "$TMP/a" "$TMP/c" --quiet
out_has "consensus: DIFFER: no majority in 1 of 30 tensors"
out_has "1 other "
out_lacks "runs:"
# the subcommand is the mode: the same report, byte for byte
cp "$TMP/out" "$TMP/mode.out"
run 1 diff consensus "$TMP/a" "$TMP/c" -q
cmp -s "$TMP/out" "$TMP/mode.out" || fail "diff consensus and diff --consensus differ"
run 2 diff consensus "$TMP/a" "$TMP/b" --map x=y
err_has "bitprobe diff consensus: unknown option '--map'"
run 1 diff --consensus "$TMP/a" "$TMP/b" "$TMP/c" "$TMP/d" --json "$TMP/c.json"
"$PY" - "$TMP/c.json" "$TMP" <<'PYEOF' || fail "the JSON"
import json, sys
r = json.load(open(sys.argv[1])); t = sys.argv[2]
assert r["verdict"] == "differ" and r["exit_status"] == 1
assert r["tally"] == {"items": 30, "unanimous": 29, "outliers": 1, "split": 0,
                      "partial": 0, "mixed": 0}, r["tally"]
(it,) = r["items"]
assert it["item"] == "unary-sweep/cpu-sleef/exp.fp32" and it["outliers"] == [t + "/c"]
assert [g["size"] for g in it["groups"]] == [3, 1]
assert [m["outlier_items"] for m in r["members"]] == [0, 0, 1, 0]
PYEOF
# A run with one probe fewer: noted, not a difference.
run 0 run seed-div --device cpu --no-golden --quiet --save "$TMP/e"
run 0 diff --consensus "$TMP/a" "$TMP/e"
out_has "note: 27 tensors are missing from some runs"
# run --gpu: several GPUs as backends of their own (compared on a GPU
# machine by tests/gpu/); here, what is asked is checked.
run 2 run seed-div --device cpu --gpu 0,1
err_has "--gpu 0,1: --device names no cuda (or auto)"
run 2 run seed-div --gpu one
err_has "--gpu needs a device index (0 to 1023), all or a list (0,2), not 'one'"
if ! "$BITPROBE" env --json | grep -q '"devices"'; then
    run 2 run seed-div --gpu all
    run 2 run seed-div --device cuda:0
fi
run 2 run seed-div --device cuda:x
err_has "backend 'cuda:x': a device index must follow 'cuda:'"
# Bad use.
run 2 diff --consensus "$TMP/a"
err_has "--consensus needs at least two runs: '$TMP/a' holds one"
run 2 diff --consensus
err_has "--consensus needs saved runs"
run 2 diff --consensus "$TMP/a" "$TMP/a"
err_has "is named twice"
run 2 diff --consensus "$TMP/a" "$TMP/none"
err_has "cannot read '$TMP/none'"
run 2 diff --consensus "$TMP/a" "$TMP/b" --map x=y
err_has "does not apply"
done_ok
