"""Rust's integer and float rules, each written once as a sequence over the math library's
`Ops` interface (ir/mathlib.py) and rendered by every target: WGSL and Slang helper
functions (codegen/math_text.py), PTX inline (codegen/ptx_math.PtxOps), numpy for the CPU
oracle (codegen/math_numpy.py), so every backend computes the same function.

Nothing here trusts a driver where GPU languages leave Rust's answer open:

- integer `/` and `%` go through unsigned division by a nonzero divisor (`udiv`, `urem`,
  exact on every target): |a| / |b| with the sign fixed up, so no driver's signed `/` or
  `%` is used (NVIDIA's Vulkan driver gets `%` of negative operands wrong); a zero divisor
  gives 0 and `i32::MIN / -1` wraps to `i32::MIN` without a special case;
- shift amounts are taken modulo 32;
- f32 -> int casts decide NaN and saturation on the bits and convert only values whose
  truncation fits (`f2i_trunc`), int -> f32 rounds to nearest even from exact halves;
- min, max, clamp, abs, negation, round and the f32 comparisons are decided on the bits
  (integer compares, sign-bit operations), so drivers that flush subnormals in float
  compares or assume no NaN (WGSL allows both) still return Rust's answer. (PTX and numpy
  compare natively: their compares are IEEE's exactly, `flt_exact` in their Ops.)

Trapping checks (ir/checks.py) stay in the emitters: they test the divisor and record the
fault before the rule runs; the rule then gives the suppressed result (0).

Each `Rule` has argument and result kinds: "f" f32, "u" u32, "i" i32 (held as u32 bits
inside the sequence, as the Ops interface has it), "p" bool.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .mathlib import ABS_MASK, INF_BITS, NAN_BITS, SIGN, Ops, _order_key

__all__ = ["Rule", "RULES", "CALLS", "call_rule"]


@dataclass(frozen=True)
class Rule:
    fn: Callable[..., Any]
    args: tuple[str, ...]
    ret: str
    doc: str


# ---------------------------------------------------------------- integers


def _sign(m: Ops, a):
    """0 for a >= 0, all ones for a < 0 (a as i32)."""
    return m.shr_s(a, 31)


def _abs_u(m: Ops, a, s):
    """|a| as u32 for a with sign mask s: (a ^ s) - s, so |i32::MIN| = 2^31."""
    return m.isub(m.ixor(a, s), s)


def _nonzero(m: Ops, b):
    """(b == 0, b with 0 replaced by 1): the divisor every target divides by exactly."""
    zero = m.ieq(b, m.i(0))
    return zero, m.sel(zero, m.i(1), b)


def div_u32(m: Ops, a, b):
    zero, d = _nonzero(m, b)
    return m.sel(zero, m.i(0), m.udiv(a, d))


def rem_u32(m: Ops, a, b):
    zero, d = _nonzero(m, b)
    return m.sel(zero, m.i(0), m.urem(a, d))


def div_i32(m: Ops, a, b):
    """Truncates toward zero: |a| / |b|, negated when the signs differ. i32::MIN / -1 is
    2^31 / 1 negated, i32::MIN again (Rust's wrapping result)."""
    sa, sb = _sign(m, a), _sign(m, b)
    zero, d = _nonzero(m, _abs_u(m, b, sb))
    s = m.ixor(sa, sb)
    q = _abs_u(m, m.udiv(_abs_u(m, a, sa), d), s)        # (q ^ s) - s negates where s is set
    return m.sel(zero, m.i(0), q)


def rem_i32(m: Ops, a, b):
    """The sign of the dividend: |a| % |b| with a's sign. i32::MIN % -1 is 2^31 % 1 = 0."""
    sa = _sign(m, a)
    zero, d = _nonzero(m, _abs_u(m, b, _sign(m, b)))
    r = _abs_u(m, m.urem(_abs_u(m, a, sa), d), sa)
    return m.sel(zero, m.i(0), r)


def _amount(m: Ops, s):
    return m.iand(s, m.i(31))


def shl(m: Ops, a, s):
    return m.shl(a, _amount(m, s))


def shr_u32(m: Ops, a, s):
    return m.shr_u(a, _amount(m, s))


def shr_i32(m: Ops, a, s):
    return m.shr_s(a, _amount(m, s))


def abs_i32(m: Ops, a):
    """Wrapping: abs(i32::MIN) == i32::MIN."""
    return _abs_u(m, a, _sign(m, a))


# ---------------------------------------------------------------- casts


def f32_to_i32(m: Ops, x):
    """Rust `as i32`: truncate toward zero, saturate, NaN -> 0. Only values whose
    truncation fits are converted (others are replaced by 0 first: an out-of-range
    conversion is undefined in some target languages)."""
    b = m.fbits(x)
    nan = m.isnan(x)
    big = m.pand(m.ilt_u(m.i(0x4EFFFFFF), m.iand(b, m.i(ABS_MASK))), m.pnot(nan))   # |x| >= 2^31, inf
    t = m.f2i_trunc(m.sel(m.por(nan, big), m.c(0.0), x))
    sat = m.sel(m.ilt_u(b, m.i(SIGN)), m.i(0x7FFFFFFF), m.i(0x80000000))
    return m.sel(big, sat, t)


def f32_to_u32(m: Ops, x):
    """Rust `as u32`: truncate toward zero, saturate (negative -> 0), NaN -> 0."""
    b = m.fbits(x)
    nan = m.isnan(x)
    neg = m.pnot(m.ilt_u(b, m.i(SIGN)))                        # sign bit set: -0 .. -inf
    big = m.ilt_u(m.i(0x4F7FFFFF), b)                          # x >= 2^32 (or negative, NaN)
    out = m.por(neg, big)
    t = m.f2u_trunc(m.sel(out, m.c(0.0), x))
    res = m.sel(big, m.i(0xFFFFFFFF), t)
    return m.sel(m.por(neg, nan), m.i(0), res)


def u32_to_f32(m: Ops, a):
    return m.u2f_rn(a)


def i32_to_f32(m: Ops, a):
    return m.i2f_rn(a)


# ---------------------------------------------------------------- floats


def neg_f32(m: Ops, x):
    return m.neg(x)


def abs_f32(m: Ops, x):
    return m.fabs(x)


def min_f32(m: Ops, a, b):
    """f32::min: a NaN operand yields the other one; of equal operands (-0 and +0) the
    second (Rust allows either; numpy's fmin does this, and a fold over many values then
    gives the same result in any bracketing: the last of the equal extremes)."""
    r = m.sel(m.flt_exact(a, b), a, b)
    return m.sel(m.isnan(a), b, m.sel(m.isnan(b), a, r))


def max_f32(m: Ops, a, b):
    r = m.sel(m.flt_exact(b, a), a, b)
    return m.sel(m.isnan(a), b, m.sel(m.isnan(b), a, r))


def clamp_f32(m: Ops, x, lo, hi):
    """f32::clamp as Rust writes it: `if x < lo { x = lo } if x > hi { x = hi } x`, so a
    NaN x stays NaN and -0 within [0, hi] stays -0. (Rust panics when lo > hi or a bound
    is NaN; here those compares simply run as written.)"""
    r = m.sel(m.flt_exact(x, lo), lo, x)
    return m.sel(m.flt_exact(hi, r), hi, r)


def round_f32(m: Ops, x):
    """f32::round, half away from zero, on the bits: for 1 <= |x| < 2^23 add half a unit
    at the binary point to the magnitude and clear the fraction (a carry moves into the
    exponent); |x| < 1/2 gives a zero of x's sign, 1/2 <= |x| < 1 gives +-1, and |x| >=
    2^23 (integers, inf, NaN) is x."""
    b = m.fbits(x)
    a = m.iand(b, m.i(ABS_MASK))
    sign = m.iand(b, m.i(SIGN))
    e = m.shr_u(a, 23)
    k = m.iand(m.isub(e, m.i(127)), m.i(31))                  # fraction bits above the point
    frac = m.shr_u(m.i(0x7FFFFF), k)
    mid = m.iand(m.iadd(a, m.shr_u(m.i(0x400000), k)), m.ixor(frac, m.i(0xFFFFFFFF)))
    r = m.sel(m.ilt_u(e, m.i(127)), m.sel(m.ieq(e, m.i(126)), m.i(0x3F800000), m.i(0)), mid)
    return m.sel(m.ilt_u(e, m.i(150)), m.bitsf(m.ior(r, sign)), x)


def _unordered(m: Ops, a, b):
    return m.por(m.isnan(a), m.isnan(b))


def lt_f32(m: Ops, a, b):
    return m.flt_exact(a, b)


def gt_f32(m: Ops, a, b):
    return m.flt_exact(b, a)


def le_f32(m: Ops, a, b):
    return m.pnot(m.por(m.flt_exact(b, a), _unordered(m, a, b)))


def ge_f32(m: Ops, a, b):
    return m.pnot(m.por(m.flt_exact(a, b), _unordered(m, a, b)))


def eq_f32(m: Ops, a, b):
    """-0 == +0; NaN equals nothing."""
    same = m.ieq(_order_key(m, a), _order_key(m, b))
    return m.pand(same, m.pnot(_unordered(m, a, b)))


def ne_f32(m: Ops, a, b):
    return m.pnot(eq_f32(m, a, b))


# ---------------------------------------------------------------- bit counting, rotation, signs


def count_ones(m: Ops, a):
    """Population count: 2-, 4- and 8-bit partial sums, the four bytes added by one multiply
    (each byte holds at most 8, so no carry crosses a byte)."""
    a = m.isub(a, m.iand(m.shr_u(a, 1), m.i(0x55555555)))
    a = m.iadd(m.iand(a, m.i(0x33333333)), m.iand(m.shr_u(a, 2), m.i(0x33333333)))
    a = m.iand(m.iadd(a, m.shr_u(a, 4)), m.i(0x0F0F0F0F))
    return m.shr_u(m.imul(a, m.i(0x01010101)), 24)


def leading_zeros(m: Ops, a):
    """32 minus the ones of `a` with its highest set bit smeared down (32 for 0)."""
    for s in (1, 2, 4, 8, 16):
        a = m.ior(a, m.shr_u(a, s))
    return m.isub(m.i(32), count_ones(m, a))


def trailing_zeros(m: Ops, a):
    """The ones of (a & -a) - 1: exactly the bits below the lowest set one (32 for 0)."""
    return count_ones(m, m.isub(m.iand(a, m.isub(m.i(0), a)), m.i(1)))


def rotate_left(m: Ops, a, n):
    """The amount modulo 32; a rotation by 0 ORs `a` with itself."""
    s = _amount(m, n)
    return m.ior(m.shl(a, s), m.shr_u(a, _amount(m, m.isub(m.i(32), s))))


def rotate_right(m: Ops, a, n):
    s = _amount(m, n)
    return m.ior(m.shr_u(a, s), m.shl(a, _amount(m, m.isub(m.i(32), s))))


def signum_i32(m: Ops, a):
    """-1, 0 or 1: the sign mask ORed with (a > 0)."""
    return m.ior(_sign(m, a), m.sel(m.ilt_s(m.i(0), a), m.i(1), m.i(0)))


def signum_f32(m: Ops, x):
    """f32::signum: 1.0 with x's sign (so +-0 give +-1), f32::NAN for a NaN."""
    one = m.bitsf(m.ior(m.iand(m.fbits(x), m.i(SIGN)), m.i(0x3F800000)))
    return m.sel(m.isnan(x), m.bitsf(m.i(NAN_BITS)), one)


def is_nan_f32(m: Ops, x):
    return m.isnan(x)


def is_finite_f32(m: Ops, x):
    return m.ilt_u(m.iand(m.fbits(x), m.i(ABS_MASK)), m.i(INF_BITS))


def is_infinite_f32(m: Ops, x):
    return m.ieq(m.iand(m.fbits(x), m.i(ABS_MASK)), m.i(INF_BITS))


RULES: dict[str, Rule] = {
    "div_u32": Rule(div_u32, ("u", "u"), "u", "x / 0 == 0"),
    "rem_u32": Rule(rem_u32, ("u", "u"), "u", "x % 0 == 0"),
    "div_i32": Rule(div_i32, ("i", "i"), "i", "truncates; x / 0 == 0; i32::MIN / -1 == i32::MIN"),
    "rem_i32": Rule(rem_i32, ("i", "i"), "i", "sign of the dividend; x % 0 == 0; i32::MIN % -1 == 0"),
    "shl_u32": Rule(shl, ("u", "u"), "u", "the amount modulo 32"),
    "shl_i32": Rule(shl, ("i", "u"), "i", "the amount modulo 32"),
    "shr_u32": Rule(shr_u32, ("u", "u"), "u", "logical; the amount modulo 32"),
    "shr_i32": Rule(shr_i32, ("i", "u"), "i", "arithmetic; the amount modulo 32"),
    "abs_i32": Rule(abs_i32, ("i",), "i", "abs(i32::MIN) == i32::MIN"),
    "f32_to_i32": Rule(f32_to_i32, ("f",), "i", "`as i32`: truncate, saturate, NaN -> 0"),
    "f32_to_u32": Rule(f32_to_u32, ("f",), "u", "`as u32`: truncate, saturate, NaN -> 0"),
    "u32_to_f32": Rule(u32_to_f32, ("u",), "f", "`as f32`: round to nearest even"),
    "i32_to_f32": Rule(i32_to_f32, ("i",), "f", "`as f32`: round to nearest even"),
    "neg_f32": Rule(neg_f32, ("f",), "f", "the sign bit flipped"),
    "abs_f32": Rule(abs_f32, ("f",), "f", "the sign bit cleared"),
    "min_f32": Rule(min_f32, ("f", "f"), "f", "f32::min: a NaN operand yields the other"),
    "max_f32": Rule(max_f32, ("f", "f"), "f", "f32::max: a NaN operand yields the other"),
    "clamp_f32": Rule(clamp_f32, ("f", "f", "f"), "f", "f32::clamp: NaN stays NaN"),
    "round_f32": Rule(round_f32, ("f",), "f", "f32::round: half away from zero"),
    "lt_f32": Rule(lt_f32, ("f", "f"), "p", "IEEE `<`: subnormals exact, NaN false"),
    "gt_f32": Rule(gt_f32, ("f", "f"), "p", "IEEE `>`: subnormals exact, NaN false"),
    "le_f32": Rule(le_f32, ("f", "f"), "p", "IEEE `<=`: subnormals exact, NaN false"),
    "ge_f32": Rule(ge_f32, ("f", "f"), "p", "IEEE `>=`: subnormals exact, NaN false"),
    "eq_f32": Rule(eq_f32, ("f", "f"), "p", "IEEE `==`: -0 == +0, NaN false"),
    "ne_f32": Rule(ne_f32, ("f", "f"), "p", "IEEE `!=`: NaN true"),
    "count_ones_u32": Rule(count_ones, ("u",), "u", "the number of one bits"),
    "count_ones_i32": Rule(count_ones, ("i",), "u", "the number of one bits"),
    "leading_zeros_u32": Rule(leading_zeros, ("u",), "u", "32 for 0"),
    "leading_zeros_i32": Rule(leading_zeros, ("i",), "u", "32 for 0, 0 for negatives"),
    "trailing_zeros_u32": Rule(trailing_zeros, ("u",), "u", "32 for 0"),
    "trailing_zeros_i32": Rule(trailing_zeros, ("i",), "u", "32 for 0"),
    "rotate_left_u32": Rule(rotate_left, ("u", "u"), "u", "the amount modulo 32"),
    "rotate_left_i32": Rule(rotate_left, ("i", "u"), "i", "the amount modulo 32"),
    "rotate_right_u32": Rule(rotate_right, ("u", "u"), "u", "the amount modulo 32"),
    "rotate_right_i32": Rule(rotate_right, ("i", "u"), "i", "the amount modulo 32"),
    "signum_i32": Rule(signum_i32, ("i",), "i", "-1, 0 or 1"),
    "signum_f32": Rule(signum_f32, ("f",), "f", "f32::signum: +-1 with the sign bit (+-0 too), NaN for NaN"),
    "is_nan_f32": Rule(is_nan_f32, ("f",), "p", "f32::is_nan, on the bits"),
    "is_finite_f32": Rule(is_finite_f32, ("f",), "p", "f32::is_finite, on the bits"),
    "is_infinite_f32": Rule(is_infinite_f32, ("f",), "p", "f32::is_infinite, on the bits"),
}

# Intrinsic calls (ir/nodes.py INTRINSICS) that are one rule each on scalars: (intrinsic,
# argument type) -> rule. Every emitter renders these through the rule, so a new one needs
# no emitter change.
CALLS: dict[tuple[str, str], str] = {
    (f, t): f"{f}_{t}"
    for f, types in (("count_ones", ("u32", "i32")), ("leading_zeros", ("u32", "i32")),
                     ("trailing_zeros", ("u32", "i32")), ("rotate_left", ("u32", "i32")),
                     ("rotate_right", ("u32", "i32")), ("signum", ("i32", "f32")), ("is_nan", ("f32",)),
                     ("is_finite", ("f32",)), ("is_infinite", ("f32",)))
    for t in types
}
CALL_RESULT = {"u": "u32", "i": "i32", "f": "f32", "p": "bool"}


def call_rule(func: str, ty: str):
    """The rule a call of intrinsic `func` on a scalar `ty` is, or None."""
    return CALLS.get((func, ty))
