# The README's quick tour runs as written: every line of its block, from a
# copy of the repository root (the probes and goldens copied, the rest
# linked, so that what the tour writes stays out of the tree), with
# bitprobe called by its bare name.  A line exits 0 or 1 (1: it found a
# difference); 2 (trouble: a missing file, a usage error) fails.  This
# test runs the lines a CPU runs: those whose comment says GPU are left to
# a GPU machine; those that say PyTorch need a python3 that imports torch
# (SKIP without one, after the rest ran).
. "$top_srcdir/tests/cli/lib.sh"
unset BITPROBE_PROBES BITPROBE_GOLDEN
R="$TMP/root"
mkdir -p "$R" "$TMP/bin"
cp -R "$top_srcdir/probes" "$top_srcdir/golden" "$R/"
for d in tests python README.md; do ln -s "$top_srcdir/$d" "$R/$d"; done
ln -s "$BITPROBE" "$TMP/bin/bitprobe"
torch=
if find_python torch; then
    # a wrapper, not a link: a virtual environment's python finds its
    # packages from where it is called
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$(command -v "$PY")" >"$TMP/bin/python3"
    chmod +x "$TMP/bin/python3"
    PYTHON3=$(command -v "$PY") # what init-audit runs
    export PYTHON3
    torch=1
fi
sed -n '/^## Quick tour/,/^```$/p' "$top_srcdir/README.md" |
    sed -n '/^```sh$/,/^```$/p' | grep -v '^```' >"$TMP/tour"
[ "$(wc -l <"$TMP/tour")" -ge 20 ] || fail "no tour in README.md: $(cat "$TMP/tour")"
ran=0
while IFS= read -r line; do
    cmd=${line%%  #*} note=
    [ "$cmd" != "$line" ] && note=${line#*  #}
    case $note in
    *"(GPU"*) continue ;; # the GPU sessions' (tests/gpu), not this test's
    *"(PyTorch)"*) [ -n "$torch" ] || { skip_later "no PyTorch: $cmd"; continue; } ;;
    esac
    ntests=$((ntests + 1))
    (cd "$R" && PATH="$TMP/bin:$PATH" sh -c "$cmd") >"$TMP/out" 2>"$TMP/err" </dev/null
    rc=$?
    [ $rc -le 1 ] || fail "the tour's '$cmd': exit $rc"
    ran=$((ran + 1))
done <"$TMP/tour"
[ "$ran" -ge 15 ] || fail "only $ran lines of the tour ran"
# what the tour wrote stayed in its copy
[ -f "$R/run-a/manifest.json" ] && [ -f "$R/ticket.md" ] || fail "the tour's files are not in its copy"
done_ok
