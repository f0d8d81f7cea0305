#!/bin/sh
# stack --ranks 4 against the collective map on real NCCL: the map of the
# all-reduce at the stack's message size (llama2-7b's o_proj partials in
# fp32, [16, 4096] = 256K over 4 ranks) under several configurations, then
# stack --ranks 4 with those configurations: different drift against the
# unsharded result where the map says their bits differ, equal drift where
# it says they are equal (tests/refs/coll_check.py stack); both cases
# must occur.  4 GPUs (the first 4 of CUDA_VISIBLE_DEVICES); exit 77 with
# fewer, 1 when a step fails.  Logs and JSON under $OUT (default /tmp/out).
#   sh tests/gpu/nccl_gpu.sh
. tests/gpu/steps.sh
B=./src/bitprobe
. tests/gpu/nccl_lib.sh
NGPU=$("$B" env --json 2>/dev/null | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["gpu"].get("devices", [])))' 2>/dev/null || echo 0)
[ "$NGPU" -ge 4 ] || { echo "$NGPU GPU(s) here, 4 needed: SKIP"; exit 77; }
export CUDA_VISIBLE_DEVICES=$(echo "${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((NGPU - 1)))}" | cut -d, -f1-4)
CFGS=${CFGS:-default,Ring,Tree,Ring/LL,Ring/Simple,Tree/LL}
TAIL=30 step "the all-reduce map at 256K, 4 ranks, fp32" "0|1" "$B" invariance --collective all_reduce \
    --engine nccl --ranks 4 --dtype fp32 --bytes 256K --algo default,Ring,Tree --proto default,LL,Simple \
    --json "$OUT/nccl-map256k.json"
TAIL=14 step "stack --ranks 4 with $CFGS" 0 "$B" stack --ranks 4 --no-params --dtype fp32 \
    --preset llama2-7b --algos "$CFGS" --json "$OUT/nccl-stack4.json"
TAIL=14 step "stack against the map: equal drift where the map says equal bits, different where different" 0 \
    env REQUIRE_BOTH=1 python3 tests/refs/coll_check.py stack "$OUT/nccl-stack4.json" "$OUT/nccl-map256k.json"
# a bucket cuts the same partials into four all-reduces of 64K: its drift is reported
TAIL=8 step "stack --ranks 4, Ring in buckets of 64K" 0 "$B" stack --ranks 4 --no-params --dtype fp32 \
    --preset llama2-7b --algos Ring,Ring/bucket=64K --json "$OUT/nccl-stack4-bucket.json"
finish
