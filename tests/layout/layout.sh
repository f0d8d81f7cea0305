#!/bin/sh
# The floor plan of src/ (src/README.md): no unit includes another's
# private header, no circle between units, at most 3 upward includes
# (tests/layout/layout.py); and a planted breach is caught.
. "$srcdir/cli/lib.sh"
[ -n "${PYTHON3:-}" ] || PYTHON3=python3
"$PYTHON3" "$top_srcdir/tests/layout/layout.py" "$top_srcdir" || fail "the floor plan is breached"
# The checker must see a breach: a copy of the tree with a core file
# including a cli header (upward and a circle) and a private header used
# from another unit.
mkdir -p "$TMP/t/tests/layout" && cp -R "$top_srcdir/src" "$top_srcdir/kernels" "$TMP/t/" &&
cp "$top_srcdir/tests/layout/layout.py" "$TMP/t/tests/layout/"
printf '#include "cli.h"\n#include "st_int.h"\n' >>"$TMP/t/src/core/error.c"
out=$("$PYTHON3" "$TMP/t/tests/layout/layout.py" "$TMP/t") && fail "a planted breach passed: $out"
echo "$out" | grep -q 'includes src/io/st_int.h, private to io' || fail "private include not named: $out"
echo "$out" | grep -q 'circle between units' || fail "circle not named: $out"
echo "$out" | grep -q ', 2 upward,' || fail "upward includes not counted: $out"
ntests=2; done_ok
