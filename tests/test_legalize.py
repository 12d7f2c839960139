"""Legalisation (ir/legalize.py) for every target (ir/targets.py): the result verifies,
the input is left as it was, check sites are unchanged, lowering twice changes nothing,
what a target lacks is gone, and every lowered collective ends with a barrier. The
lowered tree run on the CPU backend gives the bits of the CPU's native tree (rt.reduce),
so keeping that native form is keeping the one order."""

from __future__ import annotations

import dataclasses
import glob
import os

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir import targets as TG
from goldy_import.codegen.cpu import emitter as CG
from goldy_import.importer import import_source
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.ir.legalize import legalize
from goldy_import.ir.pipeline import lower
from goldy_import.ir.serialize import to_json
from goldy_import.ir.targets import CPU, FEATURES, TARGETS, target
from goldy_import.ir.verify import verify

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

COLLECTIVES = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn both(xf: &[f32], xu: &[u32], xi: &[i32], rows: &mut [f32], out: &mut [f32], ou: &mut [u32], oi: &mut [i32],
        count: u32) {
    let sf = gpu::workgroup_array::<f32, 64>();
    let su = gpu::workgroup_array::<u32, 64>();
    let si = gpu::workgroup_array::<i32, 64>();
    let i = gpu::global_id().x;
    let g = gpu::workgroup_id().x;
    let fsum = gpu::workgroup_sum::<64>(xf[i], sf);
    let fmax = gpu::workgroup_max::<64>(xf[i], sf);
    let usum = gpu::workgroup_sum(xu[i], su);
    let imax = gpu::workgroup_max(xi[i], si);
    gpu::workgroup_softmax_in_place::<64>(rows, g * count, count, sf);
    out[2 * i] = fsum;
    out[2 * i + 1] = fmax;
    ou[i] = usum;
    oi[i] = imax;
}

