# Fuzzer regressions (tests/regress/): each probe there is the
# minimised form of a difference the differential fuzzer found between
# bitprobe and PyTorch (tests/refs/fuzz_torch.py), with PyTorch's bits
# of its output beside it: NAME.cpu-ISA.safetensors, taken with ATen's CPU
# capability ISA (NAME.cpu-ISA+onednn-LEVEL.safetensors where oneDNN's ISA
# enters too, NAME.cpu-ISA+mkl-LEVEL.safetensors where MKL's code path
# does), and NAME.cuda.safetensors.  bitprobe must give exactly
# those bits: on the CPU always (with --cpu-isa ISA), on CUDA where a GPU
# is usable; bits this machine cannot check (a capability the CPU lacks,
# CUDA without a GPU) make the test a SKIP after the rest has passed.
# Needs no Python: `bitprobe diff` compares.
. "$top_srcdir/tests/cli/lib.sh"
R="$top_srcdir/tests/regress"
isa_opt=$("$BITPROBE" run --help 2>&1 | grep -c -- '--cpu-isa' || true)
gpu=0
"$BITPROBE" list --probes "$R" 2>/dev/null | grep -q '^  cuda  *available' && gpu=1
checked=0
# The probes with bits of each device tag (cpu-ISA[+onednn-LEVEL], cuda),
# run together: one bitprobe run per tag (each run reads every probe of the
# directory), then one diff per probe.
tags=$(for f in "$R"/*.cpu-*.safetensors "$R"/*.cuda.safetensors; do
           [ -e "$f" ] || continue
           t=${f%.safetensors}
           echo "${t##*.}"
       done | sort -u)
for tag in $tags; do
    case $tag in
    cuda)
        dev=cuda extra=
        if [ "$gpu" != 1 ]; then
            for f in "$R"/*.cuda.safetensors; do
                cuda_left="${cuda_left:-} $(basename "$f" .cuda.safetensors)"
            done
            continue
        fi ;;
    cpu-*)
        # cpu-ISA, with +onednn-LEVEL where oneDNN's ISA matters
        # (gelu's erf form), +mkl-LEVEL where MKL's path does (fp32 matmul):
        # bitprobe models each as the tag names it
        isa=${tag#cpu-} onednn= mkl=
        case $isa in *+mkl-*) mkl=${isa##*+mkl-} isa=${isa%+mkl-*} ;; esac
        case $isa in *+onednn-*) onednn=${isa#*+onednn-} isa=${isa%%+onednn-*} ;; esac
        dev=cpu extra="--cpu-isa $isa${onednn:+ --onednn-isa $onednn}${mkl:+ --mkl-isa $mkl}"
        if [ "$isa_opt" = 0 ]; then
            [ "$isa" = avx2 ] || continue
            extra=
        elif ! "$BITPROBE" fingerprint --device cpu --cpu-isa "$isa" >/dev/null 2>&1; then
            skip_later "$tag not checked: this CPU lacks $isa"
            continue
        fi ;;
    *) fail "$R: unknown device tag '$tag'" ;;
    esac
    names=
    for f in "$R"/*."$tag".safetensors; do
        n=$(basename "$f" ".$tag.safetensors")
        [ -e "$R/$n.yaml" ] || fail "$f: no probe $n.yaml beside it"
        names="$names $n"
    done
    rm -rf "$TMP/b"
    # shellcheck disable=SC2086
    run 0 run $names --probes "$R" --device "$dev" --no-golden --save "$TMP/b" $extra
    for name in $names; do
        got=$(ls "$TMP/b/$name/$dev"*.safetensors.gz 2>/dev/null | head -1)
        [ -n "$got" ] || fail "$name: no $dev container saved"
        run 0 diff "$got" "$R/$name.$tag.safetensors"
        checked=$((checked + 1))
    done
done
[ "$checked" -gt 0 ] || { echo "no regression probe can be checked here: SKIP"; exit 77; }
echo "$checked regression probes identical to PyTorch"
# CUDA bits not checked for want of a GPU: SKIP by the GPU rule (a failure
# with BP_REQUIRE_GPU=1, or where a GPU is present but unusable).
[ -z "${cuda_left:-}" ] || { echo "CUDA bits not checked:$cuda_left"; need_gpu; }
done_ok
