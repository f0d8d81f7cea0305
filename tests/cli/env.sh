# bitprobe env: versions in text and JSON; the NCCL collectives would load
# (its version and file, or why there is none).
. "$top_srcdir/tests/cli/lib.sh"

run 0 env
for k in bitprobe build cpu compiler glibc sleef mpfr libyaml zlib jansson gpu; do
    out_has "$k"
done
# NCCL: the file BP_NCCL_LIB names, or none with the loader's reason
export BP_NCCL_LIB="$TMP/no-such/libnccl.so.2"
run 0 env
unset BP_NCCL_LIB
grep -q "^nccl       none (NCCL could not be loaded: $TMP/no-such/libnccl.so.2: " "$TMP/out" ||
    fail "env without NCCL: $(grep '^nccl' "$TMP/out")"
run 0 env
grep -Eq "^nccl       (none \(NCCL could not be loaded: |[0-9]+\.[0-9]+\.[0-9]+ \(/.*libnccl[^;]*; BP_NCCL_LIB names another\))" "$TMP/out" ||
    fail "env's nccl line: $(grep '^nccl' "$TMP/out")"
run 0 env --json
if find_python; then
    "$PY" - "$TMP/out" <<'PY' || fail "env --json is not the expected JSON"
import json, sys
env = json.load(open(sys.argv[1]))
for k in ("tool_version", "build", "cpu", "compiler", "libs", "gpu"):
    assert k in env, k
for k in ("glibc", "sleef", "mpfr", "libyaml", "zlib", "jansson"):
    assert env["libs"][k], k
assert "nccl" not in env["libs"]  # not part of the fingerprint
n = env["nccl"]
assert ("none" in n) != ("version" in n and n["file"].endswith(".so.2")), n
PY
else
    skip_later "no Python 3: env --json not parsed"
fi
done_ok
