#!/usr/bin/env python3
"""Writes the hostile inputs of tests/limits (run once; the output is
committed; tests/cli/limits.sh generates the big ones at run time).
Plain Python only.

claims-60gb.safetensors      a 60 GB tensor (under the 64 GiB cap) in a
                             96-byte file: refused before allocating
claims-7gib.safetensors.gz   7 GiB claimed (under the 8 GiB cap on an
                             inflated stream) by a stream holding 8 data
                             bytes: buffers grow with the bytes received
claims-64gb.npy              a (16000000000,) float32 array (64 GB) in a
                             tiny .npy file
alias-bomb.yaml              a billion laughs nine levels deep
"""
import gzip
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def st(header, data):
    raw = header.encode()
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


n = 15000000000  # F32 elements: 60 GB
put("claims-60gb.safetensors",
    st('{"t":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}' % (n, 4 * n),
       b"\0" * 8))
n = 7 * 2 ** 30 // 4
put("claims-7gib.safetensors.gz",
    gzip.compress(st('{"t":{"dtype":"F32","shape":[%d],"data_offsets":[0,%d]}}'
                     % (n, 4 * n), b"\0" * 8), mtime=0))
h = "{'descr': '<f4', 'fortran_order': False, 'shape': (16000000000,), }"
h += " " * (-(10 + len(h) + 1) % 64) + "\n"
put("claims-64gb.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) +
    h.encode() + b"\0" * 16)
lines = ["name: alias-bomb", 'description: "a billion laughs"',
         'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
for prev, cur in zip("abcdefgh", "bcdefghi"):
    lines.append("%s: &%s [%s]" % (cur, cur, ", ".join(["*" + prev] * 9)))
put("alias-bomb.yaml", ("\n".join(lines) + "\n").encode())
