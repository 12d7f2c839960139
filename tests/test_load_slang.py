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


GOLDY_STYLE = """
import goldy_exp;
// Goldy's own spelling: `y: &mut [f32]` is `Scattered<float> y`, lengths via goldy_buf_len
[goldy_compute]
[numthreads(64, 1, 1)]
void saxpy(BufRO<float> x, Scattered<float> y, float a, ThreadId tid) {
    uint i = tid.x;
    if (i < goldy_buf_len(y) && i < goldy_buf_len(x)) { y[i] = a * x[i] + y[i]; }
}
"""


def test_goldy_style_slang_loads_and_matches_the_rust_kernel():
    """Hand-written Goldy-style Slang (`import goldy_exp;`, a read-write `Scattered<T>`,
    `goldy_buf_len`) runs like the imported Rust saxpy, whose canonical Slang is written in
    the same vocabulary."""
    backend_or_skip("slang")
    from goldy_import.codegen.slang import emit_slang
    rust = gi.load("rust_examples/saxpy.rs")
    assert "void cs_main(BufRO<float> x, Scattered<float> y, float a, ThreadId _goldy_gid)" in emit_slang(
        rust.saxpy.definition().ir)
    k = gi.load_slang(GOLDY_STYLE)
    assert [(p.name, p.category) for p in k.ir.params] == [("x", "read"), ("y", "read_write"), ("a", "scalar")]
    dev = gi.Device("slang")
    rng = np.random.default_rng()
    x, y = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
    outs = []
    for kernel in (k, rust.saxpy):
        bx, by = dev.buffer(x), dev.buffer(y)
        s = gi.Scheme(dev)
        kernel.prepare(dev).record(s, "saxpy", bx, by, 1.25).over_1d(300)
        s.submit()
        outs.append(by.numpy())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], np.float32(1.25) * x + y)


def test_goldy_names_we_do_not_provide_fail_naming_the_symbol():
    backend_or_skip("slang")
    src = GOLDY_STYLE.replace("goldy_buf_len(x)", "goldy_push_layout_word(3)")
    k = gi.load_slang(src)
    with pytest.raises(gi.BackendError, match=r"(?s)the Slang compiler rejected.*goldy_push_layout_word"):
        k.prepare(gi.Device("slang"))
