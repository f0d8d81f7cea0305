# bitprobe diff on two Hugging Face sharded checkpoints (index JSON and
# shards, laid out differently on each side), made here with NumPy: F32,
# BF16, F16, BOOL, F8_E4M3 and I64 tensors, one on one side only, one with
# another shape.  Each tensor's mismatch count must be NumPy's (bits
# differ, NaNs equal by class, +0 equal to -0), the one-sided and reshaped
# tensors results of their own, and the exit status 1.  Also: .npz (stored
# and deflated) and directories walked as diff -r.
. "$top_srcdir/tests/cli/lib.sh"
find_python numpy || { echo "SKIP: no Python with NumPy"; exit 77; }
"$PY" - "$TMP" <<'PY' >"$TMP/want.json" || fail "cannot write the checkpoints"
import json, os, struct, sys
import warnings
import numpy as np
warnings.simplefilter("ignore")
rng = np.random.default_rng(20251123)
root = sys.argv[1]

def write_ckpt(d, shards):
    os.makedirs(d)
    wm = {}
    for k, tensors in enumerate(shards):
        name = "model-%05d-of-%05d.safetensors" % (k + 1, len(shards))
        off, hdr, data = 0, {}, b""
        for t, (dt, arr) in tensors.items():
            raw = arr.tobytes()
            hdr[t] = {"dtype": dt, "shape": list(arr.shape), "data_offsets": [off, off + len(raw)]}
            off += len(raw)
            data += raw
            wm[t] = name
        h = json.dumps(hdr).encode()
        h += b" " * (-len(h) % 8)
        open(os.path.join(d, name), "wb").write(struct.pack("<Q", len(h)) + h + data)
    json.dump({"metadata": {"total_size": 0}, "weight_map": wm},
              open(os.path.join(d, "model.safetensors.index.json"), "w"))

# A's tensors, as raw bits where NumPy has no such dtype
A = {
    "w_f32": ("F32", rng.standard_normal((64, 33)).astype(np.float32)),
    "w_bf16": ("BF16", rng.integers(0, 1 << 16, 1000, dtype=np.uint16)),
    "w_f16": ("F16", rng.standard_normal((7, 9)).astype(np.float16)),
    "mask": ("BOOL", rng.integers(0, 2, 100).astype(np.bool_)),
    "e4": ("F8_E4M3", np.arange(256, dtype=np.uint8)),
    "ids": ("I64", rng.integers(-2**40, 2**40, 50, dtype=np.int64)),
    "only_a": ("F32", np.ones(3, dtype=np.float32)),
    "reshaped": ("F32", np.arange(6, dtype=np.float32)),
}
B = {k: (dt, a.copy()) for k, (dt, a) in A.items() if k != "only_a"}
f = B["w_f32"][1].view(np.uint32).reshape(-1)
f[rng.choice(f.size, 37, replace=False)] ^= 1            # one-ulp flips
f[5] = 0x7fc00000; A["w_f32"][1].reshape(-1)[5] = np.float32("nan")  # NaN both
A["w_f32"][1].reshape(-1)[6] = 0.0; f[6] = 0x80000000      # +0 vs -0: counted
bf = B["w_bf16"][1]
bf[rng.choice(bf.size, 120, replace=False)] ^= rng.integers(1, 1 << 16, 120, dtype=np.uint16)
h = B["w_f16"][1].view(np.uint16).reshape(-1)
h[[0, 3, 10]] ^= 0x0001
B["mask"][1][[1, 2, 50]] ^= True
e4 = B["e4"][1]
e4[0x7f] = 0xff                                            # NaN sign: equal by class
e4[0x00] = 0x80                                            # +0 vs -0: a zero's sign
e4[[0x10, 0x38, 0x7e]] += np.array([1, 1, 1], dtype=np.uint8)  # 0x7e+1 = NaN: a class change
B["ids"][1][[4, 9]] += 1
B["reshaped"] = ("F32", np.arange(6, dtype=np.float32).reshape(2, 3))
B["only_b"] = ("F32", np.zeros(2, dtype=np.float32))
names = sorted(A)
write_ckpt(os.path.join(root, "A"), [{k: A[k] for k in names[:3]}, {k: A[k] for k in names[3:6]},
                                     {k: A[k] for k in names[6:]}])
bn = sorted(B)
write_ckpt(os.path.join(root, "B"), [{k: B[k] for k in bn[:4]}, {k: B[k] for k in bn[4:]}])

