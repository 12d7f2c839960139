"""The slang backend against the CPU oracle: every runnable kernel of rust_examples/ and
tests/data/ compiled by the real Slang compiler and run on slangpy's CPU device, with fresh
random inputs and poisoned write-only outputs, through the backend contract
(runtime/backend.py). Plus the Rust numeric edge cases, strided tensors, hand-written
Slang, and the public API. The examples run as imported (no check sites), the tests/data
kernels with their trapping-check sites, so both renderings meet the oracle."""

from __future__ import annotations

import glob
import math
import os

import numpy as np
import pytest

from goldy_import.importer import import_file, import_source
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import insert_checks
from goldy_import.ir import types as T
from goldy_import.runtime.backend import (BufferArg, CompileOptions, Dispatch, ImageArg, ScalarArg, TensorArg,
                                          UniformArg)
from goldy_import.runtime.dtypes import SCALAR_DTYPES, struct_gpu_dtype
from oracle import backend_or_skip, random_scalar

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRANSCENDENTAL = {"sin", "cos", "tan", "exp", "exp2", "log", "log2", "pow"}


def _require_slang():
    backend_or_skip("slang")  # fails instead when GOLDY_REQUIRE_BACKENDS names slang

@pytest.fixture(scope="module")
def backends():
    _require_slang()
    from goldy_import.runtime.cpu import BACKEND as Cpu
    from goldy_import.runtime.slang import BACKEND as Slang
    slang = Slang(device_type="cpu")
    yield Cpu(), slang
    slang.close()


# ---------------------------------------------------------------- the harness

def _gpu_dtype(kernel: N.Kernel, ty: str) -> np.dtype:
    if T.is_struct(ty):
        return struct_gpu_dtype(kernel.struct(T.struct_name(ty)))
    if T.is_vector(ty):
        return np.dtype((SCALAR_DTYPES[T.elem_of(ty)], (T.vec_len(ty),)))
    return SCALAR_DTYPES[ty]


def _poison(arr: np.ndarray) -> np.ndarray:
    out = arr.copy()
    out.view(np.uint32)[...] = 0x7FC00000 if arr.dtype.base.kind == "f" else 0xDEADBEEF
    return out


def run(backend, kernel: N.Kernel, args: list, groups, label: str = "") -> list:
    """Run one dispatch; args are numpy arrays (buffers; tensors as (array, layout)),
    Python scalars, bytes (uniforms) or ("image", array, w, h). Returns final buffers."""
    bound, handles = [], []
    for p, a in zip(kernel.params, args):
        if p.category == "scalar":
            bound.append(ScalarArg(p.ty, a))
            handles.append(None)
            continue
        if p.category == "uniform":
            bound.append(UniformArg(bytes(a), T.struct_name(p.ty)))
            handles.append(None)
            continue
        if p.category == "image":
            _, arr, width, height = a
        elif p.category in N.TENSOR_CATEGORIES:
            arr, layout = a
        else:
            arr = a
        arr = np.ascontiguousarray(arr)
        if p.category in ("write", "tensor_write"):
            arr = _poison(arr)
        h = backend.alloc(arr.nbytes)
        backend.write(h, 0, memoryview(arr.view(np.uint8).reshape(-1)))
        handles.append((h, arr))
        if p.category == "image":
            bound.append(ImageArg(h, width, height, p.ty))
        elif p.category in N.TENSOR_CATEGORIES:
            bound.append(TensorArg(h, p.ty, tuple(layout), arr.size))
        else:
            bound.append(BufferArg(h, 0, len(arr), p.ty, arr.dtype.itemsize))
    compiled = backend.compile(kernel, CompileOptions())
    d = Dispatch(kernel, compiled, bound, tuple(groups), label)
    backend.record(d)
    backend.submit([d])
    out = []
    for hx in handles:
        if hx is None:
            out.append(None)
            continue
        h, arr = hx
        data = backend.read(h, 0, arr.nbytes)
        out.append(np.frombuffer(data, dtype=arr.dtype).reshape(arr.shape).copy())
        backend.free(h)
    return out


