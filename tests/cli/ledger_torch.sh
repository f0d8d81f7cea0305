# The recorder and the ledger commands on a real PyTorch program: a small
# Llama-style decoder (tests/ledger_torch/llama_block.py: embedding, RMSNorm,
# RoPE as 1.0 / (base ** (arange / dim)), attention, SwiGLU) recorded twice,
# the second time with its positions cast to bf16 as zero.Init does.
#
# What is right is derived by hand: the positions 0..299 in bf16 (8
# significant bits) are exact up to 256 and rounded to even above, so the
# cast changes the 22 odd positions 257..299, each by 1 (257 -> 256 first);
# the cast is an op of the second run only, in module 'rope', and
# everything computed from the positions afterwards inherits the change.
# Needs a Python with torch (Debian's python3-torch): SKIP without one.
. "$top_srcdir/tests/cli/lib.sh"
find_python torch || { echo "SKIP: no Python with torch (apt-get install python3-torch)"; exit 77; }
export PYTHONPATH="$top_srcdir/python${PYTHONPATH:+:$PYTHONPATH}"
M="$top_srcdir/tests/ledger_torch/llama_block.py"
cd "$TMP" || fail "cd $TMP"

"$PY" "$top_srcdir/tests/ledger_torch/hash_check.py" >hash.txt 2>&1 ||
    { cat hash.txt; fail "the torch-ops hash differs from the Python reference"; }
"$PY" "$top_srcdir/tests/ledger_torch/cache_check.py" >cache.txt 2>&1 ||
    { cat cache.txt; fail "a recorded hash differs from its tensor's bytes (the recorder's caches)"; }
# the native helper (python/libbitprobe_torch.so) and torch ops: one ledger
"$PY" "$top_srcdir/tests/ledger_torch/native_check.py" >native.txt 2>&1
case $? in
0) ;;
77) skip_later "$(cat native.txt)" ;;
*) cat native.txt; fail "the native helper's ledger differs from the torch-ops one" ;;
esac
# the recorder's C extension (python/_bitprobe_rec*.so) and its Python path:
# one ledger
"$PY" "$top_srcdir/tests/ledger_torch/ext_check.py" >ext.txt 2>&1
case $? in
0) ;;
77) skip_later "$(cat ext.txt)" ;;
*) cat ext.txt; fail "the C extension's ledger differs from the Python path's" ;;
esac
# the CUDA hash kernels built for the host, thread by thread, against the
# Python reference (and compiled by nvcc where it is); the recorder's CUDA
# path run on the host with them: the native helper's ledger
"$PY" "$top_srcdir/tests/ledger_torch/cuda_emul.py" >emul.txt 2>&1
case $? in
0) ;;
77) skip_later "$(cat emul.txt)" ;;
*) cat emul.txt; fail "the CUDA hash kernels' host build differs from the Python reference" ;;
esac
"$PY" "$top_srcdir/tests/ledger_torch/cuda_glue.py" >glue.txt 2>&1
case $? in
0) ;;
77) skip_later "$(cat glue.txt)" ;;
*) cat glue.txt; fail "the recorder's CUDA path, run on the host, writes another ledger" ;;
esac
# and without the C extension (each op recorded in Python, the slots'
# fmix64 taken by torch ops)
BITPROBE_TORCH_EXT=0 "$PY" "$top_srcdir/tests/ledger_torch/cuda_glue.py" >glue0.txt 2>&1
case $? in
0|77) ;;
*) cat glue0.txt; fail "the recorder's CUDA path without the C extension writes another ledger" ;;
esac

"$PY" -m bitprobe_torch record -o a.ledger "$M" >rec-a.txt 2>&1 ||
    { cat rec-a.txt; fail "recording A"; }
"$PY" -m bitprobe_torch record -o b.ledger --reference a.ledger "$M" --zero-init \
    >rec-b.txt 2>&1 || { cat rec-b.txt; fail "recording B"; }
