# bitprobe init-audit: its options and its errors (exit 2, one line, no
# traceback), and that the command and its Python side agree on the ways
# and the options.  The audits themselves: init_audit_zero.sh (zero.Init,
# the oracle, explain, the effect) and init_audit_meta.sh (meta, to_empty,
# uninitialised memory, buffers only).  Parts that need a Python with torch
# SKIP without one (Debian's python3-torch).
. "$top_srcdir/tests/cli/lib.sh"
export BITPROBE_PYTHONPATH="$top_srcdir/python"
M="$top_srcdir/tests/init_audit"

# ---- the command line, before any Python runs ----
run 0 init-audit --help
out_has "usage: bitprobe init-audit MODEL [--ways LIST]"
out_has "zero-init   inside DeepSpeed's zero.Init"
run 0 help init-audit
out_has "usage: bitprobe init-audit MODEL"
run 2 init-audit
err_has "bitprobe init-audit: needs one MODEL, got 0"
run 2 init-audit a b
err_has "needs one MODEL, got 2"
run 2 init-audit x --ways cpu,gpu
err_has "--ways: unknown way 'gpu'"
run 2 init-audit x --ways ,
err_has "--ways: unknown way ','"
run 2 init-audit x --dtype fp64
err_has "--dtype takes fp32, bf16 or fp16, not 'fp64'"
run 2 init-audit x --tokens 0
err_has "--tokens needs a positive count"
run 2 init-audit x --first -1
err_has "--first needs a count"
run 2 init-audit x --reinit nocolon
err_has "--reinit takes MODULE:CALLABLE"
run 2 init-audit x --qiet
err_has "unknown option '--qiet'; did you mean '--quiet'?"
mkdir "$TMP/adir"
run 2 init-audit x --json "$TMP/adir"
err_has "--json '$TMP/adir': is a directory"
run 2 init-audit x --markdown "$TMP/none/t.md"
err_has "--markdown '$TMP/none/t.md': directory '$TMP/none' does not exist"
: >"$TMP/afile"
run 2 init-audit x -o "$TMP/afile"
err_has "-o '$TMP/afile': not a directory"
# no Python
PYTHON3="$TMP/no-such-python" run 2 init-audit x
err_has "bitprobe init-audit: cannot run '$TMP/no-such-python': No such file or directory (set PYTHON3 to a Python with PyTorch)"
# no package
BITPROBE_PYTHONPATH="$TMP/adir" run 2 init-audit x
err_has "cannot find bitprobe_torch.py (looked in $TMP/adir); set BITPROBE_PYTHONPATH to its directory"

find_python torch || { skip_later "no Python with torch (apt-get install python3-torch)"; done_ok; }
export PYTHON3="$PY"

# ---- the two sides agree: ways and options ----
"$PY" - "$top_srcdir/python" >"$TMP/py.txt" <<'PY' || fail "the Python side's ways and options"
import sys
sys.path.insert(0, sys.argv[1])
from bitprobe_init import audit, ways
print(" ".join(ways.WAYS))
opts = sorted(o for a in audit.parser()._actions for o in a.option_strings if o.startswith("--"))
print(" ".join(o for o in opts if o != "--help"))
PY
"$BITPROBE" init-audit --help >"$TMP/help.txt"
cways=$(sed -n 's/^                    \([a-z][a-z0-9-]*\)  .*/\1/p' "$TMP/help.txt" | tr '\n' ' ' | sed 's/ $//')
[ "$cways" = "$(sed -n 1p "$TMP/py.txt")" ] ||
    fail "the ways differ: --help lists '$cways', ways.py '$(sed -n 1p "$TMP/py.txt")'"
copts=$(sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z-]*\).*/\2/p' "$TMP/help.txt" | sort |
    tr '\n' ' ' | sed 's/ $//')
[ "$copts" = "$(sed -n 2p "$TMP/py.txt")" ] ||
    fail "the options differ: --help has '$copts', the Python side '$(sed -n 2p "$TMP/py.txt")'"
ntests=$((ntests + 2))

# ---- the oracle's formulas: every rope type, against PyTorch running
# transformers' code (tests/init_audit/rope_types.py), in fp32 ----
run 0 init-audit "$M/rope_types.py:model" --ways cpu,cpu-bf16 --dtype fp32 --json "$TMP/rope.json" -q
"$PY" - "$TMP/rope.json" <<'PY' || fail "the RoPE formulas"
import json, sys
r = json.load(open(sys.argv[1]))
assert not r["oracle"]["skipped"] and not r["oracle"]["error"], r["oracle"]
types = sorted(p["rope_type"] for p in r["oracle"]["probes"])
assert types == sorted(["default", "linear", "dynamic", "yarn", "longrope", "llama3", "mrope",
                        "linear-2023"]), types
seen = 0
for g in r["comparisons"][0]["groups"]:
    o = g.get("oracle")
    mod = g["pattern"].split(".")[0].split(":")[0]
    assert o is not None, g["pattern"]
    if mod == "mislabelled":
        assert o.get("formula_mismatch"), (g["pattern"], o)
        continue
    seen += 1
    ulp = o["reference"].get("max_ulp", {}).get("value", 0)
    assert not o.get("formula_mismatch") and ulp <= 2, (g["pattern"], o)
    if g["pattern"].endswith("inv_freq"):
        assert o["verdict"] == "both correctly rounded", (g["pattern"], o["verdict"])
