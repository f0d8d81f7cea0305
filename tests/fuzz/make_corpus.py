#!/usr/bin/env python3
"""Writes the fuzz seed corpora under tests/fuzz/corpus/<target>/ from the
test inputs already in the tree: each file as it is ("seed-"), cut short
("trunc-<n>-") and with single bits flipped ("flip-<byte>.<bit>-").  The
choice of cuts and flips is a pure function of the file (seeded by its
name), so running this again gives the same corpus.  Inputs found by
fuzzing are kept: regressions ("crash-*": inputs that once broke a target)
and new coverage merged in from fuzzing runs ("fuzz-<sha1>", with
libFuzzer's -merge=1); everything else is rewritten.  It also writes
tests/fuzz/probe.dict, the probe target's libFuzzer dictionary: every op
name, key and formulation of src/ops/op_list.h and the schema's other words
(run the target with -dict=tests/fuzz/probe.dict).

Usage: python3 tests/fuzz/make_corpus.py [SAVED_RUN_DIR]
SAVED_RUN_DIR: a directory written by `bitprobe run --save` whose
manifest.json seeds the manifest corpus (tests/fuzz/corpus/manifest keeps
the last one written otherwise)."""
import glob
import gzip
import json
import os
import random
import re
import struct
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fuzz", "corpus")
MAX_SEED = 64 << 10  # bytes: libFuzzer runs slowly on big inputs


