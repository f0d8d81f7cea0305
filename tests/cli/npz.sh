#!/bin/sh
# .npz files as NumPy and Python's zipfile write them (tests/hostile_npz.py
# makes them here): all-zero arrays whose deflate stream ends while
# inflate still holds output (8, 16 and 36 MiB; BP_SLOW=1 adds 1 GiB, as
# `make check-slow` runs it), a zip CRC-32 that does not match its member's
# bytes (stored data, a deflated member, an .npy header: exit 2 as NumPy's
# "Bad CRC-32"), exactly 65,535 members (the count 0xFFFF without zip64),
# 70,000 (zip64's end record) and a zip64 extra field.
. "$top_srcdir/tests/cli/lib.sh"
find_python numpy || { echo "SKIP: no Python with NumPy"; exit 77; }
"$PY" "$top_srcdir/tests/hostile_npz.py" "$TMP" || fail "cannot write the .npz files"

for m in 8 16 36; do
    run 0 diff "$TMP/zeros-$m.npz" "$TMP/zeros-$m.npz"
    out_has "passed: 1 compared (1 identical)"
    run 0 diff "$TMP/zeros-$m-s.npz" "$TMP/zeros-$m.npz"
    run 1 diff "$TMP/zeros-$m.npz" "$TMP/zeros-$m-1.npz"
    out_has "1 of $((m * 262144)) differ"
done

# the zip's CRC-32, stored and deflated members alike, header bytes too
run 0 diff "$TMP/ok.npz" "$TMP/ok.npz"
for f in crc-stored crc-head; do
    run 2 diff "$TMP/$f.npz" "$TMP/ok.npz"
    err_has "cannot read '$TMP/$f.npz:x.npy': CRC-32 mismatch: the zip directory says 0xa8cd7e83, the member's bytes give 0x"
    run 2 diff "$TMP/$f.npz" "$TMP/$f.npz"
    err_has "CRC-32 mismatch"
done
run 2 diff "$TMP/ok.npz" "$TMP/crc-deflate.npz"
err_has "cannot read '$TMP/crc-deflate.npz:y.npy': CRC-32 mismatch: the zip directory says 0x3ae8799e, the member's bytes give 0x3ae9799e"

# member counts: 0xFFFF without zip64, zip64's end record, its extra field
run 0 diff "$TMP/m65535.npz" "$TMP/m65535.npz"
out_has "passed: 65535 compared (65535 identical)"
run 1 diff "$TMP/m65535.npz" "$TMP/m65535-1.npz"
out_has "drift: 1 of 65535 compared beyond policy (65534 identical)"
out_has "a65534 fp32 [4]"
run 0 diff "$TMP/m70000.npz" "$TMP/m70000.npz"
out_has "passed: 70000 compared (70000 identical)"
run 0 diff -vv "$TMP/zip64-extra.npz" "$TMP/zip64-extra.npz"
out_has "w  fp64 [6]"

if [ "${BP_SLOW:-0}" = 1 ]; then
    "$PY" "$top_srcdir/tests/hostile_npz.py" "$TMP" 1024 || fail "cannot write 1 GiB of zeros"
    run 0 diff "$TMP/zeros-1024.npz" "$TMP/zeros-1024.npz"
    out_has "passed: 1 compared (1 identical)"
    run 1 diff "$TMP/zeros-1024.npz" "$TMP/zeros-1024-1.npz"
    out_has "1 of 268435456 differ"
else
    echo "not run: the 1 GiB .npz of zeros (BP_SLOW=1, make check-slow)"
fi
done_ok
