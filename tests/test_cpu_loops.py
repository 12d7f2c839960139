"""The CPU backend's one-pass reduction loops (codegen/cpu/loops.py) against the SIMT loop
they replace: random kernels with reduction loops (tests/kernel_gen.py, `reductions`) run
both ways on fresh random data must give the same bits in every output."""

import random

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.cpu import emitter as E
from goldy_import.codegen.cpu.emitter import emit_cpu

import kernel_gen as G
from oracle import kernel_ir, run_kernel
from test_differential_fuzz import assert_bits, trapping_checks

GEMV = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 0.0;
        for j in 0..n {
            let wj = w[i * n + j];
            acc = acc + wj * x[j];
        }
        out[i] = acc;
    }
}
"""


def run(src: str, kernel: str, args, grid, one_pass: bool, monkeypatch):
    """One run on a fresh CPU device, the reduction fast path on or off."""
    with monkeypatch.context() as m:
        m.setattr(E._Emitter, "one_pass_loops", one_pass)
        m.setattr(E, "_CACHE", {})
        m.setattr("oracle._devices", {})
        return run_kernel("cpu", src, kernel, args, grid)


@pytest.mark.parametrize("block", [None, 1 << 10])  # one block of iterations; blocks of 8 iterations, of lanes
def test_gemv_loop_is_one_pass_and_exact(monkeypatch, block):
    assert "rt.accumulate(" in emit_cpu(kernel_ir(GEMV, "gemv"))
    if block:
        from goldy_import.codegen.cpu import loops
        monkeypatch.setattr(loops, "BLOCK_ELEMENTS", block)
        monkeypatch.setattr(loops, "LANE_TERMS", 1 << 12)
    r = np.random.default_rng(7)
    rows, n = 100, 300
    w = (r.standard_normal(rows * n) * 10).astype(np.float32)
    x = r.standard_normal(n).astype(np.float32)
    out = np.zeros(rows, np.float32)
    args = [w, x, out, rows, n]
    fast = run(GEMV, "gemv", args, ("over_1d", rows), True, monkeypatch)[2]
    plain = run(GEMV, "gemv", args, ("over_1d", rows), False, monkeypatch)[2]
    assert_bits(fast, plain, "gemv")
    want = np.zeros(rows, np.float32)  # sequential f32 sums, as Rust does them
    for j in range(n):
        want = want + w.reshape(rows, n)[:, j] * x[j]
    assert_bits(fast, want, "gemv vs numpy")


def test_one_pass_loops_match_the_simt_loop_on_random_kernels(monkeypatch):
    rng = random.Random(20261201)
    used = 0
    for case in range(50):
        gk = G.sample(rng, max_stmts=6, reductions=True)
        used += "rt.accumulate(" in emit_cpu(kernel_ir(gk.source, G.NAME))
        for n in (70,):
            args = gk.inputs(n, case)
            with trapping_checks(not gk.unchecked):
                fast = run(gk.source, G.NAME, args, ("over_1d", n), True, monkeypatch)
                plain = run(gk.source, G.NAME, args, ("over_1d", n), False, monkeypatch)
            for name, f, p in zip(G.PARAMS, fast, plain):
                if p is not None:
                    assert_bits(f, p, f"{name}, case {case}, n={n}\n{gk.source}")
    assert used >= 10, f"only {used} of 50 kernels took the one-pass path"


def test_a_failed_check_in_a_one_pass_loop_reports_what_the_simt_loop_does(monkeypatch):
    r = np.random.default_rng(8)
    rows, n = 70, 50
    w = r.standard_normal(rows * n - 75).astype(np.float32)  # the last rows run past the end
    args = [w, r.standard_normal(n).astype(np.float32), np.zeros(rows, np.float32), rows, n]
    faults = []
    for one_pass in (True, False):
        with pytest.raises(gi.KernelFault) as e:
            run(GEMV, "gemv", args, ("over_1d", rows), one_pass, monkeypatch)
        faults.append(str(e.value))
    assert faults[0] == faults[1] and "`w`" in faults[0]


# The fast GEMV path (rt.span views, rt.accumulate's lane blocks): every shape of its
# operands against the SIMT loop, bit for bit, with specials in the data, lanes whose rows
# run past the end, u32 indices that wrap, and small blocks so that every block path runs.
SPANS = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [WG, 1, 1])]
fn spans(w: &[f32], x: &[f32], b: &[f32], out: gpu::Scattered<f32>, rows: u32, n: u32, off: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = b[i];
        let mut lone = 0.0;
        let mut diff = -0.0;
        for j in 0..n {
            acc = acc + w[off + i * n + j] * x[j];
            lone = lone + w[i * n + j];
            diff = diff + (x[j] - w[j + i * n]);
        }
        let mut inc = 1.5;
        for t in 1..=n {
            inc = inc + w[i * n + t] * 0.5;
        }
        out[i] = acc;
        out[rows + i] = lone;
        out[2 * rows + i] = diff;
        out[3 * rows + i] = inc;
    }
}
"""


