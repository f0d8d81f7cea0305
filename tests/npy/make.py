#!/usr/bin/env python3
"""Writes tests/npy: good-*.npy (valid, laid out as np.save does) and
bad-*.npy (one per reader rule), with plain struct, no NumPy (run once;
the output is committed).  Prints the C tables tests/io/check_npy.c uses.

np.save layout (numpy/lib/format.py, _write_array_header): magic
"\\x93NUMPY", version bytes, header length (u16 for 1.0, u32 for 2.0/3.0),
then "{'descr': D, 'fortran_order': F, 'shape': S, }" (keys sorted, repr of
each value), padded with spaces and ended by a newline so that magic +
length + header is a multiple of 64 bytes, then the raw data.
"""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD, BAD = [], []


def header(descr, shape, fortran=False):
    return "{'descr': %r, 'fortran_order': %r, 'shape': %r, }" % (
        descr, fortran, tuple(shape))


def npy(text, data, version=1, align=True):
    raw = text.encode("latin-1")
    lw = 2 if version == 1 else 4
    if align:
        raw += b" " * ((64 - (6 + 2 + lw + len(raw) + 1) % 64) % 64) + b"\n"
    lf = "<H" if version == 1 else "<I"
    return (b"\x93NUMPY" + bytes([version, 0]) + struct.pack(lf, len(raw))
            + raw + data)


