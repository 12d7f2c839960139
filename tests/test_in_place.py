"""In-place bindings (Goldy's `_into` ops, `add_into(left, ones, left)`): one buffer or
tensor view bound to a read and a written parameter is allowed where ir/inplace.py
proves every access to both is at the thread's own index, and then gives the result
separate buffers would give, on every backend; everything else is an AliasingError with
the reason (docs/dialect.md, Parameters)."""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.importer import import_source
from goldy_import.ir.inplace import refusal
from oracle import backend_or_skip, device

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]

SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn add_into(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn axpy_into(x: &[f32], y: &[f32], out: gpu::Scattered<f32>, a: f32) {
    let i = gpu::global_id().x;
    let j = i;
    if j < out.len() {
        let yi = y[j];
        for _k in 0..2 {
            if yi > 100.0 { return; }
        }
        out[j] = a * x[j] + yi;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale_tensor(src: gpu::Tensor<f32>, dst: gpu::TensorMut<f32>, s: f32) {
    let i = gpu::global_id().x;
    if i < dst.len() {
        dst[i] = src[i] * s;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn reread(a: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        out[i] = a[i] + 1.0;
        out[i] = out[i] + a[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn loop_reread(a: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        for _k in 0..3 {
            let v = a[i];
            out[i] = v * 2.0;
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn neighbour(a: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i + 1 < out.len() {
        out[i] = a[i + 1];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mutable_index(a: &[f32], out: &mut [f32]) {
    let mut i = gpu::global_id().x;
    i = i + 0;
    if i < out.len() {
        out[i] = a[i];
    }
}

#[goldy::compute(workgroup_size = [8, 8, 1])]
fn square(a: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        out[i] = a[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn counts(a: &[u32], out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        gpu::atomic_add(out, i, a[i]);
    }
}
"""


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "in_place.rs")


def rnd(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_add_into_in_place_equals_separate_buffers(backend, mod):
    dev = device(backend)
    n = 1000
    x, ones = rnd(n, 1), np.ones(n, np.float32)
    left, b = dev.buffer(x), dev.buffer(ones)
    s = gi.Scheme(dev)
    mod.add_into.prepare(dev).record(s, "add_into", left, b, left).over_1d(n)
    s.submit()
    np.testing.assert_array_equal(left.numpy(), x + ones)
    s.submit()  # replaying reads the new values: one more in-place addition
    np.testing.assert_array_equal(left.numpy(), x + ones + ones)


@pytest.mark.parametrize("backend", BACKENDS)
def test_views_scattered_and_tensors_in_place(backend, mod):
    """The same view of a larger buffer, a write-only output, immutable `let` indices and
    an early return in a loop; a tensor view bound twice."""
    dev = device(backend)
    n = 300
    base = rnd(n + 20, 2)
    buf = dev.buffer(base)
    view = buf[10:10 + n]
    x = dev.buffer(rnd(n, 3))
    s = gi.Scheme(dev)
    mod.axpy_into.prepare(dev).record(s, "axpy", x, view, view, 1.5).over_1d(n)
    s.submit()
    want = base.copy()
    want[10:10 + n] = np.float32(1.5) * x.numpy() + base[10:10 + n]
    np.testing.assert_array_equal(buf.numpy(), want)

    t0 = rnd(n, 4).reshape(3, 100)
    t = dev.tensor(t0)
    s = gi.Scheme(dev)
    mod.scale_tensor.prepare(dev).record(s, "scale", t, t, 3.0).over_1d(n)
    s.submit()
    np.testing.assert_array_equal(t.numpy(), t0 * np.float32(3.0))


def line(needle: str) -> int:
    return SRC[:SRC.index(needle)].count("\n") + 1


@pytest.mark.parametrize("kernel,why", [
    ("reread", lambda: f"`a` is read at line {line('out[i] = out[i] + a[i]')} after `out` may have been written "
                       f"(line {line('out[i] = a[i] + 1.0')}): sharing one buffer, it would see the new value"),
    ("loop_reread", lambda: f"`a` is read at line {line('let v = a[i]')} after `out` may have been written "
                            f"(line {line('out[i] = v * 2.0')}): sharing one buffer, it would see the new value"),
    ("neighbour", lambda: f"`a` is read at line {line('a[i + 1]')} at an index other than the thread's own index "
                          f"`global_id().x`"),
    ("mutable_index", lambda: f"`out` is written at line {line('i = i + 0;') + 2} at an index other than the "
                              f"thread's own index `global_id().x`"),
    ("square", lambda: "the workgroup size [8, 8, 1] is not [N, 1, 1], so `global_id().x` does not tell threads "
                       "apart"),
    ("counts", lambda: f"`out` is used by `atomic_add` at line {line('gpu::atomic_add(out')}"),
])
def test_refused_with_the_reason(mod, kernel, why):
    why = why()
    dev = device("cpu")
    is_u32 = kernel == "counts"
    buf = dev.buffer(np.arange(64, dtype=np.uint32 if is_u32 else np.float32))
    s = gi.Scheme(dev)
    with pytest.raises(gi.AliasingError) as e:
        getattr(mod, kernel).prepare(dev).record(s, kernel, buf, buf).over_1d(64)
    assert str(e.value) == (
        f"kernel `{kernel}`: parameters `a` and `out` are bound to overlapping memory (bytes 0..256 and 0..256 of "
        f"one allocation) and `out` is written; in-place use (one view bound to a read and a written parameter) "
        f"needs every access to both at the thread's own index, but {why}; Rust's aliasing rule forbids this: "
        f"bind separate buffers or non-overlapping views")
    assert s.nodes == []


def test_partial_overlap_and_2d_grids_are_refused(mod):
    dev = device("cpu")
    buf = dev.buffer(rnd(100, 5))
    ones = dev.buffer(np.ones(50, np.float32))
    s = gi.Scheme(dev)
    with pytest.raises(gi.AliasingError, match=r"are bound to overlapping memory \(bytes 0\.\.200 and 4\.\.204 .*"
                                               r"and `out` is written; Rust's aliasing rule"):
        mod.add_into.prepare(dev).record(s, "shifted", buf[0:50], ones, buf[1:51]).over_1d(50)
    with pytest.raises(gi.AliasingError, match=r"^kernel `add_into`: `a` and `out` are bound to the same memory, which "
                                               r"is allowed only on a one-dimensional grid .* got groups \(1, 2, 1\)$"):
        mod.add_into.prepare(dev).record(s, "2d", buf[0:50], ones, buf[0:50]).groups((1, 2, 1))
    with pytest.raises(gi.AliasingError, match="one-dimensional grid"):
        mod.add_into.prepare(dev).invoke(buf[0:50], ones, buf[0:50]).groups((1, 1, 2))
    assert s.nodes == []
    s.submit()  # a refused record leaves nothing unfinished behind


def test_two_written_parameters_stay_refused():
    src = """
#[goldy::compute]
fn two(a: &mut [f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = a[i]; a[i] = 0.0; }
}"""
    k = import_source(src).kernels[0]
    assert refusal(k, "a", "out") == "both `a` and `out` are written"
    dev = device("cpu")
    buf = dev.buffer(rnd(8, 6))
    with pytest.raises(gi.AliasingError, match="`a` and `out` are bound to overlapping memory"):
        gi.load_source(src).two.prepare(dev).record(gi.Scheme(dev), "two", buf, buf)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ptx_and_every_backend_agree_in_place_on_random_data(backend, mod):
    """The rule's promise, on fresh data: in place == separate buffers, bit for bit."""
    backend_or_skip(backend)
    dev = device(backend)
    n = 517
    x, y = rnd(n, 7), rnd(n, 8)
    sep_out = dev.buffer(np.full(n, np.nan, np.float32))
    s = gi.Scheme(dev)
    k = mod.axpy_into.prepare(dev)
    k.record(s, "separate", dev.buffer(x), dev.buffer(y), sep_out, -0.75).over_1d(n)
    same = dev.buffer(y)
    k.record(s, "in place", dev.buffer(x), same, same, -0.75).over_1d(n)
    s.submit()
    np.testing.assert_array_equal(same.numpy(), sep_out.numpy())
