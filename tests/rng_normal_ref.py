"""bitprobe's normal stream (randn, normal) regenerated from its statement
in probes/README.md ("The normal stream"), in plain Python: Philox-4x32-10
written out, every double operation a Python float operation (IEEE
double, correctly rounded), each fma computed exactly with fractions and
rounded once, and the rounding to fp32/bf16/fp16 done on the exact value.
It shares no code with bitprobe; tests/cli/randn.sh compares the two.

  rng_normal_ref.py SEED STREAM N [MEAN STD]
      prints element i's bits per dtype: i fp64 fp32 bf16 fp16 (hex)
  rng_normal_ref.py --check FILE SEED STREAM [MEAN STD] NAME...
      compares tensors NAME.<dtype> of a bitprobe saved-run container
      (.safetensors or .safetensors.gz) with the stream; exit 1 on a
      difference, naming the first
"""
import gzip
import json
import math
import struct
import sys
from fractions import Fraction

M32 = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0 = (k0 + 0x9E3779B9) & M32
            k1 = (k1 + 0xBB67AE85) & M32
        p0 = 0xD2511F53 * c0
        p1 = 0xCD9E8D57 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & M32, (p0 >> 32) ^ c3 ^ k1, p0 & M32)
    return c0, c1, c2, c3


def fma(a, b, c):
    """a * b + c rounded once (IEEE signs of zero)."""
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        prod_neg = (math.copysign(1, a) * math.copysign(1, b)) < 0
        if a * b == 0 and c == 0:  # two zeros: -0 only when both are -0
            return -0.0 if prod_neg and math.copysign(1, c) < 0 else 0.0
        return 0.0
    return float(exact)


H = float.fromhex
LOG_COEF = [H(x) for x in ("0x1.642c8590b2164p-5", "0x1.8618618618618p-5", "0x1.af286bca1af28p-5",
                           "0x1.e1e1e1e1e1e1ep-5", "0x1.1111111111111p-4", "0x1.3b13b13b13b14p-4",
                           "0x1.745d1745d1746p-4", "0x1.c71c71c71c71cp-4", "0x1.2492492492492p-3",
                           "0x1.999999999999ap-3", "0x1.5555555555555p-2")]  # 1/23 ... 1/3