def assert_same(got, want, exact: bool, what: str) -> None:
    if want.dtype.names:
        for name in want.dtype.names:
            assert_same(got[name], want[name], exact, f"{what}.{name}")
        return
    if want.dtype.base.kind == "f" and not exact:
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, equal_nan=True, err_msg=what)
        return
    g, w = got.view(np.uint32), want.view(np.uint32)
    if want.dtype.base.kind == "f":  # same bits, or both NaN
        same = (g == w) | (np.isnan(got) & np.isnan(want))
    else:
        same = g == w
    if not same.all():
        i = int(np.flatnonzero(~same.reshape(-1))[0])
        raise AssertionError(f"{what}: {int((~same).sum())} of {same.size} differ; first at {i}: "
                             f"slang {got.reshape(-1)[i]!r}, cpu {want.reshape(-1)[i]!r}")


def compare(backends, kernel: N.Kernel, args: list, groups, exact=None, checks: bool = False) -> list:
    """Run on the oracle and on slang; with `checks` slang runs the IR with trapping-check
    sites (ir/checks.py), whose suppressed accesses must leave exactly what the oracle's
    unchecked ones leave (a fault, if any, is reported but not an error here)."""
    cpu, slang = backends
    if exact is None:
        exact = not any(isinstance(e, N.Call) and e.func in TRANSCENDENTAL for e in _exprs(kernel)) and \
            not any(isinstance(s, N.Softmax) for s in N.walk_stmts(kernel.body))
    racy = atomic_order_dependent(kernel)
    want = run(cpu, kernel, args, groups)
    got = run(slang, insert_checks(kernel) if checks else kernel, args, groups)
    for p, g, w in zip(kernel.params, got, want):
        if w is not None and p.name not in racy:
            assert_same(g, w, exact, f"kernel `{kernel.name}` parameter `{p.name}`")
    return got


def atomic_order_dependent(k: N.Kernel) -> set:
    """Parameters stored from a value `atomic_add` returned: the order among threads is
    unspecified on GPUs (docs/semantics.md), and slangpy's CPU device runs workgroup by
    workgroup while the oracle runs in global thread order, so only totals are compared."""
    tainted = {s.target for s in N.walk_stmts(k.body) if isinstance(s, N.AtomicAdd) and s.target}
    for _ in range(4):  # follow lets and assignments a few steps
        for s in N.walk_stmts(k.body):
            if isinstance(s, (N.Let, N.Assign)) and s.value is not None and _reads(s.value, tainted):
                root = s.target if isinstance(s, N.Assign) else None
                while isinstance(root, (N.Field, N.Swizzle)):
                    root = root.value
                tainted.add(s.name if isinstance(s, N.Let) else getattr(root, "name", ""))
    return {s.resource for s in N.walk_stmts(k.body)
            if isinstance(s, (N.Store, N.AtomicAdd)) and _reads(s.value, tainted)}


def _reads(e: N.Expr, names: set) -> bool:
    return any(isinstance(x, N.Var) and x.name in names for x in N.walk_expr(e))


def _exprs(k: N.Kernel):
    for s in N.walk_stmts(k.body):
        for e in N.stmt_exprs(s):
            yield from N.walk_expr(e)


def tensor_arg(arr: np.ndarray):
    """A contiguous row-major view of `arr` (rank 0..4) with Goldy's 12-word layout."""
    shape = list(arr.shape)
    strides = [int(np.prod(shape[i + 1:], dtype=np.int64)) for i in range(len(shape))]
    dims = shape + [1] * (4 - len(shape))
    st = strides + [0] * (4 - len(shape))
    return arr.reshape(-1), [0, len(shape), int(arr.size), *dims, *st, 1]


def random_args(kernel: N.Kernel, n: int, rng: np.random.Generator) -> list:
    out = []
    for p in kernel.params:
        if p.category == "scalar":
            out.append(random_scalar(rng, p, n))
        elif p.category == "uniform":
            dt = struct_gpu_dtype(kernel.struct(T.struct_name(p.ty)))
            out.append(_random_struct(dt, 1, rng).tobytes())
        elif p.category == "image":
            w, h = 16, 4
            out.append(("image", rng.standard_normal((w * h, 4)).astype(np.float32), w, h))
        else:
            arr = _random_array(kernel, p.ty, n, rng)
            if p.category in N.TENSOR_CATEGORIES:
                rank = len(p.shape) if p.shape else 1
                shape = [n // 8, 8] if rank == 2 else [n]
                out.append(tensor_arg(arr[:int(np.prod(shape))].reshape(shape)))
            else:
                out.append(arr)
    return out


def _random_struct(dt: np.dtype, n: int, rng) -> np.ndarray:
    arr = np.zeros(n, dt)
    for name in dt.names:
        sub = dt.fields[name][0]
        shape = (n,) + sub.shape
        arr[name] = (rng.standard_normal(shape).astype(np.float32) if sub.base.kind == "f"
                     else rng.integers(0, 1000, shape))
    return arr


def _random_array(kernel: N.Kernel, ty: str, n: int, rng) -> np.ndarray:
    if T.is_struct(ty):
        return _random_struct(_gpu_dtype(kernel, ty), n, rng)
    if ty == "f32":
        return rng.standard_normal(n).astype(np.float32)
    if ty == "u32":
        return rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(np.uint32)
    if ty == "i32":
        return rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64).astype(np.int32)
    if ty == "bool":
        return rng.integers(0, 2, n).astype(np.uint32)
    return rng.standard_normal((n, T.vec_len(ty))).astype(np.float32) if T.elem_of(ty) == "f32" else \
        rng.integers(0, 1000, (n, T.vec_len(ty))).astype(SCALAR_DTYPES[T.elem_of(ty)])


