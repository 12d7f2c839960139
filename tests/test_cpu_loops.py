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
