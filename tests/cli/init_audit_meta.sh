# bitprobe init-audit on models built on meta and moved with to_empty():
# tests/init_audit/meta_init.py re-initialises its parameters only (the
# RoPE inv_freq keeps to_empty()'s memory: uninitialised), its fixed()
# variant recomputes inv_freq too; llama2023.py's tiny() has no
# re-initialisation for its caches at all.
#
# What is right: the poisoned twin fills every uninitialised allocation
# with 0xff bytes, so its inv_freq must be 0xffffffff in every element
# (checked on the bundle it keeps), while the plain build holds what
# to_empty() left, which is not the formula's values; the fixed model's
# buffers are the CPU build's, bit for bit (bitprobe diff of the kept
# bundles says so too).  SKIP without a Python with torch.
. "$top_srcdir/tests/cli/lib.sh"
export BITPROBE_PYTHONPATH="$top_srcdir/python"
find_python torch || { echo "SKIP: no Python with torch (apt-get install python3-torch)"; exit 77; }
export PYTHON3="$PY"
M="$top_srcdir/tests/init_audit"
O="$TMP/audit"

run 1 init-audit "$M/meta_init.py:uninit" --ways cpu,meta -o "$O" --json "$TMP/r.json"
verdict=$(head -1 "$TMP/out")
[ "$verdict" = "init-audit drift: 1 tensor (1 group) differs from cpu in meta, 1 uninitialised" ] ||
    fail "verdict: $verdict"
out_has "rope.inv_freq: F32 [16]: "
out_has "(uninitialised memory)"
# to_empty() gives the meta way the GPU where there is one
mdev=$("$PY" -c 'import torch; print("cuda:0" if torch.cuda.is_available() else "cpu")')
out_has "uninitialised: rope.inv_freq (RotaryEmbedding, non-persistent buffer): Module.to_empty(device=$mdev) allocated it with aten::empty_like: memory nothing initialised; the re-initialisation, Decoder.init_weights(), did not write it (RotaryEmbedding has no reset_parameters()); a non-persistent buffer: no checkpoint restores it"
out_has "avoid: meta: it leaves rope.inv_freq uninitialised (Decoder.init_weights())"
"$PY" - "$TMP/r.json" "$O" "$M" <<'PY' || fail "the uninitialised buffer"
import json, os, sys
sys.path.insert(0, sys.argv[3])
from st_read import tensors
r = json.load(open(sys.argv[1]))
g = {c["way"]: c for c in r["comparisons"]}["meta"]["groups"][0]
assert g["status"] == "uninitialised" and g["pattern"] == "rope.inv_freq", g
u = g["uninit"]
assert u["alloc"]["op"] == "aten::empty_like" and u["alloc"]["phase"] == "to_empty", u
assert u["reinit"] == "Decoder.init_weights()" and u["evidence"] == "poisoned twin", u
assert r["uninitialised"][0]["way"] == "meta", r["uninitialised"]
# the twin holds the poison in every byte; the plain build does not hold the
# formula's values
twin = tensors(os.path.join(sys.argv[2], "meta-poisoned", "init", "meta-poisoned.safetensors"))
assert twin["rope.inv_freq"][1] == b"\xff" * 64, twin["rope.inv_freq"][1].hex()
plain = tensors(os.path.join(sys.argv[2], "meta", "init", "meta.safetensors"))
ref = tensors(os.path.join(sys.argv[2], "cpu", "init", "cpu.safetensors"))
assert plain["rope.inv_freq"][1] != ref["rope.inv_freq"][1]
PY
ntests=$((ntests + 1))

# the fix: init_weights() recomputes inv_freq
run 0 init-audit "$M/meta_init.py:fixed" --ways cpu,meta -o "$O"
out_has "init-audit passed: every buffer of meta is bit-identical to cpu's"
out_has "uninitialised: none found (the reference and meta built twice"
run 0 diff "$O/cpu" "$O/meta"
run 0 diff "$O/meta" "$O/meta-poisoned"

# buffers only, asked for: 2023-style caches have no re-initialisation on
# meta; then the same decided by the size check (BITPROBE_INIT_AUDIT_MEM:
# the memory it takes as available)
run 1 init-audit "$M/llama2023.py:tiny" --ways cpu,meta --buffers-only -q
out_has "init-audit drift: 3 tensors (3 groups) differ from cpu in meta, 3 uninitialised"
BITPROBE_INIT_AUDIT_MEM=100000 run 1 init-audit "$M/llama2023.py:tiny" --ways cpu,meta --effect
out_has "cost: the model's 37,056 parameters take 148.2 kB in fp32, more than half of this host's available memory (100.0 kB): every way built its parameters on meta, buffers only (--params and --effect are off)"
out_has "effect: not measured: parameters on meta (buffers only)"
out_has "to_empty() gave memory to the buffers only"

# --params: the parameters too (in the default dtype bf16 the random init
# draws other values than fp32's, cast)
run 1 init-audit "$M/meta_init.py:fixed" --ways cpu,cpu-bf16 --params --json "$TMP/p.json" -q
"$PY" - "$TMP/p.json" <<'PY' || fail "--params"
import json, sys
r = json.load(open(sys.argv[1]))
gs = r["comparisons"][0]["groups"]
kinds = {g["kind"] for g in gs}
assert kinds == {"buffer", "param"}, kinds
assert [g["status"] for g in gs if g["kind"] == "buffer"] == ["identical"], gs
assert any(g["status"] == "differs" for g in gs if g["kind"] == "param"), gs
PY
ntests=$((ntests + 1))
done_ok
