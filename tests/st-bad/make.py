#!/usr/bin/env python3
"""Writes tests/st-bad: one safetensors file per reader rule violation (run
once; the output is committed).  Plain Python only.

Each file is built from header text and raw data by hand; the byte offset
where the reader must report the problem is derived here from that
construction (the position of the offending key or value in the header,
plus 8; or the position in the data), and printed as the C table that
tests/io/check_st.c uses: file, message substring, offset.
"""
import gzip
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = []


def st(text, data=b"", pad=True):
    raw = text.encode("utf-8") if isinstance(text, str) else text
    if pad:
        raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + data


def at(text, needle, nth=0):
    """8 + position of the nth occurrence of needle in the header text."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return 8 + i


HKEY = '"crc32.__header__":"0x'


def with_hcrc(text):
    """The header text, padded, with its CRC filled in (st.h): zlib CRC-32
    of the padded header with the 8 digits as '0'."""
    i = text.index(HKEY + "00000000") + len(HKEY)
    raw = text.encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    c = "%08x" % (zlib.crc32(raw) & 0xffffffff)
    return raw[:i] + c.encode() + raw[i + 8:]


def hval(text):
    """8 + position of the header CRC's value (its opening quote)."""
    return at(text, HKEY) + len(HKEY) - 3


def case(name, data, msg, off):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)
    CASES.append((name, msg, off))


def crc(b):
    return "0x%08x" % (zlib.crc32(b) & 0xffffffff)


F8 = struct.pack("<2f", 1.5, -2.0)  # 8 bytes of F32 data
T = '"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}'

# --- length field and header framing -----------------------------------
case("short.safetensors", b"\x10\x00\x00\x00\x00", "input ends before the "
     "8-byte header length", 5)
case("header-too-large.safetensors", struct.pack("<Q", 100000001) + b"{}",
     "header length 100000001 exceeds 100 MB", 0)
case("header-9e18.safetensors", struct.pack("<Q", 9 * 10 ** 18) + b"{}",
     "header length 9000000000000000000 exceeds 100 MB", 0)
case("header-past-end.safetensors", struct.pack("<Q", 64) + b"{}" + b" " * 6,
     "header length 64 runs past the end of the 16-byte file", 0)
case("leading-space.safetensors", st(" {" + T + "}", F8),
     "header does not start with '{'", 8)
case("empty-header.safetensors", struct.pack("<Q", 0),
     "header does not start with '{'", 8)
h = '{"t\xff":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
raw = h.encode("latin-1")
case("not-utf8.safetensors", st(raw, F8), "header is not valid UTF-8",
     8 + raw.index(b"\xff"))
h = '{"t\xed\xa0\x80":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
raw = h.encode("latin-1")  # an encoded surrogate, U+D800
case("surrogate.safetensors", st(raw, F8), "header is not valid UTF-8",
     8 + raw.index(b"\xed"))
h = '{' + T + ',}'
case("bad-json.safetensors", st(h, F8), "header is not valid JSON",
     at(h, ",}") + 2)
h = '{' + T + '} x'
case("json-trailing.safetensors", st(h, F8), "header is not valid JSON",
     at(h, "x") + 1)

# --- tensor entries ------------------------------------------------------
h = '{' + T + ',' + T.replace("[0,8]", "[8,16]") + '}'
case("duplicate-name.safetensors", st(h, F8 + F8), "duplicate key",
     at(h, '"t"', 1) + 3)
h = '{"t":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
case("duplicate-field.safetensors", st(h, F8), "duplicate key",
     at(h, '"dtype"', 1) + 7)
h = '{"t":[1,2]}'
case("tensor-not-object.safetensors", st(h), "tensor 't' is not an object",
     at(h, "["))
h = '{"t":{"dtype":"F32","shape":[2]}}'
case("missing-offsets.safetensors", st(h, F8),
     "tensor 't' has no 'data_offsets'", at(h, "{", 1))
h = '{"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8],"offsets":[0,8]}}'
case("unknown-field.safetensors", st(h, F8),
     "unknown field 'offsets' in tensor 't'", at(h, '"offsets"'))
h = T.replace('"F32"', '"F4"')
h = '{' + h + '}'
case("unknown-dtype.safetensors", st(h, F8), "unknown dtype 'F4' for tensor "
     "'t'", at(h, '"F4"'))
h = '{' + T.replace('"F32"', '32') + '}'
case("dtype-not-string.safetensors", st(h, F8), "dtype of tensor 't' is not "
     "a string", at(h, "32"))
h = '{' + T.replace("[2]", "[-2]") + '}'
case("negative-shape.safetensors", st(h, F8), "shape of tensor 't' has a "
     "dimension that is not a non-negative integer", at(h, "[-2]"))
h = '{' + T.replace("[2]", "[2.0]") + '}'
case("float-shape.safetensors", st(h, F8), "shape of tensor 't' has a "
     "dimension that is not a non-negative integer", at(h, "[2.0]"))