assert seen == 8 + 2 + 12, seen  # 8 inv_freq, 2 caches, cos and sin of 6 forwards (not mrope's)
PY
ntests=$((ntests + 1))

# ---- a Hugging Face config (a directory, or a file of another name),
# through a stand-in transformers (tests/init_audit/hf_stub) ----
mkdir "$TMP/hf"
cat >"$TMP/hf/config.json" <<'EOF'
{"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 64,
 "num_attention_heads": 1, "intermediate_size": 64, "num_hidden_layers": 2,
 "max_position_embeddings": 512, "vocab_size": 64, "rope_theta": 10000.0}
EOF
cp "$TMP/hf/config.json" "$TMP/my-config.json"
PYTHONPATH="$M/hf_stub" run 0 init-audit "$TMP/hf" --ways cpu,cpu-bf16 -q
out_has "init-audit passed: every buffer of cpu-bf16 is bit-identical to cpu's"
PYTHONPATH="$M/hf_stub" run 0 init-audit "$TMP/my-config.json" --ways cpu,cpu-bf16 -q \
    --json "$TMP/hf.json"
"$PY" - "$TMP/hf.json" <<'PY' || fail "the Hugging Face path"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["model"]["kind"] == "hf" and r["model"]["config"]["rope_theta"] == 10000.0, r["model"]
assert [p["rope_type"] for p in r["oracle"]["probes"]] == ["default"], r["oracle"]
PY
ntests=$((ntests + 1))

# ---- a bad MODEL: exit 2, one line, never a traceback ----
bad_model() { # MODEL EXPECTED-MESSAGE
    run 2 init-audit "$1" --ways cpu
    err_has "bitprobe init-audit: $2"
    [ "$(wc -l <"$TMP/err")" -eq 1 ] || fail "more than one line for $1: $(cat "$TMP/err")"
    err_lacks "Traceback"
}
bad_model "$TMP/none.py:build" "'$TMP/none.py:build': no such file '$TMP/none.py'"
bad_model "$TMP/adir" "'$TMP/adir': a directory without config.json"
printf '{"model_type": "llama",' >"$TMP/cut.json"
bad_model "$TMP/cut.json" "'$TMP/cut.json': invalid JSON: "
printf '{"hidden_size": 8}' >"$TMP/notcfg.json"
bad_model "$TMP/notcfg.json" "'$TMP/notcfg.json': not a Hugging Face config (no \"model_type\")"
bad_model "nothing here" "'nothing here' is neither a config.json, a directory holding one, nor MODULE:CALLABLE"
cat >"$TMP/m.py" <<'EOF'
import torch
def not_a_module():
    return torch.zeros(3)
def raises():
    raise RuntimeError("no model today")
EOF
printf 'import no_such_module_here\n' >"$TMP/broken.py"
bad_model "$TMP/m.py:not_a_module" "'$TMP/m.py:not_a_module' returned Tensor, not an nn.Module"
bad_model "$TMP/m.py:missing" "'$TMP/m.py' has no 'missing'"
bad_model "$TMP/broken.py:f" "cannot import '$TMP/broken.py': ModuleNotFoundError: No module named 'no_such_module_here'"
run 2 init-audit "$TMP/m.py:raises" --ways cpu
err_has "bitprobe init-audit: the reference build (cpu) failed: RuntimeError: no model today"
err_lacks "Traceback"
# a Hugging Face config where this Python has no transformers
if ! "$PY" -c "import transformers" >/dev/null 2>&1; then
    bad_model "$M/configs/llama-2-7b" "MODEL '$M/configs/llama-2-7b' is a Hugging Face config, and this Python cannot import transformers: install it, or name a MODULE:CALLABLE"
fi
# no torch: a torch that does not import
mkdir -p "$TMP/notorch/torch"
echo 'raise ImportError("No module named torch (this test hides it)")' >"$TMP/notorch/torch/__init__.py"
PYTHONPATH="$TMP/notorch" run 2 init-audit "$M/llama2023.py:tiny"
err_has "bitprobe_torch: this Python ("
err_has "cannot import torch: No module named torch (this test hides it); install PyTorch, or run a Python that has it (PYTHON3=...)"
err_lacks "Traceback"
# a way that cannot run here, asked for
if ! "$PY" -c "import torch, sys; sys.exit(not torch.cuda.is_available())" 2>/dev/null; then
    run 2 init-audit "$M/llama2023.py:tiny" --ways cpu,cuda
    err_has "bitprobe init-audit: way 'cuda' cannot run here: "
    err_has "(leave it out of --ways)"
fi
# -o: never over someone else's files
mkdir "$TMP/theirs" && : >"$TMP/theirs/keep.txt"
run 2 init-audit "$M/llama2023.py:tiny" --ways cpu -o "$TMP/theirs"
err_has "-o '$TMP/theirs': holds files of something else"
[ -f "$TMP/theirs/keep.txt" ] || fail "-o removed a file it did not write"
done_ok
