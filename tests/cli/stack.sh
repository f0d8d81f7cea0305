# bitprobe stack on the CPU: the tiny preset runs, its SVG parses as XML,
# its JSON has the fields, PyTorch's own RoPE caches give PyTorch's counts,
# and bad options are refused with exit 2.
. "$top_srcdir/tests/cli/lib.sh"
d="$top_srcdir/tests/data/torch"
py="${PYTHON3:-python3}"

run 0 stack --preset tiny --device cpu --plot "$TMP/drift.svg" --json "$TMP/r.json"
out_has "stack: tiny (hidden 256, 4 heads of 64, 8 layers"
out_has "bit-identical to the unsharded parameters (all 75)"
out_has "per layer (hidden state after each block, B vs A):"
out_has "top-1 agreement"
# ok without a policy says what it means: nothing judged
out_has "summary: ok (no --policy: drift reported, not judged)"
"$py" - "$TMP/drift.svg" <<'PY' || fail "the SVG does not parse as XML"
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
text = " ".join(t.text or "" for t in root.iter(ns + "text"))
# small multiples: one panel per metric, its own axis and unit
for want in ("layer (hidden state after the block)", "Drift against depth",
             "mismatched fraction (% of elements)", "max abs diff (value units, log scale)",
             "RMS diff (value units, log scale)", "RMS diff / RMS of A (ratio, log scale)",
             "max rel diff (ratio", "median ulp (ulp", "max ulp (ulp, log scale)", "100%"):
    assert want in text, want
# here: max rel is infinite at every layer (A has zeros) and the median
# ulp 0 at every layer; both said in words, not drawn on an edge
assert "infinite at every layer (side A has zeros)" in text
assert "0 at every layer: at least half the elements bit-identical" in text
assert len(list(root.iter(ns + "polyline"))) == 5
PY
# It renders (librsvg, where installed).
if command -v rsvg-convert >/dev/null 2>&1; then
    rsvg-convert -o "$TMP/drift.png" "$TMP/drift.svg" || fail "rsvg-convert cannot render the plot"
    [ "$(head -c 8 "$TMP/drift.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
        fail "rsvg-convert wrote no PNG"
else
    skip_later "rsvg-convert not installed: the plot's rendering is not checked"
fi
"$py" - "$TMP/r.json" <<'PY' || fail "the JSON report lacks fields"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["stack"]
assert s["config"]["preset"] == "tiny" and s["config"]["layers"] == 8
assert s["dtype"] == "bf16" and s["positions"] == [0, 512]
assert s["params"]["identical"] is True and s["params"]["checked"] == 75
assert [b["name"] for b in s["buffers"]] == ["inv_freq", "cos", "sin"]
assert s["buffers"][0]["mismatched"] == 0 and s["buffers"][1]["mismatched"] > 0
assert len(s["layers"]) == 8
for l in s["layers"]:
    for k in ("layer", "mismatched_fraction", "max_abs", "max_rel",
              "median_ulp", "max_ulp", "rms_diff"):
        assert k in l, k
f = s["final"]
for k in ("logits_max_abs", "logprob_max_abs", "top1_agree", "top1_total", "mean_kl"):
    assert k in f, k
assert f["top1_total"] == 512 and s["pass"] is True
assert len(s["timings"]["forward_s"]) == 2
# the common report holds the comparisons
kinds = {r["probe"] for r in j["results"]}
assert {"stack.buffers", "stack.params", "stack.layers", "stack.final"} <= kinds, kinds
PY

# --json - writes the JSON alone to stdout
run 0 stack --layers 1 --positions 0:16 --json - --quiet
"$py" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" || fail "--json - is not JSON"

# both sides unsharded: every layer bit-identical; --repeat checks run to run
run 0 stack --layers 2 --positions 256:320 --sides unsharded,unsharded --repeat 2
out_has "0.0000%"
out_lacks "DIFFER"
out_has "repeat: 2 forwards of A bit-identical"

# a policy that the bf16 drift exceeds: exit 1; a loose one passes
run 1 stack --layers 2 --positions 256:320 --policy logprob_abs=1e-9
out_has "policy: EXCEEDED: log-prob max abs diff"
run 0 stack --layers 2 --positions 256:320 --policy logprob_abs=10,top1=0
out_has "summary: ok (within --policy)"

# buffer level with PyTorch's own caches (Llama-2 geometry, bf16): exact
run 0 stack --preset llama2-7b --device cpu --dtype bf16 --buffers-only \
    --unsharded-from "$d/rope_cpu.safetensors.gz" --sharded-from "$d/rope_cuda_zero.safetensors.gz"
out_has "329332 of 524288 differ"
out_has "324808 of 524288 differ"
out_has "max abs 2,"
run 0 stack --preset llama2-7b --device cpu --buffers-only \
    --unsharded-from "$d/rope_cpu.safetensors.gz" --sharded-from "$d/rope_cuda_fp32.safetensors.gz"
out_has "88 of 524288 differ"
out_has "116 of 524288 differ"
out_has "max abs 0.00390625"

# --markdown: a ticket-ready report with PyTorch's own counts in its table
# and the text report after it; '-' puts it alone on stdout
run 0 stack --preset llama2-7b --device cpu --dtype bf16 --buffers-only \
    --unsharded-from "$d/rope_cpu.safetensors.gz" --sharded-from "$d/rope_cuda_zero.safetensors.gz" \
    --markdown "$TMP/r.md"
grep -qF '# bitprobe passed: 3 compared (3 differ (informational))' "$TMP/r.md" || fail "markdown title: $(head -1 "$TMP/r.md")"
grep -q '| `stack.buffers` | `cos` | bf16 | .* | 329332 / 524288 |' "$TMP/r.md" || fail "markdown: cos row"
grep -q '| `stack.buffers` | `sin` | bf16 | .* | 324808 / 524288 |' "$TMP/r.md" || fail "markdown: sin row"
grep -q '^## Layer stack' "$TMP/r.md" || fail "markdown: no stack section"
grep -q '329332 of 524288 differ' "$TMP/r.md" || fail "markdown: no text report"
run 1 stack --layers 2 --positions 256:320 --policy logprob_abs=1e-9 --markdown - --quiet
out_has "## Layer stack"
out_has "policy: EXCEEDED: log-prob max abs diff"
head -1 "$TMP/out" | grep -q '^# bitprobe drift: 1 of [0-9]* compared beyond policy' || fail "--markdown - does not start with its title"
run 2 stack --layers 1 --json - --markdown -
err_has "cannot both go to standard output"

# bad options: exit 2 with the reason
run 2 stack --preset llama2-7b --device cpu
err_has "GPU only"
run 2 stack --positions 5:3
err_has "--positions 5:3"
run 2 stack --positions 0:513
err_has "the max positions"
run 2 stack --positions x
err_has "--positions takes A:B"
run 2 stack --unsharded-from "$TMP/missing.safetensors"
err_has "missing.safetensors"
run 2 stack --unsharded-from "$d/rope_cpu.safetensors.gz"
err_has "has shape [4096, 128], the model needs [512, 64]"
run 2 stack --preset gpt2
err_has "unknown preset 'gpt2'"
run 2 stack --dtype int8
run 2 stack --heads 3
err_has "multiple of --heads"
run 2 stack --policy speed=1
err_has "unknown policy key"
run 2 stack --buffers-only --plot "$TMP/x.svg"
run 2 stack extra
done_ok
