"""Programmatic dependent launch: every sm_90 PTX entry waits for its predecessor before
touching memory (codegen/ptx/pdl.py), and the CUDA backend links a replayed Scheme's
dispatches by programmatic graph edges (runtime/cuda_pdl.py), with the same results as
ordinary edges."""

from __future__ import annotations

import re

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.ptx import emit_ptx, pdl

from fake_cuda import fake  # noqa: F401  (a fixture)
from oracle import assert_same, backend_or_skip, device, kernel_ir

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rotate(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[(i + 7) % x.len()] * a + 1.0; }
}
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn row_norm(x: &mut [f32]) {
    let sc = gpu::workgroup_array::<f32, 256>();
    let i = gpu::global_id().x;
    let s = gpu::workgroup_sum(x[i], sc);
    x[i] = x[i] / (s + 1000.0);
}
"""
MEMORY = re.compile(r"^\s*(@%\w+\s+)?(ld|st|atom|red)\.(global|shared|param)")


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "pdl.rs")


def _entries(ptx: str) -> list[list[str]]:
    return [body.splitlines() for body in ptx.split(".entry ")[1:]]


def test_sm90_entries_wait_first_and_older_targets_carry_nothing(mod):
    k = kernel_ir(SRC, "rotate")
    ptx = emit_ptx(k, target="sm_90", batch=4, lane_threads=128)
    entries = _entries(ptx)
    assert len(entries) == 2  # the plain and the batched entry
    for lines in entries:
        first_memory = next(i for i, ln in enumerate(lines) if MEMORY.match(ln))
        assert [ln.strip() for ln in lines[:first_memory] if ln.strip().startswith("griddepcontrol")] == \
            [ln.strip() for ln in pdl.PROLOGUE]
    lanes = emit_ptx(kernel_ir(SRC, "row_norm"), target="sm_90", lane_threads=128)
    assert lanes.count(pdl.MARK) == len(_entries(lanes)) == 2  # the lanes entry too
    for target, version in (("sm_80", None), ("sm_90", "7.7")):
        assert pdl.MARK not in emit_ptx(k, target=target, ptx_version=version)
    assert pdl.supported(90, "7.8") and pdl.supported(100, "8.6") and not pdl.supported(89, "8.0")


def _chain(dev, mod, n=300, nodes=6):
    k = mod.rotate.prepare(dev)
    rng = np.random.default_rng(7)
    x0 = rng.standard_normal(n).astype(np.float32)
    a, b = dev.buffer(x0), dev.buffer(np.full(n, np.nan, np.float32))  # poisoned
    s = gi.Scheme(dev)
    for i in range(nodes):  # each node reads what the one before wrote, at other indices
        src, dst = (a, b) if i % 2 == 0 else (b, a)
        k.record(s, f"r{i}", src, dst, 0.5 + i).over_1d(n)
    return s, a, b, x0


def test_fake_a_replayed_scheme_is_linked_by_programmatic_edges(fake, mod, monkeypatch):
    drv, dev = fake
    s, *_ = _chain(dev, mod)
    s.submit()
    kinds = [kind for _, _, kind in drv.edges]
    assert kinds == ["programmatic"] * 5  # between each pair of the six nodes, in order
    monkeypatch.setenv("GOLDY_CUDA_PDL", "0")
    drv.edges.clear()
    other = gi.Device("cuda")  # (the fake driver again, read with the variable set)
    try:
        s2, *_ = _chain(other, mod)
        s2.submit()
        assert [kind for _, _, kind in drv.edges] == ["ordinary"] * 5
    finally:
        other.close()


def test_dependent_dispatches_see_their_predecessors_writes(mod):
    """40 nodes, each reading the previous one's output 7 elements over, replayed 5 times
    a round: a dispatch that ran ahead of its predecessor's writes would differ."""
    backend_or_skip("cuda")
    dev = device("cuda")
    s_cpu, a_cpu, b_cpu, _ = _chain(device("cpu"), mod, n=100_000, nodes=40)
    for _ in range(5):
        s_cpu.submit()
    for _ in range(3):
        s, a, b, _ = _chain(dev, mod, n=100_000, nodes=40)
        for _ in range(5):
            s.submit()
        assert_same(a.numpy(), a_cpu.numpy(), what="a after 5 replays")
        assert_same(b.numpy(), b_cpu.numpy(), what="b after 5 replays")