def groups_for(kernel: N.Kernel, grid: tuple) -> tuple:
    kind, *rest = grid
    wx, wy, wz = kernel.workgroup_size
    if kind == "groups":
        return tuple(rest[0])
    if kind == "over_1d":
        return (max(1, math.ceil(rest[0] / wx)), 1, 1)
    if kind == "over_2d":
        return (max(1, math.ceil(rest[0] / wx)), max(1, math.ceil(rest[1] / wy)), 1)
    raise ValueError(grid)


def _to_backend_args(kernel: N.Kernel, args: list) -> list:
    out = []
    for p, a in zip(kernel.params, args):
        if p.category in N.TENSOR_CATEGORIES:
            out.append(tensor_arg(np.asarray(a)))
        elif p.category in N.BUFFER_CATEGORIES:
            arr = np.asarray(a)
            if arr.dtype.names:  # host-packed structs -> the GPU layout
                gpu = np.zeros(len(arr), _gpu_dtype(kernel, p.ty))
                for name in arr.dtype.names:
                    gpu[name] = arr[name]
                arr = gpu
            out.append(arr.astype(np.uint32) if arr.dtype == np.bool_ else arr)
        else:
            out.append(a)
    return out


# ---------------------------------------------------------------- every kernel

def _example_cases():
    from goldy_import.examples import EXAMPLES
    return [pytest.param(e, id=f"{e.file}:{e.kernel}") for e in EXAMPLES]


@pytest.mark.parametrize("ex", _example_cases())
def test_example_matches_cpu(backends, ex):
    kernel = import_file(os.path.join(REPO, "rust_examples", ex.file)).kernel(ex.kernel)
    rng = np.random.default_rng(np.random.SeedSequence().entropy % 2 ** 32)
    args = ex.inputs(rng, 3000 if ex.file != "collatz.rs" else 500)
    compare(backends, kernel, _to_backend_args(kernel, args), groups_for(kernel, ex.grid(args)),
            exact=None if ex.rtol == 0 and ex.atol == 0 else False)


def _data_kernels():
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "tests", "data", "*.rs"))):
        for k in import_file(path).kernels:
            if _lanes_race(k):
                continue  # undefined on GPUs: slangpy's CPU device runs lanes one after another, the oracle in lock step
            out.append(pytest.param(path, k.name, id=f"{os.path.basename(path)}:{k.name}"))
    return out


def _lanes_race(kernel) -> bool:
    """Lanes share a workgroup array with no barrier between writes and reads: a data race."""
    return bool(kernel.workgroup_arrays) and not any(isinstance(s, (N.Barrier, N.Reduce, N.Softmax))
                                                     for s in N.walk_stmts(kernel.body))


