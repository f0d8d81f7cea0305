# Hostile inputs are refused quickly and in bounded memory: each command
# runs under a 1 GiB address-space limit (ulimit -v; a sanitizer build,
# which reserves terabytes of shadow address space, gets its peak resident
# memory checked instead) and a timeout that guards against a hang (20 s,
# 600 s for the 1.5 GiB bomb streamed below; a hang guard, not a speed
# claim: a loaded machine must not fail the test), and must exit 2 with its
# message.  The caps are those of the LIMITS section of bitprobe(1).
. "$top_srcdir/tests/cli/lib.sh"
PY=${PYTHON3:-python3}
L="$top_srcdir/tests/limits"
LIMIT_KB=1048576

if (ulimit -v $LIMIT_KB && "$BITPROBE" --help) >/dev/null 2>&1; then
    vlimit=$LIMIT_KB
else
    vlimit=
    command -v "$PY" >/dev/null 2>&1 || { echo "SKIP: no ulimit -v, no python3"; exit 77; }
    echo "bitprobe cannot start under ulimit -v (a sanitizer build): checking peak RSS"
fi

# bounded MESSAGE ARGS...: bitprobe ARGS must exit 2 (or $want) saying
# MESSAGE, within the time and memory bounds.
bounded() {
    msg=$1
    shift
    ntests=$((ntests + 1))
    t0=$(date +%s%N)
    if [ -n "$vlimit" ]; then
        (ulimit -v $vlimit && exec timeout ${hang:-20} "$BITPROBE" "$@") >"$TMP/out" 2>"$TMP/err"
        got=$?
        rss=
    else
        "$PY" - "$TMP/rss" timeout ${hang:-20} "$BITPROBE" "$@" >"$TMP/out" 2>"$TMP/err" <<'PY'
import resource, subprocess, sys
r = subprocess.run(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)
PY
        got=$?
        rss=$(cat "$TMP/rss")
        [ "$rss" -le $LIMIT_KB ] || fail "bitprobe $*: peak RSS $rss KiB"
    fi
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ $got -ne 124 ] || fail "bitprobe $*: still running after ${hang:-20} s"
    [ $got -eq "${want:-2}" ] || fail "bitprobe $*: exit $got, expected ${want:-2}"
    [ -z "$msg" ] || err_has "$msg"
    echo "done in $ms ms${rss:+, peak RSS $rss KiB}: ${msg:-exit $got}"
}

good="$top_srcdir/tests/st-good/python.safetensors"

# Containers claiming more than they hold.
bounded "header length 9000000000000000000 exceeds 100 MB" \
    diff "$top_srcdir/tests/st-bad/header-9e18.safetensors" "$good"
bounded "the header claims 60000000000 data bytes" \
    diff "$L/claims-60gb.safetensors" "$good"
bounded "input ends inside the data: the header claims 7516192768 data bytes" \
    diff "$L/claims-7gib.safetensors.gz" "$good"
bounded "more than the limit of 8589934592 for streamed input" \
    diff "$top_srcdir/tests/st-bad/gz-claims-9gib.safetensors.gz" "$good"
bounded "more than the limit of 68719476736" \
    diff "$top_srcdir/tests/st-bad/tensor-too-large.safetensors" "$good"
bounded "file ends inside the data: 16 bytes present, 64000000000 needed" \
    diff "$L/claims-64gb.npy" "$top_srcdir/tests/npy/good-f4.npy"
bounded "header length 2097152 exceeds 1048576 bytes" \
    diff "$top_srcdir/tests/npy/bad-header-huge.npy" "$top_srcdir/tests/npy/good-f4.npy"

# Gzip bombs: 10 MB of zeros after 8 claimed data bytes stops at the first
# byte beyond the claim; a stream that really inflates to the 1.5 GiB it
# claims is streamed, whole, in bounded memory (only where ulimit -v can
# hold it): its tensor is on one side only and so are the other side's,
# so diff exits 2 saying nothing was compared (no tensor in common).
bounded "trailing bytes after the 8 data bytes the header claims" \
    diff "$top_srcdir/tests/st-bad/gz-bomb.safetensors.gz" "$good"
if [ -n "$vlimit" ] && command -v "$PY" >/dev/null 2>&1; then
    "$PY" - "$TMP/bomb.safetensors.gz" <<'PY' || fail "cannot write the bomb"
