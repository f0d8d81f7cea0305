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
# ops whose operands and keys the generator must draw valid: an axis where
# it is required (on a 0-d tensor too), rms_norm's and layer_norm's weights
# of the last dimension, sdpa's q [..., L, E], k [..., S, E], v [..., S, Ev]
# and finite scale, GEMMs of one float dtype, a comparison's or pow's number
# within the dtype it is converted to; and what only CUDA refuses, read off
# the probes: no `dtype:` on a GEMM (cuBLAS takes operands of the result's
# dtype), nor on sdpa of a transposed view, nor on a copy kernel's op
focus=cumsum,rms_norm,softmax,log_softmax,sdpa,layer_norm,linear,matmul,bmm,addmm,baddbmm
focus=$focus,eq,ne,lt,le,gt,ge,pow,round,where
"$PY" "$F" run --bitprobe "$BITPROBE" --seed 6 --each-op 5 --ops 12 --small --devices cpu \
    --focus-ops "$focus" --out "$TMP/focus" >"$TMP/out" 2>"$TMP/err"
rc=$?
ntests=$((ntests + 1))
[ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "fuzz_torch.py run --focus-ops: exit $rc"
if grep -E "^dropped.* ($(echo "$focus" | tr , '|')):" "$TMP/out" >"$TMP/drops"; then
    fail "drawn invalid: $(head -n 3 "$TMP/drops")"
fi
"$PY" - "$TMP/focus/specs.json" "$focus" <<'PY' || fail "a focused op not drawn, or a dtype: CUDA refuses"
import collections, json, sys
specs, focus = json.load(open(sys.argv[1])), sys.argv[2].split(",")
n = collections.Counter(op["op"] for s in specs for op in s["ops"])
assert all(n[o] >= 3 for o in focus), n  # each focused op drawn, and kept
views = {(s["name"], op["out"]) for s in specs for op in s["ops"] if op["op"] == "transpose"}
bad = [(s["name"], op) for s in specs for op in s["ops"] if "dtype" in op and
       (op["op"] in ("matmul", "bmm", "linear", "addmm", "baddbmm", "slice", "rotate_half") or
        op["op"] == "sdpa" and any((s["name"], b) in views for b in op["inputs"]))]
assert not bad, bad[:3]
PY
# a whole-tensor CUDA cumsum is required up to 3 of cub's tiles (1920 fp32,
# 896 fp64, 3840 bf16/fp16 values), beyond set aside as "lookback", with
# its own row and reason in the account
"$PY" - "$top_srcdir/tests/refs" <<'PY' || fail "cumsum's requirement or its account row"
import sys
sys.path.insert(0, sys.argv[1])
import torch
import fuzz_account, fuzz_check
from probe_torch_ops import _cumsum_required, LOOKBACK
for dt, tile in ((torch.float32, 1920), (torch.float64, 896), (torch.bfloat16, 3840),
                 (torch.float16, 3840)):
    for shape, ax in (((3 * tile,), 0), ((1, 3 * tile), 1), ((3 * tile, 1), 0)):
        assert _cumsum_required(torch.zeros(shape, dtype=dt), ax, "cuda") is True, (dt, shape)
    for shape, ax in (((3 * tile + 1,), 0), ((1, 3 * tile + 1), -1)):
        assert _cumsum_required(torch.zeros(shape, dtype=dt), ax, "cuda") is LOOKBACK, (dt, shape)
        assert _cumsum_required(torch.zeros(shape, dtype=dt), ax, "cpu") is True
    assert _cumsum_required(torch.zeros((2, 3 * tile + 1), dtype=dt), 1, "cuda") is True
assert _cumsum_required(torch.zeros(10 ** 5, dtype=torch.int64), 0, "cuda") is True
assert not LOOKBACK and LOOKBACK.verdict in fuzz_check.REASONS
s = {"seed": 1, "probes": 1, "env": "torch 2.x", "devices": ["cuda"],
     "counts": [["cuda", "cumsum", "fp32", "identical", 5], ["cuda", "cumsum", "fp32", "lookback", 3],
                ["cuda", "matmul", "fp32", "unpinned", 2]],
     "reasons": fuzz_check.REASONS}
text = fuzz_account.block([s])
rows = [l for l in text.splitlines() if l.startswith("| lookback | cuda | `cumsum` | 3 | ")]
assert len(rows) == 1 and "not reproducible: cub's decoupled look-back" in rows[0], text
assert "| unpinned | cuda | `cumsum` |" not in text, text
assert "| unpinned | cuda | `matmul` | 2 |" in text, text
PY
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
         ("mkl", "unpinned", "lookback", "layout", "version", "old-pytorch", "unsupported",
          "refused", "no-replay",
          "replay-error", "own", "dropped")]
assert aside, "no exclusion rows"
for c in aside:
    assert int(c[3]) > 0 and len(c[4].strip()) > 10, c
PY
# A transpose feeding a sum, directly and through t * 2 (an elementwise
# result keeps its operand's layout): PyTorch sums the view in its memory
# order (52 of 64 rows differ from the contiguous copy's sums on torch
# 1.13), bitprobe sums its contiguous copy: `layout` rows, counted, not a
# pass and not hidden
mkdir -p "$TMP/layout"
cat >"$TMP/layout/lay.yaml" <<'YAML'
name: lay
description: "sum over a transposed view"
dtypes: [fp32]
ops:
  - {out: x, op: normal, shape: [300, 64], seed: 3, mean: 0, std: 100}
  - {out: t, op: transpose, a: x, dim0: 0, dim1: 1}
  - {out: s, op: sum, a: t, axis: 1}
  - {out: u, op: mul, a: t, b: 2.0}
  - {out: s2, op: sum, a: u, axis: 1}
outputs:
  - {name: s}
  - {name: s2}
YAML
"$PY" "$F" shipped --bitprobe "$BITPROBE" --probes "$TMP/layout" --devices cpu \
    >"$TMP/out" 2>&1
ntests=$((ntests + 1))
grep -q "cpu  sum .*fp32 [0-9]*/[0-9]* layout 2" "$TMP/out" ||
    fail "sums over a transposed view, and over t * 2 (which keeps t's layout in PyTorch), are not counted as layout: $(grep -E 'cpu  sum|Traceback' "$TMP/out")"
echo "6 probes twice, identical; every op of the table drawn and replayed; model code; layout"
done_ok
