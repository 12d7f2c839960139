"""Specialization (runtime/specialization.py, ir/specialize.py): variants with scalars and
tensor shapes baked in give the universal program's bits on every backend, on fresh random
data with outputs poisoned before each run; set_node_param demotes; `#[fact]`."""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir import nodes as N
from goldy_import.ir.serialize import from_json, to_json
from goldy_import.ir.specialize import specialize
from oracle import POISON_F32, assert_same, backend_or_skip, device
from test_ptx import ptxas  # noqa: F401  (the fixture: required in CI, else skipped)

SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv(a: &[f32], x: &[f32], y: &mut [f32], n: u32, d: u32, rows: u32) {
    let row = gpu::global_id().x;
    if row < rows {
        let mut acc = 0.0;
        for j in 0..n {
            acc += a[row * n + j] * x[j];
        }
        y[row] = acc + ((row / d) as f32) - ((row % d) as f32);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn opswitch(x: &[f32], y: &mut [f32], op: u32, s: f32, k: i32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        let v = x[i];
        let q = ((i as i32) - 50) / k + ((i as i32) - 50) % k;
        if op == 0 {
            y[i] = v * s + (q as f32);
        } else if op == 1 {
            y[i] = v / s;
        } else if op == 2 {
            y[i] = v.max(s) - (q as f32);
        } else {
            y[i] = v - s * v;
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rowsum(t: gpu::Tensor<f32>, out: &mut [f32]) {
    let r = gpu::global_id().x;
    if r < t.dim(0) {
        let mut acc = 0.0;
        for c in 0..t.dim(1) {
            acc += t[r * t.dim(1) + c];
        }
        out[r] = acc + (t.rank() as f32);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn faulty(x: &[f32], y: &mut [f32], #[fact] op: u32, d: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        if op == 1 {
            y[i] = x[i] * 2.0 + ((i / d) as f32);
        } else {
            y[i] = x[i];
        }
    }
}
"""

ROWS, N_COLS = 70, 37


@pytest.fixture(scope="module")
def ks():
    return gi.load_source(SRC, "spec.rs")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    monkeypatch.delenv("GOLDY_SPECIALIZE", raising=False)


def _bits(a: np.ndarray) -> np.ndarray:
    return a.view(np.uint32)


def _record_all(ks, dev, sch, rng):
    """One node of each kernel (every op code once) with random data; (outputs, nodes)."""
    a = dev.buffer(rng.standard_normal(ROWS * N_COLS).astype(np.float32))
    x = dev.buffer(rng.standard_normal(max(N_COLS, 100)).astype(np.float32))
    outs, nodes = [], []
    y = dev.empty(ROWS)
    nodes.append(ks.gemv.prepare(dev).record(sch, "gemv", a, x, y, N_COLS, 7, ROWS).over_1d(ROWS))
    outs.append(y)
    op = ks.opswitch.prepare(dev)
    for code, k in ((0, 3), (1, -4), (2, 5), (3, 1)):
        y = dev.empty(100)
        nodes.append(op.record(sch, f"op{code}", x, y, code, float(rng.uniform(0.5, 2.0)), k).over_1d(100))
        outs.append(y)
    t = dev.tensor(rng.standard_normal((9, 13)).astype(np.float32))
    y = dev.empty(9)
    nodes.append(ks.rowsum.prepare(dev).record(sch, "rowsum", t, y).over_1d(9))
    outs.append(y)
    return outs, nodes


def _run(sch, outs) -> list[np.ndarray]:
    for o in outs:
        o.write(np.full(len(o), POISON_F32, np.float32))
    sch.submit()
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_variants_are_bit_identical(ks, backend):
    backend_or_skip(backend)
    dev = device(backend)
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    outs, nodes = _record_all(ks, dev, sch, np.random.default_rng(17))
    universal = _run(sch, outs)
    assert sch.wait_for_specialization(300)
    special = _run(sch, outs)
    assert sch.stats.specializations == len(nodes), sch.specialization_report()
    assert all(n.status == "active" for n in sch.specialization_report().nodes)
    for u, s in zip(universal, special):
        assert not np.isnan(u).any()
        np.testing.assert_array_equal(_bits(u), _bits(s))
    if backend != "cpu":  # and the oracle's bits (same seed, same data)
        ref_dev = gi.Device("cpu")
        ref = gi.Scheme(ref_dev)
        ref.set_specialization(False)
        ref_outs, _ = _record_all(ks, ref_dev, ref, np.random.default_rng(17))
        for got, want in zip(special, _run(ref, ref_outs)):
            assert_same(got, want)


@pytest.mark.parametrize("backend", ["cpu", "wgpu"])
def test_set_node_param_demotes_at_once(ks, backend):
    backend_or_skip(backend)
    dev = device(backend)
    rng = np.random.default_rng(3)
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    outs, nodes = _record_all(ks, dev, sch, rng)
    _run(sch, outs)
    sch.wait_for_specialization(300)
    _run(sch, outs)
    assert sch.stats.specializations == len(nodes)
    sch.set_node_param(nodes[0], "d", 5)  # baked: demoted now
    sch.set_node_param(nodes[1], "op", 2)
    assert sch.stats.specialization_demotions == 2
    report = sch.specialization_report().nodes
    assert report[0].status != "active" and "d" in report[0].dynamic and "d" not in report[0].baked
    got = _run(sch, outs)  # this very submit runs the universal programs with the new values
    # the reference: a scheme recorded with those values, never specialized
    ref = gi.Scheme(dev)
    ref.set_specialization(False)
    ref_outs, ref_nodes = _record_all(ks, dev, ref, np.random.default_rng(3))
    ref.set_node_param(ref_nodes[0], "d", 5)
    ref.set_node_param(ref_nodes[1], "op", 2)
    want = _run(ref, ref_outs)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(_bits(g), _bits(w))
    # a later variant bakes the facts left; the changed scalars stay run-time values
    sch.wait_for_specialization(300)
    _run(sch, outs)
    sch.set_node_param(nodes[0], "d", 9)  # run-time in the new variant: copied over, no demotion
    assert sch.stats.specialization_demotions == 2
    ref.set_node_param(ref_nodes[0], "d", 9)
    for g, w in zip(_run(sch, outs), _run(ref, ref_outs)):
        np.testing.assert_array_equal(_bits(g), _bits(w))


def test_fact_is_imported_baked_by_default_and_refused_by_set_node_param(ks):
    k = ks.faulty.definition().ir
    assert [p.fact for p in k.params] == [False, False, True, False]
    assert from_json(to_json(k)) == k
    assert '"fact"' not in to_json(ks.gemv.definition().ir)  # the default is left out of the JSON
    dev = gi.Device("cpu")
    x = dev.buffer(np.random.default_rng(1).standard_normal(64).astype(np.float32))
    y = dev.empty(64)
    sch = gi.Scheme(dev)  # default mode: facts only
    node = ks.faulty.prepare(dev).record(sch, "f", x, y, 1, 3).over_1d(64)
    want = _run(sch, [y])[0]
    sch.wait_for_specialization(60)
    got = _run(sch, [y])[0]
    rep = sch.specialization_report()
    assert rep.mode == "facts" and rep.nodes[0].status == "active" and rep.nodes[0].baked == ("op",)
    np.testing.assert_array_equal(_bits(got), _bits(want))
    with pytest.raises(gi.BindingError, match=r"`op` is a `#\[fact\]`.*record the node again"):
        sch.set_node_param(node, "op", 0)
    sch.set_node_param(node, "d", 4)  # not a fact, not baked in this mode: no demotion
    assert sch.stats.specialization_demotions == 0
    np.testing.assert_array_equal(_run(sch, [y])[0], x.numpy() * 2 + (np.arange(64) // 4).astype(np.float32))
    off = gi.Scheme(dev)
    off.set_specialization(False)
    ks.faulty.prepare(dev).record(off, "f", x, y, 1, 3).over_1d(64)
    off.submit()
    off.submit()
    assert off.stats.specializations == 0 and off.stats.specialization_compiles == 0


def test_fact_on_a_buffer_is_a_diagnostic():
    src = "#[goldy::compute(workgroup_size = [64, 1, 1])]\nfn f(#[fact] x: &mut [f32]) { x[0] = 1.0; }\n"
    with pytest.raises(gi.DiagnosticError, match="G0002"):
        gi.load_source(src, "bad.rs")


def test_variant_cache_is_shared_by_schemes(ks):
    dev = gi.Device("cpu")
    rng = np.random.default_rng(5)
    first = gi.Scheme(dev)
    first.set_specialization(True)
    outs, _ = _record_all(ks, dev, first, rng)
    _run(first, outs)
    first.wait_for_specialization(60)
    compiled = first.stats.specialization_compiles
    assert compiled == 6
    again = gi.Scheme(dev)
    again.set_specialization(True)
    outs2, _ = _record_all(ks, dev, again, np.random.default_rng(5))
    got = _run(again, outs2)  # variants ready from the device's cache: the first submit uses them
    assert again.stats.specializations == 6 and again.stats.specialization_compiles == 0
    for g, w in zip(got, _run(first, outs)):
        np.testing.assert_array_equal(_bits(g), _bits(w))


def test_tensor_facts_are_baked(ks):
    k = ks.rowsum.definition().ir
    layout = (0, 2, 117, 9, 13, 1, 1, 13, 1, 0, 0, 1)
    v = specialize(k, {}, {"t": layout})
    exprs = [e for s in N.walk_stmts(v.body) for x in N.stmt_exprs(s) for e in N.walk_expr(x)]
    assert not any(isinstance(e, (N.TensorDim, N.TensorRank)) for e in exprs)
    loop = next(s for s in N.walk_stmts(v.body) if isinstance(s, N.For))
    assert isinstance(loop.end, N.Const) and loop.end.value == 13
    dev = gi.Device("cpu")
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    pk = ks.rowsum.prepare(dev)
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in ((9, 13), (9, 11))]
    outs = [dev.empty(9), dev.empty(9)]
    for arr, out in zip(arrays, outs):
        pk.record(sch, "rowsum", dev.tensor(arr), out).over_1d(9)
    want = _run(sch, outs)
    sch.wait_for_specialization(60)
    got = _run(sch, outs)
    assert sch.stats.specialization_compiles == 2  # two shapes, two variants
    for g, w, arr in zip(got, want, arrays):
        np.testing.assert_array_equal(_bits(g), _bits(w))
        np.testing.assert_allclose(g, arr.sum(axis=1) + 2, rtol=1e-5)


def test_specialize_folds_switches_loops_and_divisors_but_not_what_may_differ(ks):
    k = ks.opswitch.definition().ir
    v = specialize(k, {"op": 2, "k": 0, "s": 2.0})
    ifs = [s for s in N.walk_stmts(v.body) if isinstance(s, N.If)]
    assert len(ifs) == 1  # `i < y.len()` only: the op switch kept one arm
    exprs = [e for s in N.walk_stmts(v.body) for x in N.stmt_exprs(s) for e in N.walk_expr(x)]
    divs = [e for e in exprs if isinstance(e, N.Binary) and e.op in ("div", "rem")]
    assert divs and all(isinstance(e.rhs, N.Const) and e.rhs.value == 0 for e in divs)  # by zero: not folded
    v1 = specialize(k, {"op": 1, "s": 3.0})
    fdiv = [e for s in N.walk_stmts(v1.body) for x in N.stmt_exprs(s) for e in N.walk_expr(x)
            if isinstance(e, N.Binary) and e.op == "div" and e.ty == "f32"]
    assert fdiv  # f32 division stays a run-time operation
    assert k.params == v.params  # the variant binds the universal program's arguments
    gv = specialize(ks.gemv.definition().ir, {"n": 37, "d": 7})
    loop = next(s for s in N.walk_stmts(gv.body) if isinstance(s, N.For))
    assert isinstance(loop.end, N.Const) and loop.end.value == 37


def test_a_baked_zero_divisor_still_faults(ks):
    dev = gi.Device("cpu")
    x = dev.buffer(np.ones(64, np.float32))
    y = dev.empty(64)
    sch = gi.Scheme(dev)
    sch.set_specialization(True)
    ks.faulty.prepare(dev).record(sch, "f", x, y, 1, 0).over_1d(64)
    with pytest.raises(gi.KernelFault, match="division by zero"):
        sch.submit()
    sch.wait_for_specialization(60)
    with pytest.raises(gi.KernelFault, match="division by zero"):
        sch.submit()
    assert sch.stats.specializations == 1


FUSE_SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale(x: &[f32], t: &mut [f32], n: u32, s: f32, #[fact] op: u32) {
    let i = gpu::global_id().x;
    if i < n {
        if op == 0 { t[i] = x[i] * s; } else { t[i] = x[i] - s; }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mix(t: &[f32], u: &mut [f32], n: u32, d: u32) {
    let i = gpu::global_id().x;
    if i < t.len() && i < n { u[i] = t[i] + ((i / d) as f32) - ((i % d) as f32); }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn clampk(u: &[f32], y: &mut [f32], n: u32, l: f32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = u[i].clamp(-l, l); }
}
"""

N_FUSE = 200  # not a multiple of the workgroup size: the guards matter


@pytest.fixture(scope="module")
def fm():
    return gi.load_source(FUSE_SRC, "specfuse.rs")


def _record_chain(fm, dev, sch, seed: int):
    """scale -> mix -> clampk through two temporaries, random data and scalars; (y, nodes)."""
    rng = np.random.default_rng(seed)
    n = N_FUSE
    x = dev.buffer(rng.standard_normal(n).astype(np.float32) * 3)
    y = dev.empty(n)
    t, u = sch.temporary_buffer(n), sch.temporary_buffer(n)
    nodes = [fm.scale.prepare(dev).record(sch, "scale", x, t, n, float(rng.uniform(0.5, 2.0)), 0).over_1d(n),
             fm.mix.prepare(dev).record(sch, "mix", t, u, n, 7).over_1d(n),
             fm.clampk.prepare(dev).record(sch, "clamp", u, y, n, float(rng.uniform(1.0, 3.0))).over_1d(n)]
    return y, nodes


def _fused_scheme(fm, dev, seed: int, spec: bool = True):
    sch = gi.Scheme(dev)
    sch.set_automatic_fusion(True)
    if spec is not None:
        sch.set_specialization(spec)
    y, nodes = _record_chain(fm, dev, sch, seed)
    for _ in range(2):  # recorded nodes, then the fused region; each compiles in the background
        _run(sch, [y])
        assert sch.wait_for_fusion(300) and sch.wait_for_specialization(300)
    return sch, y, nodes


def _unfused(fm, dev, seed: int):
    ref = gi.Scheme(dev)
    ref.set_automatic_fusion(False)
    ref.set_specialization(False)
    y, nodes = _record_chain(fm, dev, ref, seed)
    return ref, y, nodes


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
@pytest.mark.parametrize("fused", [False, True])
def test_repeated_set_node_param_follows_every_switch(fm, backend, fused):
    """A set_node_param that changes only values replays what its last full run did
    (Scheme._setters); what it sets must reach whatever runs across the first submit's
    rebinding of temporaries, the fusion switch, the variants' compiles and a demotion."""
    backend_or_skip(backend)
    dev = device(backend)
    sch = gi.Scheme(dev)
    sch.set_automatic_fusion(fused)
    sch.set_specialization(True)
    y, nodes = _record_chain(fm, dev, sch, 21)
    ref, ref_y, ref_nodes = _unfused(fm, dev, 21)
    rng = np.random.default_rng(5)
    for step in range(8):
        for _ in range(2):  # twice between submits: the second call of each is a replay
            s, d, lim = float(rng.uniform(0.5, 2.0)), int(rng.integers(1, 9)), float(rng.uniform(1.0, 3.0))
            for sc, ns in ((sch, nodes), (ref, ref_nodes)):
                sc.set_node_param(ns[0], "s", s)
                if step >= 5:  # a scalar first changed after its variants were made: demoted once
                    sc.set_node_param(ns[1], "d", d)
                sc.set_node_param(ns[2], "l", lim)
        np.testing.assert_array_equal(_bits(_run(sch, [y])[0]), _bits(_run(ref, [ref_y])[0]), err_msg=f"step {step}")
        if step in (1, 2):  # the fused region, then its variant, switch in at the next submit
            assert sch.wait_for_fusion(300) and sch.wait_for_specialization(300)
    assert sch.stats.specializations >= 1 and sch.stats.specialization_demotions >= 1
    assert sch.stats.fusion_promotions == (1 if fused else 0)


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang", "cuda"])
def test_fused_regions_are_specialized_as_a_whole(fm, backend):
    backend_or_skip(backend)
    dev = device(backend)
    sch, y, _ = _fused_scheme(fm, dev, 11)
    got = _run(sch, [y])[0]
    assert sch.stats.fusion_promotions == 1 and sch.stats.region_specializations == 1, sch.specialization_report()
    rep = sch.specialization_report()
    (region,) = rep.regions
    assert region.nodes == (0, 1, 2) and region.status == "active", rep
    # every constituent scalar, and the elided temporaries' lengths the fused entry took instead
    assert {"n", "s", "op", "d", "l", "t_len", "u_len"} <= set(region.baked), rep
    assert [n.status for n in rep.nodes] == ["fused"] * 3
    assert "fused nodes 0..2" in str(rep) and "1 of 1 fused region(s)" in str(rep)
    assert sch.fusion_report().regions[0].elided == 2
    ref, ref_y, _ = _unfused(fm, dev, 11)
    want = _run(ref, [ref_y])[0]
    assert not np.isnan(want).any()
    np.testing.assert_array_equal(_bits(got), _bits(want))
    if backend != "cpu":  # and the oracle's bits
        cpu = gi.Device("cpu")
        oracle, oracle_y, _ = _unfused(fm, cpu, 11)
        assert_same(got, _run(oracle, [oracle_y])[0])


@pytest.mark.parametrize("backend", ["cpu", "wgpu"])
def test_a_constituents_baked_scalar_demotes_its_region_at_once(fm, backend):
    backend_or_skip(backend)
    dev = device(backend)
    sch, y, nodes = _fused_scheme(fm, dev, 4)
    _run(sch, [y])
    assert sch.stats.region_specializations == 1
    ref, ref_y, ref_nodes = _unfused(fm, dev, 4)
    sch.set_node_param(nodes[1], "d", 5)  # baked into the region's variant: demoted now
    ref.set_node_param(ref_nodes[1], "d", 5)
    assert sch.stats.specialization_demotions == 1
    (region,) = sch.specialization_report().regions
    assert region.status != "active" and "d" in region.dynamic and "d" not in region.baked
    np.testing.assert_array_equal(_bits(_run(sch, [y])[0]), _bits(_run(ref, [ref_y])[0]))  # this very submit
    # a later variant bakes the facts left; the changed scalar stays a run-time value, copied over
    assert sch.wait_for_specialization(300)
    _run(sch, [y])
    assert sch.specialization_report().regions[0].status == "active"
    assert sch.stats.region_specializations == 2
    sch.set_node_param(nodes[1], "d", 3)
    ref.set_node_param(ref_nodes[1], "d", 3)
    assert sch.stats.specialization_demotions == 1
    np.testing.assert_array_equal(_bits(_run(sch, [y])[0]), _bits(_run(ref, [ref_y])[0]))
    with pytest.raises(gi.BindingError, match=r"`op` is a `#\[fact\]`"):
        sch.set_node_param(nodes[0], "op", 1)


def test_by_default_a_fused_region_bakes_its_facts_only(fm):
    dev = gi.Device("cpu")
    sch, y, _ = _fused_scheme(fm, dev, 6, spec=None)  # $GOLDY_SPECIALIZE unset: facts only
    got = _run(sch, [y])[0]
    rep = sch.specialization_report()
    assert rep.mode == "facts" and rep.regions[0].status == "active" and rep.regions[0].baked == ("op",)
    ref, ref_y, _ = _unfused(fm, dev, 6)
    np.testing.assert_array_equal(_bits(got), _bits(_run(ref, [ref_y])[0]))
    off, off_y, _ = _fused_scheme(fm, dev, 6, spec=False)
    _run(off, [off_y])
    assert off.stats.region_specializations == 0 and off.specialization_report().regions[0].status == "universal"


def test_fused_variants_assemble_with_ptxas(fm, ptxas, tmp_path):
    from goldy_import.codegen.ptx import emit_ptx
    from goldy_import.ir import pipeline
    from test_ptx import assemble
    sch, _, _ = _fused_scheme(fm, gi.Device("cpu"), 2)
    (e,) = sch._fusion.active
    (_, scalars, _, _) = sch._spec.plans[(0, 1, 2)]
    v = specialize(e.kernel.kdef.ir, scalars)
    assert not {p.name for p in v.params} - {p.name for p in e.kernel.ir.params}  # same parameters
    text = emit_ptx(pipeline.lower(v, "ptx", checks=True).kernel)
    assert f"setp.lt.u32 %p0, %r" in text and f", {N_FUSE};" in text  # the guard against the baked n
    assemble(ptxas, text, tmp_path)


def test_variants_assemble_with_ptxas_and_divide_by_constants(ks, ptxas, tmp_path):
    from goldy_import.codegen.ptx import emit_ptx
    from goldy_import.ir import pipeline
    from test_ptx import assemble
    gv = specialize(ks.gemv.definition().ir, {"n": 37, "d": 7, "rows": 100})
    text = emit_ptx(pipeline.lower(gv, "ptx", checks=True).kernel)
    assert "div.u32" in text and ", 7;" in text  # u32 division by the baked constant itself
    assemble(ptxas, text, tmp_path)
    for op in range(4):
        v = specialize(ks.opswitch.definition().ir, {"op": op, "s": 1.5, "k": -3})
        assemble(ptxas, emit_ptx(pipeline.lower(v, "ptx", checks=True).kernel), tmp_path)
