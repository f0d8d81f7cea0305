"""Tensor files for the CLI tests, written byte by byte with the standard
library alone (no numpy, no safetensors package), so that a test states
the exact bits it compares.

    sys.path.insert(0, os.path.join(os.environ["top_srcdir"], "tests", "cli"))
    from tensorfile import st, npy
    st(path, [(name, "F32", [2], raw_bytes), ...])   # safetensors
    npy(path, "<f2", [0x8000, 0x3c00], "H")           # .npy, 1-D
"""
import json
import struct


def st(path, tensors, meta=None):
    """A safetensors file: tensors are (name, dtype as the format spells
    it, shape, raw little-endian bytes), stored in that order."""
    off, hdr, data = 0, {}, b""
    if meta:
        hdr["__metadata__"] = meta
    for name, dt, shape, raw in tensors:
        hdr[name] = {"dtype": dt, "shape": shape, "data_offsets": [off, off + len(raw)]}
        off += len(raw)
        data += raw
    h = json.dumps(hdr).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def npy(path, descr, words, fmt):
    """A 1-D .npy file (format 1.0) of the given words, packed with the
    struct format letter fmt ("H" for 16-bit patterns, "I", "Q")."""
    h = "{'descr': '%s', 'fortran_order': False, 'shape': (%d,), }" % (descr, len(words))
    h += " " * (-(len(h) + 11) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h.encode() +
                struct.pack("<%d%s" % (len(words), fmt), *words))
