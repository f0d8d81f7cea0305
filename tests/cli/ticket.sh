# Tickets keep the cause: the Markdown of two runs that differ by their CPU
# math (every probe, cpu and oracle, cpu-sleef against cpu-libm: some
# thirty drifting outputs) fits GitHub's 65,536-character limit by leaving
# detail out first, and keeps the fingerprints side by side, both sides'
# environments (one row per item, both sides in it, the CPU backends in
# the same rows whatever their keys) and the command to reproduce, with
# paths relative to the directory it ran in; --label names the sides in
# every format.
. "$top_srcdir/tests/cli/lib.sh"
cd "$TMP" || fail "cd"
run 0 run --device cpu,oracle --save "$TMP/a" --quiet
run 0 run --device cpu,oracle --cpu-math libm --missing=skip --save "$TMP/b" --quiet
run 1 diff "$TMP/a" "$TMP/b" --markdown "$TMP/t.md"
n=$(head -1 "$TMP/out" | sed -n 's/^drift: \([0-9]*\) of .*/\1/p')
[ "${n:-0}" -ge 20 ] || fail "expected some twenty drifting outputs: $(head -1 "$TMP/out")"
size=$(wc -c <"$TMP/t.md" | tr -d ' ')
[ "$size" -lt 65536 ] || fail "the ticket is $size bytes"
md() { grep -qF -- "$1" "$TMP/t.md" || fail "the ticket lacks '$1'"; }
md "## Environment"
md '| | `a: a` | `b: b` | `this host` |'
md '| backend.cpu.cpu\_math | `sleef-u10` | `libm` |  |'
md '| backend.cpu.key | `cpu-sleef'
md "## Fingerprints side by side"
md '| cpu\_math | `sleef-u10` | `libm` |'
md "## Reproduce"
grep -qx 'bitprobe diff --markdown t.md a b' "$TMP/t.md" ||
    fail "the command to reproduce carries this machine's paths: $(sed -n '/## Reproduce/,+4p' "$TMP/t.md")"
grep -qF "$TMP" "$TMP/t.md" && fail "the ticket carries this machine's paths: $(grep -F "$TMP" "$TMP/t.md" | head -3)"
# what was cut is detail, never the cause; the environment is one row per
# item (no row per backend key, no evidence prose)
md "**Cut to fit GitHub's 65536-character limit:** left out"
grep "^\*\*Cut to fit" "$TMP/t.md" | grep -qE "environment|fingerprints|notes" &&
    fail "the cut took the cause: $(grep '^\*\*Cut' "$TMP/t.md")"
grep -q '^| backend\.cpu-' "$TMP/t.md" && fail "a backend's rows keyed by its key"
grep -q '\.evidence |' "$TMP/t.md" && fail "behaviour evidence in the environment"

# --- --label names the sides in every format ---
run 1 diff "$TMP/a" "$TMP/b" --label A=h100-node3,B=a100-node7 --json "$TMP/l.json" \
    --junit "$TMP/l.xml" --markdown "$TMP/l.md" --github
out_has ": a100-node7:cpu-libm"
out_has " vs h100-node3:cpu-sleef"
out_lacks "$TMP/a"
out_has "::error title=bitprobe drift%3A"
grep -q '"b": "a100-node7:cpu-libm' "$TMP/l.json" || fail "JSON sides"
grep -q 'name="[^"]*a100-node7:cpu-libm[^"]* vs h100-node3:cpu-sleef' "$TMP/l.xml" || fail "JUnit names"
grep -qF '`a100-node7:cpu-libm' "$TMP/l.md" || fail "Markdown results"
grep -qF '`a: h100-node3 (a)`' "$TMP/l.md" || fail "Markdown environment"
grep -qF '`h100-node3:cpu-sleef' "$TMP/l.md" || fail "Markdown fingerprints"

# --- "Defined in" and the probe definitions: relative to the project ---
mkdir -p "$TMP/proj/probes"
cp "$top_srcdir/probes/unary-sweep.yaml" "$TMP/proj/probes/"
cd "$TMP/proj" || fail "cd"
run 1 run unary-sweep --probes "$TMP/proj/probes" --device cpu,oracle --dtype fp32 --agree \
    --no-golden --markdown "$TMP/proj/r.md"
grep -qxF 'bitprobe run --probes probes --device cpu,oracle --dtype fp32 --agree --no-golden --markdown r.md unary-sweep' \
    "$TMP/proj/r.md" || fail "run's repro: $(sed -n '/## Reproduce/,+4p' "$TMP/proj/r.md")"
grep -qF 'Defined in `probes/unary-sweep.yaml`' "$TMP/proj/r.md" || fail "Defined in: $(grep 'Defined in' "$TMP/proj/r.md" | head -1)"
grep -qF '### `probes/unary-sweep.yaml`' "$TMP/proj/r.md" || fail "the probe's heading"
done_ok
