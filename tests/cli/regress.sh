# Fuzzer regressions (tests/fidelity/regress/): each probe there is the
# minimised form of a difference the differential fuzzer found between
# bitprobe and PyTorch (tests/fidelity/fuzz_torch.py), with PyTorch's bits
# of its output beside it: NAME.cpu-ISA.safetensors, taken with ATen's CPU
# capability ISA (NAME.cpu-ISA+onednn-LEVEL.safetensors where oneDNN's ISA
# enters too, NAME.cpu-ISA+mkl-LEVEL.safetensors where MKL's code path
# does), and NAME.cuda.safetensors.  bitprobe must give exactly
# those bits: on the CPU always (with --cpu-isa ISA), on CUDA where a GPU
# is usable; bits this machine cannot check (a capability the CPU lacks,
# CUDA without a GPU) make the test a SKIP after the rest has passed.
# Needs no Python: `bitprobe diff` compares.
. "$top_srcdir/tests/cli/lib.sh"
R="$top_srcdir/tests/fidelity/regress"
isa_opt=$("$BITPROBE" run --help 2>&1 | grep -c -- '--cpu-isa' || true)
gpu=0
"$BITPROBE" list --probes "$R" 2>/dev/null | grep -q '^  cuda  *available' && gpu=1
checked=0
for y in "$R"/*.yaml; do
    [ -e "$y" ] || continue
    name=$(basename "$y" .yaml)
    for f in "$R/$name".cpu-*.safetensors "$R/$name".cuda.safetensors; do
        [ -e "$f" ] || continue
        tag=${f#"$R/$name."}
        tag=${tag%.safetensors}
        case $tag in
        cuda)
            [ "$gpu" = 1 ] || { cuda_left="${cuda_left:-} $name"; continue; }
            dev=cuda extra= ;;
        cpu-*)
            # cpu-ISA, with +onednn-LEVEL where oneDNN's ISA matters (gelu's
            # erf form), +mkl-LEVEL where MKL's path does (fp32 matmul):
            # bitprobe models each as the tag names it
            isa=${tag#cpu-} onednn= mkl=
            case $isa in *+mkl-*) mkl=${isa##*+mkl-} isa=${isa%+mkl-*} ;; esac
            case $isa in *+onednn-*) onednn=${isa#*+onednn-} isa=${isa%%+onednn-*} ;; esac
            dev=cpu extra="--cpu-isa $isa${onednn:+ --onednn-isa $onednn}${mkl:+ --mkl-isa $mkl}"
            if [ "$isa_opt" = 0 ]; then
                [ "$isa" = avx2 ] || continue
                extra=
            elif ! "$BITPROBE" fingerprint --device cpu --cpu-isa "$isa" >/dev/null 2>&1; then
                skip_later "$name: $tag not checked: this CPU lacks $isa"
                continue
            fi ;;
        *) fail "$f: unknown device tag '$tag'" ;;
        esac
        rm -rf "$TMP/b"
        # shellcheck disable=SC2086
        run 0 run "$name" --probes "$R" --device "$dev" --no-golden --save "$TMP/b" $extra
        got=$(ls "$TMP/b/$name/$dev"*.safetensors.gz 2>/dev/null | head -1)
        [ -n "$got" ] || fail "$name: no $dev container saved"
        run 0 diff "$got" "$f"
        checked=$((checked + 1))
    done
done
[ "$checked" -gt 0 ] || { echo "no regression probe can be checked here: SKIP"; exit 77; }
echo "$checked regression probes identical to PyTorch"
# CUDA bits not checked for want of a GPU: SKIP by the GPU rule (a failure
# with BP_REQUIRE_GPU=1, or where a GPU is present but unusable).
[ -z "${cuda_left:-}" ] || { echo "CUDA bits not checked:$cuda_left"; need_gpu; }
done_ok
