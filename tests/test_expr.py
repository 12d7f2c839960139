"""Fused element-wise expressions (goldy_import.expr): one kernel per expression with
every distinct subexpression computed once, on every backend with the CPU oracle's bits,
through the same pipeline as imported kernels."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.expr import E, kernel, where
from goldy_import.ir import nodes as N
from goldy_import.runtime.backend import Limits
from oracle import assert_same, backend_or_skip, device

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]


def swiglu_like():
    x, g = E.input(0), E.input(1)
    return where(x > 0.0, x.silu() * g, x.exp() - 1.0) + (x.sigmoid() * 0.5).max(g.relu()) - x.tanh() / 4.0


def numpy_ref(a, b):
    with np.errstate(all="ignore"):
        f = np.float32
        silu = a / (f(1) + np.exp(-a))
        sig = f(1) / (f(1) + np.exp(-a))
        tanh = f(1) - f(2) / (np.exp(a * f(2)) + f(1))
        return (np.where(a > 0, silu * b, np.exp(a) - f(1)) + np.maximum(sig * f(0.5), np.maximum(b, f(0)))
                - tanh / f(4)).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_evaluate_gives_the_oracle_bits_on_every_backend(backend):
    backend_or_skip(backend)
    rng = np.random.default_rng()
    a, b = (rng.standard_normal(3000).astype(np.float32) * 4 for _ in range(2))
    e = swiglu_like()
    want = gi.evaluate(device("cpu"), e, [a, b]).numpy()
    np.testing.assert_allclose(want, numpy_ref(a, b), rtol=2e-6, atol=2e-6)
    dev = device(backend)
    out = dev.buffer(np.full(3000, np.nan, np.float32))
    got = gi.evaluate(dev, e, [dev.buffer(a), dev.buffer(b)], out=out)
    assert got is out
    assert_same(got.numpy(), want, what=f"{backend} vs cpu")


def test_common_subexpressions_are_emitted_once():
    x = E.input(0)
    e = (x.exp() + 1.0) * (E.input(0).exp() + 1.0) + x.silu() + x.sigmoid()  # exp(-x) shared by both
    ir = kernel(e).ir
    lets = [s for s in N.walk_stmts(ir.body) if isinstance(s, N.Let) and s.name != "i"]
    calls = [s.value.func for s in lets if isinstance(s.value, N.Call)]
    assert sorted(calls) == ["exp", "exp"]  # exp(x) once, exp(-x) once
    assert sum(isinstance(s.value, N.Load) for s in lets) == 1
    assert kernel(e) is kernel((x.exp() + 1.0) * (x.exp() + 1.0) + x.silu() + x.sigmoid())  # cached by structure


def test_many_inputs_up_to_the_binding_limit():
    dev = device("cpu")
    rng = np.random.default_rng()
    arrays = [rng.standard_normal(500).astype(np.float32) for _ in range(40)]
    e = E.input(0)
    for i in range(1, 40):
        e = e + E.input(i) * float(i)
    want = arrays[0].copy()
    for i in range(1, 40):
        want = (want + arrays[i] * np.float32(i)).astype(np.float32)
    assert_same(gi.evaluate(dev, e, arrays).numpy(), want, what="40 inputs")
    small = gi.Device("cpu")
    small.backend.limits = Limits(max_storage_buffers_per_stage=16)
    with pytest.raises(gi.DeviceLimitError, match="max_storage_buffers_per_stage = 16"):
        gi.evaluate(small, e, arrays)


def test_expression_kernels_record_and_fuse_like_imported_ones():
    dev = device("cpu")
    rng = np.random.default_rng()
    a, b = (rng.standard_normal(1000).astype(np.float32) for _ in range(2))
    ba, bb, t, y = dev.buffer(a), dev.buffer(b), dev.empty(1000), dev.empty(1000)
    gate = kernel(E.input(0).silu() * E.input(1)).prepare(dev)
    half = kernel(E.input(0) * 0.5).prepare(dev)
    stages = [gate.invoke(ba, bb, t).over_1d(1000), half.invoke(t, y).over_1d(1000)]
    fk = gi.FusedKernel.prepare(dev, stages)
    scheme = gi.Scheme(dev)
    fk.record(scheme, "gate+half", stages)
    scheme.submit()
    assert fk.forwarded == ("out",)
    want = gi.evaluate(dev, (E.input(0).silu() * E.input(1)) * 0.5, [a, b]).numpy()
    assert_same(y.numpy(), want, what="fused expressions")


def test_expression_errors_are_binding_errors():
    x = E.input(0)
    with pytest.raises(gi.BindingError, match="needs an f32 operand"):
        (x > 0.0) + 1.0
    with pytest.raises(gi.BindingError, match="cond must be a comparison"):
        where(x, x, x)
    with pytest.raises(gi.BindingError, match="the result must be f32"):
        kernel(x > 1.0)
    with pytest.raises(gi.BindingError, match="no truth value"):
        bool(x > 1.0)
    with pytest.raises(gi.BindingError, match="reads 2 inputs"):
        gi.evaluate(device("cpu"), x + E.input(1), [np.zeros(4, np.float32)])
    with pytest.raises(gi.BindingError, match="input 1 has 3 elements, the output 4"):
        gi.evaluate(device("cpu"), x + E.input(1), [np.zeros(4, np.float32), np.zeros(3, np.float32)])
    with pytest.raises(gi.BindingError, match="expected a Buffer of f32"):
        gi.evaluate(device("cpu"), x * 2.0, [np.zeros(4, np.uint32)])
    assert repr(where(x > 0.0, x, -x).max(1.0)) == "max(where((in0 > 0.0), in0, -in0), 1.0)"
