"""Accumulation loops four iterations at a time, loads first (ir/unroll.py, codegen/wgsl/unroll.py), on
wgpu against the CPU oracle bit for bit (fresh random data, outputs poisoned), and their
faults: the first failing load of the thread, as on the CPU."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.wgsl import emit_wgsl_module
from oracle import check_against_cpu, kernel_ir, run_kernel

SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn block_sum(x: &[f32], partial: &mut [f32], per_thread: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let g = gpu::workgroup_id().x;
    let base = g * 64 * per_thread + gpu::local_id().x;
    let mut acc = 0.0;
    for j in 0..per_thread { acc += x[base + j * 64]; }
    let t = gpu::workgroup_sum::<64>(acc, s);
    if gpu::local_id().x == 0 { partial[g] = t; }
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn gemv(w: &[f32], x: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        let mut acc = 0.0;
        let mut sq = 0.0;
        for j in 0..n { acc = acc + w[i * n + j] * x[j]; sq = sq - x[j] * x[j]; }
        for j in 0..n { acc = acc * 0.5 + sq; }
        y[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn one_lane(x: &[f32], out: &mut [f32], m: i32) {
    if gpu::local_id().x == 0 {
        let mut acc = 0.0;
        for j in 0..m { acc += x[(j * 3) as u32]; }
        out[gpu::workgroup_id().x] = acc;
    }
}

#[goldy::compute(workgroup_size = [32, 1, 1])]
fn chase(next: &[u32], out: &mut [u32], m: u32) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let mut at = i;
        for j in 0..m { at = next[at]; }
        out[i] = at;
    }
}
"""


def _code(kernel: str) -> str:
    return emit_wgsl_module(kernel_ir(SRC, kernel)).code


def test_only_loops_whose_loads_do_not_depend_on_the_body_are_unrolled():
    # trips of 4 (ir/unroll.py, Target.unroll), their reads first (codegen/wgsl/unroll.py)
    assert "the trip's reads first" in _code("block_sum") and "the trip's reads first" in _code("gemv")
    assert "the trip's reads first" not in _code("chase")  # each load's index is the last load
    assert "while (" not in _code("chase")


@pytest.mark.parametrize("per_thread", [0, 1, 3, 4, 5, 8, 13])
def test_a_reduction_loop_matches_the_cpu_oracle(per_thread):
    groups = 5
    rng = np.random.default_rng(per_thread)
    x = rng.standard_normal(groups * 64 * max(per_thread, 1) + 7).astype(np.float32)
    check_against_cpu("wgpu", SRC, "block_sum", [x, np.zeros(groups, np.float32), np.uint32(per_thread)],
                      ("groups", (groups, 1, 1)))


@pytest.mark.parametrize("n", [1, 6, 16, 23])
def test_a_gemv_row_loop_matches_the_cpu_oracle(n):
    rows = 70
    rng = np.random.default_rng(n)
    w = rng.standard_normal(rows * n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    check_against_cpu("wgpu", SRC, "gemv", [w, x, np.zeros(rows, np.float32), np.uint32(n)], ("over_1d", rows))


def test_a_pointer_chase_matches_the_cpu_oracle():
    n = 100
    nxt = np.random.default_rng(1).integers(0, n, n).astype(np.uint32)
    check_against_cpu("wgpu", SRC, "chase", [nxt, np.zeros(n, np.uint32), np.uint32(9)], ("over_1d", n))


@pytest.mark.parametrize("m", [-3, 0, 4, 7])
def test_signed_trip_counts_match_the_cpu_oracle(m):
    x = np.random.default_rng(2).standard_normal(40).astype(np.float32)
    check_against_cpu("wgpu", SRC, "one_lane", [x, np.zeros(3, np.float32), np.int32(m)], ("groups", (3, 1, 1)))


def test_the_first_failing_load_of_an_unrolled_group_is_reported():
    # x[0], x[3], x[6], x[9] | x[12] (fails first), x[15] ... within the second group of four
    x = np.random.default_rng(3).standard_normal(10).astype(np.float32)
    msgs = []
    for backend in ("cpu", "wgpu"):
        with pytest.raises(gi.KernelFault) as e:
            run_kernel(backend, SRC, "one_lane", [x, np.zeros(1, np.float32), np.int32(9)], ("groups", (1, 1, 1)))
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "12" in msgs[1]
