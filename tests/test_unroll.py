"""Per-thread loops of loads unrolled (PTX, WGSL), their loads first (ir/unroll.py, issue 18).

The decode step's GEMV and attention loops run in the PTX interpreter (tests/ptx_sim.py)
through the unrolled trips and the remainder loop, bit for bit against the CPU oracle;
an out-of-bounds access in either part records the fault the CPU oracle reports (same
site, index and length); loops the rewrite must leave alone stay as they are; and where
ptxas and cuobjdump are installed, the GEMV's SASS issues a trip's 64 iterations' loads
(32 `ld.global.nc.v4`) before its first float operation."""

from __future__ import annotations

import os
import re
import struct
import subprocess

import numpy as np
import pytest

import goldy_import as gi
import oracle
import ptx_sim
from goldy_import.codegen.ptx import emit_ptx
from goldy_import.errors import KernelFault
from goldy_import.ir import nodes as N
from goldy_import.ir.abi import ERROR_WORD
from goldy_import.ir.pipeline import lower
from goldy_import.ir.unroll import trip_of, unroll_factor
from test_ptx import assemble, cuobjdump, ptxas  # noqa: F401  (the fixtures)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
DECODE = os.path.join(ROOT, "benchmarks", "llama_decode.rs")


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def f32(v: float) -> bytes:
    return struct.pack("<f", v)


def ptx_of(src: str, name: str, checks: bool = True) -> str:
    return emit_ptx(lower(oracle.kernel_ir(src, name), "ptx", checks=checks).kernel)


def whiles(k: N.Kernel) -> list[N.While]:
    return [s for s in N.walk_stmts(k.body) if isinstance(s, N.While)]


def same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    g, w = got.reshape(-1).view(np.uint32), want.reshape(-1).view(np.uint32)
    bad = np.flatnonzero(g != w)
    assert not len(bad), f"{what}: {len(bad)} of {g.size} differ; first at {bad[0]}"


def test_each_target_unrolls_by_its_factor_the_trip_loads_first():
    k = oracle.kernel_ir(DECODE, "matvec")
    for target in ("cpu", "slang"):
        assert not whiles(lower(k, target).kernel), target
    (w4,) = whiles(lower(k, "wgsl").kernel)  # Target.unroll = 4: trips of 4, then the plain loop
    assert [type(s).__name__ for s in w4.body] == ["Let"] * 8 + ["Assign"] * 5
    w, *ladder = whiles(lower(k, "ptx").kernel)  # trips of 64, then at most one of 32, 16, 8
    assert [t.body[-1].value.rhs.value for t in [w] + ladder] == [64, 32, 16, 8]
    kinds = [type(s).__name__ for s in w.body]
    # 64 iterations x (w, x) loads as lets, then the 64 sums in order, then the step
    assert kinds == ["Let"] * 128 + ["Assign"] * 64 + ["Assign"]
    assert all(isinstance(s.value, N.Load) for s in w.body[:128])
    assert [s.value.resource for s in w.body[:4]] == ["w", "x", "w", "x"]
    # each copy keeps its load's check site: the report names the same Rust access
    sites = {s.value.resource: s.value.check for s in w.body[:2]}
    assert all(s.value.check == sites[s.value.resource] for s in w.body[:128])
    # the emitter's reading (trip_of): one run of 64 consecutive elements per load site
    t = trip_of(lower(k, "ptx").kernel, w)
    assert t is not None and t.step == 64 and not t.others
    assert [(r.resource, len(r.lets)) for r in t.runs] == [("w", 64), ("x", 64)]


def test_a_workgroup_of_many_lanes_unrolls_less():
    """Registers bound a trip's loads: half a lane's share of 64K per workgroup."""
    src = open(DECODE).read().replace("workgroup_size = [64, 1, 1])]\nfn matvec(",
                                      "workgroup_size = [1024, 1, 1])]\nfn matvec(")
    w = whiles(lower(oracle.kernel_ir(src, "matvec"), "ptx").kernel)
    assert [t.body[-1].value.rhs.value for t in w] == [16, 8]


MATVEC_GRID = 70  # rows: a full and a partial workgroup of 64


