"""The slang backend: canonical Slang compiled by the real Slang compiler through slangpy.

`SlangBackend(device_type="cpu" | "vulkan" | "cuda" | "auto")`. slangpy's CPU device runs
everywhere: Slang compiles the kernel to C++, a host C++ compiler (gcc/clang) builds it,
and a dispatch runs its workgroups one after another on the calling thread, each
workgroup's threads in sequence. That target has no barrier, so a kernel that
synchronises its workgroup is compiled there in the lane-serial form
(codegen/slang/lanes.py); every other kernel, and every kernel on Vulkan or CUDA, runs as
the canonical source plus the standard wrapper entry (codegen/slang/emitter.py).

Trapping checks: a kernel whose IR carries check sites (ir/checks.py) takes a
`GoldyFaults` error word (ir/abi.py `ERROR_WORD`). Each submit gives every such dispatch its own slot of one
error buffer (cleared by the command encoder before the dispatches), reads the buffer
back once after the wait, and returns a FaultReport per slot whose flag is set. Kernels
without sites (checks off, or every check proven) bind no error word at all. The first
failure of a dispatch wins through InterlockedCompareExchange on Vulkan/CUDA; slangpy's
CPU device has no atomics but runs a dispatch serially, so there the flag is tested and
set with plain accesses (goldy_abi.slang `_goldy_fault`). Accesses the check pass proved
in range (check == -1) keep the silent guard of the ABI types (load 0, store dropped).
"""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from goldy_import.codegen import slang as S
from goldy_import.codegen.slang.lanes import emit_lane_serial
from goldy_import.errors import BackendError, BackendUnavailable
from goldy_import.ir import abi as A
from goldy_import.ir import nodes as N
from goldy_import.ir.abi import FAULT_WORDS, FAULTS

from .quiet import slang_log_to_logging
from .backend import Backend, CompileOptions, Dispatch, FaultReport, ScalarArg

_INSTALL = "install slangpy (`pip install slangpy`; the wheel carries the Slang compiler)"
_FAULT_BUF, _FAULT_OFF = (m for m, _ in A.FAULTS_MEMBERS)  # GoldyFaults' members


def _slangpy():
    try:
        import slangpy
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise BackendUnavailable(f"the slang backend needs slangpy: {_INSTALL} ({e})") from e
    return slangpy


_probe: dict[str, bool] = {}


def available(device_type: str = "cpu") -> bool:
    """Whether slangpy imports and can open a device of this type (probed once)."""
    if device_type not in _probe:
        try:
            SlangBackend(device_type=device_type).close()
            _probe[device_type] = True
        except Exception:
            _probe[device_type] = False
    return _probe[device_type]


@dataclass
class Compiled:
    kernel: Any  # slangpy.ComputeKernel
    lane_serial: bool  # one [numthreads(1,1,1)] invocation per workgroup
    workgroup_size: tuple[int, int, int]
    source: str
    abi: A.SlangPlan  # the argument block's fields and the error word (ir/abi.py), made once

    @property
    def checked(self) -> bool:  # binds an error word (the IR has trapping-check sites)
        return self.abi.checked


def _default_shader_cache() -> Optional[str]:
    """Slang's own shader cache, inside the goldy-import disk cache (goldy_import/cache.py),
    in a folder per toolchain so a changed goldy-import starts it afresh."""
    from goldy_import import cache
    return os.path.join(cache.directory(), "slang", cache.toolchain()) if cache.enabled() else None


