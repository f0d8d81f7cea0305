#!/bin/sh
# bitprobe init-audit on the GPU machine (PyTorch with CUDA, transformers;
# DeepSpeed absent: zero.Init is emulated, its tensors on cuda:0).
#
#  1. the seed: tests/init_audit/llama2023.py (transformers 4.36's Llama
#     RoPE, Llama-2's caches: head dim 128, 4096 positions) built on the
#     CPU, in zero.Init and on CUDA, in bf16: in the model dtype the
#     zero-init caches differ in 329332 of 524288 cos and 324808 sin
#     elements, the CUDA-built ones in 88 and 116: the figures PyTorch
#     2.11 gave on an H200 for the same three builds
#     (tests/data/torch/info.json, tests/refs/torch_reference.py);
#     the introducing op is the positions' cast (aten::arange [4096] in
#     BF16); the oracle sides with cpu; --effect measures the forward;
#  2. the same model with transformers' int64 arange: no cast of arange left
#     (what differs, if anything, is the GPU's own arithmetic, named);
#  3. transformers' Llama-2-7B (config.json: current transformers computes
#     cos/sin in rotary_emb's forward: the audit compares that forward over
#     the 4096 positions), cpu, zero-init and cuda in bf16;
#  4. Llama-3.1-8B (llama3 scaling), Qwen2-7B (theta 1e6), Gemma-7B (head
#     dim 256) through every way, parameters on meta (buffers only): every
#     verdict with the oracle's, exit 0 or 1, never 2.
#
# Builds nothing: run it from a configured and built tree
#   OUT=/tmp/out sh tests/gpu/init_audit_gpu.sh
# Logs and reports under $OUT/init-audit/ (NN-step.txt, *.json, *.md).
set -u
B=${BITPROBE:-$(pwd)/src/bitprobe}
PY=${PYTHON3:-python3}
export PYTHON3="$PY" BITPROBE_PYTHONPATH="$(pwd)/python"
OUT=${OUT:-/tmp/out}/init-audit
. tests/gpu/steps.sh
M=tests/init_audit
C=tests/init_audit/configs

"$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null || {
    echo "SKIP: $PY has no torch with a CUDA device"; exit 77; }
step "versions" 0 "$PY" -c '
import torch, platform
try:
    import transformers; tv = transformers.__version__
except ImportError:
    tv = "not installed"
try:
    import deepspeed; dv = deepspeed.__version__
except ImportError:
    dv = "not installed (zero.Init emulated)"
print("torch", torch.__version__, "cuda", torch.version.cuda, torch.cuda.get_device_name(0))
print("transformers", tv, "deepspeed", dv, "python", platform.python_version())'

# 1. the seed
step "seed: llama2023 float arange, cpu zero-init cuda, --effect" 1 \
    "$B" init-audit "$M/llama2023.py:float_arange" --ways cpu,zero-init,cuda --effect \
    -o "$OUT/seed" --json "$OUT/seed.json" --markdown "$OUT/seed.md"
check "seed: the figures (329332 cos, 324808 sin in bf16; cuda 88, 116)" "$PY" - "$OUT/seed.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
c = {c["way"]: {g["pattern"].rsplit(".", 1)[1]: g for g in c["groups"]} for c in r["comparisons"]}
want = {("zero-init", "cos_cached"): 329332, ("zero-init", "sin_cached"): 324808,
        ("cuda", "cos_cached"): 88, ("cuda", "sin_cached"): 116}
bad = 0
for (w, b), n in want.items():
    g = c[w][b]
    got = (g.get("model_dtype") or {}).get("diff", {}).get("mismatched")
    print("%-9s %-10s in bf16: %s of 524288 differ (expected %d); as built (%s): %s" % (
        w, b, got, n, g["way"]["dtype"], (g.get("diff") or {}).get("mismatched")))
    bad += got != n