@pytest.mark.parametrize("path,name", _data_kernels())
def test_data_kernel_matches_cpu(backends, path, name):
    kernel = import_file(path).kernel(name)
    rng = np.random.default_rng(np.random.SeedSequence().entropy % 2 ** 32)
    n = 1024
    groups = (max(1, n // kernel.workgroup_size[0]), 1, 1)
    compare(backends, kernel, random_args(kernel, n, rng), groups, checks=True)  # unchecked: the examples


# ---------------------------------------------------------------- Rust numerics, written out

EDGES = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn edges(a: &[i32], b: &[i32], ua: &[u32], ub: &[u32], f: &[f32], g: &[f32],
         oi: &mut [i32], ou: &mut [u32], of: &mut [f32]) {
    let i = gpu::global_id().x;
    if i >= a.len() { return; }
    let k = i * 12;
    oi[k] = a[i] / b[i];
    oi[k + 1] = a[i] % b[i];
    oi[k + 2] = a[i] * b[i] + a[i];
    oi[k + 3] = a[i] << ub[i];
    oi[k + 4] = a[i] >> b[i];
    oi[k + 5] = f[i] as i32;
    oi[k + 6] = -a[i];
    oi[k + 7] = a[i].abs();
    oi[k + 8] = (ua[i] as i32) - b[i];
    oi[k + 9] = a[i].min(b[i]).max(-5);
    oi[k + 10] = a[i].clamp(-7, 7);
    oi[k + 11] = !a[i] ^ (b[i] & 0x0f0f);
    ou[k] = ua[i] / ub[i];
    ou[k + 1] = ua[i] % ub[i];
    ou[k + 2] = ua[i] << b[i];
    ou[k + 3] = ua[i] >> ub[i];
    ou[k + 4] = f[i] as u32;
    ou[k + 5] = a[i] as u32;
    ou[k + 6] = f[i].to_bits();
    ou[k + 7] = (ua[i] < ub[i]) as u32;
    ou[k + 8] = ua[i] * ub[i] - ub[i];
    ou[k + 9] = ua[i] as f32 as u32;
    ou[k + 10] = (f[i] != f[i]) as u32;
    ou[k + 11] = ua[i].min(ub[i]);
    of[k] = f[i].min(g[i]);
    of[k + 1] = f[i].max(g[i]);
    of[k + 2] = f[i].round();
    of[k + 3] = f[i] * g[i] + f[i];
    of[k + 4] = f[i] % g[i];
    of[k + 5] = f[i].mul_add(g[i], 1.0);
    of[k + 6] = f[i] / g[i];
    of[k + 7] = a[i] as f32 + ua[i] as f32;
    of[k + 8] = f[i].clamp(-1.5, 1.5).floor() + f[i].trunc() + f[i].ceil();
    of[k + 9] = f32::from_bits(ua[i]);
    of[k + 10] = f[i].sqrt() + f[i].abs() - 0.1;
    of[k + 11] = if f[i] < g[i] { f[i] } else { g[i] * 3.0e-7 };
}
"""


def _edge_inputs(rng, n):
    special_f = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 3e9, -3e9,
                          5e9, 2147483520.0, -2147483904.0, 4294967040.0, 1e-40, 0.49999997, -0.49999997,
                          8388609.0, 1e30], np.float32)
    special_i = np.array([0, 1, -1, 2 ** 31 - 1, -2 ** 31, 31, 32, 33, -33, 7, -7], np.int64)
    f = rng.standard_normal(n).astype(np.float32) * np.float32(10)
    g = rng.standard_normal(n).astype(np.float32)
    f[: len(special_f)] = special_f
    g[len(special_f): 2 * len(special_f)] = special_f
    g[::7] = 0.0
    g[::11] = np.nan
    a = rng.integers(-2 ** 31, 2 ** 31, n, dtype=np.int64)
    b = rng.integers(-40, 40, n, dtype=np.int64)
    a[: len(special_i)] = special_i
    b[len(special_i): 2 * len(special_i)] = special_i
    b[5] = -1
    a[5] = -2 ** 31
    ua = rng.integers(0, 2 ** 32, n, dtype=np.uint64)
    ub = rng.integers(0, 70, n, dtype=np.uint64)
    ub[::5] = 0
    return [a.astype(np.int32), b.astype(np.int32), ua.astype(np.uint32), ub.astype(np.uint32), f, g,
            np.zeros(12 * n, np.int32), np.zeros(12 * n, np.uint32), np.zeros(12 * n, np.float32)]


def test_rust_numeric_edge_cases(backends):
    kernel = import_source(EDGES, "edges.rs").kernel("edges")
    rng = np.random.default_rng(np.random.SeedSequence().entropy % 2 ** 32)
    n = 256
    got = compare(backends, kernel, _edge_inputs(rng, n), (n // 64, 1, 1), exact=True)
    # spot checks against Rust directly, independent of the oracle
    oi = got[6]
    assert oi[5 * 12] == -2 ** 31  # i32::MIN / -1
    assert oi[5 * 12 + 1] == 0  # i32::MIN % -1


LOOPS = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn loops(x: &[u32], out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i >= x.len() { return; }
    let mut acc = 0u32;
    for j in (u32::MAX - 2)..=u32::MAX { acc += j & 7; }
    let mut end = x[i] % 9;
    for j in 0..end { end += 1; if j == 3 { continue; } acc += j; }
    for k in -3..=-1i32 { acc += (k * k) as u32; }
    let mut w = 0u32;
    loop { w += 1; if w * w > x[i] % 50 { break; } }
    for j in 5..=4u32 { acc += 1000 + j; }
    out[i] = acc * 100 + w;
}
"""


def test_loop_shapes(backends):
    """Inclusive ranges up to u32::MAX, empty ranges, an end evaluated once, `continue` in a
    stepped loop, `loop`/`break`: the canonical wrapper path (no barriers)."""
    kernel = import_source(LOOPS, "loops.rs").kernel("loops")
    rng = np.random.default_rng(np.random.SeedSequence().entropy % 2 ** 32)
    x = rng.integers(0, 2 ** 32, 100, dtype=np.uint64).astype(np.uint32)
    got = compare(backends, kernel, [x, np.zeros(100, np.uint32)], (4, 1, 1))[1]
    e = x % 9
    want = [(5 + 6 + 7) + sum(j for j in range(int(k)) if j != 3) + 14 for k in e]
    w = [next(v for v in range(1, 100) if v * v > int(a) % 50) for a in x]
    np.testing.assert_array_equal(got, np.array(want, np.uint32) * 100 + np.array(w, np.uint32))


def test_no_fma_contraction(backends):
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [1, 1, 1])]
fn contract(a: &[f32], out: &mut [f32]) {
    out[0] = a[0] * a[1] + a[2];
    out[1] = a[0].mul_add(a[1], a[2]);
}
"""
    kernel = import_source(src, "contract.rs").kernel("contract")
    x = np.float32(1.0000001)
    a = np.array([x, x, -np.float32(x * x)], np.float32)
    got = compare(backends, kernel, [a, np.zeros(2, np.float32)], (1, 1, 1))[1]
    assert got[0] == np.float32(x * x) - np.float32(x * x)  # two roundings: exactly 0
    assert got[1] != 0.0  # the fused one keeps the low bits


def test_strided_tensor_view(backends):
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [32, 1, 1])]
fn tcopy(src: gpu::Tensor<f32>, dst: gpu::TensorMut<u32>) {
    let i = gpu::global_id().x;
    if i < src.len() {
        dst[i] = src[i].to_bits() ^ (src.dim(0) * 1000 + src.dim(1) * 10 + src.rank());
    }
}
"""
    kernel = import_source(src, "tcopy.rs").kernel("tcopy")
    rng = np.random.default_rng(7)
    base = rng.standard_normal(6 * 10 + 3).astype(np.float32)
    # a transposed [5, 6] view of a [6, 10] block at offset 3 (strides 1, 10)
    layout = [3, 2, 30, 5, 6, 1, 1, 1, 10, 0, 0, 0]
    dst, dlay = tensor_arg(np.zeros(30, np.uint32))
    got = compare(backends, kernel, [(base, layout), (dst, dlay)], (1, 1, 1))
    want = np.array([base[3 + r * 1 + c * 10].view(np.uint32) ^ (5 * 1000 + 6 * 10 + 2)
                     for r in range(5) for c in range(6)], np.uint32)
    np.testing.assert_array_equal(got[1], want)


