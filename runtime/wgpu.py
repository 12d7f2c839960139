"""wgpu backend: kernels emitted as WGSL (codegen/wgsl/emitter.py) and run through wgpu-py.

Adapter choice: `WgpuBackend(adapter="llvmpipe")` takes the first adapter whose name,
description, vendor or backend contains the substring (case-insensitive); otherwise real
GPUs come before software ones and Vulkan/Metal/DX12 before OpenGL.

Each kernel compiles once into a shader module and pipeline (the core caches the result).
Recording a dispatch builds its bind group and its own small uniform buffer (scalars,
lengths, offsets, tensor layouts); `update_scalar` rewrites a few bytes of that buffer, so
nothing is re-recorded. All dispatches of a submit go into one command buffer; eager
launches (`launch`) wait in a list and go to the queue together, in one submit, before
anything that could observe them (synchronize, submit, read, write, free).

Trapping checks: a kernel whose IR carries check sites (ir/checks.py) has one more
storage binding, its error word (ir/abi.py `ERROR_WORD`, FAULT_WORDS u32), bound with
a dynamic offset into one error buffer shared by the device: each submit gives every
checked dispatch its own slot, clears the slots in the command buffer before the compute
pass, copies them to a mappable buffer after it (that mapping is also the completion
wait) and returns a FaultReport per slot whose flag is set. Kernels without sites (checks
off, or every check proven) bind no error word, and a submit without checked dispatches
neither clears nor reads one.
"""

from __future__ import annotations

import functools
import re
import struct
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from goldy_import import cache as diskcache
from goldy_import.codegen.wgsl import WgslModule, emit_wgsl_module
from goldy_import.errors import BackendError, BackendUnavailable, DeviceLimitError, GoldyError, TargetUnsupported
from goldy_import.ir import abi as A
from goldy_import.ir import nodes as N
from goldy_import.ir.abi import FAULT_WORDS

from goldy_import.codegen.ptx.emitter import batchable
from goldy_import.ir.pipeline import for_target

from .grid_fold import U32, fold as fold_grid, fold_kind, grid_words, needs_fold
from .quiet import ensure_xdg_runtime_dir
from .backend import (Backend, BufferArg, CompileOptions, Dispatch, FaultReport, ImageArg, Limits, ScalarArg,
                      TensorArg, UniformArg)

from .cffi_parse_cache import install as _cache_cffi_parses

_cache_cffi_parses()  # wgpu-py's cffi declarations: 2 s of pycparser per process otherwise
try:
    import wgpu
except ImportError:  # pragma: no cover - exercised where wgpu-py is missing
    wgpu = None

INSTALL_HINT = ("pip install wgpu (wgpu-py) and a Vulkan, Metal or DX12 driver; on Debian/Ubuntu "
                "`apt-get install mesa-vulkan-drivers` provides lavapipe, a software Vulkan device")

MAX_QUEUED = 256  # eager launches waiting for one command buffer at most
BATCH = 4  # logical workgroups per dispatched one in the batched entry (codegen/wgsl/batch.py)
_BACKEND_RANK = {"Vulkan": 0, "Metal": 0, "D3D12": 1, "OpenGL": 2}
_TYPE_RANK = {"DiscreteGPU": 0, "IntegratedGPU": 1, "VirtualGPU": 2, "CPU": 3}
_probe_lock = threading.Lock()
RELEASE_EVERY = 64  # records without a submit between empty submits (WgpuBackend._release_dropped)
_probe: Optional[list[dict]] = None


def _enumerate() -> list:
    if wgpu is None:
        return []
    ensure_xdg_runtime_dir()  # else Mesa prints an "error:" line from its Wayland probe
    try:
        return list(wgpu.gpu.enumerate_adapters_sync())
    except Exception:  # a broken driver stack means: no adapter
        return []


def _infos() -> list[dict]:
    global _probe
    with _probe_lock:
        if _probe is None:
            _probe = [dict(a.info) for a in _enumerate()]
        return _probe


def available() -> bool:
    """Whether wgpu-py is installed and sees at least one adapter (cached)."""
    return bool(_infos())


def hardware_adapter_available() -> bool:
    """Whether a real (non-software) GPU adapter exists, for `Device("auto")`."""
    return any(i.get("adapter_type") in ("DiscreteGPU", "IntegratedGPU") for i in _infos())


