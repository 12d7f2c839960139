"""Tensor views and shape contracts on every backend: logical indexing through narrowed,
transposed, permuted, broadcast and strided views, writes into views, refusals, and the
exact contract error messages."""

import numpy as np
import pytest

import goldy_import as gi
from oracle import backend_or_skip, device

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn copy_any(src: gpu::Tensor<f32>, dst: gpu::TensorWrite<f32>) {
    let i = gpu::global_id().x;
    if i < dst.len() { dst[i] = src[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn copy(#[tensor(shape = [n])] src: gpu::Tensor<f32>, #[tensor(shape = [n])] dst: gpu::TensorWrite<f32>) {
    let i = gpu::global_id().x;
    if i < dst.len() { dst[i] = src[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn fixed(#[tensor(shape = [4, _])] src: gpu::Tensor<f32>, dst: gpu::TensorWrite<f32>) {
    let i = gpu::global_id().x;
    if i < dst.len() { dst[i] = src[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale_into(src: gpu::Tensor<f32>, dst: gpu::TensorMut<f32>, k: f32) {
    let i = gpu::global_id().x;
    if i < dst.len() { dst[i] = dst[i] + k * src[i]; }
}
#[goldy::compute(workgroup_size = [1, 1, 1])]
fn meta(t: gpu::Tensor<u32>, out: &mut [u32]) {
    out[0] = t.rank();
    out[1] = t.len();
    for a in 0..4u32 { out[2 + a] = t.dim(a); }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn physical(buf: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = buf[i] * 2.0; }
}
"""
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "tensors.rs")


def rnd(*shape):
    return np.random.default_rng().standard_normal(shape).astype(np.float32)


def run(dev, kernel, *args, n):
    s = gi.Scheme(dev)
    kernel.prepare(dev).record(s, kernel.__name__, *args).over_1d(n)
    s.submit()


def poisoned(dev, shape):
    return dev.tensor(np.full(shape, np.nan, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("make_view,expect", [
    (lambda t: t.narrow(0, 1, 3).narrow(1, 2, 4), lambda a: a[1:4, 2:6]),
    (lambda t: t.transpose(), lambda a: a.T),
    (lambda t: t.reshape((5, 2, 7)).permute((2, 0, 1)), lambda a: a.reshape(5, 2, 7).transpose(2, 0, 1)),
    (lambda t: t.narrow(0, 2, 1).broadcast_to((3, 4, 14)), lambda a: np.broadcast_to(a[2:3], (3, 4, 14))),
    (lambda t: gi.TensorView.strided(t.buffer, (4, 3), (1, 20), 5), lambda a: a.reshape(-1)[5:].copy()[
        (np.arange(4)[:, None] * 1 + np.arange(3)[None, :] * 20)]),
], ids=["narrow", "transpose", "permute3", "broadcast", "strided"])
def test_copy_through_views_gives_numpys_answer(backend, mod, make_view, expect):
    backend_or_skip(backend)
    dev = device(backend)
    a = rnd(5, 14)
    view = make_view(dev.tensor(a))
    want = expect(a)
    np.testing.assert_array_equal(view.numpy(), want)
    dst = poisoned(dev, want.shape)
    run(dev, mod.copy_any, view, dst, n=want.size)
    np.testing.assert_array_equal(dst.numpy(), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_into_transposed_destination(backend, mod):
    backend_or_skip(backend)
    dev = device(backend)
    src = rnd(6, 9)
    dst = dev.tensor(np.full((9, 6), np.nan, np.float32))
    run(dev, mod.copy_any, dev.tensor(src), dst.transpose(), n=src.size)
    np.testing.assert_array_equal(dst.numpy(), src.T)


@pytest.mark.parametrize("backend", BACKENDS)
def test_disjoint_halves_of_one_buffer(backend, mod):
    backend_or_skip(backend)
    dev = device(backend)
    a = rnd(100)
    t = dev.tensor(a)
    left, right = t.narrow(0, 0, 50), t.narrow(0, 50, 50)
    run(dev, mod.scale_into, right, left, 3.0, n=50)
    want = a.copy()
    want[:50] = a[:50] + np.float32(3.0) * a[50:]
    np.testing.assert_array_equal(t.numpy(), want)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dim_rank_len_read_back(backend, mod):
    backend_or_skip(backend)
    dev = device(backend)
    t = dev.tensor(np.arange(2 * 3 * 5, dtype=np.uint32).reshape(2, 3, 5)).permute((2, 0, 1))
    out = dev.buffer(np.full(6, 0xDEADBEEF, np.uint32))
    s = gi.Scheme(dev)
    mod.meta.prepare(dev).record(s, "meta", t, out).groups((1, 1, 1))
    s.submit()
    np.testing.assert_array_equal(out.numpy(), [3, 30, 5, 2, 3, 1])


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_bound_to_plain_slice_indexes_the_parent_buffer(backend, mod):
    backend_or_skip(backend)
    dev = device(backend)
    a = rnd(40)
    view = dev.tensor(a).narrow(0, 10, 5)  # the slice parameter still sees the whole parent
    out = dev.buffer(np.full(40, np.nan, np.float32))
    run(dev, mod.physical, view, out, n=40)
    np.testing.assert_array_equal(out.numpy(), a * np.float32(2.0))


def test_broadcast_destination_refused(mod):
    dev = gi.Device("cpu")
    src = dev.tensor(rnd(3, 4))
    dst = dev.tensor(rnd(1, 4)).broadcast_to((3, 4))
    s = gi.Scheme(dev)
    with pytest.raises(gi.BindingError, match=r"kernel `copy_any` parameter `dst` .*zero stride on an expanded axis"):
        mod.copy_any.prepare(dev).record(s, "c", src, dst).over_1d(12)
    assert s.nodes == []


def test_overlapping_views_refused(mod):
    dev = gi.Device("cpu")
    t = dev.tensor(rnd(100))
    s = gi.Scheme(dev)
    with pytest.raises(gi.AliasingError, match=r"`src` and `dst` are bound to overlapping memory"):
        mod.scale_into.prepare(dev).record(s, "c", t.narrow(0, 0, 60), t.narrow(0, 40, 60), 1.0).over_1d(60)
    assert s.nodes == []


@pytest.mark.parametrize("kernel,src_shape,dst_shape,message", [
    ("copy", (2, 2), (4,), "kernel `copy` parameter `src`: expected rank 1 [n], got rank 2 [2, 2]"),
    ("copy", (3,), (4,), "kernel `copy` parameter `dst` axis 0: expected `n`=3 (from `src` axis 0), got 4 (shape [4])"),
    ("fixed", (2, 5), (10,), "kernel `fixed` parameter `src` axis 0: expected 4, got 2 (shape [2, 5])"),
])
def test_contract_errors_exactly_worded(mod, kernel, src_shape, dst_shape, message):
    dev = gi.Device("cpu")
    s = gi.Scheme(dev)
    with pytest.raises(gi.ShapeContractError) as e:
        getattr(mod, kernel).prepare(dev).record(s, "c", dev.tensor(rnd(*src_shape)), dev.tensor(rnd(*dst_shape))).over_1d(4)
    assert str(e.value) == message
    assert s.nodes == []


def test_view_errors_name_the_numbers():
    dev = gi.Device("cpu")
    t = dev.tensor(rnd(4, 6))
    with pytest.raises(gi.BindingError, match=r"narrow\(axis=1, start=4, length=3\) is outside extent 6"):
        t.narrow(1, 4, 3)
    with pytest.raises(gi.BindingError, match=r"reshape needs a contiguous view"):
        t.transpose().reshape((24,))
    with pytest.raises(gi.BindingError, match=r"negative stride"):
        gi.TensorView.strided(t.buffer, (2,), (-1,), 3)
    with pytest.raises(gi.BindingError, match=r"reaches element 29, past the end of a buffer of 24 elements"):
        gi.TensorView.strided(t.buffer, (5, 6), (6, 1), 0)
    with pytest.raises(gi.BindingError, match=r"cannot broadcast shape \[4, 6\] to \[4, 5\]"):
        t.broadcast_to((4, 5))


def test_over_tensor_sets_the_grid(mod):
    dev = gi.Device("cpu")
    a = rnd(7, 9)
    dst = dev.tensor(np.full((7, 9), np.nan, np.float32))
    s = gi.Scheme(dev)
    node = mod.copy_any.prepare(dev).record(s, "c", dev.tensor(a), dst).over_tensor(dst)
    assert node.dispatch.groups == (1, 1, 1)
    s.submit()
    np.testing.assert_array_equal(dst.numpy(), a)
