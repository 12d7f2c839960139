"""The one f32 math library (ir/mathlib.py): every backend returns the same bits for each
transcendental and for softmax, over sweeps that include the ranges where driver built-ins
fail (|x| in [35, 88.7] for exp on lavapipe, huge sin/cos/tan arguments), subnormals,
signed zeros, infinities, NaN and pow's sign cases; and each function keeps the error
bound documented in ir/mathlib.py and docs/semantics.md against an f64 reference."""

from __future__ import annotations

import numpy as np
import pytest

from goldy_import.codegen.cpu.math import evaluate
from goldy_import.ir import mathlib as ML
from oracle import assert_same, run_kernel, same_bits

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
RUST = {"exp": "exp", "exp2": "exp2", "log": "ln", "log2": "log2", "sin": "sin", "cos": "cos", "tan": "tan",
        "tanh": "tanh"}
BINARY = {"pow": "powf", "atan2": "atan2", "hypot": "hypot"}  # x.f(y)
BOUND = {"exp": 1, "exp2": 1, "log": 1, "log2": 1, "sin": 1, "cos": 1, "tan": 1, "pow": 1,
         "tanh": 1, "atan2": 1, "hypot": 1}  # ulp
REF = {"exp": np.exp, "exp2": np.exp2, "log": np.log, "log2": np.log2, "sin": np.sin, "cos": np.cos,
       "tan": np.tan, "pow": np.power, "tanh": np.tanh, "atan2": np.arctan2, "hypot": np.hypot}

UNARY = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn m_{f}(x: &[f32], out: &mut [f32]) {{
    let i = gpu::global_id().x;
    if i < x.len() {{ out[i] = x[i].{rust}(); }}
}}
"""
BINARY_SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn m_{f}(x: &[f32], y: &[f32], out: &mut [f32]) {{
    let i = gpu::global_id().x;
    if i < x.len() {{ out[i] = x[i].{rust}(y[i]); }}
}}
"""
SPECIAL = np.array([0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 0.75, np.inf, -np.inf, np.nan,
                    1e-30, -1e-30, 1e30, -1e30, 1e-40, -1e-40, 1.4e-45, 2.0 ** -126, 3.4028235e38, -3.4028235e38,
                    88.72283, 88.72284, -87.33655, -103.97, -104.5, 127.99, 128.0, -149.0, -149.5, -150.0,
                    0.7853982, 1.5707964, 3.1415927, 1e5, 100001.0, 2.0 ** -12, 1e4, 1e10],
                   dtype=np.float32)


def seed() -> int:
    return int(np.random.SeedSequence().entropy % 2**32)


def subnormals(rng, n: int) -> np.ndarray:
    bits = rng.integers(1, 1 << 23, n, dtype=np.uint64).astype(np.uint32)
    bits |= (rng.integers(0, 2, n).astype(np.uint32) << np.uint32(31))
    return bits.view(np.float32)