grep -q "ops recorded to b.ledger, [0-9]* tensors captured" rec-b.txt ||
    fail "B captured nothing: $(cat rec-b.txt)"
# The format reads in one line of Python.
"$PY" -c 'import json, sys
l = [json.loads(x) for x in open(sys.argv[1])]
assert l[0]["format"] == "bitprobe-ledger" and l[0]["version"] == 1, l[0]
assert l[-1]["end"]["records"] == len(l) - 2 and l[-1]["end"]["status"] == "ok", l[-1]
assert [r["seq"] for r in l[1:-1]] == list(range(len(l) - 2))' b.ledger || fail "ledger format"

run 1 diff a.ledger b.ledger
out_has "first introduced: B#"
grep -q "^first introduced: B#[0-9]* aten::_to_copy in module 'rope' (only in B, out\[0\] differs)$" "$TMP/out" ||
    fail "diff does not name the cast in rope: $(head -3 "$TMP/out")"
out_has "BF16 [300]"
out_has "introduced (1):"
out_has "layers.1.attn"
seq=$(sed -n 's/^first introduced: B#\([0-9]*\) .*/\1/p' "$TMP/out")
run 1 diff a.ledger b.ledger --json r.json
"$PY" - r.json "$seq" <<'PY' || fail "diff's JSON"
import json, sys
r = json.load(open(sys.argv[1]))["ledger"]
f = r["first_introduced"]
assert (f["a"], f["b"], f["op"], f["module"]) == (None, int(sys.argv[2]), "aten::_to_copy", "rope"), f
assert f["via_provenance"] and r["counts"]["introduced"] == 1, r["counts"]
assert r["alignment"]["only_b"] == 1 and r["alignment"]["only_a"] == 0, r["alignment"]
mods = [m["module"] for m in r["modules"]]
assert mods.index("rope") < mods.index("layers.0.attn") < mods.index("layers.1.attn"), mods
# the divergence grows: every output of the last attention but the weight's
# transposes differs
last = r["modules"][mods.index("layers.1.attn")]
assert last["outputs_differ"] > r["modules"][mods.index("rope")]["outputs_differ"], last
PY

mkdir ex
run 1 explain a.ledger b.ledger --out ex --json e.json
out_has "explain B#$seq (only in B) aten::_to_copy in module 'rope': introduced"
out_has "probe: ex/ledger-b$seq-cast.yaml (input x0 and the recorded outputs in ex/ledger-b$seq-cast.safetensors)"
out_has "  oracle  reproduces B's bits"
out_has "  cpu     reproduces B's bits"
out_has "the cast fp32->bf16 changes 22 of 300 elements, at most by 1 (element 257: 257 -> 256)"
out_has "B: BF16 [300]"
out_has "correctly rounded: the oracle's bits, every element"
out_has "verdict: B's op is correctly rounded; reproduced by bitprobe's formulations: B by cpu"
# The probe it wrote runs again by itself, ready for a ticket.
run 0 run "ledger-b$seq-cast" --probes ex --device cpu,oracle --no-golden
"$PY" - e.json <<'PY' || fail "explain's JSON"
import json, sys
e = json.load(open(sys.argv[1]))["ledger_explain"]
assert e["op"] == "aten::_to_copy" and e["verdict"]["B"]["correctly_rounded"], e
assert e["cast_changes"] == {"elements": 22, "of": 300, "max_abs": 1.0}, e["cast_changes"]
PY

# The context manager around the forward only: two runs agree bit for bit.
"$PY" "$M" --record c1.ledger >/dev/null 2>&1 || fail "record c1"
"$PY" "$M" --record c2.ledger >/dev/null 2>&1 || fail "record c2"
run 0 diff c1.ledger c2.ledger
out_has "identical: ledgers A and B agree bit for bit"
[ "$(grep -c '"op":"aten::normal_"' c1.ledger)" = 0 ] || fail "the context manager recorded the model's construction"
done_ok
