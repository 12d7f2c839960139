"""The help line for an unknown builtin, method or function: the closest real operation.

A name Rust has but the dialect does not gets the dialect's spelling of the same thing
(`y.atan()`: write `y.atan2(1.0)`); anything else gets a dialect name only when it is a near
spelling, a typo (at most one edit per four letters, a swap of neighbours counting as one,
and most letters shared), never one that merely shares letters (`signum` is not `sin`)."""

from __future__ import annotations

import difflib
from typing import Iterable, Optional

# Rust (std, glam, WGSL) names with no dialect operation of their own: how to write them
ALTERNATIVES = {
    "atan": "write `y.atan2(1.0)` for atan(y)",
    "asin": "write `x.atan2((1.0 - x * x).sqrt())` for asin(x)",
    "acos": "write `(1.0 - x * x).sqrt().atan2(x)` for acos(x)",
    "sinh": "write `(x.exp() - (-x).exp()) * 0.5` for sinh(x)",
    "cosh": "write `(x.exp() + (-x).exp()) * 0.5` for cosh(x)",
    "exp_m1": "write `x.exp() - 1.0` (less accurate near 0)",
    "ln_1p": "write `(1.0 + x).ln()` (less accurate near 0)",
    "log10": "write `x.ln() / std::f32::consts::LN_10`",
    "log": "write `x.ln() / base.ln()` (the natural logarithm is `ln`)",
    "recip": "write `1.0 / x`",
    "powi": "write `x.powf(n as f32)`",
    "cbrt": "write `x.powf(1.0 / 3.0)` for x >= 0",
    "fract": "write `x - x.trunc()`",
    "copysign": "write `f32::from_bits((x.to_bits() & 0x7fffffff) | (y.to_bits() & 0x80000000))`",
    "is_sign_negative": "write `(x.to_bits() >> 31) == 1`",
    "to_degrees": "write `x * (180.0 / std::f32::consts::PI)`",
    "to_radians": "write `x * (std::f32::consts::PI / 180.0)`",
    "count_zeros": "write `32 - x.count_ones()`",
    "saturating_add": "integer arithmetic wraps (`wrapping_add`); saturate with `min`/`max`",
    "saturating_sub": "integer arithmetic wraps (`wrapping_sub`); saturate with `min`/`max`",
    "checked_add": "integer arithmetic wraps (`wrapping_add`); test the operands with `if`",
    "overflowing_add": "integer arithmetic wraps (`wrapping_add`)",
    "abs_diff": "write `a.max(b) - a.min(b)`",
    "length_squared": "write `v.dot(v)`",
    "distance": "write `(a - b).length()`",
    "lerp": "write `a + (b - a) * t`",
    "mix": "write `a + (b - a) * t`",
    "select": "write `if c { a } else { b }`",
    "inversesqrt": "write `1.0 / x.sqrt()`",
    "countOneBits": "write `x.count_ones()`",
    "firstLeadingBit": "write `31 - x.leading_zeros()`",
    "atomicAdd": "write `gpu::atomic_add(buf, i, v)`",
    "atomicMax": "write `gpu::atomic_max(buf, i, v)`",
    "atomicMin": "write `gpu::atomic_min(buf, i, v)`",
}


def closest(name: str, known: Iterable[str], what: str, prefix: str = "") -> Optional[str]:
    """The help line for unknown `name` among `known` operations (`what`: "builtin",
    "method", "function"), or None."""
    alt = ALTERNATIVES.get(name)
    if alt is not None:
        return f"the dialect has no `{name}`: {alt}"
    limit = max(1, len(name) // 4)
    near = [(_edits(name, k), len(k) != len(name), -difflib.SequenceMatcher(None, name, k).ratio(), k)
            for k in known]
    near = [c for c in near if c[0] <= limit and -c[2] >= 0.75]
    if near:
        return f"a {what} with a similar name exists: `{prefix}{min(near)[3]}`"
    return None


def _edits(a: str, b: str) -> int:
    """Insertions, deletions, substitutions and swaps of neighbours turning a into b."""
    d = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]
