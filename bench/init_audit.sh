#!/bin/sh
# bitprobe init-audit on a 7B model with its parameters on meta (buffers
# only): the wall time of each way's process (target: at most 60 s each),
# taken from ONE audit's own report (its JSON's per-way seconds), against
# the reference measured in the same run: a fresh process that builds the
# same model with its parameters on meta and nothing else
# (bench/init_audit.py says more).  Prints a progress line as each of the
# audit's builds ends, then one "figure:" line per way (bench/gpu.sh's
# table) and one for the whole audit.
#   MODEL   Llama-2-7B's config.json where transformers is installed, else
#           tests/init_audit/llama2023.py:llama2_7b_shapes (the same shapes in
#           plain PyTorch, 32 layers of 4096 x 128 RoPE caches)
#   WAYS    default cpu,meta,zero-init, and cuda where a GPU is
#   BENCH_BUDGET_S  seconds for the whole bench (default 540): when spent,
#           the audit is stopped and every way without a figure is MISSED
#   OUT     where set, the audit's report is kept as $OUT/init-audit-bench.json
#           (its text as .report.txt)
# Exit 0 every way met the target, 1 one did not (or the budget was spent),
# 2 the bench could not run; 77 only without a Python that has torch.
# By hand:
#   sh bench/init_audit.sh
#   MODEL=tests/init_audit/configs/qwen2-7b WAYS=cpu,meta sh bench/init_audit.sh
set -u
HERE=$(dirname "$0")
. "$HERE/lib.sh"
bench_python torch
TOP=$(cd "$HERE/.." && pwd)
B=${BITPROBE:-$TOP/src/bitprobe}
export PYTHON3="$PY" BITPROBE_PYTHONPATH="$TOP/python"
if [ -z "${MODEL:-}" ]; then
    if "$PY" -c 'import transformers' >/dev/null 2>&1; then
        MODEL=$TOP/tests/init_audit/configs/llama-2-7b
    else
        MODEL=$TOP/tests/init_audit/llama2023.py:llama2_7b_shapes
    fi
fi
bench_header "bench/init_audit.sh: init-audit of a 7B model, parameters on meta, per way"
echo "model: $MODEL"
exec "$PY" "$HERE/init_audit.py" "$MODEL" --bitprobe "$B" --python-dir "$TOP/python" \
    --budget "${BENCH_BUDGET_S:-540}" ${WAYS:+--ways "$WAYS"} \
    ${OUT:+--keep "$OUT/init-audit-bench"}
