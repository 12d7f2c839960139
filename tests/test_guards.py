"""Repeated guards merge in specialized variants (ir/guards.py): a fused region's stages run
under one `if`, with the bits of the unfused chain on every backend, and the merge refuses
whatever could change a thread's execution."""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir import nodes as N
from goldy_import.ir import pipeline
from goldy_import.ir.checks import check_sites
from goldy_import.ir.guards import merge_guards
from goldy_import.ir.specialize import specialize
from oracle import assert_same, backend_or_skip, device, kernel_ir
from test_specialization import _bits, _run

CHAIN = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn affine(x: &[f32], t: &mut [f32], n: u32, a: f32) {
    let i = gpu::global_id().x;
    if i < n { t[i] = x[i] * a - 0.5; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn silu(t: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { let v = t[i]; y[i] = v / (1.0 + (-v).exp()); }
}
"""

N_CHAIN = 200  # not a multiple of the workgroup size: the guard matters


def _chain(dev, fuse: bool, seed: int = 3):
    mod = gi.load_source(CHAIN, "guards.rs")
    sch = gi.Scheme(dev)
    sch.set_automatic_fusion(fuse)
    sch.set_specialization(fuse)
    rng = np.random.default_rng(seed)
    x = dev.buffer((rng.standard_normal(N_CHAIN) * 4).astype(np.float32))
    y = dev.empty(N_CHAIN)
    t = sch.temporary_buffer(N_CHAIN)
    mod.affine.prepare(dev).record(sch, "affine", x, t, N_CHAIN, 1.5).over_1d(N_CHAIN)
    mod.silu.prepare(dev).record(sch, "silu", t, y, N_CHAIN).over_1d(N_CHAIN)
    for _ in range(2 if fuse else 0):
        _run(sch, [y])
        assert sch.wait_for_fusion(300) and sch.wait_for_specialization(300)
    return sch, y


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_a_fused_specialized_chain_runs_under_one_guard(backend):
    backend_or_skip(backend)
    dev = device(backend)
    sch, y = _chain(dev, True)
    got = _run(sch, [y])[0]
    assert sch.specialization_report().regions[0].status == "active"
    (e,) = sch._fusion.active
    (_, scalars, tensors, _) = sch._spec.plans[(0, 1)]
    v = specialize(e.kernel.kdef.ir, scalars)
    assert sum(isinstance(s, N.If) for s in v.body) == 1, "the two stages' guards should be one `if`"
    # the bound buffers' lengths are baked too: every access of the variant is proven
    assert tensors == {"x": ("len", N_CHAIN), "y": ("len", N_CHAIN)}, tensors
    lowered = pipeline.lower(specialize(e.kernel.kdef.ir, scalars, tensors), "ptx", checks=True).kernel
    assert check_sites(lowered) == []
    ref, ref_y = _chain(dev, False)
    np.testing.assert_array_equal(_bits(got), _bits(_run(ref, [ref_y])[0]))
    if backend != "cpu":
        oracle, oracle_y = _chain(gi.Device("cpu"), False)
        assert_same(got, _run(oracle, [oracle_y])[0])


SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn same(y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = 1.0; }
    let k = gpu::global_id().x;
    if k < n { y[k] = y[k] + 1.0; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn changed(y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    let mut m = n;
    if i < m { m = 0u32; y[i] = 1.0; }
    if i < m { y[i] = 2.0; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn moved(y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    let mut c = 0u32;
    if i < n { c = 1u32; }
    let j = c;
    if i < n { y[i] = j as f32; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn leaves(y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = 1.0; return; }
    if i < n { y[i] = 2.0; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn divides(y: &mut [f32], n: u32, d: u32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = 1.0; }
    let q = n / d;
    if i < n { y[i] = q as f32; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn loads(y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if y[0] < 1.0 { y[0] = 5.0; }
    if y[0] < 1.0 { y[1] = 5.0; }
}
"""


@pytest.mark.parametrize("name,ifs", [("same", 1), ("changed", 2), ("moved", 2), ("leaves", 2),
                                      ("divides", 2), ("loads", 2)])
def test_merge_only_what_keeps_each_threads_execution(name, ifs):
    k = merge_guards(kernel_ir(SRC, name))
    assert sum(isinstance(s, N.If) for s in k.body) == ifs
