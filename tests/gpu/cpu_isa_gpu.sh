#!/bin/sh
# The ATen CPU capability and tensor / number on the GPU machine (PyTorch
# with CUDA, an AVX-512 CPU), from a configured and built tree (nothing is
# built):
#   1. every shipped probe, op by op, against PyTorch on cpu and cuda with
#      --cpu-isa at its default (ATen picks AVX512 there): bitprobe's CPU key
#      must be cpu-sleef-avx512, every CPU op identical but the MKL ones
#      (fp32/fp64 sin, cos, exp, log, tanh, sqrt: counted), every CUDA op
#      identical;
#   2. the same on the CPU with ATEN_CPU_CAPABILITY=avx2 for PyTorch and
#      --cpu-isa avx2 for bitprobe;
#   3. x / 0.001 for x = arange(0, 65536).float(): bitprobe's cuda result
#      equal to PyTorch's CUDA result in all 65536 elements, its cpu result
#      to PyTorch's CPU result, and bitprobe's cpu-vs-cuda count equal to
#      PyTorch's (48433 with PyTorch 2.11 on an H100);
#   4. the cuda golden of div-by-decimal, blessed into $OUT/golden for
#      golden/div-by-decimal/ (the only new cuda golden: the reciprocals of
#      the shipped probes' other divisors, 10, 3, 7 and 128, round alike in
#      float and double, so no other cuda golden changes).
#   OUT=/tmp/out sh tests/gpu/cpu_isa_gpu.sh
# Exit: 0 every step as required, 1 a failing step, 2 no bitprobe, 77 no GPU.
set -u
HERE=$(dirname "$0")
. "$HERE/torch_gpu.sh"
need_cuda
. "$HERE/steps.sh"
unset ATEN_CPU_CAPABILITY
TAIL=12 step "shipped probes, default capability, cpu and cuda" 0 \
    "$PY" "$HERE/../refs/fuzz_torch.py" shipped --bitprobe "$B" --devices cpu,cuda
check "bitprobe's default capability is PyTorch's AVX512" \
    grep -q "CPU backend key: cpu-sleef-avx512; PyTorch's ATen CPU capability: avx512" \
    "$OUT/01-shipped_probes__default_capability__cpu_and_cuda.txt"
TAIL=12 step "shipped probes, ATEN_CPU_CAPABILITY=avx2 and --cpu-isa avx2, cpu" 0 \
    "$PY" "$HERE/../refs/fuzz_torch.py" shipped --bitprobe "$B" --devices cpu \
    --aten-cpu-capability avx2 --bitprobe-arg=--cpu-isa --bitprobe-arg=avx2
rm -rf "$OUT/div"
step "bitprobe run div-by-decimal --device cpu,cuda --dtype fp32" 0 \
    "$B" run div-by-decimal --device cpu,cuda --no-golden --dtype fp32 --save "$OUT/div"
step "x / 0.001 against PyTorch on cuda and cpu" 0 "$PY" - "$OUT/div" "$HERE/../refs" <<'PY'
import glob, sys
sys.path.insert(0, sys.argv[2])
import torch, refio
d = sys.argv[1]
load = lambda dev: refio.st_tensors(glob.glob(f"{d}/div-by-decimal/{dev}-*.safetensors.gz")[0])["y.fp32"]
cuda, cpu = load("cuda"), load("cpu")
x = torch.arange(0, 65536).float()
tc, tg = x / 0.001, (x.cuda() / 0.001).cpu()
v = lambda t: t.view(torch.int32)
n_cuda, n_cpu = int((v(cuda) != v(tg)).sum()), int((v(cpu) != v(tc)).sum())
n_bp, n_pt = int((v(cpu) != v(cuda)).sum()), int((v(tc) != v(tg)).sum())
print(f"bitprobe cuda vs PyTorch CUDA: {n_cuda} of 65536 differ (want 0)")
print(f"bitprobe cpu vs PyTorch CPU: {n_cpu} of 65536 differ (want 0)")
print(f"cpu vs cuda: bitprobe {n_bp}, PyTorch {n_pt} of 65536 differ (want equal; 48433 with 2.11)")
print(f"PyTorch {torch.__version__}, {torch.cuda.get_device_name(0)}")
sys.exit(0 if n_cuda == 0 and n_cpu == 0 and n_bp == n_pt else 1)
PY
rm -rf "$OUT/golden"
step "the cuda golden of div-by-decimal, into $OUT/golden" 0 \
    "$B" bless div-by-decimal --device cuda --golden "$OUT/golden"
finish
