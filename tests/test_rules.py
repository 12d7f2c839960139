"""Rust's integer and float rules (ir/rules.py): the CPU oracle's rendering checked against
plain Python definitions of Rust's semantics (Python ints with explicit wrapping, math.fmod,
struct for f32 rounding), and every backend's rendering checked bit for bit against the
oracle over fresh random data plus edge values (0, -1, MIN, MAX, +-0.0, +-inf, NaN,
subnormals, shift amounts >= 32 and negative), outputs poisoned. Includes the wrong
answers of issue 13: i32 `%` of negative operands (NVIDIA's Vulkan driver) and
`f32::clamp(NaN)`."""

from __future__ import annotations

import math
import os
import struct

import numpy as np
import pytest

from goldy_import.codegen import math_text
from goldy_import.codegen.cpu.math import evaluate_rule
from goldy_import.ir.rules import RULES
from oracle import run_kernel, same_bits

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
MIN, MAX = -2 ** 31, 2 ** 31 - 1
POISON = 0xDEADBEEF


def seed() -> int:
    return int(np.random.SeedSequence().entropy % 2 ** 32)


# ---------------------------------------------------------------- Rust, in plain Python


def wrap(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - 2 ** 32 if v >= 2 ** 31 else v


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _idiv(a, b):
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q)


def _irem(a, b):
    return 0 if b == 0 else int(math.fmod(a, b))   # exact: |a| < 2^53; the dividend's sign


def _trunc_sat(x, lo, hi):
    if math.isnan(x):
        return 0
    if math.isinf(x):
        return hi if x > 0 else lo
    return min(max(math.trunc(x), lo), hi)


def _round(x):
    if not math.isfinite(x):
        return x
    t = math.trunc(x)
    r = t + math.copysign(1, x) if abs(x - t) >= 0.5 else t
    return math.copysign(float(r), x)


def _min(a, b):  # equal operands (-0, +0): Rust allows either; the rule takes the second
    return b if math.isnan(a) else a if math.isnan(b) else (a if a < b else b)


def _max(a, b):
    return b if math.isnan(a) else a if math.isnan(b) else (a if a > b else b)


def _clamp(x, lo, hi):  # core::f32::clamp without its assert
    x = lo if x < lo else x
    return hi if x > hi else x


RUST = {
    "div_u32": lambda a, b: 0 if b == 0 else a // b,
    "rem_u32": lambda a, b: 0 if b == 0 else a % b,
    "div_i32": _idiv,
    "rem_i32": _irem,
    "shl_u32": lambda a, s: (a << (s & 31)) & 0xFFFFFFFF,
    "shl_i32": lambda a, s: wrap(a << (s & 31)),
    "shr_u32": lambda a, s: a >> (s & 31),
    "shr_i32": lambda a, s: a >> (s & 31),
    "abs_i32": lambda a: wrap(abs(a)),
    "f32_to_i32": lambda x: _trunc_sat(x, MIN, MAX),
    "f32_to_u32": lambda x: _trunc_sat(x, 0, 2 ** 32 - 1),
    "u32_to_f32": lambda a: f32(float(a)),
    "i32_to_f32": lambda a: f32(float(a)),
    "neg_f32": lambda b: b ^ 0x80000000,    # sign-bit operations: on the bits (NaN payloads too)
    "abs_f32": lambda b: b & 0x7FFFFFFF,
    "min_f32": _min,
    "max_f32": _max,
    "clamp_f32": _clamp,
    "round_f32": _round,
    "lt_f32": lambda a, b: a < b, "gt_f32": lambda a, b: a > b, "le_f32": lambda a, b: a <= b,
    "ge_f32": lambda a, b: a >= b, "eq_f32": lambda a, b: a == b, "ne_f32": lambda a, b: a != b,
    # the intrinsic calls (ir/rules.py CALLS), as core's u32/i32/f32 methods define them
    "count_ones_u32": lambda a: bin(a).count("1"), "count_ones_i32": lambda a: bin(a & 0xFFFFFFFF).count("1"),
    "leading_zeros_u32": lambda a: 32 - a.bit_length(), "leading_zeros_i32": lambda a: 32 - (a & 0xFFFFFFFF).bit_length(),
    "trailing_zeros_u32": lambda a: _tz(a), "trailing_zeros_i32": lambda a: _tz(a & 0xFFFFFFFF),
    "rotate_left_u32": lambda a, s: _rotl(a, s), "rotate_left_i32": lambda a, s: wrap(_rotl(a & 0xFFFFFFFF, s)),
    "rotate_right_u32": lambda a, s: _rotl(a, 32 - s % 32),
    "rotate_right_i32": lambda a, s: wrap(_rotl(a & 0xFFFFFFFF, 32 - s % 32)),
    "signum_i32": lambda a: (a > 0) - (a < 0),
    "signum_f32": lambda x: math.nan if math.isnan(x) else math.copysign(1.0, x),
    "is_nan_f32": math.isnan, "is_finite_f32": math.isfinite, "is_infinite_f32": math.isinf,
}

