"""Every runnable kernel of tests/data/*.rs and of the WGSL snapshot cases, run on wgpu and
on the CPU oracle with the same fresh random inputs (write-only outputs poisoned), at the
backend-contract level so that every parameter kind (images, uniforms, strided tensors)
is covered. Whole allocations are compared, so a stray out-of-range write shows up too.

Integers and floats must match bit for bit, reductions included; kernels calling
transcendentals use docs/semantics.md's tolerance. Two things are not comparable and are
left out, each named below: values returned by `atomic_add` (the order of atomics is
unspecified on GPUs; the totals are compared), and deliberate data races."""

import glob
import os

import numpy as np
import pytest

from goldy_import.importer import import_file
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.runtime import cpu
from goldy_import.runtime.backend import BufferArg, CompileOptions, Dispatch, ImageArg, ScalarArg, TensorArg, UniformArg
from goldy_import.runtime.dtypes import struct_gpu_dtype
from oracle import device

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = sorted(glob.glob(os.path.join(HERE, "data", "*.rs")) +
               glob.glob(os.path.join(HERE, "snapshots", "wgsl", "cases", "*.rs")))
KERNELS = [(f, k) for f in FILES for k in import_file(f).kernels]
TRANSCENDENTAL = {"sin", "cos", "tan", "exp", "exp2", "log", "log2", "pow"}
RTOL, ATOL = 2e-6, 1e-6
# kernel -> {parameter: element range that is compared (None: not compared)}, and why
RACES = {
    # kitchen sink: threads store out[0..3) while thread 0..2 read out[i]
    "everything": {"out": slice(3, None)},
}
POISON = {"f": np.float32(np.nan), "u": np.uint32(0xDEADBEEF), "i": np.int32(-559038737)}


def _atomic_tainted(k: N.Kernel) -> set[str]:
    """Resources whose stored values depend on an `atomic_add` result (order-dependent)."""
    tainted = {s.target for s in N.walk_stmts(k.body) if isinstance(s, N.AtomicAdd) and s.target}

    def uses(e) -> bool:
        return any(isinstance(x, N.Var) and x.name in tainted for x in N.walk_expr(e))

    changed = True
    while changed:
        changed = False
        for s in N.walk_stmts(k.body):
            name = s.name if isinstance(s, N.Let) else None
            if isinstance(s, N.Assign):
                root = s.target
                while isinstance(root, (N.Field, N.Swizzle)):
                    root = root.value
                name = root.name
            if name and name not in tainted and any(uses(e) for e in N.stmt_exprs(s)):
                tainted.add(name)
                changed = True
    return {s.resource for s in N.walk_stmts(k.body)
            if isinstance(s, (N.Store, N.AtomicAdd)) and (uses(s.value) or uses(s.index))}


def _elem_dtype(k: N.Kernel, ty: str) -> np.dtype:
    if T.is_struct(ty):
        return struct_gpu_dtype(k.struct(T.struct_name(ty)))
    if T.is_vector(ty):
        n = T.vec_len(ty)
        return np.dtype((np.dtype("<" + {"f32": "f4", "u32": "u4", "i32": "i4"}[T.elem_of(ty)]), (4 if n == 3 else n,)))
    return np.dtype({"f32": "<f4", "u32": "<u4", "i32": "<i4", "bool": "<u4"}[ty])


def _random(rng, dtype: np.dtype, n: int, ty: str, poisoned: bool) -> np.ndarray:
    arr = np.zeros(n, dtype)
    flat_fields = [arr[name] for name in dtype.names] if dtype.names else [arr]
    for f in flat_fields:
        kind = f.dtype.base.kind
        if poisoned:
            f[...] = POISON[kind]
        elif ty == "bool":
            f[...] = rng.integers(0, 2, f.shape)
        elif kind == "f":
            f[...] = rng.standard_normal(f.shape).astype(np.float32)
        elif kind == "u":
            big = rng.integers(0, 2**32, f.shape, dtype=np.uint64).astype(np.uint32)
            f[...] = np.where(rng.integers(0, 2, f.shape) == 1, big, rng.integers(0, 100, f.shape))
        else:
            big = rng.integers(-2**31, 2**31, f.shape, dtype=np.int64).astype(np.int32)
            f[...] = np.where(rng.integers(0, 2, f.shape) == 1, big, rng.integers(-100, 100, f.shape))
    return arr


def _inputs(k: N.Kernel, rng, n: int):
    """[(param, kind, host array or value, extra)] with extra = what the Arg needs."""
    out = []
    for p in k.params:
        if p.category == "scalar":
            if p.ty == "u32":
                v = n if p.name == "n" else int(rng.integers(1, 65))
            elif p.ty == "i32":
                v = int(rng.integers(-100, 100))
            elif p.ty == "f32":
                v = float(np.float32(rng.standard_normal()))
            else:
                v = bool(rng.integers(0, 2))
            out.append((p, "scalar", v, None))
        elif p.category == "uniform":
            dt = struct_gpu_dtype(k.struct(T.struct_name(p.ty)))
            out.append((p, "uniform", _random(rng, dt, 1, p.ty, False), None))
        elif p.category in N.BUFFER_CATEGORIES:
            dt = _elem_dtype(k, p.ty)
            out.append((p, "buffer", _random(rng, dt, n, p.ty, p.category == "write"), None))
        elif p.category in N.TENSOR_CATEGORIES:
            rows, cols = int(rng.integers(2, 20)), int(rng.integers(2, 20))
            if rng.integers(0, 2):  # a transposed, offset view of a bigger parent
                shape, strides, off = (rows, cols), (1, rows + 3), int(rng.integers(0, 5))
            else:
                shape, strides, off = (rows, cols), (cols, 1), 0
            parent = off + sum((d - 1) * s for d, s in zip(shape, strides)) + 1 + int(rng.integers(0, 4))
            arr = _random(rng, np.dtype("<" + {"f32": "f4", "u32": "u4", "i32": "i4"}[p.ty]), parent, p.ty,
                          p.category == "tensor_write")
            layout = (off, 2, rows * cols, rows, cols, 1, 1, strides[0], strides[1], 0, 0, 0)
            out.append((p, "tensor", arr, layout))
        elif p.category == "image":
            w, h = int(rng.integers(5, 40)), int(rng.integers(3, 20))
            out.append((p, "image", _random(rng, _elem_dtype(k, p.ty), w * h, p.ty, False), (w, h)))
    return out


