"""CUDA backend. Parameter packing, the ABI agreement with the emitted PTX and the
`__cuda_array_interface__` checks run anywhere; everything else needs a GPU and skips
cleanly without one (oracle.backend_or_skip)."""

from __future__ import annotations

import ctypes
import os
import re
import struct

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.ptx import batch_entry, batchable, emit_ptx
from goldy_import.errors import BackendError, BackendUnavailable, BindingError
from goldy_import.importer import import_file, import_source
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime import cuda as C
from goldy_import.runtime.backend import BufferArg, ImageArg, ScalarArg, TensorArg, UniformArg

from oracle import backend_or_skip, check_against_cpu, device, run_kernel

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCES = [os.path.join(ROOT, "rust_examples", f) for f in sorted(os.listdir(os.path.join(ROOT, "rust_examples")))
           if f.endswith(".rs")] + [os.path.join(ROOT, "tests", "data", "kitchen_sink.rs")]
PARAM_RE = re.compile(r"\.param (?:\.align \d+ )?\.(u64|u32|s32|f32|b8) (p(\d*)_\w+?)(?:\[(\d+)\])?[,\n]")


def fake_args(k: N.Kernel) -> list:
    mem = C.CudaMemory(0x7000_0000, 1 << 20, owned=False)
    out = []
    for p in k.params:
        if p.category in N.BUFFER_CATEGORIES:
            out.append(BufferArg(mem, 3, 10, p.ty, 16))
        elif p.category == "scalar":
            out.append(ScalarArg(p.ty, {"f32": 1.5, "u32": 7, "i32": -7, "bool": True}[p.ty]))
        elif p.category in N.TENSOR_CATEGORIES:
            out.append(TensorArg(mem, p.ty, tuple(range(12)), 99))
        elif p.category == "uniform":
            out.append(UniformArg(b"\0" * 16, p.ty))
        else:
            out.append(ImageArg(mem, 4, 5, p.ty))
    return out


def all_kernels():
    return [pytest.param(k, id=k.name) for path in SOURCES for k in import_file(path).kernels]


@pytest.mark.parametrize("checks", [False, True], ids=["unchecked", "checked"])
@pytest.mark.parametrize("kernel", all_kernels())
def test_packing_matches_the_ptx_params(kernel, checks):
    """pack_params covers the kernel's parameters; entry_values adds the error word's
    address (kernels with check sites only) and the batched entry's workgroup count."""
    if checks:
        kernel = insert_checks(kernel)
    args = fake_args(kernel)
    uptrs = {i: 0x5000 for i, a in enumerate(args) if isinstance(a, UniformArg)}
    values = C.pack_params(kernel, args, uptrs)
    text = emit_ptx(kernel, batch=4)
    decl = PARAM_RE.findall(text.split(f".entry {kernel.name}(")[1].split(")")[0])
    sizes = [int(n) if t == "b8" else (8 if t == "u64" else 4) for t, _name, _i, n in decl]
    has_sites = bool(check_sites(kernel))
    assert [len(v) for v in values] == sizes[:len(sizes) - has_sites]
    assert [d[1] for d in decl[len(values):]] == (["p_faults"] if has_sites else [])
    full = C.entry_values(kernel, args, uptrs, has_sites, 0xABCD_0000, 5)
    assert full[:len(values)] == values and full[-1] == struct.pack("<I", 5)
    assert [len(v) for v in full[:-1]] == sizes  # the plain entry: all but the workgroup count
    if has_sites:
        assert full[-2] == struct.pack("<Q", 0xABCD_0000)
    if batchable(kernel):
        bdecl = PARAM_RE.findall(text.split(f".entry {batch_entry(kernel, 4)}(")[1].split(")")[0])
        assert [len(v) for v in full] == [int(n) if t == "b8" else (8 if t == "u64" else 4) for t, _n, _i, n in bdecl]
        assert bdecl[-1][1] == "p_groups_x"
    slots = C.param_slots(kernel)
    for i, p in enumerate(kernel.params):  # each IR parameter starts at its slot
        assert decl[slots[i]][1].startswith(f"p{i}_{p.name}")


