# bitprobe invariance on the CPU engine: bitprobe's CPU matmul gives every
# row the same bits whatever the batch, placement, repeat or process; the
# reports agree with the exit status; bad options are refused with their
# message; without a GPU the CUDA engines say why.
. "$top_srcdir/tests/cli/lib.sh"

small="--engine cpu --shape 32x24 --m 1:40"

run 0 invariance $small --place all --dtype fp32,bf16,fp16 --repeat 2 --processes 1
head -1 "$TMP/out" | grep -q '^invariance: passed: 3 maps' || fail "verdict not first: $(head -1 "$TMP/out")"
[ "$(grep -c 'invariant: the reference' "$TMP/out")" -eq 9 ] || fail "9 invariant bands expected"
out_has "run-to-run checked"

# the reports carry the same verdict
run 0 invariance $small --json "$TMP/r.json" --junit "$TMP/r.xml" --markdown "$TMP/r.md" --svg "$TMP/r.svg"
grep -q '"invariance"' "$TMP/r.json" || fail "no invariance object"
grep -q '"failures": 0' "$TMP/r.json" || fail "JSON failures not 0"
grep -q 'tests="1" failures="0"' "$TMP/r.xml" || fail "JUnit: $(head -3 "$TMP/r.xml")"
grep -q '^# bitprobe passed: 1 compared (1 identical)' "$TMP/r.md" || fail "Markdown title: $(head -1 "$TMP/r.md")"
grep -q '^## Invariance map' "$TMP/r.md" || fail "Markdown lacks the map"
grep -q '</svg>' "$TMP/r.svg" || fail "SVG incomplete"
if command -v rsvg-convert >/dev/null 2>&1; then
    rsvg-convert -o "$TMP/r.png" "$TMP/r.svg" || fail "rsvg-convert cannot render the SVG"
fi
run 0 invariance $small --json -
grep -q '"maps"' "$TMP/out" || fail "--json - writes the JSON to stdout"
out_lacks "invariance: passed"
run 0 invariance $small --quiet
[ "$(wc -l <"$TMP/out")" -eq 1 ] || fail "--quiet passing: one line expected"
# -v (as --verbose) details every band, an invariant one too, with the
# oracle's verdict on its single group; without it an invariant band has none
for v in -v --verbose; do
    run 0 invariance $small $v
    out_has "group 0: max 0 ulp, 24 of 24 correctly rounded"
done
run 0 invariance $small
out_lacks "correctly rounded"

# inputs for the same experiment elsewhere, readable by bitprobe itself
run 0 invariance $small --rows 2 --save-inputs "$TMP/in.safetensors"
out_has "inputs written to $TMP/in.safetensors (2 probed rows first): a.bf16 [40, 32], b.bf16 [32, 24]; nothing swept"
run 0 diff "$TMP/in.safetensors" "$TMP/in.safetensors"
# --save-inputs writes the inputs and stops: neither a sweep that would
# find boundaries (exit 1) nor an engine this machine may lack (cublas:
# bench/invariance.sh's first step) has a say; the inputs are the same
# for every engine
run 0 invariance --engine cpu --shape 512x48 --split 1:6 --dtype fp32 \
    --save-inputs "$TMP/split.safetensors"
out_has "nothing swept"
run 0 invariance --engine cublas --shape 32x24 --m 40 --rows 2 --no-oracle \
    --save-inputs "$TMP/cublas.safetensors"
run 0 diff "$TMP/in.safetensors" "$TMP/cublas.safetensors"
out_has "identical"
run 2 invariance $small --save-inputs "$TMP/x.safetensors" --json "$TMP/x.json"
err_has "--save-inputs writes the inputs and sweeps nothing: not with --json"
run 2 invariance $small --save-inputs "$TMP/x.safetensors" --repeat 2
err_has "not with --repeat"

# the policy is applied; TF32 is not a CPU dtype: nothing swept
run 0 invariance $small --policy ulp=1
run 2 invariance $small --dtype tf32
err_has "nothing swept"
err_has "cpu matmul tf32 skipped"

# usage errors
run 2 invariance $small --m 0
err_has "--m: bad value item '0'"
run 2 invariance $small --m 5:3
run 2 invariance --engine cpu --shape 4096
err_has "--shape takes KxN"
run 2 invariance $small --dtype fp8
err_has "unknown dtype 'fp8'"
run 2 invariance --engine gpu
err_has "unknown engine 'gpu'"
run 2 invariance $small --place centre
err_has "unknown placement 'centre'"
run 2 invariance --engine cpu --shape 8x8 --m 1:4 --rows 5
err_has "smaller than the 5 probed rows"
run 2 invariance $small --policy ulp=x
err_has "--policy"
run 2 invariance $small --json - --junit -
run 2 invariance $small extra
err_has "unexpected argument 'extra'"