def _grid(k: N.Kernel, n: int) -> tuple:
    wx, wy, wz = k.workgroup_size
    if wy == wz == 1:
        return (-(-n // wx), 1, 1)
    side = int(np.sqrt(n)) + 1
    return (-(-side // wx), -(-side // wy), -(-2 // wz))


def _run(backend, k: N.Kernel, inputs, groups):
    args, handles = [], []
    for p, kind, v, extra in inputs:
        if kind == "scalar":
            args.append(ScalarArg(p.ty, v))
            handles.append(None)
            continue
        if kind == "uniform":
            args.append(UniformArg(v.tobytes(), T.struct_name(p.ty)))
            handles.append(None)
            continue
        h = backend.alloc(max(v.nbytes, 4))
        backend.write(h, 0, memoryview(v.tobytes()))
        handles.append(h)
        if kind == "buffer":
            args.append(BufferArg(h, 0, len(v), p.ty, v.dtype.itemsize))
        elif kind == "tensor":
            args.append(TensorArg(h, p.ty, extra, len(v)))
        else:
            args.append(ImageArg(h, extra[0], extra[1], p.ty))
    d = Dispatch(k, backend.compile(k, CompileOptions()), args, groups, k.name)
    backend.record(d)
    backend.submit([d])
    results = []
    for (p, kind, v, _), h in zip(inputs, handles):
        if h is None:
            results.append(None)
            continue
        results.append(np.frombuffer(backend.read(h, 0, v.nbytes), v.dtype).copy())
        backend.free(h)
    return results


def _flat(a: np.ndarray) -> np.ndarray:
    if a.dtype.names:
        return np.concatenate([a[n].reshape(len(a), -1).view(np.uint32) for n in a.dtype.names], axis=1).reshape(-1)
    return a.reshape(-1)


@pytest.fixture(scope="module")
def wgpu_backend():
    return device("wgpu").backend


@pytest.mark.parametrize("path,kernel", KERNELS, ids=[f"{os.path.basename(f)}:{k.name}" for f, k in KERNELS])
def test_kernel_matches_cpu_oracle(wgpu_backend, path, kernel):
    k = kernel
    seed = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(seed)
    n = 1500
    inputs = _inputs(k, rng, n)
    groups = _grid(k, n)
    if k.name == "ids":  # row pitch w and plane h must cover the grid, or threads share slots (a race)
        ext = {"w": groups[0] * k.workgroup_size[0], "h": groups[1] * k.workgroup_size[1]}
        inputs = [(p, kind, ext.get(p.name, v) if kind == "scalar" else v, extra) for p, kind, v, extra in inputs]
    want = _run(cpu.BACKEND(), k, inputs, groups)
    got = _run(wgpu_backend, k, inputs, groups)
    approx = any(isinstance(x, N.Call) and x.func in TRANSCENDENTAL
                 for s in N.walk_stmts(k.body) for e in N.stmt_exprs(s) for x in N.walk_expr(e)) or \
        any(isinstance(s, N.Softmax) for s in N.walk_stmts(k.body))
    skip = {name: None for name in _atomic_tainted(k)} | RACES.get(k.name, {})
    compared = 0
    for (p, kind, v, _), g, w in zip(inputs, got, want):
        if g is None:
            continue
        part = skip.get(p.name, slice(None)) if p.name in skip else slice(None)
        if part is None:
            continue
        g, w = _flat(g[part]), _flat(w[part])
        what = f"kernel `{k.name}` parameter `{p.name}` (seed {seed})"
        if g.dtype.kind == "f" and approx:
            np.testing.assert_allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True, err_msg=what)
        elif g.dtype.kind == "f":
            same = (g == w) | (np.isnan(g) & np.isnan(w))
            bad = np.flatnonzero(~same)
            assert not len(bad), f"{what}: {len(bad)} differ; first at {bad[0]}: wgpu {g[bad[0]]!r}, cpu {w[bad[0]]!r}"
        else:
            np.testing.assert_array_equal(g, w, err_msg=what)
        compared += 1
    assert compared, f"kernel `{k.name}`: nothing was compared"


def test_atomic_returns_are_left_out_only_where_they_reach_memory():
    ks = {k.name: k for _, k in KERNELS}
    assert _atomic_tainted(ks["histogram"]) in (set(), {"olds"})
    assert _atomic_tainted(ks["hist2d"]) == {"olds"}
    assert _atomic_tainted(ks["everything"]) == {"hist"}
