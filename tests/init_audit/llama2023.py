"""A small Llama-style language model in plain PyTorch whose RoPE module is
written as transformers 4.36's LlamaRotaryEmbedding (2023): inv_freq and the
cos/sin caches are buffers computed in __init__, the positions with a float
arange:

    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    t = torch.arange(max_seq_len_cached, device=device, dtype=inv_freq.dtype)
    freqs = torch.outer(t, inv_freq); emb = torch.cat((freqs, freqs), dim=-1)
    cos_cached = emb.cos().to(dtype); sin_cached = emb.sin().to(dtype)

Under DeepSpeed's zero.Init the float arange is cast to the ZeRO dtype as
soon as it is made (bf16 keeps the integers up to 256 only), which is the
bug the init audit exists for.  int_arange() is the same model with the
fix transformers adopted (an int64 arange cast with type_as): every way
agrees.

Callables for `bitprobe init-audit FILE.py:CALLABLE`: float_arange,
int_arange (2 layers, head dim 128, 4096 positions, as Llama-2's caches),
tiny (1 layer, 512 positions: the fast one), llama2_7b_shapes (Llama-2-7B's
shapes and 32 layers, for the bench: build it with --buffers-only)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LlamaRotaryEmbedding(nn.Module):
    def __init__(self, dim, max_position_embeddings=2048, base=10000, device=None,
                 int_arange=False):
        super().__init__()
        self.dim = dim
        self.max_position_embeddings = max_position_embeddings
        self.base = base
        self.int_arange = int_arange
        inv_freq = 1.0 / (self.base ** (torch.arange(0, self.dim, 2).float().to(device) / self.dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)
        self._set_cos_sin_cache(max_position_embeddings, self.inv_freq.device,
                                torch.get_default_dtype())

    def _set_cos_sin_cache(self, seq_len, device, dtype):
        self.max_seq_len_cached = seq_len
        if self.int_arange:
            t = torch.arange(self.max_seq_len_cached, device=device,
                             dtype=torch.int64).type_as(self.inv_freq)
        else:
            t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(dtype), persistent=False)
        self.register_buffer("sin_cached", emb.sin().to(dtype), persistent=False)

    def forward(self, x, seq_len):
        return (self.cos_cached[:seq_len].to(dtype=x.dtype),
                self.sin_cached[:seq_len].to(dtype=x.dtype))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        v = x.float().pow(2).mean(-1, keepdim=True)
        return self.weight * (x.float() * torch.rsqrt(v + self.eps)).to(x.dtype)


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


class Attention(nn.Module):
    def __init__(self, hidden, heads, max_pos, base, int_arange):
        super().__init__()
        self.heads, self.hd = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.rotary_emb = LlamaRotaryEmbedding(self.hd, max_pos, base, int_arange=int_arange)

    def forward(self, x):
        b, n, d = x.shape
        q = self.q_proj(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(b, n, self.heads, self.hd).transpose(1, 2)
        cos, sin = self.rotary_emb(v, n)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        s = (q @ k.transpose(-1, -2)) / (self.hd ** 0.5)
        mask = torch.full((n, n), float("-inf"), device=x.device).triu(1)
        p = torch.softmax(s.float() + mask, dim=-1).to(x.dtype)
        return self.o_proj((p @ v).transpose(1, 2).reshape(b, n, d))


class MLP(nn.Module):
    def __init__(self, hidden, inter):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, inter, bias=False)
        self.up_proj = nn.Linear(hidden, inter, bias=False)
        self.down_proj = nn.Linear(inter, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class DecoderLayer(nn.Module):
    def __init__(self, hidden, heads, inter, max_pos, base, int_arange):
        super().__init__()
        self.input_layernorm = RMSNorm(hidden)
        self.self_attn = Attention(hidden, heads, max_pos, base, int_arange)
        self.post_attention_layernorm = RMSNorm(hidden)
        self.mlp = MLP(hidden, inter)

    def forward(self, x):
        x = x + self.self_attn(self.input_layernorm(x))
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaLM(nn.Module):
    def __init__(self, vocab=256, hidden=128, heads=1, inter=256, layers=2, max_pos=4096,
                 base=10000, int_arange=False):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(DecoderLayer(hidden, heads, inter, max_pos, base, int_arange)
                                    for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def float_arange():
    return LlamaLM()


def int_arange():
    return LlamaLM(int_arange=True)


def tiny():
    return LlamaLM(vocab=64, hidden=64, heads=1, inter=64, layers=1, max_pos=512)


def llama2_7b_shapes():
    return LlamaLM(vocab=32000, hidden=4096, heads=32, inter=11008, layers=32, max_pos=4096)
