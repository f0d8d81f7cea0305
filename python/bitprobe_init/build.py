"""One way in one process: construct the model as the way does, under the
op recorder (the init ledger), capture every buffer (persistent or not),
with --params every parameter, and for each RoPE module that computes its
cos/sin in forward (current transformers) that forward's result over the
positions; write the way's bundle, ledger and way.json.

    python3 -m bitprobe_torch init-build --way W --model MODEL --out DIR ...

(run by the audit, one process per way; way.json says ok, skipped or
error with the reason: the process itself exits 0 unless its arguments
are wrong).  --poison builds a twin whose uninitialised allocations
(aten::empty and kin, to_empty()) are filled with 0xff bytes, NaN in every
floating format: a buffer that differs between a way and its twin holds
memory nothing initialised."""
import argparse
import inspect
import json
import os
import platform
import re
import time
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import bitprobe_torch

from . import spec as spec_mod
from . import stio, track, ways

PHASE = ["construction"]  # where the build is: construction, to_empty, re-initialisation

_EMPTY = re.compile(r"^aten::(empty|empty_like|empty_strided|new_empty|new_empty_strided|"
                    r"empty_permuted)(\.|$)")


def _storage_ptr(t):
    try:
        return t.untyped_storage().data_ptr()
    except AttributeError:
        try:
            return t.storage().data_ptr()
        except Exception:
            return None
    except Exception:
        return None


class Poison(TorchDispatchMode):
    """Fills every uninitialised allocation with 0xff bytes and remembers
    where it was made (op, phase, module), by storage address."""

    def __init__(self, stack):
        super().__init__()
        self.stack = stack
        self.allocs = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = bitprobe_torch._op_info(func)[1]
        if _EMPTY.match(name) and isinstance(out, torch.Tensor) and out.device.type != "meta":
            if out.numel():
                with torch.no_grad():
                    if out.is_contiguous() and out.dim():
                        out.view(-1).view(torch.uint8).fill_(0xFF)
                    elif out.is_floating_point():
                        out.fill_(float("nan"))
                    elif out.dtype == torch.bool:
                        out.fill_(True)
                    else:
                        out.fill_(-1)
            p = _storage_ptr(out)
            if p:
                self.allocs[p] = {"op": name, "phase": PHASE[0],
                                  "module": self.stack[-1] if self.stack else ""}
        return out


def _param_bytes(model):
    n = b = 0
    for p in model.parameters():
        n += p.numel()
        b += p.numel() * 4
    return n, b


