# Set-up as the README says, and an installed bitprobe that writes only
# where its user works.  A copy of the source tree is set up with setup.sh
# into a temporary prefix (as root setup.sh runs make install itself;
# otherwise the test does), bitprobe then runs by its bare name in a new
# shell, and from an empty directory `bless PATH.yaml` and `run PATH.yaml`
# keep the goldens beside the probe file while nothing under the prefix
# changes; blessing the installed probes is refused (exit 2).  Slow: a
# whole CPU-only build.
. "$top_srcdir/tests/cli/lib.sh"
# In a sanitizer build's make check (.ci/run's ASan pass) this test would
# build and check the same plain copy as in the plain build's: setup.sh
# builds with configure's default flags, not the build's CFLAGS (BP_CFLAGS),
# so nothing it runs is sanitized.
case " ${BP_CFLAGS:-} " in
*" -fsanitize="*)
    echo "SKIP: a sanitizer build; the copy setup.sh builds is a plain one, which the plain build's make check tests"
    exit 77
    ;;
esac
unset BITPROBE_PROBES BITPROBE_GOLDEN
SRC="$TMP/src" INST="$TMP/inst"
mkdir -p "$SRC" "$TMP/empty" "$TMP/proj/probes" "$TMP/proj/mine"
if git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1; then
    # the tree as it is, uncommitted changes included
    (cd "$top_srcdir" && git ls-files -co --exclude-standard) |
        tar -C "$top_srcdir" -cf - -T - --ignore-failed-read 2>/dev/null | tar -C "$SRC" -xf - ||
        fail "cannot copy the source tree"
    (cd "$SRC" && BITPROBE_CONFIGURE="--prefix=$INST --without-cuda" sh setup.sh) \
        >"$TMP/setup.log" 2>&1 || fail "setup.sh: $(tail -20 "$TMP/setup.log")"
    if [ "$(id -u)" -eq 0 ]; then
        grep -qF "setup.sh: installed $INST/bin/bitprobe" "$TMP/setup.log" ||
            fail "setup.sh did not install as root: $(tail -5 "$TMP/setup.log")"
    else
        grep -qF "install it as root (make install)" "$TMP/setup.log" ||
            fail "setup.sh did not say how to install: $(tail -5 "$TMP/setup.log")"
        make -C "$SRC" install >"$TMP/install.log" 2>&1 || fail "make install: $(tail "$TMP/install.log")"
    fi
elif [ ! -f "$top_srcdir/Makefile" ]; then
    # a release tree, built elsewhere (make distcheck): configure out of it
    mkdir -p "$TMP/build"
    (cd "$TMP/build" && "$top_srcdir/configure" --prefix="$INST" --without-cuda &&
        make -j2 install) >"$TMP/setup.log" 2>&1 || fail "configure && make install: $(tail "$TMP/setup.log")"
else
    echo "SKIP: neither a git checkout nor an unconfigured release tree to build from"
    exit 77
fi
[ -x "$INST/bin/bitprobe" ] || fail "no $INST/bin/bitprobe"

# --- the bare name in a new shell, with the prefix's bin on PATH ---
env -i HOME="$TMP" PATH="$INST/bin:/usr/bin:/bin" sh -c 'cd "$1" && bitprobe --help' sh \
    "$TMP/empty" >"$TMP/out" 2>"$TMP/err" || fail "bitprobe --help in a new shell: $(cat "$TMP/err")"
grep -q "^usage: bitprobe COMMAND" "$TMP/out" || fail "--help: $(head -3 "$TMP/out")"

# --- nothing written under the prefix, goldens beside the probe file ---
snap() { (cd "$INST" && find . -print | sort && find . -type f -exec md5sum {} + | sort); }
snap >"$TMP/before"
cp "$top_srcdir/probes/seed-div.yaml" "$TMP/proj/mine/"
cp "$top_srcdir/probes/seed-inv-freq.yaml" "$TMP/proj/probes/"
BITPROBE="$INST/bin/bitprobe"
cd "$TMP/empty" || fail "cd"
run 2 run ../proj/mine/seed-div.yaml --device cpu,oracle
out_has "hint: bless the missing goldens with 'bitprobe bless ../proj/mine/seed-div.yaml --device cpu,oracle'"
run 0 bless ../proj/mine/seed-div.yaml --device cpu,oracle
run 0 run ../proj/mine/seed-div.yaml --device cpu,oracle
out_has "passed: 9 compared (9 identical)"
ls ../proj/mine/golden/seed-div/oracle.safetensors.gz >/dev/null || fail "no golden beside the probe"
run 0 bless ../proj/probes/seed-inv-freq.yaml --device cpu
ls ../proj/golden/seed-inv-freq/cpu-sleef*.safetensors.gz >/dev/null 2>&1 ||
    fail "no golden beside ../proj/probes: $(find .. -name '*.gz')"
# the installed probes run against the installed goldens ...
run 0 run seed-div --device cpu,oracle
out_has "passed: 9 compared (9 identical)"
# ... and are never blessed there, by name, by path or by --golden
run 2 bless seed-div --device cpu
err_has "it lies under bitprobe's installation ($INST)"
run 2 bless "$INST/share/bitprobe/probes/seed-div.yaml" --device cpu
err_has "it lies under bitprobe's installation ($INST)"
run 2 bless ../proj/mine/seed-div.yaml --device cpu --golden "$INST/golden-here"
err_has "will not write golden '$INST/golden-here/seed-div/"
[ -z "$(ls -A .)" ] || fail "something was written in the working directory: $(ls -A .)"
snap >"$TMP/after"
cmp -s "$TMP/before" "$TMP/after" ||
    fail "the installation changed: $(diff "$TMP/before" "$TMP/after" | head -10)"
done_ok
