"""The one f32 math library: exp, exp2, log, log2, sin, cos, tan, pow, tanh, atan2 and hypot
as sequences of operations whose results are the same bits on every target.

Each function is written once against `Ops`, an interface of primitive operations, and
rendered by each target: PTX instructions inline (codegen/ptx/math.py), numpy arrays for
the CPU oracle (codegen/cpu/math.py), and a helper function per used function for WGSL
and Slang (codegen/math_text.py). The primitives are chosen so that every target computes
them identically:

- f32 `add sub mul div`, each correctly rounded (round to nearest even) on every target
  (WGSL pins them against fusion and uses its exact division, see codegen/wgsl/emitter.py);
  no `fma` (WGSL's exact one costs ~100 instructions), no f64 (WGSL has none);
- sign-bit flips, bit casts, compares and selects, which never round;
- `sqrt`, correctly rounded (PTX `sqrt.rn`, WGSL's integer `gi_sqrt_f32`, C's and numpy's);
- u32 integer arithmetic (wrapping), shifts by amounts in [0, 31], `mulhi_u`;
- conversions of integers below 2^24 in magnitude, which are exact.

Extra precision comes from double-f32 arithmetic built from these: `two_sum` (Knuth),
`two_prod` (Dekker, the 4097 split), so no sequence depends on an fma or a wider type.
Special values are decided on the bits (never by float compares, which flush subnormals on
some drivers), and no subnormal intermediate reaches a result: subnormal inputs are
normalised in integer arithmetic and subnormal results are rounded from the bits (or,
where `Ops.exact_subnormal_mul` says the target's multiply rounds them itself, by two
multiplies with the same bits: `_ldexp`).

Error bounds, in ulp of the correctly rounded f32 result (asserted by tests/test_mathlib.py
against f64 references over fresh sweeps; worst measured over 2M inputs in brackets;
subnormal results are rounded twice and excepted):

    exp, exp2    <= 1 (0.78)  Cody-Waite reduction by ln2 (k exact), exp(r) with 1 + r exact;
                              exp below |x| < 86 scales by adding k to the exponent field, the
                              rest (and exp2) by _ldexp on a branch (`Ops.when`)
    log, log2    <= 1 (0.50)  exponent split, log(1 + f) = 2 atanh(f / (2 + f)) in double-f32
    sin, cos     <= 1 (0.78)  exact integer reduction by pi/2 (2/pi as 32-bit words) for
                              every |x| >= pi/4, the remainder carried as r + r_lo
    tan          <= 1 (0.92)  the same reduction; the quotient of the sin/cos pairs, corrected
    pow          <= 1 (0.76)  log2|x| in double-f32, y * log2|x| exact (Dekker), exp2 of hi +
                              lo; Rust's (IEEE) special cases and sign rules on the bits
    tanh         <= 1 (0.59)  the series below 1/4, else 1 - 2 / (e^2|x| + 1) in double-f32
    atan2        <= 1 (0.79)  min/max from the mantissas and the exponent difference, the
                              series below tan(pi/8), else pi/4 + atan((a - b) / (a + b)); the
                              octant's constants in double-f32; C99's zeros and infinities
    hypot        <= 1 (0.50)  both scaled by the larger's exponent, the sum of squares in
                              double-f32, sqrt with one correction step, scaled back on the bits

The coefficients are Taylor coefficients (1/n!, 2/(2n+1), tanh's from Bernoulli numbers),
derived here, not tables; exp's are economised by Chebyshev polynomials (`_economize`).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Any, Callable

__all__ = ["Ops", "FUNCTIONS", "ARITY", "exp", "exp2", "log", "log2", "sin", "cos", "tan", "pow", "tanh", "atan2",
           "hypot", "f32"]


def f32(x: float) -> float:
    """x rounded to the nearest f32 (Python floats are f64)."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # beyond the largest f32 (by more than half an ulp, near enough)
        return math.copysign(math.inf, x)


def _top(x: float, bits: int) -> float:
    """x truncated to its `bits` leading significant bits."""
    if x == 0.0:
        return 0.0
    m, e = math.frexp(x)
    return math.ldexp(math.floor(m * 2 ** bits), e - bits)


def _dd(x: float) -> tuple[float, float]:
    """x as an unevaluated sum hi + lo of two f32 (about 48 bits)."""
    hi = f32(x)
    return hi, f32(x - hi)


MAGIC = 12582912.0  # 1.5 * 2^23: t + MAGIC - MAGIC is t rounded to an integer, |t| < 2^22
LN2 = math.log(2)
LN2_HI = _top(LN2, 16)  # k * LN2_HI is exact for |k| < 2^8
LN2_LO = f32(LN2 - LN2_HI)
LN2_H, LN2_L = _dd(LN2)
LOG2E = f32(1 / LN2)
LOG2E_H, LOG2E_L = _dd(1 / LN2)
PIO2_H, PIO2_L = _dd(math.pi / 2)
TWO_THIRDS_H, TWO_THIRDS_L = _dd(2 / 3)
SQRT2 = f32(math.sqrt(2))
PIO4 = f32(math.pi / 4)
NAN_BITS, INF_BITS, ABS_MASK, SIGN = 0x7FC00000, 0x7F800000, 0x7FFFFFFF, 0x80000000


