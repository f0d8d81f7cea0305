# The differential fuzzer's machinery on the CPU (tests/refs/
# fuzz_torch.py), where a python3 with torch is installed (else SKIP): a
# seed gives the same probes twice, bitprobe loads every generated probe,
# the replay's counts add up, and every op of `bitprobe list --ops --json`
# (but load, which needs a file) is drawn in an instance bitprobe runs and
# has a PyTorch replay: a new op needs its line in probe_torch_ops.py, and
# a rule in fuzz_rules.py where the generic one cannot draw it.  Bit identity with this PyTorch is not required
# here (an old PyTorch rounds some scalars otherwise): fuzz_gpu.sh requires
# it against the PyTorch the goldens are measured with.
. "$top_srcdir/tests/cli/lib.sh"
# the Python found, with its torch's version and whether it has MKL (one
# start-up: importing torch takes about a CPU second)
PY=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    [ -n "$p" ] && facts=$("$p" -c 'import torch, numpy
print(torch.__version__, int(torch.backends.mkl.is_available()))' 2>/dev/null) &&
        { PY=$p; break; }
done
[ -n "$PY" ] || { echo "no python3 with torch: SKIP"; exit 77; }
torch_version=${facts% *} mkl=${facts#* }
F="$top_srcdir/tests/refs/fuzz_torch.py"
for w in a b; do
    "$PY" "$F" run --bitprobe "$BITPROBE" --seed 3 --probes 6 --ops 25 --small --devices cpu \
        --out "$TMP/$w" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    ntests=$((ntests + 1))
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "fuzz_torch.py run: exit $rc"
done
cmp -s "$TMP/a/specs.json" "$TMP/b/specs.json" || fail "seed 3 gave other probes the second time"
out_has "fuzz: seed 3, 6 probes"
out_lacks "no PyTorch replay"
"$PY" - "$TMP/a/summary.json" <<'PY' || fail "summary.json"
import json, sys
s = json.load(open(sys.argv[1]))
n = sum(c[-1] for c in s["counts"])
identical = sum(c[-1] for c in s["counts"] if c[3] == "identical")
assert s["probes"] >= 5 and n > 200 and identical > n // 2, (s["probes"], n, identical)
assert all(c[3] != "no-replay" for c in s["counts"])
PY
"$PY" "$F" run --bitprobe "$BITPROBE" --seed 4 --each-op 2 --ops 10 --small --devices cpu \
    --out "$TMP/each" >"$TMP/out" 2>"$TMP/err"
rc=$?
ntests=$((ntests + 1))
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "fuzz_torch.py run --each-op: exit $rc"
if grep -q "FAIL coverage\|no PyTorch replay" "$TMP/out"; then
    fail "$(grep "FAIL coverage\|no PyTorch replay\|not drawn in this run" "$TMP/out")"
fi
# model code (fuzz_models.py), two batches at once (--jobs: results cross
# processes), then the account: the version compared against, every
# exclusion with a reason, the GEMM rates per shape class
"$PY" "$top_srcdir/tests/refs/fuzz_models.py" --seed 5 --count 2 >"$TMP/out" ||
    fail "fuzz_models.py"
out_has '"name": "fm5-0001"'
"$PY" "$F" run --bitprobe "$BITPROBE" --seed 5 --probes 6 --models 1 --jobs 2 --batch 3 \
    --devices cpu --out "$TMP/models" >"$TMP/out" 2>"$TMP/err"
rc=$?
ntests=$((ntests + 1))
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "fuzz_torch.py run --models 1 --jobs 2: exit $rc"
! grep -q Traceback "$TMP/err" || fail "fuzz_torch.py run --models 1 --jobs 2: $(tail -1 "$TMP/err")"
out_has "compared against PyTorch $torch_version"
"$PY" "$top_srcdir/tests/refs/fuzz_account.py" "$TMP/models/summary.json" >"$TMP/out" ||
    fail "fuzz_account.py"
out_has "Compared against PyTorch"
out_has "| set aside as | device | op | count | reason |"
out_has "| shape class |"
[ "$mkl" = 1 ] || out_has "not MKL's"
"$PY" - "$TMP/out" <<'PY' || fail "an exclusion row without a count or reason"
import sys
rows = [l for l in open(sys.argv[1]) if l.startswith("| ") and l.count("|") == 6 and
        not l.startswith("| set aside") and not l.startswith("| device")]
aside = [r.split("|")[1:-1] for r in rows if r.split("|")[1].strip() in
         ("mkl", "unpinned", "version", "old-pytorch", "unsupported", "refused", "no-replay",
          "replay-error", "own", "dropped")]
assert aside, "no exclusion rows"
for c in aside:
    assert int(c[3]) > 0 and len(c[4].strip()) > 10, c
PY
echo "6 probes twice, identical; every op of the table drawn and replayed; model code"
done_ok