def _rank(info: dict) -> tuple[int, int]:
    return (_TYPE_RANK.get(info.get("adapter_type", ""), 4), _BACKEND_RANK.get(info.get("backend_type", ""), 3))


def _label(info: dict) -> str:
    return f"{info.get('device') or info.get('vendor') or '?'} via {info.get('backend_type', '?')}"


def _matches(info: dict, needle: str) -> bool:
    hay = " ".join(str(info.get(k, "")) for k in ("device", "description", "vendor", "backend_type", "adapter_type"))
    return needle.lower() in hay.lower()


@dataclass
class _Buf:
    buffer: Any  # GPUBuffer
    size: int  # bytes, a multiple of 4


@dataclass
class _Variant:
    module: WgslModule
    pipeline: Any
    layout: Any  # GPUBindGroupLayout


@dataclass
class _Compiled:
    kernel: N.Kernel
    abi: A.WgslPlan  # bindings, uniform block and error word (ir/abi.py), made once
    variants: dict[frozenset, _Variant] = field(default_factory=dict)
    folded: dict[tuple, _Variant] = field(default_factory=dict)  # (force, fold kind, batch): gi_grid variants
    batchable: bool = False  # has a batched entry (codegen/wgsl/batch.py)


@dataclass
class _State:
    variant: _Variant
    bind_group: Any
    uniform: Optional[Any]  # GPUBuffer
    packed: bytearray
    entries: list = field(default_factory=list)  # bind group entries, less the error word
    fault_gen: int = -1  # generation of the error buffer the bind group holds (checked kernels)
    groups: tuple = ()  # the dispatch's workgroups as dispatched (folded where the grid is past the cap)