import struct, sys, zlib
n = 3 * 2 ** 28  # F32 elements: 1.5 GiB
h = b'{"t":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}' % (n, 4 * n)
h += b" " * (-len(h) % 8)
z = zlib.compressobj(1, zlib.DEFLATED, 31)
out = [z.compress(struct.pack("<Q", len(h)) + h)]
zero = bytes(1 << 24)
for _ in range(4 * n // len(zero)):
    out.append(z.compress(zero))
out.append(z.flush())
open(sys.argv[1], "wb").write(b"".join(out))
PY
    want=2 hang=600; bounded "" diff "$TMP/bomb.safetensors.gz" "$good"; want= hang=
    out_has "error: nothing compared (no tensor in common); 1 only in a; 7 only in b"
fi

# Probes: an alias bomb, nesting 100000 deep, 2000 keys, 2 MB of YAML.
P="$TMP/p"
probe_case() { # NAME MESSAGE: the one probe in $P, its error result
    bounded "" run --probes "$P" --device cpu --golden "$TMP/g"
    out_has "$2"
    rm -f "$P"/*.yaml
}
mkdir -p "$P"
cp "$L/alias-bomb.yaml" "$P/"
probe_case alias-bomb "alias-bomb.yaml:3:4: anchors are not allowed (&a)"
awk 'BEGIN { printf "name: deep\ndescription: x\nops: "
             for (i = 0; i < 100000; i++) printf "["
             for (i = 0; i < 100000; i++) printf "]"
             print "" }' >"$P/deep.yaml"
probe_case deep "deep.yaml:3:69: nesting deeper than 64 levels"
awk 'BEGIN { print "name: wide"; print "description: x"; print "params:"
             for (i = 0; i < 2000; i++) printf "  p%d: %d\n", i, i }' >"$P/wide.yaml"
probe_case wide "wide.yaml:1028:3: mapping has more than 1024 keys"
awk 'BEGIN { print "name: large"
             for (i = 0; i < 40000; i++) print "# padding padding padding padding padding padding" }' >"$P/large.yaml"
probe_case large "large.yaml:1:1: file too large (more than 1048576 bytes)"

# Saved runs: a manifest of 100001 files, and one of 65 MiB.
B="$TMP/bundle"
mkdir -p "$B"
awk 'BEGIN { printf "{\"tool\": \"bitprobe\", \"files\": ["
             for (i = 0; i <= 100000; i++) printf "%s\"p/f%d.safetensors.gz\"", i ? "," : "", i
             print "]}" }' >"$B/manifest.json"
bounded "\"files\" must be an array of at most 100000 paths" diff "$B" "$B"
{ printf '{"tool": "bitprobe", "files": []'
  head -c $((65 << 20)) /dev/zero | tr '\0' ' '
  echo '}'; } >"$B/manifest.json"
bounded "manifest larger than 67108864 bytes" diff "$B" "$B"

# JSON that costs far more to hold than to read (jansson takes ~50 bytes
# for "0,"): a 60 MB manifest, a 100 MB report and a 60 MB safetensors
# header of zeros stop at the bound of jsonread.h, saying so; a ledger's
# header line has a cap of its own, its records the bound.  (Before the
# bound: 3.7 GB and 33 s for the manifest, 4 GB for the report, and "invalid
# JSON: at byte 0" under a 2 GiB limit.)
zeros() { # N: a JSON array of N zeros
    awk -v n="$1" 'BEGIN { printf "["; for (i = 1; i < n; i++) printf "0,"; printf "0]" }'
}
json_bound="its JSON takes more than 256 MiB of memory to read (JSON of"
{ printf '{"tool": "bitprobe", "files": [], "zeros": '; zeros 30000000; echo '}'; } \
    >"$B/manifest.json"
bounded "$B/manifest.json: $json_bound $(wc -c <"$B/manifest.json") bytes" diff "$B" "$B"
bounded "$B/manifest.json: $json_bound" diff --consensus "$B" "$B"
{ printf '{"tool": "bitprobe", "results": [], "env": '; zeros 50000000; echo '}'; } \
    >"$TMP/report.json"
bounded "$TMP/report.json: $json_bound $(wc -c <"$TMP/report.json") bytes" \
    report "$TMP/report.json"
{ printf '{"tool": "bitprobe", "results": [{"probe": "p", "shape": '; zeros 30000000
  echo '}]}'; } >"$TMP/report.json"
bounded "$TMP/report.json: results[0]: $json_bound" report "$TMP/report.json"
"$PY" - "$TMP/zeros.safetensors" <<'PY' || fail "cannot write the header"
import struct, sys
h = b'{"__metadata__": {"z": "0"}, "z": ' + b"[" + b"0," * 29999999 + b"0]}"
h += b" " * (-len(h) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(h)) + h)
PY
bounded "header: $json_bound" diff "$TMP/zeros.safetensors" "$good"
{ printf '{"format": "bitprobe-ledger", "version": 1, "hash": "fmix64-sum/1", "x": '
  zeros 7000000; echo '}'; } >"$TMP/big.ledger"
bounded "line 1 (byte 0): the header line is longer than 1048576 bytes" \
    diff "$TMP/big.ledger" "$TMP/big.ledger"
{ printf '{"format": "bitprobe-ledger", "version": 1, "hash": "fmix64-sum/1"}\n'
  printf '{"seq": 0, "op": "x", "args": '; zeros 7000000; echo '}'; } >"$TMP/big.ledger"
bounded "record 0 (line 2, byte 68): its JSON takes more than" \
    diff "$TMP/big.ledger" "$TMP/big.ledger"
done_ok