class SlangBackend(Backend):
    name = "slang"
    lowering = "slang"

    def __init__(self, device_type: str = "cpu", cache_dir: Optional[str] = None):
        spy = _slangpy()
        kinds = {"cpu": spy.DeviceType.cpu, "vulkan": spy.DeviceType.vulkan, "cuda": spy.DeviceType.cuda}
        order = ["cuda", "vulkan", "cpu"] if device_type == "auto" else [device_type]
        if any(k not in kinds for k in order):
            raise BackendError(f"slang backend: unknown device_type {device_type!r} (cpu, vulkan, cuda or auto)")
        def opts(kind: str) -> Any:
            return spy.SlangCompilerOptions({
                "include_paths": [S.ABI_DIR],
                # no contraction of a * b + c into an fma (docs/semantics.md, Floats)
                "floating_point_mode": spy.SlangFloatingPointMode.precise,
                # the CPU device compiles through a C++ compiler, whose optimiser takes minutes
                # on a large unrolled kernel (matmul_fast: 325 s) and a third of the suite's
                # slang time otherwise; the GPU devices keep Slang's default
                **({"optimization": spy.SlangOptimizationLevel.none} if kind == "cpu" else {}),
            })
        cache = cache_dir or os.environ.get("GOLDY_SLANG_CACHE") or _default_shader_cache()
        errors = []
        device: Any = None
        for kind in order:
            try:
                with slang_log_to_logging(spy):  # its "[WARN] No supported shader model" is no error
                    device = spy.Device(type=kinds[kind], compiler_options=opts(kind), enable_hot_reload=False,
                                        shader_cache_path=cache)
                self.device_type = kind
                break
            except Exception as e:  # slangpy raises RuntimeError with the driver's reason
                errors.append(f"{kind}: {str(e).splitlines()[0] if str(e) else type(e).__name__}")
        if device is None:
            raise BackendUnavailable("slang backend: no device could be opened (" + "; ".join(errors) + ")")
        self.device: Any = device
        self._spy = spy
        self._usage = (spy.BufferUsage.shader_resource | spy.BufferUsage.unordered_access
                       | spy.BufferUsage.copy_source | spy.BufferUsage.copy_destination)
        self._lock = threading.Lock()
        self._fault_buf: Any = None  # the error words of the checked dispatches of a submit
        self._fault_slots = 0

    def describe(self) -> str:
        return f"{self.device.info.adapter_name} via slangpy ({self.device_type})"

    # -- memory
    def alloc(self, nbytes: int) -> Any:
        size = max(16, (nbytes + 15) // 16 * 16)
        return self.device.create_buffer(size=size, usage=self._usage, data=np.zeros(size, np.uint8))

    def free(self, handle: Any) -> None:
        pass  # slangpy releases the buffer with its last reference

    def write(self, handle: Any, offset: int, data: memoryview) -> None:
        arr = np.array(np.frombuffer(data, dtype=np.uint8))  # writable copy (nanobind refuses read-only)
        if arr.size == 0:
            return
        enc = self.device.create_command_encoder()
        enc.upload_buffer_data(handle, offset, arr)
        self.device.submit_command_buffer(enc.finish())
        self.device.wait_for_idle()

    def read(self, handle: Any, offset: int, nbytes: int) -> bytes:
        self.device.wait_for_idle()
        raw = np.asarray(handle.to_numpy()).view(np.uint8).reshape(-1)
        return raw[offset:offset + nbytes].tobytes()

    # -- kernels
    def source_for(self, kernel: N.Kernel) -> tuple[str, bool]:
        """The Slang module this device compiles for `kernel`, and whether it is lane-serial."""
        if self.device_type == "cpu" and S.uses_barriers(kernel):
            if isinstance(kernel, S.HandwrittenKernel):
                raise BackendError(
                    f"kernel `{kernel.name}`: hand-written Slang with workgroup barriers cannot run on slangpy's CPU "
                    "device (its C++ target has no barrier); use device_type='vulkan' or 'cuda', or import the "
                    "kernel from Rust so it can be serialised")
            return emit_lane_serial(kernel), True
        return S.emit_wrapper_from_kernel_def(kernel), False

    def compile(self, kernel: N.Kernel, options: CompileOptions) -> Any:
        src, serial = self.source_for(kernel)
        digest = hashlib.sha256(src.encode()).hexdigest()[:16]
        try:
            with slang_log_to_logging(self._spy):
                module = self.device.load_module_from_source(f"goldy_{kernel.name}_{digest}", src)
                program = self.device.link_program([module], [module.entry_point(S.ENTRY_POINT)])
                ck = self.device.create_compute_kernel(program)
        except Exception as e:
            raise BackendError(f"kernel `{kernel.name}`: the Slang compiler rejected the generated source:\n{e}") from e
        return Compiled(ck, serial, tuple(kernel.workgroup_size), src, A.plan(kernel, "slang"))

    def _bind(self, d: Dispatch) -> dict:
        """The `_goldy_args` block's values, field by field of the ABI plan (the error word
        is set per submit)."""
        args: dict[str, Any] = {}
        names = S.Names(d.kernel)
        for f in d.compiled.abi.fields:
            if f.param < 0:
                continue
            p, a = d.kernel.params[f.param], d.args[f.param]
            key = names(p.name)
            try:
                if f.role == "resource":
                    args[key] = {m: _member(role, a) for m, role in f.members}
                elif f.role == "scalar":
                    args[key] = _scalar(a)
                else:  # a uniform struct: a one-element buffer
                    buf = self.alloc(len(a.data))
                    self.write(buf, 0, memoryview(a.data))
                    args[key] = buf
            except AttributeError:
                raise BackendError(f"kernel `{d.kernel.name}`: cannot bind {type(a).__name__} to `{p.name}`") from None
        args[A.NWG_FIELD] = list(d.groups)
        return args

    def record(self, d: Dispatch) -> None:
        d.state = self._bind(d)

    def update_scalar(self, d: Dispatch, index: int) -> None:
        p, a = d.kernel.params[index], d.args[index]
        assert isinstance(a, ScalarArg)
        d.state[S.Names(d.kernel)(p.name)] = _scalar(a)

    def _fault_words(self, slots: int) -> Any:
        """The error buffer, `slots` slots of FAULT_WORDS u32 (grown, never shrunk)."""
        if slots > self._fault_slots:
            self._fault_slots = max(slots, 2 * self._fault_slots)
            self._fault_buf = self.alloc(4 * FAULT_WORDS * self._fault_slots)
        return self._fault_buf

    def submit(self, dispatches: list[Dispatch]) -> Optional[list[FaultReport]]:
        if not dispatches:
            return None
        with self._lock:
            enc = self.device.create_command_encoder()
            checked = [i for i, d in enumerate(dispatches) if d.compiled.checked]
            words: Any = None
            if checked:
                words = self._fault_words(len(checked))
                enc.clear_buffer(words)
            slot = {i: n for n, i in enumerate(checked)}
            for i, d in enumerate(dispatches):
                c: Compiled = d.compiled
                if d.state is None:
                    d.state = self._bind(d)
                if c.checked:
                    d.state[FAULTS] = {_FAULT_BUF: words, _FAULT_OFF: FAULT_WORDS * slot[i]}
                gx, gy, gz = d.groups
                if c.lane_serial:
                    threads = [gx, gy, gz]
                else:
                    wx, wy, wz = c.workgroup_size
                    threads = [gx * wx, gy * wy, gz * wz]
                try:
                    c.kernel.dispatch(thread_count=threads, vars={"_goldy_args": d.state}, command_encoder=enc)
                except Exception as e:
                    raise BackendError(f"kernel `{d.kernel.name}` ({d.label}): dispatch failed: {e}") from e
            self.device.submit_command_buffer(enc.finish())
            self.device.wait_for_idle()
            if not checked:
                return None
            raw = np.asarray(words.to_numpy()).view(np.uint32).reshape(-1)
        return A.decode_faults(raw, FAULT_WORDS, [(i, dispatches[i].compiled.abi) for i in checked])

    def close(self) -> None:
        # Drop our reference rather than calling slangpy's `Device.close()`: buffers and
        # compiled kernels the user (or a cache) still holds refer to the device, and their
        # destructors running after an explicit close crashed the process later, in an
        # unrelated compile on another device. slangpy destroys the device with its last object.
        self.device = None


def _member(role: str, a: Any) -> Any:
    """The value of one member of a resource's goldy_abi struct, from its bound argument."""
    if role == "layout":
        return dict(zip(A.TENSOR_LAYOUT, (int(v) for v in a.layout)))
    return getattr(a, A.ARG_FIELD[role])


def _scalar(a: ScalarArg) -> Any:
    if a.ty == "f32":
        return float(np.float32(a.value))
    if a.ty == "bool":
        return bool(a.value)
    return int(a.value)


BACKEND = SlangBackend
