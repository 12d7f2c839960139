"""The oracle checked against Rust's semantics written out in plain Python: for every
scalar operator, cast and exact intrinsic the fuzzer (tests/kernel_gen.py) uses, every pair
of edge values (negative integers, `i32::MIN`, `-1`, shift amounts >= 32 and negative,
NaN, infinities, -0.0, subnormals, halves, values past the integer ranges) goes through a
kernel, and each result must have the bits the Python definition gives: integers are
Python ints wrapped explicitly, f32 results are computed exactly in Python (`float`,
`math.fmod`, `fractions.Fraction` for `mul_add`) and rounded to f32 with `struct`.

It runs on every backend, the CPU oracle first: the differential tests compare the other
backends with the oracle, this test says the oracle is right. Division by zero runs with
trapping checks off (it then gives 0, docs/semantics.md).
"""

from __future__ import annotations

import math
import struct
from fractions import Fraction
from typing import Callable, NamedTuple

import numpy as np
import pytest

import kernel_gen as G
from oracle import backend_or_skip, run_kernel, same_bits

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
MIN, MAX = -(2**31), 2**31 - 1

I32_EDGES = [0, 1, -1, 2, -2, 3, -3, 4, -4, 7, -7, 9, -9, 31, -31, 32, -32, 33, -33, 64, 100, -100,
             0x55555555, MAX, MAX - 1, MIN, MIN + 1]
U32_EDGES = [0, 1, 2, 3, 4, 7, 9, 31, 32, 33, 63, 64, 100, 255, 0x55555555, 0x7FFFFFFF, 0x80000000, 0x80000001,
             0xFFFFFFFE, 0xFFFFFFFF]
F32_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3.0, -3.0, 0.1, -7.25, 31.0, 0.49999997,
             -0.49999997, 8388609.0, 16777216.0, 1e6, 2147483520.0, 2147483648.0, -2147483648.0, -2147483904.0,
             4294967040.0, 4294967296.0, 1e30, 3.4028235e38, -3.4028235e38, 1.1754944e-38, 1.1754942e-38, 3e-45,
             -1e-45, -1e-40, math.inf, -math.inf, math.nan]  # rounded to f32 below


# ---------------------------------------------------------------- Rust, in plain Python


def i32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def u32(v: int) -> int:
    return v % 2**32


def f32(v: float) -> float:
    """The f32 nearest to a double (ties to even), as `struct` packs it; beyond the range inf."""
    try:
        return struct.unpack("<f", struct.pack("<f", v))[0]
    except OverflowError:
        return math.copysign(math.inf, v)


def f32_exact(q: Fraction) -> float:
    """The f32 nearest to an exact rational (ties to even), without double rounding."""
    top = Fraction(2) ** 128 - Fraction(2) ** 103  # halfway between f32::MAX and 2^128
    if abs(q) >= top:
        return math.copysign(math.inf, q)
    near = np.float32(float(q))  # float(Fraction) rounds once; the f32 step may round again
    with np.errstate(over="ignore"):
        cands = [near, np.nextafter(near, np.float32(np.inf)), np.nextafter(near, np.float32(-np.inf))]
    cands = [c for c in cands if np.isfinite(c)]
    return float(min(cands, key=lambda c: (abs(Fraction(float(c)) - q), int(c.view(np.uint32)) & 1)))


def trunc_div(x: int, y: int) -> int:
    """Rust's `/`: toward zero (Python's `//` floors)."""
    q = abs(x) // abs(y)
    return q if (x < 0) == (y < 0) else -q


def div(x: int, y: int, wrap) -> int:
    return 0 if y == 0 else wrap(trunc_div(x, y))  # by zero: 0 unchecked; MIN / -1 wraps to MIN


def rem(x: int, y: int, wrap) -> int:
    return 0 if y == 0 else wrap(x - y * trunc_div(x, y))  # the sign of the dividend


def shift_amount(s: int) -> int:
    return u32(s) & 31  # wrapping_shl / wrapping_shr: the amount as u32, modulo 32


def fdiv(x: float, y: float) -> float:
    if y == 0:
        return math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1.0, y)
    return f32(x / y)  # f32 operands: the double quotient rounds to the right f32 (53 >= 2 * 24 + 2)


def fmod(x: float, y: float) -> float:
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return math.nan
    return math.fmod(x, y)  # exact, and an f32 (Rust's `%` on f32 is fmod)


