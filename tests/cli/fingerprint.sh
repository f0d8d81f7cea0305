# bitprobe fingerprint on the CPU and the oracle.  Expected verdicts follow
# from the documented formulations: the CPU divides (true division), takes
# arange from a double base per 8-lane register (be_cpu_arith.c), keeps
# subnormals, writes 0x7fff for a bf16 NaN; the oracle is correctly rounded
# everywhere.  The arange match counts are recomputed here in rationals.
. "$top_srcdir/tests/cli/lib.sh"
PY="${PYTHON3:-python3}"

run 0 fingerprint --device cpu
out_has "cpu (cpu-sleef)"
out_has "tensor / scalar            true               9 / 10 -> 0x3f666666"
out_has "FMA contraction of a*b+c   on"
out_has "flush to zero              kept"
out_has "fp32 matmul inputs         fp32"
out_has "NaN payload, f32 -> bf16   canonical-7fff     0x7fc12345 -> 0x7fff"
out_has "float arange accumulation  aten-cpu"

run 0 fingerprint --device cpu,oracle --json
cp "$TMP/out" "$TMP/fp.json"
"$PY" - "$TMP/fp.json" <<'PY' || fail "fingerprint JSON"
import json, struct, sys
from fractions import Fraction as F
d = {b["name"]: b["behaviour"] for b in json.load(open(sys.argv[1]))["backends"]}
cpu, orc = d["cpu"], d["oracle"]
want = {"div_scalar": "true", "div_tensor": "true", "fma": "on", "subnormals": "kept",
        "matmul_fp32": "fp32", "matmul_bf16": "fp32-accumulate", "nan_bf16": "canonical-7fff"}
for k, v in want.items():
    assert cpu[k]["verdict"] == v and orc[k]["verdict"] == v, (k, cpu[k], orc[k])
assert cpu["arange"]["verdict"] == "aten-cpu" and orc["arange"]["verdict"] == "double"
for f in ("sin", "cos", "exp", "log", "pow"):
    assert orc[f]["verdict"] == "correctly-rounded", orc[f]
    assert cpu[f]["verdict"] in ("correctly-rounded", "1-ulp"), cpu[f]  # SLEEF u10

# arange(0, 64, 0.1) three ways, each rounding done on exact rationals
def f32(x):  # nearest f32 (ties to even) of a Fraction
    if x == 0:
        return F(0)
    c = struct.unpack("<I", struct.pack("<f", float(x)))[0]
    cand = [F(struct.unpack("<f", struct.pack("<I", b))[0]) for b in (c - 1, c, c + 1)]
    return min(cand, key=lambda v: (abs(v - x), struct.unpack("<I", struct.pack("<f", float(v)))[0] & 1))
def f64(x):
    return F(float(x))  # Fraction -> float rounds to nearest
n, s = 640, F(0.1)
fl = [f32(f32(s) * i) for i in range(n)]
db = [f32(f64(s * i)) for i in range(n)]
at = []
for i in range(n):
    if i < n - n % 16:
        r = i - i % 8
        base = f32(f64(s * r))
        at.append(f32(f64((i - r) * s + base)) if i > r else base)
    else:
        at.append(f32(f64(s * i)))
same = lambda a, b: sum(x == y for x, y in zip(a, b))
ev = cpu["arange"]["evidence"]
assert f"matches float {same(at, fl)}, double {same(at, db)}, ATen CPU lanes 640 of 640" in ev, ev
ev = orc["arange"]["evidence"]
assert f"matches float {same(db, fl)}, double 640, ATen CPU lanes {same(db, at)} of 640" in ev, ev
PY

# goldens and saved runs carry the table in the backend's fingerprint
run 0 run seed-div --device cpu --no-golden --save "$TMP/saved"
"$PY" - "$TMP/saved" <<'PY' || fail "saved run without behaviour"
import gzip, json, struct, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))
assert m["backends"][0]["fingerprint"]["behaviour"]["div_scalar"]["verdict"] == "true"
raw = gzip.open(sys.argv[1] + "/seed-div/cpu-sleef.safetensors.gz").read()
h = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
fp = json.loads(h["__metadata__"]["fingerprint"])
assert fp["backend"]["behaviour"]["fma"]["verdict"] == "on"
PY
mkdir -p "$TMP/probes"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/probes/"
run 0 bless seed-div --probes "$TMP/probes" --golden "$TMP/golden" --device oracle
"$PY" - "$TMP/golden/seed-div/oracle.safetensors.gz" <<'PY' || fail "golden without behaviour"
import gzip, json, struct, sys
raw = gzip.open(sys.argv[1]).read()
h = json.loads(raw[8:8 + struct.unpack("<Q", raw[:8])[0]])
fp = json.loads(h["__metadata__"]["fingerprint"])
assert fp["backend"]["behaviour"]["sin"]["verdict"] == "correctly-rounded"
PY

run 2 fingerprint --device nosuch
err_has "unknown backend 'nosuch'"
run 2 fingerprint extra
err_has "unexpected argument 'extra'"
done_ok
