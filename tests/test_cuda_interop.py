"""Zero-copy binding of CuPy arrays and PyTorch tensors on the CUDA backend (H200 only)."""

import numpy as np
import pytest

import goldy_import as gi
from oracle import backend_or_skip

SRC = """
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rowsum(#[tensor(shape = [r, c])] m: gpu::Tensor<f32>, out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let mut s = 0.0;
        for j in 0..m.dim(1) { s += m[i * m.dim(1) + j]; }
        out[i] = s;
    }
}
"""


@pytest.fixture(scope="module")
def dev():
    backend_or_skip("cuda")
    return gi.Device("cuda")


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "interop.rs")


def test_cupy_arrays_bind_without_copy(dev, mod):
    cp = pytest.importorskip("cupy")
    rng = np.random.default_rng()
    x, y = rng.standard_normal(10000).astype(np.float32), rng.standard_normal(10000).astype(np.float32)
    cx, cy = cp.asarray(x), cp.asarray(y)
    s = gi.Scheme(dev)
    mod.saxpy.prepare(dev).record(s, "saxpy", cx, cy, 2.0).over_1d(10000)
    s.submit()
    np.testing.assert_array_equal(cp.asnumpy(cy), np.float32(2.0) * x + y)  # written in place


def test_torch_tensor_binds_as_tensor_view(dev, mod):
    torch = pytest.importorskip("torch")
    m = torch.randn(300, 17, device="cuda")
    out = torch.full((300,), float("nan"), device="cuda")
    s = gi.Scheme(dev)
    mod.rowsum.prepare(dev).record(s, "rowsum", m, out).over_1d(300)
    s.submit()
    want = np.zeros(300, np.float32)
    host = m.cpu().numpy()
    for j in range(17):
        want += host[:, j]
    np.testing.assert_array_equal(out.cpu().numpy(), want)


def test_external_arrays_are_checked(dev, mod):
    cp = pytest.importorskip("cupy")
    k = mod.saxpy.prepare(dev)
    s = gi.Scheme(dev)
    with pytest.raises(gi.BindingError, match="parameter `x`"):
        k.record(s, "bad dtype", cp.zeros(8, cp.float64), cp.zeros(8, cp.float32), 1.0)
    with pytest.raises(gi.BindingError, match="contiguous"):
        k.record(s, "strided", cp.zeros(16, cp.float32)[::2], cp.zeros(8, cp.float32), 1.0)
    big = cp.zeros(16, cp.float32)  # the same array twice is in place (every access at the thread's
    with pytest.raises(gi.AliasingError, match="overlapping memory"):  # own index); a shifted overlap is not
        k.record(s, "alias", big[0:8], big[4:12], 1.0).over_1d(8)
    assert s.nodes == []
