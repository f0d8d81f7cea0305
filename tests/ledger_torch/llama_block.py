"""A small Llama-style decoder in plain PyTorch (PyTorch 1.13 and 2.x):
embedding, RMSNorm, RoPE built as 1.0 / (base ** (arange / dim)) on every
forward, causal attention, SwiGLU, residuals, final norm, LM head.

Used by tests/cli/ledger_torch.sh (recorded twice, the second time with
the positions cast to bf16 as DeepSpeed's zero.Init does), by
tests/gpu/ledger_gpu.sh (on the CPU and on CUDA) and by
bench/ledger_overhead.py.

    python3 llama_block.py [--device cpu|cuda] [--zero-init] [--layers N] ...

The weights come from torch.manual_seed(--seed) on the CPU whatever the
device, so that two devices start from the same bits.  With --record PATH
only the forward is recorded (bitprobe_torch.record around it)."""
import argparse
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype) * self.weight


class Rope(nn.Module):
    """transformers' LlamaRotaryEmbedding, computed in the forward.  With
    zero_init the positions are cast to bf16 as soon as they are made,
    as zero.Init's wrapper of torch.arange does."""

    def __init__(self, dim, base=10000, zero_init=False):
        super().__init__()
        self.dim, self.base, self.zero_init = dim, base, zero_init

    def forward(self, n, device):
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2, device=device).float() / self.dim))
        t = torch.arange(n, device=device, dtype=torch.float32)
        if self.zero_init:
            t = t.to(torch.bfloat16)
        freqs = torch.outer(t, inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        b, n, d = x.shape
        q = self.wq(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        v = self.wv(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        cos, sin = cos.to(x.dtype), sin.to(x.dtype)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        s = (q @ k.transpose(-1, -2)) / (self.hd ** 0.5)
        mask = torch.full((n, n), float("-inf"), device=x.device).triu(1)
        p = torch.softmax(s.float() + mask, dim=-1).to(x.dtype)
        return self.wo((p @ v).transpose(1, 2).reshape(b, n, d))


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, dim, heads, hidden):
        super().__init__()
        self.attn_norm = RMSNorm(dim)
        self.attn = Attention(dim, heads)
        self.mlp_norm = RMSNorm(dim)
        self.mlp = SwiGLU(dim, hidden)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    def __init__(self, vocab, dim, heads, hidden, layers, zero_init=False):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.rope = Rope(dim // heads, zero_init=zero_init)
        self.layers = nn.ModuleList(Block(dim, heads, hidden) for _ in range(layers))
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, ids):
        cos, sin = self.rope(ids.shape[1], ids.device)
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.head(self.norm(x))


def build(a):
    torch.manual_seed(a.seed)
    m = Llama(a.vocab, a.dim, a.heads, a.hidden, a.layers, zero_init=a.zero_init)
    dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[a.dtype]
    m = m.to(device=a.device, dtype=dt)
    g = torch.Generator().manual_seed(a.seed + 1)
    ids = torch.randint(0, a.vocab, (a.batch, a.seq), generator=g).to(a.device)
    return m, ids


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu")
    p.add_argument("--zero-init", action="store_true")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--dim", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--vocab", type=int, default=64)
    p.add_argument("--seq", type=int, default=300)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--record", metavar="LEDGER", help="record the forward only, here")
    p.add_argument("--capture", metavar="REGEX")
    p.add_argument("--capture-bytes", type=int, default=0)
    return p


def main(argv=None):
    a = parser().parse_args(argv)
    m, ids = build(a)
    with torch.no_grad():
        if a.record:
            import bitprobe_torch
            with bitprobe_torch.record(a.record, capture=a.capture,
                                       capture_bytes=a.capture_bytes):
                y = m(ids)
        else:
            y = m(ids)
    print("logits", tuple(y.shape), "sum %.6g" % y.float().sum().item())
    return 0


if __name__ == "__main__":
    sys.exit(main())