def test_lane_serial_control_flow(backends):
    """Shapes the CPU lane-serial form must get right: barriers inside an inclusive range
    loop with a workgroup-uniform `continue` and `break`, a collective, then a `return` from
    inside a thread-local loop that must skip the rest of that lane's segment only."""
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tricky(x: &[f32], out: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let mut acc = 0.0;
    for r in 0..=3u32 {
        s[lid] = x[i] * (r as f32);
        gpu::workgroup_barrier();
        acc += s[(lid + 1) % 64];
        gpu::workgroup_barrier();
        if r == 1 { continue; }
        acc = acc * 0.5;
        if r == 2 { break; }
    }
    let t = gpu::workgroup_sum::<64>(acc, s);
    if i >= n { return; }
    for j in 0..8u32 {
        if (j as f32) > x[i] * 4.0 {
            out[i] = -(j as f32);
            return;
        }
    }
    out[i] = t + acc;
}
"""
    kernel = import_source(src, "tricky.rs").kernel("tricky")
    rng = np.random.default_rng(np.random.SeedSequence().entropy % 2 ** 32)
    n = 200
    got = compare(backends, kernel, [rng.standard_normal(256).astype(np.float32), np.zeros(256, np.float32), n],
                  (4, 1, 1))
    assert (got[1][:n] < 0).any() and (got[1][n:] == 0).all()


# ---------------------------------------------------------------- hand-written Slang

HANDWRITTEN = """
import goldy_abi;

