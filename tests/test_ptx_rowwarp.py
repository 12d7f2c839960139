"""The row-warp entry (codegen/ptx/rowwarp.py): one warp per thread, the lanes splitting a
thread's sum loop and adding its terms in the loop's order. Run in tests/ptx_sim.py against
the CPU oracle bit for bit (ragged lengths, `..=`, strided loads, a grid smaller than the
rows), faults where an access is out of range exactly as the loop reports them, which
kernels qualify, and ptxas on the decode step's kernels (CUDA runs it on the H200)."""

from __future__ import annotations


import numpy as np
import pytest

import oracle
import ptx_sim
from goldy_import.codegen.ptx import emit_ptx, rowwarp_entry
from goldy_import.codegen.ptx import rowwarp
from goldy_import.ir.pipeline import lower
from test_ptx import assemble, ptxas  # noqa: F401  (ptxas: the fixture, required in CI, else skipped)
from test_unroll import DECODE, same_bits, u32


SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn dot_rows(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32, first: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 1.0;
        for j in first..n {
            acc = acc + w[i * n + j] * x[j] * 0.5;
        }
        out[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn count_up(v: &[u32], out: &mut [u32], n: u32) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let mut acc = i;
        for j in 0..=n {
            acc = acc + (v[j * 3 + i] ^ j);
        }
        out[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn exp_sum(w: &[f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let mut acc = 0.0;
        for j in 0..n {
            acc = acc + (w[i * n + j] * 0.25).exp() / (w[j] + 3.0);
        }
        out[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn no_split(w: &[f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let mut acc = 0.0;
        for j in 0..n {
            acc = acc * 0.5 + w[j];
        }
        out[i] = acc;
    }
}
"""


def ptx(src: str, name: str, checks: bool = True) -> str:
    return emit_ptx(lower(oracle.kernel_ir(src, name), "ptx", checks=checks).kernel, rowwarp=True)


SHUFFLES: list = []  # lanes that ran a `shfl.sync.idx` in the last run_rowwarp (the split path ran)


def run_rowwarp(src, name, buffers, scalars, threads, faults=None):
    """The row-warp entry over `threads` of the kernel's threads (workgroups of 64)."""
    groups = -(-threads // 64)
    per_block = rowwarp.ROWWARP_BLOCK // 32
    blocks = -(-groups * 64 // per_block)
    SHUFFLES.clear()
    shuffle = ptx_sim.Block.shuffle

    def counted(self, a, m, kind="down"):
        if kind == "idx":
            SHUFFLES.append(int(m.sum()))
        return shuffle(self, a, m, kind)
    ptx_sim.Block.shuffle = counted
    try:
        return ptx_sim.run(ptx(src, name), rowwarp_entry(oracle.kernel_ir(src, name)), buffers,
                           {**scalars, "p_groups_x": u32(groups)}, (blocks, 1, 1), faults=faults)
    finally:
        ptx_sim.Block.shuffle = shuffle


@pytest.mark.parametrize("rows,n,first,threads", [(5, 300, 0, 5), (9, 37, 3, 9), (3, 256, 0, 3), (4, 513, 200, 4),
                                                  (7, 2, 5, 7), (10, 64, 0, 6),
                                                  (2, 1100, 0, 2), (2, 700, 1, 2), (3, 129, 0, 3)])
def test_split_sum_has_the_loops_bits(rows, n, first, threads):
    """Trips of 512 and 128 terms, full and partial chunks, an empty range, and a grid of
    fewer threads than rows (the others keep their poison)."""
    rng = np.random.default_rng(rows * 1000 + n)
    w = (rng.standard_normal(rows * n) * 3).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(rows, np.float32(-7.5))
    want = oracle.run_kernel("cpu", SRC, "dot_rows", [w, x, out.copy(), rows, n, first], ("over_1d", threads))[2]
    got = run_rowwarp(SRC, "dot_rows", [w, x, out.copy()], {"p3_rows": u32(rows), "p4_n": u32(n),
                                                             "p5_first": u32(first)}, threads)[2]
    same_bits(got, want, f"dot_rows {rows}x{n} from {first}")
    assert bool(SHUFFLES) == (n > first)  # the split loop ran (an empty range adds nothing)


@pytest.mark.parametrize("n", [0, 30, 31, 255, 300])
def test_inclusive_strided_u32_sum(n):
    rng = np.random.default_rng(n)
    m = 40
    v = rng.integers(0, 2**32, size=3 * (n + 1) + m, dtype=np.uint32)
    out = np.full(m, 7, np.uint32)
    want = oracle.run_kernel("cpu", SRC, "count_up", [v, out.copy(), n], ("over_1d", m))[1]
    got = run_rowwarp(SRC, "count_up", [v, out.copy()], {"p2_n": u32(n)}, m)[1]
    assert np.array_equal(got, want)
    assert sum(SHUFFLES) == 32 * m * (n + 1)  # every term through the split path


def test_an_access_out_of_range_faults_as_the_loop_does():
    """Row 2 of 3 reads past w's end: the lanes run the loop as written, which reports the
    first access out of range (its index and w's length), as the oracle does."""
    rows, n = 3, 50
    rng = np.random.default_rng(1)
    w = rng.standard_normal(rows * n - 7).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    out = np.full(rows, np.float32(-7.5))
    words = []
    got = run_rowwarp(SRC, "dot_rows", [w, x, out.copy()], {"p3_rows": u32(rows), "p4_n": u32(n),
                                                             "p5_first": u32(0)}, rows, faults=words)[2]
    (word,) = words
    assert sum(SHUFFLES) == 32 * n * (rows - 1)  # rows 0 and 1 split (a 32-lane shuffle per term); row 2 as written
    assert word[0] == 1 and word[2] == rows * n - 7 and word[3] == rows * n - 7, word
    with pytest.raises(Exception) as e:  # the oracle faults at the same access
        oracle.run_kernel("cpu", SRC, "dot_rows", [w, x, out.copy(), rows, n, 0], ("over_1d", rows))
    assert str(rows * n - 7) in str(e.value)
    assert np.isfinite(got).all()  # every row still written, row 2 with 0 for its missing elements


def test_which_kernels_get_the_entry():
    k = oracle.kernel_ir
    assert rowwarp.qualifies(k(SRC, "dot_rows")) and rowwarp.qualifies(k(SRC, "count_up"))
    assert not rowwarp.qualifies(k(SRC, "no_split"))  # acc is scaled, not only added to
    for name, want in (("matvec", True), ("matvec_add", True), ("scores", True), ("mix", True),
                       ("rmsnorm", False), ("softmax_rows", False), ("swiglu", False), ("embed", False)):
        text = emit_ptx(lower(k(open(DECODE).read(), name), "ptx", checks=True).kernel, rowwarp=True)
        assert (f".entry {name}__rowwarp(" in text) == want, name


def test_decode_kernels_rowwarp_entries_assemble(ptxas, tmp_path):
    src = open(DECODE).read()
    for name in ("matvec", "matvec_add", "scores", "mix"):
        for checks in (True, False):
            assemble(ptxas, emit_ptx(lower(oracle.kernel_ir(src, name), "ptx", checks=checks).kernel, batch=8,
                                     rowwarp=True), tmp_path)


def test_decode_matvec_rowwarp_bits():
    src = open(DECODE).read()
    rows, n, off = 20, 288, 3
    rng = np.random.default_rng(9)
    w, x = rng.standard_normal(rows * n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    out = np.full(rows + off, np.float32(-7.5))
    want = oracle.run_kernel("cpu", src, "matvec", [w, x, out.copy(), rows, n, off], ("over_1d", rows))[2]
    got = run_rowwarp(src, "matvec", [w, x, out.copy()], {"p3_rows": u32(rows), "p4_n": u32(n),
                                                          "p5_off": u32(off)}, rows)[2]
    same_bits(got, want, "matvec rowwarp")
    assert SHUFFLES  # the split path ran


def test_a_term_with_exp_and_division_has_the_loops_bits():
    """The term's exp and division take their rare paths out of line in some lanes (large,
    tiny and special inputs): the lanes meet again at the shuffles, and the sum is the loop's."""
    rows, n = 6, 300
    rng = np.random.default_rng(4)
    w = (rng.standard_normal(rows * n) * 200).astype(np.float32)
    w[::7] = np.float32(1e-30)
    w[5::11] = np.float32(-2.9999998)
    out = np.full(rows, np.float32(-7.5))
    want = oracle.run_kernel("cpu", SRC, "exp_sum", [w, out.copy(), n], ("over_1d", rows))[1]
    got = run_rowwarp(SRC, "exp_sum", [w, out.copy()], {"p2_n": u32(n)}, rows)[1]
    same_bits(got, want, "exp_sum")


READBACK = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn two_sums(w: &[f32], x: &[f32], mid: &mut [f32], out: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let mut a = 0.0;
        for j in 0..n {
            a = a + w[i * n + j] * x[j];
        }
        mid[i] = a;
        let t = mid[i];
        let mut b = 0.0;
        for j in 0..n {
            b = b + w[i * n + j] * t;
        }
        out[i] = b;
    }
}
"""


def test_a_thread_reads_back_its_own_store_in_every_lane():
    """`mid[i]` stored, then read back into the second loop's term, which every lane
    computes: each lane stores it too and so reads back its own write, as the thread does.
    (Had lane 0 alone stored, the others would read another thread's write without a
    fence, which the hardware does not order; this simulator's memory is sequentially
    consistent, so what it checks here is the bits of both sums with every lane storing.)"""
    rows, n = 5, 100
    rng = np.random.default_rng(12)
    w = rng.standard_normal(rows * n).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)
    mid, out = np.full(rows, np.float32(-7.5)), np.full(rows, np.float32(-7.5))
    want = oracle.run_kernel("cpu", READBACK, "two_sums", [w, x, mid.copy(), out.copy(), n], ("over_1d", rows))
    got = run_rowwarp(READBACK, "two_sums", [w, x, mid.copy(), out.copy()], {"p4_n": u32(n)}, rows)
    assert sum(SHUFFLES) == 2 * 32 * n * rows  # both loops split
    same_bits(got[2], want[2], "mid")
    same_bits(got[3], want[3], "out")
