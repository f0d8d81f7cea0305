# The streamed comparison (windows, segments merged, threads) reports
# exactly what the whole-tensor engine reports: the same JSON for files
# that fit in memory, read both ways (BP_DIFF_IN_MEMORY=1 is the old path:
# each tensor read whole, then bp_compare), with tensors cut into segments
# of a few bytes (BP_DIFF_SEGMENT) and on one thread or several.
. "$top_srcdir/tests/cli/lib.sh"
d="$top_srcdir/tests/data/torch"
gunzip -c "$d/rope_cpu.safetensors.gz" >"$TMP/cpu.safetensors"
gunzip -c "$d/rope_cuda_zero.safetensors.gz" >"$TMP/zero.safetensors"
run 0 run seed-div div-by-3-and-7 --device cpu,oracle --save "$TMP/a" --quiet
run 0 run seed-div div-by-3-and-7 --device cpu,oracle --cpu-math libm --missing=skip --save "$TMP/b" --quiet

same_report() { # A B ARGS...: every way of reading gives one report
    a=$1 b=$2
    shift 2
    BP_DIFF_IN_MEMORY=1 "$BITPROBE" diff "$a" "$b" "$@" --json "$TMP/mem.json" >/dev/null 2>&1
    want=$?
    # 2: trouble, unless the report says nothing was compared (its exit)
    [ $want -le 1 ] || grep -q '"nothing_compared"' "$TMP/mem.json" ||
        fail "diff $a $b $*: exit $want in memory"
    for how in ${HOWS:-0:0 4096:0 1000:0 12:1}; do # segment bytes:threads
        seg=${how%:*} th=${how#*:}
        BP_DIFF_SEGMENT=$seg "$BITPROBE" diff "$a" "$b" "$@" --threads $((th ? th : 2)) \
            --json "$TMP/s.json" >/dev/null 2>&1
        got=$?
        ntests=$((ntests + 1))
        [ $got -eq $want ] || fail "diff $a $b $* (segments of $seg bytes): exit $got, in memory $want"
        # the command lines differ by the options given: left out
        grep -v '"command"' "$TMP/mem.json" >"$TMP/m"
        grep -v '"command"' "$TMP/s.json" >"$TMP/g"
        cmp -s "$TMP/m" "$TMP/g" ||
            fail "diff $a $b $* (segments of $seg bytes): the streamed report differs: $(diff "$TMP/m" "$TMP/g" | head -5)"
    done
}
same_report "$TMP/cpu.safetensors" "$TMP/zero.safetensors"
same_report "$d/rope_cpu.safetensors.gz" "$TMP/zero.safetensors" --first 50
same_report "$d/rope_cpu.safetensors.gz" "$d/rope_cuda_zero.safetensors.gz" --policy ulp=2
same_report "$TMP/a" "$TMP/b"
same_report "$TMP/a" "$TMP/b" --a oracle --b cpu --first 0
same_report "$top_srcdir/tests/index-bad/good.safetensors.index.json" "$TMP/cpu.safetensors"
same_report "$top_srcdir/tests/st-good/storage.safetensors" "$top_srcdir/tests/st-good/storage.safetensors"
# Larger than a segment and a window (8 MiB each), with the page cache
# holding only parts of B.
hdr='{"w":{"dtype":"F32","shape":[3145728],"data_offsets":[0,12582912]}}'
hdr=$(printf '%-72s' "$hdr") # 8-byte aligned, padded with spaces
{ printf '\110\0\0\0\0\0\0\0%s' "$hdr"; head -c 12582912 /dev/urandom; } >"$TMP/big-a.safetensors"
# each flip's element made a finite float first (its top byte 0x3f in both):
# random bytes make a NaN one time in 256, and a NaN with a flipped
# mantissa bit still equals it (NaNs equal by class)
for at in 100 4194400 9000000 12582900; do
    printf '\077' | dd of="$TMP/big-a.safetensors" bs=1 seek=$((at + 3)) conv=notrunc 2>/dev/null
done
cp "$TMP/big-a.safetensors" "$TMP/big-b.safetensors"
for at in 100 4194400 9000000 12582900; do # the lowest bit of the element's lowest byte flipped
    v=$(od -An -tu1 -j $at -N1 "$TMP/big-b.safetensors" | tr -d ' ')
    printf "\\$(printf '%03o' $((v ^ 1)))" | dd of="$TMP/big-b.safetensors" bs=1 seek=$at conv=notrunc 2>/dev/null
done
cmp -l "$TMP/big-a.safetensors" "$TMP/big-b.safetensors" | wc -l | grep -qx ' *4' || fail "4 bytes not flipped"
for part in "0 1024" "2048 1024"; do # 4 KiB blocks: skip count
    dd if="$TMP/big-b.safetensors" iflag=nocache skip=${part% *} count=${part#* } bs=4096 \
        of=/dev/null 2>/dev/null
    HOWS="0:0 0:1 1000000:0 4194304:1" same_report "$TMP/big-a.safetensors" "$TMP/big-b.safetensors"
done
grep -q '"mismatched": 4,' "$TMP/s.json" || fail "4 flipped bytes, 4 mismatches: $(grep mismatched "$TMP/s.json")"
# A plain file with CRCs (a golden, inflated), cut into segments: the CRCs
# combine, and a flipped data byte is found in any segment.
g="$top_srcdir/golden/rope-llama2/cpu-sleef.safetensors.gz"
gunzip -c "$g" >"$TMP/g.safetensors"
same_report "$TMP/g.safetensors" "$g"
cp "$TMP/g.safetensors" "$TMP/bad.safetensors"
size=$(wc -c <"$TMP/bad.safetensors")
printf '\377' | dd of="$TMP/bad.safetensors" bs=1 seek=$((size - 1000)) conv=notrunc 2>/dev/null
for seg in 0 4096 100; do
    BP_DIFF_SEGMENT=$seg run 2 diff "$TMP/g.safetensors" "$TMP/bad.safetensors"
    err_has "cannot read '$TMP/bad.safetensors': CRC mismatch for tensor"
done
BP_DIFF_IN_MEMORY=1 run 2 diff "$TMP/g.safetensors" "$TMP/bad.safetensors"
done_ok
