#!/bin/sh
# One way to open what a file names (src/safeopen.c), in every reader:
# beneath its directory (a symbolic link out refused, never read), regular
# files only (a FIFO refused at once, never waited on: each command runs
# under a 20 s timeout), a foreign file's bytes never in a message; a
# Hugging Face hub cache's sharded snapshot (links into ../../blobs) read,
# a link leaving the repository's directory refused.  Readers: diff and
# diff --consensus of saved runs, explain of a saved run, report, the
# ledger's captures, probe YAML and a probe's load file, checkpoints.
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python"; exit 77; }

# tmo STATUS ARGS...: run, within 20 s (a hang fails the test)
tmo() {
    want=$1
    shift
    ntests=$((ntests + 1))
    timeout 20 "$BITPROBE" "$@" >"$TMP/out" 2>"$TMP/err"
    got=$?
    [ "$got" -ne 124 ] || fail "bitprobe $*: still waiting after 20 s"
    [ "$got" -eq "$want" ] || fail "bitprobe $*: exit $got, expected $want"
}
# a foreign file, outside every directory given: its bytes must never show
printf 'rootsecrSECRET:x:0:0:secret\n' >"$TMP/foreign"
secret_number=$(od -An -tu8 -N8 "$TMP/foreign" | tr -d ' ')
no_leak() {
    ! grep -qE "secr|SECRET|$secret_number" "$TMP/out" "$TMP/err" ||
        fail "the foreign file's bytes in the output: $(cat "$TMP/out" "$TMP/err")"
}

for h in a b c; do
    run 0 run seed-div --device cpu --no-golden --quiet --save "$TMP/$h"
