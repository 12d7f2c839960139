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
