#!/bin/sh
# The outputs a structural change must keep byte for byte: the shipped
# probes' reports in every format and their saved bundle, diff on
# tests/data, stack --preset tiny, invariance --engine cpu, explain and
# fingerprint --device cpu.  Writes them under DIR with volatile fields
# (times, dates, paths of this checkout, the tool's build stamp) masked, so
# that two trees compare with `diff -r DIR1 DIR2`.
#   sh tests/snapshot.sh DIR [BITPROBE]
set -u
out=${1:?usage: sh tests/snapshot.sh DIR [BITPROBE]}
bp=${2:-${BITPROBE:-src/bitprobe}}
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
for f in run.json run.xml run.md diff.json diff.md stack.json stack.svg inv.json inv.svg explain.json; do
    [ -f "$out/$f" ] && { mask <"$out/$f" >"$out/$f.m" && mv "$out/$f.m" "$out/$f"; }
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
