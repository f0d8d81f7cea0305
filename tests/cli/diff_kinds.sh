# bitprobe diff carries on past what it cannot compare: a tensor of a dtype
# bitprobe does not read, of another shape or of another dtype is a "not
# comparable" result naming both sides, everything else is compared, and
# the exit status is 1; --cast compares a dtype with one it widens to
# exactly.  Every safetensors dtype is compared bit for bit.
. "$top_srcdir/tests/cli/lib.sh"
find_python || { echo "SKIP: no Python to write the files"; exit 77; }
py - "$TMP" <<'PY' || fail "cannot write the files"
import os, struct, sys
sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "cli"))
from tensorfile import st
f32 = lambda *v: struct.pack("<%df" % len(v), *v)
A = [("same", "F32", [2], f32(1, 2)),
     ("shape", "F32", [4], f32(1, 2, 3, 4)),
     ("half", "F16", [2], struct.pack("<2H", 0x3c00, 0x4000)),          # 1, 2
     ("fp4", "F4", [4], b"\x12\x34"),
     ("u8", "U8", [3], bytes([0, 255, 7])),
     ("i16", "I16", [2], struct.pack("<2h", -5, 9)),
     ("e4", "F8_E4M3", [4], bytes([0x7e, 0x7f, 0x00, 0x38])),
     ("e5", "F8_E5M2", [2], bytes([0x7b, 0x3c])),
     ("bo", "BOOL", [3], bytes([1, 0, 1])),
     ("bf", "BF16", [2], struct.pack("<2H", 0x3f80, 0x4000))]            # 1, 2
B = [("same", "F32", [2], f32(1, 2)),
     ("shape", "F32", [2, 2], f32(1, 2, 3, 4)),
     ("half", "F32", [2], f32(1, 2.5)),
     ("fp4", "F4", [4], b"\x12\x34"),
     ("u8", "U8", [3], bytes([0, 254, 7])),
     ("i16", "I16", [2], struct.pack("<2h", 5, 9)),
     ("e4", "F8_E4M3", [4], bytes([0x7e, 0xff, 0x80, 0x39])),  # NaN sign, -0, 1 ulp
     ("e5", "F8_E5M2", [2], bytes([0x7c, 0x3c])),              # max vs inf
     ("bo", "BOOL", [3], bytes([1, 1, 1])),
     ("bf", "F16", [2], struct.pack("<2H", 0x3c00, 0x4000))]
st(sys.argv[1] + "/a.safetensors", A)
st(sys.argv[1] + "/b.safetensors", B)
PY
a="$TMP/a.safetensors" b="$TMP/b.safetensors"
run 1 diff "$a" "$b" --json "$TMP/d.json"
out_has "not comparable: shapes differ: fp32 [4] in A, fp32 [2, 2] in B"
out_has "not comparable: dtypes differ: fp16 in A, fp32 in B (--cast compares them after exact widening)"
# a dtype bitprobe does not read: named as the file spells it, with the
# shapes of both sides (not as bytes, "u8", without a shape)
out_has "  fp4 F4: $b vs $a: not comparable: unknown dtype F4: F4 [4] in A, F4 [4] in B"
out_has "not comparable: dtypes differ: bf16 in A, fp16 in B"
py - "$TMP/d.json" <<'PY' || fail "the JSON report's figures"
import json, sys
r = {x["probe"]: x for x in json.load(open(sys.argv[1]))["results"]}
assert not r["shape"]["compared"] and not r["fp4"]["compared"] and not r["half"]["compared"]
assert r["fp4"]["dtype"] == "F4", r["fp4"]
assert r["same"]["mismatched"] == 0
assert r["u8"]["mismatched"] == 1 and r["u8"]["max_ulp"]["value"] == 1, r["u8"]
assert r["i16"]["mismatched"] == 1 and r["i16"]["max_abs"]["value"] == 10, r["i16"]
# e4m3fn: NaN against -NaN is equal by class, +0 against -0 a zero's sign
# (a mismatch of its own), 1 vs 1.125 one ulp
assert r["e4"]["mismatched"] == 2 and r["e4"]["nan_payload_diffs"] == 1, r["e4"]
assert r["e4"]["zero_sign_diffs"] == 1 and r["e4"]["max_ulp"]["value"] == 1
assert r["e4"]["histogram"] == {"0": 2, "+0/-0": 1, "1": 1}, r["e4"]
# e5m2: the largest finite value against infinity is a class change
assert r["e5"]["mismatched"] == 1 and r["e5"]["class_changes"] == 1, r["e5"]
assert r["bo"]["mismatched"] == 1, r["bo"]
PY
# the JSON report read back keeps the dtype as spelt
run 1 report "$TMP/d.json" --junit "$TMP/d.xml"
out_has "  fp4 F4: $b vs $a: not comparable: unknown dtype F4"
grep -q 'name="fp4.F4.' "$TMP/d.xml" || fail "JUnit names the unknown dtype: $(grep fp4 "$TMP/d.xml")"