intro = c["zero-init"]["cos_cached"]["introduced"]
ops = [d.get("source_op") for d in [intro] + intro.get("also", [])]
print("zero-init cos_cached introduced by:", [d["summary"] for d in [intro] + intro.get("also", [])])
bad += "aten::arange" not in ops
for w in ("zero-init", "cuda"):
    for b in ("inv_freq", "cos_cached", "sin_cached"):
        o = c[w][b].get("oracle") or {}
        print("oracle %-9s %-10s %s" % (w, b, o.get("verdict")))
e = r.get("effect") or {}
for w, x in (e.get("ways") or {}).items():
    if "max_abs" in x:
        print("effect %-9s max |dlogp| %.4g, top-1 flips %s of %s" % (w, x["max_abs"],
              x.get("top1_flips"), e.get("tokens")))
sys.exit(1 if bad else 0)
PY

# 2. transformers' fix
step "int arange: cpu zero-init (no cast of arange left)" "0|1" \
    "$B" init-audit "$M/llama2023.py:int_arange" --ways cpu,zero-init --json "$OUT/int.json"
check "int arange: no aten::arange cast among the introducing ops" "$PY" - "$OUT/int.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
bad = 0
for c in r["comparisons"]:
    for g in c["groups"]:
        it = g.get("introduced") or {}
        for d in ([it] + it.get("also", [])) if it.get("found") else []:
            print(c["way"], g["pattern"], d["summary"])
            bad += d.get("source_op") == "aten::arange"
sys.exit(1 if bad else 0)
PY

# 3. transformers' Llama-2-7B: its rotary_emb, cpu zero-init cuda
"$PY" -c 'import transformers' 2>/dev/null || { echo "transformers is not installed: steps 3 and 4 fail"; }
step "Llama-2-7B (transformers): cpu zero-init cuda in bf16" "0|1" \
    "$B" init-audit "$C/llama-2-7b" --ways cpu,zero-init,cuda --buffers-only -o "$OUT/llama2" \
    --json "$OUT/llama2.json" --markdown "$OUT/llama2.md"
check "Llama-2-7B: rotary_emb's forward over 4096 positions compared, with the oracle" \
    "$PY" - "$OUT/llama2.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["verdict"]["line"])
seen = 0
for c in r["comparisons"]:
    for g in c["groups"]:
        d, md, o = g.get("diff") or {}, (g.get("model_dtype") or {}).get("diff") or {}, g.get("oracle") or {}
        print("%-9s %-45s %-6s %s: %s of %s differ (in bf16 %s); oracle: %s" % (
            c["way"], g["pattern"], g["way"]["dtype"] if g.get("way") else "-",
            g["status"], d.get("mismatched"), d.get("total"), md.get("mismatched"),
            o.get("verdict")))
        seen += ":forward.cos" in g["pattern"] and g["way"]["shape"][0] == 4096
        if g.get("introduced", {}).get("found"):
            print("    introduced by", g["introduced"]["summary"])
sys.exit(0 if seen else 1)
PY

# 4. more configs through every way
for cfg in llama-3.1-8b qwen2-7b gemma-7b; do
    step "$cfg: every way, buffers only" "0|1" \
        "$B" init-audit "$C/$cfg" --buffers-only -o "$OUT/$cfg" --json "$OUT/$cfg.json" \
        --markdown "$OUT/$cfg.md"
    check "$cfg: every way ran, the oracle judged" "$PY" - "$OUT/$cfg.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(r["verdict"]["line"])
for w in r["ways"]:
    print("way %-10s %-7s %s s %s" % (w["name"], w["status"], w.get("seconds"), w.get("why") or ""))
print("oracle probes:", [(p["module"], p["rope_type"], p["formula"]) for p in r["oracle"]["probes"]],
      "skipped:", r["oracle"]["skipped"])
judged = 0
for c in r["comparisons"]:
    for g in c["groups"]:
        o = g.get("oracle") or {}
        if o:
            judged += 1
            print("%-10s %-40s %s; oracle: %s" % (c["way"], g["pattern"], g["status"], o.get("verdict")))
ran = [w["name"] for w in r["ways"] if w["status"] == "ok"]
sys.exit(0 if judged and len(ran) >= 5 else 1)
PY
done
finish
