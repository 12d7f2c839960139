"""Storage images (`gpu::DirectSpatial<E>`) from Python: upload, kernel reads and writes by
texel coordinate, width/height, bound checks; every backend against the CPU oracle."""

import numpy as np
import pytest

import goldy_import as gi
from oracle import backend_or_skip, device

SRC = """
use goldy::gpu;
/// Brightens every texel of `src` into `dst` and writes its coordinates into `coords`.
#[goldy::compute(workgroup_size = [8, 8, 1])]
fn shade(src: gpu::DirectSpatial<gpu::float4>, dst: gpu::DirectSpatial<gpu::float4>,
         coords: gpu::DirectSpatial<u32>, gain: f32) {
    let x = gpu::global_id().x;
    let y = gpu::global_id().y;
    if x < dst.width() && y < dst.height() {
        let c = gpu::uint2(x, y);
        let t = src[c];
        dst[c] = gpu::float4(t.x * gain, t.y * gain, t.z * gain, 1.0);
        coords[c] = y * 1000 + x;
    }
}
"""


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "images.rs")


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_images_round_trip_and_match_numpy(backend, mod):
    backend_or_skip(backend)
    dev = device(backend)
    h, w = 19, 27
    rng = np.random.default_rng()
    src = rng.standard_normal((h, w, 4)).astype(np.float32)
    dst = dev.image(np.full((h, w, 4), np.nan, np.float32))
    coords = dev.image(np.full((h, w), 0xDEADBEEF, np.uint32))
    s = gi.Scheme(dev)
    mod.shade.prepare(dev).record(s, "shade", dev.image(src), dst, coords, 1.5).over_2d(w, h)
    s.submit()
    want = src * np.float32(1.5)
    want[..., 3] = 1.0
    np.testing.assert_array_equal(dst.numpy(), want)
    np.testing.assert_array_equal(coords.numpy(), np.arange(h)[:, None] * 1000 + np.arange(w)[None, :])


def test_image_binding_is_checked(mod):
    dev = gi.Device("cpu")
    img4 = dev.image(np.zeros((4, 4, 4), np.float32))
    s = gi.Scheme(dev)
    with pytest.raises(gi.BindingError, match=r"parameter `coords` .*expected u32 texels, got \[f32; 4\] texels"):
        mod.shade.prepare(dev).record(s, "bad", img4, img4, img4, 1.0)
    with pytest.raises(gi.BindingError, match=r"parameter `src` .*expected an Image"):
        mod.shade.prepare(dev).record(s, "bad", dev.buffer(np.zeros(64, np.float32)), img4,
                                      dev.image(np.zeros((4, 4), np.uint32)), 1.0)
    with pytest.raises(gi.BindingError, match=r"expected shape \(height, width\) or \(height, width, 4\)"):
        dev.image(np.zeros((4, 4, 3), np.float32))
    assert s.nodes == []