def _mem_available():
    # BITPROBE_INIT_AUDIT_MEM: the bytes the size check takes as available
    # (to try the buffers-only path on a host where the model fits)
    env = os.environ.get("BITPROBE_INIT_AUDIT_MEM")
    if env:
        return int(env)
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def plan(builder, want_cuda):
    """Counts the parameters on meta; says whether they fit this host
    (fp32 parameters within half of the available memory, and of the GPU's
    free memory when a way builds on it)."""
    t0 = time.time()
    try:
        with ways.device_context(torch, "meta"):
            m = builder.build(None)
        n, b = _param_bytes(m)
        del m
    except Exception as e:
        return {"ok": False, "why": "a meta build to count the parameters failed (%s): "
                "assumed to fit" % str(e).splitlines()[0][:160], "fits": True}
    avail = _mem_available()
    gpu = None
    if want_cuda and torch.cuda.is_available():
        try:
            gpu = torch.cuda.mem_get_info()[0]
        except Exception:
            gpu = None
    fits = (avail is None or b <= avail // 2) and (gpu is None or b <= gpu // 2)
    return {"ok": True, "params": n, "param_bytes_fp32": b, "mem_available": avail,
            "gpu_free": gpu, "fits": fits, "seconds": round(time.time() - t0, 3)}


def _rope_facts(path, m, cfg_of):
    attrs = {}
    for k in ("dim", "base", "max_position_embeddings", "max_seq_len_cached",
              "original_max_seq_len", "scaling_factor", "rope_type", "attention_scaling",
              "mscale", "rope_theta", "partial_rotary_factor"):
        v = getattr(m, k, None)
        if isinstance(v, (int, float, str)) and not isinstance(v, bool):
            attrs[k] = v
    bufs = {leaf: (path + "." + leaf if path else leaf)
            for leaf, t in m._buffers.items() if t is not None}
    c = getattr(m, "config", None)
    return {"path": path, "class": type(m).__name__, "attrs": attrs, "buffers": bufs,
            "config": cfg_of(c) if c is not None else {}}


def _config_facts(c):
    out = {}
    for k in ("hidden_size", "num_attention_heads", "head_dim", "max_position_embeddings",
              "rope_theta", "partial_rotary_factor", "rope_scaling", "rope_parameters",
              "original_max_position_embeddings", "model_type"):
        v = getattr(c, k, None)
        if v is not None:
            try:
                json.dumps(v)
                out[k] = v
            except TypeError:
                pass
    return out


_ROPE_CLASS = re.compile(r"rotary|rope", re.I)


def rope_modules(model):
    """(path, module) of each RoPE module: one holding an inv_freq buffer,
    or a rotary/rope class holding buffers."""
    out = []
    for path, m in model.named_modules():
        if "inv_freq" in m._buffers or (_ROPE_CLASS.search(type(m).__name__) and
                                          any(t is not None for t in m._buffers.values())):
            out.append((path, m))
    return out


def rope_forward(m, positions, xdtype, device):
    """transformers' rotary forward(x, position_ids) -> (cos, sin) over the
    positions 0..P-1 (x carries only dtype and device); None and why when the
    module does not take that call."""
    try:
        sig = inspect.signature(m.forward)
    except (TypeError, ValueError):
        return None, "forward's signature cannot be read"
    if "position_ids" not in sig.parameters:
        return None, None
    cfg = getattr(m, "config", None)
    rs = getattr(cfg, "rope_scaling", None) or getattr(cfg, "rope_parameters", None) or {}
    if isinstance(rs, dict) and rs.get("mrope_section"):
        return None, "mRoPE: its forward takes 3-D positions (inv_freq is compared)"
    x = torch.zeros(1, 1, 1, dtype=xdtype, device=device)
    pos = torch.arange(positions, device=device)[None, :]
    with torch.no_grad():
        out = m(x, pos)
    if not isinstance(out, (tuple, list)) or len(out) < 2:
        return None, "forward(x, position_ids) did not return (cos, sin)"
    cos, sin = out[0], out[1]
    while cos.dim() > 2 and cos.shape[0] == 1:
        cos, sin = cos[0], sin[0]
    return (cos, sin), None


def _owner_info(m):
    return {"owner": type(m).__name__,
            "owner_reset_parameters": callable(getattr(m, "reset_parameters", None))}


def capture(model, with_params, rope_out):
    """[(name, tensor or None, facts)] for every buffer, parameter (with
    --params) and RoPE forward result."""
    items, seen = [], {}
    for path, m in model.named_modules():
        nonpersistent = getattr(m, "_non_persistent_buffers_set", set())
        for leaf, t in m._buffers.items():
            if t is None:
                continue
            name = path + "." + leaf if path else leaf
            f = {"kind": "buffer", "module": path, "leaf": leaf,
                 "persistent": leaf not in nonpersistent}
            f.update(_owner_info(m))
            if id(t) in seen:
                f["alias_of"] = seen[id(t)]
            seen.setdefault(id(t), name)
            items.append((name, t, f))
        if with_params:
            for leaf, p in m._parameters.items():
                if p is None:
                    continue
                name = path + "." + leaf if path else leaf
                if hasattr(p, "full_tensor"):
                    p = p.full_tensor()
                f = {"kind": "param", "module": path, "leaf": leaf, "device": str(p.device)}
                if p.device.type != "meta":  # a copy: gathered parameters go back to shards
                    p = p.detach().to("cpu", copy=True)
                f.update(_owner_info(m))
                items.append((name, p, f))
    for name, t, f in rope_out:
        items.append((name, t, f))
    return items


def _env():
    e = {"torch": torch.__version__, "python": platform.python_version(),
         "platform": platform.platform(), "recorder": "bitprobe_torch " + bitprobe_torch.__version__}
    if torch.cuda.is_available():
        e["cuda"] = {"runtime": torch.version.cuda,
                     "devices": [torch.cuda.get_device_name(i)
                                 for i in range(torch.cuda.device_count())]}
    try:
        import transformers
        e["transformers"] = transformers.__version__
    except Exception:
        pass
    return e


class _NullCtx:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def construct(a, builder, D, tracker, info):
    """The model, built as way a.way builds it."""
    w = a.way
    notes = info["notes"]
    bo = ways.params_on_meta(torch) if a.buffers_only else _NullCtx()
    if w == "cpu":
        with bo:
            return builder.build(None)
    if w == "cpu-bf16":
        with bo:
            return builder.build(D)
    if w == "cuda":
        with ways.device_context(torch, "cuda"), bo:
            return builder.build(None)
    if w == "zero-init":
        dev = ways.local_device(torch)
        info["device"] = str(dev)
        if a.deepspeed:
            ctx, ver = ways.deepspeed_context(torch, D)
            info["deepspeed"] = ver
            notes.append("DeepSpeed %s zero.Init(dtype=%s)" % (ver, stio.dtype_name(D)))
        else:
            ctx = ways.ZeroInitEmulation(torch, D, dev)
            info["deepspeed"] = "emulated"
            notes.append("torch.%s and Tensor.__new__ wrapped as zero.Init wraps them: results "
                         "on %s, floating ones cast to %s" %
                         (", torch.".join(ways.ZERO_WRAPPED), dev, stio.dtype_name(D)))
        with ctx, bo:
            return builder.build(None)
    if w in ways.TO_EMPTY:
        dev = torch.device(a.device or ("cuda" if torch.cuda.is_available() else "cpu"))
        info["device"] = str(dev)
        mesh = ways.fsdp2_setup(torch) if w == "fsdp2-meta" else None
        with ways.device_context(torch, "meta"):
            model = builder.build(None)
        if mesh is not None:
            n = ways.fsdp2_shard(torch, model, mesh)
            notes.append("fully_shard on %d modules (one rank)" % n)
        PHASE[0] = "to_empty"
        tracker.stack.append(tracker.tag_of(model))
        ways.to_empty(torch, model, dev, a.buffers_only)
        tracker.stack.pop()
        PHASE[0] = "re-initialisation"
        fn = name = None
        if a.reinit:
            fn = spec_mod.Builder(spec_mod.parse(a.reinit)).fn
            name = a.reinit
        tracker.stack.append(tracker.tag_of(model))
        with torch.no_grad() if a.buffers_only else _NullCtx():
            info["reinit"] = ways.reinit(model, fn, name)
        tracker.stack.pop()
        PHASE[0] = "done"
        if a.buffers_only:
            notes.append("to_empty() gave memory to the buffers only: the parameters stayed "
                         "on meta (--buffers-only)")
        return model
    raise ValueError("unknown way %r" % w)


def _xdtype(model, default):
    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype
    return default


def _device_of(model):
    for t in list(model.buffers()) + list(model.parameters()):
        if t.device.type != "meta":
            return t.device
    return torch.device("cpu")


def run(a):
    out = a.out
    os.makedirs(out, exist_ok=True)
    D = ways.torch_dtype(a.dtype)
    info = {"way": a.way, "status": "error", "why": None, "poisoned": bool(a.poison),
            "dtype": stio.dtype_name(D), "device": "cpu", "notes": [], "reinit": None,
            "buffers_only": bool(a.buffers_only), "env": _env(), "seconds": {},
            "tensors": [], "rope": [], "deepspeed": None}
    t0 = time.time()
    try:
        ok, why = ways.availability(a.way, torch)
        if not ok:
            info["status"], info["why"] = "skipped", why
            return info
        builder = spec_mod.Builder(spec_mod.parse(a.model))
        info["config"] = builder.model_config()
        if a.plan:
            p = plan(builder, a.want_cuda)
            info["plan"] = p
            if a.buffers_only is None:
                a.buffers_only = not p.get("fits", True)
            info["buffers_only"] = bool(a.buffers_only)
        info["seconds"]["load"] = round(time.time() - t0, 3)
        ledger = None if a.no_record else os.path.join(out, "init.ledger")
        seqs = [int(x) for x in a.capture_seqs.split(",")] if a.capture_seqs else None
        rec = (bitprobe_torch.Recorder(ledger, reference=a.reference, diverging=a.diverging,
                                       argv=["init-build", a.way, a.model], capture_seqs=seqs)
               if ledger else None)
        stack = rec.stack if rec is not None else []
        tracker = track.InitTracker(stack)
        poison = Poison(stack) if a.poison else None
        t1 = time.time()
        rope_out, rope_facts = [], []
        with (rec or _NullCtx()), (poison or _NullCtx()), tracker:
            model = construct(a, builder, D, tracker, info)
            PHASE[0] = "done"
            info["seconds"]["construct"] = round(time.time() - t1, 3)
            if rec is not None:  # forward hooks name modules by tag too
                for m in model.modules():
                    rec.names[id(m)] = tracker.tag_of(m)
            xd = D if a.way in ("cpu-bf16", "zero-init") else _xdtype(model, torch.float32)
            dev = _device_of(model)
            info["device"] = str(dev)
            for path, m in rope_modules(model):
                facts = _rope_facts(path, m, _config_facts)
                fw = None
                if a.positions != 0:
                    P = a.positions or min(8192, int(facts["attrs"].get("max_seq_len_cached") or
                                                     facts["config"].get("max_position_embeddings")
                                                     or 4096))
                    try:
                        res, why = rope_forward(m, P, xd, dev)
                    except Exception as e:
                        res, why = None, "forward failed: %s" % str(e).splitlines()[0][:160]
                    fw = {"positions": P, "xdtype": stio.dtype_name(xd), "why": why}
                    if res is not None:
                        base = path or type(m).__name__
                        for k, t in zip(("cos", "sin"), res):
                            nm = "%s:forward.%s" % (base, k)
                            rope_out.append((nm, t, {"kind": "derived", "module": path,
                                                     "leaf": "forward." + k, "owner":
                                                     type(m).__name__, "persistent": False}))
                        fw["names"] = ["%s:forward.cos" % base, "%s:forward.sin" % base]
                facts["forward"] = fw
                rope_facts.append(facts)
        names = tracker.names(model)
        if ledger:
            track.rename_ledger(ledger, names)
        info["rope"] = rope_facts
        info["model"] = {"class": type(model).__name__,
                         "params": sum(p.numel() for p in model.parameters()),
                         "modules": sum(1 for _ in model.modules())}
        t2 = time.time()
        gather = _NullCtx()
        if a.params and info.get("deepspeed") not in (None, "emulated"):
            import deepspeed  # its partitioned parameters, gathered whole
            gather = deepspeed.zero.GatheredParameters(list(model.parameters()))
        with gather:
            items = capture(model, a.params, rope_out)
        tensors = {}
        for name, t, f in items:
            f = dict(f, name=name, dtype=stio.dtype_name(t.dtype), shape=list(t.shape),
                     device=f.get("device") or str(t.device))
            if t.device.type == "meta":
                f["hash"], f["why"] = None, "left on the meta device: no values"
            elif f["dtype"] not in bitprobe_torch.CAPTURABLE:
                f["hash"], f["why"] = None, "dtype %s is not captured" % f["dtype"]
            else:
                c = t.detach().to("cpu").contiguous()
                tensors[name] = c
                f["hash"] = stio.ledger_hash(c)
                if poison is not None:
                    al = poison.allocs.get(_storage_ptr(t))
                    if al:
                        al = dict(al, module=names.get(al["module"], al["module"]))
                        f["alloc"] = al
            info["tensors"].append(f)
        cmd = "python3 -m bitprobe_torch init-build --way %s --model %s" % (a.way, a.model)
        info["bundle"] = stio.write_bundle(out, a.way + ("-poisoned" if a.poison else ""),
                                           tensors, info["env"], cmd, info["notes"])
        info["ledger"] = "init.ledger" if ledger else None
        info["seconds"]["capture"] = round(time.time() - t2, 3)
        info["status"] = "ok"
    except spec_mod.SpecError as e:
        info["why"] = str(e)
        info["bad_model"] = True
    except Exception as e:
        first = (str(e).splitlines() or [""])[0][:300]
        info["why"] = "%s: %s" % (type(e).__name__, first)
        with open(os.path.join(out, "error.txt"), "w") as f:
            traceback.print_exc(file=f)
    finally:
        info["seconds"]["total"] = round(time.time() - t0, 3)
    return info


def parser():
    p = argparse.ArgumentParser(prog="python3 -m bitprobe_torch init-build",
                                description="Build MODEL one way (the init audit runs this "
                                            "once per way, in a fresh process).")
    p.add_argument("--way", required=True, choices=ways.WAYS)
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--dtype", default="bf16", choices=sorted(ways.DTYPES))
    p.add_argument("--params", action="store_true")
    p.add_argument("--buffers-only", dest="buffers_only", action="store_const", const=True,
                   default=None)
    p.add_argument("--plan", action="store_true")
    p.add_argument("--want-cuda", dest="want_cuda", action="store_true")
    p.add_argument("--poison", action="store_true")
    p.add_argument("--no-record", dest="no_record", action="store_true")
    p.add_argument("--reference", help="the reference's init ledger (capture what diverges)")
    p.add_argument("--diverging", type=int, default=16)
    p.add_argument("--capture-seqs", dest="capture_seqs",
                   help="capture the tensors of these ops (comma-separated seq numbers)")
    p.add_argument("--reinit")
    p.add_argument("--device")
    p.add_argument("--positions", type=int)
    p.add_argument("--deepspeed", action="store_true")
    return p


def main(argv):
    a = parser().parse_args(argv)
    info = run(a)
    stio.write_json(os.path.join(a.out, "way.json"), info)
    return 0
