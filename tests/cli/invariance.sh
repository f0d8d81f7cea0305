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
grep -q '^# bitprobe: .*all bit-identical' "$TMP/r.md" || fail "Markdown title"
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

# inputs for the same experiment elsewhere, readable by bitprobe itself
run 0 invariance $small --rows 2 --save-inputs "$TMP/in.safetensors"
run 0 diff "$TMP/in.safetensors" "$TMP/in.safetensors"

# the policy is applied; TF32 is not a CPU dtype: nothing swept
run 0 invariance $small --policy ulp=1
run 2 invariance $small --dtype tf32
err_has "nothing swept"
err_has "cpu tf32 skipped"

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

# the CUDA engines where bitprobe has no GPU: exit 2 saying why (a GPU
# machine runs them in invariance_cuda.sh)
if "$BITPROBE" list 2>/dev/null | grep -q '^ *cuda .*unavailable'; then
    run 2 invariance --engine cublas --shape 16x16 --m 1:4
    err_has "cublas"
    run 2 invariance --shape 16x16 --m 1:4
    err_has "no engine can run here"
    err_has "--engine cpu"
fi
done_ok
