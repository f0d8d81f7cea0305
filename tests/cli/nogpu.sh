# No GPU: --device cuda is an environment error (exit 2, saying why, the
# option and the ways out: --device auto, cpu,oracle) in run, bless and
# fingerprint, as --b cuda is in explain; screen says why it screened
# nothing and, with --json, writes a row a fleet's collector can count;
# --device auto skips the GPU, says so (when bitprobe was built with
# CUDA), and runs the rest.  On a machine
# with a usable GPU there is nothing to test here (SKIP).
. "$top_srcdir/tests/cli/lib.sh"
P="$TMP/probes"
mkdir -p "$P"
cp "$top_srcdir/probes/seed-div.yaml" "$P/"
opts="--probes $P --golden $top_srcdir/golden"
"$BITPROBE" run seed-div $opts --device cuda >/dev/null 2>&1 &&
    { echo "a GPU is usable here: SKIP"; exit 77; }
run 2 run seed-div $opts --device cuda
err_has "bitprobe run: --device cuda: "
err_has "; --device auto runs every backend this machine has (a missing GPU is skipped and said), --device cpu,oracle the CPU's"
grep -qi "cuda" "$TMP/err" || fail "the message does not say CUDA is missing"
run 2 bless seed-div $opts --golden "$TMP/g" --device cuda
err_has "bitprobe bless: --device cuda: "
err_has "--device auto runs every backend this machine has"
run 2 fingerprint --device cuda
err_has "bitprobe fingerprint: --device cuda: "
err_has "--device cpu,oracle the CPU's"
run 2 explain seed-div --probes "$P" --a cpu --b cuda
err_has "bitprobe explain: --b cuda: "
err_has "name a backend this machine has (--b cpu or --b oracle)"
unset BP_SCREEN_FAKE
run 2 screen --json "$TMP/screen.json"
err_has "bitprobe screen: no GPU to screen here: "
err_has "'bitprobe run --device cpu,oracle' checks this host's CPU"
grep -q '"verdict": "not screened"' "$TMP/screen.json" || fail "screen --json: $(head -c 300 "$TMP/screen.json")"
grep -q '"exit_status": 2' "$TMP/screen.json" || fail "screen --json: no exit status"
grep -q '"why": "' "$TMP/screen.json" || fail "screen --json: no reason"
grep -q '"gpus": \[\]' "$TMP/screen.json" || fail "screen --json: GPUs"
nocuda_build=$(grep -c "built without CUDA" "$TMP/err" || true)
# auto: the skip is in the verdict line itself, the first line of stdout.
run 0 run seed-div $opts --device auto
grep -q '^passed: .*; cuda skipped: ' "$TMP/out" || fail "the verdict does not say cuda was skipped"
head -1 "$TMP/out" | grep -q "cuda skipped: " || fail "the skip is not on the first line"
# -v: the skipped backend per probe too
run 0 run seed-div $opts --device auto -v
out_has "skipped backend"
# --require cuda: a missing GPU is an error, before any work.
run 2 run seed-div $opts --require cuda
err_has "--require cuda: "
[ -s "$TMP/out" ] && fail "--require cuda without a GPU printed a report"
run 2 run seed-div $opts --device cpu --require cuda
err_has "--require cuda: --device cpu does not name it"
run 2 bless seed-div $opts --golden "$TMP/g" --device cuda
[ -e "$TMP/g/seed-div/cuda-sm90.safetensors.gz" ] && fail "bless wrote a golden without a GPU"
done_ok
