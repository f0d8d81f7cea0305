#!/usr/bin/env python3
"""Writes tests/ledger-good (a small valid ledger with its captures) and
tests/ledger-bad: one ledger per rule of docs/ledger-format.md that a
reader must enforce (run once; the output is committed).  Plain Python.

Each bad file is the good ledger with one line changed; the line, record
and byte offset where the reader must report it follow from that
construction and are printed as the C table tests/io/check_ledger.c uses:
file, message substring, where ("record R (line L, byte B)" or "line L
(byte B)").

The hashes come from this file's own implementation of fmix64-sum/1,
written from the format document (an independent reference for the C
one)."""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
GOOD = os.path.join(os.path.dirname(HERE), "ledger-good")
M = (1 << 64) - 1


def fmix(x):
    x ^= x >> 33
    x = x * 0xFF51AFD7ED558CCD & M
    x ^= x >> 33
    x = x * 0xC4CEB9FE1A85EC53 & M
    return x ^ (x >> 33)


def lhash(b):
    n = len(b)
    b = b + b"\0" * (-n % 4)
    s = 0
    for i in range(len(b) // 4):
        w = struct.unpack_from("<i", b, 4 * i)[0]
        s = (s + fmix(((i << 32) + w) & M)) & M
    return "%016x" % fmix((s + n) & M)


def f32(vals):
    return struct.pack("<%df" % len(vals), *vals)


def tensor(raw, dtype, shape, cap=None):
    t = {"dtype": dtype, "shape": shape, "stride": [1] * len(shape), "device": "cpu",
         "nbytes": len(raw), "hash": lhash(raw)}
    if cap:
        t["capture"] = cap
    return t


POS = f32([0, 1, 2, 3])
DIV = f32([0, 0.1, 0.2, 0.3])            # 0.1f etc: what f32 division gives
MUL = f32([a * b for a, b in zip([0, 1, 2, 3], [0, 0.1, 0.2, 0.3])])
DIV = f32(struct.unpack("<4f", DIV))     # rounded to f32
MUL = f32([struct.unpack("<f", f32([a])) [0] for a in struct.unpack("<4f", MUL)])

HEADER = {"format": "bitprobe-ledger", "version": 1, "hash": "fmix64-sum/1",
          "torch": "hand-written", "captures": "good.ledger.safetensors"}
RECORDS = [
    {"seq": 0, "op": "aten::arange", "module": "rope", "args": [4],
     "kwargs": {"dtype": {"dtype": "F32"}}, "in": [],
     "out": [tensor(POS, "F32", [4], "0.out0")]},
    {"seq": 1, "op": "aten::div.Tensor", "module": "rope", "args": [{"t": 0}, 10],
     "in": [tensor(POS, "F32", [4], "0.out0")], "out": [tensor(DIV, "F32", [4], "1.out0")]},
    {"seq": 2, "op": "aten::mul.Tensor", "module": "", "args": [{"t": 0}, {"t": 1}],
     "in": [tensor(POS, "F32", [4]), tensor(DIV, "F32", [4])],
     "out": [tensor(MUL, "F32", [4])]},
]
END = {"end": {"records": 3, "captures": 2, "status": "ok"}}


def dump(o):
    return json.dumps(o, separators=(",", ":"))


def lines_of(header=None, records=None, end=None):
    return [dump(HEADER if header is None else header)] + \
        [dump(r) for r in (RECORDS if records is None else records)] + \
        [dump(END if end is None else end)]


def write_st(path, tensors):
    hdr, blob = {}, b""
    for name, (dtype, shape, raw) in tensors.items():
        hdr[name] = {"dtype": dtype, "shape": shape,
                     "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    h = dump(hdr).encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + blob)


CASES = []
JNULL = object()  # an explicit JSON null (None removes a member)


def case(name, text, message, line, record=None):
    """text: the file's bytes; line: 1-based line the reader must name, with
    the record (when the line is one) and the line's byte offset."""
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(text)
    off = sum(len(l) + 1 for l in text.split(b"\n")[:line - 1])
    CASES.append((name, message, record if record is not None else -1, line, off))


def bad(name, message, line, record=None, **kw):
    case(name, ("\n".join(lines_of(**kw)) + "\n").encode(), message, line, record)


def rec(i, **changes):
    r = json.loads(dump(RECORDS[i]))
    for k, v in changes.items():
        if v is None:
            r.pop(k, None)
        else:
            r[k] = v
    recs = [json.loads(dump(x)) for x in RECORDS]
    recs[i] = r
    return recs


def rec_tensor(i, role, k, **changes):
    recs = [json.loads(dump(x)) for x in RECORDS]
    t = recs[i][role][k]
    for key, v in changes.items():
        if v is None:
            t.pop(key, None)
        else:
            t[key] = None if v is JNULL else v
    return recs


def main():
    os.makedirs(GOOD, exist_ok=True)
    good = ("\n".join(lines_of()) + "\n").encode()
    with open(os.path.join(GOOD, "good.ledger"), "wb") as f:
        f.write(good)
    write_st(os.path.join(GOOD, "good.ledger.safetensors"),
             {"0.out0": ("F32", [4], POS), "1.out0": ("F32", [4], DIV)})
    # A second run whose division rounded differently at element 1 (one ulp).
    div_b = bytearray(DIV)
    div_b[4:8] = struct.pack("<I", struct.unpack("<I", DIV[4:8])[0] + 1)
    recs = [json.loads(dump(x)) for x in RECORDS]
    recs[1]["out"][0] = tensor(bytes(div_b), "F32", [4], "1.out0")
    recs[2]["in"][1] = tensor(bytes(div_b), "F32", [4])
    mul_b = f32([a * b for a, b in zip([0, 1, 2, 3], struct.unpack("<4f", bytes(div_b)))])
    recs[2]["out"][0] = tensor(mul_b, "F32", [4])
    hb = dict(HEADER, captures="good-b.ledger.safetensors")
    with open(os.path.join(GOOD, "good-b.ledger"), "wb") as f:
        f.write(("\n".join(lines_of(header=hb, records=recs)) + "\n").encode())
    write_st(os.path.join(GOOD, "good-b.ledger.safetensors"),
             {"0.out0": ("F32", [4], POS), "1.out0": ("F32", [4], bytes(div_b))})
    print("/* hashes: empty %s, [0,1,2,3] f32 %s, bytes 0..9 %s */" %
          (lhash(b""), lhash(POS), lhash(bytes(range(10)))))

    for f in os.listdir(HERE):
        if f.endswith((".ledger", ".safetensors")):
            os.unlink(os.path.join(HERE, f))
    case("empty.ledger", b"", "the file is empty", 1)
    case("no-newline.ledger", good[:-1], "ends without a newline", 5, 3)
    case("truncated.ledger", b"\n".join(good.split(b"\n")[:3]) + b"\n",
         "no end line after record 1", 4)
    cut = good[:len(good) // 2]
    case("cut-mid-line.ledger", cut, "ends without a newline", cut.count(b"\n") + 1,
         cut.count(b"\n") - 1)
    bad("not-ledger.ledger", "not a bitprobe ledger", 1, header={"format": "other"})
    case("not-json.ledger", b"{\"format\": \n" + good, "invalid JSON", 1)
    case("array-line.ledger", good.replace(b"\n", b"\n[1,2]\n", 1), "must hold a JSON object",
         2, 0)
    bad("version-2.ledger", "ledger version 2 (this bitprobe reads version 1)", 1,
        header=dict(HEADER, version=2))
    bad("version-string.ledger", "'version' must be an integer", 1,
        header=dict(HEADER, version="1"))
    bad("unknown-hash.ledger", "unknown hash \"sha256\"", 1, header=dict(HEADER, hash="sha256"))
    bad("captures-path.ledger", "'captures' must be a plain file name", 1,
        header=dict(HEADER, captures="../etc/x.safetensors"))
    bad("captures-none.ledger", "header names no captures file", 5,
        header=dict(HEADER, captures=None))
    bad("seq-gap.ledger", "seq is 2, expected 1", 3, 1, records=rec(1, seq=2))
    bad("missing-op.ledger", "has no 'op'", 3, 1, records=rec(1, op=None))
    bad("op-empty.ledger", "'op' must be 1 to 256 bytes long", 3, 1, records=rec(1, op=""))
    bad("unknown-member.ledger", "unknown member 'extra'", 2, 0, records=rec(0, extra=1))
    bad("args-not-array.ledger", "'args' must be an array, not an object", 3, 1,
        records=rec(1, args={"x": 1}))
    bad("shape-string.ledger", "'shape' must be an array, not a string", 3, 1,
        records=rec_tensor(1, "out", 0, shape="4"))
    bad("unknown-dtype.ledger", "unknown dtype 'F33'", 3, 1,
        records=rec_tensor(1, "out", 0, dtype="F33"))
    bad("negative-dim.ledger", "shape[0] must be an integer of at least 0, not negative", 3, 1,
        records=rec_tensor(1, "out", 0, shape=[-4], stride=[1]))
    bad("too-many-dims.ledger", "shape has 33 dimensions", 3, 1,
        records=rec_tensor(1, "out", 0, shape=[1] * 33, stride=[1] * 33))
    bad("stride-count.ledger", "stride has 2 entries for 1 dimensions", 3, 1,
        records=rec_tensor(1, "out", 0, stride=[1, 1]))
    bad("nbytes-mismatch.ledger", "nbytes is 12, the shape and F32 make 16", 3, 1,
        records=rec_tensor(1, "out", 0, nbytes=12))
    bad("nbytes-overflow.ledger", "shape makes more than 2^64 bytes", 3, 1,
        records=rec_tensor(1, "out", 0, shape=[1 << 62, 8], stride=[8, 1], nbytes=0))
    bad("huge-claim.ledger", "claims 4611686018427387904 bytes", 3, 1,
        records=rec_tensor(1, "out", 0, shape=[1 << 60], nbytes=1 << 62))
    bad("hash-short.ledger", "hash must be 16 lower-case hex digits", 3, 1,
        records=rec_tensor(1, "out", 0, hash="abc"))
    bad("hash-upper.ledger", "hash must be 16 lower-case hex digits", 3, 1,
        records=rec_tensor(1, "out", 0, hash="ABCDEF0123456789"))
    bad("hash-missing.ledger", "has no 'hash'", 3, 1, records=rec_tensor(1, "out", 0, hash=None))
    bad("why-with-hash.ledger", "'why' is for a tensor without a hash", 3, 1,
        records=rec_tensor(1, "out", 0, why="x"))
    bad("capture-no-hash.ledger", "a captured tensor needs its hash", 3, 1,
        records=rec_tensor(1, "out", 0, hash=JNULL))
    bad("ref-range.ledger", "tensor reference {\"t\": out of range} is not one of the 1", 3, 1,
        records=rec(1, args=[{"t": 3}, 10]))
    bad("ref-twice.ledger", "in[0] is referenced 2 times", 3, 1,
        records=rec(1, args=[{"t": 0}, {"t": 0}]))
    bad("ref-missing.ledger", "in[0] is referenced 0 times", 3, 1, records=rec(1, args=[10]))
    bad("arg-form.ledger", "unknown argument form {\"tensor\": ...}", 3, 1,
        records=rec(1, args=[{"t": 0}, {"tensor": 1}]))
    bad("end-records.ledger", "the end line counts 4 records, the ledger holds 3", 5,
        end={"end": {"records": 4, "captures": 2, "status": "ok"}})
    bad("end-captures.ledger", "counts 1 captured tensors, the records name 2", 5,
        end={"end": {"records": 3, "captures": 1, "status": "ok"}})
    bad("end-extra.ledger", "the end line has members besides 'end'", 5,
        end={"end": {"records": 3, "captures": 2}, "x": 1})
    case("after-end.ledger", good + good.split(b"\n")[1] + b"\n", "a line after the end line", 6)
    case("duplicate-key.ledger", good.replace(b'"seq":1,', b'"seq":1,"seq":1,', 1),
         "invalid JSON", 3, 1)
    case("bad-utf8.ledger", good.replace(b'"module":"rope"', b'"module":"r\xffpe"', 1),
         "invalid JSON", 2, 0)
    case("nul-escape.ledger", good.replace(b'"module":"rope"', b'"module":"r\\u0000pe"', 1),
         "invalid JSON", 2, 0)
    # The captures: the good ledger pointing at files that break a rule.
    for name, tensors, msg in (
            ("cap-missing", {"0.out0": ("F32", [4], POS)}, "lack tensor '1.out0'"),
            ("cap-shape", {"0.out0": ("F32", [4], POS), "1.out0": ("F32", [2, 2], DIV)},
             "is F32 [2, 2], record 1"),
            ("cap-hash", {"0.out0": ("F32", [4], POS), "1.out0": ("F32", [4], MUL)},
             "the captures do not belong to this ledger")):
        h = dict(HEADER, captures=name + ".ledger.safetensors")
        with open(os.path.join(HERE, name + ".ledger"), "wb") as f:
            f.write(("\n".join(lines_of(header=h)) + "\n").encode())
        write_st(os.path.join(HERE, name + ".ledger.safetensors"), tensors)
        CASES.append((name + ".ledger", msg, -2, 0, 0))
    print("/* file, message, record (-1: none, -2: a captures rule), line, byte offset */")
    print("static const struct bad_case {\n    const char *file, *msg;\n    int record, line;\n"
          "    long offset;\n} bad_cases[] = {")
    for f, m, r, l, o in CASES:
        print("    {%s, %s, %d, %d, %d}," % (json.dumps(f), json.dumps(m), r, l, o))
    print("};")


if __name__ == "__main__":
    main()
