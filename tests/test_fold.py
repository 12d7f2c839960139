"""The Rust constant folder (ir/fold.py) against plain-Python definitions of Rust's
semantics: integers as Python ints wrapped to 32 bits, f32 as a double rounded once to
binary32 (exact for + - * / and sqrt of binary32 operands: 53 >= 2 * 24 + 2 bits), every
operator over edge values (0, -0.0, MIN, MAX, NaN, infinities, halves, shift amounts past
31) and random ones, compared bit for bit."""

from __future__ import annotations

import itertools
import math
import random
import struct

import pytest

from goldy_import.ir import nodes as N
from goldy_import.ir.fold import constant_tree, fold

SP = N.NO_SPAN
I32_MIN, I32_MAX, U32_MAX = -2**31, 2**31 - 1, 2**32 - 1

# ---------------------------------------------------------------- Rust, in plain Python


def f32(x: float) -> float:
    """x rounded to binary32 (to nearest even; overflow to infinity)."""
    if math.isnan(x):
        return x
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # rounds past f32::MAX
        return math.copysign(math.inf, x)


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def from_bits(b: int) -> float:
    return struct.unpack("<f", struct.pack("<I", b))[0]


def wrap(v: int, ty: str) -> int:
    v %= 2**32
    return v - 2**32 if ty == "i32" and v > I32_MAX else v


