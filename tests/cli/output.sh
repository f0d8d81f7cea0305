# What a user sees: summary-first text (the verdict on the first line,
# short passing runs), an identical diff in one line (none with -q),
# report paths checked before any work, and goldens next to --probes.
. "$top_srcdir/tests/cli/lib.sh"

# lines FILE: its line count.
lines() { wc -l <"$1" | tr -d ' '; }

# --- a passing run: the verdict first, at most 40 lines; -q: 1 line ---
# (a fixed set of probes: every shipped probe adds its differing outputs)
SET="arange-beyond-256 arange-step div-by-3-and-7 div-by-decimal matmul-fp32 rope-apply
rope-llama2 rope-llama2-zero-init seed-div seed-inv-freq sum-order unary-sweep"
# shellcheck disable=SC2086
run 0 run $SET --device cpu,oracle
head -1 "$TMP/out" | grep -q '^passed: ' || fail "verdict not first: $(head -1 "$TMP/out")"
[ "$(lines "$TMP/out")" -le 40 ] || fail "passing run: $(lines "$TMP/out") lines"
out_lacks "bit-identical"
# more than 20 differences that do not fail: counted in one line ...
out_has "differences within policy or informational, in "
# ... and listed with -v
run 0 run --device cpu,oracle -v
out_has "differs (informational)"
# shellcheck disable=SC2086
run 0 run $SET --device cpu,oracle --quiet
[ "$(lines "$TMP/out")" -eq 1 ] || fail "passing run --quiet: $(lines "$TMP/out") lines"
[ ! -s "$TMP/err" ] || fail "passing run --quiet wrote to stderr"
# -vv: every result, bit-identical ones too.
run 0 run seed-div --device cpu,oracle -vv
out_has "oracle vs cpu: bit-identical (1 element)"
# no progress lines when stderr is not a terminal
run 0 run seed-div --device cpu,oracle
[ ! -s "$TMP/err" ] || fail "progress on a pipe: $(cat "$TMP/err")"

# --- an identical diff: one line; -q: nothing, as cmp -s ---
run 0 run seed-div seed-inv-freq --device cpu --no-golden --save "$TMP/a"
cp -r "$TMP/a" "$TMP/a2"
run 0 diff "$TMP/a" "$TMP/a2"
[ "$(lines "$TMP/out")" -eq 1 ] || fail "identical diff: $(lines "$TMP/out") lines"
out_has "passed: 9 compared (9 identical)"
run 0 diff -q "$TMP/a" "$TMP/a2"
[ ! -s "$TMP/out" ] || fail "identical diff -q printed: $(cat "$TMP/out")"

# --- report paths are checked before the run ---
for o in --json --junit --markdown; do
    run 2 run seed-div --device cpu $o "$TMP/no/such/dir/r"
    err_has "$o '$TMP/no/such/dir/r': directory '$TMP/no/such/dir' does not exist"
    [ ! -s "$TMP/out" ] || fail "run $o to a bad path ran: $(cat "$TMP/out")"
    run 2 run seed-div --device cpu $o "$TMP"
    err_has "$o '$TMP': is a directory"
done
: >"$TMP/file"
run 2 run seed-div --device cpu --save "$TMP/file"
err_has "--save '$TMP/file': not a directory"
run 2 diff "$TMP/a" "$TMP/a2" --json "$TMP/no/r.json"
err_has "--json '$TMP/no/r.json': directory '$TMP/no' does not exist"

