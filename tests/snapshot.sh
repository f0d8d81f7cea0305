#!/bin/sh
# The outputs a structural change must keep byte for byte: the shipped
# probes' reports in every format and their saved bundle, diff on
# tests/data, stack --preset tiny, invariance --engine cpu, explain and
# fingerprint --device cpu.  Writes them under DIR with volatile fields
# (times, dates, paths of this checkout, the tool's build stamp) masked, so
# that two trees compare with `diff -r DIR1 DIR2`.
#   sh tests/snapshot.sh DIR [BITPROBE [SET...]]
# Optional sets add the reports of one part in depth:
#   rows  the row ops of the layer stack and invariance on the CPU: every
#         invariance row op on both axes and dtypes at small shapes, the
#         CPU row presets, the stack in every dtype and at odd shapes
#         (minutes);
#   cuda  the same on a GPU: stack --device cuda (tiny in every dtype, both
#         --gemm, llama2-7b on 64 positions), invariance --engine cuda.
set -u
out=${1:?usage: sh tests/snapshot.sh DIR [BITPROBE [SET...]]}
bp=${2:-${BITPROBE:-src/bitprobe}}
[ $# -ge 2 ] && shift 2 || shift $#
case $bp in /*) ;; *) bp=$(pwd)/$bp ;; esac
top=$(cd "$(dirname "$0")/.." && pwd)
rm -rf "$out"; mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$top"
mask() {
    sed -E -e "s#$top#TOP#g" -e "s#$out#OUT#g" \
        -e 's/[0-9]+(\.[0-9]+)? ?(ms|s|µs|us)\b/T/g' \
        -e 's/"(wall|seconds|elapsed|duration|time|timestamp|date|created|ms|open_s|run_s|t_[a-z_]+)": *[-0-9.e+]+/"\1": T/g' \
        -e 's/"(timestamp|date|created|when|started)": *"[^"]*"/"\1": "T"/g' \
        -e 's/"([a-z_]+_s)": *[-0-9.e+]+/"\1": T/g' \
        -e '/"[a-z_]+_s": *\[/,/\]/ s/^( *)[-0-9.e+]+(,?)$/\1T\2/' \
        -e 's/time="[0-9.]+"/time="T"/g' -e 's/timestamp="[^"]*"/timestamp="T"/g' \
        -e 's/20[0-9][0-9]-[0-9][0-9]-[0-9][0-9][T ][0-9:.]+Z?/DATE/g'
}
run() {  # NAME CMD...: stdout, stderr and exit status, masked
    name=$1; shift
    "$@" >"$out/$name.out" 2>"$out/$name.err"; echo "exit $?" >>"$out/$name.out"
    for f in "$out/$name.out" "$out/$name.err"; do mask <"$f" >"$f.m" && mv "$f.m" "$f"; done
}
run run-text "$bp" run --device cpu,oracle -vv
run run-fmt "$bp" run --device cpu,oracle --json "$out/run.json" --junit "$out/run.xml" --markdown "$out/run.md" --save "$out/bundle"
run diff-torch "$bp" diff -v tests/data/torch/rope_cpu.safetensors.gz tests/data/torch/rope_cuda_fp32.safetensors.gz \
    --json "$out/diff.json" --markdown "$out/diff.md"
run diff-torch-zero "$bp" diff tests/data/torch/rope_cpu.safetensors.gz tests/data/torch/rope_cuda_zero.safetensors.gz
run stack-tiny "$bp" stack --preset tiny --json "$out/stack.json" --plot "$out/stack.svg"
run invariance-cpu "$bp" invariance --engine cpu --shape 64x64 --m 1:16 --place all --json "$out/inv.json" --svg "$out/inv.svg"
run explain "$bp" explain seed-inv-freq --a cpu --b oracle --json "$out/explain.json"
run fingerprint "$bp" fingerprint --device cpu
rows() {
    for op in rms_norm sum mean softmax log_softmax; do
        run "inv-$op" "$bp" invariance --engine cpu --op "$op" --shape 1000 \
            --dtype fp32,bf16,fp16 --m 1:24 --place all --rows 2 --json "$out/inv-$op.json"
        run "inv-$op-split" "$bp" invariance --engine cpu --op "$op" --shape 1000 \
            --dtype fp32,bf16,fp16 --split 1:8 --combine seq,tree --m 5 --place all \
            --json "$out/inv-$op-split.json"
    done
    run inv-attention "$bp" invariance --engine cpu --op attention --shape 4x300x32 \
        --dtype fp32,bf16 --split 1,2,3,4 --json "$out/inv-attention.json"
    run inv-presets "$bp" invariance --engine cpu \
        --preset mean-4096,softmax-32000,splitrows-128256,decode-4k --json "$out/inv-presets.json"
    run stack-fp32 "$bp" stack --preset tiny --dtype fp32 --json "$out/stack-fp32.json"
    run stack-fp16 "$bp" stack --preset tiny --dtype fp16 --positions 100:357 --repeat 2 \
        --json "$out/stack-fp16.json"
    run stack-odd "$bp" stack --preset tiny --hidden 96 --heads 3 --layers 3 --intermediate 100 \
        --vocab 999 --positions 3:40 --json "$out/stack-odd.json"
}
cuda() {
    for dt in bf16 fp32 fp16; do
        run "stack-cuda-$dt" "$bp" stack --preset tiny --device cuda --dtype "$dt" --repeat 2 \
            --json "$out/stack-cuda-$dt.json"
    done
    run stack-cuda-gemm "$bp" stack --preset tiny --device cuda --gemm default \
        --json "$out/stack-cuda-gemm.json"
    run stack-cuda-odd "$bp" stack --preset tiny --device cuda --hidden 96 --heads 3 --layers 3 \
        --intermediate 100 --vocab 999 --positions 3:40 --json "$out/stack-cuda-odd.json"
    run stack-cuda-7b "$bp" stack --preset llama2-7b --device cuda --positions 0:64 \
        --json "$out/stack-cuda-7b.json"
    for op in rms_norm sum log_softmax softmax; do
        run "inv-cuda-$op" "$bp" invariance --engine cuda --op "$op" --shape 1000 \
            --dtype fp32,bf16,fp16 --m 1:64 --place all --rows 2 --json "$out/inv-cuda-$op.json"
    done
    run inv-cuda-presets "$bp" invariance --engine cuda \
        --preset rmsnorm-4096,sum-4096,logsoftmax-32000,logsoftmax-128256 \
        --json "$out/inv-cuda-presets.json"
}
for set in "$@"; do
    case $set in
    rows) rows ;;
    cuda) cuda ;;
    *) echo "snapshot: unknown set '$set' (rows, cuda)" >&2; exit 2 ;;
    esac
done
for f in "$out"/*.json "$out"/*.xml "$out"/*.md "$out"/*.svg; do
    [ -f "$f" ] && { mask <"$f" >"$f.m" && mv "$f.m" "$f"; }
done
# The bundle: its tensors byte for byte, its manifest masked.
if [ -d "$out/bundle" ]; then
    (cd "$out/bundle" && find . -type f | sort | while read -r f; do
        case $f in *.json) echo "$f $(mask <"$f" | cksum)";;
        *) echo "$f $(cksum <"$f")";; esac
    done) >"$out/bundle.sums"
    rm -rf "$out/bundle"
fi
echo "snapshot: $(ls "$out" | wc -l) files in $out"
