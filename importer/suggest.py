"""The help line for an unknown builtin, method or function: the closest real operation.

A name Rust has but the dialect does not gets the dialect's spelling of the same thing
(`x.atan()` -> `x.atan2(1.0)`); anything else gets a dialect name only when it is a near
spelling (a typo), never one that merely shares letters (`signum` is not `sin`)."""

from __future__ import annotations

import difflib
from typing import Iterable, Optional

# Rust (std, glam, WGSL) names with no dialect operation of their own: how to write them
ALTERNATIVES = {
    "atan": "`y.atan2(1.0)` is atan(y)",
    "asin": "`x.atan2((1.0 - x * x).sqrt())` is asin(x)",
    "acos": "`(1.0 - x * x).sqrt().atan2(x)` is acos(x)",
    "sinh": "`(x.exp() - (-x).exp()) * 0.5` is sinh(x)",
    "cosh": "`(x.exp() + (-x).exp()) * 0.5` is cosh(x)",
    "exp_m1": "`x.exp() - 1.0` (less accurate near 0)",
    "ln_1p": "`(1.0 + x).ln()` (less accurate near 0)",
    "log10": "`x.ln() / std::f32::consts::LN_10`",
    "log": "`x.ln() / base.ln()` (`log` with one argument is `ln`)",
    "recip": "`1.0 / x`",
    "powi": "`x.powf(n as f32)`",
    "cbrt": "`x.powf(1.0 / 3.0)` for x >= 0",
    "fract": "`x - x.trunc()`",
    "copysign": "`f32::from_bits((x.to_bits() & 0x7fffffff) | (y.to_bits() & 0x80000000))`",
    "is_sign_negative": "`(x.to_bits() >> 31) == 1`",
    "to_degrees": "`x * (180.0 / std::f32::consts::PI)`",
    "to_radians": "`x * (std::f32::consts::PI / 180.0)`",
    "count_zeros": "`32 - x.count_ones()`",
    "saturating_add": "integer arithmetic wraps (`wrapping_add`); saturate with `min`/`max`",
    "saturating_sub": "integer arithmetic wraps (`wrapping_sub`); saturate with `min`/`max`",
    "checked_add": "integer arithmetic wraps (`wrapping_add`); test the operands with `if`",
    "overflowing_add": "integer arithmetic wraps (`wrapping_add`)",
    "abs_diff": "`a.max(b) - a.min(b)`",
    "length_squared": "`v.dot(v)`",
    "distance": "`(a - b).length()`",
    "lerp": "`a + (b - a) * t`",
    "mix": "`a + (b - a) * t`",
    "select": "`if c { a } else { b }`",
    "inversesqrt": "`1.0 / x.sqrt()`",
    "countOneBits": "`x.count_ones()`",
    "firstLeadingBit": "`31 - x.leading_zeros()`",
    "atomicAdd": "`gpu::atomic_add(buf, i, v)`",
    "atomicMax": "`gpu::atomic_max(buf, i, v)`",
    "atomicMin": "`gpu::atomic_min(buf, i, v)`",
}


def closest(name: str, known: Iterable[str], what: str, prefix: str = "") -> Optional[str]:
    """The help line for unknown `name` among `known` operations (`what`: "builtin",
    "method", "function"), or None."""
    alt = ALTERNATIVES.get(name)
    if alt is not None:
        return f"the dialect has no `{name}`: write {alt}"
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)
    if close:
        return f"a {what} with a similar name exists: `{prefix}{close[0]}`"
    return None
