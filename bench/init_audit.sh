#!/bin/sh
# bitprobe init-audit on a 7B model with its parameters on meta (buffers
# only): the wall time of each way's process (target: at most 60 s each),
# against the reference measured in the same run, a fresh process that
# builds the same model with its parameters on meta and nothing else
# (bench/init_audit.py).  MODEL: Llama-2-7B's config.json where transformers
# is installed, else tests/init_audit/llama2023.py's llama2_7b_shapes (the
# same shapes in plain PyTorch, 32 layers of 4096 x 128 RoPE caches).
# Needs a Python with torch; exit 77 without one.  By hand:
#   sh bench/init_audit.sh
#   MODEL=tests/init_audit/configs/qwen2-7b REPEAT=3 sh bench/init_audit.sh
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
"$PY" "$HERE/init_audit.py" "$MODEL" --bitprobe "$B" --python-dir "$TOP/python" \
    --repeat "${REPEAT:-2}" ${WAYS:+--ways "$WAYS"}