def test_pack_values_and_block():
    src = open(os.path.join(ROOT, "rust_examples", "saxpy.rs")).read()
    k = import_source(src, "saxpy.rs").kernels[0]
    mem = C.CudaMemory(0x10000, 4096, owned=False)
    args = [BufferArg(mem, 3, 100, "f32", 4), BufferArg(mem, 0, 7, "f32", 4), ScalarArg("f32", 2.5)]
    values = C.pack_params(k, args)
    assert values == [struct.pack("<Q", 0x10000 + 12), struct.pack("<I", 100), struct.pack("<Q", 0x10000),
                      struct.pack("<I", 7), struct.pack("<f", 2.5)]
    block = C.ParamBlock(values)
    assert all(o % (8 if len(v) == 8 else 4) == 0 for o, v in zip(block.offsets, values))
    for ptr, v in zip(block.pointers, values):  # the void** the driver reads
        assert ctypes.string_at(int(ptr), len(v)) == v
    block.set(C.param_slots(k)[2], struct.pack("<f", -1.0))  # what update_scalar does
    assert ctypes.string_at(int(block.pointers[4]), 4) == struct.pack("<f", -1.0)


def test_pack_scalars_and_layouts():
    k = import_source("""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn s(t: gpu::Tensor<f32>, o: &mut [f32], b: bool, i: i32, u: u32) {
    if b { o[0] = t[0] + (i as f32) + (u as f32); }
}
""", "s.rs").kernels[0]
    mem = C.CudaMemory(0x20000, 4096, owned=False)
    lay = (5, 2, 6, 2, 3, 1, 1, 3, 1, 0, 0, 1)
    v = C.pack_params(k, [TensorArg(mem, "f32", lay, 11), BufferArg(mem, 0, 1, "f32", 4),
                          ScalarArg("bool", True), ScalarArg("i32", -2), ScalarArg("u32", 2**32 - 1)])
    assert v[1] == struct.pack("<12I", *lay) and v[2] == struct.pack("<I", 11)
    assert v[5:] == [struct.pack("<I", 1), struct.pack("<i", -2), struct.pack("<I", 2**32 - 1)]


class FakeCAI:
    def __init__(self, **kw):
        base = {"shape": (4, 3), "typestr": "<f4", "data": (0x1234, False), "version": 3, "strides": None}
        base.update(kw)
        self.__cuda_array_interface__ = base


def test_cuda_array_interface_checks():
    ptr, n, elem, shape, _ = C.parse_cuda_array_interface(FakeCAI())
    assert (ptr, n, elem, shape) == (0x1234, 12, "f32", (4, 3))
    assert C.parse_cuda_array_interface(FakeCAI(strides=(12, 4), typestr="<i4"))[2] == "i32"
    with pytest.raises(BindingError, match="C-contiguous"):
        C.parse_cuda_array_interface(FakeCAI(strides=(4, 16)))
    with pytest.raises(BindingError, match="float32, uint32 or int32"):
        C.parse_cuda_array_interface(FakeCAI(typestr="<f8"))
    with pytest.raises(BindingError, match="read-only"):
        C.parse_cuda_array_interface(FakeCAI(data=(0x1234, True)))
    with pytest.raises(BindingError, match="needs u32"):
        C.parse_cuda_array_interface(FakeCAI(), elem="u32")
    with pytest.raises(BindingError):
        C.parse_cuda_array_interface(object())


def test_unavailable_is_a_clean_error():
    ok = C.available()
    assert isinstance(ok, bool)
    if not ok:
        with pytest.raises(BackendUnavailable):
            gi.Device("cuda")


# ---------------------------------------------------------------- on a GPU


@pytest.fixture(scope="module")
def dev():
    backend_or_skip("cuda")
    return device("cuda")


