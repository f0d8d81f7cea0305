# Goldens: bless writes them atomically and says what changed; run compares
# with them (exit 0), detects drift (exit 1), a missing golden, a corrupted
# golden (CRC) and a golden blessed from another probe definition (exit 2,
# each a result naming it, the other probes still compared).
. "$top_srcdir/tests/cli/lib.sh"
P="$TMP/probes" G="$TMP/golden"
mkdir -p "$P"
cp "$top_srcdir/probes/seed-div.yaml" "$top_srcdir/probes/unary-sweep.yaml" "$P/"
opts="--probes $P --golden $G"

run 2 run seed-div $opts --device cpu
out_has "missing golden: no golden for probe 'seed-div' on backend 'cpu-sleef'"
# The hint keeps the user's --probes and --golden: following it works.  It
# is said once, and the three outputs x dtypes of the missing file are one
# line (and one again in the closing list).
out_has "hint: bless the missing goldens with 'bitprobe bless seed-div --device cpu --probes $P --golden $G', or pass --missing=skip"
[ "$(grep -c 'bitprobe bless' "$TMP/out")" -eq 1 ] || fail "the bless command is said more than once: $(cat "$TMP/out")"
out_has "  seed-div: cpu vs golden cpu-sleef: missing golden: no golden for probe 'seed-div' on backend 'cpu-sleef': '$G/seed-div/cpu-sleef.safetensors.gz' does not exist (3 comparisons)"
[ "$(wc -l <"$TMP/out")" -le 3 ] || fail "a missing golden takes more than 3 lines: $(cat "$TMP/out")"
# Nothing compared at all is not a pass, --missing=skip or not.
run 2 run seed-div $opts --device cpu --missing=skip
out_has "error: nothing compared (no goldens for this backend); 3 missing golden"
out_lacks "or pass --missing=skip"

run 0 bless $opts --device cpu,oracle
out_has "seed-div cpu-sleef y.fp32: new"
out_has "seed-div oracle y.bf16: new"
out_has "$G/seed-div/cpu-sleef.safetensors.gz: written"
[ -f "$G/unary-sweep/oracle.safetensors.gz" ] || fail "no oracle golden for unary-sweep"
cp "$G/seed-div/cpu-sleef.safetensors.gz" "$TMP/before.gz"
run 0 bless seed-div $opts --device cpu
out_has "seed-div cpu-sleef y.fp16: unchanged"
out_has "cpu-sleef.safetensors.gz: unchanged"
cmp -s "$TMP/before.gz" "$G/seed-div/cpu-sleef.safetensors.gz" || fail "unchanged golden rewritten"

run 0 run -vv $opts --device cpu,oracle
out_has "y fp32"
out_has "cpu vs golden cpu-sleef: bit-identical"
out_has "passed: "

# Drift: the oracle's results stand in for the CPU's golden.  SLEEF's exp,
# log and tanh are within 1 ulp of correctly rounded, not equal to it.
cp "$G/unary-sweep/oracle.safetensors.gz" "$G/unary-sweep/cpu-sleef.safetensors.gz"
run 1 run unary-sweep $opts --device cpu --dtype fp32
out_has "DRIFT"
cp "$G/unary-sweep/oracle.safetensors.gz" "$G/unary-sweep/cpu-sleef.safetensors.gz"

# A bit flipped in tensor data (inside the compressed stream): CRC mismatch.
gunzip -c "$G/seed-div/cpu-sleef.safetensors.gz" >"$TMP/plain"
size=$(wc -c <"$TMP/plain")
"${PYTHON3:-python3}" - "$TMP/plain" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[-1] ^= 0x01; open(p, "wb").write(b)
PY
gzip -n -c "$TMP/plain" >"$G/seed-div/cpu-sleef.safetensors.gz"
run 2 run seed-div $opts --device cpu
out_has "CRC mismatch"
out_has "error: golden of probe 'seed-div' is unusable"
# The other probe is still compared.
run 2 run -vv $opts --device cpu
out_has "unary-sweep exp fp32"
out_has "cpu vs golden cpu-sleef: bit-identical"
# A bit flipped in the compressed file itself: refused, never a pass.
cp "$TMP/before.gz" "$G/seed-div/cpu-sleef.safetensors.gz"
"${PYTHON3:-python3}" - "$G/seed-div/cpu-sleef.safetensors.gz" <<'PY'
import sys
p = sys.argv[1]; b = bytearray(open(p, "rb").read()); b[len(b) // 2] ^= 0x10; open(p, "wb").write(b)
PY
run 2 run seed-div $opts --device cpu
out_has "cannot read"
cp "$TMP/before.gz" "$G/seed-div/cpu-sleef.safetensors.gz"
run 0 run seed-div $opts --device cpu

# Another definition of the probe: exit 2 naming it; --dry-run shows what a
# bless would change and writes nothing.
sed -i 's/values: \[9.0\]/values: [8.0]/' "$P/seed-div.yaml"
grep -q 'values: \[8.0\]' "$P/seed-div.yaml" || fail "could not edit the probe"
run 2 run seed-div $opts --device cpu
out_has "different definition of probe 'seed-div'"
out_has "hint: re-bless the unusable goldens with 'bitprobe bless seed-div --device cpu --probes $P --golden $G'"
[ "$(grep -c 'bitprobe bless' "$TMP/out")" -eq 1 ] || fail "the bless command is said more than once: $(cat "$TMP/out")"
run 0 bless seed-div $opts --device cpu --dry-run
out_has "changed: 1 of 1 element"
out_has "would be written"
cmp -s "$TMP/before.gz" "$G/seed-div/cpu-sleef.safetensors.gz" || fail "--dry-run wrote"
run 0 bless seed-div $opts --device cpu
run 0 run seed-div $opts --device cpu
ls "$G/seed-div" | grep -q tmp && fail "temporary file left behind"

run 2 run nonexistent-probe $opts
err_has "unknown probe 'nonexistent-probe'"
run 2 bless nonexistent-probe $opts
err_has "unknown probe 'nonexistent-probe'"
done_ok