def _tz(a: int) -> int:
    return 32 if a == 0 else (a & -a).bit_length() - 1


def _rotl(a: int, s: int) -> int:
    s %= 32
    return ((a << s) | (a >> (32 - s))) & 0xFFFFFFFF


# ---------------------------------------------------------------- inputs

INT_EDGES = [0, 1, -1, 2, -2, 3, -3, 7, -7, 9, -9, 31, 32, 33, -31, -32, -33, 63, 64, 255, 1 << 16,
             MIN, MIN + 1, MAX, MAX - 1, -(1 << 30), 1 << 30]
F32_EDGES = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 0.7, -0.7,
             8388607.5, -8388607.5, 8388608.0, 16777217.0, 2.0 ** 31, -(2.0 ** 31), 2147483520.0, -2147483520.0,
             2.0 ** 32, 4294967040.0, 1e10, -1e10, 3.4028235e38, -3.4028235e38, math.inf, -math.inf, math.nan,
             -math.nan, 1.4e-45, -1.4e-45, 3e-45, -3e-45, 1.1754942e-38, -1.1754942e-38, 1.1754944e-38]


def int_inputs(rng, n: int, arity: int) -> list[np.ndarray]:
    edges = np.array(INT_EDGES, np.int64)
    grid = [g.ravel() for g in np.meshgrid(*[edges] * arity)] if arity > 1 else [edges]
    cols = []
    for g in grid:
        rand = [rng.integers(MIN, MAX, n, endpoint=True), rng.integers(-100, 101, n), rng.integers(-40, 41, n)]
        cols.append(np.concatenate([g] + [r[rng.permutation(n)] for r in rand]).astype(np.int32))
    return cols


def f32_inputs(rng, n: int, arity: int) -> list[np.ndarray]:
    edges = np.array(F32_EDGES, np.float32)
    grid = [g.ravel() for g in np.meshgrid(*[edges] * arity)] if arity > 1 else [edges]
    cols = []
    for g in grid:
        sub = rng.integers(1, 1 << 23, n // 8, dtype=np.uint32) | (rng.integers(0, 2, n // 8, dtype=np.uint32) << 31)
        rand = [rng.uniform(-1e3, 1e3, n).astype(np.float32), rng.uniform(-5, 5, n).astype(np.float32),
                rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32).view(np.float32),
                np.round(rng.uniform(-50, 50, n)).astype(np.float32) + np.float32(0.5), sub.view(np.float32)]
        cols.append(np.concatenate([g] + list(rand)))
    return cols


def inputs(rule: str, rng, n: int) -> list[np.ndarray]:
    kinds = RULES[rule].args
    if kinds[0] == "f":
        return f32_inputs(rng, n, len(kinds))
    cols = int_inputs(rng, n, len(kinds))
    return [c.view(np.uint32) if k == "u" else c for c, k in zip(cols, kinds)]


same = same_bits  # bit-equal; two NaNs count as equal (tests/oracle.py)


# ---------------------------------------------------------------- the oracle against Rust


