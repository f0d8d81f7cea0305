# The common options read the same in every command: --seed is decimal
# (010 is ten), --gpu is a device index up to 1023, --dtype is checked with
# one message, -q is --quiet.
. "$top_srcdir/tests/cli/lib.sh"

# --seed: base 10 everywhere, with one message
for seed in 10 010 8; do
    run 0 stack --preset tiny --layers 1 --buffers-only --seed $seed --json "$TMP/s$seed.json"
    sed '/"argv"\|"command"\|seconds\|"wall/d' "$TMP/s$seed.json" >"$TMP/s$seed.m"
done
grep -q '"seed": 10\b' "$TMP/s010.json" || fail "stack --seed 010 did not run seed 10"
for c in "stack" "stack --ranks 2" "invariance --engine cpu"; do
    run 2 $c --seed 0x10
    err_has "--seed takes an unsigned decimal integer, not '0x10'"
    run 2 $c --seed -1
    err_has "--seed takes an unsigned decimal integer, not '-1'"
done

# --gpu: 0 to 1023 in every command that takes one, one message
for c in "stack" "invariance --engine cpu" "run --device cpu" "screen"; do
    run 2 $c --gpu 1024
    err_has "--gpu needs a device index (0 to 1023)"
done

# --dtype: fp32, bf16 or fp16, one message
for c in "stack" "stack --ranks 2" "run" "bless --dry-run" "explain seed-div --a cpu --b oracle" \
         "init-audit m.py:f"; do
    run 2 $c --dtype fp64
    err_has "--dtype takes fp32, bf16 or fp16, not 'fp64'"
done

# -q is --quiet in every command that has it: the next option is read
for c in "stack" "screen" "invariance --engine cpu" "run" "diff a b" "report r.json"; do
    run 2 $c -q --gpu x
    err_lacks "unknown option '-q'"
done
done_ok