// scale-and-offset written by hand in the canonical form
[goldy_compute]
[numthreads(64, 1, 1)]
void scale_offset(BufRO<float> src, Scattered<float> dst, float scale, uint n, ThreadId gid)
{
    uint i = gid.x;
    if (i < n) { dst[i] = src[i] * scale + 1.0; }
}
"""


def test_handwritten_kernel_runs(backends):
    from goldy_import.codegen.slang import try_kernel_def_from_source
    kdef, why = try_kernel_def_from_source(HANDWRITTEN)
    assert kdef is not None, why
    _, slang = backends
    x = np.arange(100, dtype=np.float32)
    got = run(slang, kdef, [x, np.zeros(100, np.float32), 0.5, 100], (2, 1, 1))
    np.testing.assert_array_equal(got[1], x * np.float32(0.5) + np.float32(1.0))


def test_handwritten_kernel_records_into_a_scheme():
    """A parsed hand-written kernel goes through the core's prepare/record/validation like
    an imported one."""
    _require_slang()
    import goldy_import as gi
    from goldy_import.codegen.slang import try_kernel_def_from_source
    from goldy_import.runtime.core import KernelDef
    kdef, why = try_kernel_def_from_source(HANDWRITTEN, "scale_offset.slang")
    assert kdef is not None, why
    dev = gi.Device("slang")
    try:
        pk = KernelDef(kdef).prepare(dev)
        x = dev.buffer(np.arange(300, dtype=np.float32))
        y = dev.empty(300, np.float32)
        scheme = gi.Scheme(dev)
        pk.record(scheme, "scale_offset", x, y, 2.0, 300).over_1d(300)
        scheme.submit()
        np.testing.assert_array_equal(y.numpy(), np.arange(300, dtype=np.float32) * 2 + 1)
        with pytest.raises(gi.BindingError):
            pk.record(scheme, "bad", x, y, 2.0)  # one argument short
    finally:
        dev.close()


def test_handwritten_barrier_kernel_is_refused_on_cpu_device(backends):
    from goldy_import.codegen.slang import try_kernel_def_from_source
    from goldy_import.errors import BackendError
    src = HANDWRITTEN.replace("uint i = gid.x;", "uint i = gid.x; GroupMemoryBarrierWithGroupSync();")
    kdef, why = try_kernel_def_from_source(src)
    assert kdef is not None, why
    with pytest.raises(BackendError, match="barriers cannot run on slangpy's CPU device"):
        backends[1].compile(kdef, CompileOptions())


def test_compile_error_is_a_backend_error(backends):
    from goldy_import.codegen.slang import try_kernel_def_from_source
    from goldy_import.errors import BackendError
    kdef, why = try_kernel_def_from_source(HANDWRITTEN.replace("src[i] * scale", "src[i] * undefined_name"))
    assert kdef is not None, why
    with pytest.raises(BackendError, match="undefined_name"):
        backends[1].compile(kdef, CompileOptions())


# ---------------------------------------------------------------- the public API

def test_public_api_saxpy():
    _require_slang()
    import goldy_import as gi
    mod = gi.load(os.path.join(REPO, "rust_examples", "saxpy.rs"))
    dev = gi.Device("slang")
    try:
        n = 1000
        x = dev.buffer(np.arange(n, dtype=np.float32))
        y = dev.buffer(np.ones(n, np.float32))
        k = mod.saxpy.prepare(dev)
        scheme = gi.Scheme(dev)
        node = k.record(scheme, "saxpy", x, y, 2.0).over_1d(n)
        scheme.submit()
        np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32) * 2 + 1)
        scheme.submit()  # replays: y = 2x + y again
        np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32) * 4 + 1)
        scheme.set_node_param(node, "a", -1.0)  # a changed scalar reaches the next submit
        scheme.submit()
        np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype=np.float32) * 3 + 1)
    finally:
        dev.close()