def int_div(a: int, b: int, ty: str, op: str) -> int:
    """Rust's wrapping_div / wrapping_rem (quotient toward zero, remainder with the sign of
    the dividend); by zero the dialect gives 0."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    if (a < 0) != (b < 0):
        q = -q
    return wrap(q, ty) if op == "div" else wrap(a - b * q, ty)


def rust_binary(op: str, ty: str, a, b):
    if op in ("eq", "ne", "lt", "le", "gt", "ge"):
        return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]
    if ty == "bool":
        return {"and": a and b, "or": a or b, "bitand": a and b, "bitor": a or b, "bitxor": a != b}[op]
    if ty == "f32":
        if op == "rem":
            if math.isnan(a) or math.isnan(b) or math.isinf(a) or b == 0:
                return math.nan
            return math.fmod(a, b) if not math.isinf(b) else a
        if op == "div":
            if b == 0:
                return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
            return f32(a / b)
        with_inf = {"add": lambda: a + b, "sub": lambda: a - b, "mul": lambda: a * b}[op]()
        return f32(with_inf)
    if op in ("shl", "shr"):
        s = b % 32
        return wrap(a << s, ty) if op == "shl" else a >> s  # Python's >> is arithmetic
    if op in ("div", "rem"):
        return int_div(a, b, ty, op)
    return wrap({"add": a + b, "sub": a - b, "mul": a * b, "bitand": a & b, "bitor": a | b,
                 "bitxor": a ^ b}[op], ty)


def rust_cast(v, src: str, dst: str):
    if src == "bool":
        return 1.0 * v if dst == "f32" else int(v)
    if src == "f32" and dst != "f32":
        if math.isnan(v):
            return 0
        lo, hi = (I32_MIN, I32_MAX) if dst == "i32" else (0, U32_MAX)
        return lo if v <= lo else hi if v >= hi else math.trunc(v)  # `as` saturates
    if dst == "f32":
        return f32(float(v))
    return wrap(v, dst)


def rust_minmax(a: float, b: float, want_min: bool) -> float:
    """f32::min / f32::max: a NaN operand yields the other one."""
    if math.isnan(a):
        return b
    if math.isnan(b):
        return a
    # equal operands (-0.0, +0.0): Rust allows either; the dialect returns the second (ir/rules.py)
    return (a if a < b else b) if want_min else (a if a > b else b)


def rust_round(x: float) -> float:
    if not math.isfinite(x) or abs(x) >= 2**23:
        return x
    return math.copysign(float(math.floor(abs(x) + 0.5)), x)  # half away from zero, keeps -0.0


def integral(fn, x: float) -> float:
    if not math.isfinite(x):
        return x
    r = float(fn(x))
    return math.copysign(r, x) if r == 0 else r


def rust_call(fn: str, ty: str, args: list):
    x = args[0]
    if fn == "to_bits":
        return bits(x)
    if fn == "from_bits":
        return from_bits(x)
    if ty != "f32":
        if fn == "abs":
            return wrap(abs(x), ty)
        return {"min": lambda: min(args), "max": lambda: max(args),
                "clamp": lambda: max(args[1], min(x, args[2])) if args[1] <= args[2] else None}[fn]()
    if fn == "abs":
        return math.copysign(x, 1.0)
    if fn == "floor":
        return integral(math.floor, x)
    if fn == "ceil":
        return integral(math.ceil, x)
    if fn == "trunc":
        return integral(math.trunc, x)
    if fn == "round":
        return rust_round(x)
    if fn == "sqrt":
        if math.isnan(x) or x < 0:
            return math.nan
        return f32(math.sqrt(x))
    if fn in ("min", "max"):
        return rust_minmax(x, args[1], fn == "min")
    assert fn == "clamp"  # f32::clamp as Rust's core writes it: NaN stays NaN
    if x < args[1]:
        x = args[1]
    if x > args[2]:
        x = args[2]
    return x


# ---------------------------------------------------------------- operands

rng = random.Random(12)
INT_EDGES = {"i32": [0, 1, -1, 2, -2, 7, -7, 31, 32, 33, -32, I32_MIN, I32_MIN + 1, I32_MAX, 65536],
             "u32": [0, 1, 2, 7, 31, 32, 33, 2**31, 2**31 - 1, U32_MAX, U32_MAX - 1, 65536]}
F32_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, 3.0, -7.25,
             math.inf, -math.inf, math.nan, from_bits(0x7F7FFFFF), -from_bits(0x7F7FFFFF),
             from_bits(0x00800000), 8388607.5, 16777217.0, 1e10, -1e-10, 3e38]


def values(ty: str) -> list:
    if ty == "bool":
        return [False, True]
    if ty == "f32":
        rand = [f32(rng.uniform(-1, 1) * 10.0 ** rng.uniform(-6, 6)) for _ in range(10)]
        return [f32(v) for v in F32_EDGES] + rand
    lo, hi = (I32_MIN, I32_MAX) if ty == "i32" else (0, U32_MAX)
    return INT_EDGES[ty] + [rng.randint(lo, hi) for _ in range(8)]


def const(ty: str, v) -> N.Const:
    return N.Const(ty, SP, float(v) if ty == "f32" else v)


def same(got, want, ty: str) -> bool:
    if ty == "f32" and isinstance(want, float):
        return isinstance(got, float) and (math.isnan(got) and math.isnan(want) or bits(got) == bits(want))
    return type(got) is type(want) and got == want


# ---------------------------------------------------------------- the tests

BINARY = {"i32": ["add", "sub", "mul", "div", "rem", "bitand", "bitor", "bitxor", "shl", "shr",
                  "eq", "ne", "lt", "le", "gt", "ge"],
          "u32": ["add", "sub", "mul", "div", "rem", "bitand", "bitor", "bitxor", "shl", "shr",
                  "eq", "ne", "lt", "le", "gt", "ge"],
          "f32": ["add", "sub", "mul", "div", "rem", "eq", "ne", "lt", "le", "gt", "ge"],
          "bool": ["and", "or", "bitand", "bitor", "bitxor", "eq", "ne"]}


@pytest.mark.parametrize("ty", list(BINARY))
def test_binary_operators(ty):
    vals = values(ty)
    for op in BINARY[ty]:
        result_ty = "bool" if op in N.COMPARISONS else ty
        for a, b in itertools.product(vals, vals):
            e = N.Binary(result_ty, SP, op, const(ty, a), const(ty, b))
            want = rust_binary(op, ty, a, b)
            assert same(fold(e), want, result_ty), (op, ty, a, b, fold(e), want)


@pytest.mark.parametrize("ty", ["i32", "u32"])
def test_shift_amount_of_the_other_type(ty):
    other = "u32" if ty == "i32" else "i32"
    for a, s in itertools.product(values(ty), values(other)):
        for op in ("shl", "shr"):
            e = N.Binary(ty, SP, op, const(ty, a), const(other, s))
            assert fold(e) == rust_binary(op, ty, a, s % 2**32), (op, a, s)


def test_unary_operators():
    for ty in ("i32", "f32"):
        for v in values(ty):
            want = -v if ty == "f32" else wrap(-v, ty)
            assert same(fold(N.Unary(ty, SP, "neg", const(ty, v))), want, ty), v
    for ty in ("i32", "u32"):
        for v in values(ty):
            assert fold(N.Unary(ty, SP, "not", const(ty, v))) == wrap(~v, ty), v
    assert fold(N.Unary("bool", SP, "not", const("bool", True))) is False


def test_casts():
    types = ["i32", "u32", "f32", "bool"]
    for src, dst in itertools.product(types, types[:3]):
        for v in values(src):
            want = rust_cast(v, src, dst)
            got = fold(N.Cast(dst, SP, const(src, v)))
            assert same(got, want, dst), (src, dst, v, got, want)


UNARY_CALLS = ["abs", "floor", "ceil", "trunc", "round", "sqrt", "to_bits"]


def test_calls():
    for fn in UNARY_CALLS:
        for v in values("f32"):
            want = rust_call(fn, "f32", [v])
            assert same(fold(N.Call("u32" if fn == "to_bits" else "f32", SP, fn, [const("f32", v)])), want,
                        "u32" if fn == "to_bits" else "f32"), (fn, v)
    for b in [0, 1, 0x3F800000, 0x7F800000, 0xFF800000, 0x80000000, 0x7F7FFFFF, rng.getrandbits(32)]:
        assert same(fold(N.Call("f32", SP, "from_bits", [const("u32", b)])), from_bits(b), "f32"), b
    for ty in ("f32", "i32", "u32"):
        vals = values(ty)
        for fn in ("min", "max"):
            for a, b in itertools.product(vals, vals):
                got = fold(N.Call(ty, SP, fn, [const(ty, a), const(ty, b)]))
                assert same(got, rust_call(fn, ty, [a, b]), ty), (fn, ty, a, b)
        if ty != "f32":
            for v in vals:
                assert fold(N.Call(ty, SP, "abs", [const(ty, v)])) == rust_call("abs", ty, [v]), v


def _clamp_cases(ty: str, nan_x: bool):
    vals = [v for v in values(ty) if not (ty == "f32" and math.isnan(v))]
    xs = [math.nan] if nan_x else vals
    for x, lo, hi in itertools.product(xs, vals[:12], vals[:12]):
        if lo <= hi:  # Rust's clamp panics otherwise
            yield x, lo, hi


@pytest.mark.parametrize("ty", ["f32", "i32", "u32"])
def test_clamp(ty):
    for x, lo, hi in _clamp_cases(ty, nan_x=False):
        got = fold(N.Call(ty, SP, "clamp", [const(ty, x), const(ty, lo), const(ty, hi)]))
        assert same(got, rust_call("clamp", ty, [x, lo, hi]), ty), (x, lo, hi, got)


def test_clamp_of_nan_is_nan():  # issue 13 item 4
    for x, lo, hi in _clamp_cases("f32", nan_x=True):
        assert math.isnan(fold(N.Call("f32", SP, "clamp", [const("f32", x), const("f32", lo), const("f32", hi)])))


def test_nested_and_select():
    one, big = const("i32", 1), const("i32", I32_MAX)
    e = N.Binary("i32", SP, "mul", N.Binary("i32", SP, "add", big, one), const("i32", 3))
    assert fold(e) == wrap((I32_MAX + 1) * 3, "i32")
    sel = N.Select("f32", SP, N.Binary("bool", SP, "lt", one, big), const("f32", 2.0), const("f32", 3.0))
    assert fold(sel) == 2.0


def test_what_is_left_to_the_runtime():
    x = N.Var("f32", SP, "x")
    assert fold(N.Binary("f32", SP, "add", x, const("f32", 1.0))) is None
    assert fold(N.Call("f32", SP, "exp", [const("f32", 1.0)])) is None  # no exact value
    checked = N.Binary("u32", SP, "div", const("u32", 3), const("u32", 0), check=4)
    assert fold(checked) is None  # the trapping check must run and fault
    assert fold(N.Binary("u32", SP, "div", const("u32", 3), const("u32", 0))) == 0
    vec = N.Construct("vec2<f32>", SP, [const("f32", 1.0), const("f32", 2.0)])
    assert fold(vec) is None and constant_tree(vec)
    assert fold(N.Swizzle("f32", SP, vec, "x")) is None
    assert not constant_tree(N.Binary("f32", SP, "add", x, const("f32", 1.0)))
