"""A scheme's live block (runtime/live_scalars.py): with specialization on, a scalar changed
with set_node_param is read by the node's variant from a word of one device buffer, copied
once per submit. Same bits as the oracle on every backend, per submit, for u32, i32, f32
(-0.0 and NaN included) and bool; on CUDA no graph node is patched per change."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.ptx import emit_ptx
from goldy_import.ir import pipeline
from goldy_import.ir.specialize import specialize
from goldy_import.runtime.backend import Limits
from goldy_import.runtime import live_scalars

from fake_cuda import fake  # noqa: F401  (a fixture)
from oracle import POISON_F32, assert_same, backend_or_skip, device
from test_ptx import assemble, ptxas  # noqa: F401  (ptxas: the fixture, required in CI, else skipped)

SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shift(x: &[f32], y: &mut [f32], pos: u32, s: f32, k: i32, on: bool, n: u32) {
    let i = gpu::global_id().x;
    if i < n {
        let v = x[(i + pos) % n] * s + (k as f32);
        if on { y[i] = v; } else { y[i] = -v; }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn window(x: &[f32], y: &mut [f32], pos: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < n {
        let mut acc = 0.0;
        for t in 0..=pos {
            acc += x[(i + t) % n];
        }
        y[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn bump(y: &mut [f32], b: f32, n: u32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = y[i] * 0.5 + b; }
}
"""
N = 300
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
# (pos, s, k, on) per step: -0.0, a NaN, i32 extremes, both bools
STEPS = [(5, 1.5, -3, True), (0, -0.0, 7, False), (299, float("nan"), -2**31, True), (17, 3.25e-3, 2**31 - 1, False),
         (123, -2.5, 0, True)]


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "live.rs")


def _record(mod, dev, sch, x):
    y, w = dev.empty(N), dev.empty(N)
    nodes = [mod.shift.prepare(dev).record(sch, "shift", x, y, 1, 2.0, 1, True, N).over_1d(N),
             mod.window.prepare(dev).record(sch, "window", x, w, 2, N).over_1d(N),
             mod.bump.prepare(dev).record(sch, "bump", w, 0.25, N).over_1d(N)]
    return [y, w], nodes


def _set(sch, nodes, step):
    pos, s, k, on = step
    sch.set_node_param(nodes[0], "pos", pos)
    sch.set_node_param(nodes[0], "s", s)
    sch.set_node_param(nodes[0], "k", k)
    sch.set_node_param(nodes[0], "on", on)
    sch.set_node_param(nodes[1], "pos", pos % 40)
    sch.set_node_param(nodes[2], "b", -s)


def _run(sch, outs):
    for o in outs:
        o.write(np.full(N, POISON_F32, np.float32))
    sch.submit()
    return [o.numpy() for o in outs]


def _warm(sch, outs, nodes):
    """Recorded, specialized with every scalar baked, then the changed ones made run-time:
    the variants that read them from the live block are active after this."""
    _run(sch, outs)
    assert sch.wait_for_specialization(300)
    _run(sch, outs)
    _set(sch, nodes, STEPS[0])
    _run(sch, outs)  # demoted: the universal programs, by value
    assert sch.wait_for_specialization(300)
    _run(sch, outs)


@pytest.mark.parametrize("backend", BACKENDS)
def test_changed_scalars_come_from_the_live_block_with_the_oracles_bits(mod, backend):
    backend_or_skip(backend)
    dev = device(backend)
    xh = np.random.default_rng(5).standard_normal(N).astype(np.float32)
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    outs, nodes = _record(mod, dev, sch, dev.buffer(xh))
    _warm(sch, outs, nodes)
    rep = sch.specialization_report()
    assert [n.status for n in rep.nodes] == ["active"] * 3, rep
    assert set(rep.nodes[0].live) == {"pos", "s", "k", "on"} and "n" in rep.nodes[0].baked, rep
    assert rep.nodes[1].live == ("pos",) and rep.nodes[2].live == ("b",), rep
    assert "run-time pos (live)" in str(rep)
    oracle_dev = gi.Device("cpu")
    oracle = gi.Scheme(oracle_dev)
    oracle.set_specialization(False)
    ref_outs, ref_nodes = _record(mod, oracle_dev, oracle, oracle_dev.buffer(xh))
    compiles = sch.stats.specialization_compiles
    for step in STEPS:
        uploads = sch.stats.live_uploads
        _set(sch, nodes, step)
        _set(oracle, ref_nodes, step)
        got, want = _run(sch, outs), _run(oracle, ref_outs)
        assert sch.stats.live_uploads == uploads + 1  # one copy for all six changes
        for g, w in zip(got, want):
            assert_same(g, w, what=f"{backend} step {step}")
    assert sch.stats.specialization_compiles == compiles and sch.stats.specialization_demotions == 3
    _run(sch, outs)  # nothing changed: no copy
    assert sch.stats.live_uploads == uploads + 1


