"""Whether a difference matters: the model (random weights, drawn once on
the CPU from a fixed seed, so every way shares them) is cast to the model
dtype and run on fixed token ids with each way's buffers in place of its
own; each way's log-probabilities are compared with the reference's, per
position: the largest |difference| over the vocabulary and whether the
top-1 token changes (what `bitprobe stack` reports for its layer stack).

    python3 -m bitprobe_torch init-effect --model MODEL --dir DIR --ways cpu,zero-init ...

(run by the audit in a fresh process; writes DIR/effect.json)."""
import argparse
import copy
import os
import time

import torch

from . import spec as spec_mod
from . import stio, ways


def _vocab(model, builder):
    c = builder.config
    v = getattr(c, "vocab_size", None) if c is not None else None
    if v:
        return int(v)
    for m in model.modules():
        if isinstance(m, torch.nn.Embedding):
            return m.num_embeddings
    return None


def _logits(model, ids):
    try:
        out = model(input_ids=ids)
    except TypeError:
        out = model(ids)
    if isinstance(out, torch.Tensor):
        return out
    if hasattr(out, "logits") and out.logits is not None:
        return out.logits
    if hasattr(out, "last_hidden_state"):
        return out.last_hidden_state
    if isinstance(out, (tuple, list)):
        return out[0]
    raise TypeError("the forward returned %s: no logits" % type(out).__name__)


def _forward(m, ids, plain, res):
    """The logits; where oneDNN refuses a primitive (ONEDNN_MAX_CPU_ISA
    below what its bf16 kernels need), every way's forward runs without it,
    the reference's included, and the report says so."""
    if plain[0]:
        try:
            with torch.no_grad():
                return _logits(m, ids).float()
        except RuntimeError as e:
            if "primitive" not in str(e) or not torch.backends.mkldnn.is_available():
                raise
            plain[0] = False
            res["note"] = ("oneDNN refused a primitive (%s): every forward ran without oneDNN" %
                           str(e).splitlines()[0][:120])
    with torch.no_grad(), torch.backends.mkldnn.flags(enabled=False):
        return _logits(m, ids).float()


def _set_buffers(model, tensors):
    mods = dict(model.named_modules())
    n = 0
    for name, t in tensors.items():
        if ":" in name or "@" in name:
            continue
        path, _, leaf = name.rpartition(".")
        m = mods.get(path)
        if m is None or leaf not in m._buffers or m._buffers[leaf] is None:
            continue
        old = m._buffers[leaf]
        m._buffers[leaf] = t.to(old.device)
        n += 1
    return n


def run(a):
    res = {"status": "error", "ways": {}}
    t0 = time.time()
    try:
        builder = spec_mod.Builder(spec_mod.parse(a.model))
        D = ways.torch_dtype(a.dtype)
        dev = torch.device(a.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        torch.manual_seed(0)
        base = builder.build(None)
        base.eval()
        vocab = _vocab(base, builder)
        if not vocab:
            raise ValueError("no vocabulary size: neither config.vocab_size nor an nn.Embedding")
        T = a.tokens
        g = torch.Generator().manual_seed(1234)
        ids = torch.randint(0, vocab, (1, T), generator=g).to(dev)
        res.update({"tokens": T, "vocab": vocab, "device": str(dev), "dtype": a.dtype,
                    "seed": {"weights": 0, "ids": 1234}})
        lp = {}
        order = [a.reference] + [w for w in a.ways.split(",") if w != a.reference]
        plain = [True]  # oneDNN on (PyTorch's default) until it refuses a primitive
        for w in order:
            path = os.path.join(a.dir, w, "init", w + ".safetensors")
            if not os.path.exists(path):
                continue
            m = copy.deepcopy(base)
            n = _set_buffers(m, stio.read(path)[0])
            m = m.to(device=dev, dtype=D) if D != torch.float32 else m.to(dev)
            out = _forward(m, ids, plain, res)
            is_logits = out.shape[-1] == vocab
            lp[w] = (torch.log_softmax(out, dim=-1) if is_logits else out)[0].cpu()
            res["ways"][w] = {"buffers_set": n, "logits": is_logits}
            del m
        ref = lp.get(a.reference)
        if ref is None:
            raise ValueError("the reference's forward did not run")
        for w, x in lp.items():
            if w == a.reference:
                continue
            d = (x - ref).abs()
            per = d.max(dim=-1).values
            r = res["ways"][w]
            r["max_abs"] = float(per.max())
            r["first_position_differing"] = int((per > 0).nonzero()[0]) if (per > 0).any() else None
            r["positions_differing"] = int((per > 0).sum())
            if r["logits"]:
                flips = (x.argmax(-1) != ref.argmax(-1))
                r["top1_flips"] = int(flips.sum())
                r["first_flip"] = int(flips.nonzero()[0]) if flips.any() else None
            r["per_position_max_abs"] = [float(v) for v in per]
            if r["logits"]:
                r["per_position_flip"] = [bool(v) for v in flips]
        res["status"] = "ok"
    except spec_mod.SpecError as e:
        res["why"] = str(e)
    except Exception as e:
        res["why"] = "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0][:300])
    res["seconds"] = round(time.time() - t0, 3)
    return res


def main(argv):
    p = argparse.ArgumentParser(prog="python3 -m bitprobe_torch init-effect")
    p.add_argument("--model", required=True)
    p.add_argument("--dir", required=True)
    p.add_argument("--ways", required=True)
    p.add_argument("--reference", default=ways.REFERENCE)
    p.add_argument("--dtype", default="bf16", choices=sorted(ways.DTYPES))
    p.add_argument("--tokens", type=int, default=512)
    p.add_argument("--device")
    a = p.parse_args(argv)
    res = run(a)
    stio.write_json(os.path.join(a.dir, "effect.json"), res)
    return 0