# the row ops through the CPU's implementations: invariant in the batch
run 0 invariance --engine cpu --op sum --shape 300 --m 1:20 --place all --dtype fp32,bf16
[ "$(grep -c 'invariant: the reference' "$TMP/out")" -eq 6 ] || fail "sum: 6 bands"
for op in mean rms_norm softmax log_softmax; do
    run 0 invariance --engine cpu --op $op --shape 257 --m 1:12 --place first,last
done

# split and ranks: the formulations change bits (fp32, these seeds), the
# oracle arbitrates every boundary, the JSON holds the map
run 1 invariance --engine cpu --shape 512x48 --split 1:6 --combine seq,tree --dtype fp32 --json "$TMP/s.json"
out_has "cpu/seq"
out_has "cpu/tree"
out_has "closer to the exact result"
grep -q '"axis": "S"' "$TMP/s.json" || fail "split axis not in JSON"
# without a GPU, auto says before it starts that the CPU engine computes
# what the GPU engines would (minutes for the LLM shapes); naming the CPU
# engine says it is meant
if "$BITPROBE" env | grep -q "^gpu  *no CUDA device"; then
    run 1 invariance --shape 512x48 --split 1:6 --combine seq --dtype fp32
    err_has "bitprobe invariance: no GPU here ("
    err_has "the maps run on the CPU engine, which takes minutes for the LLM shapes"
    run 1 invariance --engine cpu --shape 512x48 --split 1:6 --combine seq --dtype fp32
    err_lacks "no GPU here"
fi
run 1 invariance --engine cpu --shape 512x48 --ranks 1,2,4 --m 3 --combine ring,tree,rank --dtype fp32
out_has "cpu/ring"
out_has "T 1,2,4 in a batch of 3"
run 1 invariance --engine cpu --op attention --shape 2x300x32 --split 1,2,4 --dtype fp32
out_has "attention 2 heads, 300 keys, head dim 32 fp32"
run 0 invariance --engine cpu --op attention --shape 2x300x32 --split 1,2,4 --dtype fp32 --policy abs=1e-5
head -1 "$TMP/out" | grep -q 'passed within policy abs<=1e-05' || fail "policy abs: $(head -1 "$TMP/out")"
run 0 invariance --engine cpu --shape 64x8 --split 1,100 --dtype fp32
out_has "not run: S 100"

# option errors of the axes and presets
run 2 invariance --engine cpu --split 1,2 --ranks 1,2
err_has "one at a time"
run 2 invariance --engine cpu --split 1,2 --m 1:4
err_has "one value"
run 2 invariance --engine cpu --op attention
err_has "sweeps the split axis"
run 2 invariance --engine cpu --op softmax --ranks 1,2
err_has "has none"
run 2 invariance --engine cpu --split 1,2 --combine ring
err_has "seq or tree"
run 2 invariance --engine cpu --m 1:4 --combine tree
err_has "not a batch sweep"
run 2 invariance --preset nope
err_has "unknown preset 'nope'"
run 2 invariance --preset gemm-4096 --shape 8x8
err_has "cannot go with it"
run 2 invariance --op conv
err_has "unknown --op 'conv'"
run 2 invariance --op attention --shape 4x4 --split 1,2
err_has "HEADSxKEYSxHEADDIM"
run 2 invariance --preset llm-rows --save-inputs "$TMP/x.safetensors"
err_has "one job"
# every preset is in the help
"$BITPROBE" invariance --help >"$TMP/help"
for p in gemm-4096 gemm-11008 gemm-14336 lmhead-32000 lmhead-128256 rmsnorm-4096 \
         sum-4096 mean-4096 softmax-32000 softmax-128256 logsoftmax-32000 \
         logsoftmax-128256 splitk-4096 splitk-14336 splitrows-128256 tp-4096 tp-14336 \
         decode-4k decode-32k; do
    ntests=$((ntests + 1))
    grep -q -- "$p" "$TMP/help" || fail "--help lacks preset $p"
done
# a small preset runs on the CPU where no CUDA engine computes it
run 1 invariance --preset decode-4k --split 1,2 --engine cpu --dtype fp32 --no-oracle
out_has "attention 32 heads, 4096 keys, head dim 128 fp32, S 1,2"

# the CUDA engines where bitprobe has no GPU: exit 2 saying why (a GPU
# machine runs them in invariance_cuda.sh)
if "$BITPROBE" list 2>/dev/null | grep -q '^ *cuda .*unavailable'; then
    run 2 invariance --engine cublas --shape 16x16 --m 1:4
    err_has "cublas"
    run 2 invariance --shape 16x16 --m 1:4
    err_has "nothing swept"
    err_has "--engine cpu"
fi
done_ok
