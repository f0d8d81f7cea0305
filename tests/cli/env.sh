# bitprobe env: versions in text and JSON.
. "$top_srcdir/tests/cli/lib.sh"

run 0 env
for k in bitprobe build cpu compiler glibc sleef mpfr libyaml zlib jansson gpu; do
    out_has "$k"
done
run 0 env --json
if find_python; then
    "$PY" - "$TMP/out" <<'PY' || fail "env --json is not the expected JSON"
import json, sys
env = json.load(open(sys.argv[1]))
for k in ("tool_version", "build", "cpu", "compiler", "libs", "gpu"):
    assert k in env, k
for k in ("glibc", "sleef", "mpfr", "libyaml", "zlib", "jansson"):
    assert env["libs"][k], k
PY
else
    skip_later "no Python 3: env --json not parsed"
fi
done_ok
