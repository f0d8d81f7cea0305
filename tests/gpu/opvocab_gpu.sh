#!/bin/sh
# The layer stack's and invariance's row ops computed through the op table
# (the `fixed` formulation of rms_norm, softmax, log_softmax and silu, and
# the table's add, mul, rotate_half, div, where, embedding): every report
# keeps its bytes.  Builds OLD, a commit from before the move, beside this
# tree (under $OUT/old), runs tests/snapshot.sh with its `rows` and `cuda`
# sets on both binaries and compares the two snapshots byte for byte
# (times masked), then runs the CUDA unit tests of the moved kernels.
#
# Run from a configured and built tree with CUDA (`. .devdeps/env.sh`
# done):  OUT=/tmp/out sh tests/gpu/opvocab_gpu.sh OLD
# SETS="rows" compares the CPU half only (no GPU needed); OLD_BITPROBE=path
# takes an old binary already built instead of building OLD.
# One log per step under $OUT; exit 1 when a step failed (listed at the
# end).
. tests/gpu/steps.sh
old=${1:?usage: sh tests/gpu/opvocab_gpu.sh OLD (a commit)}
SETS=${SETS:-rows cuda}
B=${BITPROBE:-./src/bitprobe}
J=${JOBS:-$(nproc 2>/dev/null || echo 4)}

build_old() {
    rm -rf "$OUT/old" && mkdir -p "$OUT/old" &&
        git archive --format=tar "$old" | tar -x -C "$OUT/old" &&
        (cd "$OUT/old" && autoreconf -fi && ./configure && make -j"$J")
}
OB=${OLD_BITPROBE:-}
if [ -z "$OB" ]; then
    step "build $old" 0 build_old || finish
    OB=$OUT/old/src/bitprobe
fi
# shellcheck disable=SC2086
step "snapshot, old ($old)" 0 sh tests/snapshot.sh "$OUT/snap-old" "$OB" $SETS
# shellcheck disable=SC2086
step "snapshot, this tree" 0 sh tests/snapshot.sh "$OUT/snap-new" "$B" $SETS
check "snapshots byte for byte" diff -r "$OUT/snap-old" "$OUT/snap-new"
case " $SETS " in
*" cuda "*)
    step "check_rows_cuda" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/backends/check_rows_cuda
    step "check_stack_cuda" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/stack/check_stack_cuda
    step "check_be_cuda" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/backends/cuda/check_be_cuda
    step "invariance_cuda.sh" 0 env BP_REQUIRE_GPU=1 make check TESTS=tests/cli/invariance_cuda.sh
    ;;
esac
finish