# --- goldens beside --probes DIR: bless from an empty directory writes
# DIR/../golden when DIR is named probes, else DIR/golden, and run finds
# them there ---
mkdir -p "$TMP/proj/probes" "$TMP/proj/mine" "$TMP/empty"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/proj/probes/"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/proj/mine/"
for pair in probes:golden mine:mine/golden; do
    dir=${pair%%:*} gold=${pair#*:}
    (
        cd "$TMP/empty" || exit 1
        unset BITPROBE_PROBES BITPROBE_GOLDEN
        "$BITPROBE" bless seed-div --probes ../proj/$dir --device cpu >"$TMP/out" 2>"$TMP/err" ||
            fail "bless --probes ../proj/$dir: exit $?"
        ls ../proj/$gold/seed-div/cpu-sleef*.safetensors.gz >/dev/null 2>&1 ||
            fail "no golden under ../proj/$gold: $(find .. -name '*.gz')"
        [ -z "$(ls -A .)" ] || fail "bless wrote into the working directory: $(ls -A .)"
        "$BITPROBE" run seed-div --probes ../proj/$dir --device cpu >"$TMP/out" 2>"$TMP/err" ||
            fail "run --probes ../proj/$dir against its goldens: exit $?"
        grep -q "^passed: 3 compared (3 identical)" "$TMP/out" || fail "run: $(cat "$TMP/out")"
    ) || exit 1
done

# --- tickets that fit: at most 65,536 bytes, differing results first ---
run 0 run --device cpu,oracle --markdown "$TMP/r.md" -q
n=$(wc -c <"$TMP/r.md" | tr -d ' ')
[ "$n" -le 65536 ] || fail "run Markdown: $n bytes"
# the summary table lists no bit-identical row; they are counted
sed '/^## Reproduce/q' "$TMP/r.md" >"$TMP/summary.md"
! grep -q '| identical |$' "$TMP/summary.md" || fail "bit-identical rows in the summary table"
grep -q '| \*\*DRIFT\*\* |$\|| differs (informational) |$' "$TMP/summary.md" ||
    fail "no differing rows in the summary table"
grep -q '^[0-9]* more comparisons are bit-identical\.$' "$TMP/r.md" || fail "no count of identical"
# what did not fit is said
if [ "$(grep -c '```yaml' "$TMP/r.md")" -lt 12 ]; then
    grep -q "^\*\*Cut to fit GitHub's 65536-character limit:\*\*" "$TMP/r.md" ||
        fail "sections left out without a note"
fi
data="$top_srcdir/tests/data/torch"
run 1 diff "$data/rope_cpu.safetensors.gz" "$data/rope_cuda_zero.safetensors.gz" \
    --markdown "$TMP/d.md" --label A=cpu-box,B=gpu-box
n=$(wc -c <"$TMP/d.md" | tr -d ' ')
[ "$n" -le 65536 ] || fail "diff Markdown: $n bytes"
grep -qF '`a: cpu-box (' "$TMP/d.md" || fail "the Markdown does not name side a"
grep -qF '`b: gpu-box (' "$TMP/d.md" || fail "the Markdown does not name side b"
grep -qF '`this host`' "$TMP/d.md" || fail "no column for the host that ran the diff"
# --- diff: the verdict, one line per tensor that differs; detail with -v ---
run 1 diff "$data/rope_cpu.safetensors.gz" "$data/rope_cuda_zero.safetensors.gz"
[ "$(lines "$TMP/out")" -eq "$(($(grep -c ': DRIFT' "$TMP/out") + 1))" ] ||
    fail "diff prints more than the verdict and a line per differing tensor: $(cat "$TMP/out")"
out_lacks "ulp histogram"
run 1 diff "$data/rope_cpu.safetensors.gz" "$data/rope_cuda_zero.safetensors.gz" -v
out_has "ulp histogram"
# one element is one element
run 0 run seed-div --device cpu,oracle --dtype fp32 -vv
out_has "bit-identical (1 element)"
out_lacks "1 elements"
run 2 diff "$data/rope_cpu.safetensors.gz" "$data/rope_cpu.safetensors.gz" --label C=x
err_has "--label takes A=NAME,B=NAME"
# Standard output that cannot be written (a full disk): exit 2 and a
# message, whatever the command found (it once exited 0 in silence).
if [ -w /dev/full ]; then
    for args in "list" "--help" "diff -vv $data/rope_cpu.safetensors.gz $data/rope_cpu.safetensors.gz" \
                "run seed-div --device cpu --no-golden --json -"; do
        ntests=$((ntests + 1))
        "$BITPROBE" $args >/dev/full 2>"$TMP/err"
        rc=$?
        [ $rc -eq 2 ] || fail "bitprobe $args >/dev/full: exit $rc, expected 2"
        err_has "bitprobe: cannot write to standard output: No space left on device"
    done
else
    skip_later "no /dev/full"
fi
done_ok