h = '{' + T.replace("[2]", "2") + '}'
case("shape-not-array.safetensors", st(h, F8), "shape of tensor 't' is not "
     "an array", at(h, '2,"data'))
h = '{' + T.replace("[2]", "[2,1,1,1,1,1,1,1,1]") + '}'
case("too-many-dims.safetensors", st(h, F8), "shape of tensor 't' has 9 "
     "dimensions (at most 8)", at(h, "[2,1"))
h = '{' + T.replace("[0,8]", "[0]") + '}'
case("offsets-not-pair.safetensors", st(h, F8), "data_offsets of tensor 't' "
     "is not a pair of non-negative integers", at(h, "[0]"))
h = '{' + T.replace("[0,8]", "[8,0]") + '}'
case("offsets-reversed.safetensors", st(h), "data_offsets of tensor 't' end "
     "(0) before they begin (8)", at(h, "[8,0]"))
h = '{' + T.replace("[0,8]", "[0,12]") + '}'
case("size-mismatch.safetensors", st(h, F8 + b"\0" * 4),
     "tensor 't' has data_offsets [0, 12] (12 bytes) but shape [2] of F32 "
     "needs 8 bytes", at(h, "[0,12]"))
# 2^62 * 2^2 elements of 4 bytes: the product overflows 64 bits.
h = '{' + T.replace("[2]", "[4611686018427387904,4]") + '}'
case("size-overflow.safetensors", st(h, F8), "size of tensor 't' (shape "
     "[4611686018427387904, 4], F32) overflows 64 bits", at(h, "[46"))
# 2^35 F32 elements = 2^37 bytes, above the 2^36-byte per-tensor limit.
h = '{' + T.replace("[2]", "[34359738368]").replace(
    "[0,8]", "[0,137438953472]") + '}'
case("tensor-too-large.safetensors", st(h), "tensor 't' (shape "
     "[34359738368], F32) has 137438953472 bytes, more than the limit of "
     "68719476736", at(h, "[34"))

# --- layout of the data section -----------------------------------------
U = '"u":{"dtype":"F32","shape":[2],"data_offsets":[%d,%d]}'
h = '{' + T + ',' + U % (12, 20) + '}'
case("hole.safetensors", st(h, F8 + b"\0" * 12), "hole in the data: tensor "
     "'u' begins at data byte 12 but the data before it ends at 8",
     at(h, "[12,20]"))
h = '{' + T.replace("[0,8]", "[4,12]") + '}'
case("hole-at-start.safetensors", st(h, b"\0" * 12), "hole in the data: "
     "tensor 't' begins at data byte 4 but the data before it ends at 0",
     at(h, "[4,12]"))
h = '{' + T + ',' + U % (4, 12) + '}'
case("overlap.safetensors", st(h, b"\0" * 12), "overlap in the data: tensor "
     "'u' begins at data byte 4 but the data before it ends at 8",
     at(h, "[4,12]"))
h = '{' + T + ',' + U % (8, 16) + '}'
b = st(h, F8 + F8)
case("truncated-data.safetensors", b[:-3], "input ends inside the data: the "
     "header claims 16 data bytes, up to byte %d" % len(b), len(b) - 3)
case("trailing-bytes.safetensors", b + b"\0" * 5, "5 trailing bytes after "
     "the 16 data bytes the header claims", len(b))

# --- metadata and CRCs ---------------------------------------------------
h = '{"__metadata__":["a"],' + T + '}'
case("meta-not-object.safetensors", st(h, F8), "__metadata__ is not an "
     "object", at(h, "["))
h = '{"__metadata__":{"k":1},' + T + '}'
case("meta-not-string.safetensors", st(h, F8), "__metadata__ value for 'k' "
     "is not a string", at(h, "1}"))
D2 = struct.pack("<2f", 3.25, 0.1)
good = crc(D2)
bad = "0x%08x" % (int(good, 16) ^ 0x00000100)
h = ('{"__metadata__":{"crc32.__header__":"0x00000000","crc32.t":"%s",'
     '"crc32.u":"%s"},' % (crc(F8), bad) + T + ',' + U % (8, 16) + '}')
s = st(with_hcrc(h), F8 + D2)
case("crc-mismatch.safetensors", s, "CRC mismatch for tensor 'u' (stored "
     "%s, computed %s)" % (bad, good), len(s) - 8)
h = '{"__metadata__":{"crc32.t":"%s"},' % crc(F8).upper().replace("0X", "0x") + T + '}'
case("crc-malformed.safetensors", st(h, F8), "malformed CRC '%s' for tensor "
     "'t'" % crc(F8).upper().replace("0X", "0x"), at(h, '"0x'))
h = '{"__metadata__":{"crc32.t":"%s","crc32.v":"%s"},' % (crc(F8), crc(F8)) + T + '}'
case("crc-orphan.safetensors", st(h, F8), "CRC for tensor 'v', which is not "
     "in the file", at(h, '"crc32.v"'))