class WgpuBackend(Backend):
    name = "wgpu"
    lowering = "wgsl"

    def __init__(self, adapter: Optional[str] = None):
        if wgpu is None:
            raise BackendUnavailable(f"backend `wgpu` needs wgpu-py: {INSTALL_HINT}")
        adapters = _enumerate()
        if not adapters:
            raise BackendUnavailable(f"backend `wgpu`: no GPU adapter found; {INSTALL_HINT}")
        infos = [dict(a.info) for a in adapters]
        order = sorted(range(len(adapters)), key=lambda i: _rank(infos[i]))
        if adapter is not None:
            order = [i for i in order if _matches(infos[i], adapter)]
            if not order:
                raise BackendUnavailable(f"backend `wgpu`: no adapter matches {adapter!r}; available: "
                                         + "; ".join(_label(i) for i in infos))
        chosen = adapters[order[0]]
        self.info = infos[order[0]]
        al = dict(chosen.limits)
        wanted = {k: al[k] for k in (
            "max-storage-buffer-binding-size", "max-buffer-size", "max-storage-buffers-per-shader-stage",
            "max-compute-workgroup-storage-size", "max-compute-invocations-per-workgroup",
            "max-compute-workgroup-size-x", "max-compute-workgroup-size-y", "max-compute-workgroup-size-z",
            "max-compute-workgroups-per-dimension", "max-bindings-per-bind-group") if k in al}
        try:
            self.device = chosen.request_device_sync(required_limits=wanted, label="goldy-import")
        except Exception:
            try:  # some drivers refuse their own maxima; the defaults always work
                self.device = chosen.request_device_sync(label="goldy-import")
            except Exception as e:
                raise BackendUnavailable(f"backend `wgpu`: cannot open {_label(self.info)}: {e}") from None
        self.queue = self.device.queue
        dl = dict(self.device.limits)
        self._align = int(dl.get("min-storage-buffer-offset-alignment", 256))
        self._max_binding = int(dl["max-storage-buffer-binding-size"])
        groups = int(dl["max-compute-workgroups-per-dimension"])
        self.dispatch_cap = groups  # per dispatch dimension; larger grids are folded (grid_fold.py)
        # A 1-D dispatch of at least this many threads of a batchable kernel runs its batched
        # entry (BATCH workgroups per dispatched one, codegen/wgsl/batch.py); WebGPU does not
        # tell the multiprocessor count, so: BATCH waves of a large GPU (132 SMs x 2048
        # threads). Tests set it to 0 to batch everything.
        self.batch_min_threads = BATCH * (1 << 18)
        self.limits = Limits(
            max_workgroup_size=(int(dl["max-compute-workgroup-size-x"]), int(dl["max-compute-workgroup-size-y"]),
                                int(dl["max-compute-workgroup-size-z"])),
            max_invocations_per_workgroup=int(dl["max-compute-invocations-per-workgroup"]),
            max_workgroups=(U32 - 1, U32 - 1, U32 - 1),  # the logical grid: folded past dispatch_cap
            max_storage_buffers_per_stage=int(dl["max-storage-buffers-per-shader-stage"]),
            max_workgroup_storage_bytes=int(dl["max-compute-workgroup-storage-size"]),
            # every buffer must fit one storage binding
            max_buffer_bytes=min(int(dl["max-buffer-size"]), self._max_binding),
        )
        self._dummies: dict[int, Any] = {}
        # Completion fence: mapping a buffer that the last command wrote waits for the whole
        # submission (wgpu-py 0.32's on_submitted_work_done_sync is broken).
        u = wgpu.BufferUsage
        self._fence_src = self.device.create_buffer(size=4, usage=u.COPY_SRC)
        self._fence_dst = self.device.create_buffer(size=4, usage=u.COPY_DST | u.MAP_READ)
        self._staging: Optional[Any] = None  # reused for readbacks, grown as needed
        # Error words of checked dispatches: one slot per dispatch of a submit, at offsets the
        # device accepts as dynamic storage offsets. Made on the first checked record.
        self._fault_stride = -(-4 * FAULT_WORDS // self._align) * self._align
        self._faults: Optional[Any] = None  # STORAGE | COPY_SRC | COPY_DST
        self._fault_read: Optional[Any] = None  # COPY_DST | MAP_READ, same size
        self._fault_slots = 0
        self._fault_gen = 0  # bumped when the error buffer is replaced (bind groups rebuilt)
        self._lock = threading.RLock()  # one queue: submits, reads and writes take turns
        self._closed = False
        # Eager launches wait here and go to the queue together, in one command buffer, at
        # the next synchronize, submit, read, write, free or scalar update of one of them
        self._queued: list[Dispatch] = []
        self._late: list = []  # (Dispatch, FaultReport) of flushed launches, for synchronize
        self._records_unsubmitted = 0  # see _release_dropped

    def describe(self) -> str:
        return f"{self.info.get('device', '?')} ({self.info.get('description', '')}) via {self.info.get('backend_type', '?')}"

    # ------------------------------------------------------------ memory

    def alloc(self, nbytes: int) -> _Buf:
        size = max(4, -(-nbytes // 4) * 4)  # wgpu copies and bindings work in 4-byte units
        if size > self.limits.max_buffer_bytes:
            raise DeviceLimitError(f"wgpu: a buffer of {nbytes} bytes exceeds max_buffer_bytes = "
                                   f"{self.limits.max_buffer_bytes}")
        u = wgpu.BufferUsage
        try:
            buf = self.device.create_buffer(size=size, usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)
        except Exception as e:
            raise BackendError(f"wgpu: cannot allocate {size} bytes: {e}") from None
        return _Buf(buf, size)

    def free(self, handle: _Buf) -> None:
        self._flush()
        try:
            handle.buffer.destroy()
        except Exception:
            pass

    def write(self, handle: _Buf, offset: int, data: memoryview) -> None:
        data = memoryview(data).cast("B")
        n = len(data)
        if n == 0:
            return
        if offset < 0 or offset + n > handle.size:
            raise BackendError(f"wgpu: write of {n} bytes at {offset} outside a buffer of {handle.size} bytes")
        self._flush()  # a queue write would land before launches still waiting
        lo, hi = offset // 4 * 4, -(-(offset + n) // 4) * 4
        if (lo, hi) != (offset, offset + n):  # queue writes are in 4-byte units: patch the edges
            block = bytearray(self.read(handle, lo, hi - lo))
            block[offset - lo:offset - lo + n] = data
            data = memoryview(block)
        try:
            with self._lock:
                self.queue.write_buffer(handle.buffer, lo, data)
        except Exception as e:
            raise BackendError(f"wgpu: buffer write failed: {e}") from None

    def read(self, handle: _Buf, offset: int, nbytes: int) -> bytes:
        if nbytes == 0:
            return b""
        lo, hi = offset // 4 * 4, -(-(offset + nbytes) // 4) * 4
        self._flush()
        with self._lock:
            try:
                if self._staging is None or self._staging.size < hi - lo:
                    if self._staging is not None:
                        self._staging.destroy()
                    size = max(1 << 16, 1 << (hi - lo - 1).bit_length())
                    u = wgpu.BufferUsage
                    self._staging = self.device.create_buffer(size=size, usage=u.COPY_DST | u.MAP_READ)
                enc = self.device.create_command_encoder()
                enc.copy_buffer_to_buffer(handle.buffer, lo, self._staging, 0, hi - lo)
                self.queue.submit([enc.finish()])
                whole = self._read_back("_staging", 0, hi - lo)  # waits for all prior work
                raw = whole[offset - lo:offset - lo + nbytes]
            except Exception as e:
                raise BackendError(f"wgpu: buffer read failed: {e}") from None
        return raw

    def _read_back(self, attr: str, offset: int, nbytes: int) -> bytes:
        """Map the MAP_READ buffer `self.<attr>` (which waits for the work before it), copy
        `nbytes` out and unmap. Interrupted anywhere (Ctrl-C lands in wgpu-py's polling
        loop), it may stay mapped or mid-map, which breaks every later use: then a fresh
        buffer of the same size and usage replaces it."""
        buf = getattr(self, attr)
        done = False
        try:
            buf.map_sync(wgpu.MapMode.READ, offset, max(nbytes, 4))
            raw = bytes(memoryview(buf.read_mapped(offset, nbytes, copy=False)).cast("B")) if nbytes else b""
            buf.unmap()
            done = True
        finally:
            if not done:
                setattr(self, attr, self.device.create_buffer(size=buf.size, usage=buf.usage))
                try:
                    buf.destroy()
                except Exception:
                    pass
        return raw

    # ------------------------------------------------------------ kernels

    def compile(self, kernel: N.Kernel, options: CompileOptions) -> _Compiled:
        self._refuse_deep_nesting(kernel)
        c = _Compiled(kernel, A.plan(kernel, "wgsl"), batchable=batchable(for_target(kernel, "wgsl").kernel))
        self._variant(c, frozenset())  # compile now, so errors surface at prepare time
        return c

    def _refuse_deep_nesting(self, kernel: N.Kernel) -> None:
        """llvmpipe (lavapipe) runs control flow nested past about 78 levels wrongly, without
        an error (its control-flow stack, LP_MAX_TGSI_NESTING = 80, truncates: found with 80
        nested `if`s, tests/test_abuse_import.py): refuse such kernels there rather than
        answer wrongly. Other drivers are not limited here."""
        if "llvmpipe" not in str(self.info.get("device", "")).lower():
            return
        depth = control_depth(kernel.body)
        if depth > LLVMPIPE_MAX_NESTING:
            raise TargetUnsupported(
                f"kernel `{kernel.name}`: control flow nested {depth} levels deep (an `else if` counts as a "
                f"level); {self.describe()} computes wrong results past about 78 levels, so the wgpu backend "
                f"takes at most {LLVMPIPE_MAX_NESTING} there. Flatten the nesting, or run it on the cpu, cuda "
                f"or slang backend")

    def _variant(self, c: _Compiled, force: frozenset, fold: bool | str = False, batch: int = 1) -> _Variant:
        variants, key = (c.folded, (force, fold, batch)) if fold or batch > 1 else (c.variants, force)
        v = variants.get(key)
        if v is not None:
            return v
        module = emit_wgsl_module(c.kernel, force, c.abi, exact_subnormals=self.flushes_subnormals, fold_grid=fold,
                                  batch=batch)
        shader = self.shader_module(module)
        entries = []
        for b in module.bindings:
            entries.append({"binding": b.binding, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": "storage" if b.writable else "read-only-storage"}})
        if module.uniform_binding is not None:
            entries.append({"binding": module.uniform_binding, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": "uniform"}})
        storage = len(module.bindings) + (module.fault_binding is not None)
        if storage > self.limits.max_storage_buffers_per_stage:
            extra = " (one of them the trapping-check error word)" if module.fault_binding is not None else ""
            raise DeviceLimitError(f"kernel `{c.kernel.name}` on wgpu: {storage} storage buffers{extra} exceed "
                                   f"max_storage_buffers_per_stage = {self.limits.max_storage_buffers_per_stage}")
        if module.fault_binding is not None:
            entries.append({"binding": module.fault_binding, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": "storage", "has_dynamic_offset": True,
                                       "min_binding_size": 4 * FAULT_WORDS}})
        if module.grid_binding is not None:
            entries.append({"binding": module.grid_binding, "visibility": wgpu.ShaderStage.COMPUTE,
                            "buffer": {"type": "uniform"}})
        try:
            layout = self.device.create_bind_group_layout(entries=entries)
            pipeline = self.device.create_compute_pipeline(
                layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
                compute={"module": shader, "entry_point": module.entry_point}, label=c.kernel.name)
        except Exception as e:
            raise BackendError(shader_error_message(module, str(e))) from None
        v = variants[key] = _Variant(module, pipeline, layout)
        return v

    @functools.cached_property
    def flushes_subnormals(self) -> bool:
        """Whether this driver flushes f32 subnormal operands or results to zero (NVIDIA's
        Vulkan driver does), probed once: then generated modules compute `+ - *` exactly
        where a subnormal is involved (codegen/wgsl/emitter.py `fop`). The answer is kept
        in the disk cache per adapter, driver and wgpu-py version."""
        k = diskcache.key("probe", ("flushes_subnormals", sorted(self.info.items()), wgpu.__version__))
        stored = diskcache.get_json("probe", k)
        if isinstance(stored, bool):
            return stored
        flushes = self._probe_flushes_subnormals()
        diskcache.put_json("probe", k, flushes)
        return flushes

    def _probe_flushes_subnormals(self) -> bool:
        code = ("@group(0) @binding(0) var<storage, read_write> b: array<f32, 4>;\n"
                "@compute @workgroup_size(1) fn main() { b[2] = b[1] * b[1]; b[3] = b[0] + b[3]; }\n")
        data = np.array([1e-40, 1e-20, 0.0, 0.0], np.float32)  # 1e-40 and 1e-20^2 are subnormal
        buf = self.device.create_buffer_with_data(data=data.tobytes(),
                                                  usage=wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC)
        pipeline = self.device.create_compute_pipeline(
            layout="auto", compute={"module": self.device.create_shader_module(code=code), "entry_point": "main"})
        group = self.device.create_bind_group(layout=pipeline.get_bind_group_layout(0),
                                              entries=[{"binding": 0, "resource": {"buffer": buf, "offset": 0, "size": 16}}])
        enc = self.device.create_command_encoder()
        p = enc.begin_compute_pass()
        p.set_pipeline(pipeline)
        p.set_bind_group(0, group)
        p.dispatch_workgroups(1)
        p.end()
        self.queue.submit([enc.finish()])
        out = np.frombuffer(self.queue.read_buffer(buf), np.float32)
        return not (out[2] != 0 and out[3] != 0)

    def shader_module(self, module: WgslModule) -> Any:
        """naga's verdict on generated WGSL; a rejection names the WGSL line and Rust span."""
        try:
            return self.device.create_shader_module(code=module.code, label=module.kernel)
        except Exception as e:
            raise BackendError(shader_error_message(module, str(e))) from None

    def record(self, d: Dispatch) -> None:
        k = d.kernel
        force = self._aliased_reads(k, d.args)
        batch = BATCH if d.compiled.batchable and self._batches(d) else 1
        dispatched = (-(-d.groups[0] // batch), 1, 1) if batch > 1 else d.groups
        fold = needs_fold(dispatched, (self.dispatch_cap,) * 3) and fold_kind(dispatched)
        groups = fold_grid(k.name, dispatched, k.workgroup_size, self.dispatch_cap) if fold else dispatched
        variant = self._variant(d.compiled, force, fold, batch)
        module = variant.module
        offsets: dict[int, int] = {}  # param -> element offset of element 0 inside its binding
        entries = []
        for b in module.bindings:
            a = d.args[b.param]
            p = k.params[b.param]
            if isinstance(a, BufferArg):
                if a.stride != b.stride:
                    raise BackendError(f"kernel `{k.name}` parameter `{p.name}`: elements are {a.stride} bytes "
                                       f"on the host side but {b.stride} bytes in WGSL")
                res, offsets[b.param] = self._buffer_range(a.handle, a.offset, a.length, b.stride, p.name, k.name)
            elif isinstance(a, TensorArg):
                res, _ = self._buffer_range(a.handle, 0, a.buffer_length, b.stride, p.name, k.name)
            elif isinstance(a, ImageArg):
                res, _ = self._buffer_range(a.handle, 0, a.width * a.height, b.stride, p.name, k.name)
            else:
                raise BackendError(f"kernel `{k.name}` parameter `{p.name}`: got {type(a).__name__}")
            entries.append({"binding": b.binding, "resource": res})
        packed = bytearray(module.uniform_size)  # zero words stay 0
        for f in module.uniform_fields:
            a = d.args[f.param] if f.param >= 0 else None
            if f.kind == "scalar":
                assert isinstance(a, ScalarArg)
                packed[f.offset:f.offset + 4] = _scalar_bytes(a)
            elif f.kind == "uniform":
                assert isinstance(a, UniformArg)
                packed[f.offset:f.offset + len(a.data)] = a.data
            elif f.kind == "layout":
                assert isinstance(a, TensorArg)
                packed[f.offset:f.offset + A.LAYOUT_BYTES] = struct.pack("<12I", *(int(x) & 0xFFFFFFFF for x in a.layout))
            elif f.kind == "off":
                packed[f.offset:f.offset + 4] = struct.pack("<I", offsets[f.param])
            elif f.kind != "zero":  # a length or an image size, as the bound argument holds it
                packed[f.offset:f.offset + 4] = struct.pack("<I", getattr(a, A.ARG_FIELD[f.kind]))
        ubuf = None
        try:
            if module.uniform_binding is not None:
                u = wgpu.BufferUsage
                ubuf = self.device.create_buffer(size=len(packed), usage=u.UNIFORM | u.COPY_DST)
                self.queue.write_buffer(ubuf, 0, packed)
                entries.append({"binding": module.uniform_binding,
                                "resource": {"buffer": ubuf, "offset": 0, "size": len(packed)}})
            if module.grid_binding is not None:
                gbuf = self.device.create_buffer_with_data(data=grid_words(d.groups, dispatched), usage=wgpu.BufferUsage.UNIFORM)
                entries.append({"binding": module.grid_binding, "resource": {"buffer": gbuf, "offset": 0, "size": 16}})
            state = _State(variant, None, ubuf, packed, entries, groups=groups)
            self._bind_group(state, k.name)
            self._release_dropped()
        except GoldyError:
            raise
        except Exception as e:
            raise BackendError(f"wgpu: cannot bind the arguments of kernel `{k.name}`: {e}") from None
        d.state = state

    def _batches(self, d: Dispatch) -> bool:
        """Whether a dispatch runs the batched entry: a 1-D grid of at least
        `batch_min_threads` threads (where every multiprocessor stays busy with a quarter
        of the workgroups)."""
        wx, wy, wz = d.kernel.workgroup_size
        return d.groups[1] == 1 and d.groups[2] == 1 and d.groups[0] * wx * wy * wz >= self.batch_min_threads

    def _bind_group(self, st: _State, kname: str) -> None:
        """(Re)build the bind group: the recorded entries plus, for a checked kernel, the
        current error buffer (its slot is chosen per submit by the dynamic offset)."""
        entries = list(st.entries)
        fb = st.variant.module.fault_binding
        with self._lock:  # a record may run while another thread submits (and grows the buffer)
            if fb is not None:
                if self._faults is None:
                    self._grow_faults(64)
                entries.append({"binding": fb, "resource": {"buffer": self._faults, "offset": 0,
                                                            "size": 4 * FAULT_WORDS}})
                st.fault_gen = self._fault_gen
            try:
                st.bind_group = self.device.create_bind_group(layout=st.variant.layout, entries=entries)
            except Exception as e:
                raise BackendError(f"wgpu: cannot bind the arguments of kernel `{kname}`: {e}") from None

    def _release_dropped(self) -> None:
        """wgpu-native frees dropped buffers and bind groups only at a queue submit (polling
        is not enough), so schemes recorded and dropped without a submit would hold ~3 KB
        each for good: an empty submit every RELEASE_EVERY records lets them go."""
        with self._lock:
            self._records_unsubmitted += 1
            if self._records_unsubmitted >= RELEASE_EVERY:
                self._records_unsubmitted = 0
                self.queue.submit([])

    def _grow_faults(self, slots: int) -> None:
        """An error buffer of at least `slots` slots (doubling); bind groups holding the old
        one are rebuilt before their next use (`fault_gen`)."""
        slots = max(slots, 2 * self._fault_slots)
        size = slots * self._fault_stride
        u = wgpu.BufferUsage
        try:
            faults = self.device.create_buffer(size=size, usage=u.STORAGE | u.COPY_SRC | u.COPY_DST)
            read = self.device.create_buffer(size=size, usage=u.COPY_DST | u.MAP_READ)
        except Exception as e:
            raise BackendError(f"wgpu: cannot allocate the error words of {slots} dispatches: {e}") from None
        # the old buffers are dropped, not destroyed: bind groups of dispatches outside this
        # submit still hold them until they are rebuilt
        self._faults, self._fault_read, self._fault_slots = faults, read, slots
        self._fault_gen += 1

    @staticmethod
    def _aliased_reads(k: N.Kernel, args: list) -> frozenset:
        """Read-only parameters whose buffer is also bound writable in this dispatch: WebGPU
        rejects mixing read-only and writable bindings of one buffer, so those are declared
        read_write (the kernel still only reads them)."""
        writable = {id(a.handle) for p, a in zip(k.params, args)
                    if p.category in N.WRITABLE_CATEGORIES and hasattr(a, "handle")}
        return frozenset(i for i, (p, a) in enumerate(zip(k.params, args))
                         if p.category in ("read", "tensor") and hasattr(a, "handle") and id(a.handle) in writable)

    def _buffer_range(self, h: _Buf, offset: int, length: int, stride: int, pname: str, kname: str):
        """A binding covering elements [offset, offset + length) and the element offset of
        `offset` inside it: bindings must start at a multiple of the device's alignment."""
        byte = offset * stride
        start = byte - byte % self._align
        if (byte - start) % stride:
            start = 0
        size = max(stride, (byte - start) + length * stride)
        if start + size > h.size:
            if length:
                raise BackendError(f"kernel `{kname}` parameter `{pname}`: elements {offset}..{offset + length} "
                                   f"lie outside a buffer of {h.size} bytes")
            return {"buffer": self._dummy(stride), "offset": 0, "size": stride}, 0
        if size > self._max_binding:
            raise DeviceLimitError(f"kernel `{kname}` parameter `{pname}`: a binding of {size} bytes exceeds "
                                   f"the device's max storage buffer binding size ({self._max_binding} bytes)")
        return {"buffer": h.buffer, "offset": start, "size": size}, (byte - start) // stride

    def _dummy(self, size: int) -> Any:
        """A buffer for empty bindings (a binding must hold at least one element)."""
        buf = self._dummies.get(size)
        if buf is None:
            u = wgpu.BufferUsage
            buf = self._dummies[size] = self.device.create_buffer(size=size, usage=u.STORAGE)
        return buf

    def update_scalar(self, d: Dispatch, index: int) -> None:
        self.update_scalars(d, (index,))

    def update_scalars(self, d: Dispatch, indices) -> None:
        """The changed scalars into the packed uniform words, then one write of the span
        they cover (a write_buffer costs ~10 us of wgpu-py: one per dispatch, not per scalar)."""
        if any(q is d for q in self._queued):  # a waiting launch reads the old value
            self._flush()
        st: _State = d.state
        lo, hi = None, 0
        for f in st.variant.module.uniform_fields:
            if f.param in indices and f.kind == "scalar":
                a = d.args[f.param]
                assert isinstance(a, ScalarArg)
                st.packed[f.offset:f.offset + 4] = _scalar_bytes(a)
                lo, hi = f.offset if lo is None else min(lo, f.offset), max(hi, f.offset + 4)
        if lo is None:
            return
        try:
            self.queue.write_buffer(st.uniform, lo, st.packed[lo:hi])
        except Exception as e:
            raise BackendError(f"wgpu: cannot update parameter of kernel `{d.kernel.name}`: {e}") from None

    def submit(self, dispatches: list[Dispatch]) -> Optional[list[FaultReport]]:
        if not dispatches:
            return None
        with self._lock:
            self._flush()
            return self._submit(dispatches)

    def launch(self, d: Dispatch) -> None:
        with self._lock:
            if d.state is None:
                self.record(d)
            self._queued.append(d)
            if len(self._queued) >= MAX_QUEUED:
                self._flush()

    def synchronize(self) -> list:
        with self._lock:
            self._flush()
            late, self._late = self._late, []
        return late

    def _flush(self) -> None:
        """Run the waiting eager launches (one submit, which waits) and keep their faults."""
        if not self._queued:
            return
        with self._lock:
            q, self._queued = self._queued, []
            faults = self._submit(q) if q else None
            self._late.extend((q[f.dispatch], f) for f in faults or ())

    def _submit(self, dispatches: list[Dispatch]) -> Optional[list[FaultReport]]:
        self._records_unsubmitted = 0
        try:
            for d in dispatches:
                if d.state is None:
                    self.record(d)
            checked = [i for i, d in enumerate(dispatches) if d.state.variant.module.fault_binding is not None]
            if len(checked) > self._fault_slots:
                self._grow_faults(len(checked))
            slot = {i: n for n, i in enumerate(checked)}
            used = len(checked) * self._fault_stride
            enc = self.device.create_command_encoder()
            if checked:
                enc.clear_buffer(self._faults, 0, used)
            cpass = enc.begin_compute_pass()
            for i, d in enumerate(dispatches):
                st: _State = d.state
                cpass.set_pipeline(st.variant.pipeline)
                if i in slot:
                    if st.fault_gen != self._fault_gen:
                        self._bind_group(st, d.kernel.name)
                    cpass.set_bind_group(0, st.bind_group, [slot[i] * self._fault_stride])
                else:
                    cpass.set_bind_group(0, st.bind_group)
                cpass.dispatch_workgroups(*st.groups)
            cpass.end()
            if not checked:
                enc.copy_buffer_to_buffer(self._fence_src, 0, self._fence_dst, 0, 4)
                self.queue.submit([enc.finish()])
                self._read_back("_fence_dst", 0, 0)
                return None
            # all error words in one copy; mapping them waits for the whole submission
            assert self._fault_read is not None
            enc.copy_buffer_to_buffer(self._faults, 0, self._fault_read, 0, used)
            self.queue.submit([enc.finish()])
            raw = self._read_back("_fault_read", 0, used)
        except GoldyError:
            raise
        except Exception as e:
            names = ", ".join(dict.fromkeys(d.kernel.name for d in dispatches))
            raise BackendError(f"wgpu: submit of {len(dispatches)} dispatch(es) ({names}) failed: {e}") from None
        words = self._fault_stride // 4
        every = struct.unpack(f"<{len(checked) * words}I", raw)
        return A.decode_faults(every, words, [(i, dispatches[i].compiled.abi) for i in checked])

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for b in list(self._dummies.values()) + [self._staging, self._fence_src, self._fence_dst, self._faults,
                                                 self._fault_read]:
            if b is not None:
                b.destroy()
        self._dummies.clear()
        try:
            self.device.destroy()
        except Exception:
            pass


def _scalar_bytes(a: ScalarArg) -> bytes:
    if a.ty == "f32":
        return struct.pack("<f", a.value)
    if a.ty == "i32":
        return struct.pack("<i", int(a.value))
    return struct.pack("<I", int(a.value))


_LOCATION = re.compile(r"wgsl:(\d+):(\d+)")


def shader_error_message(module: WgslModule, detail: str) -> str:
    """A naga or driver error, with the generated WGSL line(s) it names and the Rust span
    each came from."""
    lines = module.code.split("\n")
    out = [f"wgpu rejected the WGSL generated for kernel `{module.kernel}` ({module.source_file}):"]
    text = detail.strip()
    out += ["  " + s for s in text.split("\n") if s.strip()][:30]
    seen = set()
    for m in _LOCATION.finditer(text):
        ln = int(m.group(1))
        if ln in seen or not 1 <= ln <= len(lines):
            continue
        seen.add(ln)
        out.append(f"generated WGSL line {ln}: {lines[ln - 1].strip()}")
        sp = module.span_of_line(ln)
        if sp is not None:
            out.append(f"  from the Rust source at {module.source_file}:{sp.line}:{sp.col}")
        else:
            out.append("  (support code generated by goldy-import, not a line of the kernel)")
    out.append("this is a bug in goldy-import's WGSL emitter or in the driver; please report it with the kernel")
    return "\n".join(out)


BACKEND = WgpuBackend


LLVMPIPE_MAX_NESTING = 64  # levels of control flow the wgpu backend takes on llvmpipe (wrong past ~78)


def control_depth(body: list) -> int:
    """The deepest nesting of `if`/loops in `body`, as the emitted code nests it (an `else if`
    is an `if` inside the `else`)."""
    return max((1 + max(control_depth(b) for b in bodies) for bodies in map(N.child_bodies, body) if bodies),
               default=0)
