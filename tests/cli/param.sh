# --param NAME=VALUE on run, bless and list: the override reaches the ops
# and the hash; a probe under an override has goldens of its own
# (<key>+NAME=VALUE), missing until blessed (exit 2, the command that
# blesses them keeping the --param); blessing under the override never
# touches the probe's own goldens; unknown names and malformed values are
# errors, with the nearest name.
. "$top_srcdir/tests/cli/lib.sh"
run 0 list --json
h0=$(grep -A3 '"name": "rope-llama2"' "$TMP/out" | sed -n 's/.*"hash": "\([0-9a-f]*\)".*/\1/p')
run 0 list --param base=500000 --json
h1=$(grep -A3 '"name": "rope-llama2"' "$TMP/out" | sed -n 's/.*"hash": "\([0-9a-f]*\)".*/\1/p')
[ -n "$h0" ] && [ -n "$h1" ] && [ "$h0" != "$h1" ] || fail "hash $h0 -> $h1: --param must change it"
out_has '"param_overrides": "base=500000"'
run 0 list --param base=500000
out_has "with --param base=500000 (hash $h1)"
# the acceptance run: cpu against the oracle, no goldens
run 0 run rope-llama2 --param base=500000 --no-golden --device cpu,oracle
out_lacks "error"
# the probe's own goldens are not the override's: missing, with the
# command that blesses them, which keeps the --param
run 2 run rope-llama2 --param base=500000 --device cpu
out_has "no golden for probe 'rope-llama2' with --param base=500000 on backend"
out_has "+base=500000.safetensors.gz' does not exist"
out_has "hint: bless the missing goldens with 'bitprobe bless rope-llama2 --device cpu --param base=500000'"
# bless under the override beside a copy of the shipped goldens: stored
# apart (<key>+base=500000), the probe's own goldens untouched
mkdir -p "$TMP/g"
cp -r "$top_srcdir/golden/rope-llama2" "$TMP/g/"
find "$TMP/g" -name '*.lock' -delete
(cd "$TMP/g" && find . -type f | sort | xargs md5sum) >"$TMP/before"
run 0 bless rope-llama2 --param base=500000 --device cpu --golden "$TMP/g" --dtype fp32
out_has "+base=500000.safetensors.gz: written"
(cd "$TMP/g" && find . -type f ! -name '*+base=500000*' | sort | xargs md5sum) >"$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "bless under --param changed the probe's goldens: $(diff "$TMP/before" "$TMP/after")"
run 0 run rope-llama2 --param base=500000 --device cpu --golden "$TMP/g" --dtype fp32
# and the probe as written still passes against its own
run 0 run rope-llama2 --device cpu --golden "$TMP/g" --dtype fp32
# the value is really used: base=10000 is the file's own, so the hash is too
run 0 list --param base=10000 --json
h2=$(grep -A3 '"name": "rope-llama2"' "$TMP/out" | sed -n 's/.*"hash": "\([0-9a-f]*\)".*/\1/p')
[ "$h2" = "$h0" ] || fail "base=10000 is the file's value: hash $h2, expected $h0"
# errors
run 2 run rope-llama2 --param bse=500000 --no-golden --device cpu
err_has "unknown parameter 'bse' (the probes have dim, base, positions); did you mean 'base'?"
run 2 run rope-llama2 --param base=lots --no-golden --device cpu
err_has "--param base=lots: the value is not a number"
run 2 run rope-llama2 --param base --device cpu
err_has "--param takes NAME=VALUE, not 'base'"
run 2 run rope-llama2 --param base=1 --param base=2 --device cpu
err_has "--param base given twice"
run 2 list --ops --param base=1
err_has "drop --probes and --param"
done_ok
