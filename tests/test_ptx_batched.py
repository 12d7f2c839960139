"""The batched entry's contiguous layout and fast path (codegen/ptx/batched.py): which kernels
take it, what it emits (vector loads and stores, one rare-path branch per call for all
copies), and the oracle's bits in tests/ptx_sim.py with poisoned outputs: full threads,
a tail that is not a multiple of 4, buffers that are not 16-byte aligned (the general path),
the exp's rare inputs and div.rn's special cases."""

from __future__ import annotations

import os
import re
import struct
import sys

import numpy as np
import pytest

import oracle
import ptx_sim
from goldy_import.codegen.ptx import batch_entry, emit_ptx
from goldy_import.codegen.ptx.batched import plan
from goldy_import.ir.pipeline import lower

CHAIN = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn chain(x: &[f32], y: &mut [f32], n: u32, a: f32, b: f32) {
    let i = gpu::global_id().x;
    if i < n {
        let v = x[i] * a + b;
        let s = v / (1.0 + (-v).exp());
        y[i] = (s * v).clamp(-2.0, 2.0);
    }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn early(x: &[f32], y: &mut [f32], n: u32, flag: u32) {
    let i = gpu::global_id().x;
    if i >= n { return; }
    if flag > 0u32 { y[i] = x[i] * 2.0; } else { y[i] = x[i] + 1.0; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn after_store(x: &[f32], y: &mut [f32], z: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = x[i] + 1.0; z[i] = (-x[i]).exp(); }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn data_if(x: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < n {
        if x[i] > 0.0 { y[i] = x[i] * 3.0; } else { y[i] = -x[i]; }
    }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn ints(a: &[u32], b: &mut [i32], n: u32) {
    let i = gpu::global_id().x;
    if i < n { b[i] = ((a[i] * 3u32) ^ (a[i] >> 2u32)) as i32; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn shifted(x: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i + 1 < n { y[i] = x[i + 1]; }
}
"""


def u32(v: int) -> bytes:
    return struct.pack("<I", v)


def f32(v: float) -> bytes:
    return struct.pack("<f", v)


def inputs(n: int, seed: int) -> np.ndarray:
    """Normal values and the special ones: exp's rare inputs (|x| >= 86), NaN, infinities,
    zeros, subnormals (div.rn's slow path)."""
    x = (np.random.default_rng(seed).standard_normal(n) * 30).astype(np.float32)
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 90.0, -90.0, 200.0, -200.0, 0.4],
                       dtype=np.float32)
    x[5:5 + len(special)] = special
    return x


def same_bits(got: np.ndarray, want: np.ndarray) -> None:
    """The same bits, except that any NaN matches any NaN (docs/semantics.md: a NaN
    result's payload is not specified; the H200 gives its canonical NaN, ptx_sim numpy's)."""
    g, w = got.view(np.uint32), want.view(np.uint32)
    nan = np.isnan(got.view(np.float32)) & np.isnan(want.view(np.float32)) if got.dtype.kind == "f" else False
    bad = np.flatnonzero((g != w) & ~nan)
    assert not len(bad), f"{len(bad)} of {g.size} differ; first at {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}"


def chain_ptx(checks: bool = True):
    kernel = lower(oracle.kernel_ir(CHAIN, "chain"), "ptx", checks=checks).kernel
    return kernel, emit_ptx(kernel, batch=4)


def test_own_index_kernels_take_the_contiguous_layout_others_keep_theirs():
    kernel, ptx = chain_ptx()
    assert plan(kernel, 4) is not None
    body = ptx.split(f".entry {batch_entry(kernel, 4)}(")[1]
    fast = body[:re.search(r"\$L_general_\d+:", body).start()]
    fast = fast[fast.index("hardware thread in runs of"):]
    assert fast.count("ld.global.nc.v4.f32") == 1 and fast.count("st.global.v4.f32") == 1
    assert "ld.global.nc.f32" not in fast and "st.global.f32" not in fast
    # before any store, a copy's rare exp input sends the thread to the general path: no
    # rare-path code in the fast path, one branch (at the store) for every bail-out test
    assert "$L_rare" not in fast and "$L_skip" not in fast
    assert len(re.findall(r"bra \$L_general", fast)) == 2  # before the load, and after the exps
    after = lower(oracle.kernel_ir(CHAIN, "after_store"), "ptx", checks=True).kernel
    body = emit_ptx(after, batch=4).split(f".entry {batch_entry(after, 4)}(")[1]
    fast = body[body.index("hardware thread in runs of"):re.search(r"\$L_general_\d+:", body).start()]
    # after a store: the copies' exp rare paths share one branch, to a block after the `ret`
    assert len(re.findall(r"@%p\d+ bra \$L_rare", fast)) == 1
    assert fast.index("bra.uni $L_common") > fast.index("ret;")
    shifted = lower(oracle.kernel_ir(CHAIN, "shifted"), "ptx", checks=True).kernel
    assert plan(shifted, 4) is None
    assert "hardware thread in runs of" not in emit_ptx(shifted, batch=4)


@pytest.mark.parametrize("checks, batch", [(True, 4), (False, 4), (True, 8), (True, 2)])
@pytest.mark.parametrize("n, offset", [(4096, 0), (3109, 0), (3109, 1), (1030, 3)])
def test_batched_chain_gives_the_oracles_bits(checks, batch, n, offset, monkeypatch):
    """`offset` elements into their storage, the buffers are not 16-byte aligned (every
    thread takes the general path); n = 3109 leaves a thread with 1 live copy of 4."""
    kernel = lower(oracle.kernel_ir(CHAIN, "chain"), "ptx", checks=checks).kernel
    ptx = emit_ptx(kernel, batch=batch)
    x = inputs(n, n + offset)
    want = oracle.run_kernel("cpu", CHAIN, "chain", [x, np.zeros(n, np.float32), n, 1.25, -0.5], ("over_1d", n))[1]
    if offset:
        add = ptx_sim.Memory.add
        monkeypatch.setattr(ptx_sim.Memory, "add", lambda self, data: add(self, data) + 4 * offset)
    pad = lambda a: np.concatenate([np.zeros(offset, a.dtype), a, np.zeros(8, a.dtype)])  # noqa: E731
    poison = np.full(n, np.nan, np.float32).view(np.uint32)
    poison[:] = 0x7FBADBAD
    groups = -(-n // 256)
    scalars = {"p0_x_len": u32(n), "p1_y_len": u32(n), "p2_n": u32(n), "p3_a": f32(1.25), "p4_b": f32(-0.5),
               "p_groups_x": u32(groups)}
    got = ptx_sim.run(ptx, batch_entry(kernel, batch), [pad(x), pad(poison.view(np.float32))], scalars,
                      (-(-groups // batch), 1, 1), block=(256, 1, 1))[1]
    same_bits(got[offset:offset + n], want)
    assert (got[offset + n:].view(np.uint32) == 0).all()  # nothing past the end


def test_specialized_fused_chain_takes_the_vector_path_with_the_oracles_bits():
    """benchmarks/fusion.py's chain, automatically fused with its temporaries elided and
    specialized (n baked), over 2 full blocks of the batched entry and a tail."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import fusion as F
    import goldy_import as gi

    n = 2 * 1024 + 300
    dev = gi.Device("cpu")
    mod = gi.load_source(F.RUST, "fusion_bench.rs")
    x0 = inputs(n, 7)
    x, y = dev.buffer(x0), dev.empty(n)
    F.chain_schemes(dev, mod, x, y, n)  # the last, specialized scheme's run leaves y
    want = y.numpy()
    fused = [pk for pk in dev._variants.entries.values() if pk.kdef.name.startswith("fused_")]
    kernel = lower(fused[0].kdef.ir, "ptx", checks=True).kernel
    ptx = emit_ptx(kernel, batch=4)
    entry = batch_entry(kernel, 4)
    assert plan(kernel, 4) is not None and "ld.global.nc.v4.f32" in ptx.split(f".entry {entry}(")[1]
    names = re.findall(r"\.param \.(?:u32|f32|u64) (p\w+)", ptx.split(f".entry {entry}(")[1].split(")")[0])
    scalars = {}
    for p in kernel.params:  # the region's unbaked scalars: as the fused scheme binds them
        if p.category == "scalar":
            name = next(nm for nm in names if nm.endswith("_" + p.name))
            scalars[name] = f32({"a": F.A, "b": F.B, "l": F.L}[p.name]) if p.ty == "f32" else u32(n)
    groups = -(-n // 256)
    scalars["p_groups_x"] = u32(groups)
    poison = np.full(n, 0x7FBADBAD, np.uint32).view(np.float32)
    got = ptx_sim.run(ptx, entry, [x0, poison], scalars, (-(-groups // 4), 1, 1), block=(256, 1, 1))[1]
    same_bits(got, want)


@pytest.mark.parametrize("flag", [0, 1])
@pytest.mark.parametrize("n", [2048, 1030])
def test_early_return_and_a_uniform_if_else(flag, n):
    """`if i >= n { return; }` is expected false for every copy (threads past the end take
    the general path); a condition the same for every copy branches to either body."""
    kernel = lower(oracle.kernel_ir(CHAIN, "early"), "ptx", checks=True).kernel
    assert plan(kernel, 4) is not None
    ptx = emit_ptx(kernel, batch=4)
    x = inputs(n, n + flag)
    want = oracle.run_kernel("cpu", CHAIN, "early", [x, np.zeros(n, np.float32), n, flag], ("over_1d", n))[1]
    poison = np.full(n, 0x7FBADBAD, np.uint32).view(np.float32)
    groups = -(-n // 256)
    scalars = {"p2_n": u32(n), "p3_flag": u32(flag), "p_groups_x": u32(groups)}
    got = ptx_sim.run(ptx, batch_entry(kernel, 4), [x, poison], scalars, (-(-groups // 4), 1, 1),
                      block=(256, 1, 1))[1]
    same_bits(got, want)


@pytest.mark.parametrize("n", [2048, 1030])
def test_rare_paths_after_a_store_give_the_oracles_bits(n):
    kernel = lower(oracle.kernel_ir(CHAIN, "after_store"), "ptx", checks=True).kernel
    ptx = emit_ptx(kernel, batch=4)
    x = inputs(n, n)
    x[300:310] = [100.0, -100.0, np.nan, 87.0, -87.0, 0.0, 3.0, -3.0, 89.0, -104.0]  # a thread of 4 rare copies too
    zero = np.zeros(n, np.float32)
    want = oracle.run_kernel("cpu", CHAIN, "after_store", [x, zero, zero, n], ("over_1d", n))
    poison = np.full(n, 0x7FBADBAD, np.uint32).view(np.float32)
    groups = -(-n // 256)
    got = ptx_sim.run(ptx, batch_entry(kernel, 4), [x, poison.copy(), poison.copy()],
                      {"p3_n": u32(n), "p_groups_x": u32(groups)}, (-(-groups // 4), 1, 1), block=(256, 1, 1))
    same_bits(got[1], want[1])
    same_bits(got[2], want[2])


@pytest.mark.parametrize("name", ["data_if", "ints"])
@pytest.mark.parametrize("n", [2048, 1030])
def test_data_dependent_if_and_integer_buffers(name, n):
    """An `if` on loaded data: each copy under its condition, its loads vectors all the
    same; u32 and i32 buffers through .v4.u32."""
    kernel = lower(oracle.kernel_ir(CHAIN, name), "ptx", checks=True).kernel
    assert plan(kernel, 4) is not None
    ptx = emit_ptx(kernel, batch=4)
    assert ".v4." in ptx
    rng = np.random.default_rng(n)
    x = inputs(n, n) if name == "data_if" else rng.integers(0, 2**32, n, dtype=np.uint32)
    out = np.zeros(n, np.float32 if name == "data_if" else np.int32)
    want = oracle.run_kernel("cpu", CHAIN, name, [x, out, n], ("over_1d", n))[1]
    poison = np.full(n, 0x7FBADBAD, np.uint32).view(out.dtype)
    groups = -(-n // 256)
    got = ptx_sim.run(ptx, batch_entry(kernel, 4), [x, poison], {"p2_n": u32(n), "p_groups_x": u32(groups)},
                      (-(-groups // 4), 1, 1), block=(256, 1, 1))[1]
    same_bits(got.view(np.float32), want.view(np.float32))


# ---------------------------------------------------------------- on the GPU (skips without one)


@pytest.fixture
def cuda_batched():
    """The cuda device with every dispatch on the batched entry."""
    dev = oracle.device("cuda")
    saved, dev.backend.batch_min_threads = dev.backend.batch_min_threads, 0
    yield dev
    dev.backend.batch_min_threads = saved


@pytest.mark.parametrize("n", [1, 1030, 256 * 4 * 9 + 3, 1 << 20])
def test_cuda_batched_kernels_match_cpu(cuda_batched, n):
    x = inputs(n, n) if n > 20 else np.linspace(-100, 100, n).astype(np.float32)
    zero = np.zeros(n, np.float32)
    oracle.check_against_cpu("cuda", CHAIN, "chain", [x, zero, n, 1.25, -0.5], ("over_1d", n))
    oracle.check_against_cpu("cuda", CHAIN, "early", [x, zero, n - n // 3, 1], ("over_1d", n))
    oracle.check_against_cpu("cuda", CHAIN, "after_store", [x, zero, zero, n], ("over_1d", n))
    oracle.check_against_cpu("cuda", CHAIN, "data_if", [x, zero, n], ("over_1d", n))
    a = np.random.default_rng(n).integers(0, 2**32, n, dtype=np.uint32)
    oracle.check_against_cpu("cuda", CHAIN, "ints", [a, np.zeros(n, np.int32), n], ("over_1d", n))


@pytest.mark.parametrize("offset", [0, 1, 3])
def test_cuda_batched_views_not_16_byte_aligned(cuda_batched, offset):
    import goldy_import as gi
    n = 256 * 4 * 5 + 7
    x0 = inputs(n, offset)
    want = oracle.run_kernel("cpu", CHAIN, "chain", [x0, np.zeros(n, np.float32), n, 1.25, -0.5], ("over_1d", n))[1]
    dev = cuda_batched
    xs = dev.buffer(np.concatenate([np.zeros(offset, np.float32), x0]))
    ys = dev.buffer(np.full(n + offset, np.nan, np.float32))
    pk = gi.load_source(CHAIN, "t.rs").chain.prepare(dev)
    scheme = gi.Scheme(dev)
    pk.record(scheme, "chain", xs.view(offset, n), ys.view(offset, n), n, 1.25, -0.5).over_1d(n)
    scheme.submit()
    same_bits(ys.numpy()[offset:], want)


def test_cuda_specialized_fused_chain_matches_cpu(cuda_batched):
    """benchmarks/fusion.py's chain, fused, temporaries elided and specialized, as the
    H200 benchmark runs it (the batched entry), against the CPU backend's bits."""
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
    import fusion as F
    import goldy_import as gi

    n = 256 * 4 * 33 + 5
    x0 = inputs(n, 11)
    outs = []
    for dev in (gi.Device("cpu"), cuda_batched):
        mod = gi.load_source(F.RUST, "fusion_bench.rs")
        x, y = dev.buffer(x0), dev.buffer(np.full(n, np.nan, np.float32))
        F.chain_schemes(dev, mod, x, y, n)
        outs.append(y.numpy())
    same_bits(outs[1], outs[0])