def test_fake_cuda_patches_no_graph_node_once_the_variants_read_the_live_block(fake, mod):
    drv, dev = fake
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    outs, nodes = _record(mod, dev, sch, dev.buffer(np.ones(N, np.float32)))
    _warm(sch, outs, nodes)
    patched = drv.count("cuGraphExecKernelNodeSetParams")
    for step in STEPS[1:]:
        _set(sch, nodes, step)
        sch.submit()
    assert drv.count("cuGraphExecKernelNodeSetParams") == patched
    live = sch._spec.live
    words = live.buffer.numpy()[:len(live.words)]  # the device copy holds the last values
    pos, s, k, on = STEPS[-1]
    want = {(0, 2): pos, (0, 3): struct.unpack("<I", struct.pack("<f", s))[0], (0, 4): k & 0xFFFFFFFF,
            (0, 5): int(on), (1, 2): pos % 40, (2, 1): struct.unpack("<I", struct.pack("<f", -s))[0]}
    assert {src: int(words[w]) for src, w in live.words.items()} == want


def test_a_kernel_at_the_binding_limit_keeps_its_scalars_as_arguments(mod, monkeypatch):
    """One more storage binding would pass the device's limit: the variant takes the
    changed scalar by value, as before, with the same results."""
    dev = gi.Device("cpu")
    monkeypatch.setattr(dev.backend, "limits", Limits(max_storage_buffers_per_stage=3))  # x, y, error word
    xh = np.random.default_rng(2).standard_normal(N).astype(np.float32)
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    x = dev.buffer(xh)
    y = dev.empty(N)
    node = mod.shift.prepare(dev).record(sch, "shift", x, y, 1, 2.0, 1, True, N).over_1d(N)
    _run(sch, [y])
    sch.wait_for_specialization(300)
    sch.set_node_param(node, "pos", 9)
    _run(sch, [y])
    sch.wait_for_specialization(300)
    got = _run(sch, [y])[0]
    (n,) = sch.specialization_report().nodes
    assert n.status == "active" and n.dynamic == ("pos",) and n.live == (), n
    assert sch._spec.live is None and sch.stats.live_uploads == 0
    assert_same(got, xh[(np.arange(N) + 9) % N] * np.float32(2.0) + np.float32(1.0))


def test_live_variants_assemble_with_ptxas(mod, ptxas, tmp_path):
    """The variant's PTX (its loads of the live words, f32 by its bits) is valid for ptxas."""
    ir = specialize(mod.shift.definition().ir, {"n": N}, {"x": ("len", N), "y": ("len", N)},
                    {"pos": 0, "s": 1, "k": 2, "on": 3}, live_scalars.WORDS)
    assert [p.name for p in ir.params][-1] == "live" and ir.params[-1].category == "read"
    text = emit_ptx(pipeline.lower(ir, "ptx", checks=True).kernel)
    assert "ld.global.nc.u32" in text or "ld.global.u32" in text
    assemble(ptxas, text, tmp_path)


def test_a_gone_schemes_block_serves_the_next_scheme(mod):
    """Schemes come and go: the device keeps one block per scheme alive at a time, not one
    per scheme ever made, and the next scheme's values are its own."""
    import gc
    dev = gi.Device("cpu")
    xh = np.random.default_rng(8).standard_normal(N).astype(np.float32)
    x = dev.buffer(xh)
    blocks = set()
    for pos in (3, 11, 29):
        sch = gi.Scheme(dev)
        sch.set_specialization(True)
        y = dev.empty(N)
        node = mod.window.prepare(dev).record(sch, "window", x, y, 0, N).over_1d(N)
        _run(sch, [y])
        sch.wait_for_specialization(300)
        sch.set_node_param(node, "pos", pos)
        _run(sch, [y])
        sch.wait_for_specialization(300)
        got = _run(sch, [y])[0]
        assert sch.specialization_report().nodes[0].live == ("pos",)
        want = sum(xh[(np.arange(N) + t) % N] for t in range(pos + 1))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        blocks.add(id(sch._spec.live.buffer._alloc))
        del sch, node
        gc.collect()
    assert len(blocks) == 1 and len(dev._live_blocks) == 1
