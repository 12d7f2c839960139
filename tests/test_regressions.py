"""Minimised cases of bugs found along the way, run on every backend against the CPU oracle."""

import numpy as np
import pytest

from oracle import check_against_cpu

SIGNED_COMPARE = """
#[goldy::compute(workgroup_size = [4, 1, 1])]
fn k(x: &[u32], out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < out.len() { if (-33i32) >= (x[i] as i32) { out[i] = 1; } else { out[i] = 2; } }
}
"""


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
def test_u32_as_i32_compares_signed(backend):
    # slangpy's CPU target compared the result of asint() as unsigned
    x = np.array([5, 0, 2**32 - 40, 2**32 - 10, 7, 2**31], np.uint32)
    got = check_against_cpu(backend, SIGNED_COMPARE, "k", [x, np.zeros(6, np.uint32)], ("over_1d", 6))
    np.testing.assert_array_equal(got[1], [2, 2, 1, 2, 2, 1])


FAULT_ORDER = """
#[goldy::compute(workgroup_size = [4, 1, 1])]
fn k(x: &[f32], idx: &[u32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    y[idx[i]] = x[i + 10];
}
"""


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_assigned_value_faults_before_the_place(backend):
    # Rust evaluates the assigned value before the place; the CPU backend once reported `y`
    import goldy_import as gi
    from oracle import device
    dev = device(backend)
    m = gi.load_source(FAULT_ORDER, "order.rs")
    x, ix, y = dev.buffer(np.ones(4, np.float32)), dev.buffer(np.array([0, 1, 99, 2], np.uint32)), dev.empty(4, np.float32)
    s = gi.Scheme(dev)
    m.k.prepare(dev).record(s, "k", x, ix, y).over_1d(4)
    with pytest.raises(gi.KernelFault) as e:
        s.submit()
    assert str(e.value) == ("kernel `k` (node 0 'k'): index out of bounds at order.rs:5:17: "
                            "parameter `x` indexed at 10, but its length is 4")
