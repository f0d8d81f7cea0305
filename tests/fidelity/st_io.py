"""safetensors containers read and written with torch alone (the
`safetensors` package is not needed): 8-byte little-endian header length,
a JSON header, then the tensors' raw little-endian bytes, back to back.
Files ending in .gz are gzip'd, as bitprobe's goldens and bundles are."""
import gzip
import json
import struct

import torch

_NAMES = {torch.float64: "F64", torch.float32: "F32", torch.bfloat16: "BF16",
          torch.float16: "F16", torch.int64: "I64", torch.int32: "I32",
          torch.bool: "BOOL", torch.uint8: "U8", torch.int16: "I16"}
_DTYPES = {v: k for k, v in _NAMES.items()}


def _raw(path):
    with open(path, "rb") as f:
        data = f.read()
    return gzip.decompress(data) if path.endswith(".gz") else data


def loads(data):
    """Tensors of a container held in memory: {name: tensor}, and the
    header's __metadata__ (or {})."""
    if len(data) < 8:
        raise ValueError("container shorter than its 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > len(data) - 8:
        raise ValueError(f"header length {n} exceeds the file")
    head = json.loads(data[8:8 + n])
    body = memoryview(data)[8 + n:]
    out = {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        dt = _DTYPES[t["dtype"]]
        raw = bytearray(body[b:e])
        x = torch.frombuffer(raw, dtype=dt) if raw else torch.empty(0, dtype=dt)
        out[name] = x.reshape(t["shape"])
    return out, head.get("__metadata__", {})


def load(path):
    return loads(_raw(path))[0]


def load_meta(path):
    return loads(_raw(path))[1]


def dumps(tensors, metadata=None):
    head = {}
    if metadata:
        head["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    blobs, off = [], 0
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        b = t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b""
        head[name] = {"dtype": _NAMES[t.dtype], "shape": list(t.shape),
                      "data_offsets": [off, off + len(b)]}
        blobs.append(b)
        off += len(b)
    h = json.dumps(head, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


def save(path, tensors, metadata=None):
    data = dumps(tensors, metadata)
    if path.endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    with open(path, "wb") as f:
        f.write(data)