# --cast: fp16 widens exactly to fp32 and is compared there; bf16 and fp16
# do not widen to each other
run 1 diff -vv "$a" "$b" --cast
out_has "half  fp32 [2]"
out_has "not comparable: dtypes differ: bf16 in A, fp16 in B (neither widens exactly to the other)"
out_lacks "not comparable: dtypes differ: fp16"

# a file that is not a tensor file is named for what it looks like
printf '{"weight_map": {}}\n' >"$TMP/x.json"
run 2 diff "$TMP/x.json" "$a"
err_has "cannot read '$TMP/x.json': JSON, not safetensors, .npy or .npz"
printf 'name: x\nops: []\n' >"$TMP/p.yaml"
run 2 diff "$a" "$TMP/p.yaml"
err_has "cannot read '$TMP/p.yaml': YAML, not safetensors"
gzip -c "$TMP/p.yaml" >"$TMP/p.yaml.gz"
run 2 diff "$a" "$TMP/p.yaml.gz"
err_has "cannot read '$TMP/p.yaml.gz': gzip'd YAML, not safetensors"
: >"$TMP/empty"
run 2 diff "$a" "$TMP/empty"
err_has "an empty file, not safetensors"
# torch.save's zip (its first member <archive>/data.pkl) is named as such,
# not read as an .npz; a directory walk skips it and compares the rest, as
# in a Hugging Face repository holding pytorch_model.bin beside
# model.safetensors
py - "$TMP/pytorch_model.bin" <<'PY' || fail "cannot write the archive"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("pytorch_model/data.pkl", b"\x80\x02}q\x00.")
    z.writestr("pytorch_model/version", b"3\n")
PY
run 2 diff "$TMP/pytorch_model.bin" "$a"
err_has "cannot read '$TMP/pytorch_model.bin': a torch.save archive (pickled tensors), not safetensors, .npy or .npz"
mkdir "$TMP/r1" "$TMP/r2"
cp "$TMP/pytorch_model.bin" "$TMP/r1/"
cp "$TMP/pytorch_model.bin" "$TMP/r2/"
cp "$a" "$TMP/r1/model.safetensors"
cp "$a" "$TMP/r2/model.safetensors"
run 1 diff -vv "$TMP/r1" "$TMP/r2"
out_has "note: skipped $TMP/r1/pytorch_model.bin: a torch.save archive (pickled tensors)"
out_has "model.safetensors: same  fp32 [2]"
# a plain directory holding one tensor file is that file's set (a Hugging
# Face repository against a file or a sharded checkpoint); holding several
# or none, it is refused saying so
run 1 diff -vv "$TMP/r1" "$a"
out_has "same  fp32 [2]"
out_has "note: $TMP/r1: its one tensor file, $TMP/r1/model.safetensors, read"
cp "$a" "$TMP/r1/other.safetensors"
run 2 diff "$TMP/r1" "$a"
err_has "cannot read '$TMP/r1': a directory with neither manifest.json (a saved run) nor one *.safetensors.index.json (a checkpoint), holding several tensor files (model.safetensors, other.safetensors); compare it with another directory"
mkdir "$TMP/r0"
run 2 diff "$a" "$TMP/r0"
err_has "cannot read '$TMP/r0': a directory with neither manifest.json (a saved run) nor one *.safetensors.index.json (a checkpoint), holding no tensor file"
done_ok