/// Locals named like the lowered ones, a collective in a loop.
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn names(x: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 32>();
    let sum1_lane = gpu::global_id().x;
    let softmax2_lane = 3u32;
    for r in 0..n {
        let m = gpu::workgroup_max::<32>(x[sum1_lane], s);
        x[sum1_lane] = x[sum1_lane] - m + (softmax2_lane as f32);
        gpu::workgroup_softmax_in_place::<32>(x, r * 32, 32, s);
    }
}
"""


def kernels() -> list[N.Kernel]:
    out = list(import_source(COLLECTIVES, "collectives_test.rs").kernels)
    for path in sorted(glob.glob(os.path.join(REPO, "rust_examples", "*.rs"))) + \
            [os.path.join(REPO, "tests", "data", "kitchen_sink.rs")]:
        r = import_source(open(path).read(), os.path.relpath(path, REPO))
        assert not r.diagnostics, r.render()
        out += r.kernels
    return out


KERNELS = kernels()


def _has(k: N.Kernel, kind) -> bool:
    return any(isinstance(s, kind) for s in N.walk_stmts(k.body))


@pytest.mark.parametrize("tname", sorted(TARGETS))
@pytest.mark.parametrize("checked", [False, True])
def test_legalize_every_kernel(tname, checked):
    t = target(tname)
    for k in KERNELS:
        k = insert_checks(k) if checked else k
        before = to_json(k)
        out = legalize(k, t)
        assert to_json(k) == before, f"{k.name}: the input changed"
        verify(out)
        assert check_sites(out) == check_sites(k), k.name
        assert to_json(legalize(out, t)) == to_json(out), f"{k.name}: lowering twice changed it"
        assert not _has(out, N.Softmax) or t.has("softmax")
        assert not _has(out, N.Reduce) or t.has("reduce")
        if _has(k, N.Reduce) and t.has("reduce"):
            assert _has(out, N.Reduce)


def test_lowered_collectives_end_with_a_barrier():
    k = import_source(COLLECTIVES, "collectives_test.rs").kernels[0]
    for t in TARGETS.values():
        body = legalize(k, t).body
        stores = [j for j, s in enumerate(body) if isinstance(s, N.Store) and s.resource == "out"]
        before = body[stores[0] - 1]
        # the softmax (the last collective) ends with the barrier, then the user's stores
        assert isinstance(before, N.Barrier) or (t.has("softmax") and isinstance(before, N.Softmax)), t.name
        for j, s in enumerate(body):
            if isinstance(s, N.Assign) and isinstance(s.value, N.Load) and s.value.resource in ("sf", "su", "si"):
                assert isinstance(body[j + 1], N.Barrier), t.name  # `r = scratch[0]; barrier`


def test_lowered_nodes_add_no_check_sites_and_share_no_nodes():
    k = insert_checks(import_source(COLLECTIVES, "collectives_test.rs").kernels[1])
    out = legalize(k, TARGETS["wgsl"])
    seen: set[int] = set()
    for s in N.walk_stmts(out.body):
        for e in N.stmt_exprs(s):
            for x in N.walk_expr(e):
                assert id(x) not in seen, "one node in two places"
                seen.add(id(x))
    assert len(check_sites(out)) == len(check_sites(k))
    assert {n for n in out.locals} >= {"sum1_lane", "softmax2_lane"}  # the user's, kept


def test_multi_dimensional_workgroup_uses_the_linear_local_index():
    k = import_source(COLLECTIVES, "collectives_test.rs").kernels[0]
    k = dataclasses.replace(k, workgroup_size=(16, 2, 4))  # outside the dialect: 128 lanes, n = 64
    out = legalize(k, TARGETS["slang"])
    verify(out)
    lane = next(s for s in out.body if isinstance(s, N.Let) and s.name.endswith("_lane"))
    assert "local_id().y" in _text(lane.value) and "local_id().z" in _text(lane.value)
    guarded = [s for s in out.body if isinstance(s, N.If) and isinstance(s.then_body[0], N.Store)
               and s.then_body[0].resource == "sf"]
    assert guarded, "lanes past n must not write scratch"


def _text(e: N.Expr) -> str:
    from goldy_import.ir.pretty import format_expr
    return format_expr(e)


def test_targets():
    assert set(TARGETS) == {"cpu", "wgsl", "ptx", "slang"}
    for t in TARGETS.values():
        assert t.native <= set(FEATURES), t.name
    assert not TARGETS["wgsl"].has("reduce") and TARGETS["ptx"].has("reduce")
    with pytest.raises(KeyError):
        TARGETS["cpu"].has("no such feature")
    with pytest.raises(KeyError):
        target("metal")


# ---------------------------------------------------------------- lowered tree == native CPU tree


def _run(dev: gi.Device, args: list, groups: int) -> list[np.ndarray]:
    kdef = gi.load_source(COLLECTIVES, "collectives_test.rs").both
    kdef = kdef.definition() if hasattr(kdef, "definition") else kdef
    bufs = [dev.buffer(a) if isinstance(a, np.ndarray) else a for a in args]
    scheme = gi.Scheme(dev)
    kdef.prepare(dev).record(scheme, "both", *bufs).groups((groups, 1, 1))
    scheme.submit()
    return [b.numpy() for b in bufs if not isinstance(b, int)]


def test_lowered_tree_gives_the_native_cpu_bits(monkeypatch):
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    groups, n, count = 7, 64, 150  # softmax rows past N: the strided lanes
    total = groups * n
    xf = (rng.standard_normal(total) * 10.0 ** rng.uniform(-3, 3, total)).astype(np.float32)
    xf[rng.choice(total, 5, replace=False)] = np.nan
    args = [xf, rng.integers(0, 2**32, total, dtype=np.uint64).astype(np.uint32),
            rng.integers(-2**31, 2**31, total, dtype=np.int64).astype(np.int32),
            (rng.standard_normal(groups * count) * 4).astype(np.float32),
            np.zeros(2 * total, np.float32), np.zeros(total, np.uint32), np.zeros(total, np.int32), count]
    native = _run(gi.Device("cpu"), [a.copy() if isinstance(a, np.ndarray) else a for a in args], groups)
    k = import_source(COLLECTIVES, "collectives_test.rs").kernels[0]
    assert "rt.reduce(" in CG.emit_cpu(k)
    monkeypatch.setitem(TG.TARGETS, "cpu", dataclasses.replace(CPU, native=CPU.native - {"reduce"}))
    assert "rt.reduce(" not in CG.emit_cpu(k)
    lowered = _run(gi.Device("cpu"), args, groups)
    for a, b in zip(native, lowered):
        assert a.tobytes() == b.tobytes()
    assert not np.isnan(native[3]).any()  # the softmax rows were computed


# ---------------------------------------------------------------- softmax's one-tile branch (PTX)

ONE_TILE = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rows(x: &mut [f32], count: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    gpu::workgroup_softmax_in_place::<64>(x, gpu::workgroup_id().x * count, count, s);
}

/// a count that lanes may disagree on: no branch around the barriers
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn ragged(x: &mut [f32], count: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    gpu::workgroup_softmax_in_place::<64>(x, 0, count + gpu::local_id().x % 2, s);
}
"""


