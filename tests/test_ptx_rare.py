"""codegen/ptx/rare.py: rare paths out of line and the division by a divisor the lanes
entry's copies share. The division's sequence runs here in numpy with exact fmas (the one
written for PTX, through a numpy `o`): the reciprocal over every significand of b with
rcp.approx one ulp off on either side, the quotient bit for bit against numpy's division
on random operands and on quotients next to a rounding midpoint; and the PTX itself, rare
inputs included, in tests/ptx_sim.py against the CPU oracle."""

from __future__ import annotations

import numpy as np
import pytest

import oracle
import ptx_sim
from goldy_import.codegen.ptx import emit_ptx, lanes_entry, lanes_in
from goldy_import.codegen.ptx.rare import quotient, reciprocal
from test_collectives import seed
from test_ptx_lanes import same_bits

F = np.float32


class NumpySeq:
    """`reciprocal`/`quotient`'s operations on f32 arrays; `rcp` is RN(1/x) moved to the
    float on the far side of 1/x where `far` (the PTX ISA allows 1 ulp)."""

    ONE = F(1.0)

    def __init__(self, far):
        self.far = far

    def abs(self, a):
        return np.abs(a)

    def neg(self, a):
        return -a

    def rcp(self, a):
        y = F(1) / a
        side = 1.0 - a.astype(np.float64) * y.astype(np.float64)  # exact; 1/a - y has its sign
        other = np.nextafter(y, np.where(side > 0, F(np.inf), F(-np.inf)).astype(F))
        return np.where(self.far & (side != 0), other, y).astype(F)

    def fma(self, a, b, c):
        a, b, c = np.broadcast_arrays(*(np.asarray(v, F) for v in (a, b, c)))
        return ptx_sim._fma(a.astype(F), b.astype(F), c.astype(F))

    def mul(self, a, b):
        return (a * b).astype(F)

    def step_toward(self, x, e):
        return (x.view(np.int32) + ((e.view(np.int32) >> 31) | 1)).view(F)

    def abs_lt(self, a, b):
        return np.abs(a) < np.abs(b)

    def sel(self, p, a, b):
        return np.where(p, a, b).astype(F)

    def copysign(self, sign, mag):
        return np.copysign(mag, sign).astype(F)


@pytest.mark.parametrize("far", [False, True])
def test_reciprocal_is_correctly_rounded_for_every_significand(far):
    """Every significand of b in [1, 2), at the range's ends and negated: yh = RN(1/b)
    whether rcp.approx gives the nearest float or the one on 1/b's far side."""
    sig = (np.arange(1 << 23, dtype=np.uint32) | np.uint32(0x3F800000)).view(F)
    for scale in (1.0, 2.0 ** -60, -(2.0 ** 59)):
        b = (sig * F(scale)).astype(F)
        yh, yl = reciprocal(NumpySeq(np.ones(b.shape, bool) if far else np.zeros(b.shape, bool)), b)
        same_bits(yh, (F(1) / b).astype(F), f"1/b at scale {scale}")
        err = (yh.astype(np.float64) + yl.astype(np.float64)) * b.astype(np.float64) - 1.0
        assert np.max(np.abs(err)) < 2.0 ** -45


def _divide(a, b, far):
    o = NumpySeq(far)
    yh, yl = reciprocal(o, b)
    return quotient(o, a, b, yh, yl)


def test_quotient_bit_exact_random_and_next_to_midpoints():
    """Random operands over the fast range's exponents, and a = RN(b m) for midpoints m
    (a/b within an ulp of b of the tie), both signs: numpy's correctly rounded a / b."""
    s = seed()
    rng = np.random.default_rng(s)
    n = 1 << 19

    def operand():
        sig = rng.uniform(1, 2, n)
        return (sig * 2.0 ** rng.integers(-60, 60, n) * rng.choice([-1, 1], n)).astype(F)

    b = operand()
    far = rng.integers(0, 2, n).astype(bool)
    a = operand()
    same_bits(_divide(a, b, far), (a / b).astype(F), f"random a / b (seed {s})")
    q = (rng.uniform(1, 2, n) * 2.0 ** rng.integers(-50, 50, n)).astype(F)
    mid = (q.astype(np.float64) + np.nextafter(q, F(np.inf)).astype(np.float64)) / 2
    a = (b.astype(np.float64) * mid).astype(F)
    ok = np.isfinite(a) & (np.abs(a) >= 2.0 ** -60) & (np.abs(a) <= 2.0 ** 60)
    a, bb, far = a[ok], b[ok], far[ok]
    same_bits(_divide(a, bb, far), (a / bb).astype(F), f"a / b next to a midpoint (seed {s})")


DIVIDE = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn divide(x: &[f32], d: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 256>();
    let l = gpu::local_id().x;
    let g = gpu::workgroup_id().x;
    let t = gpu::workgroup_sum::<256>(0.0, s);
    let b = d[g] + t;
    out[g * 256 + l] = x[g * 256 + l] / b;
}
"""


def test_divide_by_a_shared_divisor_in_the_interpreter():
    """The lanes entry's PTX (one reciprocal per thread, the rare path out of line) on
    divisors and dividends of every kind (zeros of both signs, subnormals, the fast range's
    ends and past them, infinities, NaN, random): the CPU oracle's bits."""
    k = oracle.kernel_ir(DIVIDE, "divide")
    ptx = emit_ptx(k, lane_threads=64)
    c = lanes_in(ptx, k)
    assert c == 4 and "rcp.approx.ftz.f32" in ptx and "$L_rare" in ptx
    s = seed()
    rng = np.random.default_rng(s)
    special = np.array([0.0, -0.0, 1e-45, -3e-39, 2.0 ** -60, 2.0 ** -61, 2.0 ** 60, 2.0 ** 61, 1.0, -1.0, 3.0,
                        np.inf, -np.inf, np.nan, 3.4e38, 1.5e-38], F)
    d = np.concatenate([special, (rng.standard_normal(4) * 10).astype(F)])
    groups = len(d)
    x = (rng.standard_normal(groups * 256) * 2.0 ** rng.integers(-70, 70, groups * 256)).astype(F)
    x[::17] = np.resize(special, len(x[::17]))
    want = oracle.run_kernel("cpu", DIVIDE, "divide", [x.copy(), d.copy(), np.zeros_like(x)], ("groups", (groups, 1, 1)))[2]
    got = ptx_sim.run(ptx, lanes_entry(k, c), [x.copy(), d.copy(), np.full_like(x, np.nan)], {}, (groups, 1, 1))[2]
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"NaN lanes differ (seed {s})"
    same_bits(np.where(nan, 0, got).astype(F), np.where(nan, 0, want).astype(F), f"x / d (seed {s})")


