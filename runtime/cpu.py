"""The CPU backend: kernels run as numpy code over every thread of a dispatch at once.

It is the oracle the GPU backends are tested against, so it computes exactly what
docs/semantics.md says. Buffers are numpy uint8 arrays holding the GPU layout. `compile`
turns IR into a Python function once (codegen.cpu); `record` binds the arguments to numpy
views once; `submit` only walks chunks of whole workgroups (bounded memory, fixed order so
atomics stay deterministic) and calls the function on each.

The transcendentals (sin cos tan exp exp2 log log2 pow) evaluate the one f32 math library
(ir/mathlib.py) on numpy arrays, so they are the GPU backends' bits, within the bounds
documented there. Everything else is exact.

Trapping checks: sites marked by ir/checks.py record the first failure of a dispatch (chunk
order, then statement order, then lowest lane); only lanes that really perform the access
(active, and past any short-circuiting `&&`/`||`) can fail. `submit` returns FaultReports.

Read-only matrices that loops walk a row per lane (GEMV weights) get a transposed copy kept
while the buffer is unchanged (codegen/cpu/transposed.py): the backend reports every write
it makes (`write`, and each dispatch's writable bindings) so a stale copy is never read.
"""

from __future__ import annotations

import os
import platform
import time
from typing import Any, Optional

import numpy as np

from goldy_import.codegen.cpu import ckernel, rt
from goldy_import.codegen.cpu import transposed as TR
from goldy_import.codegen.cpu import CpuKernel, Slot, compile_cpu
from goldy_import.codegen.cpu.race import compile_racecheck
from goldy_import.errors import BackendError, GoldyError
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import racecheck
from .backend import (Backend, BufferArg, CompileOptions, Dispatch, FaultReport, ImageArg, Limits, ScalarArg,
                      TensorArg, UniformArg)

# Threads per chunk: big enough that per-chunk Python costs vanish against the numpy work,
# small enough to bound memory (benchmarks/cpu_backend.py --chunks compares sizes).
CHUNK_THREADS = 1 << 20
# Dispatches up to this many threads keep their lane geometry and workgroup arrays between
# submits (cheap re-submits); bigger ones rebuild them, so recorded Schemes pin no memory.
KEEP_THREADS = 1 << 16

_SCALAR = {"u32": np.uint32, "i32": np.int32, "f32": np.float32, "bool": np.bool_}


def available() -> bool:
    return True


