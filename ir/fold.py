"""The Rust constant folder: the value of a scalar expression built only from constants,
computed with Rust's semantics (docs/semantics.md), target-free.

- `u32`/`i32` `+ - *`, unary `-`, `!` and `abs` wrap (two's complement); `<<`/`>>` take
  the amount modulo 32 (`>>` arithmetic on i32); `/` truncates, `%` takes the dividend's
  sign, division by zero gives 0 (left alone when a trapping check must run and fault),
  `i32::MIN / -1` wraps to `i32::MIN`.
- `f32` arithmetic rounds once per operation to binary32 (round to nearest even);
  overflow gives infinity, 0/0 NaN. `%` is `fmod`.
- casts: int -> int reinterprets, int -> f32 rounds to nearest even, f32 -> int truncates
  and saturates with NaN -> 0, bool -> 0/1.
- `min`/`max`/`clamp` on f32 follow the runtime helpers (a NaN operand yields the other
  one, `clamp(x, lo, hi) = min(max(x, lo), hi)`); `round` is half away from zero.
Intrinsics without an exact value (transcendentals) and vector expressions are not folded.

Emitters whose compiler evaluates constant subtrees itself (naga rejects `i32::MAX + 1`
and infinite floats, where Rust wraps and IEEE gives infinity) print the folded value.
"""

from __future__ import annotations

from typing import Optional, Union

import numpy as np

from . import nodes as N
from . import types as T

Value = Union[int, float, bool]

__all__ = ["fold", "constant_tree", "wrap_int"]


def wrap_int(v: int, ty: str) -> int:
    """`v` reduced to `ty` (u32 or i32) with two's-complement wrap-around."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if ty == "i32" and v >= 1 << 31 else v


def fold(e: N.Expr) -> Optional[Value]:
    """The value of a scalar expression built only from constants, or None."""
    if isinstance(e, N.Const):
        return e.value
    if not T.is_scalar(e.ty) or not isinstance(e, (N.Unary, N.Binary, N.Cast, N.Call, N.Select)):
        return None
    if isinstance(e, N.Select):
        c = fold(e.cond)
        return None if c is None else fold(e.if_true if c else e.if_false)
    vals = []
    for k in N.expr_children(e):  # None at the first non-scalar or non-constant operand
        if k.ty not in T.SCALARS:
            return None
        v = fold(k)
        if v is None:
            return None
        vals.append(v)
    kids = N.expr_children(e)
    f = np.float32
    with np.errstate(all="ignore"):
        if isinstance(e, N.Call):
            return _fold_call(e.func, vals, kids[0].ty)
        if isinstance(e, N.Cast):
            v, src, dst = vals[0], e.value.ty, e.ty
            if src == "bool":
                return float(v) if dst == "f32" else int(v)
            if src in T.INTS and dst in T.INTS:
                return wrap_int(v, dst)
            if dst == "f32":
                return float(f(v))
            if np.isnan(v):
                return 0
            lo, hi = T.INT_RANGES[dst]
            return int(min(max(np.trunc(v), lo), hi))
        if isinstance(e, N.Unary):
            v, t = vals[0], e.operand.ty
            if e.op == "neg":
                return float(-f(v)) if t == "f32" else wrap_int(-v, t)
            return (not v) if t == "bool" else wrap_int(~v, t)
        a, b, t, op = vals[0], vals[1], e.lhs.ty, e.op
        if op in N.COMPARISONS:
            x, y = (f(a), f(b)) if t == "f32" else (a, b)
            return bool({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op])
        if op in ("and", "or"):
            return (a and b) if op == "and" else (a or b)
        if t == "bool":
            return {"bitand": a and b, "bitor": a or b, "bitxor": a != b}.get(op)
        if t == "f32":
            x, y = f(a), f(b)
            r = {"add": x + y, "sub": x - y, "mul": x * y, "div": x / y, "rem": np.fmod(x, y)}.get(op)
            return None if r is None else float(r)
        if op in ("shl", "shr"):
            s = b & 31
            return wrap_int(a << s, t) if op == "shl" else a >> s  # i32: arithmetic, u32: logical
        if op in ("div", "rem"):
            if b == 0:
                return None if e.check >= 0 else 0  # a trapping check must run (and fault)
            q = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
            return wrap_int(q if op == "div" else a - q * b, t)
        r = {"add": a + b, "sub": a - b, "mul": a * b, "bitand": a & b, "bitor": a | b, "bitxor": a ^ b}.get(op)
        return None if r is None else wrap_int(r, t)


def _fmin(a, b, take_b) -> float:
    """Rust's f32::min/max as the runtime helpers compute them (a NaN yields the other)."""
    if np.isnan(a):
        return float(b)
    if np.isnan(b):
        return float(a)
    return float(b) if take_b else float(a)


def _fold_call(fn: str, vals: list, ty: str) -> Optional[Value]:
    """Constant intrinsic calls with an exact value; None leaves them to the runtime."""
    f = np.float32
    if fn == "to_bits":
        return int(f(vals[0]).view(np.uint32))
    if fn == "from_bits":
        return float(np.uint32(vals[0]).view(np.float32))
    if ty in T.INTS:
        if fn == "abs":
            return wrap_int(abs(vals[0]), ty)
        if fn in ("min", "max"):
            return min(vals) if fn == "min" else max(vals)
        if fn == "clamp":
            return min(max(vals[0], vals[1]), vals[2])
        return None
    if ty != "f32":
        return None
    x = [f(v) for v in vals]
    if fn == "abs":
        return float(np.abs(x[0]))
    if fn in ("floor", "ceil", "trunc", "sqrt"):
        return float(getattr(np, fn)(x[0]))
    if fn == "round":
        t = np.trunc(x[0])
        return float(t + np.sign(x[0]) if abs(float(x[0]) - float(t)) >= 0.5 else t)
    if fn == "min":  # of equal operands the second (ir/rules.py)
        return _fmin(x[0], x[1], not x[0] < x[1])
    if fn == "max":
        return _fmin(x[0], x[1], not x[0] > x[1])
    if fn == "clamp":  # Rust's f32::clamp: `x < lo` then `x > hi`, so NaN stays NaN
        r = x[1] if x[0] < x[1] else x[0]
        return float(x[2] if r > x[2] else r)
    return None


def constant_tree(e: N.Expr) -> bool:
    """Built from literals alone (vectors included), so a compiler that folds constant
    subtrees itself would evaluate it, with its own rules, when the module is created."""
    return all(isinstance(x, (N.Const, N.Unary, N.Binary, N.Cast, N.Call, N.Construct, N.Swizzle, N.Select))
               for x in N.walk_expr(e))
