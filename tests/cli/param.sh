# --param NAME=VALUE on run, bless and list: the override reaches the ops
# and the hash; goldens of the probe as written are refused (exit 2, the
# param named, the way out said); blessing under the override makes goldens
# that a run under it passes against; unknown names and malformed values
# are errors, with the nearest name.
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
# against the shipped goldens: refused, saying which param and what to do
run 2 run rope-llama2 --param base=500000 --device cpu
out_has "probe 'rope-llama2' runs with --param base=500000, which changes its hash to $h1"
out_has "use --no-golden, or bless under the override"
# bless under the override into a scratch golden dir, then run against it
run 0 bless rope-llama2 --param base=500000 --device cpu --golden "$TMP/g" --dtype fp32
run 0 run rope-llama2 --param base=500000 --device cpu --golden "$TMP/g" --dtype fp32
# and the probe as written is now the one refused there (a different hash)
run 2 run rope-llama2 --device cpu --golden "$TMP/g" --dtype fp32
out_has "blessed from a different definition of probe 'rope-llama2'"
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