def _strided(handle: np.ndarray, byte_off: int, n: int, stride: int, dtype: np.dtype) -> np.ndarray:
    """n elements of `dtype`, `stride` bytes apart from `byte_off`, as a view of `handle`
    (clipped to the allocation, so a bad binding can never reach outside it)."""
    size = dtype.itemsize
    if n > 0 and byte_off + (n - 1) * stride + size > handle.nbytes:
        n = max(0, (handle.nbytes - byte_off - size) // stride + 1) if handle.nbytes >= byte_off + size else 0
    if n <= 0:
        return np.zeros(0, dtype)
    if stride == size:
        return handle[byte_off:byte_off + n * size].view(dtype)
    return np.ndarray((n,), dtype, buffer=handle, offset=byte_off, strides=(stride,))


def _contiguous(dims: tuple, strides: tuple) -> bool:
    expect = 1
    for d, s in zip(reversed(dims), reversed(strides)):
        if d != 1 and s != expect:
            return False
        expect *= d
    return True


class _Bound:
    """A recorded dispatch's arguments as the generated function wants them (R), and its
    chunk geometry, kept across submits when the grid is small and one chunk."""

    def __init__(self, d: Dispatch, chunk_threads: int):
        ck: CpuKernel = d.compiled
        k = d.kernel
        self.kernel, self.slots = k, ck.slots
        params, args = k.params, d.args
        self.R: list[Any] = [getattr(self, "bind_" + s.kind)(s, params[s.param], args[s.param]) for s in ck.slots]
        self.wg, self.groups, self.chunk, self.atomics = k.workgroup_size, tuple(d.groups), chunk_threads, ck.atomics
        self.form = ckernel.Form()  # the C form or the numpy one (codegen/cpu/ckernel.py)
        # the allocations bound writably: their transposed copies go before each run (TR.writing)
        self.writes = tuple({id(a.handle): a.handle for p, a in zip(params, args)
                             if p.category in N.WRITABLE_CATEGORIES}.values())
        wx, wy, wz = self.wg
        gx, gy, gz = self.groups
        self.single = None
        if gx * gy * gz * wx * wy * wz <= min(KEEP_THREADS, chunk_threads):
            plan = list(rt.chunks(self.wg, self.groups, chunk_threads, ck.atomics))
            if len(plan) == 1:
                self.single = [rt.Geometry(self.wg, self.groups, 0, plan[0][1])]

    def geometries(self):
        if self.single is not None:
            return self.single
        pool: dict = {}  # workgroup arrays shared by this submit's chunks only
        return (rt.Geometry(self.wg, self.groups, w0, W, pool)
                for w0, W in rt.chunks(self.wg, self.groups, self.chunk, self.atomics))

    def set_scalar(self, index: int, arg: ScalarArg) -> None:
        self.form.packed = None  # packed again for the C form at its next run
        for pos, s in enumerate(self.slots):
            if s.param == index and s.kind == "value":
                self.R[pos] = _SCALAR[arg.ty](arg.value)

    # one binder per slot kind (codegen.cpu.Slot)
    def bind_value(self, s: Slot, p: N.Param, arg: ScalarArg):
        return _SCALAR[arg.ty](arg.value)

    def bind_view(self, s: Slot, p: N.Param, arg: BufferArg):
        return _strided(arg.handle, arg.offset * arg.stride, arg.length, arg.stride, rt.DTYPES[p.ty])

    def bind_len(self, s: Slot, p: N.Param, arg):
        return np.uint32(arg.length if isinstance(arg, BufferArg) else arg.layout[2])

    def bind_comps(self, s: Slot, p: N.Param, arg):
        """Struct buffer fields, or an image's texel lanes: one strided view per component."""
        if isinstance(arg, ImageArg):
            base, n, ty = 0, arg.width * arg.height, arg.elem
            stride = 4 * (T.vec_len(ty) if T.is_vector(ty) else 1)
        else:
            base, n, stride, ty = arg.offset * arg.stride, arg.length, arg.stride, p.ty
        structs = {d.name: d for d in self.kernel.structs}
        offs = rt.component_offsets(ty, structs)
        types = [t for _, t in rt.components(ty, structs)]
        return tuple(_strided(arg.handle, base + o, n, stride, rt.DTYPES[t]) for o, t in zip(offs, types))

    def bind_tensor(self, s: Slot, p: N.Param, arg: TensorArg):
        off, rank, numel = arg.layout[0:3]
        dims, strides = tuple(arg.layout[3:3 + rank]), tuple(arg.layout[7:7 + rank])
        data = _strided(arg.handle, 0, arg.buffer_length, 4, rt.DTYPES[arg.elem])
        if _contiguous(dims, strides):
            return data[off:off + numel]
        return rt.Strided(data, off, dims, strides, numel)

    def bind_dims(self, s: Slot, p: N.Param, arg: TensorArg):
        return np.array(arg.layout[3:7], dtype=np.uint32)

    def bind_rank(self, s: Slot, p: N.Param, arg: TensorArg):
        return np.uint32(arg.layout[1])

    def bind_ucomp(self, s: Slot, p: N.Param, arg: UniformArg):
        structs = {d.name: d for d in self.kernel.structs}
        off = rt.component_offsets(p.ty, structs)[s.comp]
        ty = rt.components(p.ty, structs)[s.comp][1]
        return np.frombuffer(arg.data, rt.DTYPES[ty], count=1, offset=off)[0]

    def bind_width(self, s: Slot, p: N.Param, arg: ImageArg):
        return np.uint32(arg.width)

    def bind_height(self, s: Slot, p: N.Param, arg: ImageArg):
        return np.uint32(arg.height)


class CpuBackend(Backend):
    name = "cpu"
    lowering = "cpu"
    # no hardware grid limit along x (CUDA's 2^31 - 1 keeps thread ids within u32 reach)
    limits = Limits(max_workgroups=(2**31 - 1, 65535, 65535))

    def __init__(self, chunk_threads: int = CHUNK_THREADS, racecheck: Optional[bool] = None,
                 transposed_cache: int = TR.CAP_BYTES):
        if not isinstance(chunk_threads, int) or chunk_threads < 1:
            raise BackendError(f"cpu backend: chunk_threads must be a positive int, got {chunk_threads!r}")
        if not isinstance(transposed_cache, int) or isinstance(transposed_cache, bool) or transposed_cache < 0:
            raise BackendError(f"cpu backend: transposed_cache must be a byte count >= 0, got {transposed_cache!r}")
        self.chunk_threads = chunk_threads
        self.transposed = TR.TransposedCache(transposed_cache)
        if racecheck is None:
            racecheck = os.environ.get("GOLDY_RACECHECK", "0") not in ("", "0", "false", "off")
        self.racecheck = bool(racecheck)  # runtime/racecheck.py: every dispatch checked for data races

    def describe(self) -> str:
        race = ", racecheck" if self.racecheck else ""
        return f"numpy {np.__version__} on {platform.machine() or 'cpu'} ({os.cpu_count()} cores){race}"

    # -- memory
    def alloc(self, nbytes: int) -> np.ndarray:
        handle = np.zeros(nbytes, dtype=np.uint8)
        self.transposed.track(handle)
        return handle

    def free(self, handle: Any) -> None:
        TR.changed(handle)  # its transposed copies go now; the array itself when its last view does

    def write(self, handle: np.ndarray, offset: int, data) -> None:
        src = np.frombuffer(data, dtype=np.uint8)
        TR.changed(handle)
        handle[offset:offset + src.size] = src

    def exported(self, handle: np.ndarray) -> None:
        """`handle`'s memory was handed out writable (a zero-copy DLPack export): writes
        to it are no longer seen, so it gets no transposed copies from now on."""
        TR.escaped(handle)

    def read(self, handle: np.ndarray, offset: int, nbytes: int) -> bytes:
        return handle[offset:offset + nbytes].tobytes()

    # -- kernels
    def compile(self, kernel: N.Kernel, options: CompileOptions) -> CpuKernel:
        try:
            return compile_racecheck(kernel) if self.racecheck else compile_cpu(kernel)
        except GoldyError:
            raise
        except (SyntaxError, RecursionError, MemoryError) as e:  # e.g. nesting beyond Python's limits
            raise BackendError(f"cpu backend cannot compile kernel `{kernel.name}`: {e}") from e

    def record(self, d: Dispatch) -> None:
        d.state = _Bound(d, self.chunk_threads)

    def update_scalar(self, d: Dispatch, index: int) -> None:
        if isinstance(d.state, _Bound):
            d.state.set_scalar(index, d.args[index])

    def submit(self, dispatches: list[Dispatch]) -> Optional[list[FaultReport]]:
        """Run the dispatches in order; the first failed trapping check of each (in chunk,
        statement and lane order) comes back as a FaultReport."""
        faults: list[FaultReport] = []
        # integer wrap-around and IEEE specials are the semantics, not accidents: no warnings
        with np.errstate(all="ignore"):
            for n, d in enumerate(dispatches):
                if not isinstance(d.state, _Bound):
                    self.record(d)
                fn, R, F = d.compiled.fn, d.state.R, rt.Faults()
                if d.compiled.race_sites is not None:
                    F = racecheck.RaceFaults(racecheck.tracker_for(d, f"kernel `{d.kernel.name}` (node {n} "
                                                                      f"{d.label or 'unlabelled'!r})"))
                writes = d.state.writes
                TR.writing(writes, 1)
                try:
                    form = d.state.form
                    if not ckernel.run(d.compiled, form, R, d.state.groups):
                        t0 = time.perf_counter()
                        for G in d.state.geometries():
                            fn(G, R, F)
                        if form.timing():
                            ckernel.numpy_ran(d.compiled, form, time.perf_counter() - t0)
                    if d.compiled.race_sites is not None:
                        F.race.finish()  # raises RaceError
                except GoldyError:
                    raise
                except Exception as e:
                    raise BackendError(f"cpu backend: kernel `{d.kernel.name}` ({d.label or 'unlabelled'}) "
                                       f"failed: {type(e).__name__}: {e}") from e
                finally:
                    TR.writing(writes, -1)
                if F.hit is not None:
                    site, index, length, index_y = F.hit
                    faults.append(FaultReport(n, site, index, length, index_y))
        return faults or None


BACKEND = CpuBackend