# NumPy's count of each tensor's mismatches: elements whose bits differ
# (+0 against -0 too), but for NaNs, equal by class (the formats'
# definitions say which patterns are NaN)
def values(dt, a):
    if dt == "F32": return a.astype(np.float64)
    if dt == "F16": return a.astype(np.float64)
    if dt == "BF16": return (a.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    if dt == "F8_E4M3":
        c = np.arange(256)
        s = np.where(c & 0x80, -1.0, 1.0)
        e, m = (c >> 3) & 15, c & 7
        v = s * np.where(e == 0, m * 2.0 ** -9, (1 + m / 8.0) * 2.0 ** (e - 7.0))
        v[(c & 0x7f) == 0x7f] = np.nan
        return v[a]
    return None
want = {}
for k in A:
    if k in B and A[k][1].shape == B[k][1].shape:
        dt, a, b = A[k][0], A[k][1].reshape(-1), B[k][1].reshape(-1)
        va, vb = values(dt, a), values(dt, b)
        bits = lambda x: x.view(np.dtype("u%d" % x.dtype.itemsize)) if x.dtype.kind == "f" else x
        if va is None:
            want[k] = int(np.count_nonzero(a != b))
        else:
            want[k] = int(np.count_nonzero((bits(a) != bits(b)) & ~(np.isnan(va) & np.isnan(vb))))
print(json.dumps(want))
PY
run 1 diff "$TMP/A" "$TMP/B" --json "$TMP/d.json"
"$PY" - "$TMP/d.json" "$TMP/want.json" <<'PY' || fail "mismatch counts differ from NumPy's"
import json, sys
res = {r["probe"]: r for r in json.load(open(sys.argv[1]))["results"]}
want = json.load(open(sys.argv[2]))
for k, n in want.items():
    assert res[k]["compared"], k
    assert res[k]["mismatched"] == n, (k, res[k]["mismatched"], n)
    print("%s: %d mismatches, as NumPy counts" % (k, n))
assert set(res) == set(want) | {"only_a", "only_b", "reshaped"}, sorted(res)
for k in ("only_a", "only_b", "reshaped"):
    assert not res[k]["compared"], k
assert res["e4"]["class_changes"] == 1 and res["e4"]["nan_payload_diffs"] == 1
assert res["w_f32"]["max_ulp"]["value"] == 1 and res["w_f32"]["zero_sign_diffs"] == 1
PY
out_has "only in a: $TMP/A"
out_has "only in b: $TMP/B"
out_has "not comparable: shapes differ: fp32 [6] in A, fp32 [2, 3] in B"
# the index itself names the same set; a checkpoint against itself is identical
run 1 diff "$TMP/A/model.safetensors.index.json" "$TMP/B"
run 0 diff "$TMP/A" "$TMP/A/model.safetensors.index.json"

# .npz: np.savez stores, np.savez_compressed deflates; the same arrays are
# identical whichever, and a changed one is found
"$PY" - "$TMP" <<'PY' || fail "cannot write the .npz files"
import sys
import numpy as np
d = sys.argv[1]
x = np.arange(1000, dtype=np.float32) / 7
y = np.arange(12, dtype=np.int16).reshape(3, 4)
np.savez(d + "/s.npz", x=x, y=y, m=x > 50)
np.savez_compressed(d + "/c.npz", x=x, y=y, m=x > 50)
x2 = x.copy(); x2[[3, 999]] = np.nextafter(x2[[3, 999]], np.float32(1e9))
np.savez_compressed(d + "/d.npz", x=x2, y=y, m=x > 50)
PY
run 0 diff -vv "$TMP/s.npz" "$TMP/c.npz"
out_has "x  fp32 [1000]"
out_has "y  i16 [3, 4]"
out_has "m  bool [1000]"
run 1 diff "$TMP/s.npz" "$TMP/d.npz"
out_has "2 of 1000 differ"

# directories, as diff -r: sets paired by relative path, files of other
# kinds skipped and said so, a set on one side only is a difference
mkdir -p "$TMP/ra/sub" "$TMP/rb/sub"
cp "$TMP/s.npz" "$TMP/ra/sub/"
cp "$TMP/d.npz" "$TMP/rb/sub/s.npz"
cp -r "$TMP/A" "$TMP/ra/ck"
cp -r "$TMP/A" "$TMP/rb/ck"
echo '{"hidden_size": 8}' >"$TMP/ra/config.json"
cp "$TMP/c.npz" "$TMP/rb/extra.npz"
run 1 diff -vv "$TMP/ra" "$TMP/rb"
out_has "sub/s.npz: x  fp32 [1000]"
out_has "2 of 1000 differ"
out_has "ck/model.safetensors.index.json: w_f32  fp32 [64, 33]"
out_has "skipped $TMP/ra/config.json: JSON"
out_has "only in b: $TMP/rb/extra.npz"
done_ok
