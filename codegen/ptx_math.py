"""Instruction sequences for the f32 functions PTX has no exact instruction for.

Each function (exp, exp2, log, log2, sin, cos, tan, pow, fmod) is written once against a
small operation interface, `Ops`. Two implementations exist: `PtxOps` renders each
operation as one PTX instruction, and `NumpyOps` evaluates it on numpy arrays bit for bit
(f32 `fma` is emulated through f64, exact except for rare double roundings). CI measures
the numpy evaluation of the very sequence the emitter writes against an f64 reference, so
the bounds below are tested without a GPU; the H200 tests check the real thing.

Every add/mul is emitted with an explicit `.rn`, so ptxas cannot contract it into an fma
and the numpy evaluation stays exact.

Error bounds (measured by tests/test_ptx_math.py over dense samples, stated in units in
the last place of the correctly rounded f32 result; subnormal results excepted):

    exp, exp2       <= 2 ulp      Cody-Waite reduction by ln2 (k exact), degree-7 Taylor
    log, log2       <= 2 ulp      exponent split, log1p(f) = f - hfsq + s*(hfsq + R(s^2))
    sin, cos        <= 2 ulp      3-part Cody-Waite reduction by pi/2 for |x| <= 1e5, above
                                  it an exact integer reduction (2/pi as 32-bit words)
    tan             <= 4 ulp      same reduction, sin/cos quotient
    pow             <= 1 ulp      log and exp evaluated in f64, rounded once to f32
    fmod            exact         integer remainder of the significands (2^d mod m by
                                  square and multiply), no loop

The coefficients are Taylor coefficients (1/n!, 2/(2n+1)), derived here, not tables.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

_F32 = np.float32


def f32(x: float) -> float:
    return float(_F32(x))


def _split(x: float, bits: int) -> tuple[float, float]:
    """x as hi + lo where hi keeps `bits` significant bits (so small multiples are exact)."""
    m, e = math.frexp(x)
    hi = math.ldexp(math.floor(m * 2**bits), e - bits)
    return f32(hi), f32(x - hi)


LOG2E = f32(1 / math.log(2))
LN2_HI, LN2_LO = _split(math.log(2), 16)          # k * LN2_HI exact for |k| < 2^8
LOG2E_HI, LOG2E_LO = f32(1 / math.log(2)), f32(1 / math.log(2) - f32(1 / math.log(2)))
TWO_OVER_PI = f32(2 / math.pi)
SQRT2 = f32(math.sqrt(2))
D_LN2 = math.log(2)
D_LN2_HI = math.ldexp(math.floor(math.ldexp(math.frexp(D_LN2)[0], 32)), math.frexp(D_LN2)[1] - 32)
D_LN2_LO = D_LN2 - D_LN2_HI


def _pio2_parts() -> tuple[float, float, float]:
    # pi/2 to ~100 bits from its decimal expansion, split into three f32 parts.
    from fractions import Fraction
    pio2 = Fraction("1.57079632679489661923132169163975144209858469968755291048747229615390820314310")
    p1 = Fraction(f32(float(pio2)))
    p2 = Fraction(f32(float(pio2 - p1)))
    p3 = Fraction(f32(float(pio2 - p1 - p2)))
    return float(p1), float(p2), float(p3)


PIO2_1, PIO2_2, PIO2_3 = _pio2_parts()


class Ops:
    """The operations the sequences use. Values are opaque to the sequences."""

    # f32
    def c(self, x: float) -> Any: ...
    def add(self, a, b): ...
    def sub(self, a, b): ...
    def mul(self, a, b): ...
    def div(self, a, b): ...
    def fma(self, a, b, c): ...
    def rni(self, a): ...            # round to nearest even integral value, as f32
    def rzi(self, a): ...            # truncate to integral value, as f32
    def neg(self, a): ...            # sign bit flip
    def fabs(self, a): ...           # sign bit clear
    def copysign(self, sign, mag): ...
    def flt(self, a, b): ...         # ordered a < b -> pred
    def fgt(self, a, b): ...
    def feq(self, a, b): ...
    def isnan(self, a): ...
    def sel(self, p, a, b): ...      # p ? a : b for any value type
    # b32 integers
    def i(self, x: int): ...
    def iadd(self, a, b): ...
    def isub(self, a, b): ...
    def iand(self, a, b): ...
    def ior(self, a, b): ...
    def shl(self, a, n: int): ...
    def shr_s(self, a, n: int): ...
    def shr_u(self, a, n: int): ...
    def ieq(self, a, b): ...
    def ilt_u(self, a, b): ...
    def f2i(self, a): ...            # cvt.rzi.s32.f32 (a is integral here)
    def u2f(self, a): ...            # cvt.rn.f32.u32
    def u2f_signed(self, a): ...     # cvt.rn.f32.s32
    def fbits(self, a): ...
    def bitsf(self, a): ...
    # predicates
    def pand(self, a, b): ...
    def por(self, a, b): ...
    def pnot(self, a): ...
    # u64
    def mulwide(self, a, b): ...     # u32 * u32 -> u64
    def rem64(self, a, m): ...       # u64 % u32 -> u32 (m > 0)
    def l(self, x: int): ...
    def ladd(self, a, b): ...
    def land(self, a, b): ...
    def lor(self, a, b): ...
    def lshl(self, a, n): ...        # n: int or u32 value; shifts >= 64 give 0
    def lshr(self, a, n): ...
    def lge(self, a, b): ...
    def l2u(self, a): ...            # low 32 bits
    def l2d_signed(self, a): ...     # cvt.rn.f64.s64
    # control: run `fn` only where `p` holds; elsewhere the values are `defaults`
    def when(self, p, fn, defaults): ...
    # f64
    def dc(self, x: float): ...
    def dadd(self, a, b): ...
    def dsub(self, a, b): ...
    def dmul(self, a, b): ...
    def ddiv(self, a, b): ...
    def dlt(self, a, b): ...
    def dgt(self, a, b): ...
    def drni(self, a): ...
    def d2i(self, a): ...            # cvt.rzi.s32.f64
    def f2d(self, a): ...
    def d2f(self, a): ...            # cvt.rn.f32.f64


# ---------------------------------------------------------------- helpers


def _horner(m: Ops, x, coeffs: list[float]):
    """coeffs[0] + x*(coeffs[1] + x*(...)), highest degree last, with fma."""
    acc = m.c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = m.fma(acc, x, m.c(c))
    return acc


def _pow2i(m: Ops, k):
    """2^k as f32 for integer k in [-126, 127]."""
    return m.bitsf(m.shl(m.iadd(k, m.i(127)), 23))


def _scale(m: Ops, p, k):
    """p * 2^k for |k| <= 252, in two exact steps (only the last may round)."""
    k1 = m.shr_s(k, 1)
    k2 = m.isub(k, k1)
    return m.mul(m.mul(p, _pow2i(m, k1)), _pow2i(m, k2))


def _clamp(m: Ops, x, lo: float, hi: float):
    # compare-and-select keeps NaN (min/max would drop it)
    x = m.sel(m.flt(x, m.c(lo)), m.c(lo), x)
    return m.sel(m.fgt(x, m.c(hi)), m.c(hi), x)


_EXP_TAYLOR = [1.0 / math.factorial(n) for n in range(8)]
_EXP2_TAYLOR = [math.log(2) ** n / math.factorial(n) for n in range(8)]


# ---------------------------------------------------------------- exp, exp2


def exp(m: Ops, x):
    xc = _clamp(m, x, -104.0, 89.0)
    kf = m.rni(m.mul(xc, m.c(LOG2E)))
    r = m.fma(m.neg(kf), m.c(LN2_HI), xc)   # exact: k has < 9 bits, LN2_HI 16
    r = m.fma(m.neg(kf), m.c(LN2_LO), r)
    p = _horner(m, r, _EXP_TAYLOR)
    return _scale(m, p, m.f2i(kf))


def exp2(m: Ops, x):
    xc = _clamp(m, x, -152.0, 129.0)
    kf = m.rni(xc)
    r = m.sub(xc, kf)                        # exact
    p = _horner(m, r, _EXP2_TAYLOR)
    return _scale(m, p, m.f2i(kf))


# ---------------------------------------------------------------- log, log2


def _log_parts(m: Ops, x):
    """x = 2^e * (1 + f) with 1 + f in [sqrt(1/2), sqrt(2)); returns (e as f32, f, log1p(f))."""
    tiny = m.flt(x, m.c(2.0 ** -126))
    xs = m.sel(tiny, m.mul(x, m.c(2.0 ** 25)), x)
    bits = m.fbits(xs)
    e = m.isub(m.iand(m.shr_u(bits, 23), m.i(0xFF)), m.i(127))
    e = m.sel(tiny, m.isub(e, m.i(25)), e)
    mant = m.bitsf(m.ior(m.iand(bits, m.i(0x7FFFFF)), m.i(0x3F800000)))
    big = m.fgt(mant, m.c(SQRT2))
    mant = m.sel(big, m.mul(mant, m.c(0.5)), mant)
    e = m.sel(big, m.iadd(e, m.i(1)), e)
    f = m.sub(mant, m.c(1.0))                # exact (Sterbenz)
    s = m.div(f, m.add(m.c(2.0), f))
    t = m.mul(s, s)
    R = m.mul(t, _horner(m, t, [2.0 / (2 * n + 3) for n in range(5)]))
    hfsq = m.mul(m.mul(m.c(0.5), f), f)
    # log1p(f) = f - hfsq + s*(hfsq + R)
    corr = m.mul(s, m.add(hfsq, R))
    return m.u2f_signed(e), f, hfsq, corr


def _log_special(m: Ops, x, res):
    res = m.sel(m.feq(x, m.c(0.0)), m.c(-math.inf), res)
    res = m.sel(m.flt(x, m.c(0.0)), m.c(math.nan), res)
    res = m.sel(m.feq(x, m.c(math.inf)), m.c(math.inf), res)
    return m.sel(m.isnan(x), x, res)


def log(m: Ops, x):
    ef, f, hfsq, corr = _log_parts(m, x)
    # e*ln2_hi - ((hfsq - (corr + e*ln2_lo)) - f); e*LN2_HI is exact
    inner = m.sub(hfsq, m.fma(ef, m.c(LN2_LO), corr))
    res = m.fma(ef, m.c(LN2_HI), m.neg(m.sub(inner, f)))
    return _log_special(m, x, res)


def log2(m: Ops, x):
    ef, f, hfsq, corr = _log_parts(m, x)
    lg = m.add(m.sub(f, hfsq), corr)         # log1p(f), |lg| < 0.35
    res = m.fma(lg, m.c(LOG2E_HI), m.fma(lg, m.c(LOG2E_LO), ef))
    return _log_special(m, x, res)


# ---------------------------------------------------------------- sin, cos, tan

_SIN_TAYLOR = [(-1) ** (n + 1) / math.factorial(2 * n + 3) for n in range(5)]   # -1/3!, 1/5!, ...
_COS_TAYLOR = [(-1) ** (n + 1) / math.factorial(2 * n + 2) for n in range(6)]  # -1/2!, 1/4!, ...


def _two_over_pi_words(n: int = 8) -> list[int]:
    """Bits of 2/pi after the binary point, 32 at a time (pi by Machin's formula)."""
    prec = 32 * n + 64
    one = 1 << (prec + 16)

    def atan_inv(k: int) -> int:
        total, term, i, sign = 0, one // k, 1, 1
        while term:
            total += sign * (term // i)
            term //= k * k
            i += 2
            sign = -sign
        return total

    pi = 4 * (4 * atan_inv(5) - atan_inv(239))        # pi * 2^(prec+16)
    frac = (2 * one * (1 << (32 * n))) // pi            # 2/pi * 2^(32n)
    return [(frac >> (32 * (n - 1 - i))) & 0xFFFFFFFF for i in range(n)]


TWO_OVER_PI_WORDS = _two_over_pi_words()
BIG_ARGUMENT = 1e5


def _reduce_big(m: Ops, x):
    """Exact reduction for large |x| = mant * 2^E: x * 2/pi modulo 4 from a 128-bit window
    of 2/pi's bits (earlier bits only add multiples of 4), in integer arithmetic."""
    ax = m.fabs(x)
    bits = m.fbits(ax)
    mant = m.ior(m.iand(bits, m.i(0x7FFFFF)), m.i(0x800000))
    E = m.isub(m.shr_u(bits, 23), m.i(150))            # >= -7 here
    t = m.shr_s(m.iadd(E, m.i(29)), 5)
    i0 = m.sel(m.ieq(t, m.i(0)), m.i(0), m.isub(t, m.i(1)))   # window start, 0..3
    s = m.isub(E, m.shl(m.iadd(i0, m.i(1)), 5))         # weight of the window's last bit + 64

    def word(off: int):
        w = m.i(TWO_OVER_PI_WORDS[off + 3])
        for j in (2, 1, 0):
            w = m.sel(m.ieq(i0, m.i(j)), m.i(TWO_OVER_PI_WORDS[j + off]), w)
        return w

    # mant * (four words of 2/pi) as 32-bit limbs; the lowest limb only carries, and the
    # bits past the window weigh < 2^(s-72), under 2^-70
    q3, q2, q1, q0 = (m.mulwide(mant, word(o)) for o in (0, 1, 2, 3))
    lo32 = m.l(0xFFFFFFFF)
    u1 = m.ladd(m.lshr(q0, 32), m.land(q1, lo32))
    u2 = m.ladd(m.ladd(m.lshr(u1, 32), m.lshr(q1, 32)), m.land(q2, lo32))
    u3 = m.ladd(m.ladd(m.lshr(u2, 32), m.lshr(q2, 32)), m.land(q3, lo32))
    hi = m.lor(m.lshl(m.ladd(m.lshr(u3, 32), m.lshr(q3, 32)), 32), m.land(u3, lo32))
    lo = m.lor(m.lshl(m.land(u2, lo32), 32), m.land(u1, lo32))
    a = m.isub(m.i(2), s)                               # 0..41: bits [a, a+64) hold x*2/pi mod 4
    g = m.lor(m.lshr(lo, a), m.lshl(hi, m.isub(m.i(64), a)))
    g = m.sel(m.ieq(a, m.i(0)), lo, g)
    q = m.l2u(m.lshr(g, 62))
    frac = m.land(g, m.l((1 << 62) - 1))
    up = m.lge(frac, m.l(1 << 61))                      # round to the nearest quadrant
    q = m.sel(up, m.iadd(q, m.i(1)), q)
    frac = m.sel(up, m.ladd(frac, m.l((-(1 << 62)) & (2**64 - 1))), frac)
    r = m.d2f(m.dmul(m.l2d_signed(frac), m.dc(math.pi / 2 * 2.0 ** -62)))
    negx = m.flt(x, m.c(0.0))
    return [m.sel(negx, m.neg(r), r), m.sel(negx, m.isub(m.i(0), q), q)]


def _reduce(m: Ops, x):
    """r = x - k*pi/2 (three-part pi/2 for |x| <= 1e5, exact integer reduction above),
    q = k mod 4; small |x| passes through exactly."""
    kf = m.rni(m.mul(x, m.c(TWO_OVER_PI)))
    nk = m.neg(kf)
    r = m.fma(nk, m.c(PIO2_1), x)
    r = m.fma(nk, m.c(PIO2_2), r)
    r = m.fma(nk, m.c(PIO2_3), r)
    r = m.sel(m.feq(kf, m.c(0.0)), x, r)    # keeps -0 and tiny arguments exact
    q = m.f2i(kf)
    ax = m.fabs(x)
    big = m.pand(m.fgt(ax, m.c(BIG_ARGUMENT)), m.flt(ax, m.c(math.inf)))
    r, q = m.when(big, lambda: _reduce_big(m, x), [r, q])
    return r, m.iand(q, m.i(3))


def _sincos_r(m: Ops, r):
    z = m.mul(r, r)
    s = m.fma(m.mul(r, z), _horner(m, z, _SIN_TAYLOR), r)
    c = m.fma(z, _horner(m, z, _COS_TAYLOR), m.c(1.0))
    return s, c


def _quadrant(m: Ops, q, vals):
    """vals[q] for q in 0..3."""
    lo = m.sel(m.ieq(m.iand(q, m.i(1)), m.i(0)), vals[0], vals[1])
    hi = m.sel(m.ieq(m.iand(q, m.i(1)), m.i(0)), vals[2], vals[3])
    return m.sel(m.ilt_u(q, m.i(2)), lo, hi)


def sin(m: Ops, x):
    r, q = _reduce(m, x)
    s, c = _sincos_r(m, r)
    return _quadrant(m, q, [s, c, m.neg(s), m.neg(c)])


def cos(m: Ops, x):
    r, q = _reduce(m, x)
    s, c = _sincos_r(m, r)
    return _quadrant(m, q, [c, m.neg(s), m.neg(c), s])


def tan(m: Ops, x):
    r, q = _reduce(m, x)
    s, c = _sincos_r(m, r)
    even = m.ieq(m.iand(q, m.i(1)), m.i(0))
    return m.sel(even, m.div(s, c), m.neg(m.div(c, s)))


# ---------------------------------------------------------------- pow (through f64)

_D_LOG_SERIES = [2.0 / (2 * n + 3) for n in range(8)]
_D_EXP_TAYLOR = [1.0 / math.factorial(n) for n in range(13)]


def _dhorner(m: Ops, x, coeffs: list[float]):
    acc = m.dc(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = m.dadd(m.dmul(acc, x), m.dc(c))
    return acc


def pow(m: Ops, x, y):
    ax = m.fabs(x)
    # log|x| in f64: exponent and significand split in f32 (exact), series in f64
    tiny = m.flt(ax, m.c(2.0 ** -126))
    xs = m.sel(tiny, m.mul(ax, m.c(2.0 ** 25)), ax)
    bits = m.fbits(xs)
    e = m.isub(m.iand(m.shr_u(bits, 23), m.i(0xFF)), m.i(127))
    e = m.sel(tiny, m.isub(e, m.i(25)), e)
    mant = m.bitsf(m.ior(m.iand(bits, m.i(0x7FFFFF)), m.i(0x3F800000)))
    big = m.fgt(mant, m.c(SQRT2))
    mant = m.sel(big, m.mul(mant, m.c(0.5)), mant)
    e = m.sel(big, m.iadd(e, m.i(1)), e)
    f = m.dsub(m.f2d(mant), m.dc(1.0))
    s = m.ddiv(f, m.dadd(m.dc(2.0), f))
    t = m.dmul(s, s)
    R = m.dmul(t, _dhorner(m, t, _D_LOG_SERIES))
    hfsq = m.dmul(m.dmul(m.dc(0.5), f), f)
    lg1p = m.dsub(f, m.dsub(hfsq, m.dmul(s, m.dadd(hfsq, R))))
    ed = m.f2d(m.u2f_signed(e))
    L = m.dadd(m.dmul(ed, m.dc(D_LN2)), lg1p)
    L = m.sel(m.feq(ax, m.c(0.0)), m.dc(-math.inf), L)
    L = m.sel(m.feq(ax, m.c(math.inf)), m.dc(math.inf), L)
    # exp(y * L) in f64, clamped so that 2^k stays representable; f32 rounding at the end
    tt = m.dmul(m.f2d(y), L)
    tt = m.sel(m.dlt(tt, m.dc(-150.0)), m.dc(-150.0), tt)
    tt = m.sel(m.dgt(tt, m.dc(150.0)), m.dc(150.0), tt)
    kd = m.drni(m.dmul(tt, m.dc(1 / D_LN2)))
    r = m.dsub(m.dsub(tt, m.dmul(kd, m.dc(D_LN2_HI))), m.dmul(kd, m.dc(D_LN2_LO)))
    p = _dhorner(m, r, _D_EXP_TAYLOR)
    k = m.d2i(kd)
    k1 = m.shr_s(k, 1)
    k2 = m.isub(k, k1)
    mag = m.d2f(m.dmul(m.dmul(p, m.f2d(_pow2i(m, k1))), m.f2d(_pow2i(m, k2))))
    # IEEE/C99 pow special cases
    yint = m.feq(m.rni(y), y)
    yodd = m.pand(m.pand(yint, m.flt(m.fabs(y), m.c(2.0 ** 24))),
                  m.ieq(m.iand(m.f2i(m.sel(yint, y, m.c(0.0))), m.i(1)), m.i(1)))
    neg = m.flt(x, m.c(0.0))
    negz = m.pand(m.feq(x, m.c(0.0)), m.ieq(m.iand(m.fbits(x), m.i(0x80000000)), m.i(0x80000000)))
    res = m.sel(m.pand(m.por(neg, negz), yodd), m.neg(mag), mag)
    finite_neg = m.pand(neg, m.flt(m.c(-math.inf), x))
    res = m.sel(m.pand(finite_neg, m.pnot(yint)), m.c(math.nan), res)
    res = m.sel(m.por(m.isnan(x), m.isnan(y)), m.c(math.nan), res)
    one = m.por(m.feq(x, m.c(1.0)), m.pand(m.feq(x, m.c(-1.0)), m.feq(m.fabs(y), m.c(math.inf))))
    res = m.sel(m.por(one, m.feq(y, m.c(0.0))), m.c(1.0), res)
    return res


# ---------------------------------------------------------------- fmod (exact)


def fmod(m: Ops, x, y):
    """Truncated remainder, exact: |x| = mx*2^ex, |y| = my*2^ey (integer significands), so
    |x| mod |y| = ((mx * 2^(ex-ey)) mod my) * 2^ey, with 2^(ex-ey) mod my by square and
    multiply over the 9 bits of ex-ey (at most 277)."""
    bx = m.iand(m.fbits(x), m.i(0x7FFFFFFF))
    by = m.iand(m.fbits(y), m.i(0x7FFFFFFF))

    def parts(b):
        ex = m.shr_u(b, 23)
        mx = m.iand(b, m.i(0x7FFFFF))
        sub = m.ieq(ex, m.i(0))
        return m.sel(sub, m.i(1), ex), m.sel(sub, mx, m.ior(mx, m.i(0x800000)))

    ex, mx = parts(bx)
    ey, my = parts(by)
    small = m.ilt_u(bx, by)                   # |x| < |y| (also y = inf)
    d = m.sel(small, m.i(0), m.isub(ex, ey))
    myd = m.sel(m.ieq(my, m.i(0)), m.i(1), my)  # y = 0 handled below; avoid % 0
    p = m.rem64(m.mulwide(m.i(1), m.i(1)), myd)
    for bit in range(8, -1, -1):
        p = m.rem64(m.mulwide(p, p), myd)
        twice = m.rem64(m.mulwide(p, m.i(2)), myd)
        p = m.sel(m.ieq(m.iand(m.shr_u(d, bit), m.i(1)), m.i(1)), twice, p)
    rm = m.rem64(m.mulwide(mx, p), myd)
    a = m.isub(ey, m.i(150))
    a1 = m.shr_s(a, 1)
    mag = m.mul(m.mul(m.u2f(rm), _pow2i(m, a1)), _pow2i(m, m.isub(a, a1)))
    res = m.copysign(x, mag)
    res = m.sel(small, x, res)
    bad = m.por(m.por(m.ieq(by, m.i(0)), m.isnan(y)),
                m.por(m.isnan(x), m.ieq(bx, m.i(0x7F800000))))
    return m.sel(bad, m.c(math.nan), res)


FUNCTIONS: dict[str, Callable[..., Any]] = {"exp": exp, "exp2": exp2, "log": log, "log2": log2, "sin": sin, "cos": cos,
             "tan": tan, "pow": pow}


# ---------------------------------------------------------------- numpy evaluation


class NumpyOps(Ops):
    """Evaluates a sequence on arrays with PTX's exact semantics (see module docstring)."""

    def __init__(self, shape):
        self.shape = shape

    def _full(self, x, dt):
        return np.full(self.shape, x, dtype=dt)

    def c(self, x):
        return self._full(x, np.float32)

    def add(self, a, b):
        return (a + b).astype(np.float32)

    def sub(self, a, b):
        return (a - b).astype(np.float32)

    def mul(self, a, b):
        return (a * b).astype(np.float32)

    def div(self, a, b):
        with np.errstate(all="ignore"):
            return (a / b).astype(np.float32)

    def fma(self, a, b, c):
        with np.errstate(all="ignore"):
            return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)

    def rni(self, a):
        return np.rint(a).astype(np.float32)

    def rzi(self, a):
        return np.trunc(a).astype(np.float32)

    def neg(self, a):
        return (a.view(np.uint32) ^ np.uint32(0x80000000)).view(np.float32)

    def fabs(self, a):
        return (a.view(np.uint32) & np.uint32(0x7FFFFFFF)).view(np.float32)

    def copysign(self, sign, mag):
        return ((mag.view(np.uint32) & np.uint32(0x7FFFFFFF)) |
                (sign.view(np.uint32) & np.uint32(0x80000000))).view(np.float32)

    def flt(self, a, b):
        return a < b

    def fgt(self, a, b):
        return a > b

    def feq(self, a, b):
        return a == b

    def isnan(self, a):
        return np.isnan(a)

    def sel(self, p, a, b):
        return np.where(p, a, b).astype(a.dtype)

    def i(self, x):
        return self._full(x & 0xFFFFFFFF, np.uint32)

    def iadd(self, a, b):
        return (a + b).astype(np.uint32)

    def isub(self, a, b):
        return (a - b).astype(np.uint32)

    def iand(self, a, b):
        return a & b

    def ior(self, a, b):
        return a | b

    def shl(self, a, n):
        return (a << np.uint32(n)).astype(np.uint32)

    def shr_s(self, a, n):
        return (a.view(np.int32) >> np.int32(n)).view(np.uint32)

    def shr_u(self, a, n):
        return a >> np.uint32(n)

    def ieq(self, a, b):
        return a == b

    def ilt_u(self, a, b):
        return a < b

    def f2i(self, a):
        with np.errstate(all="ignore"):
            v = np.nan_to_num(np.trunc(a.astype(np.float64)), nan=0.0)
        return np.clip(v, -2**31, 2**31 - 1).astype(np.int64).astype(np.int32).view(np.uint32)

    def u2f(self, a):
        return a.astype(np.float32)

    def u2f_signed(self, a):
        return a.view(np.int32).astype(np.float32)

    def fbits(self, a):
        return a.view(np.uint32)

    def bitsf(self, a):
        return a.view(np.float32)

    def pand(self, a, b):
        return a & b

    def por(self, a, b):
        return a | b

    def pnot(self, a):
        return ~a

    def mulwide(self, a, b):
        return a.astype(np.uint64) * b.astype(np.uint64)

    def rem64(self, a, m):
        return (a % m.astype(np.uint64)).astype(np.uint32)

    def l(self, x):
        return self._full(x, np.uint64)

    def ladd(self, a, b):
        return a + b

    def land(self, a, b):
        return a & b

    def lor(self, a, b):
        return a | b

    def _amount(self, n):
        n = np.asarray(n, dtype=np.uint64)
        return np.minimum(n, np.uint64(63)), n >= 64

    def lshl(self, a, n):
        k, over = self._amount(n)
        return np.where(over, np.uint64(0), a << k).astype(np.uint64)

    def lshr(self, a, n):
        k, over = self._amount(n)
        return np.where(over, np.uint64(0), a >> k).astype(np.uint64)

    def lge(self, a, b):
        return a >= b

    def l2u(self, a):
        return (a & np.uint64(0xFFFFFFFF)).astype(np.uint32)

    def l2d_signed(self, a):
        return a.view(np.int64).astype(np.float64)

    def when(self, p, fn, defaults):
        return [np.where(p, v, d).astype(d.dtype) for v, d in zip(fn(), defaults)]

    def dc(self, x):
        return self._full(x, np.float64)

    def dadd(self, a, b):
        with np.errstate(all="ignore"):
            return a + b

    def dsub(self, a, b):
        with np.errstate(all="ignore"):
            return a - b

    def dmul(self, a, b):
        with np.errstate(all="ignore"):
            return a * b

    def ddiv(self, a, b):
        with np.errstate(all="ignore"):
            return a / b

    def dlt(self, a, b):
        return a < b

    def dgt(self, a, b):
        return a > b

    def drni(self, a):
        return np.rint(a)

    def d2i(self, a):
        return np.trunc(a).astype(np.int64).astype(np.int32).view(np.uint32)

    def f2d(self, a):
        return a.astype(np.float64)

    def d2f(self, a):
        with np.errstate(all="ignore"):
            return a.astype(np.float32)


def evaluate(name: str, *args: np.ndarray) -> np.ndarray:
    """Run the sequence `name` (a FUNCTIONS key or "fmod") on f32 arrays."""
    args = tuple(np.asarray(a, dtype=np.float32) for a in args)
    shape = np.broadcast(*args).shape
    args = tuple(np.broadcast_to(a, shape).copy() for a in args)
    fn = fmod if name == "fmod" else FUNCTIONS[name]
    with np.errstate(all="ignore"):
        return fn(NumpyOps(shape), *args)


# ---------------------------------------------------------------- PTX rendering


def fimm(x: float) -> str:
    """An f32 immediate, exact: 0f followed by the bits in hex."""
    return "0f%08X" % int(np.array(x, dtype=np.float32).view(np.uint32))


def dimm(x: float) -> str:
    return "0d%016X" % int(np.array(x, dtype=np.float64).view(np.uint64))


class PtxOps(Ops):
    """Renders each operation as PTX through a builder with `reg(kind)`, `op(text)` and
    `kind_of(value)` (kinds: f = .f32, r = .b32, p = .pred, rd = .b64, fd = .f64)."""

    def __init__(self, b):
        self.b = b

    def _un(self, kind: str, text: str, *srcs) -> str:
        d = self.b.reg(kind)
        self.b.op(text.format(d, *srcs))
        return d

    def _reg(self, v: str, kind: str) -> str:
        """Immediates are not allowed everywhere (cvt, mov.b32 between kinds): materialise."""
        if v.startswith("%"):
            return v
        d = self.b.reg(kind)
        self.b.op(f"mov.{ {'f': 'f32', 'r': 'b32', 'fd': 'f64', 'rd': 'b64'}[kind] } {d}, {v};")
        return d

    def c(self, x):
        return fimm(x)

    def add(self, a, b):
        return self._un("f", "add.rn.f32 {}, {}, {};", a, b)

    def sub(self, a, b):
        return self._un("f", "sub.rn.f32 {}, {}, {};", a, b)

    def mul(self, a, b):
        return self._un("f", "mul.rn.f32 {}, {}, {};", a, b)

    def div(self, a, b):
        return self._un("f", "div.rn.f32 {}, {}, {};", a, b)

    def fma(self, a, b, c):
        return self._un("f", "fma.rn.f32 {}, {}, {}, {};", a, b, c)

    def rni(self, a):
        return self._un("f", "cvt.rni.f32.f32 {}, {};", self._reg(a, "f"))

    def rzi(self, a):
        return self._un("f", "cvt.rzi.f32.f32 {}, {};", self._reg(a, "f"))

    def neg(self, a):
        return self._un("f", "xor.b32 {}, {}, -2147483648;", self._reg(a, "f"))

    def fabs(self, a):
        return self._un("f", "and.b32 {}, {}, 2147483647;", self._reg(a, "f"))

    def copysign(self, sign, mag):
        return self._un("f", "copysign.f32 {}, {}, {};", self._reg(sign, "f"), self._reg(mag, "f"))

    def flt(self, a, b):
        return self._un("p", "setp.lt.f32 {}, {}, {};", self._reg(a, "f"), b)

    def fgt(self, a, b):
        return self._un("p", "setp.gt.f32 {}, {}, {};", self._reg(a, "f"), b)

    def feq(self, a, b):
        return self._un("p", "setp.eq.f32 {}, {}, {};", self._reg(a, "f"), b)

    def isnan(self, a):
        a = self._reg(a, "f")
        return self._un("p", "setp.nan.f32 {}, {}, {};", a, a)

    def sel(self, p, a, b):
        kind = self.b.kind_of(a) if a.startswith("%") else self.b.kind_of(b)
        if kind == "p":
            t1 = self._un("p", "and.pred {}, {}, {};", p, a)
            t2 = self._un("p", "and.pred {}, !{}, {};", p, b)
            return self._un("p", "or.pred {}, {}, {};", t1, t2)
        ty = {"f": "f32", "r": "b32", "fd": "f64", "rd": "b64"}[kind]
        return self._un(kind, f"selp.{ty} {{}}, {{}}, {{}}, {{}};", a, b, p)

    def i(self, x):
        return str(x & 0xFFFFFFFF)

    def iadd(self, a, b):
        return self._un("r", "add.s32 {}, {}, {};", a, b)

    def isub(self, a, b):
        return self._un("r", "sub.s32 {}, {}, {};", a, b)

    def iand(self, a, b):
        return self._un("r", "and.b32 {}, {}, {};", a, b)

    def ior(self, a, b):
        return self._un("r", "or.b32 {}, {}, {};", a, b)

    def shl(self, a, n):
        return self._un("r", f"shl.b32 {{}}, {{}}, {n};", a)

    def shr_s(self, a, n):
        return self._un("r", f"shr.s32 {{}}, {{}}, {n};", a)

    def shr_u(self, a, n):
        return self._un("r", f"shr.u32 {{}}, {{}}, {n};", a)

    def ieq(self, a, b):
        return self._un("p", "setp.eq.s32 {}, {}, {};", self._reg(a, "r"), b)

    def ilt_u(self, a, b):
        return self._un("p", "setp.lt.u32 {}, {}, {};", self._reg(a, "r"), b)

    def f2i(self, a):
        return self._un("r", "cvt.rzi.s32.f32 {}, {};", self._reg(a, "f"))

    def u2f(self, a):
        return self._un("f", "cvt.rn.f32.u32 {}, {};", self._reg(a, "r"))

    def u2f_signed(self, a):
        return self._un("f", "cvt.rn.f32.s32 {}, {};", self._reg(a, "r"))

    def fbits(self, a):
        return self._un("r", "mov.b32 {}, {};", self._reg(a, "f"))

    def bitsf(self, a):
        return self._un("f", "mov.b32 {}, {};", self._reg(a, "r"))

    def pand(self, a, b):
        return self._un("p", "and.pred {}, {}, {};", a, b)

    def por(self, a, b):
        return self._un("p", "or.pred {}, {}, {};", a, b)

    def pnot(self, a):
        return self._un("p", "not.pred {}, {};", a)

    def mulwide(self, a, b):
        return self._un("rd", "mul.wide.u32 {}, {}, {};", self._reg(a, "r"), b)

    def rem64(self, a, m):
        m64 = self._un("rd", "cvt.u64.u32 {}, {};", self._reg(m, "r"))
        r64 = self._un("rd", "rem.u64 {}, {}, {};", a, m64)
        return self._un("r", "cvt.u32.u64 {}, {};", r64)

    def l(self, x):
        return str(x)

    def ladd(self, a, b):
        return self._un("rd", "add.s64 {}, {}, {};", a, b)

    def land(self, a, b):
        return self._un("rd", "and.b64 {}, {}, {};", a, b)

    def lor(self, a, b):
        return self._un("rd", "or.b64 {}, {}, {};", a, b)

    def lshl(self, a, n):
        return self._un("rd", "shl.b64 {}, {}, {};", self._reg(a, "rd"), n)

    def lshr(self, a, n):
        return self._un("rd", "shr.u64 {}, {}, {};", self._reg(a, "rd"), n)

    def lge(self, a, b):
        return self._un("p", "setp.ge.u64 {}, {}, {};", self._reg(a, "rd"), b)

    def l2u(self, a):
        return self._un("r", "cvt.u32.u64 {}, {};", self._reg(a, "rd"))

    def l2d_signed(self, a):
        return self._un("fd", "cvt.rn.f64.s64 {}, {};", self._reg(a, "rd"))

    def when(self, p, fn, defaults):
        outs = [self._reg(d, self.b.kind_of(d)) for d in defaults]
        outs = [self._copy(o) for o in outs]
        skip = self.b.label("skip")
        self.b.op(f"@!{p} bra {skip};")
        for o, v in zip(outs, fn()):
            self.b.op(f"mov.{ {'f': 'f32', 'r': 'b32', 'fd': 'f64', 'rd': 'b64'}[self.b.kind_of(o)] } {o}, {v};")
        self.b.place(skip)
        return outs

    def _copy(self, v):
        kind = self.b.kind_of(v)
        d = self.b.reg(kind)
        self.b.op(f"mov.{ {'f': 'f32', 'r': 'b32', 'fd': 'f64', 'rd': 'b64'}[kind] } {d}, {v};")
        return d

    def dc(self, x):
        return dimm(x)

    def dadd(self, a, b):
        return self._un("fd", "add.rn.f64 {}, {}, {};", a, b)

    def dsub(self, a, b):
        return self._un("fd", "sub.rn.f64 {}, {}, {};", a, b)

    def dmul(self, a, b):
        return self._un("fd", "mul.rn.f64 {}, {}, {};", a, b)

    def ddiv(self, a, b):
        return self._un("fd", "div.rn.f64 {}, {}, {};", a, b)

    def dlt(self, a, b):
        return self._un("p", "setp.lt.f64 {}, {}, {};", self._reg(a, "fd"), b)

    def dgt(self, a, b):
        return self._un("p", "setp.gt.f64 {}, {}, {};", self._reg(a, "fd"), b)

    def drni(self, a):
        return self._un("fd", "cvt.rni.f64.f64 {}, {};", self._reg(a, "fd"))

    def d2i(self, a):
        return self._un("r", "cvt.rzi.s32.f64 {}, {};", self._reg(a, "fd"))

    def f2d(self, a):
        return self._un("fd", "cvt.f64.f32 {}, {};", self._reg(a, "f"))

    def d2f(self, a):
        return self._un("f", "cvt.rn.f32.f64 {}, {};", self._reg(a, "fd"))
