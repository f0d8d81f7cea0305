"""A small decoder written the way torchtitan builds models: constructed on
the meta device, moved with to_empty() and re-initialised by the model's own
init_weights().  init_weights() re-draws the parameters only, so the RoPE
inv_freq buffer, computed in RotaryEmbedding.__init__ on meta (no values),
keeps whatever memory to_empty() handed it: uninitialised memory (the bug of
pytorch/torchtitan#4783).  fixed() is the same model whose init_weights()
also recomputes inv_freq (the fix).

Callables for `bitprobe init-audit FILE.py:CALLABLE`: uninit, fixed."""
import torch
import torch.nn as nn


class RotaryEmbedding(nn.Module):
    def __init__(self, dim, base=10000.0):
        super().__init__()
        self.dim, self.base = dim, base
        self.register_buffer("inv_freq", self.compute(), persistent=False)

    def compute(self):
        idx = torch.arange(0, self.dim, 2, dtype=torch.int64).float()
        return 1.0 / (self.base ** (idx / self.dim))

    def forward(self, n, device):
        t = torch.arange(n, device=device, dtype=torch.int64).float()
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        return emb.cos(), emb.sin()


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x, cos, sin):
        h = self.norm(x)
        q, k, v = self.wq(h), self.wk(h), self.wv(h)
        q = q * cos.to(q.dtype) + rotate_half(q) * sin.to(q.dtype)
        k = k * cos.to(k.dtype) + rotate_half(k) * sin.to(k.dtype)
        s = (q @ k.transpose(-1, -2)) / (q.shape[-1] ** 0.5)
        mask = torch.full(s.shape[-2:], float("-inf"), device=x.device).triu(1)
        p = torch.softmax(s.float() + mask, dim=-1).to(x.dtype)
        return x + self.wo(p @ v)


class Decoder(nn.Module):
    def __init__(self, vocab=64, dim=32, layers=2, fixed=False):
        super().__init__()
        self.fixed = fixed
        self.tok = nn.Embedding(vocab, dim)
        self.rope = RotaryEmbedding(dim)
        self.layers = nn.ModuleList(Block(dim) for _ in range(layers))
        self.out = nn.Linear(dim, vocab, bias=False)

    def init_weights(self):
        torch.manual_seed(0)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                nn.init.trunc_normal_(m.weight, std=0.02)
            elif isinstance(m, nn.Embedding):
                nn.init.normal_(m.weight)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        if self.fixed:
            with torch.no_grad():
                self.rope.inv_freq.copy_(self.rope.compute())

    def forward(self, ids):
        x = self.tok(ids)
        cos, sin = self.rope(ids.shape[1], ids.device)
        for b in self.layers:
            x = b(x, cos, sin)
        return self.out(x)


def uninit():
    return Decoder()


def fixed():
    return Decoder(fixed=True)
