"""DLPack in both directions on every backend (runtime/dlpack.py), and buffer.to(device):
zero-copy on cpu (and cuda on the H200), copies on wgpu and slang; results checked against
the cpu backend on fresh random data."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime import dlpack as D
from oracle import device, package_or_skip

SRC = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mix_f(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mix_u(x: &[u32], y: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = (x[i] ^ y[i]) * 2654435761; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mix_i(x: &[i32], y: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i] - y[i]; }
}
#[goldy::gpu]
struct P { a: f32, b: u32 }
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn touch(p: &[P], out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < p.len() { out[i] = p[i].b + 1; }
}
"""

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
N = 1000


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "dlpack.rs")


def _inputs(rng, dtype):
    if dtype == np.float32:
        return rng.standard_normal(N).astype(np.float32), rng.standard_normal(N).astype(np.float32)
    info = np.iinfo(dtype)
    return tuple(rng.integers(info.min, info.max, N, dtype=dtype, endpoint=True) for _ in range(2))


def _run(dev, mod, dtype, x, y):
    name, extra = {np.float32: ("mix_f", (1.5,)), np.uint32: ("mix_u", ()), np.int32: ("mix_i", ())}[dtype]
    s = gi.Scheme(dev)
    getattr(mod, name).prepare(dev).record(s, name, x, y, *extra).over_1d(N)
    s.submit()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.uint32, np.int32])
def test_round_trip_matches_cpu(backend, dtype, mod):
    dev = device(backend)
    rng = np.random.default_rng()
    x, y = _inputs(rng, dtype)
    ref_y = gi.Device("cpu").buffer(y)
    _run(ref_y.device, mod, dtype, ref_y.device.buffer(x), ref_y)
    bx, by = dev.from_dlpack(x), dev.from_dlpack(y.copy())
    assert (bx.elem, len(bx)) == ({np.float32: "f32", np.uint32: "u32", np.int32: "i32"}[dtype], N)
    _run(dev, mod, dtype, bx, by)
    back = np.from_dlpack(by) if backend != "cuda" else by.numpy()
    np.testing.assert_array_equal(back, ref_y.numpy())
    assert by.to(gi.Device("cpu")).numpy().tobytes() == ref_y.numpy().tobytes()


def test_cpu_is_zero_copy_both_ways(mod):
    dev = device("cpu")
    rng = np.random.default_rng()
    x, y = _inputs(rng, np.float32)
    by = dev.from_dlpack(y)  # y itself is written
    want = np.float32(1.5) * x + y
    _run(dev, mod, np.float32, dev.from_dlpack(x), by)
    np.testing.assert_array_equal(y, want)
    out = np.from_dlpack(by[10:20])
    assert np.shares_memory(out, y) and np.array_equal(out, want[10:20])
    made = dev.buffer(x)
    np.from_dlpack(made)[:] = 7.0  # an exported buffer of ours is its memory too
    assert (made.numpy() == 7.0).all()


def test_cpu_aliasing_of_borrowed_memory_is_refused(mod):
    dev = device("cpu")
    a = np.random.default_rng().standard_normal(16).astype(np.float32)
    k = mod.mix_f.prepare(dev)
    with pytest.raises(gi.AliasingError, match="overlapping memory"):
        k.record(gi.Scheme(dev), "alias", dev.from_dlpack(a[0:8]), dev.from_dlpack(a[4:12]), 1.0).over_1d(8)


@pytest.mark.parametrize("backend", ["wgpu", "slang"])
def test_gpu_exports_are_host_copies(backend):
    dev = device(backend)
    y = np.random.default_rng().standard_normal(64).astype(np.float32)
    buf = dev.from_dlpack(y)
    out = np.from_dlpack(buf)
    assert not np.shares_memory(out, y) and np.array_equal(out, y)
    with pytest.raises(BufferError, match="not host-addressable"):
        buf.__dlpack__(copy=False)


def test_torch_round_trip():
    torch = package_or_skip("torch")
    dev = device("cpu")
    t = torch.randn(3, 5)
    buf = dev.from_dlpack(t)
    assert buf.shape == (3, 5) and buf.length == 15
    with pytest.raises(gi.BindingError, match="refused to export: .*detach"):
        dev.from_dlpack(torch.zeros(4, requires_grad=True))
    back = torch.from_dlpack(buf)
    assert back.data_ptr() == t.data_ptr() and torch.equal(back, t)
    for backend in ("wgpu", "slang"):
        copy = torch.from_dlpack(device(backend).from_dlpack(t))
        assert torch.equal(copy, t) and copy.data_ptr() != t.data_ptr()
    a = np.random.default_rng().standard_normal(6).astype(np.float32)  # torch reads the capsules the
    before = len(D._live)                                               # cuda backend makes (here of host memory)
    got = torch.from_dlpack(_Producer(D.make_capsule(a.ctypes.data, (2, 3), "f32", (D.KDL_CPU, 0), a)))
    assert got.data_ptr() == a.ctypes.data and torch.equal(got, torch.from_numpy(a).reshape(2, 3))
    del got
    assert len(D._live) == before