EXPS = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn exps(x: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 256>();
    let i = gpu::workgroup_id().x * 256 + gpu::local_id().x;
    let t = gpu::workgroup_sum::<256>(0.0, s);
    out[i] = (x[i] - t).exp();
}
"""


def test_exp_rare_inputs_out_of_line_in_the_interpreter():
    """exp as a store's whole value in the lanes entry: its rare inputs (|x| >= 86 by one
    unordered compare, NaN, infinities, overflow, underflow to subnormals and zero) go to
    one out-of-line block per statement and give the CPU oracle's bits, next to the fast
    path on the same thread."""
    k = oracle.kernel_ir(EXPS, "exps")
    ptx = emit_ptx(k, lane_threads=64)
    c = lanes_in(ptx, k)
    assert c == 4 and "$L_rare" in ptx and "setp.geu.f32" in ptx
    s = seed()
    rng = np.random.default_rng(s)
    edge = np.array([0.0, -0.0, 1e-45, -1e-45, 85.99, 86.0, -86.0, 86.01, -86.01, 88.72, 88.73, -87.5, -103.9,
                     -104.0, -150.0, np.inf, -np.inf, np.nan], F)
    x = rng.uniform(-120, 100, 4 * 256).astype(F)
    x[::7] = np.resize(edge, len(x[::7]))
    want = oracle.run_kernel("cpu", EXPS, "exps", [x.copy(), np.zeros_like(x)], ("groups", (4, 1, 1)))[1]
    got = ptx_sim.run(ptx, lanes_entry(k, c), [x.copy(), np.full_like(x, np.nan)], {}, (4, 1, 1))[1]
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), f"NaN lanes differ (seed {s})"
    same_bits(np.where(nan, 0, got).astype(F), np.where(nan, 0, want).astype(F), f"exp (seed {s})")


# ---------------------------------------------------------------- on the CUDA backend

def test_cuda_divide_and_exp_match_the_oracle(monkeypatch):
    """The same kernels on the CUDA backend's lanes entry (the GPU's own rcp.approx): a
    divisor per workgroup over 1024 workgroups (random over the fast range, the specials),
    dividends random, next to midpoints and special; exp's edges. Bit for bit against the
    CPU oracle, outputs poisoned."""
    oracle.backend_or_skip("cuda")
    from goldy_import.runtime import cuda
    monkeypatch.setattr(cuda, "LANES_FROM", 64)
    monkeypatch.setattr(oracle.device("cuda").backend, "lanes_min_threads", 0)
    src = DIVIDE.replace("fn divide", "fn cuda_divide")
    k = oracle.kernel_ir(src, "cuda_divide")
    assert lanes_in(emit_ptx(k, lane_threads=cuda.LANE_THREADS), k) == max(1, 256 // cuda.LANE_THREADS)
    s = seed()
    rng = np.random.default_rng(s)
    groups = 1024
    d = (rng.uniform(1, 2, groups) * 2.0 ** rng.integers(-62, 62, groups) * rng.choice([-1, 1], groups)).astype(F)
    d[:16] = [0.0, -0.0, 1e-45, 2.0 ** -60, 2.0 ** 60, 2.0 ** 61, 1.0, 3.0, np.inf, -np.inf, np.nan, 3.4e38,
              1.5e-38, -1.0, 7.0, 1000.0]
    x = (rng.uniform(1, 2, groups * 256) * 2.0 ** rng.integers(-64, 64, groups * 256)).astype(F)
    q = (rng.uniform(1, 2, x.size) * 2.0 ** rng.integers(-40, 40, x.size)).astype(F)
    mid = (q.astype(np.float64) + np.nextafter(q, F(np.inf)).astype(np.float64)) / 2
    near = (np.repeat(d, 256).astype(np.float64) * mid).astype(F)  # x / d within an ulp of d of a tie
    x[1::2] = near[1::2]
    x[::13] = np.resize(np.array([0.0, -0.0, 1e-45, np.inf, np.nan, 2.0 ** -61, 2.0 ** 61], F), len(x[::13]))
    oracle.check_against_cpu("cuda", src, "cuda_divide", [x, d, np.zeros_like(x)], ("groups", (groups, 1, 1)))
    src = EXPS.replace("fn exps", "fn cuda_exps")
    x = rng.uniform(-120, 100, 64 * 256).astype(F)
    x[::7] = np.resize(np.array([0.0, -0.0, 1e-45, 85.99, 86.0, -86.0, 88.72, 88.73, -103.9, -150.0, np.inf,
                                 -np.inf, np.nan], F), len(x[::7]))
    oracle.check_against_cpu("cuda", src, "cuda_exps", [x, np.zeros_like(x)], ("groups", (64, 1, 1)))