class Ops:
    """The primitive operations. Values are opaque to the sequences: f32 values, u32 values
    (integers are bit patterns; `_s` operations read them as i32) and predicates."""

    # Whether `mul` rounds a subnormal result correctly on every device the target runs on
    # (PTX's mul.rn.f32 without .ftz, numpy). WGSL and Slang may meet a flushing driver.
    exact_subnormal_mul = False

    # f32
    def c(self, x: float) -> Any: ...  # an f32 constant (x is rounded to f32)
    def add(self, a, b): ...
    def sub(self, a, b): ...
    def mul(self, a, b): ...
    def div(self, a, b): ...
    def sqrt(self, a): ...                   # correctly rounded (every target's own, as `length` uses)
    def neg(self, a): ...                    # sign bit flipped
    def fabs(self, a): ...                   # sign bit cleared
    def flt(self, a, b): ...                 # ordered a < b
    def fgt(self, a, b): ...
    def sel(self, p, a, b): ...              # p ? a : b, for any kind of value
    # u32
    def i(self, x: int): ...
    def iadd(self, a, b): ...
    def isub(self, a, b): ...
    def imul(self, a, b): ...                # low 32 bits
    def iand(self, a, b): ...
    def ior(self, a, b): ...
    def ixor(self, a, b): ...
    def shl(self, a, n): ...                 # n: an int or a u32 value, in [0, 31]
    def shr_u(self, a, n): ...
    def shr_s(self, a, n): ...
    def ieq(self, a, b): ...
    def ilt_u(self, a, b): ...
    def ilt_s(self, a, b): ...
    def u2f(self, a): ...                    # exact: a < 2^24
    def i2f(self, a): ...                    # exact: |a| < 2^24 as i32
    def udiv(self, a, b): ...                # a / b, b != 0 (exact on every target)
    def urem(self, a, b): ...                # a % b, b != 0
    def f2i_trunc(self, a): ...              # a truncated toward zero, as i32 bits: |a| < 2^31
    def f2u_trunc(self, a): ...              # a truncated toward zero, as u32: -1 < a < 2^32
    def fbits(self, a): ...
    def bitsf(self, a): ...
    # predicates
    def pand(self, a, b): ...
    def por(self, a, b): ...
    def pnot(self, a): ...

    # control: `fn()` only matters where `p` holds (elsewhere the values are `defaults`); a
    # renderer may run it everywhere and select, or branch around it
    def when(self, p, fn: Callable[[], list], defaults: list): ...

    # derived operations; a renderer may override them with one instruction
    def isnan(self, a):
        return self.ilt_u(self.i(INF_BITS), self.iand(self.fbits(a), self.i(ABS_MASK)))

    def sub_exact_product(self, x, a, c: float):
        """x - a * c where the caller guarantees that a * c is exact in f32: then one fused
        multiply-add rounds the same difference once, so a renderer may use one."""
        return self.sub(x, self.mul(a, self.c(c)))

    def big_or_nan(self, a, c: float):
        """|a| >= c or a is NaN (c a positive normal f32), decided on the bits."""
        return self.pnot(self.ilt_u(self.iand(self.fbits(a), self.i(ABS_MASK)), self.i(_f32_bits(c))))

    def u2f_rn(self, a):
        """Any u32 to the nearest f32 (ties to even): both 16-bit halves convert exactly,
        scaling the high one is exact, and the one addition rounds correctly."""
        hi = self.mul(self.u2f(self.shr_u(a, 16)), self.c(65536.0))
        return self.add(hi, self.u2f(self.iand(a, self.i(0xFFFF))))

    def i2f_rn(self, a):
        """Any i32 (as bits) to the nearest f32: |a| as u32, then the sign bit."""
        s = self.shr_s(a, 31)                                   # 0 or all ones
        mag = self.u2f_rn(self.isub(self.ixor(a, s), s))        # |i32::MIN| = 2^31 as u32
        return self.bitsf(self.ior(self.fbits(mag), self.iand(s, self.i(SIGN))))

    def flt_exact(self, a, b):
        """IEEE a < b decided on the bits: subnormals compare exactly (some drivers flush
        them in float compares), -0 == +0, a NaN operand gives false."""
        ka, kb = _order_key(self, a), _order_key(self, b)
        return self.pand(self.ilt_s(ka, kb), self.pnot(self.por(self.isnan(a), self.isnan(b))))

    def mulhi_u(self, a, b):
        """High 32 bits of a * b, from 16-bit limbs (every partial sum fits in 32 bits)."""
        m16 = self.i(0xFFFF)
        a0, a1 = self.iand(a, m16), self.shr_u(a, 16)
        b0, b1 = self.iand(b, m16), self.shr_u(b, 16)
        lo = self.imul(a0, b0)
        mid1 = self.imul(a1, b0)
        mid2 = self.imul(a0, b1)
        # bits 16.. of lo + mid1 + mid2 (each term < 2^32, their 16-bit tails summed first)
        t = self.iadd(self.iadd(self.shr_u(lo, 16), self.iand(mid1, m16)), self.iand(mid2, m16))
        hi = self.iadd(self.imul(a1, b1), self.iadd(self.shr_u(mid1, 16), self.shr_u(mid2, 16)))
        return self.iadd(hi, self.shr_u(t, 16))


def _order_key(m: Ops, x):
    """x's bits as an i32 ordered as the floats are: sign-magnitude to two's complement,
    so -0 and +0 both map to 0."""
    b = m.fbits(x)
    s = m.shr_s(b, 31)
    return m.isub(m.ixor(m.iand(b, m.i(ABS_MASK)), s), s)


ARITY = {"exp": 1, "exp2": 1, "log": 1, "log2": 1, "sin": 1, "cos": 1, "tan": 1, "pow": 2, "tanh": 1, "atan2": 2,
         "hypot": 2}


# ---------------------------------------------------------------- double-f32 building blocks


def two_sum(m: Ops, a, b):
    """(s, e) with s = fl(a + b) and s + e = a + b exactly (Knuth, no ordering needed)."""
    s = m.add(a, b)
    bb = m.sub(s, a)
    return s, m.add(m.sub(a, m.sub(s, bb)), m.sub(b, bb))


def fast_two_sum(m: Ops, a, b):
    """As two_sum, for |a| >= |b| (or a = 0)."""
    s = m.add(a, b)
    return s, m.sub(b, m.sub(s, a))


def _split(m: Ops, a):
    """Veltkamp: a = hi + lo exactly, each with at most 12 significant bits (|a| < 2^115)."""
    c = m.mul(m.c(4097.0), a)
    hi = m.sub(c, m.sub(c, a))
    return hi, m.sub(a, hi)


def _split_const(x: float) -> tuple[float, float]:
    hi = _top(x, 12)
    return hi, x - hi


def two_prod(m: Ops, a, b, b_const: float | None = None):
    """(p, e) with p = fl(a * b) and p + e = a * b exactly (Dekker). Pass the constant as
    `b_const` to split it at compile time."""
    if b_const is not None:
        b = m.c(b_const)
        bh, bl = (m.c(v) for v in _split_const(b_const))
    else:
        bh, bl = _split(m, b)
    p = m.mul(a, b)
    ah, al = _split(m, a)
    e = m.add(m.add(m.add(m.sub(m.mul(ah, bh), p), m.mul(ah, bl)), m.mul(al, bh)), m.mul(al, bl))
    return p, e