done
F=$(cd "$TMP/a" && echo seed-div/*.safetensors.gz)
cp "$TMP/a/$F" "$TMP/outside.safetensors.gz"

# a bundle file that links outside the bundle, to a valid container
rm "$TMP/c/$F"
ln -s "$TMP/outside.safetensors.gz" "$TMP/c/$F"
tmo 2 diff "$TMP/a" "$TMP/c"
err_has "files[0] '$F': it leaves the directory through a symbolic link"
tmo 2 diff --consensus "$TMP/a" "$TMP/b" "$TMP/c"
err_has "it leaves the directory through a symbolic link"
tmo 2 explain seed-div --a "$TMP/c" --b cpu
err_has "it leaves the directory through a symbolic link"
# ... and to a foreign file
rm "$TMP/c/$F"
ln -s "$TMP/foreign" "$TMP/c/$F"
for cmd in "diff $TMP/a $TMP/c" "diff --consensus $TMP/a $TMP/b $TMP/c" \
           "explain seed-div --a $TMP/c --b cpu"; do
    tmo 2 $cmd
    err_has "it leaves the directory through a symbolic link"
    no_leak
done
# a FIFO in its place
rm "$TMP/c/$F"
mkfifo "$TMP/c/$F"
for cmd in "diff $TMP/a $TMP/c" "diff --consensus $TMP/a $TMP/b $TMP/c" \
           "explain seed-div --a $TMP/c --b cpu"; do
    tmo 2 $cmd
    err_has "it is a FIFO, not a regular file"
done
rm "$TMP/c/$F"
cp "$TMP/a/$F" "$TMP/c/$F"
run 0 diff "$TMP/a" "$TMP/c"

# manifest.json: a link to a foreign file, a FIFO (diff, consensus, report)
mv "$TMP/c/manifest.json" "$TMP/manifest.json"
ln -s "$TMP/foreign" "$TMP/c/manifest.json"
for cmd in "diff $TMP/a $TMP/c" "diff --consensus $TMP/a $TMP/b $TMP/c" "report $TMP/c"; do
    tmo 2 $cmd
    err_has "manifest.json"
    err_has "it leaves the directory through a symbolic link"
    no_leak
done
rm "$TMP/c/manifest.json"
mkfifo "$TMP/c/manifest.json"
for cmd in "diff $TMP/a $TMP/c" "diff --consensus $TMP/a $TMP/b $TMP/c" "report $TMP/c"; do
    tmo 2 $cmd
    err_has "manifest.json"
    err_has "it is a FIFO, not a regular file"
done
# files the user names: a FIFO is refused, not waited on
tmo 2 diff "$TMP/c/manifest.json" "$TMP/a"
err_has "it is a FIFO, not a regular file"
tmo 2 report "$TMP/c/manifest.json"
err_has "it is a FIFO, not a regular file"

# an op ledger's captures file: a FIFO, a link to a foreign file
G="$top_srcdir/tests/ledger-good"
mkdir "$TMP/led"
cp "$G/good.ledger" "$G/good.ledger.safetensors" "$G/good-b.ledger" "$TMP/led/"
mkfifo "$TMP/led/good-b.ledger.safetensors"
tmo 2 explain "$TMP/led/good.ledger" "$TMP/led/good-b.ledger" --out "$TMP/led" --device cpu
err_has "good-b.ledger.safetensors': it is a FIFO, not a regular file"
rm "$TMP/led/good-b.ledger.safetensors"
ln -s "$TMP/foreign" "$TMP/led/good-b.ledger.safetensors"
tmo 2 explain "$TMP/led/good.ledger" "$TMP/led/good-b.ledger" --out "$TMP/led" --device cpu
err_has "it leaves the directory through a symbolic link"
no_leak

# probes: a FIFO for a YAML file (list reports it and goes on), a FIFO or a
# link out for a probe's load file
mkdir "$TMP/probes"
mkfifo "$TMP/probes/fifo.yaml"
tmo 2 list --probes "$TMP/probes"
err_has "fifo.yaml': it is a FIFO, not a regular file"
rm "$TMP/probes/fifo.yaml"
printf 'name: ld\ndescription: d\ndtypes: [fp32]\nops:\n  - {out: x, op: load, shape: [2], dtype: fp32}\noutputs:\n  - {name: x}\n' \
    >"$TMP/probes/ld.yaml"
mkfifo "$TMP/probes/ld.safetensors"
tmo 2 list --probes "$TMP/probes"
err_has "load 'x' reads the probe's tensors: cannot open '$TMP/probes/ld.safetensors': it is a FIFO, not a regular file"
rm "$TMP/probes/ld.safetensors"
ln -s "$TMP/foreign" "$TMP/probes/ld.safetensors"
tmo 2 list --probes "$TMP/probes"
err_has "it leaves the directory through a symbolic link"
no_leak

# a Hugging Face hub cache: snapshots/REV/*.safetensors -> ../../blobs/SHA
"$PY" - "$TMP/hub" "$TMP/plain" <<'PY' || fail "cannot write the hub cache"
import hashlib, json, os, struct, sys
hub, plain = sys.argv[1], sys.argv[2]
repo = os.path.join(hub, "models--org--tiny")
snap = os.path.join(repo, "snapshots", "0123abcd")
for d in (os.path.join(repo, "blobs"), snap, plain, os.path.join(repo, "refs")):
    os.makedirs(d, exist_ok=True)
def st(tensors):
    hdr, data, off = {}, b"", 0
    for name, vals in tensors.items():
        raw = struct.pack("<%df" % len(vals), *vals)
        hdr[name] = {"dtype": "F32", "shape": [len(vals)], "data_offsets": [off, off + len(raw)]}
        off += len(raw); data += raw
    h = json.dumps(hdr).encode(); h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data
files = {
    "model-00001-of-00002.safetensors": st({"a": [1, 2, 3], "b": [4.0]}),
    "model-00002-of-00002.safetensors": st({"c": [5, 6]}),
}
files["model.safetensors.index.json"] = json.dumps({"metadata": {}, "weight_map": {
    "a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
    "c": "model-00002-of-00002.safetensors"}}).encode()
for name, data in files.items():
    sha = hashlib.sha256(data).hexdigest()
    open(os.path.join(repo, "blobs", sha), "wb").write(data)
    os.symlink(os.path.join("..", "..", "blobs", sha), os.path.join(snap, name))
    open(os.path.join(plain, name), "wb").write(data)
open(os.path.join(repo, "refs", "main"), "w").write("0123abcd")
PY
S="$TMP/hub/models--org--tiny/snapshots/0123abcd"
run 0 diff -vv "$S" "$TMP/plain"
out_has "passed: 3 compared (3 identical)"
run 0 diff "$S/model.safetensors.index.json" "$TMP/plain"
# the hub layout gives no licence elsewhere: the same tree under a name
# that is not models--, datasets-- or spaces-- keeps the snapshot as root
cp -a "$TMP/hub/models--org--tiny" "$TMP/org-tiny"
tmo 2 diff "$TMP/org-tiny/snapshots/0123abcd" "$TMP/plain"
err_has "it leaves the directory through a symbolic link"
# a link that leaves the repository's directory is still refused
cp "$TMP/plain/model-00002-of-00002.safetensors" "$TMP/hub/out.safetensors"
rm "$S/model-00002-of-00002.safetensors"
ln -s ../../../../out.safetensors "$S/model-00002-of-00002.safetensors"
tmo 2 diff "$S" "$TMP/plain"
err_has "shard 'model-00002-of-00002.safetensors' of tensor 'c': it leaves the directory through a symbolic link"
done_ok