@pytest.mark.parametrize("rule", list(RULES))
def test_oracle_is_rust(rule):
    s = seed()
    xs = inputs(rule, np.random.default_rng(s), 3000)
    got = np.asarray(evaluate_rule(rule, *xs))
    ret = RULES[rule].ret
    if rule in ("neg_f32", "abs_f32"):  # Python floats would not keep a NaN's payload
        got, xs, ret = got.view(np.uint32), [xs[0].view(np.uint32)], "u"
    py = [RUST[rule](*[(float(v) if v.dtype.kind == "f" else int(v)) for v in row]) for row in zip(*xs)]
    want = np.array(py, {"f": np.float32, "u": np.uint32, "i": np.int32, "p": bool}[ret])
    ok = same(got, want)
    if not ok.all():
        bad = np.flatnonzero(~ok)[:5]
        rows = [(tuple(x[j].item() for x in xs), got[j].item(), want[j].item()) for j in bad]
        raise AssertionError(f"{rule} (seed {s}): {int((~ok).sum())} differ from Rust (inputs, oracle, Rust): {rows}")


def test_oracle_scalars_and_broadcast():
    assert evaluate_rule("rem_i32", np.int32(-7), np.int32(3)) == -1
    assert evaluate_rule("div_i32", np.int32(MIN), np.int32(-1)) == MIN
    out = evaluate_rule("clamp_f32", np.float32([np.nan, -0.0, 5.0]), np.float32(0.0), np.float32(1.0))
    assert np.isnan(out[0]) and np.signbit(out[1]) and out[2] == 1.0


def test_numpy_fmin_fmax_are_the_rules():
    """The CPU backend's collective tree combines with np.fmax (codegen/cpu_rt.reduce): it
    must be the max rule bit for bit, signed zeros included."""
    x, y = f32_inputs(np.random.default_rng(seed()), 2000, 2)
    for np_fn, rule in ((np.fmax, "max_f32"), (np.fmin, "min_f32")):
        assert same(np_fn(x, y), evaluate_rule(rule, x, y)).all(), rule


# ---------------------------------------------------------------- every backend against the oracle

INT_KERNEL = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn int_rules(a: &[i32], b: &[i32], out_i: &mut [i32], out_u: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        let x = a[i];
        let y = b[i];
        let ux = x as u32;
        let uy = y as u32;
        let o = i * 12;
        out_i[o] = x / y;
        out_i[o + 1] = x % y;
        out_i[o + 2] = x << y;
        out_i[o + 3] = x >> uy;
        out_i[o + 4] = x.abs();
        out_i[o + 5] = x / 7;
        out_i[o + 6] = x % -3;
        out_i[o + 7] = x / -1;
        out_i[o + 8] = x % -1;
        out_i[o + 9] = x >> 3;
        out_i[o + 10] = (-x) % 5;
        out_i[o + 11] = x / y / 2;
        out_u[o] = ux / uy;
        out_u[o + 1] = ux % uy;
        out_u[o + 2] = ux << uy;
        out_u[o + 3] = ux >> y;
        out_u[o + 4] = ux / 5;
        out_u[o + 5] = ux % 6;
        out_u[o + 6] = ux << 4;
        out_u[o + 7] = ux >> 31;
        out_u[o + 8] = ux / 1;
        out_u[o + 9] = (ux % uy) / 3;
        out_u[o + 10] = ux >> (uy + 32);
        out_u[o + 11] = ux << (y - 64);
    }
}
"""

FLOAT_KERNEL = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn float_rules(x: &[f32], y: &[f32], z: &[f32], out: &mut [f32], out_i: &mut [i32], out_u: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        let a = x[i];
        let o = i * 10;
        out[o] = a.min(y[i]);
        out[o + 1] = a.max(y[i]);
        out[o + 2] = a.clamp(y[i], z[i]);
        out[o + 3] = a.round();
        out[o + 4] = a.abs();
        out[o + 5] = -a;
        out[o + 6] = (a.to_bits() as i32) as f32;
        out[o + 7] = a.to_bits() as f32;
        out[o + 8] = a.clamp(-1.0, 1.0);
        out[o + 9] = a.min(0.0).max(-0.0);
        out_i[2 * i] = a as i32;
        out_i[2 * i + 1] = a.clamp(-128.0, 127.0) as i32;
        out_u[2 * i] = a as u32;
        let b = y[i];
        out_u[2 * i + 1] = (a < b) as u32 | ((a > b) as u32) << 1 | ((a <= b) as u32) << 2
            | ((a >= b) as u32) << 3 | ((a == b) as u32) << 4 | ((a != b) as u32) << 5;
    }
}
"""


