"""Issue 14's last host-API leftovers: the generated module's methods called with the wrong
arguments, and a wait's timeout that is not a number, are BindingErrors naming the call."""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.errors import BindingError

SRC = """use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn copy_k(x: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = x[i]; }
}
"""


@pytest.fixture(scope="module")
def prepared():
    dev = gi.Device("cpu")
    return dev, gi.load_source(SRC, "leftovers.rs").copy_k.prepare(dev)


@pytest.mark.parametrize("call, got", [
    (lambda p, s, x, o: p.record(s, "a", x), "got 3"),
    (lambda p, s, x, o: p.record(s, "a", x, o, 1.0), "got 5"),
    (lambda p, s, x, o: p.record(s, "a", x, o, extra=1), "got 4 and keywords ['extra']"),
    (lambda p, s, x, o: p.invoke(), "got 0"),
    (lambda p, s, x, o: p.launch(x, o, x), "got 3"),
])
def test_generated_methods_name_the_kernel_on_wrong_arguments(prepared, call, got):
    dev, p = prepared
    x = dev.buffer(np.arange(8, dtype=np.float32))
    o = dev.empty(8, np.float32)
    with pytest.raises(BindingError, match=r"kernel `copy_k`: (record\(scheme, label, x, out\)|invoke\(x, out\)|"
                                           r"launch\(x, out\)) takes \d arguments, " + got.replace("[", r"\[")):
        call(p, gi.Scheme(dev), x, o)


def test_generated_record_still_records(prepared):
    dev, p = prepared
    rng = np.random.default_rng(14)
    xs = rng.standard_normal(100).astype(np.float32)
    x, o = dev.buffer(xs), dev.buffer(np.full(100, np.nan, np.float32))
    s = gi.Scheme(dev)
    p.record(s, "copy", x, out=o).over_1d(100)  # keywords by parameter name still work
    s.submit()
    assert np.array_equal(o.numpy(), xs)


def test_type_errors_inside_are_not_renamed(prepared):
    dev, p = prepared
    with pytest.raises(BindingError, match="expects a Scheme first"):  # core's own check, not the arity one
        p.record("not a scheme", "a", None, None)


@pytest.mark.parametrize("bad", ["x", -1, float("nan"), True, [1.0]])
@pytest.mark.parametrize("wait", ["wait_for_fusion", "wait_for_specialization"])
def test_wait_timeouts_are_numbers(prepared, wait, bad):
    dev, _p = prepared
    with pytest.raises(BindingError, match=rf"Scheme\.{wait}: expected a timeout in seconds"):
        getattr(gi.Scheme(dev), wait)(bad)


@pytest.mark.parametrize("ok", [None, 0, 0.25, float("inf"), np.float32(1.0)])
def test_wait_timeouts_accepted(prepared, ok):
    dev, _p = prepared
    s = gi.Scheme(dev)
    assert s.wait_for_fusion(ok) is True and s.wait_for_specialization(ok) is True