def sweep(f: str, rng, n: int) -> np.ndarray:
    """Fresh inputs for f: ordinary ranges, the failure ranges of driver built-ins, and the
    special values."""
    sign = rng.choice(np.float32([-1, 1]), n)
    parts = [rng.uniform(-100, 100, n), rng.uniform(-1, 1, n), SPECIAL, subnormals(rng, n // 8)]
    if f in ("exp", "exp2"):
        lim = 88.8 if f == "exp" else 128.5
        parts += [sign * rng.uniform(35, lim, n), rng.uniform(-160, 160, n)]
    if f in ("log", "log2"):
        parts += [np.exp(rng.uniform(-103, 88.7, n)), 1 + rng.uniform(-1e-3, 1e-3, n), -np.abs(parts[0])]
    if f == "tanh":
        parts += [sign * rng.uniform(0.2, 0.3, n), sign * rng.uniform(0, 10, n), sign * np.exp(rng.uniform(-20, 0, n))]
    if f in ("sin", "cos", "tan"):
        parts += [sign * np.exp(rng.uniform(np.log(1e5), np.log(3e38), n)),
                  np.pi / 2 * rng.integers(-10 ** 6, 10 ** 6, n) + rng.uniform(-1e-3, 1e-3, n)]
    with np.errstate(over="ignore"):
        return np.concatenate([np.asarray(p, dtype=np.float64).astype(np.float32) for p in parts])


def pow_sweep(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    ints = np.float32([0, 1, 2, 3, -1, -2, -3, 7, -7, 8, 16777215, 16777216, 16777217, 1e10, -1e10])
    sx, sy = np.meshgrid(SPECIAL, np.concatenate([SPECIAL, ints, ints + np.float32(0.5)]))
    xs = [sx.ravel(), rng.uniform(0, 10, n), rng.uniform(-10, 10, n), np.exp(rng.uniform(-80, 80, n)),
          subnormals(rng, n // 8)]
    ys = [sy.ravel(), rng.uniform(-30, 30, n), rng.integers(-30, 31, n), rng.uniform(-3, 3, n),
          rng.uniform(-1.5, 1.5, n // 8)]
    return (np.concatenate([np.asarray(v).astype(np.float32) for v in xs]),
            np.concatenate([np.asarray(v).astype(np.float32) for v in ys]))


def pair_sweep(rng, n: int) -> tuple[np.ndarray, np.ndarray]:
    """For atan2 and hypot: both operands over every scale (subnormals, huge, mixed), one
    the other's permutation, and every pair of special values."""
    def one():
        sign = rng.choice(np.float32([-1, 1]), n)
        return [rng.standard_normal(n), rng.uniform(-1e3, 1e3, n), sign * np.exp(rng.uniform(-100, 88, n)),
                subnormals(rng, n // 8)]
    x = np.concatenate([np.asarray(v, np.float64).astype(np.float32) for v in one()])
    y = np.concatenate([np.asarray(v, np.float64).astype(np.float32) for v in one()])
    sx, sy = np.meshgrid(SPECIAL, SPECIAL)
    return np.concatenate([x, rng.permutation(x), sx.ravel()]), np.concatenate([y, y, sy.ravel()])


def args_for(f: str, rng, n: int) -> tuple:
    if f == "pow":
        return pow_sweep(rng, n)
    return pair_sweep(rng, n) if f in BINARY else (sweep(f, rng, n),)


def ulps(got: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """Error of each element in ulp of the correctly rounded result (0 where that is not
    a finite normal number: subnormal results are excepted)."""
    with np.errstate(over="ignore", invalid="ignore"):
        r32 = ref.astype(np.float32)
        ok = np.isfinite(r32) & (np.abs(r32) >= np.finfo(np.float32).tiny)
        err = np.abs(got.astype(np.float64) - ref) / np.spacing(np.abs(r32)).astype(np.float64)
    return np.where(ok, err, 0.0)


def check_bits(what: str, got: np.ndarray, want: np.ndarray, *inputs: np.ndarray) -> None:
    same = same_bits(got, want)
    if not same.all():
        i = np.flatnonzero(~same)
        rows = [(tuple(float(x[j]) for x in inputs), float(got[j]), float(want[j])) for j in i[:5]]
        raise AssertionError(f"{what}: {len(i)} of {got.size} differ from the CPU oracle (inputs, got, want): {rows}")


@pytest.mark.parametrize("f", list(RUST))
@pytest.mark.parametrize("backend", BACKENDS)
def test_unary_bits_match_the_oracle(backend, f):
    s = seed()
    x = sweep(f, np.random.default_rng(s), 4000)
    out = np.zeros_like(x)
    got = run_kernel(backend, UNARY.format(f=f, rust=RUST[f]), f"m_{f}", [x, out], ("over_1d", x.size))[1]
    want = evaluate(f, x)
    check_bits(f"{backend} {f} (seed {s})", got, want, x)
    with np.errstate(all="ignore"):
        assert ulps(got, REF[f](x.astype(np.float64))).max() <= BOUND[f]


@pytest.mark.parametrize("f", list(BINARY))
@pytest.mark.parametrize("backend", BACKENDS)
def test_binary_bits_match_the_oracle(backend, f):
    s = seed()
    x, y = args_for(f, np.random.default_rng(s), 4000)
    got = run_kernel(backend, BINARY_SRC.format(f=f, rust=BINARY[f]), f"m_{f}", [x, y, np.zeros_like(x)],
                     ("over_1d", x.size))[2]
    check_bits(f"{backend} {f} (seed {s})", got, evaluate(f, x, y), x, y)


@pytest.mark.parametrize("f", list(REF))
def test_error_bound(f):
    """The documented bound, against f64 numpy rounded once, over a dense sweep."""
    s = seed()
    rng = np.random.default_rng(s)
    args = args_for(f, rng, 200_000)
    got = evaluate(f, *args)
    with np.errstate(all="ignore"):
        ref = REF[f](*(a.astype(np.float64) for a in args))
    err = ulps(got, ref)
    assert err.max() <= BOUND[f], f"{f}: {err.max():.3f} ulp at {[a[err.argmax()] for a in args]} (seed {s})"


@pytest.mark.parametrize("f", list(REF))
def test_special_values_follow_rust(f):
    """NaN, infinities, signed zeros and pow's sign rules as Rust (IEEE / C99) defines
    them: numpy's f64 functions, rounded, agree with Rust on every one of these."""
    with np.errstate(all="ignore"):
        if f in BINARY:
            x, y = (a.ravel() for a in np.meshgrid(SPECIAL, np.concatenate([SPECIAL, [7.0, -7.0, 0.5, -0.5]])))
            x, y = x.astype(np.float32), y.astype(np.float32)
            got, want = evaluate(f, x, y), REF[f](x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
        else:
            got, want = evaluate(f, SPECIAL), REF[f](SPECIAL.astype(np.float64)).astype(np.float32)
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1)
    assert (same_bits(got, want) | ~exact).all(), f
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), f


def test_log2_is_exact_on_powers_of_two():
    e = np.arange(-149, 128)
    assert np.array_equal(evaluate("log2", np.ldexp(np.float32(1), e).astype(np.float32)), e.astype(np.float32))


def test_vectors_go_lane_by_lane():
    """A vector argument gives each lane the scalar function's bits (WGSL and Slang wrap
    the helper; the CPU and PTX split lanes)."""
    src = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn m_vec(x: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() / 3 {
        let v = gpu::float3(x[3 * i], x[3 * i + 1], x[3 * i + 2]);
        let r = v.sin() + v.powf(v);
        out[3 * i] = r.x;
        out[3 * i + 1] = r.y;
        out[3 * i + 2] = r.z;
    }
}
"""
    x = np.random.default_rng(seed()).uniform(0, 10, 3 * 256).astype(np.float32)
    want = (evaluate("sin", x) + evaluate("pow", x, x)).astype(np.float32)
    for backend in ("cpu", "wgpu", "slang"):
        got = run_kernel(backend, src, "m_vec", [x, np.zeros_like(x)], ("over_1d", 256))[1]
        check_bits(backend, got, want, x)


SOFTMAX = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [{n}, 1, 1])]
fn softmax_{n}(buf: &mut [f32], stride: u32, count: u32) {{
    let s = gpu::workgroup_array::<f32, {n}>();
    gpu::workgroup_softmax_in_place::<{n}>(buf, gpu::workgroup_id().x * stride, count, s);
}}
"""


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
def test_softmax_is_bit_identical_across_backends(backend):
    """Softmax is built on the library's exp: every backend returns the CPU oracle's bits,
    rows with a wide spread included (exp of arguments down to -88 and below)."""
    n, rows = 64, 16
    rng = np.random.default_rng(seed())
    x = (rng.standard_normal(rows * n) * 30).astype(np.float32)
    for count in (n, n // 2 + 5):
        want = run_kernel("cpu", SOFTMAX.format(n=n), f"softmax_{n}", [x, n, count], ("groups", (rows, 1, 1)))[0]
        got = run_kernel(backend, SOFTMAX.format(n=n), f"softmax_{n}", [x, n, count], ("groups", (rows, 1, 1)))[0]
        assert_same(got, want, what=f"{backend} softmax count={count}")


def test_the_library_uses_only_portable_operations():
    """No fma and no f64 anywhere: the interface has no such operation, and every function
    renders through it alone."""
    assert not any(hasattr(ML.Ops, op) for op in ("fma", "dadd", "f2d", "rni"))


def test_the_two_multiply_ldexp_equals_the_integer_one():
    """_ldexp's fast form (PTX, numpy) against its integer form (WGSL, Slang): the same bits
    for every k the callers pass and significands across [0.5, 2), subnormal results,
    underflow to zero and overflow to inf included."""
    from goldy_import.codegen.cpu.math import NumpyOps
    rng = np.random.default_rng()
    m = NumpyOps()
    p = np.concatenate([rng.uniform(0.5, 2.0, 4000).astype(np.float32),
                        np.float32([0.5, 1.0, np.nextafter(np.float32(2), np.float32(0)), 0.70710677, 1.4142135])])
    ks = np.arange(-250, 251, dtype=np.int32)
    pp = np.repeat(p, ks.size)
    kk = np.tile(ks, p.size).view(np.uint32)
    with np.errstate(over="ignore", under="ignore"):
        fast = ML._ldexp(m, pp, kk, small_k=True)
        slow = ML._ldexp(m, pp, kk)
    assert np.array_equal(fast.view(np.uint32), slow.view(np.uint32))
    assert (fast == 0).any() and np.isinf(fast).any() and ((fast > 0) & (fast < np.finfo(np.float32).tiny)).any()
