"""Hand-written canonical Slang through the public API: recorded like an imported kernel on
the slang backend, refused elsewhere."""

import numpy as np
import pytest

import goldy_import as gi
from oracle import backend_or_skip

SRC = """
import goldy_abi;
// hand-written: y = 2 x + b
[goldy_compute]
[numthreads(64, 1, 1)]
void twice_plus(BufRO<float> x, Scattered<float> y, float b, uint n, ThreadId _goldy_gid) {
    uint i = _goldy_gid.x;
    if (i < n) { y[i] = x[i] * 2.0 + b; }
}
"""


def test_hand_written_slang_records_on_the_slang_backend():
    backend_or_skip("slang")
    k = gi.load_slang(SRC)
    assert [p.name for p in k.ir.params] == ["x", "y", "b", "n"]
    dev = gi.Device("slang")
    x = np.random.default_rng().standard_normal(300).astype(np.float32)
    bx, by = dev.buffer(x), dev.buffer(np.full(300, np.nan, np.float32))
    s = gi.Scheme(dev)
    node = k.prepare(dev).record(s, "hand", bx, by, 0.5, 300).over_1d(300)
    s.submit()
    np.testing.assert_allclose(by.numpy(), x * np.float32(2.0) + np.float32(0.5), rtol=1e-7)
    s.set_node_param(node, "b", -1.0)
    s.submit()
    np.testing.assert_allclose(by.numpy(), x * np.float32(2.0) - np.float32(1.0), rtol=1e-7)


def test_hand_written_slang_is_refused_on_other_backends():
    k = gi.load_slang(SRC)
    with pytest.raises(gi.BackendError, match="runs on the slang backend only, not on cpu"):
        k.prepare(gi.Device("cpu"))


def test_not_canonical_slang_is_a_clear_error():
    with pytest.raises(gi.DiagnosticError, match="not a canonical goldy_compute kernel"):
        gi.load_slang("[shader(\"compute\")] void main() {}")
