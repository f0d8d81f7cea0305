# run --jobs: probes beside each other on the cpu and oracle backends change
# nothing but the times.  The shipped suite with --jobs 1 (one probe after
# the other on each backend) is the reference; with --jobs 2 and 4 the
# text report (-vv: every result), the JSON,
# JUnit and Markdown reports and the saved bundle are the same bytes, times
# masked, and --timing lists the same runs in the same order with the same
# elements computed and taken from the memo (a probe's dtypes reuse each
# other's results on one thread whatever --jobs says).
. "$top_srcdir/tests/cli/lib.sh"
opts="--device cpu,oracle"
find_python || { echo "no python3: SKIP"; exit 77; }

# mask FILE: times, this run's paths and its --jobs out
mask() {
    sed -E -e "s#$TMP/[a-z0-9]+#DIR#g" -e 's/ --jobs [0-9]//g' \
        -e 's/"(seconds|total|user|sys|open|run|driver_init|context_start|golden_load|golden_compare|probes_load|cross_compare|elements_per_second|report|time|timestamp|date)": *[-0-9.e+]+/"\1": T/g' \
        -e 's/time="[0-9.]+"/time="T"/g' -e 's/timestamp="[^"]*"/timestamp="T"/g' \
        -e 's/20[0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9:.]+Z?/DATE/g' "$1"
}

jobs_run() {  # NAME ARGS...: the suite's reports and bundle under $TMP/NAME
    d="$TMP/$1"
    shift
    mkdir -p "$d"
    "$BITPROBE" run $opts "$@" -vv --timing --json "$d/r.json" --junit "$d/r.xml" \
        --markdown "$d/r.md" --save "$d/bundle" >"$d/text" 2>"$d/err"
    echo "exit $?" >>"$d/text"
    ntests=$((ntests + 1))
}

jobs_run one --jobs 1
jobs_run two --jobs 2
jobs_run four --jobs 4
grep -q "^exit [01]$" "$TMP/one/text" || fail "the reference run failed: $(tail -3 "$TMP/one/err")"
for n in two four; do
    for f in text r.xml r.md; do
        mask "$TMP/one/$f" >"$TMP/a" && mask "$TMP/$n/$f" >"$TMP/b"
        cmp -s "$TMP/a" "$TMP/b" ||
            fail "--jobs ($n): $f differs from --jobs 1: $(diff "$TMP/a" "$TMP/b" | head -10)"
    done
    (cd "$TMP/one/bundle" && find . -type f ! -name manifest.json | sort) >"$TMP/a"
    (cd "$TMP/$n/bundle" && find . -type f ! -name manifest.json | sort) >"$TMP/b"
    cmp -s "$TMP/a" "$TMP/b" || fail "--jobs ($n): the bundle has other files"
    while read -r f; do
        cmp -s "$TMP/one/bundle/$f" "$TMP/$n/bundle/$f" || fail "--jobs ($n): bundle $f differs"
    done <"$TMP/a"
    py - "$TMP/one" "$TMP/$n" <<'PY' || fail "--jobs ($n): the JSON report or its runs differ"
import json, re, sys
def load(d):
    r = json.load(open(d + "/r.json"))
    m = json.load(open(d + "/bundle/manifest.json"))
    t = r.pop("timing")
    for x in (r, m):
        x.pop("timing", None)
        x.get("env", {}).pop("argv", None)
        x.pop("argv", None)
    runs = [(u["probe"], u["dtype"], u["backend"], u["elements"], u["reused"], u["bytes"])
            for u in t["runs"]]
    bes = [(b["name"], b["elements"], b["reused"]) for b in t["backends"]]
    return r, m, runs, bes, t["held_peak_bytes"]
a, b = load(sys.argv[1]), load(sys.argv[2])
def strip(x):  # the command line differs by --jobs and the directory
    s = json.dumps(x, sort_keys=True).replace(sys.argv[1], "D").replace(sys.argv[2], "D")
    return re.sub(r" --jobs [0-9]", "", s)
assert strip(a[0]) == strip(b[0]), "JSON report"
assert strip(a[1]) == strip(b[1]), "manifest"
assert a[2] == b[2], [(x, y) for x, y in zip(a[2], b[2]) if x != y][:5]
assert a[3] == b[3], (a[3], b[3])
assert any(r[4] > 0 for r in a[2]), "nothing taken from the memo"
assert 0 < b[4] <= 64 << 20, b[4]
PY
done
done_ok
