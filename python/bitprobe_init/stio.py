"""Tensors in and out: safetensors files (plain or gzip'd, as bitprobe
writes and reads them), bundles (a directory with manifest.json that
`bitprobe diff` reads), and the ledger hash of a tensor."""
import gzip
import json
import os
import struct

import torch

import bitprobe_torch

_BY_NAME = {v: k for k, v in bitprobe_torch._DTYPES.items()}


def read(path):
    """name -> CPU tensor, and the __metadata__ (or {})."""
    with open(path, "rb") as f:
        raw = f.read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__", {}) or {}
    base = 8 + n
    out = {}
    for name, h in header.items():
        dt = _BY_NAME[h["dtype"]]
        b, e = h["data_offsets"]
        buf = bytearray(raw[base + b:base + e])
        t = torch.frombuffer(buf, dtype=dt) if e > b else torch.empty(0, dtype=dt)
        out[name] = t.reshape(h["shape"])
    return out, meta


def write(path, tensors, metadata=None):
    """Atomically: tensors (name -> tensor, any device) as plain safetensors."""
    cpu = {k: v.detach().to("cpu").contiguous() for k, v in tensors.items()}
    bitprobe_torch.write_safetensors(path + ".tmp", cpu, metadata)
    os.replace(path + ".tmp", path)


def write_json(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(path + ".tmp", path)


def write_bundle(dirpath, key, tensors, env, command, notes):
    """A bundle `bitprobe diff` reads: DIR/manifest.json and
    DIR/init/KEY.safetensors (probe "init", backend KEY)."""
    os.makedirs(os.path.join(dirpath, "init"), exist_ok=True)
    rel = "init/%s.safetensors" % key
    write(os.path.join(dirpath, rel), tensors, {"init_audit_way": key})
    manifest = {"tool": "bitprobe", "version": bitprobe_torch.__version__,
                "schema_version": 2, "command": command,
                "env": env, "backends": [{"key": key, "name": key, "fingerprint": env}],
                "files": [rel], "results": [], "notes": list(notes), "values": []}
    write_json(os.path.join(dirpath, "manifest.json"), manifest)
    return rel


def ledger_hash(t):
    """The ledger hash (fmix64-sum/1) of a CPU tensor's bytes, as the
    recorder writes it: 16 hex digits."""
    h = bitprobe_torch.Hasher().submit(t.detach().to("cpu").contiguous())
    return "%016x" % h.value


def dtype_name(dt):
    return bitprobe_torch.dtype_name(dt)


def torch_dtype(name):
    return _BY_NAME[name]
