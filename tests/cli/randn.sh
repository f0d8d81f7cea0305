# randn and normal against tests/rng_normal_ref.py, the normal stream
# regenerated from probes/README.md's statement in plain Python (no
# bitprobe code): every backend available here (cpu and oracle; cuda on a
# GPU machine) saves its run, and each saved tensor, fp32, bf16, fp16 and
# fp64, must hold the stream's bits; the backends agree with each other.
. "$top_srcdir/tests/cli/lib.sh"
PY=
for p in ${PYTHON3:-} python3 /usr/bin/python3; do
    [ -n "$p" ] && "$p" -c 'import fractions, struct, gzip' >/dev/null 2>&1 && { PY=$p; break; }
done
[ -n "$PY" ] || { echo "no python3: SKIP"; exit 77; }
mkdir "$TMP/p"
cat >"$TMP/p/randn-ref.yaml" <<'Y'
name: randn-ref
description: randn and normal, every dtype, against the written statement
dtypes: [fp32, bf16, fp16]
ops:
  - {out: z, op: randn, shape: [3, 333], seed: 0, dtype: $dtype}
  - {out: z64, op: randn, shape: [3, 333], seed: 0, dtype: fp64}
  - {out: n, op: normal, shape: [1001], seed: 12345678901, stream: 4294967297, mean: 3000, std: 7777, dtype: $dtype}
  - {out: n64, op: normal, shape: [1001], seed: 12345678901, stream: 4294967297, mean: 3000, std: 7777, dtype: fp64}
outputs:
  - {name: z}
  - {name: z64}
  - {name: n}
  - {name: n64}
Y
run 0 run --probes "$TMP/p" randn-ref --no-golden --agree --save "$TMP/s"
nfiles=0
for f in "$TMP"/s/randn-ref/*.safetensors*; do
    [ -f "$f" ] || continue
    nfiles=$((nfiles + 1))
    for args in "0 0 z z64" "12345678901 4294967297 3000 7777 n n64"; do
        ntests=$((ntests + 1))
        # shellcheck disable=SC2086
        "$PY" "$top_srcdir/tests/rng_normal_ref.py" --check "$f" $args >"$TMP/out" 2>"$TMP/err" ||
            fail "$(basename "$f"): $args"
        echo "$(basename "$f") [$args]: $(cat "$TMP/out")"
    done
done
[ "$nfiles" -ge 2 ] || fail "expected saved runs of cpu and oracle, got $nfiles"
# on a GPU machine the device's run is one of them
if "$BITPROBE" list 2>/dev/null | grep -q '^  cuda  *available'; then
    ls "$TMP"/s/randn-ref/cuda* >/dev/null 2>&1 || fail "cuda is available but saved no run"
    echo "cuda's run included"
elif [ "${BP_REQUIRE_GPU:-0}" = 1 ]; then
    fail "BP_REQUIRE_GPU=1, but cuda is not available here"
fi
done_ok
