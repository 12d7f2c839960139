"""Several GPUs: `Device("cuda:N")`, a Scheme per device, copies between devices, and the
error when a buffer of one device is bound on another. The name parsing runs everywhere;
the rest needs CUDA (one GPU), the last test two."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime.core import parse_device_name
from oracle import backend_or_skip, package_or_skip

SRC = """
#[goldy::compute(workgroup_size = [128, 1, 1])]
fn fma(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
"""


def test_device_names_parse():
    assert parse_device_name("cuda:3") == ("cuda", {"device": 3})
    assert parse_device_name("CUDA") == ("cuda", {})
    assert parse_device_name("cpu") == ("cpu", {})
    for bad in ("cpu:1", "wgpu:0", "cuda:x", "cuda:-1", "cuda:"):
        with pytest.raises(gi.BackendUnavailable, match="only cuda takes a device ordinal"):
            gi.Device(bad)
    assert gi.Device("cpu").name == "cpu"


def _gpus() -> int:
    backend_or_skip("cuda")
    from goldy_import.runtime.cuda import _driver
    return int(_driver().cuDeviceGetCount()[1])


def _fma_on(dev, x, y, a=2.0):
    mod = gi.load_source(SRC, "multi.rs")
    bx, by = dev.buffer(x), dev.buffer(y)
    s = gi.Scheme(dev)
    mod.fma.prepare(dev).record(s, "fma", bx, by, a).over_1d(len(y))
    s.submit()
    return by


def test_ordinals_on_one_gpu():
    count = _gpus()
    dev = gi.Device("cuda:0")
    assert dev.name == "cuda:0" and dev.backend.ordinal == 0
    with pytest.raises(gi.BackendUnavailable, match=rf"no CUDA device {count} \(`cuda:{count}`\): this machine has {count}"):
        gi.Device(f"cuda:{count}")
    rng = np.random.default_rng()
    x, y = rng.standard_normal(5000).astype(np.float32), rng.standard_normal(5000).astype(np.float32)
    ref = _fma_on(gi.Device("cpu"), x, y)
    got = _fma_on(dev, x, y)
    np.testing.assert_array_equal(got.numpy(), ref.numpy())
    np.testing.assert_array_equal(got.to(gi.Device("cpu")).numpy(), ref.numpy())


def test_two_gpus():
    if _gpus() < 2:
        pytest.skip("needs two CUDA GPUs")
    d0, d1 = gi.Device("cuda:0"), gi.Device("cuda:1")
    rng = np.random.default_rng()
    x, y = rng.standard_normal(5000).astype(np.float32), rng.standard_normal(5000).astype(np.float32)
    ref = _fma_on(gi.Device("cpu"), x, y).numpy()
    r0, r1 = _fma_on(d0, x, y), _fma_on(d1, x, y)  # a Scheme per device
    np.testing.assert_array_equal(r0.numpy(), ref)
    np.testing.assert_array_equal(r1.numpy(), ref)
    moved = r0.to(d1)
    assert moved.device is d1
    np.testing.assert_array_equal(moved.numpy(), ref)
    mod = gi.load_source(SRC, "multi.rs")
    with pytest.raises(gi.BindingError, match="lives on"):
        mod.fma.prepare(d1).record(gi.Scheme(d1), "wrong device", r0, moved, 1.0)
    torch = package_or_skip("torch")
    if torch.cuda.device_count() >= 2:  # DLPack knows the ordinal: a cuda:1 tensor binds on cuda:1 only
        t = torch.randn(64, device="cuda:1")
        with torch.cuda.device(1):  # torch exports from its current GPU only
            assert d1.from_dlpack(t).length == 64
        with pytest.raises(gi.BindingError, match="CUDA device 1, which a cuda:0 device cannot bind"):
            d0.from_dlpack(t)
        op = gi.torch.custom_op(mod.fma)  # a cuda:1 tensor's op runs on cuda:1
        assert gi.torch.device_for(t).name == "cuda:1"
        x1, y1 = torch.from_numpy(x).to("cuda:1"), torch.from_numpy(y).to("cuda:1")
        op(x1, y1, 2.0)
        np.testing.assert_array_equal(y1.cpu().numpy(), ref)
