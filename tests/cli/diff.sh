# bitprobe diff on PyTorch's own RoPE caches (tests/data/torch, written by
# tests/refs/torch_reference.py on an H200): Llama-2 geometry, bf16, built
# on the CPU in fp32 vs built on CUDA with the positions arange in bf16
# (zero.Init).  PyTorch itself counts 329332 cos and 324808 sin of 524288
# elements different, greatest absolute difference 2.0 (info.json there).
. "$top_srcdir/tests/cli/lib.sh"
d="$top_srcdir/tests/data/torch"

run 1 diff "$d/rope_cpu.safetensors.gz" "$d/rope_cuda_zero.safetensors.gz" --json "$TMP/r.json"
out_has "329332 of 524288 differ"
out_has "324808 of 524288 differ"
"${PYTHON3:-python3}" - "$TMP/r.json" <<'PY' || fail "JSON report disagrees with PyTorch's counts"
import json, sys
r = {x["probe"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert r["cos"]["mismatched"] == 329332 and r["cos"]["total"] == 524288, r["cos"]["mismatched"]
assert r["sin"]["mismatched"] == 324808 and r["sin"]["total"] == 524288, r["sin"]["mismatched"]
assert r["cos"]["max_abs"]["value"] == 2.0 and r["sin"]["max_abs"]["value"] == 2.0
# inv_freq: CUDA's powf differs from the CPU at exactly these indices
idx = [m["flat"] for m in r["inv_freq"]["first"]]
assert idx == [22, 27, 47, 50], idx
PY

# fp32 init, bf16 storage: PyTorch counts 88 cos and 116 sin, max abs 2^-8
run 1 diff "$d/rope_cpu.safetensors.gz" "$d/rope_cuda_fp32.safetensors.gz"
out_has "88 of 524288 differ"
out_has "116 of 524288 differ"
out_has "max abs 0.00390625"

# the same files uncompressed give the same report
gunzip -c "$d/rope_cpu.safetensors.gz" >"$TMP/cpu.safetensors"
gunzip -c "$d/rope_cuda_zero.safetensors.gz" >"$TMP/zero.safetensors"
run 1 diff "$TMP/cpu.safetensors" "$TMP/zero.safetensors"
out_has "329332 of 524288 differ"
out_has "324808 of 524288 differ"
# mixed: plain against gzip
run 1 diff "$TMP/cpu.safetensors" "$d/rope_cuda_zero.safetensors.gz"
out_has "329332 of 524288 differ"

# a copy diffed with itself: exit 0
cp "$d/rope_cpu.safetensors.gz" "$TMP/copy.gz"
run 0 diff "$d/rope_cpu.safetensors.gz" "$TMP/copy.gz"
out_has "passed: 3 compared (3 identical)"

# a policy admits the fp32-init differences: 2^-8 absolute
run 0 diff "$d/rope_cpu.safetensors.gz" "$d/rope_cuda_fp32.safetensors.gz" --policy abs=0.00390625

# trouble: missing file, bad policy, one path
run 2 diff "$d/rope_cpu.safetensors.gz" "$TMP/nonexistent.safetensors"
err_has "nonexistent.safetensors"
run 2 diff "$d/rope_cpu.safetensors.gz" "$TMP/copy.gz" --policy ulp=banana
run 2 diff "$d/rope_cpu.safetensors.gz"
err_has "needs two paths"
done_ok
