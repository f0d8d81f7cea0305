"""Rotary modules of every rope type the init audit's oracle knows, written
in plain PyTorch as transformers computes them (modeling_rope_utils.py's
_compute_*_parameters and LlamaRotaryEmbedding.forward, transcribed here
from transformers' code, not from bitprobe's): each holds its config, its
rope_type and attention_scaling, an inv_freq buffer, and a forward(x,
position_ids) -> (cos, sin); one 2023-style module with linear scaling
keeps its caches as buffers (t / scaling_factor).

`bitprobe init-audit rope_types.py:model` must find every module's formula
within a few ulps of the CPU build (the oracle's verdict, not "no
verdict"), but for `mislabelled`, whose buffer is not what its config
says."""
import math
import types

import torch
import torch.nn as nn

DIM, BASE, MAXPOS = 32, 10000.0, 256


def cfg(**rope):
    rs = dict(rope) if rope else None
    return types.SimpleNamespace(rope_theta=BASE, hidden_size=DIM * 2, num_attention_heads=2,
                                 max_position_embeddings=MAXPOS, rope_scaling=rs,
                                 partial_rotary_factor=1.0)


def default_inv(base, dim):
    return 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))


def compute(c, rope_type):
    """(inv_freq, attention_factor) as transformers' ROPE_INIT_FUNCTIONS."""
    dim, base, s = DIM, c.rope_theta, c.rope_scaling or {}
    if rope_type in ("default", "mrope"):
        return default_inv(base, dim), 1.0
    if rope_type == "linear":
        inv = default_inv(base, dim)
        inv /= s["factor"]
        return inv, 1.0
    if rope_type == "dynamic":
        mp, f = c.max_position_embeddings, s["factor"]
        seq_len = mp
        base = base * ((f * seq_len / mp) - (f - 1)) ** (dim / (dim - 2))
        return default_inv(base, dim), 1.0
    if rope_type == "yarn":
        mp, factor = c.max_position_embeddings, s["factor"]
        att = 0.1 * math.log(factor) + 1.0
        beta_fast, beta_slow = s.get("beta_fast") or 32, s.get("beta_slow") or 1

        def corr_dim(rot):
            return (dim * math.log(mp / (rot * 2 * math.pi))) / (2 * math.log(base))
        low = max(math.floor(corr_dim(beta_fast)), 0)
        high = min(math.ceil(corr_dim(beta_slow)), dim - 1)
        if low == high:
            high += 0.001
        pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
        inv_ext = 1.0 / pos_freqs
        inv_int = 1.0 / (factor * pos_freqs)
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low),
                           0, 1)
        ext_factor = 1 - ramp.float()
        return inv_int * (1 - ext_factor) + inv_ext * ext_factor, att
    if rope_type == "longrope":
        factor = s["factor"]
        att = math.sqrt(1 + math.log(factor) / math.log(c.max_position_embeddings))
        ext = torch.tensor(s["short_factor"], dtype=torch.float32)
        shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
        return 1.0 / (ext * base ** shape), att
    if rope_type == "llama3":
        inv = default_inv(base, dim)
        factor, lo, hi = s["factor"], s["low_freq_factor"], s["high_freq_factor"]
        old = s["original_max_position_embeddings"]
        low_wl, high_wl = old / lo, old / hi
        wavelen = 2 * math.pi / inv
        inv_l = torch.where(wavelen > low_wl, inv / factor, inv)
        smooth = (old / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * inv_l / factor + smooth * inv_l
        medium = ~(wavelen < high_wl) * ~(wavelen > low_wl)
        return torch.where(medium, smoothed, inv_l), 1.0
    raise ValueError(rope_type)


class RotaryEmbedding(nn.Module):
    """transformers' rotary module: inv_freq a buffer, cos/sin in forward."""

    def __init__(self, c, rope_type):
        super().__init__()
        self.config, self.rope_type = c, rope_type
        self.max_seq_len_cached = c.max_position_embeddings
        inv, self.attention_scaling = compute(c, rope_type)
        self.register_buffer("inv_freq", inv, persistent=False)

    @torch.no_grad()
    def forward(self, x, position_ids):
        inv = self.inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
        pos = position_ids[:, None, :].float()
        freqs = (inv.float() @ pos.float()).transpose(1, 2)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos = emb.cos() * self.attention_scaling
        sin = emb.sin() * self.attention_scaling
        return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


class LinearScaling2023(nn.Module):
    """transformers 4.36's LlamaLinearScalingRotaryEmbedding: caches as
    buffers, positions divided by the scaling factor."""

    def __init__(self, dim=DIM, max_position_embeddings=MAXPOS, base=BASE, scaling_factor=4.0):
        super().__init__()
        self.dim, self.base, self.scaling_factor = dim, base, scaling_factor
        self.max_position_embeddings = max_position_embeddings
        self.register_buffer("inv_freq", default_inv(base, dim), persistent=False)
        t = torch.arange(max_position_embeddings, dtype=self.inv_freq.dtype)
        t = t / self.scaling_factor
        freqs = torch.outer(t, self.inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos().to(torch.get_default_dtype()),
                             persistent=False)
        self.register_buffer("sin_cached", emb.sin().to(torch.get_default_dtype()),
                             persistent=False)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.default = RotaryEmbedding(cfg(), "default")
        self.linear = RotaryEmbedding(cfg(rope_type="linear", factor=2.0), "linear")
        self.dynamic = RotaryEmbedding(cfg(rope_type="dynamic", factor=2.0), "dynamic")
        self.yarn = RotaryEmbedding(cfg(rope_type="yarn", factor=4.0), "yarn")
        short = [1.0 + 0.05 * i for i in range(DIM // 2)]
        self.longrope = RotaryEmbedding(cfg(rope_type="longrope", factor=4.0, short_factor=short,
                                            long_factor=[2.0] * (DIM // 2)), "longrope")
        self.llama3 = RotaryEmbedding(cfg(rope_type="llama3", factor=8.0, low_freq_factor=1.0,
                                          high_freq_factor=4.0,
                                          original_max_position_embeddings=64), "llama3")
        self.mrope = RotaryEmbedding(cfg(rope_type="default", mrope_section=[4, 6, 6]), "mrope")
        self.linear2023 = LinearScaling2023()
        # says base 10000, computes base 5000: the oracle must give no verdict
        self.mislabelled = RotaryEmbedding(cfg(), "default")
        self.mislabelled.inv_freq.copy_(default_inv(5000.0, DIM))


def model():
    return Model()
