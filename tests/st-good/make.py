#!/usr/bin/env python3
"""Writes the valid safetensors files under tests/st-good (run once; the
output is committed).  Plain Python only: struct, json, zlib, gzip.

attn0.safetensors, empty.safetensors, meta.safetensors
    byte for byte the vectors of the reference implementation's own tests
    (huggingface/safetensors, safetensors/src/tensor.rs: test_serialization,
    test_empty).
python.safetensors (+ .gz)
    written by the reference writer's rules: tensors sorted by dtype
    alignment (descending) then name, compact JSON with "__metadata__"
    first and fields in the order dtype, shape, data_offsets, header padded
    with spaces to a multiple of 8; gzip'd by Python's gzip module.
bitprobe.safetensors
    what bitprobe's writer must produce for the same tensors: insertion
    order, sorted JSON keys, a "crc32.<name>" entry per tensor and the
    header's own "crc32.__header__".
storage.safetensors
    one tensor of each of the other safetensors dtypes (BOOL, U8, I8,
    F8_E5M2, F8_E4M3, I16, U16, U32, U64), by the reference writer's rules.
"""
import gzip
import json
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def pack_header(text):
    raw = text.encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw


# --- the reference implementation's test vectors -----------------------
attn = struct.pack("<6f", 0, 1, 2, 3, 4, 5)
put("attn0.safetensors",
    struct.pack("<Q", 64)
    + b'{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}'
    + attn)
put("empty.safetensors", struct.pack("<Q", 8) + b"{}" + b" " * 6)
put("meta.safetensors",
    struct.pack("<Q", 40) + b'{"__metadata__":{"framework":"pt"}}' + b" " * 5)

# --- one tensor of each dtype, as raw little-endian bits ---------------
# (name, dtype, shape, raw bytes); the values are hand-picked bit patterns:
# signed zeros, subnormals, infinities, NaNs with payloads, extremes.
TENSORS = [
    ("w", "F32", [2, 3], struct.pack("<6I", 0x3f800000, 0x80000000,
                                     0x00000001, 0x7f800000, 0x7fc00001,
                                     0x3f666666)),
    ("b", "BF16", [4], struct.pack("<4H", 0x3f80, 0x8000, 0x7fff, 0x0001)),
    ("h", "F16", [2, 2], struct.pack("<4H", 0x3c00, 0xfc00, 0x03ff, 0x7e01)),
    ("d", "F64", [2], struct.pack("<2Q", 0x3ff0000000000001,
                                  0x8000000000000000)),
    ("i", "I64", [], struct.pack("<q", -(2 ** 63))),
    ("j", "I32", [3], struct.pack("<3i", -1, 2 ** 31 - 1, 7)),
    ("z", "F32", [0, 5], b""),
]

# safetensors' Dtype order (increasing alignment): F16 < BF16 < I32 < F32
# < F64 < I64; the writer sorts by it descending, then by name.
ORDER = {"F16": 0, "BF16": 1, "I32": 2, "F32": 3, "F64": 4, "I64": 5}
# The whole Dtype enum, for the storage dtypes: BOOL < U8 < I8 < F8_E5M2 <
# F8_E4M3 < I16 < U16 < F16 < BF16 < I32 < U32 < F32 < F64 < I64 < U64.
FULL_ORDER = {d: k for k, d in enumerate(
    "BOOL U8 I8 F8_E5M2 F8_E4M3 I16 U16 F16 BF16 I32 U32 F32 F64 I64 U64"
    .split())}


def reference_writer(tensors, metadata, order=ORDER):
    ts = sorted(tensors, key=lambda t: (-order[t[1]], t[0]))
    parts = []
    if metadata is not None:
        parts.append('"__metadata__":' + json.dumps(metadata,
                                                   separators=(",", ":")))
    off, data = 0, b""
    for name, dt, shape, raw in ts:
        parts.append(json.dumps(name) + ":" + json.dumps(
            {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]},
            separators=(",", ":")))
        off += len(raw)
        data += raw
    return pack_header("{" + ",".join(parts) + "}") + data


py = reference_writer(TENSORS, {"format": "pt"})
put("python.safetensors", py)
put("python.safetensors.gz", gzip.compress(py, compresslevel=9, mtime=0))


def bitprobe_writer(tensors, metadata):
    meta = dict(metadata)
    top, off, data = {}, 0, b""
    for name, dt, shape, raw in tensors:
        meta["crc32." + name] = "0x%08x" % (zlib.crc32(raw) & 0xffffffff)
        top[name] = {"dtype": dt, "shape": shape,
                     "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        data += raw
    meta["crc32.__header__"] = "0x00000000"
    top["__metadata__"] = meta
    text = json.dumps(top, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)
    # The header's CRC: over the padded header with its 8 digits as '0'.
    head = pack_header(text)
    key = b'"crc32.__header__":"0x'
    i = head.index(key + b"00000000") + len(key)
    c = b"%08x" % (zlib.crc32(head[8:]) & 0xffffffff)
    return head[:i] + c + head[i + 8:] + data


put("bitprobe.safetensors",
    bitprobe_writer(TENSORS, {"probe": "seed", "tool": "bitprobe test"}))

# --- the storage dtypes: extremes, fp8 max/NaN/inf/subnormal -------------
STORAGE = [
    ("bo", "BOOL", [4], bytes([0, 1, 1, 0])),
    ("u1", "U8", [3], bytes([0, 255, 128])),
    ("i1", "I8", [3], struct.pack("<3b", -128, 127, -1)),
    ("i2", "I16", [2], struct.pack("<2h", -32768, 32767)),
    ("u2", "U16", [2], struct.pack("<2H", 65535, 1)),
    ("u4", "U32", [2], struct.pack("<2I", 0xffffffff, 0)),
    ("u8", "U64", [1], struct.pack("<Q", 2 ** 64 - 1)),
    ("e4", "F8_E4M3", [4], bytes([0x7e, 0xff, 0x01, 0x80])),
    ("e5", "F8_E5M2", [2, 2], bytes([0x7c, 0x7d, 0x7b, 0x01])),
]
put("storage.safetensors",
    reference_writer(STORAGE, {"format": "pt"}, FULL_ORDER))