def put(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def good(name, dtype, shape, data, as_bf16=False, **kw):
    put(name, npy(kw.pop("text", None) or header(kw.pop("descr"), shape,
                                                  kw.pop("fortran", False)),
                  data, **kw))
    GOOD.append((name, dtype, shape, data, as_bf16))


def bad(name, data, msg, off, as_bf16=False):
    put(name, data)
    BAD.append((name, msg, off, as_bf16))


F3 = struct.pack("<3I", 0x3f800000, 0x80000001, 0x7fc00123)
good("good-f4.npy", "BP_F32", [3], F3, descr="<f4")
good("good-f2-2d.npy", "BP_F16", [2, 2],
     struct.pack("<4H", 0x3c00, 0x8001, 0x7c00, 0xfe00), descr="<f2")
good("good-f8-scalar.npy", "BP_F64", [],
     struct.pack("<Q", 0x400921fb54442d18), descr="<f8")
good("good-i4.npy", "BP_I32", [2, 1, 2], struct.pack("<4i", -1, 0, 2 ** 31 - 1,
                                                     -2 ** 31), descr="<i4")
good("good-i8.npy", "BP_I64", [2], struct.pack("<2q", -2 ** 63, 42),
     descr="<i8")
good("good-u2-bf16.npy", "BP_BF16", [4],
     struct.pack("<4H", 0x3f80, 0xbf80, 0x7fff, 0x0001), True, descr="<u2")
good("good-i2-bf16.npy", "BP_BF16", [1, 2], struct.pack("<2H", 0x4049, 0xffff),
     True, descr="<i2")
# Integers of every width and bool, as np.save writes them ('|' for one
# byte); 16-bit integers without --as bf16 are integers.
good("good-u4.npy", "BP_U32", [3], F3, descr="<u4")
good("good-u1.npy", "BP_U8", [3], bytes([0, 255, 128]), descr="|u1")
good("good-i1.npy", "BP_I8", [3], struct.pack("<3b", -128, 127, -1), descr="|i1")
good("good-b1.npy", "BP_BOOL", [2, 2], bytes([1, 0, 0, 1]), descr="|b1")
good("good-u2.npy", "BP_U16", [2], struct.pack("<2H", 0x3f80, 65535), descr="<u2")
good("good-i2.npy", "BP_I16", [2], struct.pack("<2h", -32768, 7), descr="<i2")
good("good-u8.npy", "BP_U64", [1], struct.pack("<Q", 2 ** 64 - 1), descr="<u8")
good("good-v2.npy", "BP_F32", [3], F3, descr="<f4", version=2)
good("good-v3.npy", "BP_F32", [3], F3, descr="<f4", version=3)
good("good-empty.npy", "BP_F32", [2, 0], b"", descr="<f4")
good("good-fortran-row.npy", "BP_F32", [1, 3], F3, descr="<f4", fortran=True)
# Python 2 era: double quotes, long suffix, no trailing comma or padding.
good("good-py2.npy", "BP_F32", [3], F3,
     text='{"descr": "<f4", "fortran_order": False, "shape": (3L,)}',
     align=False)

H = header("<f4", [3])
bad("bad-magic.npy", b"\x93NUMPZ" + npy(H, F3)[6:], "not a .npy file", 0)
bad("bad-short.npy", b"\x93NUM", "not a .npy file", 0)
bad("bad-version.npy", npy(H, F3)[:6] + b"\x04\x00" + npy(H, F3)[8:],
    "unsupported .npy version 4.0", 6)
bad("bad-minor.npy", npy(H, F3)[:6] + b"\x01\x01" + npy(H, F3)[8:],
    "unsupported .npy version 1.1", 6)
bad("bad-header-huge.npy", b"\x93NUMPY\x02\x00" + struct.pack("<I", 1 << 21)
    + b"{}", "header length 2097152 exceeds 1048576 bytes", 8)
b = npy(H, F3)
bad("bad-header-past-end.npy", b[:40], "file ends inside the 118-byte header"
    if len(b) - 10 - 12 == 118 else "file ends inside", 40)
bad("bad-not-dict.npy", npy("('descr', '<f4')", F3), "header is not a Python "
    "dict", 10)
t = "{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1, }"
bad("bad-unknown-key.npy", npy(t, F3), "unknown key 'x' in header",
    10 + t.index("'x'"))
t = "{'descr': '<f4', 'fortran_order': False, }"
bad("bad-missing-shape.npy", npy(t, F3), "header has no 'shape'", 10)
t = "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
bad("bad-duplicate-key.npy", npy(t, F3), "duplicate key 'descr' in header",
    10 + t.index("'descr'", 2))
t = header(">f4", [3])
bad("bad-big-endian.npy", npy(t, F3), "big-endian dtype '>f4' is not "
    "supported", 10 + t.index("'>f4'"))
t = header("<c8", [3])
bad("bad-c8.npy", npy(t, F3 + F3), "unsupported dtype '<c8'", 10 + t.index("'<c"))
t = header("|V1", [12])
bad("bad-v1.npy", npy(t, F3), "unsupported dtype '|V1'", 10 + t.index("'|"))
t = "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,), }"
bad("bad-structured.npy", npy(t, F3), "structured dtypes are not supported",
    10 + t.index("["))
t = header("<f4", [3, 1, 2], True).replace("(3, 1, 2)", "(2, 3)")
bad("bad-fortran.npy", npy(t, F3 + F3), "Fortran-order arrays are not "
    "supported", 10 + t.index("True"))
t = header("<f4", [3]).replace("False", "0")
bad("bad-fortran-value.npy", npy(t, F3), "fortran_order is not True or False",
    10 + t.index("0,"))
t = header("<f4", [3]).replace("(3,)", "(-3,)")
bad("bad-negative-dim.npy", npy(t, F3), "shape has a dimension that is not a "
    "non-negative integer", 10 + t.index("-3"))
t = header("<f4", [3]).replace("(3,)", "[3]")
bad("bad-shape-list.npy", npy(t, F3), "shape is not a tuple",
    10 + t.index("[3]"))
t = header("<f4", [1] * 9)
bad("bad-too-many-dims.npy", npy(t, b"\0" * 4), "shape has more than 8 "
    "dimensions", 10 + t.index("1)"))
b = npy(H, F3)
bad("bad-truncated.npy", b[:-1], "file ends inside the data: 11 bytes present, "
    "12 needed", len(b) - 1)
bad("bad-trailing.npy", b + b"\0\0", "2 trailing bytes after the data",
    len(b))
t = H + " x"
bad("bad-text-after.npy", npy(t, F3), "unexpected text after the header dict",
    10 + t.index("x"))
t = "{'descr': '<f4, 'fortran_order': False, 'shape': (3,), }"
bad("bad-quote.npy", npy(t, F3), "unsupported dtype '<f4, '",
    10 + t.index("'<f4"))
t = "{'descr': '<f4, }"
bad("bad-unterminated.npy", npy(t, F3), "header: unterminated string",
    10 + t.index("'<f4"))
t = "{'descr': '<f4' 'fortran_order': False, 'shape': (3,), }"
bad("bad-no-comma.npy", npy(t, F3), "header: expected ',' or '}'",
    10 + t.index("'fortran"))

w = sys.stdout.write
w("/* generated by tests/npy/make.py: good files */\n")
for name, dt, shape, data, as_bf16 in GOOD:
    w('    {"%s", %s, %d, {%s}, "%s", %d, %s},\n' % (
        name, dt, len(shape), ", ".join(map(str, shape)) or "0",
        "".join("\\x%02x" % c for c in data), len(data),
        "true" if as_bf16 else "false"))
w("/* generated by tests/npy/make.py: bad files */\n")
for name, msg, off, as_bf16 in BAD:
    w('    {"%s", "%s", %d, %s},\n' % (name, msg, off,
                                      "true" if as_bf16 else "false"))