def fsqrt(x: float) -> float:
    if math.isnan(x) or x < 0:
        return math.nan
    return f32(math.sqrt(x))  # -0.0 stays -0.0


def integral(f: Callable[[float], float]) -> Callable[[float], float]:
    """floor, ceil, trunc, round: infinities and NaN unchanged, a zero result keeps x's sign."""
    def g(x: float) -> float:
        if not math.isfinite(x):
            return x
        return math.copysign(float(f(x)), x) if f(x) == 0 else float(f(x))
    return g


def rust_round(x: float) -> float:
    return math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)  # half away from zero (abs(x) + 0.5 is exact)


def fmin(x: float, y: float) -> float:
    return y if math.isnan(x) else x if math.isnan(y) else min(x, y)  # NaN: the other operand


def fmax(x: float, y: float) -> float:
    return y if math.isnan(x) else x if math.isnan(y) else max(x, y)


def fclamp(x: float, lo: float, hi: float) -> float:
    return lo if x < lo else hi if x > hi else x  # Rust's f32::clamp: NaN stays NaN


def fma(x: float, y: float, z: float) -> float:
    if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
        return x * y + z  # the product of two f32 is exact in a double: one IEEE special case
    exact = Fraction(x) * Fraction(y) + Fraction(z)
    if exact == 0:  # +0, except -0 when the product and z are both -0 (IEEE, to nearest)
        product_negative_zero = (x == 0 or y == 0) and math.copysign(1, x) * math.copysign(1, y) < 0
        return -0.0 if product_negative_zero and z == 0 and math.copysign(1, z) < 0 else 0.0
    return f32_exact(exact)


def to_int(x: float, lo: int, hi: int) -> int:
    """`as` from f32: toward zero, saturating, NaN gives 0."""
    return 0 if math.isnan(x) else lo if x <= lo else hi if x >= hi else int(x)


def bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


# ---------------------------------------------------------------- the operators


class Op(NamedTuple):
    rust: str  # over x, y (the pair) and z (a third edge value)
    ty: str  # the result type
    ref: Callable
    zero_sign_free: bool = False  # Rust leaves which zero min/max return for -0.0 vs 0.0
    known_wrong: str = ""  # a kernel_gen.KNOWN_WRONG construct: left out where a corpus case pins it


def int_ops(ty: str, wrap) -> list[Op]:
    ops = [Op("x + y", ty, lambda x, y, z: wrap(x + y)), Op("x - y", ty, lambda x, y, z: wrap(x - y)),
           Op("x * y", ty, lambda x, y, z: wrap(x * y)), Op("x / y", ty, lambda x, y, z: div(x, y, wrap)),
           Op("x % y", ty, lambda x, y, z: rem(x, y, wrap)), Op("x & y", ty, lambda x, y, z: wrap(x & y)),
           Op("x | y", ty, lambda x, y, z: wrap(x | y)), Op("x ^ y", ty, lambda x, y, z: wrap(x ^ y)),
           Op("!x", ty, lambda x, y, z: wrap(~x)),
           Op("x << y", ty, lambda x, y, z: wrap(x << shift_amount(y))),
           Op("x >> y", ty, lambda x, y, z: wrap(x >> shift_amount(y)) if ty == "i32" else x >> shift_amount(y)),
           Op("x << (y as u32)" if ty == "i32" else "x << (y as i32)", ty,
              lambda x, y, z: wrap(x << shift_amount(y))),
           Op("x.min(y)", ty, lambda x, y, z: min(x, y)), Op("x.max(y)", ty, lambda x, y, z: max(x, y)),
           Op("x.clamp(y.min(z), y.max(z))", ty, lambda x, y, z: max(min(y, z), min(x, max(y, z)))),
           Op("x as f32", "f32", lambda x, y, z: f32(float(x))),
           Op("(x < y) as u32", "u32", lambda x, y, z: int(x < y)),
           Op("(x <= y) as u32", "u32", lambda x, y, z: int(x <= y)),
           Op("(x == y) as u32", "u32", lambda x, y, z: int(x == y)),
           Op("(x != y) as u32", "u32", lambda x, y, z: int(x != y))]
    if ty == "i32":
        ops += [Op("-x", ty, lambda x, y, z: i32(-x)), Op("x.abs()", ty, lambda x, y, z: i32(abs(x))),
                Op("x as u32", "u32", lambda x, y, z: u32(x))]
    else:
        ops += [Op("x as i32", "i32", lambda x, y, z: i32(x))]
    return ops