def _poison(n: int, dtype) -> np.ndarray:
    return np.full(n, POISON, np.uint32).view(dtype)


def _int_oracle(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    R = evaluate_rule
    ua, ub = a.view(np.uint32), b.view(np.uint32)
    c = lambda v, t=np.int32: np.full(a.shape, v, t)  # noqa: E731
    cu = lambda v: c(v, np.uint32)  # noqa: E731
    oi = [R("div_i32", a, b), R("rem_i32", a, b), R("shl_i32", a, ub), R("shr_i32", a, ub), R("abs_i32", a),
          R("div_i32", a, c(7)), R("rem_i32", a, c(-3)), R("div_i32", a, c(-1)), R("rem_i32", a, c(-1)),
          R("shr_i32", a, cu(3)), R("rem_i32", (np.int64(0) - a).astype(np.int32), c(5)),
          R("div_i32", R("div_i32", a, b), c(2))]
    ou = [R("div_u32", ua, ub), R("rem_u32", ua, ub), R("shl_u32", ua, ub), R("shr_u32", ua, ub),
          R("div_u32", ua, cu(5)), R("rem_u32", ua, cu(6)), R("shl_u32", ua, cu(4)), R("shr_u32", ua, cu(31)),
          R("div_u32", ua, cu(1)), R("div_u32", R("rem_u32", ua, ub), cu(3)), R("shr_u32", ua, ub + np.uint32(32)),
          R("shl_u32", ua, ub - np.uint32(64))]
    return np.stack(oi, 1).reshape(-1), np.stack(ou, 1).reshape(-1)


def _float_oracle(x, y, z):
    R = evaluate_rule
    xb = x.view(np.uint32)
    f = lambda v: np.full(x.shape, v, np.float32)  # noqa: E731
    out = [R("min_f32", x, y), R("max_f32", x, y), R("clamp_f32", x, y, z), R("round_f32", x), R("abs_f32", x),
           R("neg_f32", x), R("i32_to_f32", xb.view(np.int32)), R("u32_to_f32", xb), R("clamp_f32", x, f(-1), f(1)),
           R("max_f32", R("min_f32", x, f(0.0)), f(-0.0))]
    oi = [R("f32_to_i32", x), R("f32_to_i32", R("clamp_f32", x, f(-128), f(127)))]
    cmp = sum(R(f"{op}_f32", x, y).astype(np.uint32) << np.uint32(k) for k, op in enumerate(("lt", "gt", "le", "ge", "eq", "ne")))
    return np.stack(out, 1).reshape(-1), np.stack(oi, 1).reshape(-1), np.stack([R("f32_to_u32", x), cmp], 1).reshape(-1)


@pytest.fixture
def no_checks(monkeypatch):
    """Division by zero is Rust's total rule here (0), not a trapping check."""
    monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")


def _check(what: str, got: np.ndarray, want: np.ndarray, width: int, *xs) -> None:
    ok = same(got, want)
    if not ok.all():
        bad = np.flatnonzero(~ok)[:5]
        rows = [(j % width, tuple(x[j // width].item() for x in xs), got[j].item(), want[j].item()) for j in bad]
        raise AssertionError(f"{what}: {int((~ok).sum())} of {got.size} differ from the CPU oracle "
                             f"(output slot, inputs, got, want): {rows}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_rules_match_the_oracle(backend, no_checks):
    s = seed()
    a, b = int_inputs(np.random.default_rng(s), 2000, 2)
    n = a.size
    got = run_kernel(backend, INT_KERNEL, "int_rules", [a, b, _poison(12 * n, np.int32), _poison(12 * n, np.uint32)],
                     ("over_1d", n))
    want_i, want_u = _int_oracle(a, b)
    _check(f"{backend} i32 (seed {s})", got[2], want_i, 12, a, b)
    _check(f"{backend} u32 (seed {s})", got[3], want_u, 12, a, b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_float_rules_match_the_oracle(backend, no_checks):
    s = seed()
    x, y, z = f32_inputs(np.random.default_rng(s), 2000, 3)
    n = x.size
    got = run_kernel(backend, FLOAT_KERNEL, "float_rules",
                     [x, y, z, _poison(10 * n, np.float32), _poison(2 * n, np.int32), _poison(2 * n, np.uint32)],
                     ("over_1d", n))
    want_f, want_i, want_u = _float_oracle(x, y, z)
    _check(f"{backend} f32 (seed {s})", got[3], want_f, 10, x, y, z)
    signs = got[3].reshape(n, 10)[:, 4:6].view(np.uint32)          # abs and `-`: the sign bit only,
    assert (signs == want_f.reshape(n, 10)[:, 4:6].view(np.uint32)).all()   # NaN payloads kept
    _check(f"{backend} f32 -> i32 (seed {s})", got[4], want_i, 2, x, y, z)
    _check(f"{backend} f32 -> u32, compares (seed {s})", got[5], want_u, 2, x, y, z)


# ---------------------------------------------------------------- issue 13's wrong answers


@pytest.mark.parametrize("backend", BACKENDS)
def test_issue13_signed_remainder_and_clamp_nan(backend, no_checks):
    a = np.int32([7, -7, 9, -9, MIN, MIN])
    b = np.int32([3, 3, 0, -4, -1, 7])
    got = run_kernel(backend, INT_KERNEL, "int_rules", [a, b, _poison(72, np.int32), _poison(72, np.uint32)],
                     ("over_1d", 6))[2].reshape(6, 12)
    assert got[:, 1].tolist() == [1, -1, 0, -1, 0, -2]          # Rust's `%`: the dividend's sign
    assert got[:, 0].tolist() == [2, -2, 0, 2, MIN, -306783378]
    x = np.float32([np.nan, -np.nan, 300.0, -300.0, -0.0])
    out = run_kernel(backend, FLOAT_KERNEL, "float_rules",
                     [x, x, x, _poison(50, np.float32), _poison(10, np.int32), _poison(10, np.uint32)], ("over_1d", 5))
    assert out[4].reshape(5, 2)[:, 1].tolist() == [0, 0, 127, -128, 0]   # NaN.clamp(..) as i32 == 0
    f = out[3].reshape(5, 10)
    assert np.isnan(f[0, 8]) and np.isnan(f[1, 8])                       # NaN.clamp(-1, 1) is NaN
    assert np.signbit(f[4, 8])                                           # -0.0 stays -0.0


# ---------------------------------------------------------------- the Slang ABI module


def test_goldy_abi_slang_rules_are_generated():
    """codegen/slang/goldy_abi.slang holds the rules as math_text renders them (regenerate with
    GOLDY_UPDATE_SNAPSHOTS=1)."""
    path = os.path.join(os.path.dirname(math_text.__file__), "slang", "goldy_abi.slang")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start, end = text.index(math_text.ABI_BEGIN), text.index(math_text.ABI_END) + len(math_text.ABI_END)
    block = math_text.slang_abi_rules()
    if text[start:end] != block and os.environ.get("GOLDY_UPDATE_SNAPSHOTS") == "1":
        with open(path, "w", encoding="utf-8") as f:
            f.write(text[:start] + block + text[end:])
        return
    assert text[start:end] == block, ("codegen/slang/goldy_abi.slang's generated rules are stale: run "
                                      "GOLDY_UPDATE_SNAPSHOTS=1 pytest tests/test_rules.py")
