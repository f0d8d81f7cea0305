# Goldens live beside the probes: a probe named by its file keeps its
# goldens beside that file (DIR/../golden when DIR is named probes, else
# DIR/golden), as --probes DIR does; a probe under --param overrides has
# goldens of its own that never replace the probe's; every hint keeps the
# path and the flags the user gave; a golden blessed under another backend
# key is named as such; nothing is ever written under the installation
# prefix, whoever asks the golden store (bless, screen --bless).
. "$top_srcdir/tests/cli/lib.sh"
unset BITPROBE_PROBES BITPROBE_GOLDEN
mkdir -p "$TMP/empty" "$TMP/proj/probes" "$TMP/proj/mine"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/proj/mine/"
cp "$top_srcdir/probes/seed-inv-freq.yaml" "$TMP/proj/probes/"
cd "$TMP/empty" || fail "cd"

# --- by path: missing goldens, a hint that keeps the path and the flags ---
run 2 run ../proj/mine/seed-div.yaml --device cpu,oracle --dtype fp32
out_has "'../proj/mine/golden/seed-div/oracle.safetensors.gz' does not exist"
out_has "hint: bless the missing goldens with 'bitprobe bless ../proj/mine/seed-div.yaml --device cpu,oracle --dtype fp32'"
# the hint, followed as written, works
hint=$(sed -n "s/^hint: bless the missing goldens with '\(.*\)', or pass --missing=skip$/\1/p" "$TMP/out")
[ -n "$hint" ] || fail "no hint"
run 0 ${hint#bitprobe }
out_has "../proj/mine/golden/seed-div/oracle.safetensors.gz: written"
run 0 run ../proj/mine/seed-div.yaml --device cpu,oracle --dtype fp32
out_has "passed: 3 compared (3 identical)"
# a probe in a directory named probes: its goldens go beside that directory
run 0 bless ../proj/probes/seed-inv-freq.yaml --device cpu --dtype fp32
ls ../proj/golden/seed-inv-freq/cpu-sleef*.safetensors.gz >/dev/null 2>&1 ||
    fail "no golden in ../proj/golden: $(find .. -name '*.gz')"
run 0 run seed-inv-freq --probes ../proj/probes --device cpu --dtype fp32
out_has "passed: 2 compared (2 identical)"
[ -z "$(ls -A .)" ] || fail "something was written in the working directory: $(ls -A .)"

# --- hints keep --probes, --golden, --param and the backend's options ---
run 2 run seed-inv-freq --probes ../proj/probes --golden ../g2 --device cpu --cpu-math libm --param base=500 --dtype fp32
out_has "hint: bless the missing goldens with 'bitprobe bless seed-inv-freq --device cpu --dtype fp32 --cpu-math libm --probes ../proj/probes --golden ../g2 --param base=500'"

# --- --param: goldens of their own, the probe's untouched ---
(cd ../proj/golden && find . -type f | sort | xargs md5sum) >"$TMP/before"
run 0 bless seed-inv-freq --probes ../proj/probes --device cpu --dtype fp32 --param base=500
out_has "+base=500.safetensors.gz: written"
(cd ../proj/golden && find . -type f ! -name '*+base=500*' | sort | xargs md5sum) >"$TMP/after"
cmp -s "$TMP/before" "$TMP/after" || fail "blessing under --param changed the probe's goldens"
run 0 run seed-inv-freq --probes ../proj/probes --device cpu --dtype fp32 --param base=500
run 0 run seed-inv-freq --probes ../proj/probes --device cpu --dtype fp32

# --- a golden blessed under another backend: named as such ---
run 0 bless ../proj/mine/seed-div.yaml --device cpu --cpu-math libm --golden ../g3
lk=$(cd ../g3/seed-div && ls cpu-libm*.safetensors.gz)
sk=$(cd ../proj/mine/golden/seed-div && ls cpu-sleef*.safetensors.gz)
mkdir -p ../g4/seed-div
cp "../g3/seed-div/$lk" "../g4/seed-div/$sk"
run 0 run ../proj/mine/seed-div.yaml --device cpu --golden ../g4 --dtype fp32
# seed-div is the same under libm: identical, nothing said; a probe whose
# bits differ (unary-sweep's exp) says where the golden came from
cp "$top_srcdir/probes/unary-sweep.yaml" ../proj/mine/
run 0 bless ../proj/mine/unary-sweep.yaml --device cpu --cpu-math libm --golden ../g3 --dtype fp32
mkdir -p ../g4/unary-sweep
cp "../g3/unary-sweep/$lk" "../g4/unary-sweep/$sk"
run 1 run ../proj/mine/unary-sweep.yaml --device cpu --golden ../g4 --dtype fp32 --markdown "$TMP/t.md"
out_has "unary-sweep exp fp32 [4096]: cpu vs golden ${sk%.safetensors.gz} (blessed as ${lk%.safetensors.gz}): "
out_has "note: golden unary-sweep/${sk%.safetensors.gz} (blessed as ${lk%.safetensors.gz}) vs ${sk%.safetensors.gz} here: backend fingerprints differ in "
out_has "note:   cpu_math: libm | sleef-u10"
grep -qF '| cpu\_math | `libm` | `sleef-u10` |' "$TMP/t.md" || fail "the ticket lacks the fingerprints side by side"

# --- never under the installation prefix, whoever writes the golden ---
prefix=$("$BITPROBE" env --json | sed -n 's/^ *"prefix": "\(.*\)",*$/\1/p')
[ -n "$prefix" ] || fail "env --json names no prefix"
if [ -d "$prefix" ]; then
    target="$prefix/bitprobe-golden-test-$$"
    run 2 bless ../proj/mine/seed-div.yaml --device cpu --golden "$target"
    err_has "will not write golden '$target/seed-div/"
    err_has "it lies under bitprobe's installation"
    [ ! -e "$target" ] || { rm -rf "$target"; fail "bless wrote under the prefix"; }
    run 2 bless ../proj/mine/seed-div.yaml --device cpu --golden "$target" --dry-run
    [ ! -e "$target" ] || { rm -rf "$target"; fail "bless --dry-run wrote under the prefix"; }
fi
done_ok