def test_refusals(mod):
    dev = device("cpu")
    with pytest.raises(gi.BindingError, match="bool array is one byte"):
        dev.from_dlpack(np.ones(4, dtype=bool))
    with pytest.raises(gi.BindingError, match="buffers hold float32, uint32 or int32"):
        dev.from_dlpack(np.ones(4, dtype=np.float64))
    with pytest.raises(gi.BindingError, match="not C-contiguous"):
        dev.from_dlpack(np.ones(8, dtype=np.float32)[::2])
    with pytest.raises(gi.BindingError, match="expected an object with __dlpack__"):
        dev.from_dlpack([1.0, 2.0])
    structs = np.zeros(4, dtype=mod.P.host_dtype)
    with pytest.raises(gi.BindingError, match="no struct element type"):
        np.from_dlpack(dev.buffer(structs))
    flags = np.from_dlpack(dev.buffer(np.array([True, False, True])))
    assert flags.dtype == np.uint32 and flags.tolist() == [1, 0, 1]  # bool buffers are u32 words
    s = gi.Scheme(dev)
    with pytest.raises(gi.BindingError, match="cannot be exported"):
        np.from_dlpack(s.temporary_buffer(4))
    freed = dev.buffer(np.zeros(4, np.float32))
    freed.free()
    with pytest.raises(gi.BindingError, match="was freed"):
        np.from_dlpack(freed)


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
def test_copies_between_devices_keep_every_type(backend, mod):
    cpu, dev = device("cpu"), device(backend)
    rng = np.random.default_rng()
    p = np.zeros(100, dtype=mod.P.host_dtype)
    p["a"], p["b"] = rng.standard_normal(100), rng.integers(0, 2**32 - 1, 100)
    on_cpu = cpu.buffer(p)
    there = on_cpu.to(dev)
    assert there.device is dev and on_cpu.to(cpu) is on_cpu
    out = dev.buffer(np.full(100, 0xDEADBEEF, np.uint32))
    s = gi.Scheme(dev)
    mod.touch.prepare(dev).record(s, "touch", there, out).over_1d(100)
    s.submit()
    np.testing.assert_array_equal(out.to(cpu).numpy(), p["b"] + np.uint32(1))
    assert there.to(cpu).numpy().tobytes() == on_cpu.numpy().tobytes()
    with pytest.raises(gi.BindingError, match="lives on"):
        mod.touch.prepare(cpu).record(gi.Scheme(cpu), "wrong device", there, cpu.empty(100, np.uint32))


class _Producer:
    """Hands out a capsule made by runtime/dlpack.py."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, **_):
        return self.capsule

    def __dlpack_device__(self):
        return (D.KDL_CPU, 0)


def test_capsules_free_what_they_hold():
    a = np.arange(6, dtype=np.float32)
    before = len(D._live)
    got = np.from_dlpack(_Producer(D.make_capsule(a.ctypes.data, (2, 3), "f32", (D.KDL_CPU, 0), a)))
    assert got.shape == (2, 3) and np.shares_memory(got, a) and len(D._live) == before + 1
    del got  # the consumer calls the deleter
    assert len(D._live) == before
    D.make_capsule(a.ctypes.data, (6,), "f32", (D.KDL_CPU, 0), a)  # never consumed: the capsule frees it
    assert len(D._live) == before
    imported = D._Imported(D.make_capsule(a.ctypes.data + 4, (5,), "i32", (D.KDL_CPU, 0), a), "test")
    cai = imported.__cuda_array_interface__
    assert (cai["data"][0], cai["shape"], cai["typestr"], imported.device) == (a.ctypes.data + 4, (5,), "<i4", (1, 0))
    del imported
    assert len(D._live) == before
    with pytest.raises(gi.BindingError, match="not an unconsumed 'dltensor' capsule"):
        D._Imported(object(), "test")


def test_cuda_paths_against_a_fake_driver(monkeypatch):
    """runtime/dlpack.py's CUDA export and import, here without a GPU (tests/fake_cuda.py)."""
    from fake_cuda import FakeDriver
    from goldy_import.runtime import cuda as C
    drv = FakeDriver()
    monkeypatch.setattr(C, "_driver", lambda: drv)
    with gi.Device("cuda:0") as dev:
        assert dev.name == "cuda:0"
        with pytest.raises(gi.BackendUnavailable, match=r"no CUDA device 1 \(`cuda:1`\): this machine has 1"):
            gi.Device("cuda:1")
        x = np.random.default_rng().standard_normal(32).astype(np.float32)
        buf = dev.buffer(x)
        assert buf.__dlpack_device__() == (D.KDL_CUDA, 0)
        imported = D._Imported(buf[8:24].__dlpack__(), "test")  # what a consumer reads from the capsule
        cai = imported.__cuda_array_interface__
        assert imported.device == (D.KDL_CUDA, 0) and cai["shape"] == (16,)
        assert cai["data"][0] == buf._alloc.address() + 32

        class OnGpu:  # a CUDA producer handing out our own capsule
            def __dlpack__(self, stream=None, **_):
                assert stream is not None  # it is asked to order its work before the backend's stream
                return buf[8:24].__dlpack__()

            def __dlpack_device__(self):
                return (D.KDL_CUDA, 0)

        again = dev.from_dlpack(OnGpu())  # zero-copy: the same device memory
        assert again._alloc.address() == buf._alloc.address() + 32
        np.testing.assert_array_equal(again.numpy(), x[8:24])
        on_cpu = buf.to(gi.Device("cpu"))
        np.testing.assert_array_equal(on_cpu.numpy(), x)
        np.testing.assert_array_equal(dev.from_dlpack(x[::-1].copy()).numpy(), x[::-1])  # host memory: a copy
        with pytest.raises(gi.BindingError, match="lives in CUDA device 0, which a cpu device cannot bind"):
            gi.Device("cpu").from_dlpack(OnGpu())
