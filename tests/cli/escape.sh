#!/bin/sh
# Names from users' files in every text line: control characters shown
# escaped (\n, \x1b, C1 controls as \xc2\x9b), a leading "::" neutralised
# (\x3a:), so that no name breaks a line, starts a GitHub Actions workflow
# command or reaches the terminal as an escape sequence: diff's text report
# (default, -q, -vv), report on a saved JSON report, list, run, the ledger
# diff, and messages on stderr.  The files: tests/hostile_names.py.
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python"; exit 77; }
"$PY" "$top_srcdir/tests/hostile_names.py" "$TMP" "$top_srcdir/tests/ledger-good" ||
    fail "cannot write the files"

ctl=$(printf '[\001-\011\013-\037\177]')
c1=$(printf '\302[\200-\237]')
# clean FILE: no control character but the lines' ends, no C1 control, no
# line that GitHub Actions would take for a workflow command
clean() {
    ! LC_ALL=C grep -q "$ctl" "$1" || fail "$1 holds a control character: $(LC_ALL=C grep -n "$ctl" "$1" | od -c | head -5)"
    ! LC_ALL=C grep -q "$c1" "$1" || fail "$1 holds a C1 control"
    ! grep -qE '^[[:space:]]*::' "$1" || fail "$1 has a line starting '::': $(grep -E '^[[:space:]]*::' "$1")"
}
both() { clean "$TMP/out"; clean "$TMP/err"; }

for opt in "" -q -vv; do
    run 1 diff $opt "$TMP/a.safetensors" "$TMP/b.safetensors"
    both
    out_has 'a\n::error::x fp32 [2]'
    out_has '\x3a:warning file=x::y fp32 [2]'
    out_has 't\x1b]0;pwned\x07\x1b[2J fp32 [2]'
    out_has 'c\xc2\x85\xc2\x9bd fp32 [2]'
done
# the same names read back from the JSON report
run 1 diff "$TMP/a.safetensors" "$TMP/b.safetensors" --json "$TMP/r.json"
run 1 report "$TMP/r.json"
both
out_has 'a\n::error::x fp32 [2]'
# not comparable: the note and the name
run 2 diff "$TMP/bad.safetensors" "$TMP/bad.safetensors"
both
out_has 'q\n::error::bad Q8'

# probes: a description in list, a buffer name in a message
run 2 list --probes "$TMP/probes"
both
out_has 'd\x1b]0;title\x07'
err_has "invalid buffer name 'y\n::error::z'"
run 2 run "$TMP/probes/q.yaml" --device cpu --no-golden
both
out_has "invalid buffer name 'y\n::error::z'"

# op ledgers: op and module names
run 1 diff "$TMP/a.ledger" "$TMP/b.ledger"
both
out_has "first introduced: A#1 B#1 aten::div.Tensor\x1b[2J\n::error::op in module 'rope\n::error::m'"
out_has '  rope\n::error::m '
done_ok