F32_OPS = [
    Op("x + y", "f32", lambda x, y, z: f32(x + y)), Op("x - y", "f32", lambda x, y, z: f32(x - y)),
    Op("x * y", "f32", lambda x, y, z: f32(x * y)), Op("x / y", "f32", lambda x, y, z: fdiv(x, y)),
    Op("x % y", "f32", lambda x, y, z: fmod(x, y)), Op("-x", "f32", lambda x, y, z: -x),
    Op("x.abs()", "f32", lambda x, y, z: abs(x)), Op("x.sqrt()", "f32", lambda x, y, z: fsqrt(x)),
    Op("x.floor()", "f32", lambda x, y, z: integral(math.floor)(x)),
    Op("x.ceil()", "f32", lambda x, y, z: integral(math.ceil)(x)),
    Op("x.trunc()", "f32", lambda x, y, z: integral(math.trunc)(x)),
    Op("x.round()", "f32", lambda x, y, z: integral(rust_round)(x)),
    Op("x.min(y)", "f32", lambda x, y, z: fmin(x, y), True), Op("x.max(y)", "f32", lambda x, y, z: fmax(x, y), True),
    Op("x.mul_add(y, z)", "f32", lambda x, y, z: fma(x, y, z)),
    Op("x as i32", "i32", lambda x, y, z: to_int(x, MIN, MAX)),
    Op("x as u32", "u32", lambda x, y, z: to_int(x, 0, 2**32 - 1)),
    Op("x.to_bits()", "u32", lambda x, y, z: bits(x) if not math.isnan(x) else None),  # NaN payload: any
    Op("f32::from_bits(x.to_bits() ^ 0x80000000u32)", "f32", lambda x, y, z: -x),
    Op("(x < y) as u32", "u32", lambda x, y, z: int(x < y)), Op("(x <= y) as u32", "u32", lambda x, y, z: int(x <= y)),
    Op("(x > y) as u32", "u32", lambda x, y, z: int(x > y)), Op("(x >= y) as u32", "u32", lambda x, y, z: int(x >= y)),
    Op("(x == y) as u32", "u32", lambda x, y, z: int(x == y)),
    Op("(x != y) as u32", "u32", lambda x, y, z: int(x != y), known_wrong="f32 !="),
]
# Rust's clamp(NaN, lo, hi) is NaN; it panics for lo > hi or a NaN bound, so the bounds are ordered numbers
F32_CLAMP = [Op("x.clamp(-1.5, 2.5)", "f32", lambda x, y, z: fclamp(x, -1.5, 2.5), True),
             Op("x.clamp(0.0, 3e-45)", "f32", lambda x, y, z: fclamp(x, 0.0, 3e-45), True)]

EDGES = {"i32": I32_EDGES, "u32": U32_EDGES, "f32": [f32(v) for v in F32_EDGES]}
OPS = {"i32": int_ops("i32", i32), "u32": int_ops("u32", u32), "f32": F32_OPS}
DTYPES = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}


def kernel_source(name: str, ty: str, ops: list[Op]) -> str:
    outs = {"u32": "ou", "i32": "oi", "f32": "of"}
    k = {t: [o for o in ops if o.ty == t] for t in outs}
    lines = []
    for t, name_ in outs.items():
        for j, o in enumerate(k[t]):
            lines.append(f"        {name_}[i * {max(1, len(k[t]))}u32 + {j}u32] = {o.rust};")
    body = "\n".join(lines)
    return f"""use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn {name}(a: &[{ty}], b: &[{ty}], c: &[{ty}], ou: &mut [u32], oi: &mut [i32], of: &mut [f32]) {{
    let i = gpu::global_id().x;
    if i < a.len() {{
        let x = a[i];
        let y = b[i];
        let z = c[i];
{body}
    }}
}}
"""


