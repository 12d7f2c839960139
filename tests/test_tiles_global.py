"""codegen/ptx/tiles.py `global_group`: four statements reading x[i], x[i + 1], x[i + 2],
x[i + 3] of a buffer into locals are one `ld.global.v4` where, at run time, i < len - 3
and the address is 16-byte aligned, and otherwise run one by one with the scalar code's
range tests and trapping checks. In the PTX interpreter (tests/ptx_sim.py, which refuses a
misaligned vector access), bit for bit against the same PTX emitted without the groups:
the same values, and an out-of-range access records the same fault (site, index, length)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import oracle
import ptx_sim
from goldy_import.codegen.ptx import emit_ptx, tiles
from goldy_import.ir.abi import ERROR_WORD
from goldy_import.ir.pipeline import lower

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn quads(x: &[f32], y: gpu::Scattered<f32>, s: u32) {
    let g = gpu::global_id().x;
    let i = g * 4 + s;
    let mut v0 = 0.0;
    let mut v1 = 0.0;
    let mut v2 = 0.0;
    let mut v3 = 0.0;
    if g < 32 {
        v0 = x[i];
        v1 = x[i + 1];
        v2 = x[i + 2];
        v3 = x[i + 3];
    }
    let w0 = x[g];
    let w1 = x[g + 1];
    let w2 = x[g + 2];
    let w3 = x[g + 3];
    y[g] = v0 + 2.0 * v1 + 4.0 * v2 + 8.0 * v3 + w0 * w1 - w2 * w3;
}
"""


def ptx(checks: bool, groups: bool = True, monkeypatch=None) -> str:
    k = lower(oracle.kernel_ir(SRC, "quads"), "ptx", checks=checks).kernel
    if groups:
        return emit_ptx(k)
    monkeypatch.setattr(tiles, "global_group", lambda em, stmts, i: 0)
    try:
        return emit_ptx(k)
    finally:
        monkeypatch.undo()


def run(text: str, n: int, s: int, faults: list, monkeypatch) -> tuple[np.ndarray, int]:
    """(y, how many threads loaded a vector)."""
    x = np.random.default_rng(n * 10 + s).standard_normal(n).astype(np.float32)
    y = np.full(32, np.nan, np.float32)  # poisoned
    vector = [0]
    memory = ptx_sim.Block.memory

    def counted(self, base, parts, a, m):
        if base == "ld" and "v4" in parts and parts[1] == "global":
            vector[0] += int(np.count_nonzero(m))
        return memory(self, base, parts, a, m)

    monkeypatch.setattr(ptx_sim.Block, "memory", counted)
    try:
        out = ptx_sim.run(text, "quads", [x, y], {"p2_s": struct.pack("<I", s)}, (1, 1, 1), faults=faults)[1]
    finally:
        monkeypatch.undo()
    return out, vector[0]


def test_groups_are_vector_loads():
    for checks in (True, False):
        assert ptx(checks).count("ld.global.nc.v4.f32") == 2, checks  # the assignments' group and the lets'


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("n, s", [(132, 0), (132, 4), (132, 1), (131, 0), (128, 1), (126, 0), (2, 0)])
def test_groups_give_the_scalar_values_and_faults(monkeypatch, checks, n, s):
    """s = 0, 4: aligned (x[g..g+3] is aligned in one thread of four: lanes diverge); s = 1:
    misaligned, one by one; n = 131: the last group ends at the last element; n = 128, 126, 2:
    a group runs past the end (checked: the fault of its first out-of-range access, e.g.
    x[i + 3] at 128 for n = 128, s = 1; a load there gives 0)."""
    got_f: list = []
    want_f: list = []
    got, vector = run(ptx(checks), n, s, got_f, monkeypatch)
    want, none = run(ptx(checks, groups=False, monkeypatch=monkeypatch), n, s, want_f, monkeypatch)
    # x[i..]: all 32 threads where aligned and in range; x[g..]: the 8 threads with g % 4 == 0
    assert none == 0 and vector == {(132, 0): 40, (132, 4): 40, (132, 1): 8, (131, 0): 40, (128, 1): 8,
                                    (126, 0): 39, (2, 0): 0}[(n, s)]
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32)), (n, s)
    assert got_f == want_f
    assert (got_f[0] is not None and any(got_f[0])) == (checks and (n, s) in ((128, 1), (126, 0), (2, 0)))
    if checks and (n, s) == (128, 1):
        word = got_f[0]
        assert (word[ERROR_WORD.index("index")], word[ERROR_WORD.index("length")]) == (128, 128)
