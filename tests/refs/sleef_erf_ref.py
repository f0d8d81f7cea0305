"""Reference bits of the double erf that PyTorch 2.11's bundled SLEEF (3.8
or 3.9; the algorithm of 3.6, shibatch/sleef PR #370) computes in a lane of
its FMA vector builds (Sleef_erfd4_u10avx2, Sleef_erfd8_u10avx512f), for
check_sleef_erf.c, which holds src/backends/cpu/sleef_erf.c to them.

An emulation of sleefsimddp.c's xerf_u1 and expk with dd.h's ENABLE_FMA_DP
helpers and estrin.h's polynomials, independent of the C code's arithmetic:
every step is one rounding to double, an fma (vmla, vfma, vfmapn, vfmanp)
computed exactly with Fractions and rounded once (int / int is correctly
rounded in Python), the other operations by Python's IEEE doubles.

    sleef_erf_ref.py [--n N] [--out FILE] [--dump FILE]

writes FILE (default tests/data/sleef_erf_ref.txt): the number of inputs,
the FNV-1a 64 of the outputs' bits in input order, and the fixed edge cases
with their bits; --dump writes every input and output (a difference
against check_sleef_erf's BP_SLEEF_ERF_DUMP names the inputs).  Inputs:
splitmix64(i) as inputs(i) below, which check_sleef_erf.c repeats."""
import argparse
import math
import struct
import sys
from fractions import Fraction

M64 = (1 << 64) - 1


