#!/usr/bin/env python3
"""PyTorch's own results for the shipped probes' formulations, on CPU and CUDA.

Writes into OUTDIR:
  probes_ref.safetensors  <probe>.<output>.<dtype>.<device> for every probe formulation
  rope_cpu.safetensors.gz Llama-2 RoPE caches built on the CPU in fp32, stored in bf16
  rope_cuda_zero.safetensors.gz  built on CUDA with the positions arange in bf16
                               (DeepSpeed zero.Init casts float constructors at once)
  rope_cuda_fp32.safetensors.gz  built on CUDA in fp32, stored in bf16
  info.json               torch/CUDA versions, CPU capability, GPU name, and under
                          "env" the PyTorch build and CPU model (refio.torch_env)
These files are independent references for bitprobe's tests: they come from
PyTorch, not from bitprobe.  The rope_* files and info.json are stored in
tests/data/torch; torch_compare.py checks a run against them bit for bit.
Exits 77 where torch or a GPU is missing.
"""
import json
import os
import platform
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import refio  # noqa: E402

try:
    import torch
except ImportError as e:
    print(f"SKIP: {e}")
    sys.exit(77)


def save_file(tensors, path):
    refio.st_write(path, tensors)
if not torch.cuda.is_available():
    print("SKIP: no CUDA device")
    sys.exit(77)

# MKL VML resolves each function's kernel on its first call; a first call
# made by several threads at once can run a low-accuracy kernel on one of
# them (pytorch/pytorch#188792): one call of each, alone, first.
for f in (torch.sin, torch.cos, torch.exp, torch.log, torch.tanh, torch.sqrt, torch.reciprocal):
    f(torch.ones(1))
out = sys.argv[1] if len(sys.argv) > 1 else "."
os.makedirs(out, exist_ok=True)
DT = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
res = {}


def add(name, t):
    res[name] = t.detach().contiguous().cpu()


def rope(dev, pos_dtype=torch.float32, dim=128, base=10000, n=4096):
    # transformers 4.36 LlamaRotaryEmbedding; 1 / t is t.reciprocal() * 1.
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, device=dev).float() / dim))
    t = torch.arange(n, device=dev, dtype=pos_dtype)
    freqs = torch.outer(t, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return inv_freq, emb.cos(), emb.sin()


for dn, dt in DT.items():
    for d in ("cpu", "cuda"):
        add(f"seed-div.y.{dn}.{d}", torch.tensor([9.0], dtype=dt, device=d) / 10)
        x = torch.arange(0, 10, device=d, dtype=dt) / 10
        add(f"seed-inv-freq.x.{dn}.{d}", x)
        add(f"seed-inv-freq.y.{dn}.{d}", 10 ** x)
        add(f"arange-step.x.{dn}.{d}", torch.arange(0, 100, 0.3, device=d, dtype=dt))
        add(f"arange-1024.x.{dn}.{d}", torch.arange(0, 1024, device=d, dtype=dt))
        v = torch.arange(0, 1000, device=d, dtype=dt)
        add(f"div-3-7.by3.{dn}.{d}", v / 3)
        add(f"div-3-7.by7.{dn}.{d}", v / 7)
        inv, c, s = rope(d)
        add(f"rope-llama2.inv_freq.{dn}.{d}", inv.to(dt))
        add(f"rope-llama2.cos.{dn}.{d}", c.to(dt))
        add(f"rope-llama2.sin.{dn}.{d}", s.to(dt))
        if dn != "fp32":
            inv, c, s = rope(d, pos_dtype=dt)
            add(f"rope-llama2-zero-init.cos.{dn}.{d}", c.to(dt))
            add(f"rope-llama2-zero-init.sin.{dn}.{d}", s.to(dt))
    # int64 arange promoted by true division, as in the seed repro
    x = torch.arange(0, 10, device="cuda") / 10
    add(f"seed-inv-freq-int.y.fp32.cuda", 10 ** x)
    add(f"seed-inv-freq-int.y.fp32.cpu", 10 ** (torch.arange(0, 10) / 10))
save_file(res, os.path.join(out, "probes_ref.safetensors"))

bf = torch.bfloat16
inv, c, s = rope("cpu")
save_file({"inv_freq": inv, "cos": c.to(bf), "sin": s.to(bf)}, os.path.join(out, "rope_cpu.safetensors.gz"))
inv, c, s = rope("cuda", pos_dtype=bf)
save_file({"inv_freq": inv.cpu(), "cos": c.to(bf).cpu(), "sin": s.to(bf).cpu()},
          os.path.join(out, "rope_cuda_zero.safetensors.gz"))
inv, c, s = rope("cuda")
save_file({"inv_freq": inv.cpu(), "cos": c.to(bf).cpu(), "sin": s.to(bf).cpu()},
          os.path.join(out, "rope_cuda_fp32.safetensors.gz"))

cpu = {k: v for k, v in zip(("inv_freq", "cos", "sin"), rope("cpu"))}
zc = rope("cuda", pos_dtype=bf)
f32c = rope("cuda")
summary = {}
for name, i in (("cos", 1), ("sin", 2)):
    ref = cpu[name].to(bf)
    z = zc[i].to(bf).cpu()
    f = f32c[i].to(bf).cpu()
    summary[name] = {
        "zero_init_mismatched": int((ref != z).sum()),
        "zero_init_max_abs": float((ref.float() - z.float()).abs().max()),
        "fp32_init_mismatched": int((ref != f).sum()),
        "fp32_init_max_abs": float((ref.float() - f.float()).abs().max()),
        "total": ref.numel(),
    }
info = {
    "torch": torch.__version__,
    "cuda": torch.version.cuda,
    "cpu_capability": refio.cpu_capability(),
    "gpu": torch.cuda.get_device_name(0),
    "cc": list(torch.cuda.get_device_capability(0)),
    "machine": platform.processor() or platform.machine(),
    "mkl": torch.backends.mkl.is_available(),
    "rope_summary": summary,
    "seed_div_cuda_hex": hex(torch.tensor([9.0], device="cuda").div(10).view(torch.int32).item()),
    "seed_div_cpu_hex": hex(torch.tensor([9.0]).div(10).view(torch.int32).item()),
    "env": refio.torch_env(),
}
json.dump(info, open(os.path.join(out, "info.json"), "w"), indent=1)
print(json.dumps(info, indent=1))
