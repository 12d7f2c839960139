"""The CPU backend computes a math library call under a mask that few lanes pass on those
lanes alone (codegen/cpu/rt.py `on_lanes`): a lane outside the mask never reads the value,
so every output (stores, selected values, a workgroup sum over the lanes) must hold the
bits of evaluating it on every lane."""

import os

import numpy as np
import pytest

from goldy_import.codegen.cpu import ckernel, rt
from goldy_import.codegen.cpu import emitter as E
from goldy_import.codegen.cpu.emitter import emit_cpu

from oracle import kernel_ir, run_kernel
from test_cpu_loops import specials
from test_differential_fuzz import assert_bits


@pytest.fixture(autouse=True)
def numpy_form_only(monkeypatch):
    """These tests are about the numpy form: no dispatch may move to its C form."""
    monkeypatch.setattr(ckernel, "PREFER", False)

MASKED_MATH = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn masked_math(x: &[f32], y: &[f32], out: &mut [f32], sums: &mut [f32], count: u32) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    let lid = gpu::local_id().x;
    let mut e = 1.5;
    if lid < count {
        e = x[i].exp() + y[i].sin() * y[i].atan2(x[i]) - x[i].abs().ln() + x[i].powf(y[i]).tanh();
        out[i] = e;
    }
    let total = gpu::workgroup_sum::<64>(e, scratch);
    if lid == 0 {
        sums[gpu::workgroup_id().x] = total;
    }
}
"""


def run(args, monkeypatch, sparse: bool):
    with monkeypatch.context() as m:
        m.setattr(rt, "SPARSE_LANES", rt.SPARSE_LANES if sparse else 1 << 30)  # 1 << 30: never sparse
        m.setattr(E, "_CACHE", {})
        m.setattr("oracle._devices", {})
        return run_kernel("cpu", MASKED_MATH, "masked_math", args, ("over_1d", 256))


@pytest.mark.parametrize("count", [0, 1, 2, 9, 16, 17, 64])
def test_math_on_the_active_lanes_gives_the_bits_of_every_lane(monkeypatch, count):
    assert "rt.on_lanes(m" in emit_cpu(kernel_ir(MASKED_MATH, "masked_math"))
    r = np.random.default_rng(count)
    args = [specials(r, 256), specials(r, 256), np.zeros(256, np.float32), np.zeros(4, np.float32), count]
    calls = []
    real = rt.on_lanes

    def counting(m, fn, *xs):
        out = real(m, fn, *xs)
        calls.append(np.shape(out))
        return out
    monkeypatch.setattr(rt, "on_lanes", counting)
    fast = run(args, monkeypatch, True)
    assert bool(calls) == (count > 0) and all(sh == (4, 64) for sh in calls)  # (W, S) lanes either way
    plain = run(args, monkeypatch, False)
    for got, want, what in zip(fast[2:4], plain[2:4], ("out", "sums")):
        assert_bits(got, want, f"{what} count={count}")


def test_on_lanes_computes_only_where_few_lanes_are_active():
    seen = []

    def fn(x):
        seen.append(x.size)
        return np.asarray(x, np.float32) * np.float32(2)
    m = np.zeros((2, 64), bool)
    m[1, 3] = m[0, 60] = True
    x = np.arange(128, dtype=np.float32).reshape(2, 64)
    out = rt.on_lanes(m, fn, x)
    assert seen == [2] and out[1, 3] == 134 and out[0, 60] == 120
    assert rt.on_lanes(np.ones((2, 64), bool), fn, x).shape == (2, 64) and seen[-1] == 128  # most lanes: all
    assert rt.on_lanes(None, fn, np.float32(3)) == 6  # no mask: as it is
    assert rt.on_lanes(np.zeros((2, 64), bool), fn, x).shape == (2, 64) and len(seen) == 3  # none: no call


def test_the_decode_step_softmax_on_few_lanes_matches_every_lane(monkeypatch):
    """The attention softmax of a decode step (few positions of a 256-lane row): the same
    bits either way, and against numpy within the math library's error."""
    src = open(os.path.join(os.path.dirname(__file__), "..", "benchmarks", "llama_decode.rs")).read()
    r = np.random.default_rng(3)
    att = r.standard_normal(6 * 256).astype(np.float32)
    outs = []
    for sparse in (True, False):
        with monkeypatch.context() as mp:
            mp.setattr(rt, "SPARSE_LANES", rt.SPARSE_LANES if sparse else 1 << 30)
            mp.setattr(E, "_CACHE", {})
            mp.setattr("oracle._devices", {})
            outs.append(run_kernel("cpu", src, "softmax_rows", [att, 20, 256], ("groups", (6, 1, 1)))[0])
    assert_bits(outs[0], outs[1], "softmax_rows")
    rows = att.reshape(6, 256)[:, :21].astype(np.float64)
    want = np.exp(rows - rows.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    np.testing.assert_allclose(outs[0].reshape(6, 256)[:, :21], want, rtol=1e-5)
    assert np.array_equal(outs[0].reshape(6, 256)[:, 21:], att.reshape(6, 256)[:, 21:])  # past pos: untouched