h = '{"__metadata__":{"crc32.t":"%s"},' % crc(F8) + T + ',' + U % (8, 16) + '}'
case("crc-missing.safetensors", st(h, F8 + D2), "tensor 'u' has no CRC but "
     "other tensors do", at(h, '"u"'))

# The header's own CRC.
h = ('{"__metadata__":{"crc32.__header__":"0x00000000","crc32.t":"%s",'
     '"probe":"seed-div"},' % crc(F8) + T + '}')
good_h = with_hcrc(h)
stored = good_h[hval(h) - 8 + 3:hval(h) - 8 + 11].decode()
altered = good_h.replace(b"seed-div", b"seed-dix")
computed = "%08x" % (zlib.crc32(altered[:hval(h) - 8 + 3] + b"0" * 8 +
                                altered[hval(h) - 8 + 11:]) & 0xffffffff)
case("header-crc-mismatch.safetensors", st(altered, F8), "header CRC mismatch "
     "(stored 0x%s, computed 0x%s): the header was altered" % (stored, computed),
     hval(h))
h = '{"__metadata__":{"crc32.t":"%s","probe":"seed-div"},' % crc(F8) + T + '}'
case("header-crc-missing.safetensors", st(h, F8), "tensors carry CRCs but the "
     "header has none ('crc32.__header__')", at(h, '{"crc32'))
h = '{"__metadata__":{"crc32.__header__":"0x00000000"},' + T + '}'
case("header-crc-only.safetensors", st(with_hcrc(h), F8), "tensor 't' has no "
     "CRC but the header does", at(h, '"t"'))
h = ('{"__metadata__":{"crc32.__header__":"0x0000000G","crc32.t":"%s"},'
     % crc(F8) + T + '}')
case("header-crc-malformed.safetensors", st(h, F8), "malformed header CRC "
     "'0x0000000G' (not 0x and 8 lower-case hex digits, written without "
     "escapes)", hval(h))
# The right value, but spelt with an escape: its digits are not in the text.
h = ('{"__metadata__":{"crc32.__header__":"0x00000000","crc32.t":"%s"},'
     % crc(F8) + T + '}')
esc = with_hcrc(h).replace(b'"0x', b'"\\u0030x', 1)
esc = esc.rstrip(b" ")
esc += b" " * (-len(esc) % 8)
digits = with_hcrc(h)[hval(h) - 8 + 3:hval(h) - 8 + 11].decode()
case("header-crc-escaped.safetensors", st(esc, F8), "malformed header CRC "
     "'0x%s' (not 0x and 8 lower-case hex digits, written without escapes)"
     % digits, hval(h))

# --- gzip ----------------------------------------------------------------
good = st('{' + T + ',' + U % (8, 16) + '}', F8 + D2)
z = gzip.compress(good, mtime=0)
case("gz-truncated.safetensors.gz", z[:len(z) // 2],
     "gzip stream truncated at compressed byte %d" % (len(z) // 2), None)
case("gz-trailing-garbage.safetensors.gz", z + b"junk",
     "trailing garbage after the gzip stream at compressed byte %d" % len(z),
     None)
zc = bytearray(z)
zc[-5] ^= 0x01  # last byte of the CRC-32 trailer
# zlib reports the check after reading the 4-byte CRC field
case("gz-bad-crc.safetensors.gz", bytes(zc), "corrupt gzip stream (incorrect "
     "data check) at compressed byte %d" % (len(z) - 4), None)
h = '{' + T + ',' + U % (12, 20) + '}'
case("gz-hole.safetensors.gz", gzip.compress(st(h, F8 + b"\0" * 12), mtime=0),
     "hole in the data: tensor 'u' begins at data byte 12 but the data "
     "before it ends at 8", at(h, "[12,20]"))
# A bomb: a small header claiming 8 data bytes, then 10 MB of zeros.
bomb = st('{' + T + '}', F8)
co = zlib.compressobj(9, zlib.DEFLATED, 31)
gz = co.compress(bomb)
chunk = b"\0" * (1 << 20)
for _ in range(10):
    gz += co.compress(chunk)
gz += co.flush()
case("gz-bomb.safetensors.gz", gz, "trailing bytes after the 8 data bytes "
     "the header claims", len(bomb))
# 9 GiB claimed by a tiny stream: above the 8 GiB cap for streamed input.
n = 9 * 2 ** 30 // 4
h = '{' + T.replace("[2]", "[%d]" % n).replace("[0,8]", "[0,%d]" % (4 * n)) + '}'
case("gz-claims-9gib.safetensors.gz", gzip.compress(st(h), mtime=0),
     "the header claims %d bytes in all, more than the limit of 8589934592 "
     "for streamed input" % (len(st(h)) + 4 * n), at(h, "[0,"))

out = sys.stdout
out.write("/* generated by tests/st-bad/make.py */\n")
for name, msg, off in CASES:
    o = "-1" if off is None else str(off)
    out.write('    {"%s",\n     "%s", %s},\n' % (name, msg.replace('"', '\\"'),
                                                   o))