def _horner(m: Ops, x, coeffs: list[float]):
    """coeffs[0] + x*(coeffs[1] + x*(...)), each step a rounded mul and add."""
    acc = m.c(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        acc = m.add(m.mul(acc, x), m.c(c))
    return acc


def _rint_small(m: Ops, t):
    """(t rounded to the nearest integer (ties to even), that integer as i32), |t| < 2^22."""
    big = m.add(t, m.c(MAGIC))
    return m.sub(big, m.c(MAGIC)), m.isub(m.fbits(big), m.i(0x4B400000))


def _clamp(m: Ops, x, lo: float, hi: float):
    # compare-and-select keeps NaN (the caller selects on the input's NaN bits anyway)
    x = m.sel(m.flt(x, m.c(lo)), m.c(lo), x)
    return m.sel(m.fgt(x, m.c(hi)), m.c(hi), x)


def _abs_bits(m: Ops, x):
    return m.iand(m.fbits(x), m.i(ABS_MASK))


def _ldexp(m: Ops, p, k, small_k: bool = False):
    """p * 2^k for p in [0.5, 2): correctly rounded (to nearest even), overflow gives inf.

    With `small_k` (the caller guarantees |k| <= 250) on a target whose `mul` rounds
    subnormal results exactly, two multiplies by normal powers of two: the first is exact,
    the second rounds once, so the bits equal the integer form's below (8 operations
    instead of 25). Otherwise from the bits, with no float multiply, so no driver flushes
    a subnormal result; any i32 k."""
    if small_k and m.exact_subnormal_mul:
        k1 = m.shr_s(k, 1)
        def pow2(e):
            return m.bitsf(m.shl(m.iadd(e, m.i(127)), 23))
        return m.mul(m.mul(p, pow2(k1)), pow2(m.isub(k, k1)))
    bits = m.fbits(p)
    e = m.iadd(m.shr_u(bits, 23), k)                   # biased exponent of the result
    frac = m.iand(bits, m.i(0x7FFFFF))
    normal = m.bitsf(m.ior(m.shl(e, 23), frac))
    sh = m.isub(m.i(1), e)                              # subnormal: shift the significand
    sh = m.sel(m.ilt_s(m.i(25), sh), m.i(25), sh)
    sh = m.sel(m.ilt_s(sh, m.i(1)), m.i(1), sh)         # (only used when e < 1)
    mant = m.ior(frac, m.i(0x800000))
    q = m.shr_u(mant, sh)
    rest = m.iand(mant, m.isub(m.shl(m.i(1), sh), m.i(1)))
    half = m.shl(m.i(1), m.isub(sh, m.i(1)))
    up = m.por(m.ilt_u(half, rest), m.pand(m.ieq(rest, half), m.ieq(m.iand(q, m.i(1)), m.i(1))))
    sub = m.bitsf(m.sel(up, m.iadd(q, m.i(1)), q))
    res = m.sel(m.ilt_s(e, m.i(1)), sub, normal)
    return m.sel(m.ilt_s(m.i(254), e), m.bitsf(m.i(INF_BITS)), res)


# ---------------------------------------------------------------- exp, exp2

_EXP_Q = [1.0 / math.factorial(n + 2) for n in range(7)]  # exp(r) = 1 + r + r^2 * Q(r)


def _chebyshev(d: int) -> list[int]:
    """The coefficients of the Chebyshev polynomial T_d, lowest degree first."""
    a, b = [1], [0, 1]
    for _ in range(d - 1):
        a, b = b, [x - y for x, y in zip([0] + [2 * v for v in b], a + [0, 0])]
    return a if d == 0 else b


def _economize(coeffs: list[float], keep: int, half_width: float) -> list[float]:
    """The polynomial `coeffs` on [-half_width, half_width] with its top terms traded for
    lower ones by Chebyshev economisation (exact fractions): each step subtracts the
    multiple of T_d(x / half_width) that cancels the top coefficient, adding at most
    |c_d| half_width^d / 2^(d-1) of error."""
    q, a = [Fraction(c) for c in coeffs], Fraction(half_width)
    while len(q) > keep:
        d = len(q) - 1
        t = _chebyshev(d)
        s = q[d] * a ** d / t[d]
        q = [q[i] - s * t[i] / a ** i for i in range(d)]
    return [float(v) for v in q]


# exp's own Q, for the single-f32 results: 7 Taylor terms economised to 5 on |r| <= ln2 / 2
# (2 multiply-adds fewer; worst error 0.66 -> 0.76 ulp); tanh keeps the 7 for its pair
_EXP_Q5 = _economize(_EXP_Q, 5, 0.3466)


def _exp_core(m: Ops, r, rl):
    """exp(r + rl) for |r| <= 0.35, |rl| tiny: 1 + r exactly as a pair, the rest added to
    its tail, one final rounding."""
    t = m.mul(m.mul(r, r), _horner(m, r, _EXP_Q5))
    h, lo = fast_two_sum(m, m.c(1.0), r)
    return m.add(h, m.add(lo, m.add(t, rl)))


def _exp_special(m: Ops, x, res):
    return m.sel(m.isnan(x), x, res)


EXP_FAST = 86.0  # below in magnitude, 2^k (|k| <= 124) times p in [0.7, 1.42] is a normal f32


def exp(m: Ops, x):
    """|x| < EXP_FAST (NaN fails the test on the bits): with hi = x - k*LN2_HI (exact) and
    lo = -k*LN2_LO, exp(x) = 2^k (1 + hi + lo + r^2 Q(r)), r = hi + lo rounded (the
    polynomial's argument; _exp_core's scheme with 1 + hi as the exact pair and lo in the
    tail instead of r and its rounding error), and 2^k added to the exponent field (the
    result is normal: exact). Else `_exp_full`, on a branch the renderer may take or
    select."""
    big = m.fbits(m.add(m.mul(x, m.c(LOG2E)), m.c(MAGIC)))
    kf = m.sub(m.bitsf(big), m.c(MAGIC))
    hi = m.sub_exact_product(x, kf, LN2_HI)            # exact, as in _exp_full
    lo = m.mul(kf, m.c(-LN2_LO))
    r = m.add(hi, lo)
    t = m.mul(m.mul(r, r), _horner(m, r, _EXP_Q5))
    h, hl = fast_two_sum(m, m.c(1.0), hi)              # |hi| < 1
    p = m.add(h, m.add(hl, m.add(lo, t)))
    # k << 23 is big's bits << 23: MAGIC's bits vanish from the low 9 bits
    fast = m.bitsf(m.iadd(m.fbits(p), m.shl(big, 23)))
    def slow(): return m.big_or_nan(x, EXP_FAST)
    # the branch is right for every x (it selects on its own test), so a renderer may run
    # it for lanes that do not need it (codegen/ptx/rare.py does, out of line)
    return m.when(slow(), lambda: [m.sel(slow(), _exp_full(m, x), fast)], [fast])[0]


def _f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def _exp_full(m: Ops, x):
    """exp for every x: clamped (beyond: 0 or inf from _ldexp), the exact two_sum, 2^k
    by _ldexp (subnormal results rounded once), NaN passed through."""
    xc = _clamp(m, x, -104.0, 89.0)                    # beyond: 0 or inf from _ldexp
    kf, k = _rint_small(m, m.mul(xc, m.c(LOG2E)))
    # k * LN2_HI is exact, and so is the difference: it is a multiple of ulp(xc) (LN2_HI
    # has 16 bits) no larger than |xc|
    hi = m.sub_exact_product(xc, kf, LN2_HI)
    r, rl = two_sum(m, hi, m.neg(m.mul(kf, m.c(LN2_LO))))
    p = _exp_core(m, r, rl)
    return _exp_special(m, x, _ldexp(m, p, k, small_k=True))  # |k| <= 151


def _exp2_pair(m: Ops, w, wl):
    """2^(w + wl) for |w| <= 200 (|wl| <= ulp(w)): k + r with r in [-1/2, 1/2], r * ln2
    in double-f32."""
    kf, k = _rint_small(m, w)
    r0, r0l = two_sum(m, m.sub(w, kf), wl)             # w - kf is exact
    u, ul = two_prod(m, r0, None, LN2_H)
    ul = m.add(ul, m.add(m.mul(r0, m.c(LN2_L)), m.mul(r0l, m.c(LN2_H))))
    u, ul = fast_two_sum(m, u, ul)
    return _ldexp(m, _exp_core(m, u, ul), k, small_k=True)  # |k| <= 200


def exp2(m: Ops, x):
    xc = _clamp(m, x, -160.0, 160.0)
    return _exp_special(m, x, _exp2_pair(m, xc, m.c(0.0)))


# ---------------------------------------------------------------- log, log2

_LOG_R = [2.0 / (2 * n + 5) for n in range(6)]  # atanh: 2s + 2s^3/3 + s^5 * R(s^2)


def _log_core(m: Ops, ax):
    """For a finite positive ax (subnormals included): (e as f32, Lh, Ll) with
    ax = 2^e * mx, mx in [sqrt(1/2), sqrt(2)) and Lh + Ll = log(mx) to ~2^-40."""
    bits = m.fbits(ax)
    sub = m.ilt_u(bits, m.i(0x800000))
    # a subnormal's bits, as an integer, convert exactly: ax = u2f(bits) * 2^-149
    xs = m.sel(sub, m.u2f(bits), ax)
    xb = m.fbits(xs)
    e = m.isub(m.shr_u(xb, 23), m.sel(sub, m.i(127 + 149), m.i(127)))
    frac = m.iand(xb, m.i(0x7FFFFF))
    mx = m.bitsf(m.ior(frac, m.i(0x3F800000)))
    big = m.fgt(mx, m.c(SQRT2))
    mx = m.sel(big, m.bitsf(m.ior(frac, m.i(0x3F000000))), mx)
    e = m.sel(big, m.iadd(e, m.i(1)), e)
    f = m.sub(mx, m.c(1.0))                             # exact (Sterbenz)
    # s = f / (2 + f) as sh + sl
    dh, dl = fast_two_sum(m, m.c(2.0), f)
    sh = m.div(f, dh)
    p, pe = two_prod(m, sh, dh)
    res = m.sub(m.sub(m.sub(f, p), pe), m.mul(sh, dl))  # f - p is exact
    sl = m.div(res, dh)
    # log(1 + f) = 2s + s * (2/3 s^2 + s^4 R(s^2)); the 2/3 s^2 term in double-f32
    z, zl = two_prod(m, sh, sh)
    zl = m.add(zl, m.mul(m.mul(m.c(2.0), sh), sl))
    R = m.mul(m.mul(z, z), _horner(m, z, _LOG_R))
    ch, cl = two_prod(m, z, None, TWO_THIRDS_H)
    cl = m.add(cl, m.add(m.mul(z, m.c(TWO_THIRDS_L)), m.mul(zl, m.c(TWO_THIRDS_H))))
    vh, vl = fast_two_sum(m, ch, m.add(cl, R))
    th, tl = two_prod(m, sh, vh)
    tl = m.add(tl, m.add(m.mul(sh, vl), m.mul(sl, vh)))
    two = m.c(2.0)
    lh, ll = fast_two_sum(m, m.mul(two, sh), th)
    ll = m.add(ll, m.add(m.mul(two, sl), tl))
    lh, ll = fast_two_sum(m, lh, ll)
    return m.i2f(e), lh, ll


def _log_special(m: Ops, x, res):
    b = m.fbits(x)
    a = m.iand(b, m.i(ABS_MASK))
    res = m.sel(m.ieq(b, m.i(INF_BITS)), x, res)
    res = m.sel(m.ilt_u(m.i(SIGN), b), m.bitsf(m.i(NAN_BITS)), res)   # x < 0 (not -0)
    res = m.sel(m.ieq(a, m.i(0)), m.bitsf(m.i(0xFF800000)), res)      # log(+-0) = -inf
    return m.sel(m.isnan(x), x, res)


def log(m: Ops, x):
    ef, lh, ll = _log_core(m, x)
    # e * ln2 + L: e * LN2_HI is exact, the rest joins the tail
    s, sl = two_sum(m, m.mul(ef, m.c(LN2_HI)), lh)
    return _log_special(m, x, m.add(s, m.add(sl, m.add(ll, m.mul(ef, m.c(LN2_LO))))))


def _log2_pair(m: Ops, ax):
    """log2(ax) as hi + lo (~2^-40 relative), for finite positive ax."""
    ef, lh, ll = _log_core(m, ax)
    mh, ml = two_prod(m, lh, None, LOG2E_H)
    ml = m.add(ml, m.add(m.mul(lh, m.c(LOG2E_L)), m.mul(ll, m.c(LOG2E_H))))
    g, gl = two_sum(m, ef, mh)
    return fast_two_sum(m, g, m.add(gl, ml))


def log2(m: Ops, x):
    g, gl = _log2_pair(m, x)
    return _log_special(m, x, m.add(g, gl))


# ---------------------------------------------------------------- sin, cos, tan


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


def _add_carry(m: Ops, a, b, c):
    """(a + b + c mod 2^32, carry out) for a < 2^24 + 1, c in {0, 1}: the carry is 0 or 1."""
    s1 = m.iadd(a, b)
    s2 = m.iadd(s1, c)
    carry = m.por(m.ilt_u(s1, a), m.ilt_u(s2, s1))
    return s2, m.sel(carry, m.i(1), m.i(0))


def _reduce(m: Ops, x):
    """x = (q + y) * pi/2 with |y| <= 1/2, exactly in integers for finite |x| >= pi/4
    (Payne-Hanek): |x| = M * 2^E, and x * 2/pi mod 4 is read from a 64-bit window of
    M * (128 bits of 2/pi); the words before the window only add multiples of 4, those
    after it weigh < 2^-70. Returns (r, r_lo, q) with r + r_lo = y * pi/2."""
    bits = m.fbits(x)
    a_bits = m.iand(bits, m.i(ABS_MASK))
    M = m.ior(m.iand(bits, m.i(0x7FFFFF)), m.i(0x800000))
    E = m.isub(m.shr_u(a_bits, 23), m.i(150))          # -24 <= E <= 104
    j0 = m.shr_s(m.isub(E, m.i(2)), 5)
    j0 = m.sel(m.ilt_s(j0, m.i(0)), m.i(0), j0)        # first word used, 0..3
    a = m.isub(m.iadd(m.shl(j0, 5), m.i(66)), E)       # window = bits [a, a + 64), 33..90

    def word(off: int):
        w = m.i(TWO_OVER_PI_WORDS[off + 3])
        for j in (2, 1, 0):
            w = m.sel(m.ieq(j0, m.i(j)), m.i(TWO_OVER_PI_WORDS[off + j]), w)
        return w

    # P = M * (W0 W1 W2 W3) as five 32-bit limbs p0 (lowest) .. p4
    lo = [None] * 4
    hi = [None] * 4
    for o in range(4):
        w = word(o)
        lo[o], hi[o] = m.imul(M, w), m.mulhi_u(M, w)
    zero = m.i(0)
    # the lowest word (lo[3]) lies below every window
    p1, c = _add_carry(m, hi[3], lo[2], zero)
    p2, c = _add_carry(m, hi[2], lo[1], c)
    p3, c = _add_carry(m, hi[1], lo[0], c)
    p4 = m.iadd(hi[0], c)
    first = m.ieq(m.shr_u(a, 5), m.i(1))               # window starts in p1 (else p2)
    l0, l1, l2 = m.sel(first, p1, p2), m.sel(first, p2, p3), m.sel(first, p3, p4)
    s = m.iand(a, m.i(31))
    t = m.isub(m.i(31), s)                              # x << (32 - s) as (x << 1) << t
    g_lo = m.ior(m.shr_u(l0, s), m.shl(m.shl(l1, 1), t))
    g_hi = m.ior(m.shr_u(l1, s), m.shl(m.shl(l2, 1), t))
    # g = x * 2/pi mod 4 in units of 2^-62: q = the top two bits, rounded to nearest
    q = m.shr_u(g_hi, 30)
    f_hi = m.iand(g_hi, m.i(0x3FFFFFFF))
    up = m.ilt_u(m.i(0x1FFFFFFF), f_hi)
    q = m.sel(up, m.iadd(q, m.i(1)), q)
    borrow = m.sel(m.ieq(g_lo, zero), zero, m.i(1))
    h = m.sel(up, m.isub(m.isub(m.i(1 << 30), f_hi), borrow), f_hi)
    lw = m.sel(up, m.isub(zero, g_lo), g_lo)            # |y| = (h * 2^32 + lw) * 2^-62
    # |y| as three exact 24-bit chunks, summed in double-f32
    c2 = m.mul(m.u2f(m.shr_u(h, 6)), m.c(2.0 ** -24))
    c1 = m.mul(m.u2f(m.ior(m.shl(m.iand(h, m.i(63)), 18), m.shr_u(lw, 14))), m.c(2.0 ** -48))
    c0 = m.mul(m.u2f(m.iand(lw, m.i(0x3FFF))), m.c(2.0 ** -62))
    vh, vl = two_sum(m, c2, c1)
    vh, vl = fast_two_sum(m, vh, m.add(vl, c0))
    rh, rl = two_prod(m, vh, None, PIO2_H)
    rl = m.add(rl, m.add(m.mul(vh, m.c(PIO2_L)), m.mul(vl, m.c(PIO2_H))))
    rh, rl = fast_two_sum(m, rh, rl)
    xneg = m.ilt_u(m.i(ABS_MASK), bits)
    flip = m.pnot(m.ieq(m.sel(up, m.i(1), zero), m.sel(xneg, m.i(1), zero)))
    rh, rl = m.sel(flip, m.neg(rh), rh), m.sel(flip, m.neg(rl), rl)
    q = m.sel(xneg, m.isub(zero, q), q)
    return [rh, rl, q]


_SIN_S = [(-1) ** (n + 1) / math.factorial(2 * n + 3) for n in range(5)]   # -1/3!, 1/5!, ...
_COS_C = [(-1) ** n / math.factorial(2 * n + 4) for n in range(5)]         # 1/4!, -1/6!, ...


def _sincos(m: Ops, x):
    """(sin r, cos r) as pairs hi + lo with hi the rounded value, q mod 4, |x|'s bits,
    where x = r + q * pi/2; |x| < pi/4 passes through as r = x."""
    a_bits = _abs_bits(m, x)
    big = m.pand(m.pnot(m.fgt(m.c(PIO4), m.fabs(x))), m.ilt_u(a_bits, m.i(INF_BITS)))
    r, rl, q = m.when(big, lambda: _reduce(m, x), [x, m.c(0.0), m.i(0)])
    z, zl = two_prod(m, r, r)
    # sin r = r + r^3 S(r^2) + rl (1 - r^2/2)
    hz = m.mul(m.c(0.5), z)
    st = m.add(m.mul(m.mul(r, z), _horner(m, z, _SIN_S)), m.sub(rl, m.mul(rl, hz)))
    # cos r = 1 - r^2/2 + r^4 C(r^2) - r rl, with 1 - r^2/2 as an exact pair
    w = m.sub(m.c(1.0), hz)
    corr = m.sub(m.sub(m.c(1.0), w), hz)
    ct = m.sub(m.mul(m.mul(z, z), _horner(m, z, _COS_C)), m.add(m.mul(m.c(0.5), zl), m.mul(r, rl)))
    return fast_two_sum(m, r, st), fast_two_sum(m, w, m.add(corr, ct)), m.iand(q, m.i(3)), a_bits


def _quadrant(m: Ops, q, vals):
    """vals[q] for q in 0..3."""
    odd = m.ieq(m.iand(q, m.i(1)), m.i(1))
    lo = m.sel(odd, vals[1], vals[0])
    hi = m.sel(odd, vals[3], vals[2])
    return m.sel(m.ilt_u(q, m.i(2)), lo, hi)


def _trig_special(m: Ops, x, a_bits, res, tiny):
    """tiny: the value for |x| < 2^-12 (x itself, or 1 for cos); NaN for inf and NaN."""
    res = m.sel(m.ilt_u(a_bits, m.i(0x39800000)), tiny, res)
    res = m.sel(m.ieq(a_bits, m.i(INF_BITS)), m.bitsf(m.i(NAN_BITS)), res)
    return m.sel(m.isnan(x), x, res)


def sin(m: Ops, x):
    (s, _), (c, _), q, a = _sincos(m, x)
    return _trig_special(m, x, a, _quadrant(m, q, [s, c, m.neg(s), m.neg(c)]), x)


def cos(m: Ops, x):
    (s, _), (c, _), q, a = _sincos(m, x)
    return _trig_special(m, x, a, _quadrant(m, q, [c, m.neg(s), m.neg(c), s]), m.c(1.0))


def tan(m: Ops, x):
    (s, sl), (c, cl), q, a = _sincos(m, x)
    odd = m.ieq(m.iand(q, m.i(1)), m.i(1))
    # (num + num_lo) / (den + den_lo): the rounded quotient plus its residual's quotient
    num, num_lo, den, den_lo = m.sel(odd, c, s), m.sel(odd, cl, sl), m.sel(odd, s, c), m.sel(odd, sl, cl)
    t = m.div(num, den)
    p, pe = two_prod(m, t, den)
    res = m.sub(m.add(m.sub(m.sub(num, p), pe), num_lo), m.mul(t, den_lo))   # num - p is exact
    t = m.add(t, m.div(res, den))
    return _trig_special(m, x, a, m.sel(odd, m.neg(t), t), x)


# ---------------------------------------------------------------- pow


def _int_parity(m: Ops, y):
    """(y is an integer (inf counts, as even), y is an odd integer), on the bits."""
    b = m.fbits(y)
    ey = m.iand(m.shr_u(b, 23), m.i(0xFF))
    mant = m.ior(m.iand(b, m.i(0x7FFFFF)), m.i(0x800000))
    sh = m.isub(m.i(150), ey)                           # fraction bits below the point
    shc = m.sel(m.ilt_s(sh, m.i(0)), m.i(0), m.sel(m.ilt_s(m.i(31), sh), m.i(31), sh))
    fbits = m.iand(mant, m.isub(m.shl(m.i(1), shc), m.i(1)))
    small = m.ilt_u(ey, m.i(127))                       # |y| < 1: an integer only if zero
    is_zero = m.ieq(m.iand(b, m.i(ABS_MASK)), m.i(0))
    yint = m.sel(small, is_zero, m.por(m.ilt_s(sh, m.i(1)), m.ieq(fbits, m.i(0))))
    lowbit = m.ieq(m.iand(m.shr_u(mant, shc), m.i(1)), m.i(1))
    yodd = m.pand(m.pand(m.pnot(small), m.pnot(m.ilt_s(sh, m.i(0)))), m.pand(yint, lowbit))
    return yint, yodd


def pow(m: Ops, x, y):
    ax = m.fabs(x)
    xb, yb = m.fbits(x), m.fbits(y)
    axb, ayb = m.iand(xb, m.i(ABS_MASK)), m.iand(yb, m.i(ABS_MASK))
    g, gl = _log2_pair(m, ax)
    # |y| above 2^64 saturates w = y * log2|x| just as well (|log2|x|| >= 2^-24 unless x = 1)
    lim = m.c(2.0 ** 64)
    yc = m.sel(m.fgt(m.fabs(y), lim), m.sel(m.ilt_u(m.i(ABS_MASK), yb), m.neg(lim), lim), y)
    w, wl = two_prod(m, yc, g)
    wl = m.add(wl, m.mul(yc, gl))
    out = m.pnot(m.pand(m.fgt(w, m.c(-200.0)), m.flt(w, m.c(200.0))))
    wc = _clamp(m, w, -200.0, 200.0)
    mag = _exp2_pair(m, wc, m.sel(out, m.c(0.0), wl))
    # zero and infinite |x|: 0 or inf by the sign of y
    yneg = m.ilt_u(m.i(ABS_MASK), yb)
    edge = m.sel(m.ieq(axb, m.i(0)), m.sel(yneg, m.i(INF_BITS), m.i(0)), m.sel(yneg, m.i(0), m.i(INF_BITS)))
    mag = m.sel(m.por(m.ieq(axb, m.i(0)), m.ieq(axb, m.i(INF_BITS))), m.bitsf(edge), mag)
    yint, yodd = _int_parity(m, y)
    xneg = m.ilt_u(m.i(ABS_MASK), xb)
    res = m.sel(m.pand(xneg, yodd), m.neg(mag), mag)
    finite_neg = m.pand(xneg, m.pand(m.ilt_u(m.i(0), axb), m.ilt_u(axb, m.i(INF_BITS))))
    nan = m.bitsf(m.i(NAN_BITS))
    res = m.sel(m.pand(finite_neg, m.pnot(yint)), nan, res)
    res = m.sel(m.por(m.isnan(x), m.isnan(y)), nan, res)
    one = m.por(m.ieq(xb, m.i(0x3F800000)),
                m.pand(m.ieq(xb, m.i(0xBF800000)), m.ieq(ayb, m.i(INF_BITS))))
    return m.sel(m.por(one, m.ieq(ayb, m.i(0))), m.c(1.0), res)


# ---------------------------------------------------------------- tanh


def _bernoulli(n: int) -> list[Fraction]:
    """B_0 .. B_n (B_1 = -1/2), from the recurrence sum_k C(m+1, k) B_k = 0."""
    B = [Fraction(1)]
    for mm in range(1, n + 1):
        B.append(-sum(math.comb(mm + 1, k) * B[k] for k in range(mm)) / (mm + 1))
    return B


# tanh x = x + x^3 T(x^2): the Taylor coefficients 2^2n (2^2n - 1) B_2n / (2n)!, n >= 2
_TANH_T = [float(Fraction(2 ** (2 * n) * (2 ** (2 * n) - 1)) * b / math.factorial(2 * n))
           for n, b in ((n, _bernoulli(20)[2 * n]) for n in range(2, 9))]
TANH_SMALL = 0.25     # below: the series (7 terms reach 2^-30); above: 1 - 2 / (e^2|x| + 1)


def _exp_pair_moderate(m: Ops, x):
    """exp(x) as hi + lo (~2^-32 relative) for 0 <= x <= 20: the reduction and core of
    `exp` without the final rounding, scaled by 2^k exactly."""
    kf, k = _rint_small(m, m.mul(x, m.c(LOG2E)))
    hi, hl = two_sum(m, x, m.neg(m.mul(kf, m.c(LN2_HI))))
    r, rl = two_sum(m, hi, m.neg(m.mul(kf, m.c(LN2_LO))))
    t = m.mul(m.mul(r, r), _horner(m, r, _EXP_Q))
    h, lo = fast_two_sum(m, m.c(1.0), r)
    scale = m.bitsf(m.shl(m.iadd(k, m.i(127)), 23))          # 2^k, 0 <= k <= 29
    return fast_two_sum(m, m.mul(h, scale), m.mul(m.add(lo, m.add(t, m.add(rl, hl))), scale))


def tanh(m: Ops, x):
    a = m.fabs(x)
    a_bits = _abs_bits(m, x)
    # small |x|: the series, x + x^3 T(x^2)
    z = m.mul(a, a)
    small = m.add(a, m.mul(m.mul(a, z), _horner(m, z, _TANH_T)))
    # otherwise 1 - q, q = 2 / (E + 1), E = e^(2|x|) as a pair; |x| >= 9.5 rounds to 1 anyway
    ac = m.sel(m.fgt(a, m.c(9.5)), m.c(9.5), a)
    eh, el = _exp_pair_moderate(m, m.add(ac, ac))
    dh, dl = fast_two_sum(m, eh, m.c(1.0))
    dl = m.add(dl, el)
    qh = m.div(m.c(2.0), dh)
    p, pe = two_prod(m, qh, dh)
    ql = m.div(m.sub(m.sub(m.sub(m.c(2.0), p), pe), m.mul(qh, dl)), dh)   # 2 - p is exact
    s, sl = fast_two_sum(m, m.c(1.0), m.neg(qh))
    big = m.add(s, m.sub(sl, ql))
    res = m.sel(m.flt(a, m.c(TANH_SMALL)), small, big)
    res = m.bitsf(m.ior(m.fbits(res), m.iand(m.fbits(x), m.i(SIGN))))
    res = m.sel(m.ilt_u(a_bits, m.i(0x39800000)), x, res)       # |x| < 2^-12: x (subnormals kept)
    return m.sel(m.isnan(x), x, res)


# ---------------------------------------------------------------- atan2

_ATAN_P = [(-1) ** (n + 1) / (2 * n + 3) for n in range(9)]   # atan v = v + v^3 P(v^2), |v| <= tan(pi/8)
PIO4_H, PIO4_L = _dd(math.pi / 4)
PI_H, PI_L = _dd(math.pi)
TAN_PIO8 = f32(math.tan(math.pi / 8))


def _frexp(m: Ops, a):
    """(mantissa in [1, 2), unbiased exponent as i32) of a positive finite a, subnormals
    normalised in integer arithmetic (their bits convert exactly: a = u2f(bits) * 2^-149)."""
    bits = m.fbits(a)
    sub = m.ilt_u(bits, m.i(0x800000))
    xb = m.fbits(m.sel(sub, m.u2f(bits), a))
    e = m.isub(m.shr_u(xb, 23), m.sel(sub, m.i(127 + 149), m.i(127)))
    return m.bitsf(m.ior(m.iand(xb, m.i(0x7FFFFF)), m.i(0x3F800000))), e


def atan2(m: Ops, y, x):
    """With a = min(|x|, |y|) and b = max: t = a / b in [0, 1] formed from the mantissas
    and the exponent difference (no float operation on a subnormal, none overflows);
    atan t by the series below tan(pi/8), else pi/4 + atan((a - b) / (a + b)) with that
    quotient as a pair; then pi/2 - r when |y| > |x|, pi - r when x is negative (its sign
    bit), y's sign; all in double-f32 with one final rounding."""
    xb, yb = m.fbits(x), m.fbits(y)
    axb, ayb = m.iand(xb, m.i(ABS_MASK)), m.iand(yb, m.i(ABS_MASK))
    swap = m.ilt_u(axb, ayb)                                     # |y| > |x|
    num, den = m.bitsf(m.sel(swap, axb, ayb)), m.bitsf(m.sel(swap, ayb, axb))
    mn, en = _frexp(m, num)
    md, ed = _frexp(m, den)
    d = m.isub(en, ed)                                           # <= 0
    q = m.div(mn, md)                                            # in (1/2, 2)
    t = _ldexp(m, q, d)
    qp, qe = two_prod(m, q, md)
    ql = m.div(m.sub(m.sub(mn, qp), qe), md)                     # mn - qp is exact
    low = m.ilt_s(d, m.i(-100))                                  # then t's correction is below any ulp
    tl = m.sel(low, m.c(0.0), m.mul(ql, m.bitsf(m.shl(m.iadd(m.sel(low, m.i(0), d), m.i(127)), 23))))
    inf = m.i(INF_BITS)
    t = m.sel(m.por(m.ieq(m.fbits(num), m.i(0)), m.pand(m.ieq(m.fbits(den), inf), m.pnot(m.ieq(m.fbits(num), inf)))),
              m.c(0.0), t)
    red = m.fgt(t, m.c(TAN_PIO8))
    # reduced: u = (a - b) / (a + b) = (mn 2^d - md) / (mn 2^d + md), d in {0, -1, -2} here
    dc = m.sel(m.ilt_s(d, m.i(-3)), m.i(-3), d)
    nn = m.mul(mn, m.bitsf(m.shl(m.iadd(dc, m.i(127)), 23)))    # exact
    fh, fl = two_sum(m, nn, m.neg(md))
    gh, gl = two_sum(m, nn, md)
    uh = m.div(fh, gh)
    p, pe = two_prod(m, uh, gh)
    ul = m.div(m.sub(m.add(m.sub(m.sub(fh, p), pe), fl), m.mul(uh, gl)), gh)
    vh, vl = m.sel(red, uh, t), m.sel(red, ul, tl)
    z = m.mul(vh, vh)
    tail = m.add(vl, m.mul(m.mul(vh, z), _horner(m, z, _ATAN_P)))
    bh, bl = m.sel(red, m.c(PIO4_H), m.c(0.0)), m.sel(red, m.c(PIO4_L), m.c(0.0))
    ah, al = two_sum(m, bh, vh)
    al = m.add(al, m.add(bl, tail))
    # pi/2 - r where |y| > |x|, then pi - r where x is negative
    sh, sl = two_sum(m, m.c(PIO2_H), m.neg(ah))
    ah, al = m.sel(swap, sh, ah), m.sel(swap, m.add(sl, m.sub(m.c(PIO2_L), al)), al)
    xneg = m.ilt_u(m.i(ABS_MASK), xb)
    nh, nl = two_sum(m, m.c(PI_H), m.neg(ah))
    ah, al = m.sel(xneg, nh, ah), m.sel(xneg, m.add(nl, m.sub(m.c(PI_L), al)), al)
    mag = m.add(ah, al)
    # subnormal t, direct: t itself (it must not meet a float add; atan t rounds to t)
    direct = m.pnot(m.por(swap, xneg))
    mag = m.sel(m.pand(direct, m.ilt_u(m.fbits(t), m.i(0x800000))), t, mag)
    zero = m.pand(m.ieq(axb, m.i(0)), m.ieq(ayb, m.i(0)))        # atan2(+-0, +-0): 0 or pi
    mag = m.sel(zero, m.sel(xneg, m.c(PI_H), m.c(0.0)), mag)
    res = m.bitsf(m.ior(m.fbits(mag), m.iand(yb, m.i(SIGN))))
    return m.sel(m.por(m.isnan(x), m.isnan(y)), m.bitsf(m.i(NAN_BITS)), res)


# ---------------------------------------------------------------- hypot


def hypot(m: Ops, x, y):
    """a = max(|x|, |y|) = ma 2^e, b = min scaled by the same 2^-e (0 where b < a 2^-40,
    too small to move the result); sqrt(ma^2 + b'^2) of the double-f32 sum, corrected by
    one Newton step on the pair, then times 2^e from the bits."""
    axb, ayb = _abs_bits(m, x), _abs_bits(m, y)
    swap = m.ilt_u(axb, ayb)
    a, b = m.bitsf(m.sel(swap, ayb, axb)), m.bitsf(m.sel(swap, axb, ayb))
    ma, ea = _frexp(m, a)
    mb, eb = _frexp(m, b)
    d = m.isub(eb, ea)
    far = m.ilt_s(d, m.i(-40))
    dc = m.sel(far, m.i(0), d)
    bs = m.sel(far, m.c(0.0), m.mul(mb, m.bitsf(m.shl(m.iadd(dc, m.i(127)), 23))))   # exact
    p1, e1 = two_prod(m, ma, ma)
    p2, e2 = two_prod(m, bs, bs)
    sh, sl = fast_two_sum(m, p1, p2)
    sl = m.add(sl, m.add(e1, e2))
    r = m.sqrt(sh)
    rr, re = two_prod(m, r, r)
    resid = m.add(m.sub(m.sub(sh, rr), re), sl)                   # sh - rr is exact
    r = m.add(r, m.div(resid, m.add(r, r)))                       # in [1, 2 sqrt 2)
    two = m.pnot(m.flt(r, m.c(2.0)))
    res = _ldexp(m, m.sel(two, m.mul(r, m.c(0.5)), r), m.sel(two, m.iadd(ea, m.i(1)), ea))
    res = m.sel(m.ieq(m.fbits(a), m.i(0)), m.c(0.0), res)
    res = m.sel(m.por(m.isnan(x), m.isnan(y)), m.bitsf(m.i(NAN_BITS)), res)
    inf = m.i(INF_BITS)
    return m.sel(m.por(m.ieq(axb, inf), m.ieq(ayb, inf)), m.bitsf(inf), res)   # even with a NaN


FUNCTIONS: dict[str, Callable[..., Any]] = {"exp": exp, "exp2": exp2, "log": log, "log2": log2, "sin": sin,
                                            "cos": cos, "tan": tan, "pow": pow, "tanh": tanh, "atan2": atan2,
                                            "hypot": hypot}
