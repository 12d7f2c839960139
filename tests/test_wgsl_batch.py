"""The batched entry of element-wise kernels on wgpu (codegen/wgsl/batch.py): BATCH logical
workgroups per dispatched one, in lock step. The backend takes it for large 1-D dispatches
of `batchable` kernels; here `batch_min_threads = 0` makes every 1-D dispatch of one take it.
Each run is checked against the CPU oracle bit for bit on fresh random data, outputs
poisoned; faults must be the plain entry's."""

import random

import numpy as np
import pytest

import goldy_import as gi
import kernel_gen as G
from goldy_import.codegen.ptx.emitter import batchable
from goldy_import.codegen.wgsl import emit_wgsl_module
from goldy_import.ir.pipeline import for_target
from oracle import check_against_cpu, device, kernel_ir, run_kernel
from test_differential_fuzz import assert_bits, trapping_checks

SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn branchy(x: &[f32], y: &[f32], out: &mut [f32], ids: &mut [u32], a: f32) {
    let i = gpu::global_id().x;
    if i >= out.len() {
        return;
    }
    let mut v = x[i] * a;
    if v > 0.0 {
        v = v + y[i];
    } else if v < -1.0 {
        ids[i] = gpu::workgroup_id().x * 1000 + gpu::num_workgroups().x;
        return;
    } else {
        v = v - y[i] * y[i];
    }
    out[i] = v;
    ids[i] = i / (gpu::local_id().x + 1);
}

#[goldy::compute(workgroup_size = [4, 1, 1])]
fn small_groups(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i] * 2.0 - y[i]; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gather(x: &[f32], idx: &[u32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = x[idx[i]] + 1.0; }
}
"""


@pytest.fixture
def batching():
    dev = device("wgpu")
    old = dev.backend.batch_min_threads
    dev.backend.batch_min_threads = 0
    yield dev
    dev.backend.batch_min_threads = old


def _batched_module(src: str, kernel: str):
    from goldy_import.ir.checks import insert_checks
    return emit_wgsl_module(insert_checks(kernel_ir(src, kernel)), batch=4)


def test_the_batched_module_computes_every_copy_before_storing():
    code = _batched_module(SRC, "small_groups").code
    assert "gi_live__b3" in code and "gi_global_id__b3" in code
    body = code[code.index("@compute"):]
    assert body.rindex("gi_pchecked_load_x(") < body.index("gi_store_y(")  # loads first


@pytest.mark.parametrize("n", [1, 63, 64 * 4, 64 * 4 * 5 + 37])
def test_branches_returns_and_ids_match_the_cpu_oracle(batching, n):
    rng = np.random.default_rng(n)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    ids = rng.integers(0, 2**32, n, dtype=np.uint32)  # rows that return early keep these
    check_against_cpu("wgpu", SRC, "branchy", [x, y, np.zeros(n, np.float32), ids, np.float32(1.7)],
                      ("over_1d", n))


def test_a_folded_batched_grid_matches_the_cpu_oracle(batching):
    cap = batching.backend.dispatch_cap
    n = 4 * (4 * cap + 9) + 3  # past the cap even a quarter of the workgroups: folded
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    check_against_cpu("wgpu", SRC, "small_groups", [x, y], ("over_1d", n))


def test_a_fault_in_the_batched_entry_is_the_plain_entrys(batching):
    n = 64 * 4 * 3 + 5
    rng = np.random.default_rng(3)
    x = rng.standard_normal(n).astype(np.float32)
    idx = np.arange(n, dtype=np.uint32)
    idx[n - 2] = n + 11  # one thread of the last (partial) batch reads past x
    faults = []
    for threshold in (0, 1 << 62):  # batched, then the plain entry
        batching.backend.batch_min_threads = threshold
        with pytest.raises(gi.KernelFault) as e:
            run_kernel("wgpu", SRC, "gather", [x, idx, np.zeros(n, np.float32)], ("over_1d", n))
        faults.append(str(e.value))
    assert faults[0] == faults[1] and str(n + 11) in faults[0]


def test_generated_batchable_kernels_match_the_cpu_oracle(batching):
    """The differential fuzz's kernels (tests/kernel_gen.py) that have a batched entry, at
    sizes with several batches, the last one partial."""
    ran = 0
    for s in range(60):
        gk = G.sample(random.Random(s), max_phases=1, avoid=G.avoided("wgpu"))
        if not batchable(for_target(kernel_ir(gk.source, G.NAME), "wgsl").kernel):
            continue
        ran += 1
        n = gk.wg * 4 * 3 + 5
        args = gk.inputs(n, s)
        outs = []
        with trapping_checks(not gk.unchecked):
            for backend in ("cpu", "wgpu"):
                try:
                    outs.append(run_kernel(backend, gk.source, G.NAME, args, ("over_1d", n)))
                except gi.KernelFault as f:
                    outs.append(str(f))
        want, got = outs
        if isinstance(want, str) or isinstance(got, str):
            assert got == want, f"kernel_gen sample {s}, n={n}\n{gk.source}"
            continue
        for name, g, w in zip(G.PARAMS, got, want):
            if w is not None:
                assert_bits(g, w, f"{name} (kernel_gen sample {s}, n={n})\n{gk.source}")
    assert ran >= 10