@pytest.mark.parametrize("n", [0, 1, 15, 16, 17, 40, 77, 130, 288])
@pytest.mark.parametrize("checks", [True, False])
def test_matvec_unrolled_and_rest_bit_exact(n, checks):
    rng = np.random.default_rng(1000 + n)
    rows, off = MATVEC_GRID, 3
    w = rng.standard_normal(rows * n).astype(np.float32)
    x = rng.standard_normal(max(n, 1)).astype(np.float32)
    out = np.full(rows + off, np.float32(-7.5))
    want = oracle.run_kernel("cpu", DECODE, "matvec", [w, x, out.copy(), rows, n, off], ("over_1d", rows))[2]
    got = ptx_sim.run(ptx_of(DECODE, "matvec", checks), "matvec", [w, x, out.copy()],
                      {"p3_rows": u32(rows), "p4_n": u32(n), "p5_off": u32(off)}, ((rows + 63) // 64, 1, 1))[2]
    same_bits(got, want, f"matvec n={n} checks={checks}")


@pytest.mark.parametrize("n,vectors", [(16, 70 * 8), (17, 18 * 8), (26, 35 * 12), (72, 70 * 36)])
def test_vector_loads_where_aligned_and_one_by_one_elsewhere(n, vectors, monkeypatch):
    """A trip reads w's and x's runs with `ld.global.nc.v4` where both start 16-byte
    aligned and end in range: in rows starting at a multiple of 4 (n = 17: every fourth
    row, its trip of 16; n = 26: every other row, its trips of 16 and 8; n = 72: every
    row, 64 + 8); the other rows leave the long trips and load one by one in trips of 8."""
    ran = []
    memory = ptx_sim.Block.memory

    def count(self, base, parts, a, m):
        if base == "ld" and "v4" in parts:
            ran.append(int(m.sum()))
        return memory(self, base, parts, a, m)

    monkeypatch.setattr(ptx_sim.Block, "memory", count)
    rng = np.random.default_rng(n)
    rows = MATVEC_GRID
    w, x = rng.standard_normal(rows * n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(rows, np.float32(-7.5))
    want = oracle.run_kernel("cpu", DECODE, "matvec", [w, x, out.copy(), rows, n, 0], ("over_1d", rows))[2]
    got = ptx_sim.run(ptx_of(DECODE, "matvec"), "matvec", [w, x, out.copy()],
                      {"p3_rows": u32(rows), "p4_n": u32(n), "p5_off": u32(0)}, (2, 1, 1))[2]
    same_bits(got, want, f"matvec n={n}")
    assert sum(ran) == vectors


@pytest.mark.parametrize("pos", [0, 14, 15, 16, 17, 40, 63, 64, 100, 150])
def test_inclusive_loop_unrolled_and_rest_bit_exact(pos):
    """`mix`'s `for t in 0..=pos`: pos + 1 iterations, 64 per trip while 65 or more remain."""
    rng = np.random.default_rng(pos)
    dim, hs, seq, lbase = 16, 8, 160, 16 * 160
    att = rng.standard_normal(2 * seq).astype(np.float32)
    vc = rng.standard_normal(2 * seq * dim).astype(np.float32)
    out = np.full(dim, np.float32(-7.5))
    args = [att, vc, out.copy(), pos, dim, hs, seq, lbase]
    want = oracle.run_kernel("cpu", DECODE, "mix", args, ("over_1d", dim))[2]
    scalars = {"p3_pos": u32(pos), "p4_dim": u32(dim), "p5_head_size": u32(hs), "p6_seq": u32(seq),
               "p7_lbase": u32(lbase)}
    got = ptx_sim.run(ptx_of(DECODE, "mix"), "mix", [att, vc, out.copy()], scalars, (1, 1, 1))[2]
    same_bits(got, want, f"mix pos={pos}")


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
def test_other_backends_match_the_cpu_oracle(backend):
    """The rewrite is PTX's alone; the same kernels elsewhere keep the oracle's bits."""
    oracle.backend_or_skip(backend)
    rng = np.random.default_rng(7)
    for n in (17, 40):
        rows = MATVEC_GRID
        w, x = rng.standard_normal(rows * n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        oracle.check_against_cpu(backend, DECODE, "matvec", [w, x, np.zeros(rows, np.float32), rows, n, 0],
                                 ("over_1d", rows))
    att, vc = rng.standard_normal(96).astype(np.float32), rng.standard_normal(96 * 16).astype(np.float32)
    oracle.check_against_cpu(backend, DECODE, "mix", [att, vc, np.zeros(16, np.float32), 40, 16, 8, 48, 0],
                             ("over_1d", 16))


def _matvec_on(dev, w: np.ndarray, start: int, x: np.ndarray, rows: int, n: int) -> np.ndarray:
    """matvec over the slice w[start:] of a buffer (a base 4 * start bytes past the allocation's)."""
    kern = oracle._load(DECODE).matvec.prepare(dev)
    wb = dev.buffer(w)[start:]
    out = dev.buffer(np.full(rows, np.float32(-7.5)))
    s = gi.Scheme(dev)
    kern.record(s, "mv", wb, dev.buffer(x), out, rows, n, 0).over_1d(rows)
    s.submit()
    return out.numpy()


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
def test_sliced_buffers_match_the_cpu_oracle(backend):
    """Buffer slices move the base off 16-byte alignment: the vector loads' run-time test
    sends such rows one by one (on CUDA; elsewhere the loop is as written)."""
    oracle.backend_or_skip(backend)
    rng = np.random.default_rng(11)
    rows, n = 70, 40
    w, x = rng.standard_normal(rows * n + 3).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    for start in range(4):
        want = _matvec_on(oracle.device("cpu"), w, start, x, rows, n)
        same_bits(_matvec_on(oracle.device(backend), w, start, x, rows, n), want, f"{backend} slice at {start}")


@pytest.mark.parametrize("backend", ["wgpu", "slang", "cuda"])
def test_out_of_bounds_faults_as_on_the_cpu_oracle(backend):
    oracle.backend_or_skip(backend)
    rng = np.random.default_rng(12)
    rows = MATVEC_GRID
    for n in (32, 20):
        w, x = rng.standard_normal(rows * n - 3).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        got = []
        for b in ("cpu", backend):
            with pytest.raises(KernelFault) as e:
                oracle.run_kernel(b, DECODE, "matvec", [w, x, np.zeros(rows, np.float32), rows, n, 0],
                                  ("over_1d", rows))
            got.append((e.value.site.id, e.value.index, e.value.length, str(e.value).split(": ", 1)[1]))
        assert got[0] == got[1]


WRAP = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn tail(x: &[f32], out: &mut [f32], a: u32, b: u32) {
    let i = gpu::global_id().x;
    let mut acc = 0.0;
    for j in a..=b {
        acc = acc + x[(j - a) * 32 + i];
    }
    out[i] = acc;
}
"""


def test_inclusive_loop_up_to_u32_max_does_not_wrap():
    """`a..=u32::MAX`: the trips stop while U more iterations fit, the rest loop ends at
    the bound itself (a trip past it would wrap to 0 and run forever)."""
    a, b = 0xFFFFFFFF - 32, 0xFFFFFFFF  # 33 iterations: a trip of 32, one in the rest
    x = np.random.default_rng(5).standard_normal(33 * 32).astype(np.float32)
    out = np.full(32, np.float32(-7.5))
    want = oracle.run_kernel("cpu", WRAP, "tail", [x, out.copy(), a, b], ("over_1d", 32))[1]
    got = ptx_sim.run(ptx_of(WRAP, "tail"), "tail", [x, out.copy()], {"p2_a": u32(a), "p3_b": u32(b)},
                      (1, 1, 1))[1]
    same_bits(got, want, "tail")


@pytest.mark.parametrize("n", [32, 20])  # fails in the second unrolled trip / in the rest loop
def test_out_of_bounds_reports_the_cpu_oracles_fault(n):
    """`w` three elements short: the last row's load of `w[(rows - 1) * n + n - 3]` is the
    first failed access, on the CPU oracle and in the unrolled PTX alike."""
    rng = np.random.default_rng(n)
    rows = MATVEC_GRID
    w = rng.standard_normal(rows * n - 3).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.zeros(rows, np.float32)
    with pytest.raises(KernelFault) as e:
        oracle.run_kernel("cpu", DECODE, "matvec", [w, x, out, rows, n, 0], ("over_1d", rows))
    assert (e.value.index, e.value.length) == ((rows - 1) * n + n - 3, rows * n - 3)
    faults: list = []
    ptx_sim.run(ptx_of(DECODE, "matvec"), "matvec", [w, x, out.copy()],
                {"p3_rows": u32(rows), "p4_n": u32(n), "p5_off": u32(0)}, ((rows + 63) // 64, 1, 1), faults=faults)
    word = dict(zip((f for f, _ in ERROR_WORD.fields), faults[0]))
    assert (word["flag"], word["site"], word["index"], word["length"]) == (
        1, e.value.site.id, e.value.index, e.value.length)


LEFT_ALONE = {
    "store": "for j in 0..n { o[j] = x[j]; }",
    "break": "for j in 0..n { if x[j] > 0.0 { break; } acc = acc + x[j]; }",
    "lazy": "for j in 0..n { let c = j < 3 && x[j] > 0.0; if c { acc = acc + 1.0; } }",
    "select": "for j in 0..n { acc = acc + if j < 3 { x[j] } else { 0.0 }; }",
    "divide": "for j in 0..n { acc = acc + x[j] / ((j % m) as f32); }",
    "dependent": "for j in 0..n { let t = j * 2; acc = acc + x[t]; }",
    "gather": "for j in 0..n { acc = acc + x[idx[j]]; }",
    "signed": "for j in 0..(n as i32) { acc = acc + x[j as u32]; }",
    "no loads": "for j in 0..n { acc = acc + 1.0; }",
    "short": "for j in 0..3 { acc = acc + x[j]; }",
}


@pytest.mark.parametrize("case", sorted(LEFT_ALONE))
def test_loops_the_rewrite_leaves_alone(case):
    src = f"""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(x: &[f32], idx: &[u32], o: &mut [f32], n: u32, m: u32) {{
    let mut acc = 0.0;
    {LEFT_ALONE[case]}
    o[gpu::global_id().x] = acc;
}}
"""
    low = lower(oracle.kernel_ir(src, "k"), "ptx").kernel
    assert not whiles(low), case
    loops = [s for s in N.walk_stmts(low.body) if isinstance(s, N.For)]
    assert all(unroll_factor(s, 16) == 1 for s in loops)


def test_kernels_with_collectives_are_left_alone_on_ptx_only():
    """On PTX their `for` loops feed the lanes entry (codegen/ptx/lanes.py), which needs
    them (Target.unroll_sync); WGSL unrolls them."""
    from test_ptx_traps import LOOP
    low = lower(oracle.kernel_ir(LOOP, "block_sum"), "ptx").kernel
    assert not whiles(low) and any(isinstance(s, N.For) for s in N.walk_stmts(low.body))
    assert whiles(lower(oracle.kernel_ir(LOOP, "block_sum"), "wgsl").kernel)


def _sass_ops(cuobjdump: str, cubin: str) -> list[str]:
    sass = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True, text=True, check=True).stdout
    return [m.group(2) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9.]*)", sass)]


@pytest.mark.parametrize("checks", [True, False])
def test_gemv_sass_has_the_trips_loads_in_flight(checks, ptxas, cuobjdump, tmp_path):  # noqa: F811
    assemble(ptxas, ptx_of(DECODE, "matvec", checks), tmp_path)
    ops = _sass_ops(cuobjdump, str(tmp_path / "k.cubin"))
    first = next(i for i, op in enumerate(ops) if op.startswith(("FADD", "FMUL", "FFMA")))
    before = ops[:first]
    # 64 iterations x (w, x): 32 128-bit loads, all before the first use; no one-by-one
    # fallback in between (misaligned rows leave for the trips of 8)
    assert sum(op.startswith("LDG.E.128") for op in before) == 32
    assert sum(op.startswith("LDG") and ".128" not in op for op in before) == 0


RUNS = {  # body -> the load sites of a trip that are runs of consecutive elements
    "acc = acc + x[j] * x[n + j];": ["x", "x"],
    "acc = acc + x[j * 2];": [],  # a stride of two
    "acc = acc + x[n - j];": [],  # downwards
    "acc = acc + x[j + n / m];": [],  # the division's check would be skipped
    "acc = acc + x[j] * x[j + m];": ["x", "x"],
}


@pytest.mark.parametrize("body", sorted(RUNS))
def test_trip_runs_are_unit_stride_loads_free_of_checks(body):
    src = f"""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(x: &[f32], idx: &[u32], o: &mut [f32], n: u32, m: u32) {{
    let mut acc = 0.0;
    for j in 0..n {{ {body} }}
    o[gpu::global_id().x] = acc;
}}
"""
    low = lower(oracle.kernel_ir(src, "k"), "ptx").kernel
    t = trip_of(low, whiles(low)[0])
    assert t is not None and [r.resource for r in t.runs] == RUNS[body]
    assert len(t.others) + sum(len(r.lets) for r in t.runs) == len(t.loads)


@pytest.mark.parametrize("body", sorted(RUNS))
def test_trip_bodies_bit_exact_in_the_ptx_interpreter(body):
    src = f"""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(x: &[f32], idx: &[u32], o: &mut [f32], n: u32, m: u32) {{
    let mut acc = 0.0;
    for j in 0..n {{ {body} }}
    o[gpu::global_id().x] = acc;
}}
"""
    rng = np.random.default_rng(len(body))
    n, m = 77, 3
    x = rng.standard_normal(2 * n + n // m + 1).astype(np.float32)
    idx = rng.integers(0, 9, 2 * n).astype(np.uint32)
    o = np.full(64, np.float32(-7.5))
    want = oracle.run_kernel("cpu", src, "k", [x, idx, o.copy(), n, m], ("groups", (1, 1, 1)))[2]
    got = ptx_sim.run(ptx_of(src, "k"), "k", [x, idx, o.copy()], {"p3_n": u32(n), "p4_m": u32(m)}, (1, 1, 1))[2]
    same_bits(got, want, body)


HAND = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn hand(x: &[f32], o: &mut [f32], n: u32) {
    let mut acc = 0.0;
    let mut j = 0u32;
    while j < n && n - j >= 16u32 {
        let a0 = x[j]; let a1 = x[j + 1u32]; let a2 = x[j + 2u32]; let a3 = x[j + 3u32];
        let a4 = x[j + 4u32]; let a5 = x[j + 5u32]; let a6 = x[j + 6u32]; let a7 = x[j + 7u32];
        let a8 = x[j + 8u32]; let a9 = x[j + 9u32]; let a10 = x[j + 10u32]; let a11 = x[j + 11u32];
        let a12 = x[j + 12u32]; let a13 = x[j + 13u32]; let a14 = x[j + 14u32]; let a15 = x[j + 15u32];
        acc = acc + a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 + a14 + a15;
        j = j + 16u32;
    }
    o[gpu::global_id().x] = acc;
}
"""


@pytest.mark.parametrize("length", [48, 40])
def test_a_hand_written_trip_runs_all_its_iterations(length):
    """A loop of the trip's shape that the user wrote gets the vector loads too, but where
    they may not run (x shorter than the loop: its last trip fails the range test) it loads
    one by one (out of range: 0, checks off): no shorter trips follow it to run what it
    would leave."""
    lowered = lower(oracle.kernel_ir(HAND, "hand"), "ptx", checks=False).kernel
    t = trip_of(lowered, whiles(lowered)[0])
    assert t is not None and not t.followed and [r.resource for r in t.runs] == ["x"]
    x = np.random.default_rng(length).standard_normal(length).astype(np.float32)
    n = 48
    padded = np.concatenate([x, np.zeros(n - length, np.float32)])
    acc = np.float32(0)
    for v in padded:  # `acc + a0 + a1 + ...`: left to right, Rust's order
        acc = np.float32(acc + v)
    want = np.full(64, acc, np.float32)
    got = ptx_sim.run(emit_ptx(lowered), "hand", [x, np.full(64, np.float32(-7.5))], {"p2_n": u32(n)},
                      (1, 1, 1))[1]
    same_bits(got, want, f"hand length={length}")