def d2b(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def b2d(b):
    return struct.unpack("<d", struct.pack("<Q", b & M64))[0]


def fma(a, b, c):
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        # IEEE 754 6.3: an exact zero sum is +0 in round-to-nearest unless
        # both addends are zeros of the same negative sign
        p_neg = (a == 0 or b == 0) and math.copysign(1, a) * math.copysign(1, b) < 0
        return -0.0 if (p_neg and c == 0 and math.copysign(1, c) < 0) else 0.0
    return exact.numerator / exact.denominator


# dd.h (ENABLE_FMA_DP); a double-double is a tuple (x, y)
def ddadd_d_dd(x, y):
    s = x + y[0]
    return (s, ((x - s) + y[0]) + y[1])


def ddadd_dd_dd(x, y):
    s = x[0] + y[0]
    return (s, (((x[0] - s) + y[0]) + x[1]) + y[1])


def ddadd2_dd_d(x, y):
    s = x[0] + y
    v = s - x[0]
    w = (x[0] - (s - v)) + (y - v)
    return (s, w + x[1])


def ddnormalize(t):
    s = t[0] + t[1]
    return (s, (t[0] - s) + t[1])


def ddmul_dd_d(x, y):  # vfma(x.y, y, vfmapn(x.x, y, s))
    s = x[0] * y
    return (s, fma(x[1], y, fma(x[0], y, -s)))


def ddsqu(x):  # vfma(x.x + x.x, x.y, vfmapn(x.x, x.x, s))
    s = x[0] * x[0]
    return (s, fma(x[0] + x[0], x[1], fma(x[0], x[0], -s)))


def ddrec(d):  # s * vfmanp(d.y, s, vfmanp(d.x, s, 1))
    s = 1.0 / d[0]
    return (s, s * fma(-d[1], s, fma(-d[0], s, 1.0)))


def ddmla(x, y, z):  # sleefsimddp.c ddmla_vd2_vd_vd2_vd2
    return ddadd_dd_dd(z, ddmul_dd_d(y, x))


def poly4dd(x, c3, c2, c1, c0):
    return ddmla(x * x, ddmla(x, (c3, 0.0), c2), ddmla(x, c1, c0))


# estrin.h, coefficients highest first as in SLEEF's calls
def poly4(x, x2, c):
    return fma(x2, fma(x, c[0], c[1]), fma(x, c[2], c[3]))


def poly8(x, x2, x4, c):
    return fma(x4, poly4(x, x2, c[:4]), poly4(x, x2, c[4:]))


def poly10(x, x2, x4, x8, c):
    return fma(x8, fma(x, c[0], c[1]), poly8(x, x2, x4, c[2:]))


def poly21(x, x2, x4, x8, x16, c):
    p5 = fma(x4, c[0], poly4(x, x2, c[1:5]))
    p16 = fma(x8, poly8(x, x2, x4, c[5:13]), poly8(x, x2, x4, c[13:21]))
    return fma(x16, p5, p16)


R_LN2 = 1.442695040888963407359924681001892137426645954152985934135449406931
L2U = .69314718055966295651160180568695068359375
L2L = .28235290563031577122588448175013436025525412068e-12
EXPK = [2.51069683420950419527139e-08, 2.76286166770270649116855e-07,
        2.75572496725023574143864e-06, 2.48014973989819794114153e-05,
        0.000198412698809069797676111, 0.0013888888939977128960529,
        0.00833333333332371417601081, 0.0416666666665409524128449,
        0.166666666666666740681535, 0.500000000000000999200722]
LOW = [-0.2083271002525222097e-14, +0.7151909970790897009e-13, -0.1162238220110999364e-11,
       +0.1186474230821585259e-10, -0.8499973178354613440e-10, +0.4507647462598841629e-9,
       -0.1808044474288848915e-8, +0.5435081826716212389e-8, -0.1143939895758628484e-7,
       +0.1215442362680889243e-7, +0.1669878756181250355e-7, -0.9808074602255194288e-7,
       +0.1389000557865837204e-6, +0.2945514529987331866e-6, -0.1842918273003998283e-5,
       +0.3417987836115362136e-5, +0.3860236356493129101e-5, -0.3309403072749947546e-4,
       +0.1060862922597579532e-3, +0.2323253155213076174e-3, +0.1490149719145544729e-3]
LOW_DD = [(0.0092877958392275604405, 7.9287559463961107493e-19),
          (0.042275531758784692937, 1.3785226620501016138e-19),
          (0.07052369794346953491, 9.5846628070792092842e-19)]
HIGH = [-0.4024015130752621932e-18, +0.3847193332817048172e-16, -0.1749316241455644088e-14,
        +0.5029618322872872715e-13, -0.1025221466851463164e-11, +0.1573695559331945583e-10,
        -0.1884658558040203709e-9, +0.1798167853032159309e-8, -0.1380745342355033142e-7,
        +0.8525705726469103499e-7, -0.4160448058101303405e-6, +0.1517272660008588485e-5,
        -0.3341634127317201697e-5, -0.2515023395879724513e-5, +0.6539731269664907554e-4,
        -0.3551065097428388658e-3, +0.1210736097958368864e-2, -0.2605566912579998680e-2,
        +0.1252823202436093193e-2, +0.1820191395263313222e-1, -0.1021557155453465954e+0]
HIGH_DD = [(-0.63691044383641748361, -2.4249477526539431839e-17),
           (-1.1282926061803961737, -6.2970338860410996505e-17),
           (-1.2261313785184804967e-05, -5.5329707514490107044e-22)]


def expk(d):
    u = (d[0] + d[1]) * R_LN2
    dq = float(round(u))  # vrint_vd_vd: nearest, ties to even (Python's round)
    s = ddadd2_dd_d(d, dq * -L2U)
    s = ddadd2_dd_d(s, dq * -L2L)
    s = ddnormalize(s)
    s2 = s[0] * s[0]
    s4 = s2 * s2
    s8 = s4 * s4
    u = poly10(s[0], s2, s4, s8, EXPK)
    t = ddadd_d_dd(1.0, s)
    t = ddadd_dd_dd(t, ddmul_dd_d(ddsqu(s), u))
    u = t[0] + t[1]
    u = math.ldexp(u, int(dq))  # vldexp2: exact here (|dq| < 60, u near 1)
    return 0.0 if d[0] < -1000 else u


def erf_lane(a):
    """One lane of xerf_u1 for a finite, non-NaN a."""
    x = abs(a)
    x2 = x * x
    x4 = x2 * x2
    x8 = x4 * x4
    x16 = x8 * x8
    if x <= 2.5:
        t = poly21(x, x2, x4, x8, x16, LOW)
        t2 = poly4dd(x, t, *LOW_DD)
        t2 = ddadd_d_dd(1.0, ddmul_dd_d(t2, x))
        for _ in range(4):
            t2 = ddsqu(t2)
        t2 = ddrec(t2)
    elif x < 6:
        t = poly21(x, x2, x4, x8, x16, HIGH)
        t2 = (expk(poly4dd(x, t, *HIGH_DD)), 0.0)
    else:
        t2 = (0.0, 0.0)  # selected away below
    t2 = ddadd2_dd_d(t2, -1.0)
    z = -(t2[0] + t2[1])
    if x < 1e-8:
        z = x * 1.12837916709551262756245475959
    if x >= 6:
        z = 1.0
    if a == 0:
        z = 0.0
    return b2d(d2b(z) ^ (d2b(a) & (1 << 63)))  # vmulsign


def erf_bits(b):
    a = b2d(b)
    if math.isnan(a):
        # |a|'s NaN, quieted by the first operation, reaches -(t2.x + t2.y)
        # and then the xor with a's sign: the sign flips
        return (b | (1 << 51)) ^ (1 << 63)
    if math.isinf(a):
        return d2b(math.copysign(1.0, a))
    return d2b(erf_lane(a))


def splitmix64(i):
    z = (i * 0x9E3779B97F4A7C15 + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


EDGES = [0.0, -0.0, 1e-8, 2.5, 6.0, 1.0, 3.7, 5e-324, 2.2250738585072014e-308,
         1.7976931348623157e308, math.inf, 0.72899502023041]


def input_bits(i):
    """Input i: the sign from bit 63 of r = splitmix64(i), the class from
    i % 8: [0, 2.5); (2.5, 6); [0, 6.5); a mantissa in the binades 2^-40
    to 2^2; within 64 ulps of 1e-8, 2.5 or 6; any bits (NaNs and
    infinities too); subnormal to 2^-20; within 64 ulps of the edges."""
    r = splitmix64(i)
    u = (r >> 11) * 2.0 ** -53  # [0, 1)
    sign = r & (1 << 63)
    k = i % 8
    if k == 0:
        x = u * 2.5
    elif k == 1:
        x = 2.5 + u * 3.5
    elif k == 2:
        x = u * 6.5
    elif k == 3:
        x = b2d(((1023 - 40 + (r >> 52) % 43) << 52) | (r & ((1 << 52) - 1)))
    elif k == 4:
        x = b2d(d2b((1e-8, 2.5, 6.0)[(r >> 8) % 3]) + (r & 127) - 64)
    elif k == 5:
        return r
    elif k == 6:
        return sign | ((r >> 52) % 1003 << 52) | (r & ((1 << 52) - 1))
    else:
        e = EDGES[(r >> 8) % len(EDGES)]
        x = e if math.isinf(e) else b2d(max(d2b(e) + (r & 127) - 64, 0))
    return sign | d2b(x)


def fnv1a64(values):
    h = 0xcbf29ce484222325
    for v in values:
        for k in range(8):
            h ^= (v >> (8 * k)) & 0xff
            h = (h * 0x100000001b3) & M64
    return h


EDGE_BITS = ([d2b(e) for e in EDGES] + [d2b(-e) for e in EDGES if e] +
             [0x7ff8000000000000, 0xfff8000000000000, 0x7ff0000000000001,
              0xfff4000000000abc] +
             [d2b(float.fromhex("0x1.02697cp+0") * 0.70710678118654752440)] +
             [d2b(2.5) + k for k in (-2, -1, 1, 2)] + [d2b(6.0) - 1, d2b(1e-8) - 1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=200000)
    ap.add_argument("--out", default="tests/data/sleef_erf_ref.txt")
    ap.add_argument("--dump")
    o = ap.parse_args()
    outs = []
    dump = open(o.dump, "w") if o.dump else None
    for i in range(o.n):
        b = input_bits(i)
        r = erf_bits(b)
        outs.append(r)
        if dump:
            dump.write(f"{b:016x} {r:016x}\n")
    with open(o.out, "w") as f:
        f.write("# tests/refs/sleef_erf_ref.py: SLEEF 3.6-3.9 double erf, one FMA lane\n")
        f.write(f"n {o.n} fnv1a64 {fnv1a64(outs):016x}\n")
        for b in EDGE_BITS:
            f.write(f"{b:016x} {erf_bits(b):016x}\n")
    print(f"{o.out}: {o.n} inputs, {len(EDGE_BITS)} edges", file=sys.stderr)


if __name__ == "__main__":
    main()