SEM = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn ints(a: &[i32], b: &[i32], u: &[u32], v: &[u32], oi: &mut [i32], ou: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= a.len() { return; }
    let k = i * 6;
    oi[k] = a[i] / b[i];
    oi[k + 1] = a[i] % b[i];
    oi[k + 2] = a[i] << (b[i] as u32);
    oi[k + 3] = a[i] >> u[i];
    oi[k + 4] = a[i].abs() + a[i].min(b[i]) - a[i].max(b[i]) * 3;
    oi[k + 5] = -a[i] * b[i] + (a[i] ^ b[i]) + a[i] / 7 + a[i] % -3;
    ou[k] = u[i] / v[i];
    ou[k + 1] = u[i] % v[i];
    ou[k + 2] = u[i] << v[i];
    ou[k + 3] = u[i] >> v[i];
    ou[k + 4] = u[i].min(v[i]) + u[i].max(v[i]) + !u[i];
    ou[k + 5] = (u[i] as i32 as u32) + ((a[i] < b[i]) as u32) + (u[i] >= v[i]) as u32;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn floats(x: &[f32], y: &[f32], out: &mut [f32], oi: &mut [i32], ou: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= x.len() { return; }
    let k = i * 10;
    out[k] = x[i] * y[i] + x[i];
    out[k + 1] = x[i].mul_add(y[i], 1.5);
    out[k + 2] = x[i] / y[i];
    out[k + 3] = x[i] % y[i];
    out[k + 4] = x[i].sqrt();
    out[k + 5] = x[i].round();
    out[k + 6] = x[i].min(y[i]) + x[i].max(y[i]);
    out[k + 7] = x[i].floor() + x[i].ceil() * 2.0 + x[i].trunc() * 4.0 - x[i].abs();
    out[k + 8] = x[i].clamp(-1.0, 1.0) + (if x[i] != y[i] { 1.0 } else { 0.0 });
    out[k + 9] = f32::from_bits(x[i].to_bits() ^ 0x80000000u32);
    oi[i] = x[i] as i32;
    ou[i] = y[i] as u32;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn loops(x: &[f32], lo: &[i32], hi: &[i32], out: &mut [f32], cnt: &mut [i32]) {
    let i = gpu::global_id().x;
    if i >= lo.len() { return; }
    let mut acc = 0.0;
    let mut c = 0;
    for j in lo[i]..hi[i] { acc += x[(j & 1023) as u32]; c += 1; }
    for k in lo[i]..=hi[i] { c += k; }
    for u in 0..(hi[i] as u32 % 9) { if u == 2 { c += 100; } acc = acc * 0.5 + x[u]; }
    out[i] = acc;
    cnt[i] = c;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn trans(x: &[f32], p: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i >= x.len() { return; }
    let k = i * 8;
    out[k] = x[i].sin();
    out[k + 1] = x[i].cos();
    out[k + 2] = x[i].tan();
    out[k + 3] = x[i].exp();
    out[k + 4] = x[i].exp2();
    out[k + 5] = p[i].ln();
    out[k + 6] = p[i].log2();
    out[k + 7] = p[i].powf(x[i] * 0.1);
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn sums_divergent(x: &[f32], iu: &[u32], out: &mut [f32], mx: &mut [f32], ou: &mut [u32], valid: u32) {
    let s = gpu::workgroup_array::<f32, 256>();
    let su = gpu::workgroup_array::<u32, 256>();
    let i = gpu::global_id().x;
    let g = gpu::workgroup_id().x;
    // whole workgroups leave, but only memory the kernel writes says so: not provably
    // thread-dependent (`i >= valid` would be G0042), so PTX takes the barrier.sync path
    if ou[g] == valid { return; }
    let t = gpu::workgroup_sum::<256>(x[i], s);
    let m = gpu::workgroup_max::<256>(x[i], s);
    let tu = gpu::workgroup_sum::<256>(iu[i], su);
    if gpu::local_id().x == 0 { out[g] = t; mx[g] = m; ou[g] = tu; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn sums_64(x: &[f32], out: &mut [f32], part: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let g = gpu::workgroup_id().x;
    let i = g * 64 + lid;
    let v = if i < x.len() { x[i] } else { 0.0 };
    let t = gpu::workgroup_sum::<64>(v, s);
    part[i] = s[lid];
    if lid == 0 { out[g] = t; }
}

#[goldy::compute(workgroup_size = [1024, 1, 1])]
fn sums_1024(x: &[f32], out: &mut [f32], part: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 1024>();
    let lid = gpu::local_id().x;
    let g = gpu::workgroup_id().x;
    let i = g * 1024 + lid;
    let m = gpu::workgroup_max::<1024>(x[i], s);
    let t = gpu::workgroup_sum::<1024>(x[i] - m, s);
    part[i] = s[lid];
    if lid == 0 { out[g] = t; }
}

#[goldy::compute(workgroup_size = [16, 1, 1])]
fn max_16(x: &[f32], out: &mut [f32], part: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 16>();
    let lid = gpu::local_id().x;
    let g = gpu::workgroup_id().x;
    let i = g * 16 + lid;
    let t = gpu::workgroup_max::<16>(x[i], s);
    part[i] = s[lid];
    if lid == 0 { out[g] = t; }
}
"""

SPECIAL_I = np.array([0, 1, -1, 7, -7, 31, 32, 33, -2**31, 2**31 - 1, 100, -100], dtype=np.int32)
SPECIAL_F = np.array([np.nan, np.inf, -np.inf, 0.5, -0.5, 1.5, 2.5, -2.5, 1e10, -1e10, 3e9, 5e9,
                      -3e9, 1.0, -1.0, 0.49999997, 2.0**24 + 2], dtype=np.float32)


def with_specials(rng, base: np.ndarray, specials: np.ndarray) -> np.ndarray:
    out = base.copy()
    idx = rng.choice(len(out), size=min(len(out), 4 * len(specials)), replace=False)
    out[idx] = np.resize(specials, len(idx))
    return out


def test_integer_semantics_bitwise(dev, monkeypatch):
    # division by zero is part of what is compared: without run-time checks it gives 0 on
    # both sides (with them, issue 9, the CPU oracle reports a fault instead)
    monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")
    rng = np.random.default_rng()
    n = 3000
    a = with_specials(rng, rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32), SPECIAL_I)
    b = with_specials(rng, rng.integers(-40, 40, n).astype(np.int32), SPECIAL_I)
    u = with_specials(rng, rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32), SPECIAL_I.view(np.uint32))
    v = with_specials(rng, rng.integers(0, 70, n).astype(np.uint32), SPECIAL_I.view(np.uint32))
    check_against_cpu("cuda", SEM, "ints", [a, b, u, v, np.zeros(6 * n, np.int32), np.zeros(6 * n, np.uint32)],
                      ("over_1d", n))


def test_float_semantics_bitwise(dev):
    rng = np.random.default_rng()
    n = 3000
    x = with_specials(rng, (rng.standard_normal(n) * 10).astype(np.float32), np.append(SPECIAL_F, 0.0))
    y = with_specials(rng, (rng.standard_normal(n) * 3).astype(np.float32), SPECIAL_F)
    check_against_cpu("cuda", SEM, "floats", [x, y, np.zeros(10 * n, np.float32), np.zeros(n, np.int32),
                                              np.zeros(n, np.uint32)], ("over_1d", n))


def test_loops_bitwise(dev):
    rng = np.random.default_rng()
    n = 2000
    x = rng.standard_normal(1024).astype(np.float32)
    lo, hi = rng.integers(-12, 12, n).astype(np.int32), rng.integers(-12, 12, n).astype(np.int32)
    xx = np.resize(x, n).astype(np.float32)
    xx[:1024] = x
    check_against_cpu("cuda", SEM, "loops", [xx, lo, hi, np.zeros(n, np.float32), np.zeros(n, np.int32)],
                      ("over_1d", n))


def test_transcendentals_within_tolerance(dev):
    rng = np.random.default_rng()
    n = 1 << 16
    x = rng.uniform(-80, 80, n).astype(np.float32)
    p = rng.uniform(1e-3, 100, n).astype(np.float32)
    check_against_cpu("cuda", SEM, "trans", [x, p, np.zeros(8 * n, np.float32)], ("over_1d", n),
                      rtol=2e-6, atol=1e-6)


def test_collectives_bit_exact_after_divergent_return(dev):
    rng = np.random.default_rng()
    groups = 40
    x = (rng.standard_normal(256 * groups) * 1e3).astype(np.float32)  # sums that round
    iu = rng.integers(0, 2**32, 256 * groups, dtype=np.uint64).astype(np.uint32)
    valid = 0xC0FFEE  # groups 31.. return, but only the data says so: the barrier.sync path
    ou = np.zeros(groups, np.uint32)
    ou[31:] = valid
    check_against_cpu("cuda", SEM, "sums_divergent",
                      [x, iu, np.zeros(groups, np.float32), np.zeros(groups, np.float32), ou, valid],
                      ("groups", (groups, 1, 1)))


@pytest.mark.parametrize("kernel,width", [("sums_64", 64), ("sums_1024", 1024), ("max_16", 16)])
def test_collectives_leave_the_tree_state(dev, kernel, width):
    """scratch after the collective holds the tree's partial values (shuffles included)"""
    rng = np.random.default_rng()
    groups = 30
    x = (rng.standard_normal(width * groups) * 1e3).astype(np.float32)
    x[::7] = np.nan if kernel.startswith("max") else x[::7]  # max ignores NaN operands
    check_against_cpu("cuda", SEM, kernel, [x, np.zeros(groups, np.float32),
                                            np.zeros(width * groups, np.float32)], ("groups", (groups, 1, 1)))


@pytest.mark.parametrize("seed", range(2))
def test_every_example_matches_cpu(dev, seed):
    from goldy_import.examples import EXAMPLES
    for ex in EXAMPLES:
        rng = np.random.default_rng(np.random.SeedSequence().entropy % 2**32)
        args = ex.inputs(rng, 4000 + 1000 * seed)
        path = os.path.join(ROOT, "rust_examples", ex.file)
        check_against_cpu("cuda", path, ex.kernel, args, ex.grid(args), ex.rtol, ex.atol)


CHAIN = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [128, 1, 1])]
fn scale(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
"""


def test_graph_replay_and_node_update(dev):
    mod = gi.load_source(CHAIN, "chain.rs")
    k = mod.scale.prepare(dev)
    n = 10_000
    rng = np.random.default_rng()
    x0 = rng.standard_normal(n).astype(np.float32)
    x, y = dev.buffer(x0), dev.buffer(np.zeros(n, np.float32))
    scheme = gi.Scheme(dev)
    k.record(scheme, "first", x, y, 2.0).over_1d(n)
    second = k.record(scheme, "second", x, y, 0.5).over_1d(n)
    backend = dev.backend
    scheme.submit()
    graphs = dict(backend._graphs)  # the suite's other schemes may have filled the LRU cache
    want = (np.float32(0.5) * x0 + (np.float32(2.0) * x0 + 0)).astype(np.float32)
    np.testing.assert_array_equal(y.numpy(), want)
    scheme.set_node_param(second, "a", -3.0)
    scheme.submit()  # replays the same graph with the patched node: no new instantiation
    assert dict(backend._graphs) == graphs
    want = (np.float32(-3.0) * x0 + (np.float32(2.0) * x0 + want)).astype(np.float32)
    np.testing.assert_array_equal(y.numpy(), want)


def test_driver_failures_name_the_call(dev):
    with pytest.raises(BackendError, match=r"cuMemFree failed: CUDA_ERROR_\w+"):
        dev.backend._cu("cuMemFree", dev.backend.drv.CUdeviceptr(0x10))


def _run_external(dev, arr_x, arr_y, n):
    """saxpy through the backend directly on external memory (no copies)."""
    b = dev.backend
    k = import_source(open(os.path.join(ROOT, "rust_examples", "saxpy.rs")).read(), "saxpy.rs").kernels[0]
    ex, ey = b.wrap_external(arr_x, "f32"), b.wrap_external(arr_y, "f32")
    from goldy_import.runtime.backend import CompileOptions, Dispatch
    comp = b.compile(k, CompileOptions())
    d = Dispatch(k, comp, [BufferArg(ex.handle, 0, ex.length, "f32", 4), BufferArg(ey.handle, 0, ey.length, "f32", 4),
                           ScalarArg("f32", 3.0)], ((n + 255) // 256, 1, 1))
    b.record(d)
    b.submit([d])


def test_zero_copy_cupy(dev):
    cp = pytest.importorskip("cupy")
    n = 5000
    x, y = cp.random.standard_normal(n, dtype=cp.float32), cp.random.standard_normal(n, dtype=cp.float32)
    want = (np.float32(3.0) * cp.asnumpy(x) + cp.asnumpy(y)).astype(np.float32)
    _run_external(dev, x, y, n)
    np.testing.assert_array_equal(cp.asnumpy(y), want)
    with pytest.raises(BindingError, match="C-contiguous"):
        dev.backend.wrap_external(cp.zeros((8, 8), cp.float32)[:, ::2])


def test_zero_copy_torch(dev):
    torch = pytest.importorskip("torch")
    n = 5000
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    want = (np.float32(3.0) * x.cpu().numpy() + y.cpu().numpy()).astype(np.float32)
    _run_external(dev, x, y, n)
    np.testing.assert_array_equal(y.cpu().numpy(), want)
    with pytest.raises(BindingError, match="float32, uint32 or int32"):
        dev.backend.wrap_external(torch.zeros(4, dtype=torch.float64, device="cuda"))


# ---------------------------------------------------------------- batched entries

BATCHED = """
use goldy::gpu;

#[goldy::gpu]
struct P { pos: gpu::float4, w: f32 }

/// if/else and assignments under predication, a struct buffer, vectors, bools
#[goldy::compute(workgroup_size = [128, 1, 1])]
fn mixed(p: &[P], x: &[f32], y: &mut [f32], flags: &mut [u32], n: u32, a: f32) {
    let i = gpu::global_id().x;
    let mut t = 0.0;
    if i < n {
        let q = p[i % p.len()];
        let v = q.pos * a + gpu::float4(x[i]);
        if v.x > v.y {
            t = dot(v, v) + q.w;
            flags[i] = 1u32;
        } else {
            t = v.z - v.w;
            flags[i] = gpu::workgroup_id().x * 1000 + gpu::local_id().x;
        }
        y[i] = t + y[i];
    }
    if i == 7 { y[0] = -1.5; }
}

/// a 2-D grid of [64, 1, 1] workgroups: ids along y pass through; returns retire copies
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn grid2d(out: gpu::Scattered<u32>, w: u32) {
    let g = gpu::global_id();
    if g.x % 5 == 3 && g.x < w {
        if g.y == 1 { return; }
        out[g.y * w + g.x] = 1u32;
        return;
    }
    if g.x < w {
        out[g.y * w + g.x] = g.x * 3 + g.y * 7 + gpu::num_workgroups().x * 100000;
    }
}
"""


def test_batched_entries_match_cpu(dev):
    """Dispatches above the threshold go through the batched entry: forced here, with
    workgroup counts that are not multiples of the batch."""
    b = dev.backend
    saved = b.batch_min_threads
    b.batch_min_threads = 0
    try:
        rng = np.random.default_rng()
        pdt = np.dtype([("pos", "<f4", (4,)), ("w", "<f4")])
        for n in (1, 128 * 5 + 17, 128 * 8):
            p = np.zeros(max(1, n // 2), pdt)
            p["pos"] = rng.standard_normal((len(p), 4))
            p["w"] = rng.standard_normal(len(p))
            x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
            check_against_cpu("cuda", BATCHED, "mixed", [p, x, y, np.zeros(n, np.uint32), n - n // 3, 0.75],
                              ("over_1d", n))
        for w, h in ((64 * 3, 5), (64 * 6 + 1, 2)):
            check_against_cpu("cuda", BATCHED, "grid2d", [np.zeros(w * h, np.uint32), w], ("over_2d", w, h))
        from goldy_import.examples import EXAMPLES
        for ex in EXAMPLES:
            if ex.kernel in ("saxpy", "particle_stats", "hash_u32"):
                args = ex.inputs(rng, 256 * 9 + 3)
                check_against_cpu("cuda", os.path.join(ROOT, "rust_examples", ex.file), ex.kernel, args,
                                  ex.grid(args), ex.rtol, ex.atol)
    finally:
        b.batch_min_threads = saved


def test_batching_threshold(dev):
    """Small dispatches keep one workgroup per block (batching them would idle SMs)."""
    b = dev.backend
    assert b.batch_min_threads >= 4 * 1024
    mod = gi.load_source(BATCHED, "b.rs")
    k = mod.grid2d.prepare(dev)
    scheme = gi.Scheme(dev)
    small = k.record(scheme, "small", dev.empty(64 * 4, np.uint32), 64 * 4).over_1d(64 * 4)
    big_n = b.batch_min_threads + 64 * 3  # a workgroup count that is not a multiple of the batch
    out = dev.empty(big_n, np.uint32)
    big = k.record(scheme, "big", out, big_n).over_1d(big_n)
    assert big.dispatch.compiled.batched is not None
    assert not small.dispatch.state.batched and big.dispatch.state.batched
    scheme.submit()
    g = np.arange(big_n, dtype=np.uint64)
    want = np.where(g % 5 == 3, 1, (g * 3 + (big_n // 64) * 100000) & 0xFFFFFFFF)
    np.testing.assert_array_equal(out.numpy(), want.astype(np.uint32))
