"""Grids past WebGPU's 65535 workgroups per dimension: the wgpu backend folds the dispatch
(runtime/grid_fold.py) and the generated WGSL rebuilds the logical ids, so `global_id()`,
`workgroup_id()` and `num_workgroups()` mean the grid the host asked for. Each run is checked
against the CPU oracle on fresh random data, outputs poisoned."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime.grid_fold import U32, fold
from oracle import backend_or_skip, check_against_cpu, device

IDS = """
use goldy::gpu;

/// Every thread writes values derived from its ids only: cheap over 2^24+ threads.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn ids_1d(out: &mut [u32], n: u32) {
    let i = gpu::global_id().x;
    if i < n {
        out[i] = gpu::workgroup_id().x * 3 + gpu::num_workgroups().x + gpu::local_id().x * 7;
    }
}

/// a * x + y in one element per thread.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

/// One record per workgroup of a 2-D or 3-D grid: its logical ids and the grid's extent.
#[goldy::compute(workgroup_size = [2, 2, 1])]
fn ids_3d(out: &mut [u32]) {
    let w = gpu::workgroup_id();
    let g = gpu::num_workgroups();
    let l = gpu::local_id();
    let t = gpu::global_id();
    if l.x == 0 && l.y == 0 && l.z == 0 {
        let slot = ((w.z * g.y + w.y) * g.x + w.x) * 5;
        out[slot] = w.x;
        out[slot + 1] = w.y;
        out[slot + 2] = w.z;
        out[slot + 3] = g.x * 1000 + g.y * 10 + g.z;
        out[slot + 4] = t.x + t.y * 7 + t.z * 13;
    }
}

/// A collective in a folded grid: each workgroup's sum and the barrier around it.
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn group_sums(input: &[f32], sums: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 32>();
    let i = gpu::global_id().x;
    let mut v = 0.0;
    if i < input.len() {
        v = input[i];
    }
    let total = gpu::workgroup_sum::<32>(v, scratch);
    if gpu::local_id().x == 0 {
        sums[gpu::workgroup_id().x] = total;
    }
}
"""

CAP = 65535


@pytest.fixture(scope="module")
def wgpu_dev():
    backend_or_skip("wgpu")
    return device("wgpu")


def rng(seed):
    return np.random.default_rng(seed)


def test_fold_covers_the_grid_within_u32():
    for groups in [(CAP + 1, 1, 1), (2**26, 1, 1), (70000, 3, 2), (5, 70001, 1), (2**32 - 1, 1, 1), (1 << 24, 256, 1)]:
        dx, dy, dz = fold("k", groups, (1, 1, 1), CAP)
        total = groups[0] * groups[1] * groups[2]
        assert max(dx, dy, dz) <= CAP and total <= dx * dy * dz <= U32


def test_fold_refuses_more_than_u32_threads_or_workgroups():
    with pytest.raises(gi.GridError, match=r"kernel `k`: .* exceed 2\^32 threads"):
        fold("k", (2**31, 1, 1), (4, 1, 1), CAP)
    with pytest.raises(gi.GridError, match=r"kernel `k`: .* cannot be folded"):
        fold("k", (2**20, 2**20, 1), (1, 1, 1), CAP)


def test_ids_past_the_fold_boundary(wgpu_dev):
    assert wgpu_dev.backend.dispatch_cap == CAP
    for groups in (CAP, CAP + 1, 3 * CAP + 17):  # unfolded, just folded, folded with padding
        n = groups * 64 - 5
        out = rng(groups).integers(0, 2**32, n, dtype=np.uint32)
        got = check_against_cpu("wgpu", IDS, "ids_1d", [out, n], ("over_1d", n))
        i = np.arange(n, dtype=np.int64)
        want = (i // 64 * 3 + groups + i % 64 * 7).astype(np.uint32)
        np.testing.assert_array_equal(got[0], want)


def test_saxpy_over_2_pow_24_plus_elements(wgpu_dev):
    n = (1 << 24) + 1000  # 262160 workgroups of 64
    r = rng(1)
    x, y = r.standard_normal(n, dtype=np.float32), r.standard_normal(n, dtype=np.float32)
    got = check_against_cpu("wgpu", IDS, "saxpy", [x, y, np.float32(1.5)], ("over_1d", n))
    np.testing.assert_array_equal(got[1], np.float32(1.5) * x + y)


@pytest.mark.parametrize("grid", [("over_2d", 2 * (CAP + 3), 5), ("over_3d", 2 * (CAP + 1), 2, 3),
                                  ("over_2d", 8, 6)])
def test_2d_and_3d_ids_in_a_folded_grid(wgpu_dev, grid):
    ext = list(grid[1:]) + [1] * (4 - len(grid))
    groups = (-(-ext[0] // 2), -(-ext[1] // 2), ext[2])
    count = groups[0] * groups[1] * groups[2]
    out = rng(3).integers(0, 2**32, 5 * count, dtype=np.uint32)
    got = check_against_cpu("wgpu", IDS, "ids_3d", [out], grid)[0].reshape(groups[2], groups[1], groups[0], 5)
    z, y, x = np.meshgrid(*(np.arange(g) for g in groups[::-1]), indexing="ij")
    np.testing.assert_array_equal(got[..., 0], x)
    np.testing.assert_array_equal(got[..., 1], y)
    np.testing.assert_array_equal(got[..., 2], z)
    assert (got[..., 3] == groups[0] * 1000 + groups[1] * 10 + groups[2]).all()
    np.testing.assert_array_equal(got[..., 4], (2 * x + 2 * y * 7 + z * 13).astype(np.uint32))


def test_collective_in_a_folded_grid(wgpu_dev):
    groups = CAP + 100
    n = groups * 32 - 7
    x = rng(4).standard_normal(n, dtype=np.float32)
    sums = rng(5).standard_normal(groups, dtype=np.float32)
    check_against_cpu("wgpu", IDS, "group_sums", [x, sums], ("over_1d", n))


def test_folded_module_rebuilds_the_logical_ids():
    from goldy_import.codegen.wgsl import emit_wgsl_module
    from oracle import kernel_ir
    k = kernel_ir(IDS, "group_sums")
    plain, folded = emit_wgsl_module(k), emit_wgsl_module(k, fold_grid=True)
    assert "gi_grid" not in plain.code and plain.grid_binding is None
    assert folded.grid_binding is not None and "if (gi_fold >= gi_grid.w) { return; }" in folded.code
