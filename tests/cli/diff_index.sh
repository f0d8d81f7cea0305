# A Hugging Face checkpoint index is hostile input: every case of
# tests/index-bad (one index file per rule, listed in cases.tsv) is refused
# with exit 2, the file and the rule; shards that would lead outside the
# checkpoint's directory (symbolic links, made here) are refused without
# being read (checked with strace where it exists).
. "$top_srcdir/tests/cli/lib.sh"
D="$top_srcdir/tests/index-bad"
good="$D/good.safetensors.index.json"
run 0 diff -vv "$good" "$good"
out_has "a  fp32 [2]"

tab=$(printf '\t')
while IFS="$tab" read -r file msg; do
    run 2 diff "$D/$file" "$good"
    err_has "cannot read '$D/$file': "
    err_has "$msg"
    run 2 diff "$good" "$D/$file"
    err_has "$msg"
done <"$D/cases.tsv"
[ "$ntests" -ge 37 ] || fail "only $ntests cases ran"

# Made here: a checkpoint directory whose shards are links, a FIFO, a
# directory.
C="$TMP/ck" O="$TMP/outside"
mkdir -p "$C" "$O"
cp "$D/s1.safetensors" "$C/"
cp "$D/s2.safetensors" "$O/"
printf '{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "s2.safetensors"}}' \
    >"$C/model.safetensors.index.json"
ln -s "$O/s2.safetensors" "$C/s2.safetensors"
run 2 diff "$C" "$good"
err_has "cannot read '$C/model.safetensors.index.json': shard 's2.safetensors' of tensor 'c': "
err_has "symbolic link"
# every open of a name "s2.safetensors" (the link) must have failed
if command -v strace >/dev/null 2>&1 &&
    strace -f -qq -e trace=open,openat,openat2 -o "$TMP/trace" "$BITPROBE" diff "$C" "$C" \
        >/dev/null 2>&1; [ $? -eq 2 ] && grep -q 's2.safetensors' "$TMP/trace"; then
    ! grep 's2\.safetensors"' "$TMP/trace" | grep -v "= -1 " | grep -q . ||
        fail "the shard outside the directory was opened: $(grep s2 "$TMP/trace")"
else
    skip_later "no strace: the no-read-outside check"
fi
# a link that stays inside is a shard like any other
rm "$C/s2.safetensors"
mkdir "$C/real"
cp "$D/s2.safetensors" "$C/real/"
ln -s real/s2.safetensors "$C/s2.safetensors"
run 0 diff "$C" "$good"
# a directory reached through a link out of the checkpoint
rm "$C/s2.safetensors"
ln -s "$O" "$C/out"
sed 's|"c": "s2.safetensors"|"c": "out/s2.safetensors"|' "$C/model.safetensors.index.json" \
    >"$TMP/i" && mv "$TMP/i" "$C/model.safetensors.index.json"
run 2 diff "$C" "$good"
err_has "shard 'out/s2.safetensors' of tensor 'c': "
# a FIFO and a directory are not shards (and opening the FIFO must not hang)
rm "$C/out"
mkfifo "$C/out"
printf '{"weight_map": {"a": "s1.safetensors", "b": "s1.safetensors", "c": "out"}}' \
    >"$C/model.safetensors.index.json"
"$BITPROBE" diff "$C" "$good" >"$TMP/out" 2>"$TMP/err" &
pid=$!
( sleep 10; kill $pid 2>/dev/null ) &
wait $pid
[ $? -eq 2 ] || fail "a FIFO shard: not exit 2"
err_has "shard 'out' of tensor 'c': it is a FIFO, not a regular file"
rm "$C/out"
mkdir "$C/out"
run 2 diff "$C" "$good"
err_has "shard 'out' of tensor 'c': it is a directory, not a regular file"
# two indexes in one directory: name the one to read
rm -r "$C/out"
cp "$good" "$C/other.safetensors.index.json"
run 2 diff "$C" "$good"
err_has "two checkpoint indexes"
done_ok
