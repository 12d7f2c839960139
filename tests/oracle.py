"""Test helpers: run a kernel on a backend and compare it with the CPU oracle.

Write-only outputs are poisoned (NaN / 0xDEADBEEF) on the device before each run, so an
element a backend forgets to write shows up as a mismatch.
"""

from __future__ import annotations

import difflib
import os
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir import nodes as N

POISON_F32 = np.float32(np.nan)
POISON_INT = 0xDEADBEEF
TRAPS_RS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "traps", "traps.rs")


def rust_loc(src: str, needle: str, file: str) -> str:
    """`file:line:col` of the first `needle` in `src` as messages print a span (1-based,
    columns in characters)."""
    at = src.index(needle)
    line = src.count("\n", 0, at) + 1
    col = at - (src.rfind("\n", 0, at) + 1) + 1
    return f"{file}:{line}:{col}"


REPO = Path(__file__).resolve().parent.parent


def check_snapshot(path, actual: str, regenerate: str) -> None:
    """Compare `actual` with the snapshot stored at `path`; with GOLDY_UPDATE_SNAPSHOTS=1
    store it instead. `regenerate`: the command that rewrites it, named in the failure."""
    path = Path(path)
    rel = path.resolve().relative_to(REPO).as_posix()
    if os.environ.get("GOLDY_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"missing snapshot {rel}; regenerate with `{regenerate}` and review the diff"
    expected = path.read_text(encoding="utf-8")
    if actual != expected:
        diff = list(difflib.unified_diff(expected.splitlines(), actual.splitlines(), f"{rel} (stored)",
                                         f"{rel} (now)", lineterm="", n=1))
        shown = "\n".join(diff[:40]) + (f"\n... ({len(diff) - 40} more diff lines)" if len(diff) > 40 else "")
        raise AssertionError(f"{rel} differs; if the change is intended, regenerate with `{regenerate}` "
                             f"and review the diff\n{shown}")


def required_backends() -> set[str]:
    return {b.strip() for b in os.environ.get("GOLDY_REQUIRE_BACKENDS", "").split(",") if b.strip()}


def backend_or_skip(name: str) -> None:
    """Skip when `name` cannot run here, unless GOLDY_REQUIRE_BACKENDS names it: then fail."""
    if name == "cpu" or gi.backend_available(name):
        return
    if name in required_backends():
        try:
            gi.Device(name)
        except gi.GoldyError as e:
            pytest.fail(f"backend {name} is required (GOLDY_REQUIRE_BACKENDS) but unavailable: {e}")
        pytest.fail(f"backend {name} is required (GOLDY_REQUIRE_BACKENDS) but its probe failed")
    pytest.skip(f"backend {name} is not available here")


def package_or_skip(module: str) -> Any:
    """Import an optional test package (torch, IPython). Missing, it skips, except in CI
    (`CI` set) or when GOLDY_REQUIRE_BACKENDS names it: then it fails, unless
    GOLDY_<MODULE>=0 opts out (scripts/setup.sh installs torch only where it is cheap)."""
    if os.environ.get(f"GOLDY_{module.upper()}") == "0":
        pytest.skip(f"{module} tests are switched off (GOLDY_{module.upper()}=0)")
    try:
        return __import__(module)
    except ImportError as e:
        if os.environ.get("CI") or module.lower() in required_backends():
            pytest.fail(f"{module} is required here (CI or GOLDY_REQUIRE_BACKENDS) but does not import: {e}")
        pytest.skip(f"{module} is not installed")


def c_compiler_or_skip() -> None:
    """Skip where the cpu backend builds no C (no compiler, GOLDY_CPU_NATIVE=0), unless
    GOLDY_REQUIRE_BACKENDS names `cc`: then fail (CI has gcc)."""
    from goldy_import.codegen.cpu import native
    if native.library() is not None:
        return
    if "cc" in required_backends():
        pytest.fail("a C compiler is required (GOLDY_REQUIRE_BACKENDS names cc) but the cpu backend built no C")
    pytest.skip("no C compiler: the numpy form alone")


_devices: dict[str, gi.Device] = {}


def device(backend: str) -> gi.Device:
    """One shared device per backend for the whole test session (devices are costly)."""
    dev = _devices.get(backend)
    if dev is None or dev.closed:
        backend_or_skip(backend)
        dev = _devices[backend] = gi.Device(backend)
    return dev


@lru_cache(maxsize=None)
def _load(src: str) -> gi.KernelModule:
    if "\n" not in src and src.endswith(".rs") and os.path.exists(src):
        return gi.load(src)
    return gi.load_source(src, "test_kernel.rs")


def _kdef(src: str, kernel: str):
    k = getattr(_load(src), kernel)
    return k.definition() if hasattr(k, "definition") else k  # launch-module class or KernelDef


def kernel_ir(src: str, kernel: str) -> N.Kernel:
    return _kdef(src, kernel).ir


def _poisoned(arr: np.ndarray) -> np.ndarray:
    out = np.empty_like(arr)
    if arr.dtype.names is not None:
        out.view(np.uint8)[...] = 0xAB
    elif arr.dtype.kind == "f":
        out[...] = POISON_F32
    elif arr.dtype.kind == "b":
        out[...] = True
    else:
        out[...] = np.array(POISON_INT, dtype=np.uint64).astype(arr.dtype)
    return out


def run_kernel(backend: str, src: str, kernel: str, args: Sequence[Any], grid: tuple) -> list[Optional[np.ndarray]]:
    """Run `kernel` once on `backend`; returns every buffer argument's final contents."""
    dev = device(backend)
    kdef = _kdef(src, kernel)
    pk = kdef.prepare(dev)
    bound = []
    buffers: list[Optional[Any]] = []
    for p, a in zip(kdef.ir.params, args, strict=True):  # a corpus file with a stray argument fails
        if p.category in N.BUFFER_CATEGORIES:
            arr = np.asarray(a)
            b = dev.buffer(_poisoned(arr) if p.category == "write" else arr)
            bound.append(b)
            buffers.append(b)
        elif p.category in N.TENSOR_CATEGORIES and isinstance(a, np.ndarray):
            t = dev.tensor(_poisoned(a) if p.category == "tensor_write" else a)
            bound.append(t)
            buffers.append(t)
        else:
            bound.append(a)
            buffers.append(None)
    scheme = gi.Scheme(dev)
    kind, *rest = grid
    builder = pk.record(scheme, kernel, *bound)
    if kind == "groups":
        builder.groups(tuple(rest[0]))
    else:
        getattr(builder, kind)(*rest)
    scheme.submit()
    return [b.numpy() if b is not None else None for b in buffers]


_UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


def same_bits(got, want) -> np.ndarray:
    """Element by element: the same bits (a zero's sign too), two NaNs counting as equal
    whatever their payloads (which the contract leaves open); non-floats: equal."""
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype.kind != "f":
        return got == want
    return (got.view(_UINT[got.dtype.itemsize]) == want.view(_UINT[want.dtype.itemsize])) | \
        (np.isnan(got) & np.isnan(want))


def assert_same(got: np.ndarray, want: np.ndarray, rtol: float = 0.0, atol: float = 0.0, what: str = "") -> None:
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype.names is not None:
        for name in want.dtype.names:
            assert_same(got[name], want[name], rtol, atol, f"{what}.{name}")
        return
    if want.dtype.kind == "f":
        if rtol == 0 and atol == 0:
            same = same_bits(got, want)
            if not same.all():
                bad = np.flatnonzero(~same.reshape(-1))
                i = bad[0]
                raise AssertionError(f"{what}: {len(bad)} of {got.size} elements differ; first at {i}: "
                                     f"got {got.reshape(-1)[i]!r}, want {want.reshape(-1)[i]!r}")
        else:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def check_against_cpu(backend: str, src: str, kernel: str, args: Sequence[Any], grid: tuple,
                      rtol: float = 0.0, atol: float = 0.0) -> list[Optional[np.ndarray]]:
    """Run on the CPU oracle and on `backend` with the same inputs; every buffer must match."""
    want = run_kernel("cpu", src, kernel, args, grid)
    got = run_kernel(backend, src, kernel, args, grid)
    params = kernel_ir(src, kernel).params
    for p, g, w in zip(params, got, want):
        if w is not None:
            assert_same(g, w, rtol, atol, f"{backend} vs cpu: kernel `{kernel}` parameter `{p.name}`")
    return got


SIZE_NAMES = ("n", "len", "count", "size", "length", "num", "total")


def random_inputs(kernel: N.Kernel, n: int, seed: int) -> list[Any]:
    """Fresh random data for every parameter: buffers of n elements, sizes set to n."""
    rng = np.random.default_rng(seed)
    out: list[Any] = []
    for p in kernel.params:
        if p.category in N.BUFFER_CATEGORIES or p.category in N.TENSOR_CATEGORIES:
            out.append(random_array(rng, p.ty, n, kernel))
        elif p.category == "scalar":
            out.append(random_scalar(rng, p, n))
        else:
            raise NotImplementedError(f"random_inputs: parameter category {p.category}")
    return out


def random_scalar(rng: np.random.Generator, p: N.Param, n: int) -> Any:
    """A random value for scalar parameter `p`; a u32 named like a size is `n`."""
    if p.ty == "u32":
        return n if p.name in SIZE_NAMES else int(rng.integers(0, 100))
    if p.ty == "i32":
        return int(rng.integers(-100, 100))
    if p.ty == "f32":
        return float(np.float32(rng.normal()))
    return bool(rng.integers(0, 2))


def random_array(rng: np.random.Generator, ty: str, n: int, kernel: Optional[N.Kernel] = None) -> np.ndarray:
    if ty == "f32":
        return rng.standard_normal(n).astype(np.float32)
    if ty == "u32":
        return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    if ty == "i32":
        return rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    if ty == "bool":
        return rng.integers(0, 2, n).astype(bool)
    if ty.startswith("struct:") and kernel is not None:
        from goldy_import.runtime.dtypes import struct_host_dtype
        decl = kernel.struct(ty[len("struct:"):])
        arr = np.zeros(n, dtype=struct_host_dtype(decl))
        for name in arr.dtype.names:
            base = arr.dtype.fields[name][0]
            shape = (n,) + base.shape
            if base.base.kind == "f":
                arr[name] = rng.standard_normal(shape).astype(np.float32)
            else:
                arr[name] = rng.integers(0, 1000, shape)
        return arr
    raise NotImplementedError(f"random_array: {ty}")


def ir_without_origin(k: N.Kernel) -> dict:
    """A kernel's IR as a dict without where it came from (spans, file, doc, source text):
    kernels from different front ends that say the same thing compare equal."""
    from goldy_import.ir.serialize import kernel_to_dict

    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {key: clean(x) for key, x in v.items() if key not in ("span", "source_file", "doc", "source_lines")}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    return clean(kernel_to_dict(k))