def variants(name, data, nflip=6, ntrunc=3):
    rnd = random.Random(name)
    yield "seed-" + name, data
    n = len(data)
    if n < 2:
        return
    cuts = {n // 2, n - 1} | {rnd.randrange(1, n) for _ in range(ntrunc)}
    for c in sorted(cuts)[:ntrunc + 2]:
        yield "trunc-%d-%s" % (c, name), data[:c]
    for _ in range(nflip):
        # Half the flips in the first 64 bytes (length, header start).
        i = rnd.randrange(min(n, 64)) if rnd.random() < 0.5 else rnd.randrange(n)
        b = rnd.randrange(8)
        d = bytearray(data)
        d[i] ^= 1 << b
        yield "flip-%d.%d-%s" % (i, b, name), bytes(d)


def write(target, items):
    items = list(items)  # before the old files go: they may be its source
    d = os.path.join(OUT, target)
    os.makedirs(d, exist_ok=True)
    for f in os.listdir(d):
        if not f.startswith(("crash-", "fuzz-")):
            os.unlink(os.path.join(d, f))
    n = 0
    for name, data in items:
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
        n += 1
    print("%s: %d inputs" % (target, n))


def files(*patterns):
    for pat in patterns:
        for p in sorted(glob.glob(os.path.join(ROOT, pat))):
            if os.path.getsize(p) <= MAX_SEED:
                yield os.path.basename(p), open(p, "rb").read()


def all_variants(items, **kw):
    for name, data in items:
        yield from variants(name, data, **kw)


def small_goldens():
    """Goldens of the small probes, gzip'd as stored and inflated."""
    for p in sorted(glob.glob(os.path.join(ROOT, "golden", "*", "*.safetensors.gz"))):
        if os.path.getsize(p) > 8 << 10:
            continue
        probe = os.path.basename(os.path.dirname(p))
        key = os.path.basename(p).split(".")[0]
        raw = open(p, "rb").read()
        yield "golden-%s-%s.safetensors.gz" % (probe, key), raw
        yield "golden-%s-%s.safetensors" % (probe, key), gzip.decompress(raw)


def manifests(saved):
    d = os.path.join(OUT, "manifest")
    if saved:
        m = open(os.path.join(saved, "manifest.json"), "rb").read()
    else:
        m = open(os.path.join(d, "seed-manifest.json"), "rb").read()
    yield "manifest.json", m
    j = json.loads(m)
    hand = {
        "minimal.json": {"tool": "bitprobe", "files": []},
        "dotdot.json": {"tool": "bitprobe", "files": ["a/../../x.safetensors.gz"]},
        "absolute.json": {"tool": "bitprobe", "files": ["/etc/passwd"]},
        "not-tool.json": {"tool": "other", "files": []},
        "files-object.json": {"tool": "bitprobe", "files": {"a": 1}},
        "files-number.json": {"tool": "bitprobe", "files": [1]},
        "empty-path.json": {"tool": "bitprobe", "files": [""]},
        "dots-ok.json": {"tool": "bitprobe", "files": ["..a/b..", "a/..b"]},
    }
    for k, v in hand.items():
        yield k, json.dumps(v).encode()
    yield "array.json", b"[]"
    yield "deep.json", b"[" * 3000 + b"]" * 3000
    yield "dup-key.json", b'{"tool":"bitprobe","tool":"bitprobe","files":[]}'
    yield "nul.json", b'{"tool":"bitprobe\\u0000","files":[]}'
    j["files"] = j.get("files", [])[:4]
    yield "compact.json", json.dumps(j, separators=(",", ":")).encode()


def indexes():
    """The hostile index cases and the good one, and a few by hand."""
    for f in files("tests/index-bad/*.json"):
        yield f
    yield "many-shards.json", json.dumps(
        {"weight_map": {"t%d" % i: "s%d.safetensors" % (i % 7) for i in range(50)}}).encode()
    yield "nested-metadata.json", b'{"metadata": {"a": {"b": [1, {"c": null}]}}, "weight_map": {"x": "a/b.safetensors"}}'
    yield "unicode.json", '{"weight_map": {"\u00e9": "\u00e9.safetensors"}}'.encode()


def zips():
    """.npz-like zips: stored, deflated, zip64, a data descriptor, other
    methods, and broken ones (cut, overlapping, lying sizes)."""
    import io
    import zipfile
    h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }"
    h += b" " * (-(10 + len(h) + 1) % 64) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + struct.pack("<3f", 1, 2, 3)

    def mk(method=zipfile.ZIP_STORED, force64=False, stream=False, names=("x.npy", "y.npy")):
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w", method) as z:
            for n in names:
                zi = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
                zi.compress_type = method
                with z.open(zi, "w", force_zip64=force64) as w:
                    w.write(npy)
        raw = b.getvalue()
        return raw
    yield "stored.npz", mk()
    yield "deflated.npz", mk(zipfile.ZIP_DEFLATED)
    yield "zip64.npz", mk(zipfile.ZIP_DEFLATED, force64=True)
    yield "bzip2.npz", mk(zipfile.ZIP_BZIP2)
    yield "lzma.npz", mk(zipfile.ZIP_LZMA)
    yield "empty.npz", mk(names=())
    yield "not-npy.npz", mk(names=("x.txt",))
    # torch.save's archive: its first member <archive>/data.pkl (bp_sniff)
    yield "torch.npz", mk(names=("archive/data.pkl", "archive/version"))
    b = io.BytesIO()
    class Unseekable(io.RawIOBase):
        def writable(self): return True
        def write(self, d): return b.write(d)
    with zipfile.ZipFile(Unseekable(), "w", zipfile.ZIP_DEFLATED) as z:
        zi = zipfile.ZipInfo("x.npy", date_time=(1980, 1, 1, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(zi, npy)
    yield "descriptor.npz", b.getvalue()
    # two entries of one member: the second's local header offset pointed
    # at the first's (the overlapping-entry bomb's trick)
    import warnings
    warnings.simplefilter("ignore")
    raw = mk(names=("x.npy", "x.npy"))
    cd = raw.rfind(b"PK\x01\x02")
    yield "overlap.npz", raw[:cd + 42] + struct.pack("<I", 0) + raw[cd + 46:]
    raw = mk()
    # a member claiming more bytes than the file holds
    first = raw.find(b"PK\x01\x02")
    yield "big-size.npz", raw[:first + 20] + struct.pack("<II", 10 ** 9, 10 ** 9) + raw[first + 28:]


def probe_dict():
    """The probe schema's words: op names, keys and formulations from the
    op table (src/ops/op_list.h), then the rest of the schema."""
    src = open(os.path.join(ROOT, "src", "ops", "op_list.h")).read()
    words = ["name", "description", "params", "dtypes", "ops", "outputs", "policy",
             "out", "op", "dtype", "exact", "ulp", "abs", "rel", "max_mismatch_fraction",
             "zero_sign", "ignore", "count", "fp32", "bf16", "fp16", "fp64", "i64", "i32", "$dtype"]
    for section in ("BP_OP", "BP_KEY", "BP_FORM"):
        words += re.findall(r'^%s\(\w+, "([^"]+)"' % section, src, re.M)
    seen, out = set(), ["# The probe fuzz target's dictionary, written by make_corpus.py",
                        "# from src/ops/op_list.h: do not edit."]
    for w in words:
        if w not in seen:
            seen.add(w)
            out.append('"%s"' % w)
    path = os.path.join(ROOT, "tests", "fuzz", "probe.dict")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("probe.dict: %d words" % len(seen))


def main():
    saved = sys.argv[1] if len(sys.argv) > 1 else None
    probe_dict()
    write("probe", all_variants(files("probes/*.yaml", "tests/probes-bad/*.yaml"),
                                nflip=4))
    write("npy", all_variants(files("tests/npy/*.npy")))
    st = list(files("tests/st-good/*.safetensors*", "tests/st-bad/*.safetensors*"))
    st += list(small_goldens())
    write("st", all_variants(st))
    good = list(files("tests/st-good/*.safetensors*")) + list(small_goldens())
    write("st_roundtrip", all_variants(good, nflip=3, ntrunc=1))
    write("manifest", all_variants(list(manifests(saved)), nflip=3, ntrunc=2))
    write("index", all_variants(list(indexes()), nflip=3, ntrunc=2))
    write("zip", all_variants(list(zips()), nflip=6, ntrunc=3))
    write("ledger", ledger_corpus())
    write("report", all_variants(list(reports()), nflip=3, ntrunc=2))
    write("tread", all_variants(list(streams()), nflip=4, ntrunc=3))
    tsets = list(files("tests/st-good/*.safetensors*", "tests/npy/good-*.npy")) + list(zips())
    tsets += list(npz_hostile())
    write("tset", all_variants(tsets, nflip=3, ntrunc=2))
    write("esc", escapes())


HOSTILE = ["a\n::error::x", "::warning file=x::y", "t\x1b]0;title\x07\x1b[2J", "c\u0085\u009bd",
           "  ::notice::z", "\r\t\x7f", ""]


def reports():
    """The report reader's good and bad cases, and reports whose names
    would steer a CI log or a terminal."""
    items = list(files("tests/report-good/*.json", "tests/report-bad/*.json"))
    yield from items
    base = json.loads(open(os.path.join(ROOT, "tests", "report-good", "minimal.json")).read())
    for k, name in enumerate(HOSTILE):
        r = json.loads(json.dumps(base))
        for res in r["results"]:
            res["probe"] = name
            res["a"] = name
        r["notes"] = [name]
        r["hints"] = [name + " hint"]
        yield "hostile-%d.json" % k, json.dumps(r).encode()


def streams():
    """Deflate streams, raw (.npz members) and gzip: all zeros, whose
    stream ends while inflate holds output (the tset corpus holds the 8 MiB
    .npz member np.savez_compressed once failed at), text, random bytes,
    empty, and a gzip with two members."""
    rnd = random.Random("streams")
    data = {"zeros-1m": bytes(1 << 20), "zeros-64k": bytes(1 << 16),
            "text": open(os.path.join(ROOT, "README.md"), "rb").read()[:20000],
            "random": bytes(rnd.randrange(256) for _ in range(4096)), "empty": b""}
    for name, d in data.items():
        for level in (1, 6, 9):
            z = zlib.compressobj(level, zlib.DEFLATED, -15)
            yield "%s-%d.deflate" % (name, level), z.compress(d) + z.flush()
        z = zlib.compressobj(6, zlib.DEFLATED, 31)
        yield "%s.gz" % name, z.compress(d) + z.flush()
    yield "two-members.gz", gzip.compress(b"a" * 100) + gzip.compress(b"b" * 100)


def npz_hostile():
    """.npz files as NumPy writes them that readers once refused or took
    as data: all-zero arrays deflated (the stream ends while inflate holds
    output), a member whose CRC-32 lies, exactly the count 0xFFFF claimed
    without zip64 (a small archive: the reader refuses it for its size,
    the point is the end record)."""
    import io
    import zipfile
    h = b"{'descr': '<f4', 'fortran_order': False, 'shape': (2097152,), }"
    h += b" " * (-(10 + len(h) + 1) % 64) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + bytes(8 << 20)
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        zi = zipfile.ZipInfo("x.npy", date_time=(1980, 1, 1, 0, 0, 0))
        zi.compress_type = zipfile.ZIP_DEFLATED
        with z.open(zi, "w", force_zip64=True) as w:
            w.write(npy)
    yield "zeros-8m.npz", b.getvalue()
    raw = bytearray(b.getvalue())
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 16] ^= 1
    yield "bad-crc.npz", bytes(raw)
    raw = bytearray(dict(zips())["stored.npz"])
    end = raw.rfind(b"PK\x05\x06")
    raw[end + 8:end + 12] = b"\xff\xff\xff\xff"
    yield "count-ffff.npz", bytes(raw)


def escapes():
    """The escaping target's inputs: strings that steer CI logs and
    terminals, NUL-separated as the target splits them."""
    yield "seed-hostile", b"\0".join(s.encode() for s in HOSTILE)
    for k, name in enumerate(HOSTILE):
        yield "seed-%d" % k, (b"\x01" + (name.encode() + b"\0") * 6)
    yield "seed-plain", b"\x02probe\0out\0cpu\0oracle\0note\0hint"


def ledger_corpus():
    """The good and bad ledgers cut and flipped, plus a few written here:
    a deep argument, a huge seq, a ledger whose ops only one side has."""
    items = list(files("tests/ledger-good/*.ledger", "tests/ledger-bad/*.ledger"))
    yield from all_variants(items, nflip=4, ntrunc=2)
    hdr = b'{"format":"bitprobe-ledger","version":1,"hash":"fmix64-sum/1"}\n'
    end = b'{"end":{"records":%d,"captures":0}}\n'
    yield "seed-deep-args.ledger", (hdr + b'{"seq":0,"op":"x","module":"","args":' +
                                    b"[" * 3000 + b"]" * 3000 + b',"in":[],"out":[]}\n' +
                                    end % 1)
    yield "seed-empty-records.ledger", hdr + end % 0
    yield "seed-big-seq.ledger", (hdr + b'{"seq":9223372036854775807,"op":"x","module":"",'
                                  b'"args":[],"in":[],"out":[]}\n' + end % 1)


if __name__ == "__main__":
    main()