def specials(r, size: int) -> np.ndarray:
    """Random f32 with a sprinkling of NaN, infinities, signed zeros and subnormals."""
    v = (r.standard_normal(size) * 10.0 ** r.integers(-3, 4, size)).astype(np.float32)
    pick = r.random(size)
    v[pick < 0.02] = np.nan
    v[(pick >= 0.02) & (pick < 0.03)] = np.inf
    v[(pick >= 0.03) & (pick < 0.04)] = -np.inf
    v[(pick >= 0.04) & (pick < 0.06)] = -0.0
    v[(pick >= 0.06) & (pick < 0.08)] = np.float32(1e-40)
    return v


def spans_both_ways(monkeypatch, wg: int, rows: int, n: int, w_len: int, off: int = 0, checks: bool = True,
                    data_seed: int = 9):
    """(one-pass, SIMT) results of SPANS: outputs, or the fault message."""
    r = np.random.default_rng(data_seed)
    src = SPANS.replace("WG", str(wg))
    assert "rt.span(" in emit_cpu(kernel_ir(src, "spans")) and "rt.accumulate(" in emit_cpu(kernel_ir(src, "spans"))
    args = [specials(r, w_len), specials(r, n), specials(r, rows), np.zeros(4 * rows, np.float32), rows, n, off]
    got = []
    with trapping_checks(checks):
        for one_pass in (True, False):
            try:
                got.append(run(src, "spans", args, ("over_1d", rows), one_pass, monkeypatch)[3])
            except gi.KernelFault as e:
                got.append(str(e))
    return got


@pytest.mark.parametrize("blocks", ["default", "small"])
@pytest.mark.parametrize("wg,rows,n", [(64, 288, 40), (64, 256, 37), (1, 9, 33), (16, 70, 1), (64, 1, 50), (1, 1, 20)])
def test_span_loops_match_the_simt_loop(monkeypatch, blocks, wg, rows, n):
    from goldy_import.codegen.cpu import loops
    if blocks == "small":  # many blocks of lanes and iterations, a lone lane row merged
        monkeypatch.setattr(loops, "LANE_TERMS", 64)
        monkeypatch.setattr(loops, "MIN_BLOCK_LANES", 2)
        monkeypatch.setattr(loops, "LEAN_BLOCK_ELEMENTS", 300)
    fast, plain = spans_both_ways(monkeypatch, wg, rows, n, rows * n + 1)
    assert_bits(fast, plain, f"spans wg={wg} rows={rows} n={n} ({blocks} blocks)")


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("short,off", [(75, 0), (1, 0), (0, 7), (0, (1 << 32) - 3 * 40), (0, (1 << 32) - 5)])
def test_span_loops_past_the_end_fault_or_read_zero_as_the_simt_loop_does(monkeypatch, checks, short, off):
    """Rows running past the end of `w` (the last ones, or a straddling one), and `off`
    making the indices wrap around 2^32: the same fault report, or (checks off) the same
    zeros read, as the SIMT loop."""
    rows, n = 70, 40
    fast, plain = spans_both_ways(monkeypatch, 64, rows, n, rows * n + 1 - short, off, checks)
    if isinstance(plain, str):
        assert fast == plain and "`w`" in plain
    else:
        assert not isinstance(fast, str), fast
        assert_bits(fast, plain, f"spans short={short} off={off} checks={checks}")


def test_accumulate_without_an_in_order_reduce_gives_the_same_bits(monkeypatch):
    """A numpy whose np.add.reduce regrouped the adds (IN_ORDER false) takes the plain loop."""
    from goldy_import.codegen.cpu import loops
    want, _ = spans_both_ways(monkeypatch, 64, 100, 30, 3001)
    monkeypatch.setattr(loops, "IN_ORDER", False)
    got, plain = spans_both_ways(monkeypatch, 64, 100, 30, 3001)
    assert_bits(got, plain, "IN_ORDER off")
    assert_bits(got, want, "IN_ORDER off vs on")


def test_the_in_order_probe_tells_pairwise_from_sequential():
    """loops.IN_ORDER is True on this numpy, and its probe's terms do tell the orders apart."""
    from goldy_import.codegen.cpu import loops
    col = np.tile(np.float32([1.0, 2.0 ** 24, 1.0, -(2.0 ** 24)]), 10)
    assert loops.IN_ORDER
    assert np.add.reduce(col) != np.float32(0)  # pairwise (the contiguous axis)
    seq = np.float32(0)
    for t in col:
        seq = seq + t
    assert seq == 0