def run_table(backend: str, monkeypatch, ty: str, ops: list[Op], name: str) -> None:
    edges = EDGES[ty]
    xs = [x for x in edges for _ in edges]
    ys = [y for _ in edges for y in edges]
    zs = [edges[(j * 7 + 3) % len(edges)] for j in range(len(xs))]
    n = len(xs)
    dt = DTYPES[ty]
    per = {t: [o for o in ops if o.ty == t] for t in ("u32", "i32", "f32")}
    outs = [np.zeros(n * max(1, len(per[t])), DTYPES[t]) for t in ("u32", "i32", "f32")]
    monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")  # division by zero gives 0
    got = run_kernel(backend, kernel_source(name, ty, ops), name,
                     [np.array(xs, dt), np.array(ys, dt), np.array(zs, dt)] + outs, ("over_1d", n))
    wrong = []
    for t, out in zip(("u32", "i32", "f32"), got[3:]):
        out = out.reshape(n, max(1, len(per[t])))
        for j, o in enumerate(per[t]):
            want = [o.ref(x, y, z) for x, y, z in zip(xs, ys, zs)]
            known = np.array([w is not None for w in want])
            w = np.array([0 if v is None else v for v in want], dtype=DTYPES[t])
            g = out[:, j]
            same = same_bits(g, w) if t == "f32" else g == w
            if o.zero_sign_free:
                same |= (g == 0) & (w == 0) & (np.array(xs) == 0) & (np.array(ys) == 0)
                if o.rust.startswith("x.clamp"):
                    same |= (g == 0) & (w == 0)
            bad = np.flatnonzero(~same & known)
            if len(bad):
                k = bad[0]
                wrong.append(f"`{o.rust}` with x = {xs[k]!r}, y = {ys[k]!r}, z = {zs[k]!r}: {backend} gives "
                             f"{g[k]!r}, Rust {w[k]!r} ({len(bad)} of {n} pairs wrong)")
    assert not wrong, f"{ty} on {backend}:\n" + "\n".join(wrong)


@pytest.mark.parametrize("ty", ["i32", "u32", "f32"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_operators_follow_rust(backend, ty, monkeypatch):
    backend_or_skip(backend)
    ops = [o for o in OPS[ty] if o.known_wrong not in G.avoided(backend)]
    run_table(backend, monkeypatch, ty, ops, f"sem_{ty}_{len(ops)}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_clamp_follows_rust(backend, monkeypatch):
    backend_or_skip(backend)
    run_table(backend, monkeypatch, "f32", F32_CLAMP, "sem_clamp")


# ---------------------------------------------------------------- the Python definitions themselves


def test_the_python_definitions_match_rust_documentation():
    """A few values straight from Rust's documentation, so the definitions above are not
    just checked against themselves."""
    assert [rem(x, y, i32) for x, y in zip([7, -7, 9, -9, MIN, MIN], [3, 3, 0, -4, -1, 7])] == [1, -1, 0, -1, 0, -2]
    assert div(MIN, -1, i32) == MIN and div(-7, 2, i32) == -3 and rem(-7, 2, i32) == -1
    assert i32(1 << shift_amount(33)) == 2 and i32(MIN >> shift_amount(-1)) == -1
    assert u32(1 << shift_amount(-1)) == 2**31 and u32(MIN) == 2**31
    assert to_int(math.nan, MIN, MAX) == 0 and to_int(-1.5, 0, 2**32 - 1) == 0 and to_int(3e9, MIN, MAX) == MAX
    assert integral(rust_round)(-2.5) == -3.0 and integral(rust_round)(2.5) == 3.0
    assert math.copysign(1, integral(rust_round)(-0.4)) == -1 and math.copysign(1, integral(math.ceil)(-0.5)) == -1
    assert fmin(math.nan, 1.0) == 1.0 and fmax(2.0, math.nan) == 2.0 and math.isnan(fclamp(math.nan, -1.0, 1.0))
    assert fmod(-7.25, 2.0) == -1.25 and math.isnan(fmod(1.0, 0.0)) and fmod(3.0, math.inf) == 3.0
    assert f32(0.1) == float(np.float32(0.1)) and f32(1e39) == math.inf and f32(1e-46) == 0.0
    # fma rounds once: 0.1 * 10 - 1 is not 0 when fused
    x = f32(0.1)
    assert fma(x, 10.0, -1.0) == f32_exact(Fraction(x) * 10 - 1) != 0.0 and f32(x * 10.0) - 1.0 == 0.0
    assert f32_exact(Fraction(1) + Fraction(2) ** -24) == 1.0  # a tie: to even
    assert f32_exact(Fraction(1) + Fraction(2) ** -24 + Fraction(2) ** -60) == 1.0 + 2.0 ** -23