def check_coefficients():
    """The tables are the doubles nearest 1/k and (-1)^j / n!."""
    assert LOG_COEF == [float(Fraction(1, k)) for k in range(23, 2, -2)]
    assert SIN_COEF == [float(Fraction((-1) ** ((n - 1) // 2), math.factorial(n))) for n in range(19, 2, -2)]
    assert COS_COEF == [float(Fraction((-1) ** (n // 2), math.factorial(n))) for n in range(20, 1, -2)]


SIN_COEF = [float(Fraction((-1) ** ((n - 1) // 2), math.factorial(n))) for n in range(19, 2, -2)]
COS_COEF = [float(Fraction((-1) ** (n // 2), math.factorial(n))) for n in range(20, 1, -2)]
SQRT2 = H("0x1.6a09e667f3bcdp+0")
LN2_HI = H("0x1.62e42feep-1")
LN2_LO = H("0x1.a39ef35793c76p-33")
PIO2_2M51 = H("0x1.921fb54442d18p-51")


def log53(n):
    """log(n / 2^53), 1 <= n <= 2^53."""
    e = n.bit_length() - 1
    m = n / 2.0 ** e  # exact: n < 2^54
    if m > SQRT2:
        m = m * 0.5
        e += 1
    f = (m - 1.0) / (m + 1.0)
    f2 = f + f
    s = f * f
    p = LOG_COEF[0]
    for c in LOG_COEF[1:]:
        p = fma(p, s, c)
    logm = fma(f2 * s, p, f2)
    de = float(e - 53)
    return de * LN2_HI + fma(de, LN2_LO, logm)


def circle(k, odd):
    """cos (odd 0) or sin (odd 1) of 2 pi k / 2^53."""
    q = (k + (1 << 50)) >> 51
    r = k - (q << 51)
    x = float(r) * PIO2_2M51
    s = x * x
    if odd ^ (q & 1):
        p = SIN_COEF[0]
        for c in SIN_COEF[1:]:
            p = fma(p, s, c)
        v = fma(x * s, p, x)
    else:
        p = COS_COEF[0]
        for c in COS_COEF[1:]:
            p = fma(p, s, c)
        v = fma(s, p, 1.0)
    q4 = q & 3
    neg = q4 >= 2 if odd else q4 in (1, 2)
    return -v if neg else v


def normal(seed, stream, i, mean=0.0, std=1.0):
    pair = i >> 1
    w = philox4x32_10((pair & M32, pair >> 32, stream & M32, stream >> 32), (seed & M32, seed >> 32))
    n1 = ((w[0] << 21) | (w[1] >> 11)) + 1
    k2 = (w[2] << 21) | (w[3] >> 11)
    w2 = 0.0 - 2.0 * log53(n1)
    z = math.sqrt(w2) * circle(k2, i & 1)
    return fma(std, z, mean)


def round_bits(v, man, emin, emax):
    """v (a double) rounded once to nearest even in a binary format of
    `man` stored mantissa bits, exponents emin..emax: (sign, exponent field,
    mantissa field), the exponent field all ones for infinity."""
    sign = 1 if math.copysign(1, v) < 0 else 0
    x = Fraction(abs(v))
    bias = emax
    if x == 0:
        return sign, 0, 0
    e = max(math.floor(math.log2(x)), emin)
    while Fraction(2) ** e > x and e > emin:  # log2 of a fraction may be off by one
        e -= 1
    while Fraction(2) ** (e + 1) <= x:
        e += 1
    unit = Fraction(2) ** (e - man)  # the spacing at x (subnormal spacing below 2^emin)
    q, rem = divmod(x, unit)
    q = int(q)
    if rem > unit / 2 or (rem == unit / 2 and q & 1):
        q += 1
    if q == 2 << man:  # rounded up to the next binade
        q >>= 1
        e += 1
    if e > emax:
        return sign, 2 * bias + 1, 0
    if q < (1 << man):  # subnormal
        return sign, 0, q
    return sign, e + bias, q - (1 << man)


FORMATS = {"fp32": (23, -126, 127, 8), "bf16": (7, -126, 127, 8), "fp16": (10, -14, 15, 5)}


def bits(v, dtype):
    if dtype == "fp64":
        return struct.unpack("<Q", struct.pack("<d", v))[0]
    man, emin, emax, ebits = FORMATS[dtype]
    s, e, m = round_bits(v, man, emin, emax)
    return (s << (man + ebits)) | (e << man) | m


DTYPES = ("fp64", "fp32", "bf16", "fp16")
WIDTH = {"fp64": 8, "fp32": 4, "bf16": 2, "fp16": 2}


def read_container(path):
    raw = open(path, "rb").read()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        b, e = t["data_offsets"]
        out[name] = (t["dtype"], data[b:e])
    return out


ST_DTYPES = {"F64": "fp64", "F32": "fp32", "BF16": "bf16", "F16": "fp16"}


def check(path, seed, stream, mean, std, names):
    tensors = read_container(path)
    checked = 0
    for name in names:
        found = [k for k in tensors if k == name or k.startswith(name + ".")]
        if not found:
            print(f"{path}: no tensor {name}")
            return 1
        for k in sorted(found):
            st_dtype, raw = tensors[k]
            dt = ST_DTYPES[st_dtype]
            w = WIDTH[dt]
            for i in range(len(raw) // w):
                got = int.from_bytes(raw[i * w:(i + 1) * w], "little")
                want = bits(normal(seed, stream, i, mean, std), dt)
                if got != want:
                    print(f"{k}[{i}]: bitprobe 0x{got:0{2 * w}x}, the stream 0x{want:0{2 * w}x}")
                    return 1
                checked += 1
    print(f"{checked} elements identical to the stream")
    return 0


def main(argv):
    check_coefficients()
    if argv and argv[0] == "--check":
        path, seed, stream = argv[1], int(argv[2]), int(argv[3])
        rest = argv[4:]
        mean, std = 0.0, 1.0
        if len(rest) >= 2 and rest[0][0] in "-.0123456789":
            mean, std, rest = float(rest[0]), float(rest[1]), rest[2:]
        return check(path, seed, stream, mean, std, rest)
    seed, stream, n = int(argv[0]), int(argv[1]), int(argv[2])
    mean, std = (float(argv[3]), float(argv[4])) if len(argv) >= 5 else (0.0, 1.0)
    for i in range(n):
        v = normal(seed, stream, i, mean, std)
        print(i, " ".join(f"0x{bits(v, d):0{2 * WIDTH[d]}x}" for d in DTYPES), v.hex())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
