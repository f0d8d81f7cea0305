#!/usr/bin/env python3
"""PyTorch eager reference for bench/stack_forward.sh: the forward of the
layer stack that `bitprobe stack` runs (transformers' LlamaForCausalLM with
eager attention, batch 1), on the same shapes, in the same dtype, on the
same GPU: embedding, RMSNorm, q/k/v projections, RoPE from cos/sin caches,
matmul-softmax-matmul causal attention, output projection, SwiGLU MLP,
residuals, final RMSNorm, LM head, float log-softmax.

Prints one JSON object: {"torch": version, "gpu": name, "forward_s": [...]}.
Exit 77 (skip) without torch or without a CUDA device.

  python3 bench/stack_torch.py [--hidden 4096 --heads 32 --layers 32
      --intermediate 11008 --vocab 32000 --positions 4096 --dtype bf16
      --repeat 3]
"""
import argparse
import json
import math
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # torch missing or broken
    print(f"SKIP: cannot import torch: {e}")
    sys.exit(77)


def rmsnorm(x, w, eps):
    dt = x.dtype
    h = x.float()
    var = h.pow(2).mean(-1, keepdim=True)
    h = h * torch.rsqrt(var + eps)
    return w * h.to(dt)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--hidden", type=int, default=4096)
    ap.add_argument("--heads", type=int, default=32)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--intermediate", type=int, default=11008)
    ap.add_argument("--vocab", type=int, default=32000)
    ap.add_argument("--positions", type=int, default=4096)
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16", "fp32"])
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        sys.exit(77)
    dev = "cuda"
    dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}[a.dtype]
    H, nh, L, I, V, T = a.hidden, a.heads, a.layers, a.intermediate, a.vocab, a.positions
    d = H // nh
    eps = 1e-5
    g = torch.Generator(device=dev)
    g.manual_seed(0)

    def param(rows, cols, b):
        return torch.empty(rows, cols, dtype=dt, device=dev).uniform_(-b, b, generator=g)

    def norm_w():
        return torch.empty(H, dtype=dt, device=dev).uniform_(0.5, 1.5, generator=g)

    with torch.inference_mode():
        emb = param(V, H, math.sqrt(3.0))
        layers = []
        for _ in range(L):
            layers.append(dict(
                n1=norm_w(), q=param(H, H, H ** -0.5), k=param(H, H, H ** -0.5),
                v=param(H, H, H ** -0.5), o=param(H, H, H ** -0.5), n2=norm_w(),
                g=param(I, H, H ** -0.5), u=param(I, H, H ** -0.5),
                d=param(H, I, I ** -0.5)))
        nf = norm_w()
        lm = param(V, H, H ** -0.5)
        ids = torch.randint(0, V, (T,), device=dev, generator=g)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, d, 2, device=dev).float() / d))
        t = torch.arange(T, device=dev, dtype=torch.float32)
        e = torch.outer(t, inv_freq)
        e = torch.cat((e, e), dim=-1)
        cos, sin = e.cos().to(dt), e.sin().to(dt)
        mask = torch.full((T, T), torch.finfo(dt).min, device=dev, dtype=dt).triu(1)

        def forward():
            h = emb[ids]
            for p in layers:
                x = rmsnorm(h, p["n1"], eps)
                q = F.linear(x, p["q"]).view(T, nh, d).transpose(0, 1)
                k = F.linear(x, p["k"]).view(T, nh, d).transpose(0, 1)
                v = F.linear(x, p["v"]).view(T, nh, d).transpose(0, 1)
                q = q * cos + rotate_half(q) * sin
                k = k * cos + rotate_half(k) * sin
                s = torch.matmul(q, k.transpose(1, 2)) / math.sqrt(d)
                s = s + mask
                w = torch.softmax(s, dim=-1, dtype=torch.float32).to(dt)
                att = torch.matmul(w, v).transpose(0, 1).reshape(T, H)
                h = h + F.linear(att, p["o"])
                x = rmsnorm(h, p["n2"], eps)
                h = h + F.linear(F.silu(F.linear(x, p["g"])) * F.linear(x, p["u"]), p["d"])
            x = rmsnorm(h, nf, eps)
            return F.linear(x, lm).float().log_softmax(-1)

        times = []
        for _ in range(a.repeat):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            out = forward()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
            del out
    print(json.dumps({
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "gpu": torch.cuda.get_device_name(),
        "bf16_reduced_precision_reduction":
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction,
        "forward_s": times,
    }))


if __name__ == "__main__":
    main()
