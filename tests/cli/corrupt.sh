# Corrupted goldens: single bits flipped in a golden, plain and gzip'd,
# must make `run` exit 2 with a message naming the golden, every time.
#   plain: every bit of the length field and of the first 64 header bytes,
#          and 96 bits spread over the rest of the header and the data;
#   gzip:  every bit of the 12-byte gzip header, of the last deflate byte
#          and of the 8-byte trailer, and 96 bits spread over the deflate
#          stream.
# A flip in the deflate stream may leave the inflated bytes identical:
# deflate has many encodings of one content (a back-reference to another
# copy of the same bytes), and the padding bits after the final block are
# never read.  Such a flip changes nothing bitprobe reads, so the golden
# is intact and `run` must pass (exit 0).  Python's zlib decides, for each
# flip, whether the inflated bytes are identical; every other flip must be
# refused.
. "$top_srcdir/tests/cli/lib.sh"
PY=${PYTHON3:-python3}
command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
P="$TMP/probes" G="$TMP/golden"
mkdir -p "$P"
cp "$top_srcdir/probes/arange-step.yaml" "$P/"
opts="--probes $P --device cpu"
run 0 bless arange-step $opts --golden "$G"
gold=arange-step/cpu-sleef.safetensors.gz
run 0 run arange-step $opts --golden "$G"

# The flipped files and what each must give: NAME EXPECTED-EXIT WHAT.
mkdir "$TMP/flips"
"$PY" - "$G/$gold" "$TMP/flips" <<'PY' >"$TMP/list" || fail "cannot make the flipped files"
import os, struct, sys, zlib
gz = open(sys.argv[1], "rb").read()
plain = zlib.decompress(gz, 31)
out = sys.argv[2]
hlen = struct.unpack("<Q", plain[:8])[0]
n = 0

def emit(kind, data, i, b, expect, what):
    global n
    d = bytearray(data)
    d[i] ^= 1 << b
    name = "%04d" % n
    n += 1
    open(os.path.join(out, name), "wb").write(d)
    print(name, expect, "%s byte %d bit %d (%s)" % (kind, i, b, what))

def spread(lo, hi, k):
    step = max(1, (hi - lo) // k)
    return [(i, (i * 5 + 3) % 8) for i in range(lo, hi, step)][:k]

for i in range(8 + 64):
    for b in range(8):
        emit("plain", plain, i, b, 2, "length" if i < 8 else "header")
for i, b in spread(72, len(plain), 96):
    emit("plain", plain, i, b, 2, "header" if i < 8 + hlen else "data")

def inflates_same(d):
    try:
        z = zlib.decompressobj(31)
        o = z.decompress(bytes(d)) + z.flush()
        return z.eof and not z.unused_data and o == plain
    except zlib.error:
        return False

cases = [(i, b) for i in range(12) for b in range(8)]
cases += [(len(gz) - 9, b) for b in range(8)]
cases += [(i, b) for i in range(len(gz) - 8, len(gz)) for b in range(8)]
cases += spread(12, len(gz) - 9, 96)
for i, b in cases:
    d = bytearray(gz)
    d[i] ^= 1 << b
    same = inflates_same(d)
    what = "gzip header" if i < 12 else "trailer" if i >= len(gz) - 8 else "deflate"
    emit("gzip", gz, i, b, 0 if same else 2,
         what + (", inflates to the same bytes" if same else ""))
PY
total=$(wc -l <"$TMP/list")
nsame=$(awk '$2 == 0' "$TMP/list" | wc -l)

# Two lanes (one golden tree each) share the flips.
lane() {
    lg="$TMP/g$1"
    cp -R "$G" "$lg"
    awk -v l="$1" 'NR % 2 == l' "$TMP/list" | while read -r name want what; do
        cp "$TMP/flips/$name" "$lg/$gold"
        "$BITPROBE" run arange-step $opts --golden "$lg" >"$TMP/o$1" 2>"$TMP/e$1"
        got=$?
        if [ "$got" -ne "$want" ]; then
            echo "$what: exit $got, expected $want"
            cat "$TMP/o$1" "$TMP/e$1"
        elif [ "$want" -eq 2 ] && ! grep -qF "golden of probe 'arange-step' is unusable: cannot read '$lg/$gold'" "$TMP/o$1"; then
            echo "$what: message does not name the golden:"
            cat "$TMP/o$1" "$TMP/e$1"
        fi
    done >"$TMP/fail$1"
}
lane 0 &
l0=$!
lane 1
wait $l0
if [ -s "$TMP/fail0" ] || [ -s "$TMP/fail1" ]; then
    cat "$TMP/fail0" "$TMP/fail1" >&2
    fail "flipped goldens not refused"
fi
ntests=$((ntests + total))
echo "$total flips refused or harmless; $nsame in the deflate stream inflate to the same bytes and pass"
awk '$2 == 0 { $1 = $2 = ""; print " " $0 }' "$TMP/list"
done_ok