def _one_tile_ifs(k: N.Kernel) -> int:
    return sum(1 for s in N.walk_stmts(k.body) if isinstance(s, N.If) and isinstance(s.cond, N.Var)
               and "one_tile" in s.cond.name)


def test_only_ptx_branches_to_the_one_tile_softmax_and_only_on_a_uniform_count():
    rows, ragged = import_source(ONE_TILE, "one_tile.rs").kernels
    assert [t for t in sorted(TARGETS) if target(t).softmax_one_tile] == ["ptx"]
    for checks in (False, True):
        for tname in TARGETS:
            assert _one_tile_ifs(lower(rows, tname, checks=checks).kernel) == (tname == "ptx"), (tname, checks)
        assert _one_tile_ifs(lower(ragged, "ptx", checks=checks).kernel) == 0


def test_the_one_tile_softmax_gives_the_general_bits_and_faults(monkeypatch):
    """The branch run on the cpu backend (a target that asks for it here): at count == N
    and around it, the same bits as the general form, and the same first fault."""
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))

    def run(count: int, groups: int, length: int):
        dev = gi.Device("cpu")
        x = (rng.standard_normal(length) * 4).astype(np.float32)
        x[rng.integers(0, length)] = np.inf
        outs = []
        for one_tile in (False, True):
            monkeypatch.setitem(TG.TARGETS, "cpu", dataclasses.replace(CPU, softmax_one_tile=one_tile))
            k = import_source(ONE_TILE, "one_tile.rs").kernels[0]
            assert _one_tile_ifs(lower(k, "cpu").kernel) == one_tile
            buf = dev.buffer(x.copy())
            # a file name of its own per form: compiled programs are cached by source and
            # target name, and the target's flag is not part of that key (it never changes
            # outside this test)
            kdef = gi.load_source(ONE_TILE, f"one_tile_{one_tile}.rs").rows
            scheme = gi.Scheme(dev)
            kdef.prepare(dev).record(scheme, "rows", buf, count).groups((groups, 1, 1))
            try:
                scheme.submit()
                outs.append(buf.numpy())
            except gi.KernelFault as e:
                outs.append(str(e).replace("one_tile_True", "one_tile_False"))
        return outs

    for count in (64, 63, 65, 128, 0, 1):
        a, b = run(count, 5, 5 * count + 3)
        assert a.tobytes() == b.tobytes(), count
    a, b = run(64, 5, 4 * 64 + 10)  # the last row runs past the buffer
    assert isinstance(a, str) and a == b, (a, b)
