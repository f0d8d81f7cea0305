#!/usr/bin/env python3
"""Rewrites one element of a tensor in a safetensors file (gzip'd or not),
with the tensor's CRC and the header's CRC made valid again: a golden
"re-blessed by hand".  Tests plant drift with it (tests/cli/reports.sh),
and a check that a re-blessed golden is caught uses it the same way.

usage: tamper.py FILE TENSOR INDEX HEXBITS   (e.g. x.fp32 9 40fe2f60)
       tamper.py FILE TENSOR INDEX +N        (the element's bits plus N:
                                              +1 is one ulp up for a
                                              positive finite value)
Standard library only."""
import gzip
import json
import struct
import sys
import zlib


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    path, name, index, change = argv[1], argv[2], int(argv[3]), argv[4]
    gz = path.endswith(".gz")
    raw = gzip.open(path).read() if gz else open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    data = bytearray(raw[8 + n:])
    if name not in head:
        sys.exit("%s: no tensor '%s' (%s)" % (path, name, ", ".join(
            k for k in head if k != "__metadata__")))
    t = head[name]
    size = {"F32": 4, "BF16": 2, "F16": 2, "F64": 8, "I32": 4, "I64": 8}[t["dtype"]]
    b0, e0 = t["data_offsets"]
    if not 0 <= index < (e0 - b0) // size:
        sys.exit("%s: %s has no element %d" % (path, name, index))
    at = slice(b0 + index * size, b0 + (index + 1) * size)
    old = int.from_bytes(data[at], "little")
    bits = old + int(change[1:]) if change.startswith("+") else int(change, 16)
    data[at] = bits.to_bytes(size, "little")
    meta = head.setdefault("__metadata__", {})
    meta["crc32." + name] = "0x%08x" % (zlib.crc32(bytes(data[b0:e0])) & 0xffffffff)
    # The header's own CRC is taken with its 8 hex digits read as '0'.
    meta["crc32.__header__"] = "0x00000000"
    h = json.dumps(head, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    crc = zlib.crc32(h) & 0xffffffff
    h = h.replace(b'"crc32.__header__":"0x00000000"',
                  b'"crc32.__header__":"0x%08x"' % crc)
    out = struct.pack("<Q", len(h)) + h + bytes(data)
    if gz:
        with gzip.open(path, "wb") as f:
            f.write(out)
    else:
        open(path, "wb").write(out)
    print("%s: %s[%d] 0x%0*x -> 0x%0*x" % (path, name, index, 2 * size, old, 2 * size, bits))


if __name__ == "__main__":
    main(sys.argv)
