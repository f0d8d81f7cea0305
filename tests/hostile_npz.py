#!/usr/bin/env python3
"""Writes the .npz files that tests/cli/npz.sh diffs, with NumPy and
zipfile (as users' files are made), into DIR:

  zeros-<M>.npz, zeros-<M>-s.npz   M MiB of float32 zeros, deflated
      (np.savez_compressed) and stored (np.savez, up to 64 MiB): a long
      run of zeros ends its compressed stream while inflate still holds
      output
  zeros-<M>-1.npz                  the same with one element 1.0
  crc-stored.npz                   np.savez with one data byte flipped
                                   (the zip's CRC-32 left as it was)
  crc-deflate.npz                  np.savez_compressed with the CRC-32 of a
                                   member changed in both headers (its
                                   stream intact)
  crc-head.npz                     np.savez with a byte of a member's .npy
                                   header changed ('<f4' to '<i4'), CRC kept
  m65535.npz, m65535-1.npz         exactly 65,535 members: Python writes the
                                   count 0xFFFF without zip64; -1 differs in
                                   its last member
  m70000.npz                       70,000 members: the zip64 end record
  zip64-extra.npz                  one member whose central entry carries
                                   its sizes and offset in a zip64 extra
                                   field (all-ones 32-bit fields)
  ok.npz                           the arrays of crc-*.npz, untouched

usage: hostile_npz.py DIR [MIB...]   (sizes default to 8 16 36)
"""
import io
import struct
import sys
import zipfile

import numpy as np

MIB = 1 << 20


def npy_bytes(a):
    b = io.BytesIO()
    np.lib.format.write_array(b, a, allow_pickle=False)
    return b.getvalue()


def members(path, n, last=None):
    """n members of a small array each, as np.savez writes them (stored,
    force_zip64 on each member); the last one's data is `last` if given."""
    blob = npy_bytes(np.arange(4, dtype=np.float32))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for i in range(n):
            data = blob
            if last is not None and i == n - 1:
                data = npy_bytes(last)
            with z.open("a%d.npy" % i, "w", force_zip64=True) as f:
                f.write(data)


def central(buf, name):
    """Offset of the central directory entry of member name."""
    at = buf.rfind(b"PK\x05\x06")
    cd_off = struct.unpack_from("<I", buf, at + 16)[0]
    i = cd_off
    while True:
        assert buf[i:i + 4] == b"PK\x01\x02"
        nlen, xlen, clen = struct.unpack_from("<HHH", buf, i + 28)
        if buf[i + 46:i + 46 + nlen] == name:
            return i
        i += 46 + nlen + xlen + clen


def flip_crc(path, name):
    """Changes member name's CRC-32 in its central and local headers."""
    buf = bytearray(open(path, "rb").read())
    c = central(buf, name)
    crc = struct.unpack_from("<I", buf, c + 16)[0] ^ 0x00010000
    struct.pack_into("<I", buf, c + 16, crc)
    local = struct.unpack_from("<I", buf, c + 42)[0]
    struct.pack_into("<I", buf, local + 14, crc)
    open(path, "wb").write(bytes(buf))


def data_of(buf, name):
    c = central(buf, name)
    local = struct.unpack_from("<I", buf, c + 42)[0]
    nlen, xlen = struct.unpack_from("<HH", buf, local + 26)
    return local + 30 + nlen + xlen


def zip64_extra(path):
    """One stored member whose central entry says its sizes and local
    offset only in a zip64 extra field, as writers of large members do."""
    data = npy_bytes(np.arange(6, dtype=np.float64))
    name = b"w.npy"
    crc = zipfile.crc32(data)
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0, 0, 0, 0, crc,
                        len(data), len(data), len(name), 0) + name
    extra = struct.pack("<HHQQQ", 1, 24, len(data), len(data), 0)
    cen = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0, 0, 0, 0, crc,
                      0xFFFFFFFF, 0xFFFFFFFF, len(name), len(extra), 0, 0, 0, 0,
                      0xFFFFFFFF) + name + extra
    cd_off = len(local) + len(data)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(cen), cd_off, 0)
    open(path, "wb").write(local + data + cen + end)


def main():
    d = sys.argv[1]
    sizes = [int(m) for m in sys.argv[2:]] or [8, 16, 36]
    for m in sizes:
        z = np.zeros(m * MIB // 4, dtype=np.float32)
        np.savez_compressed("%s/zeros-%d.npz" % (d, m), x=z)
        if m <= 64:
            np.savez("%s/zeros-%d-s.npz" % (d, m), x=z)
        z[len(z) // 2] = 1.0
        np.savez_compressed("%s/zeros-%d-1.npz" % (d, m), x=z)
    if sys.argv[2:]:
        return
    x = np.arange(1000, dtype=np.float32) / 7
    y = np.arange(12, dtype=np.int16).reshape(3, 4)
    np.savez(d + "/ok.npz", x=x, y=y)
    np.savez(d + "/crc-stored.npz", x=x, y=y)
    buf = bytearray(open(d + "/crc-stored.npz", "rb").read())
    buf[data_of(buf, b"x.npy") + 128 + 40] ^= 0x01  # past the 128-byte header
    open(d + "/crc-stored.npz", "wb").write(bytes(buf))
    np.savez(d + "/crc-head.npz", x=x, y=y)
    buf = bytearray(open(d + "/crc-head.npz", "rb").read())
    at = buf.index(b"'<f4'", data_of(buf, b"x.npy"))
    buf[at + 2] = ord("i")
    open(d + "/crc-head.npz", "wb").write(bytes(buf))
    np.savez_compressed(d + "/crc-deflate.npz", x=x, y=y)
    flip_crc(d + "/crc-deflate.npz", b"y.npy")
    members(d + "/m65535.npz", 65535)
    members(d + "/m65535-1.npz", 65535, last=np.array([0, 1, 2, 4], dtype=np.float32))
    members(d + "/m70000.npz", 70000)
    zip64_extra(d + "/zip64-extra.npz")


if __name__ == "__main__":
    main()
