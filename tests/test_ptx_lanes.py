"""The PTX lanes entry (codegen/ptx/lanes.py): several lanes of a workgroup per hardware
thread for collective kernels. Its PTX runs here in tests/ptx_sim.py (a PTX interpreter,
no GPU) next to the plain entry, on fresh random data with NaN and infinities, and must
give the CPU oracle's bits; the same kernels run on the CUDA backend where there is one
(it launches the lanes entry for every dispatch of such a kernel)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

import oracle
import ptx_sim
from goldy_import.codegen.ptx import emit_ptx, entry_name, lanes_entry, lanes_in
from goldy_import.codegen.ptx.lanes import lanes_ok
from goldy_import.ir.pipeline import for_target
from test_collectives import REDUCE, SOFTMAX, reduce_inputs, reduce_model, seed
from test_ptx import assemble, good_kernels, ptxas  # noqa: F401  (the fixture)


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    g, w = got.reshape(-1).view(np.uint32), want.reshape(-1).view(np.uint32)
    bad = np.flatnonzero(g != w)
    assert not len(bad), (f"{what}: {len(bad)} of {g.size} differ; first at {bad[0]}: "
                          f"got {got.reshape(-1)[bad[0]]!r}, want {want.reshape(-1)[bad[0]]!r}")


def entries(kernel, lane_threads: int) -> tuple[str, list[str]]:
    ptx = emit_ptx(kernel, lane_threads=lane_threads)
    c = lanes_in(ptx, kernel)
    assert c == kernel.workgroup_size[0] // lane_threads, "the kernel should get a lanes entry"
    return ptx, [entry_name(kernel), lanes_entry(kernel, c)]


# ---------------------------------------------------------------- run in the PTX interpreter

@pytest.mark.parametrize("n,lane_threads,plain", [(32, 32, False), (64, 32, True), (256, 64, True),
                                                   (1024, 128, False), (1024, 256, False)])
def test_reductions_every_lane_bit_exact(n, lane_threads, plain):
    """f32/u32/i32 sums and maxima, NaN and infinities among the f32 lanes (reduce_inputs),
    every lane's result against the pairwise tree; the plain entry too where it is cheap.
    n = 32 with 32 threads: no lanes entry (one warp is the workgroup)."""
    src = REDUCE.format(n=n)
    k = oracle.kernel_ir(src, f"reduce_{n}")
    groups = 5
    s = seed()
    args = reduce_inputs(np.random.default_rng(s), n, groups)
    if n == lane_threads:
        assert lanes_in(emit_ptx(k, lane_threads=lane_threads), k) == 1
        return
    ptx, names = entries(k, lane_threads)
    for name in names if plain else names[1:]:
        got = ptx_sim.run(ptx, name, [a.copy() for a in args], {}, (groups, 1, 1))
        for ty, g, w in zip(("f32", "u32", "i32"), got[3:], reduce_model(args, n)):
            same_bits(g, w, f"{name} {ty} (seed {s})")


@pytest.mark.parametrize("n,lane_threads", [(64, 32), (256, 128), (1024, 128)])
def test_softmax_bit_exact_with_the_oracle(n, lane_threads):
    """Counts of zero, below, at and past the width (the lanes' later elements), multiples
    of it (the one-tile branch, ir/legalize.py) and not multiples of 32, with an infinity
    and a NaN: both entries give the CPU oracle's bits, and the slots past each row are
    left as they were."""
    src = SOFTMAX.format(n=n)
    name = f"softmax_{n}"
    k = oracle.kernel_ir(src, name)
    ptx, names = entries(k, lane_threads)
    s = seed()
    rng = np.random.default_rng(s)
    rows = 3
    for count in (0, 1, n // 2 + 3, n, 2 * n, 2 * n + 5) if n < 1024 else (n - 37, n):
        stride = count + 5
        x = (rng.standard_normal(rows * stride) * 4).astype(np.float32)
        x[stride + 1] = np.inf
        x[2 * stride + 2] = np.nan
        want = oracle.run_kernel("cpu", src, name, [x.copy(), stride, count], ("groups", (rows, 1, 1)))[0]
        for entry in names if n < 1024 else names[1:]:
            got = ptx_sim.run(ptx, entry, [x.copy()], {"p1_stride": u32(stride), "p2_count": u32(count)},
                              (rows, 1, 1))[0]
            same_bits(got, want, f"{entry} count={count} (seed {s})")


BLOCK_SUM = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn block_sum(x: &[f32], partial: &mut [f32], per_thread: u32) {
    let s = gpu::workgroup_array::<f32, 256>();
    let g = gpu::workgroup_id().x;
    let base = g * 256 * per_thread + gpu::local_id().x;
    let mut acc = 0.0;
    for j in 0..per_thread { acc += x[base + j * 256]; }
    let t = gpu::workgroup_sum::<256>(acc, s);
    if gpu::local_id().x == 0 { partial[g] = t; }
    gpu::workgroup_barrier();
    s[gpu::local_id().x] = acc;
    gpu::workgroup_barrier();
    if gpu::local_id().x < 255 { partial[4 + g * 256 + gpu::local_id().x] = s[gpu::local_id().x + 1]; }
}
"""


def test_loop_barriers_and_workgroup_memory():
    """A uniform loop of loads per lane (one loop for every copy), a collective, then a
    barrier and workgroup memory read across lanes (lane l reads what lane l + 1 wrote,
    which another copy of the same thread or another thread wrote)."""
    k = oracle.kernel_ir(BLOCK_SUM, "block_sum")
    ptx, names = entries(k, 64)
    s = seed()
    rng = np.random.default_rng(s)
    groups, per = 3, 5
    x = oracle.random_array(rng, "f32", groups * 256 * per)
    out = np.full(4 + groups * 256, np.float32(-7.5))
    want = oracle.run_kernel("cpu", BLOCK_SUM, "block_sum", [x, out.copy(), per], ("groups", (groups, 1, 1)))[1]
    for entry in names:
        got = ptx_sim.run(ptx, entry, [x.copy(), out.copy()], {"p2_per_thread": u32(per)}, (groups, 1, 1))[1]
        same_bits(got, want, f"{entry} (seed {s})")


# ---------------------------------------------------------------- which kernels qualify

def lowered(src: str, name: str):
    return for_target(oracle.kernel_ir(src, name), "ptx").kernel


def kernel_src(body: str, params: str = "x: &[f32], out: &mut [f32], n: u32", size: str = "[256, 1, 1]") -> str:
    return f"""
use goldy::gpu;
#[goldy::compute(workgroup_size = {size})]
fn k({params}) {{
    let s = gpu::workgroup_array::<f32, 256>();
    let i = gpu::global_id().x;
    {body}
}}
"""


@pytest.mark.parametrize("body,ok", [
    ("let t = gpu::workgroup_sum::<256>(x[i], s); out[i] = t;", True),
    ("let mut a = 0.0; for j in 0..n { a += x[i + j]; } let t = gpu::workgroup_max::<256>(a, s); out[i] = t;", True),
    # no collective: the plain entry is as good
    ("gpu::workgroup_barrier(); out[i] = x[i];", False),
    # a return (here a uniform one) before the collective
    ("if n > 3 { return; } let t = gpu::workgroup_sum::<256>(x[i], s); out[i] = t;", False),
    # a collective or a loop under a uniform `if`: one branch for every copy (lanes.branches)
    ("if n > 3 { let t = gpu::workgroup_sum::<256>(x[i], s); out[i] = t; }", True),
    ("let mut a = 0.0; if n > 3 { for j in 0..n { a += x[j]; } } let t = gpu::workgroup_sum::<256>(a, s); out[i] = t;",
     True),
    # ... but not inside a predicated one: some copies would skip it
    ("let mut a = 0.0; if x[i] > 0.0 { if n > 3 { for j in 0..n { a += x[j]; } } } "
     "let t = gpu::workgroup_sum::<256>(a, s); out[i] = t;", False),
    # a loop whose range varies between lanes
    ("let mut a = 0.0; for j in 0..i { a += x[j]; } let t = gpu::workgroup_sum::<256>(a, s); out[i] = t;", False),
    # a loop under an `if`: it would run where the `if` skips it
    ("let mut a = 0.0; if x[i] > 0.0 { for j in 0..n { a += x[j]; } } let t = gpu::workgroup_sum::<256>(a, s); out[i] = t;", False),
    # `while`
    ("let mut a = 0.0; let mut j = 0u32; while j < n { a += x[j]; j += 1u32; } let t = gpu::workgroup_sum::<256>(a, s); out[i] = t;", False),
])
def test_lanes_ok(body, ok):
    assert lanes_ok(lowered(kernel_src(body), "k"), 2) is ok


def test_lanes_ok_needs_threads_in_whole_warps():
    body = "let t = gpu::workgroup_sum::<256>(x[i], s); out[i] = t;"
    k = lowered(kernel_src(body), "k")
    assert lanes_ok(k, 8) and not lanes_ok(k, 16)  # 256 / 16 = 16 threads: not a warp


def test_lanes_entry_assembles_for_every_example(ptxas, tmp_path):
    """Every example that qualifies, at each lane count: ptxas, warnings as errors, no spills."""
    seen = 0
    for p in good_kernels():
        k = p.values[0]
        for threads in (32, 64, 128, 256):
            text = emit_ptx(k, lane_threads=threads)
            if lanes_in(text, k) == 1:
                continue
            seen += 1
            log = assemble(ptxas, text, tmp_path)
            assert "0 bytes spill stores, 0 bytes spill loads" in log and " bytes spill" not in log.replace(
                "0 bytes spill", ""), log
    assert seen >= 4


# ---------------------------------------------------------------- on the CUDA backend

@pytest.mark.parametrize("n", [64, 256, 1024])
def test_cuda_softmax_and_reductions_match_the_oracle(n, monkeypatch):
    """The CUDA backend launching the lanes entry (LANE_THREADS threads per block; here for
    every workgroup size and grid, LANES_FROM and lanes_min_threads lowered): the reductions and the softmax against the
    CPU oracle, bit for bit, outputs poisoned. Kernel names of their own: no compiled
    kernel of another test is reused."""
    oracle.backend_or_skip("cuda")
    from goldy_import.runtime import cuda
    monkeypatch.setattr(cuda, "LANES_FROM", 64)
    monkeypatch.setattr(oracle.device("cuda").backend, "lanes_min_threads", 0)
    reduce_src = REDUCE.format(n=n).replace(f"fn reduce_{n}", f"fn lanes_reduce_{n}")
    softmax_src = SOFTMAX.format(n=n).replace(f"fn softmax_{n}", f"fn lanes_softmax_{n}")
    k = oracle.kernel_ir(softmax_src, f"lanes_softmax_{n}")
    assert lanes_in(emit_ptx(k, lane_threads=cuda.LANE_THREADS), k) == max(1, n // cuda.LANE_THREADS)
    s = seed()
    rng = np.random.default_rng(s)
    groups = 7
    args = reduce_inputs(rng, n, groups)
    oracle.check_against_cpu("cuda", reduce_src, f"lanes_reduce_{n}", args, ("groups", (groups, 1, 1)))
    for count in (1, n - 5, n, 2 * n + 3):
        stride = count + 4
        x = (rng.standard_normal(groups * stride) * 4).astype(np.float32)
        x[1] = np.inf
        x[stride + 2] = np.nan
        oracle.check_against_cpu("cuda", softmax_src, f"lanes_softmax_{n}", [x, stride, count],
                                 ("groups", (groups, 1, 1)))


def _replace_last(text: str, old: str, new: str) -> str:
    i = text.rindex(old)
    return text[:i] + new + text[i + len(old):]


def test_the_interpreter_catches_wrong_lanes_shuffles_and_missing_barriers():
    """ptx_sim would fail these tests for the mistakes a lanes entry could make. Each
    mistake is made once, in one arm of the softmax (the one-tile copy comes first, the
    general one last), so each is run at a count of each arm: one of them must show it."""
    n = 256
    src = SOFTMAX.format(n=n)
    k = oracle.kernel_ir(src, f"softmax_{n}")
    ptx, (_, name) = entries(k, 64)
    x = (np.random.default_rng(seed()).standard_normal(3 * 300) * 4).astype(np.float32)
    want = {count: oracle.run_kernel("cpu", src, f"softmax_{n}", [x.copy(), 300, count], ("groups", (3, 1, 1)))[0]
            for count in (290, 256)}
    head, tail = ptx.split(".entry " + name)
    for wrong in (tail.replace(", 128;", ", 129;", 1),           # copy 2's lane
                  # the sum's last shuffle (a max's could still find the maximum by chance)
                  _replace_last(tail, ", 2, 31, 0xffffffff", ", 4, 31, 0xffffffff"),
                  tail.replace("bar.sync 0;", "", 2)):
        assert wrong != tail
        caught = []
        for count, w in want.items():
            try:
                got = ptx_sim.run(head + ".entry " + name + wrong, name, [x.copy()],
                                  {"p1_stride": u32(300), "p2_count": u32(count)}, (3, 1, 1))[0]
            except AssertionError:
                caught.append(count)
                continue
            if not np.array_equal(got.view(np.uint32), w.view(np.uint32)):
                caught.append(count)
        assert caught, "a mistake the interpreter did not show"