"""Device-independent runtime: devices, buffers, prepared kernels, schemes, validation.

Everything a user passes is checked here, before a backend sees it, and every failure is
a GoldyError naming the kernel, the parameter, what was expected and what was given.
Nothing is recorded when validation fails.
"""

from __future__ import annotations

import hashlib
import importlib
import logging
import os
import struct
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Union

import numpy as np

from goldy_import.errors import (AliasingError, BackendError, BackendUnavailable, BindingError, DeviceLimitError,
                                 GoldyError, GridError, KernelFault)
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir import pipeline
from goldy_import.ir.serialize import to_json
from goldy_import.envflag import env_flag

from . import dtypes as DT
from . import host_input as H
from .tensor import TensorView, bind_tensor, check_contracts
from .temporaries import SchemeTemporaries, TemporaryHandle, has_temporaries
from . import eager
from .backend import (Backend, BufferArg, CompileOptions, Dispatch, ImageArg, Limits, ScalarArg, storage_bindings,
                      UniformArg)

log = logging.getLogger("goldy_import")

BACKEND_NAMES = ("cpu", "wgpu", "cuda", "slang")
GRID_AXIS_THREADS = 1 << 32  # global_id() components are u32 (docs/semantics.md)
_F32 = struct.Struct("<f")
_INT_TYPES = frozenset(("u32", "i32"))
INSTALL_HINTS = {
    "wgpu": "pip install 'goldy-import[wgpu]' (wgpu-py) and a Vulkan, Metal or DX12 driver "
            "(on Debian: apt-get install mesa-vulkan-drivers for lavapipe)",
    "cuda": "pip install 'goldy-import[cuda]' (cuda-python) on a machine with an NVIDIA GPU and driver",
    "slang": "pip install 'goldy-import[slang]' (slangpy)",
}


def _load_backend_module(name: str) -> Any:
    try:
        return importlib.import_module(f"goldy_import.runtime.{name}")
    except ImportError as e:
        raise BackendUnavailable(
            f"backend `{name}` is not available: {e}; install it with: {INSTALL_HINTS.get(name, '')}") from None


def parse_device_name(name: str) -> tuple[str, dict]:
    """`"cuda:1"` -> ("cuda", {"device": 1}); a bare backend name -> (name, {}). Only cuda
    takes an ordinal (the backend raises BackendUnavailable when that GPU is not there)."""
    base, sep, ordinal = name.lower().partition(":")
    if not sep:
        return base, {}
    if base != "cuda" or not ordinal.isdigit():
        raise BackendUnavailable(f"device name {name!r}: only cuda takes a device ordinal "
                                 f"(`cuda:0`, `cuda:1`, ...); expected one of {', '.join(BACKEND_NAMES)} or 'auto'")
    return base, {"device": int(ordinal)}


def backend_available(name: str) -> bool:
    try:
        name, _ = parse_device_name(name)
        mod = _load_backend_module(name)
    except GoldyError:
        return False
    probe = getattr(mod, "available", None)
    try:
        return bool(probe()) if probe is not None else True
    except Exception:  # a probe must never take the caller down
        return False


class Device:
    """A place to run kernels: `Device("cpu" | "wgpu" | "cuda" | "cuda:N" | "slang" | "auto", **options)`.

    `auto` takes `$GOLDY_BACKEND` if set, else CUDA if a GPU is there, else a hardware wgpu
    adapter, else the CPU; `device.backend_name` says which (also logged), `device.name`
    the backend with its GPU ordinal (`cuda:1`)."""

    def __init__(self, backend: str = "auto", **options: Any):
        if not isinstance(backend, str):
            raise BindingError(f"Device(backend): expected one of {', '.join(BACKEND_NAMES)} or 'auto', got {backend!r}")
        name = backend.lower()
        asked = repr(backend)
        if name == "auto":
            name = self._pick_auto()
            if os.environ.get("GOLDY_BACKEND"):
                asked = f"{os.environ['GOLDY_BACKEND']!r} (from GOLDY_BACKEND={os.environ['GOLDY_BACKEND']})"
        name, parsed = parse_device_name(name)
        if name not in BACKEND_NAMES:
            raise BackendUnavailable(
                f"unknown backend {asked}: expected one of {', '.join(BACKEND_NAMES)} or 'auto'")
        options = {**parsed, **options}
        mod = _load_backend_module(name)
        try:
            self.backend: Backend = mod.BACKEND(**options)
        except GoldyError:
            raise
        except TypeError as e:
            raise BindingError(f"Device({name!r}): bad option: {e}") from None
        self.backend_name = name
        self.name = f"{name}:{self.backend.ordinal}" if hasattr(self.backend, "ordinal") else name
        self.closed = False
        self._kernel_cache: dict[tuple, Any] = {}
        self._variants: Any = None  # runtime/specialization.py VariantCache, on first use
        self._live_blocks: list = []  # runtime/live_scalars.py: blocks of schemes that are gone, for the next
        self._lock = threading.RLock()
        self._next_id = 0
        self._pending: list = []  # eager.Submission handles not waited for yet
        self._eager_faults: list = []  # (Dispatch, FaultReport) of eager launches, raised at the next wait
        self._eager_launches = 0  # eager launches since the last synchronize
        self._frees = 0  # buffers freed so far: a scheme re-checks its buffers when this moves
        if log.isEnabledFor(logging.INFO):  # (describe() would wait for a device still opening)
            log.info("goldy_import: using %s backend (%s)", name, self.backend.describe())

    @staticmethod
    def _pick_auto() -> str:
        env = os.environ.get("GOLDY_BACKEND")
        if env:
            return env.lower()
        if backend_available("cuda"):
            return "cuda"
        try:
            mod = importlib.import_module("goldy_import.runtime.wgpu")
            hw = getattr(mod, "hardware_adapter_available", None)
            if hw is not None and hw():
                return "wgpu"
        except Exception:
            pass
        return "cpu"

    def __repr__(self) -> str:
        return f"Device({self.backend_name!r}: {self.backend.describe()})"

    def describe(self) -> str:
        return f"{self.backend_name}: {self.backend.describe()}"

    @property
    def limits(self) -> Limits:
        """What the device allows (workgroup sizes, storage, buffer bytes, grid extents)."""
        return self.backend.limits

    def _check_open(self) -> None:
        if self.closed:
            raise GoldyError(f"device {self.backend_name} is closed")

    def _using(self, buffers: Sequence[Any] = (), what: str = "") -> "_Using":
        """The device lock for one backend call, checked once it is held: a close or a
        free on another thread waits for the call, and a call after it is refused."""
        return _Using(self, buffers, what)

    def close(self) -> None:
        """Finish pending work, then release the device; a fault nobody observed yet is
        raised after the device is closed."""
        error = None
        if not self.closed:
            try:
                eager.synchronize(self)
            except GoldyError as e:
                error = e
        with self._lock:  # after any backend call in flight
            if not self.closed:
                self.closed = True
                self._kernel_cache.clear()
                self.backend.close()
        if error is not None:
            raise error

    def synchronize(self) -> None:
        """Wait for every pending submit and eager launch; raise the first KernelFault
        not raised yet (an eager launch's names its kernel)."""
        self._check_open()
        eager.synchronize(self)

    def use_stream(self, stream: Any) -> None:
        """CUDA: queue this device's work on an external stream (a torch or CuPy stream, or
        its handle as an int), ordered with the caller's work there without a device-wide
        sync; `None` goes back to the device's own stream."""
        self._check_open()
        fn = getattr(self.backend, "use_stream", None)
        if fn is None:
            raise BindingError(f"the {self.backend_name} backend has no streams to share; use_stream is for cuda")
        with self._lock:
            fn(stream)

    def __enter__(self) -> "Device":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- buffers

    def buffer(self, array: Any, *, read_only: bool = False) -> "Buffer":
        """A device buffer holding a copy of a 1-D array of u32/i32/f32/bool, or of a
        structured array (the fields of a `#[goldy::gpu]` struct, packed or GPU-laid)."""
        self._check_open()
        read_only = H.flag("device.buffer(read_only=)", read_only)
        arr = H.host_array("device.buffer", array)
        if arr.ndim != 1:
            if arr.ndim == 0:
                raise BindingError(f"device.buffer: expected a 1-D array, got a 0-d array ({arr.dtype})")
            arr = arr.reshape(-1)
        elem, gpu_dtype, data = _gpu_array(arr)
        buf = self._alloc(len(arr), elem, gpu_dtype, read_only)
        if len(arr):
            with self._using() as backend:
                backend.write(buf.handle, 0, memoryview(np.ascontiguousarray(data)).cast("B"))
        return buf

    def empty(self, n: int, dtype: Any = np.float32, *, read_only: bool = False) -> "Buffer":
        """A buffer of `n` elements whose contents are unspecified (zero on most backends)."""
        self._check_open()
        n = H.count("device.empty", n)
        elem, gpu_dtype, _ = _gpu_array(np.zeros(0, dtype=H.host_dtype("device.empty", dtype)))
        return self._alloc(n, elem, gpu_dtype, H.flag("device.empty(read_only=)", read_only))

    def zeros(self, n: int, dtype: Any = np.float32) -> "Buffer":
        self._check_open()
        n = H.count("device.zeros", n)
        dtype = H.host_dtype("device.zeros", dtype)
        _gpu_array(np.zeros(0, dtype=dtype))  # a supported element type
        self._check_buffer_bytes(n, dtype)  # before the host array is built
        try:
            host = np.zeros(n, dtype=dtype)
        except MemoryError:
            raise DeviceLimitError(f"out of host memory for {n} zeros of {np.dtype(dtype)} "
                                   f"(device.zeros on {self.backend_name})") from None
        return self.buffer(host)

    def image(self, array: Any) -> "Image":
        """A storage image for `gpu::DirectSpatial<E>` holding a copy of an array of shape
        (height, width) for scalar texels or (height, width, 4) for four-lane texels
        (`gpu::float4` / `uint4` / `int4`); u32, i32 or f32."""
        self._check_open()
        arr = H.host_array("device.image", array)
        if arr.ndim not in (2, 3) or (arr.ndim == 3 and arr.shape[2] != 4):
            raise BindingError(f"device.image: expected shape (height, width) or (height, width, 4), "
                               f"got {arr.shape}")
        elem = DT.scalar_ir_type(arr.dtype)
        if elem not in ("u32", "i32", "f32"):
            raise BindingError(f"device.image: texels hold float32, uint32 or int32, got {arr.dtype}")
        texel = elem if arr.ndim == 2 else T.vec(elem, 4)
        return Image(self.buffer(np.ascontiguousarray(arr).reshape(-1)), arr.shape[1], arr.shape[0], texel)

    def tensor(self, array: Any) -> TensorView:
        """A contiguous TensorView holding a copy of an array of rank 0 to 4."""
        from .tensor import tensor_from_array
        self._check_open()
        return tensor_from_array(self, array)

    def tensor_zeros(self, shape: Sequence[int], dtype: Any = np.float32) -> TensorView:
        """A contiguous TensorView of zeros of `shape` (rank 0 to 4)."""
        from .tensor import tensor_zeros
        self._check_open()
        return tensor_zeros(self, shape, dtype)

    def wrap(self, obj: Any, elem: Optional[str] = None) -> "Buffer":
        """Bind another library's device array (CuPy, PyTorch: `__cuda_array_interface__`)
        without copying. The Buffer borrows the memory; keep `obj` alive while it is used."""
        self._check_open()
        fn = getattr(self.backend, "wrap_external", None)
        if fn is None:
            raise BindingError(f"the {self.backend_name} backend cannot bind external device arrays "
                               f"({type(obj).__name__}); copy it with device.buffer(numpy_array)")
        ext = fn(obj, elem)
        return self._borrow(ext.handle, ext.length, ext.elem, tuple(ext.shape), obj)

    def _borrow(self, handle: Any, length: int, elem: str, shape: tuple, owner: Any,
                read_only: bool = False) -> "Buffer":
        """A Buffer over memory that `owner` keeps alive (and frees): wrapped or DLPack arrays."""
        with self._lock:
            self._next_id += 1
            ident = self._next_id
        dtype = DT.SCALAR_DTYPES[elem]
        alloc = _Allocation(self, handle, dtype.itemsize * length, ident, external=owner)
        buf = Buffer(alloc, 0, length, elem, dtype, read_only)
        buf.shape = shape
        return buf

    def from_dlpack(self, obj: Any) -> "Buffer":
        """A Buffer of any DLPack producer's array (`__dlpack__`: torch, numpy, CuPy, JAX):
        zero-copy where its memory is this device's (host memory on cpu, this GPU on cuda),
        else a copy through the host (wgpu, slang); runtime/dlpack.py."""
        from .dlpack import from_dlpack
        self._check_open()
        return from_dlpack(self, obj)

    def _check_buffer_bytes(self, n: int, gpu_dtype: np.dtype, elem: str = "") -> int:
        nbytes = n * gpu_dtype.itemsize
        limit = self.backend.limits.max_buffer_bytes
        if nbytes > limit:
            raise DeviceLimitError(
                f"buffer of {n} {elem or gpu_dtype} elements needs {nbytes} bytes; the {self.backend_name} device "
                f"allows at most {limit} bytes per buffer (max_buffer_bytes)")
        return nbytes

    def _alloc(self, n: int, elem: str, gpu_dtype: np.dtype, read_only: bool) -> "Buffer":
        nbytes = self._check_buffer_bytes(n, gpu_dtype, elem)
        try:
            with self._using() as backend:
                handle = backend.alloc(max(nbytes, 4))
        except GoldyError:
            raise
        except MemoryError:
            raise DeviceLimitError(f"out of memory allocating {nbytes} bytes on {self.backend_name}") from None
        with self._lock:
            self._next_id += 1
            ident = self._next_id
        alloc = _Allocation(self, handle, nbytes, ident)
        return Buffer(alloc, 0, n, elem, gpu_dtype, read_only)


class _Using:
    """`Device._using`'s context manager (a class: a generator-based one costs microseconds
    on every submit and record)."""

    __slots__ = ("device", "buffers", "what")

    def __init__(self, device: Device, buffers: Sequence[Any], what: str):
        self.device, self.buffers, self.what = device, buffers, what

    def __enter__(self) -> Backend:
        dev = self.device
        dev._lock.acquire()
        try:
            if dev.closed:
                dev._check_open()
            if self.buffers:
                _refuse_freed(self.buffers, self.what)
        except BaseException:
            dev._lock.release()
            raise
        return dev.backend

    def __exit__(self, *exc: Any) -> None:
        self.device._lock.release()


def _refuse_freed(buffers: Sequence[Any], what: Any) -> None:
    """`what` names the user (a str, or a callable making it: only a refusal needs it)."""
    for b in buffers:
        b = getattr(b, "buffer", b)  # a tensor view or an image: its buffer
        if isinstance(b, Buffer) and b._alloc.freed:
            what = what() if callable(what) else what
            raise BindingError(f"{what or repr(b)} uses a buffer that was freed")


class _Allocation:
    """One backend allocation, shared by a buffer and its views."""

    def __init__(self, device: Device, handle: Any, nbytes: int, ident: int, external: Any = None):
        self.device = device
        self.handle = handle
        self.nbytes = nbytes
        self.ident = ident
        self.freed = False
        self.external = external  # the borrowed object, for wrapped device arrays

    def address(self) -> Optional[int]:
        """Device address of the allocation where the backend exposes one (for aliasing
        checks between wrapped external arrays)."""
        if isinstance(self.handle, np.ndarray):  # cpu backend: host memory (borrowed via DLPack)
            return int(self.handle.ctypes.data)
        ptr = getattr(self.handle, "ptr", None)
        return int(ptr) if isinstance(ptr, (int, np.integer)) else None

    def free(self) -> None:
        if self.external is not None:
            self.freed = True  # borrowed memory: its owner frees it
            self.device._frees += 1
            return
        with self.device._lock:  # after any call using it; marked first, so none starts after
            if not self.freed:
                self.freed = True
                self.device._frees += 1
                if not self.device.closed:
                    self.device.backend.free(self.handle)


def _gpu_array(arr: np.ndarray) -> tuple[str, np.dtype, np.ndarray]:
    """(IR element type, device dtype, array in device layout) for a host array."""
    if arr.dtype.names is not None:
        decl = DT.decl_from_dtype(arr.dtype)
        if decl is None:
            raise BindingError(
                f"structured dtype {arr.dtype} has fields that are not u32/i32/f32 scalars, "
                f"[T; 2..4] vectors or square f32 matrices")
        gpu = DT.struct_gpu_dtype(decl)
        fields = ",".join(f"{f.name}:{f.ty}" for f in decl.fields)
        return "struct{" + fields + "}", gpu, DT.to_gpu_struct_array(arr, gpu)
    ir = DT.scalar_ir_type(arr.dtype)
    if ir is None:
        raise BindingError(
            f"unsupported buffer element type {arr.dtype}: expected float32, uint32, int32, bool "
            f"or a structured dtype of a #[goldy::gpu] struct")
    if ir == "bool":
        return "bool", DT.SCALAR_DTYPES["bool"], arr.astype(np.uint32)
    return ir, DT.SCALAR_DTYPES[ir], arr.astype(DT.SCALAR_DTYPES[ir], copy=False)


class Buffer:
    """A typed range of device memory. `buf[a:b]` is a view of the same memory."""

    def __init__(self, alloc: _Allocation, offset: int, length: int, elem: str, dtype: np.dtype,
                 read_only: bool):
        self._alloc = alloc
        self.offset = offset  # elements
        self.length = length
        self.elem = elem  # "f32" | "u32" | "i32" | "bool" | "struct{name:ty,...}"
        self.dtype = dtype  # device element dtype (structs: GPU layout)
        self.read_only = read_only
        self.shape: tuple[int, ...] = (length,)

    @property
    def device(self) -> Device:
        return self._alloc.device

    @property
    def handle(self) -> Any:
        return self._alloc.handle

    @property
    def nbytes(self) -> int:
        return self.length * self.dtype.itemsize

    @property
    def byte_range(self) -> tuple[int, int]:
        s = self.offset * self.dtype.itemsize
        return s, s + self.nbytes

    def __len__(self) -> int:
        return self.length

    def __repr__(self) -> str:
        ro = ", read_only" if self.read_only else ""
        return f"Buffer({self.length} x {self.elem} on {self.device.backend_name}{ro})"

    def _check_live(self) -> None:
        if self._alloc.freed:
            raise BindingError(f"{self!r} was freed")
        self.device._check_open()

    def __getitem__(self, item: slice) -> "Buffer":
        if not isinstance(item, slice) or item.step not in (None, 1):
            raise BindingError("buffers support contiguous slices only: buf[start:stop]")
        for bound in (item.start, item.stop):
            if bound is not None:
                H.index("buffer slice bound", bound)
        start, stop, _ = item.indices(self.length)
        return Buffer(self._alloc, self.offset + start, max(0, stop - start), self.elem, self.dtype, self.read_only)

    def view(self, start: int, length: int) -> "Buffer":
        start, length = H.index("buffer.view start", start), H.index("buffer.view length", length)
        if start < 0 or length < 0 or start + length > self.length:
            raise BindingError(f"view [{start}, {start + length}) is outside a buffer of {self.length} elements")
        return self[start:start + length]

    def numpy(self) -> np.ndarray:
        """A host copy of the contents (bool buffers come back as bool)."""
        self._check_live()
        eager.settle(self.device)
        s, _ = self.byte_range
        with self.device._using([self], f"{self!r}.numpy()") as backend:
            raw = backend.read(self.handle, s, self.nbytes) if self.length else b""
        # a backend's bytearray is this call's own copy already: no second one
        out = np.frombuffer(raw if type(raw) is bytearray else bytearray(raw), dtype=self.dtype, count=self.length)
        return out.astype(bool) if self.elem == "bool" else out

    def write(self, array: Any) -> None:
        """Overwrite the contents with an array of the same length and element type."""
        self._check_live()
        arr = H.host_array("buffer.write", array).reshape(-1)
        elem, _gpu, data = _gpu_array(arr)
        if elem != self.elem:
            raise BindingError(f"buffer.write: buffer holds {self.elem}, got {arr.dtype} ({elem})")
        if len(arr) != self.length:
            raise BindingError(f"buffer.write: buffer has {self.length} elements, got {len(arr)}")
        if self.length:
            eager.settle(self.device)
            s, _ = self.byte_range
            with self.device._using([self], f"{self!r}.write()") as backend:
                backend.write(self.handle, s, memoryview(np.ascontiguousarray(data)).cast("B"))

    def free(self) -> None:
        """Release the memory now; binding the buffer afterwards raises BindingError."""
        self._alloc.free()

    def to(self, device: Device) -> "Buffer":
        """This buffer on `device`: itself if it lives there, else a copy (runtime/dlpack.py)."""
        from .dlpack import copy_to
        if not isinstance(device, Device):
            raise BindingError(f"buffer.to(device) expects a goldy_import.Device, got {type(device).__name__}")
        return copy_to(self, device)

    def __dlpack__(self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Optional[bool] = None) -> Any:
        """DLPack export (runtime/dlpack.py): zero-copy on cpu and cuda, a host copy on wgpu/slang."""
        from .dlpack import export
        return export(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)

    def __dlpack_device__(self) -> tuple[int, int]:
        from .dlpack import dlpack_device
        return dlpack_device(self)


class Temporary(Buffer):
    """A scheme-local buffer (`scheme.temporary_buffer`, runtime/temporaries.py): it binds
    like a Buffer, its storage is assigned at submit, and its contents are never observed."""

    scheme_local = True  # what runtime/temporaries.py recognises it by

    def __init__(self, scheme: "Scheme", n: int, elem: str, dtype: np.dtype, ident: int):
        self.scheme_ref = weakref.ref(scheme)
        super().__init__(_Allocation(scheme.device, TemporaryHandle(self), n * dtype.itemsize, ident),
                         0, n, elem, dtype, False)

    def __repr__(self) -> str:
        return f"Temporary({self.length} x {self.elem} of a scheme on {self.device.backend_name})"

    def _refuse(self, what: str) -> BindingError:
        return BindingError(f"{self!r} {what}: a temporary's contents are undefined when each submit starts "
                            f"and unobservable after it; use device.empty(n) for a buffer you read back")

    def numpy(self) -> np.ndarray:
        raise self._refuse("cannot be read back")

    def write(self, array: Any) -> None:
        raise self._refuse("cannot be written from the host")

    def __getitem__(self, item: slice) -> "Buffer":
        raise self._refuse("cannot be sliced")

    def free(self) -> None:
        pass  # its storage belongs to the scheme (runtime/temporaries.py)


class Image:
    """A `width x height` storage image: row-major texels in one device buffer."""

    def __init__(self, buffer: Buffer, width: int, height: int, texel: str):
        self.buffer = buffer
        self.width = width
        self.height = height
        self.texel = texel  # IR type: "f32", "vec4<f32>", ...

    @property
    def device(self) -> Device:
        return self.buffer.device

    def __repr__(self) -> str:
        return f"Image({self.width}x{self.height} of {T.rust_name(self.texel)} on {self.device.backend_name})"

    def numpy(self) -> np.ndarray:
        flat = self.buffer.numpy()
        lanes = T.vec_len(self.texel) if T.is_vector(self.texel) else None
        return flat.reshape((self.height, self.width) + ((lanes,) if lanes else ()))

    def free(self) -> None:
        self.buffer.free()


# ---------------------------------------------------------------- kernels

CATEGORY_SPELLING = {
    "read": "&[{t}]", "read_write": "&mut [{t}]", "write": "gpu::Scattered<{t}>", "scalar": "{t}",
    "tensor": "gpu::Tensor<{t}>", "tensor_mut": "gpu::TensorMut<{t}>", "tensor_write": "gpu::TensorWrite<{t}>",
    "uniform": "gpu::Uniform<{t}>", "image": "gpu::DirectSpatial<{t}>",
}


def rust_param_type(p: N.Param) -> str:
    return CATEGORY_SPELLING[p.category].format(t=T.rust_name(p.ty))


def kernel_identity(kernel: N.Kernel) -> str:
    return hashlib.sha256(to_json(kernel, indent=None).encode()).hexdigest()[:16]


class KernelDef:
    """An imported kernel: its IR and the entry points to prepare it on a device."""

    def __init__(self, kernel: N.Kernel, source_hash: str = ""):
        self.ir = kernel
        self.name = kernel.name
        self.source_hash = source_hash
        self.identity = kernel_identity(kernel)
        self.__doc__ = kernel.doc or f"Kernel `{kernel.name}` from {kernel.source_file}."

    def __repr__(self) -> str:
        params = ", ".join(f"{p.name}: {rust_param_type(p)}" for p in self.ir.params)
        return f"<kernel {self.name}({params}) workgroup_size={list(self.ir.workgroup_size)}>"

    def prepare(self, device: Device, checks: Optional[bool] = None) -> "PreparedKernel":
        """Compile for `device` once (later calls hit the device's cache)."""
        if not isinstance(device, Device):
            raise BindingError(f"kernel `{self.name}`: prepare(device) expects a goldy_import.Device, got {type(device).__name__}")
        device._check_open()
        if getattr(self.ir, "slang_source", None) and device.backend_name != "slang":
            raise BackendError(f"kernel `{self.name}` is hand-written Slang with no retained IR: it runs on the "
                               f"slang backend only, not on {device.backend_name}")
        if checks is None:
            checks = env_flag("GOLDY_BOUNDS_CHECKS", True)
        options = CompileOptions(checks=H.flag(f"kernel `{self.name}`: prepare(checks=)", checks))
        key = (self.identity, options)
        with device._lock:
            hit = device._kernel_cache.get(key)
        if hit is not None:
            return hit
        # pure Python on the IR: outside the device lock, so a compile on another thread
        # (automatic fusion's worker) does not hold up submits
        lowered = pipeline.lower(self.ir, device.backend.lowering, checks=options.checks, extra=options.extra)
        with device._using():  # the device may have closed meanwhile
            hit = device._kernel_cache.get(key)
            if hit is None:
                target_ir = lowered.kernel
                _check_kernel_limits(self.ir, device, error_word=lowered.info.has_checks)
                _maybe_dump(target_ir)
                compiled = device.backend.compile(target_ir, options)
                hit = PreparedKernel(self, device, compiled, options, target_ir)
                device._kernel_cache[key] = hit
        return hit


def _maybe_dump(kernel: N.Kernel) -> None:
    target = os.environ.get("GOLDY_DUMP_RUST_KERNELS")
    if not target or target == "0":
        return
    directory = "goldy_kernel_dumps" if target in ("1", "true") else target
    try:
        from goldy_import.codegen import slang as slang_codegen
        dump = getattr(slang_codegen, "dump_kernel")
    except (ImportError, AttributeError):
        return
    dump(kernel, directory)


def _check_kernel_limits(k: N.Kernel, device: Device, error_word: bool = False) -> None:
    """`error_word`: the checked kernel has trapping-check sites, so the backend binds one
    more storage buffer (the per-dispatch error word)."""
    lim = device.backend.limits
    wx, wy, wz = k.workgroup_size
    where = f"kernel `{k.name}` on {device.backend_name}"
    for axis, (got, most) in enumerate(zip(k.workgroup_size, lim.max_workgroup_size)):
        if got > most:
            raise DeviceLimitError(f"{where}: workgroup size {list(k.workgroup_size)} exceeds "
                                   f"max_workgroup_size[{axis}] = {most}")
    if wx * wy * wz > lim.max_invocations_per_workgroup:
        raise DeviceLimitError(f"{where}: workgroup of {wx * wy * wz} threads exceeds "
                               f"max_invocations_per_workgroup = {lim.max_invocations_per_workgroup}")
    shared = sum(w.size * 4 for w in k.workgroup_arrays)
    if shared > lim.max_workgroup_storage_bytes:
        raise DeviceLimitError(f"{where}: workgroup arrays use {shared} bytes, exceeding "
                               f"max_workgroup_storage_bytes = {lim.max_workgroup_storage_bytes}")
    storage = storage_bindings(k, error_word)
    if storage > lim.max_storage_buffers_per_stage:
        extra = (" (one of them the trapping-check error word; prepare(device, checks=False) binds none)"
                 if error_word else "")
        raise DeviceLimitError(f"{where}: {storage} storage buffers{extra} exceed "
                               f"max_storage_buffers_per_stage = {lim.max_storage_buffers_per_stage}")


class PreparedKernel:
    """A kernel compiled for one device. `record` appends dispatches to a Scheme."""

    def __init__(self, kdef: KernelDef, device: Device, compiled: Any, options: CompileOptions,
                 target_ir: Optional[N.Kernel] = None):
        self.kdef = kdef
        self.ir = kdef.ir
        self.target_ir = target_ir if target_ir is not None else kdef.ir  # with check sites
        # per-parameter facts the record path needs, computed once
        self.settable: dict = {}  # slot or name -> parameter index set_node_param accepted (_settable_slot)
        self.where = [f"kernel `{kdef.name}` parameter `{p.name}` ({rust_param_type(p)})" for p in self.ir.params]
        self.has_contracts = any(p.shape is not None for p in self.ir.params)
        self.has_resources = any(p.category not in ("scalar", "uniform") for p in self.ir.params)
        self.has_facts = any(p.fact for p in self.ir.params)  # a `#[fact]` scalar (Scheme._has_facts)
        self.name = kdef.name
        self.device = device
        self.compiled = compiled
        self.options = options
        self._eager_categories = [p.category for p in self.ir.params]
        self._eager_plans: dict = {}  # runtime/eager.py: bound arguments of recent launches
        self._eager_last: Any = None  # runtime/eager.py: the previous launch, for a repeat of it
        self._bind_last: Any = None  # runtime/eager.py: the previous bind, for a repeat of it
        wx = self.ir.workgroup_size[0]  # over_1d(n) for 0 < n <= this is within every grid limit
        self._max_1d = min(device.backend.limits.max_workgroups[0], GRID_AXIS_THREADS // wx) * wx

    def __repr__(self) -> str:
        return f"<prepared kernel {self.name} on {self.device.backend_name}>"

    def record(self, scheme: "Scheme", label: str, *args: Any) -> "RecordBuilder":
        """Check `args` against the parameters; the grid call on the result records the node."""
        if not isinstance(scheme, Scheme):
            raise BindingError(f"kernel `{self.name}`: record(scheme, label, ...) expects a Scheme first, "
                               f"got {type(scheme).__name__}")
        if scheme.device is not self.device:
            raise BindingError(f"kernel `{self.name}`: the scheme belongs to {scheme.device!r}, "
                               f"but the kernel was prepared for {self.device!r}")
        if self.device.closed:
            self.device._check_open()
        if not isinstance(label, str):
            raise BindingError(f"kernel `{self.name}`: record(scheme, label, ...) expects a str label, "
                               f"got {type(label).__name__}")
        bound = eager.bind(self, args)  # bind_arguments, cached by argument identity
        builder = RecordBuilder(self, scheme, label, bound)
        scheme._unfinished.append(builder)  # until its grid call: submit() refuses
        return builder

    def invoke(self, *args: Any) -> "InvokeBuilder":
        """Bind arguments now and choose the grid; the result is an Invocation value."""
        return InvokeBuilder(self, eager.bind(self, args))

    def launch(self, *args: Any) -> "eager.LaunchBuilder":
        """Eager: the grid call on the result enqueues one dispatch on the device's stream
        and returns without waiting (runtime/eager.py)."""
        return eager.LaunchBuilder(self, args)


@dataclass
class Bound:
    """Validated arguments, ready for the backend."""

    args: list
    keep: list  # Python objects the args refer to (kept alive while recorded)
    tensor_numel: Optional[int] = None
    in_place: tuple = ()  # (read, written) parameter pairs bound to the same memory (ir/inplace.py)
    live_at: int = -1  # the device's count of frees when `keep` was last seen unfreed (Scheme._append)

    def __post_init__(self) -> None:
        self.scheme_local = has_temporaries(self.keep)  # binds a scheme's temporary (runtime/temporaries.py)


def _describe_value(v: Any) -> str:
    if isinstance(v, Buffer):
        return f"a Buffer of {v.elem}" + (" (read-only)" if v.read_only else "")
    if isinstance(v, np.ndarray):
        return f"a numpy array ({v.dtype}, shape {v.shape})"
    return f"{type(v).__name__} {v!r}"[:120]


def bind_arguments(pk: PreparedKernel, args: Sequence[Any]) -> Bound:
    k = pk.ir
    params = k.params
    if len(args) != len(params):
        sig = ", ".join(f"{p.name}: {rust_param_type(p)}" for p in params)
        raise BindingError(f"kernel `{k.name}` takes {len(params)} arguments ({sig}), got {len(args)}")
    if pk.has_contracts:
        check_contracts(k, args)  # before anything is bound
    out: list = []
    keep: list = []
    buffers: list[tuple[N.Param, Buffer]] = []
    views: dict[str, Any] = {}  # what makes two bindings the same view (in-place use)
    if pk.has_resources:
        args = [_adopt_external(pk, p, v) for p, v in zip(params, args)]
    for p, v, where in zip(params, args, pk.where):
        if p.category == "scalar":
            out.append(ScalarArg(p.ty, _check_scalar(where, p.ty, v)))
        elif p.category in N.BUFFER_CATEGORIES:
            buf = _check_buffer(where, p, v, pk)
            buffers.append((p, buf))
            views[p.name] = (buf.offset, buf.length, buf.elem)
            keep.append(buf)
            out.append(BufferArg(buf.handle, buf.offset, buf.length, p.ty, buf.dtype.itemsize))
        elif p.category in N.TENSOR_CATEGORIES:
            arg, buf = bind_tensor(where, p, v, pk)
            buffers.append((p, buf))
            views[p.name] = (arg.layout, p.ty)
            keep.append(v)
            out.append(arg)
        elif p.category == "uniform":
            out.append(_check_uniform(where, p, v, k))
        elif p.category == "image":
            img = _check_image(where, p, v, pk)
            buffers.append((p, img.buffer))
            keep.append(img.buffer)
            out.append(ImageArg(img.buffer.handle, img.width, img.height, p.ty))
        else:  # pragma: no cover - the verifier rejects unknown categories
            raise BindingError(f"{where}: unknown parameter category {p.category}")
    in_place = _check_aliasing(k, buffers, views, pk)
    return Bound(out, keep, in_place=tuple(in_place))


def _adopt_external(pk: PreparedKernel, p: N.Param, v: Any) -> Any:
    """CuPy arrays / PyTorch tensors on the device bind without a copy."""
    if p.category in ("scalar", "uniform") or not hasattr(v, "__cuda_array_interface__"):
        return v
    where = f"kernel `{pk.name}` parameter `{p.name}` ({rust_param_type(p)})"
    try:
        buf = pk.device.wrap(v, p.ty if p.ty in ("f32", "u32", "i32") else None)
    except BindingError as e:
        raise BindingError(f"{where}: {e}") from None
    if p.category in N.TENSOR_CATEGORIES:
        from .tensor import TensorView, _contiguous_strides
        return TensorView(buf, buf.shape, _contiguous_strides(buf.shape), 0)
    return buf


def _check_scalar(where: str, ty: str, v: Any) -> Union[int, float, bool]:
    t = type(v)  # the common cases first: a Python int or float of the right kind, in range
    if t is int and ty in _INT_TYPES:
        lo, hi = T.INT_RANGES[ty]
        if lo <= v <= hi:
            return v
    elif t is float and ty == "f32":
        try:
            return _F32.unpack(_F32.pack(v))[0]
        except (OverflowError, struct.error):
            pass  # the message below
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v.item()
    if isinstance(v, np.generic):
        v = v.item()
    if ty == "bool":
        if not isinstance(v, bool):
            raise BindingError(f"{where}: expected a bool, got {_describe_value(v)}")
        return v
    if ty in ("u32", "i32"):
        if isinstance(v, bool) or not isinstance(v, int):
            raise BindingError(f"{where}: expected an int in {T.INT_RANGES[ty][0]}..={T.INT_RANGES[ty][1]}, "
                               f"got {_describe_value(v)}")
        lo, hi = T.INT_RANGES[ty]
        if not lo <= v <= hi:
            raise BindingError(f"{where}: value {v} is out of range for {ty} ({lo}..={hi})")
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise BindingError(f"{where}: expected a float, got {_describe_value(v)}")
    try:
        return _F32.unpack(_F32.pack(float(v)))[0]  # rounds to f32; overflow raises
    except (OverflowError, struct.error):  # float(10**400), or past f32's range
        raise BindingError(f"{where}: value {v} is out of range for f32 (|x| <= 3.4028235e38)") from None


def _check_buffer(where: str, p: N.Param, v: Any, pk: PreparedKernel) -> Buffer:
    if isinstance(v, TensorView):
        v = v.as_physical_buffer(where)
    if not isinstance(v, Buffer):
        hint = " (upload it first with device.buffer(array))" if isinstance(v, np.ndarray) else ""
        raise BindingError(f"{where}: expected a Buffer of {T.rust_name(p.ty)}, got {_describe_value(v)}{hint}")
    if v._alloc.freed:
        raise BindingError(f"{where}: the buffer was freed")
    if v.device is not pk.device:
        raise BindingError(f"{where}: the buffer lives on {v.device!r}, the kernel runs on {pk.device!r}")
    if T.is_struct(p.ty):
        decl = pk.ir.struct(T.struct_name(p.ty))
        assert decl is not None
        want = "struct{" + ",".join(f"{f.name}:{f.ty}" for f in decl.fields) + "}"
        if v.elem != want:
            raise BindingError(f"{where}: expected a Buffer of {decl.name} with fields "
                               f"{', '.join(f.name + ': ' + T.rust_name(f.ty) for f in decl.fields)}, "
                               f"got a Buffer of {v.elem}")
    elif v.elem != p.ty:
        raise BindingError(f"{where}: expected a Buffer of {p.ty}, got a Buffer of {v.elem}")
    if v.read_only and p.category in N.WRITABLE_CATEGORIES:
        raise BindingError(f"{where}: the kernel writes this parameter, but the buffer is read-only")
    return v


def _check_image(where: str, p: N.Param, v: Any, pk: PreparedKernel) -> "Image":
    if not isinstance(v, Image):
        raise BindingError(f"{where}: expected an Image of {T.rust_name(p.ty)} texels (device.image(array)), "
                           f"got {_describe_value(v)}")
    if v.buffer._alloc.freed:
        raise BindingError(f"{where}: the image was freed")
    if v.device is not pk.device:
        raise BindingError(f"{where}: the image lives on {v.device!r}, the kernel runs on {pk.device!r}")
    if v.texel != p.ty:
        raise BindingError(f"{where}: expected {T.rust_name(p.ty)} texels, got {T.rust_name(v.texel)} texels")
    if v.buffer.read_only:
        raise BindingError(f"{where}: the kernel may write this image, but its buffer is read-only")
    return v


def _check_uniform(where: str, p: N.Param, v: Any, k: N.Kernel) -> UniformArg:
    decl = k.struct(T.struct_name(p.ty))
    assert decl is not None
    gpu = DT.struct_gpu_dtype(decl)
    if isinstance(v, dict):
        missing = [f.name for f in decl.fields if f.name not in v]
        extra = [n for n in v if n not in gpu.names]
        if missing or extra:
            raise BindingError(f"{where}: expected the fields {', '.join(gpu.names)}; "
                               + (f"missing {', '.join(missing)}" if missing else f"unknown {', '.join(extra)}"))
        arr = np.zeros(1, dtype=gpu)
        for f in decl.fields:
            val = np.asarray(_uniform_field(f"{where} field `{f.name}`", f.ty, v[f.name]), dtype=gpu[f.name].base)
            if T.is_matrix(f.ty) and val.shape[-1] != gpu[f.name].shape[-1]:
                arr[f.name][0][..., : val.shape[-1]] = val
            else:
                arr[f.name][0] = val
        return UniformArg(arr.tobytes(), decl.name)
    try:
        arr = np.asarray(v)
    except (ValueError, TypeError):  # ragged sequences and the like
        arr = np.zeros(0)
    if arr.dtype.names is not None and arr.size == 1:
        d = DT.decl_from_dtype(arr.dtype)
        if d is not None and [(f.name, f.ty) for f in d.fields] == [(f.name, f.ty) for f in decl.fields]:
            return UniformArg(DT.to_gpu_struct_array(arr.reshape(1), gpu).tobytes(), decl.name)
    raise BindingError(f"{where}: expected a dict of the fields of `{decl.name}` or a one-element structured "
                       f"array, got {_describe_value(v)}")


def _uniform_field(where: str, ty: str, v: Any) -> Any:
    """One field of a uniform given as a dict entry, checked like a scalar parameter (lane
    by lane for vectors and matrices): never truncated, never numpy's OverflowError."""
    where = f"{where} ({T.rust_name(ty)})"
    if T.is_scalar(ty):
        return _check_scalar(where, ty, v)
    n = T.vec_len(ty) if T.is_vector(ty) else int(ty[len("mat"):].split("<")[0].split("x")[0])
    shape = (n,) if T.is_vector(ty) else (n, n)
    try:
        arr = np.asarray(v, dtype=object)
    except (ValueError, TypeError):
        arr = np.zeros(0, dtype=object)
    if arr.shape != shape:
        raise BindingError(f"{where}: expected {'a sequence of ' + str(n) if len(shape) == 1 else f'{n} columns of {n}'} "
                           f"numbers, got {_describe_value(v)}")
    elem = T.elem_of(ty)
    return np.array([_check_scalar(where, elem, x) for x in arr.reshape(-1)], dtype=object).reshape(shape)


def _check_aliasing(k: N.Kernel, buffers: list[tuple[N.Param, Buffer]], views: Optional[dict] = None,
                    pk: Optional[PreparedKernel] = None) -> list[tuple[str, str]]:
    """Refuse overlapping bindings where one is written, except a read and a written
    parameter bound to the very same view where ir/inplace.py proves it unobservable;
    returns those (read, written) pairs."""
    in_place: list[tuple[str, str]] = []
    allocs = {id(b._alloc) for _, b in buffers}
    if len(allocs) == len(buffers) and all(b._alloc.external is None for _, b in buffers):
        return in_place  # distinct allocations of ours cannot overlap
    for i in range(len(buffers)):
        for j in range(i + 1, len(buffers)):
            (pa, a), (pb, b) = buffers[i], buffers[j]
            writes = pa.category in N.WRITABLE_CATEGORIES or pb.category in N.WRITABLE_CATEGORIES
            if not writes:
                continue
            (a0, a1), (b0, b1) = a.byte_range, b.byte_range
            if a._alloc is not b._alloc:
                pa_addr, pb_addr = a._alloc.address(), b._alloc.address()
                if pa_addr is None or pb_addr is None or (a._alloc.external is None and b._alloc.external is None):
                    continue  # distinct allocations of ours never overlap
                a0, a1, b0, b1 = a0 + pa_addr, a1 + pa_addr, b0 + pb_addr, b1 + pb_addr
            if a0 < b1 and b0 < a1 and a1 > a0 and b1 > b0:
                w = pa if pa.category in N.WRITABLE_CATEGORIES else pb
                r = pb if w is pa else pa
                why = ""
                if views is not None and (a0, a1) == (b0, b1) and views.get(pa.name) == views.get(pb.name):
                    reason = _in_place_refusal(pk, k, r.name, w.name)
                    if reason is None:
                        in_place.append((r.name, w.name))
                        continue
                    why = (f"; in-place use (one view bound to a read and a written parameter) needs every "
                           f"access to both at the thread's own index, but {reason}")
                raise AliasingError(
                    f"kernel `{k.name}`: parameters `{pa.name}` and `{pb.name}` are bound to overlapping memory "
                    f"(bytes {a0}..{a1} and {b0}..{b1} of one allocation) and `{w.name}` is written{why}; "
                    f"Rust's aliasing rule forbids this: bind separate buffers or non-overlapping views")
    return in_place


def _in_place_refusal(pk: Optional[PreparedKernel], k: N.Kernel, read: str, written: str) -> Optional[str]:
    """ir/inplace.py's verdict for one pair, computed once per prepared kernel."""
    from goldy_import.ir.inplace import refusal
    cache = getattr(pk, "_in_place", None) if pk is not None else None
    if cache is None:
        cache = {}
        if pk is not None:
            pk._in_place = cache  # type: ignore[attr-defined]
    if (read, written) not in cache:
        cache[(read, written)] = refusal(k, read, written)
    return cache[(read, written)]


def _check_in_place_grid(pk: PreparedKernel, bound: Bound, groups: tuple[int, int, int]) -> None:
    if bound.in_place and (groups[1] > 1 or groups[2] > 1):
        r, w = bound.in_place[0]
        raise AliasingError(f"kernel `{pk.name}`: `{r}` and `{w}` are bound to the same memory, which is allowed "
                            f"only on a one-dimensional grid (each thread its own `global_id().x`); got groups "
                            f"{tuple(groups)}")


def _groups_for(pk: PreparedKernel, counts: tuple[int, int, int], what: str) -> tuple[int, int, int]:
    wg = pk.ir.workgroup_size
    if type(counts[0]) is int and type(counts[1]) is int and type(counts[2]) is int \
            and counts[0] > 0 and counts[1] > 0 and counts[2] > 0:  # the common case, fast
        return (-(-counts[0] // wg[0]), -(-counts[1] // wg[1]), -(-counts[2] // wg[2]))
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, (int, np.integer)):
            raise GridError(f"kernel `{pk.name}`: {what} expects integer extents, got {counts!r}")
    if any(c <= 0 for c in counts):
        raise GridError(f"kernel `{pk.name}`: {what} with extents {tuple(int(c) for c in counts)} is an empty grid")
    return tuple(-(-int(c) // w) for c, w in zip(counts, wg))  # type: ignore[return-value]


def _check_groups(pk: PreparedKernel, groups: Any) -> tuple[int, int, int]:
    given = groups
    try:
        groups = tuple(groups)
    except TypeError:
        groups = ()  # not a sequence: refused below
    if len(groups) != 3:
        raise GridError(f"kernel `{pk.name}`: groups expects (x, y, z), got {given!r}")
    for g in groups:
        if isinstance(g, bool) or not isinstance(g, (int, np.integer)):
            raise GridError(f"kernel `{pk.name}`: groups expects integers, got {groups!r}")
    if any(g <= 0 for g in groups):
        raise GridError(f"kernel `{pk.name}`: groups {tuple(groups)} is an empty grid")
    for axis, (g, w) in enumerate(zip(groups, pk.ir.workgroup_size)):
        if g * w > GRID_AXIS_THREADS:  # every backend, before its own workgroup limits
            raise GridError(f"kernel `{pk.name}`: {g} workgroups of {w} threads along axis {'xyz'[axis]} are "
                            f"{g * w} threads, but `global_id()` is u32: at most 2^32 threads along each axis")
    lim = pk.device.backend.limits.max_workgroups
    for axis, (g, most) in enumerate(zip(groups, lim)):
        if g > most:
            raise GridError(f"kernel `{pk.name}`: {g} workgroups along axis {'xyz'[axis]} exceed the "
                            f"{pk.device.backend_name} limit max_workgroups[{axis}] = {most}")
    return (int(groups[0]), int(groups[1]), int(groups[2]))


class _GridMixin:
    """over_1d / over_2d / over_3d / over_tensor / groups: turn extents into workgroups."""

    pk: PreparedKernel

    def _groups_1d(self, n: int) -> tuple[int, int, int]:
        return _groups_for(self.pk, (n, 1, 1), f"over_1d({n})")

    def _groups_2d(self, w: int, h: int) -> tuple[int, int, int]:
        return _groups_for(self.pk, (w, h, 1), f"over_2d({w}, {h})")

    def _groups_3d(self, w: int, h: int, d: int) -> tuple[int, int, int]:
        return _groups_for(self.pk, (w, h, d), f"over_3d({w}, {h}, {d})")

    def _groups_tensor(self, view: Any) -> tuple[int, int, int]:
        numel = getattr(view, "numel", None)
        if numel is None:
            raise GridError(f"kernel `{self.pk.name}`: over_tensor expects a TensorView, got {_describe_value(view)}")
        return self._groups_1d(int(numel))


class RecordBuilder(_GridMixin):
    """Returned by `record`; its grid call appends the node (no grid call, no node)."""

    def __init__(self, pk: PreparedKernel, scheme: "Scheme", label: str, bound: Bound):
        self.pk, self.scheme, self.label, self.bound = pk, scheme, label, bound

    def over_1d(self, n: int) -> "Node":
        if type(n) is int and 0 < n <= self.pk._max_1d:  # the common case: counted here, within the limits
            return self._grid(None, (-(-n // self.pk.ir.workgroup_size[0]), 1, 1))
        return self._grid(lambda: self._groups_1d(n))

    def over_2d(self, w: int, h: int) -> "Node":
        return self._grid(lambda: self._groups_2d(w, h))

    def over_3d(self, w: int, h: int, d: int) -> "Node":
        return self._grid(lambda: self._groups_3d(w, h, d))

    def over_tensor(self, view: Any) -> "Node":
        return self._grid(lambda: self._groups_tensor(view))

    def groups(self, groups: tuple[int, int, int]) -> "Node":
        return self._grid(lambda: groups)

    def _grid(self, groups: Any, checked: Optional[tuple] = None) -> "Node":
        try:
            if checked is None:
                checked = _check_groups(self.pk, groups())
            _check_in_place_grid(self.pk, self.bound, checked)
            return self.scheme._append(self.pk, self.label, self.bound, checked)
        finally:  # recorded, or refused with an error the caller saw: no longer unfinished
            if self in self.scheme._unfinished:
                self.scheme._unfinished.remove(self)


class InvokeBuilder(_GridMixin):
    """Returned by `invoke`; its grid call gives an Invocation value."""

    def __init__(self, pk: PreparedKernel, bound: Bound):
        self.pk, self.bound = pk, bound

    def over_1d(self, n: int) -> "Invocation":
        return self.groups(self._groups_1d(n))

    def over_2d(self, w: int, h: int) -> "Invocation":
        return self.groups(self._groups_2d(w, h))

    def over_3d(self, w: int, h: int, d: int) -> "Invocation":
        return self.groups(self._groups_3d(w, h, d))

    def over_tensor(self, view: Any) -> "Invocation":
        return self.groups(self._groups_tensor(view))

    def groups(self, groups: tuple[int, int, int]) -> "Invocation":
        checked = _check_groups(self.pk, groups)
        _check_in_place_grid(self.pk, self.bound, checked)
        return Invocation(self.pk, self.bound, checked)


@dataclass
class Invocation:
    """A dispatch held as a value: kernel, bound arguments and grid."""

    kernel: PreparedKernel
    bound: Bound
    groups: tuple[int, int, int]

    def record(self, scheme: "Scheme", label: str) -> "Node":
        if not isinstance(scheme, Scheme) or not isinstance(label, str):
            raise BindingError(f"kernel `{self.kernel.name}`: Invocation.record(scheme, label) expects a Scheme and "
                               f"a str label, got {type(scheme).__name__} and {type(label).__name__}")
        if scheme.device is not self.kernel.device:
            raise BindingError(f"kernel `{self.kernel.name}`: invocation is for {self.kernel.device!r}, "
                               f"the scheme for {scheme.device!r}")
        return scheme._append(self.kernel, label, self.bound, self.groups)


@dataclass
class Node:
    """A recorded dispatch in a Scheme."""

    index: int
    label: str
    kernel: PreparedKernel
    dispatch: Dispatch
    keep: list
    args: Any = None  # the bound arguments as recorded (temporaries unresolved); default: the dispatch's
    fused: Any = None  # the FusedKernel that recorded it (runtime/fusion.py)

    def __post_init__(self) -> None:
        if self.args is None:
            self.args = self.dispatch.args

    def __repr__(self) -> str:
        return f"<node {self.index} {self.label!r}: {self.kernel.name} groups={self.dispatch.groups}>"


@dataclass(init=False)  # the defaults stay class attributes: a new Scheme's stats cost no stores
class SchemeStats:
    records: int = 0
    submits: int = 0
    dispatches: int = 0
    fusion_promotions: int = 0  # regions switched to their fused dispatch (runtime/fusion.py)
    fusion_fallbacks: int = 0  # returns to the recorded graph after a structure change
    fusion_compile_failures: int = 0
    specializations: int = 0  # nodes switched to a variant with their facts baked (runtime/specialization.py)
    region_specializations: int = 0  # of them, auto-fused regions switched to a variant of the fused entry
    specialization_demotions: int = 0  # back to the universal program after set_node_param on a baked scalar
    specialization_compiles: int = 0
    specialization_failures: int = 0
    live_uploads: int = 0  # submits that copied the live block (changed run-time scalars) to the device


class Scheme:
    """An ordered graph of dispatches on one device, replayed by each `submit()`."""

    def __init__(self, device: Device):
        if not isinstance(device, Device):
            raise BindingError(f"Scheme(device) expects a goldy_import.Device, got {type(device).__name__}")
        self.device = device
        self.nodes: list[Node] = []
        self.stats = SchemeStats()
        self._lock = threading.Lock()
        self._version = 0  # bumped by every structure change (automatic fusion, temporaries)
        self._temps: Any = None  # runtime/temporaries.py SchemeTemporaries, on first temporary_buffer
        self._fusion: Any = None  # runtime/fusion.py AutoFusion, while automatic fusion is on
        self._auto_fusion: Optional[bool] = None  # None: $GOLDY_FUSION decides
        self._unfinished: list[RecordBuilder] = []  # records still waiting for their grid call
        self._spec: Any = None  # runtime/specialization.py Specializer, on first use
        self._specialize: Optional[str] = None  # "on" | "facts" | "off"; None: $GOLDY_SPECIALIZE decides
        self._live_at: tuple = (0, device._frees)  # (version, device frees) when every bound buffer was last seen live
        self._no_facts: tuple = (None, 0, -1)  # _specialized: entries found without a #[fact] (and when)
        # dispatches whose scalars set_node_param changed since the last submit: id -> (dispatch,
        # slots); the backend repacks them once, at the next submit (`_mark`, `_flush_scalars`)
        self._stale: dict[int, tuple[weakref.ref, set]] = {}
        # set_node_param's steady state: per (node, slot or name), what its last full run did
        # (the argument lists it stored into, the dispatches it marked, the live word it
        # wrote), replayed while the structure, fusion and specialization are as they were
        # (`_setter_key`); `_rec` collects those effects during a full run
        self._setters: dict[tuple, tuple] = {}
        self._rec: Optional[list] = None

    def __repr__(self) -> str:
        return f"<Scheme on {self.device.backend_name}: {len(self.nodes)} nodes>"

    def _append(self, pk: PreparedKernel, label: str, bound: Bound, groups) -> Node:
        if self.device.closed:
            self.device._check_open()
        d = Dispatch(pk.target_ir, pk.compiled, list(bound.args), groups, label)
        deferred = bound.scheme_local and _temps_of(self, bound.keep, pk.name)
        live = None
        if not deferred:  # a node binding temporaries goes to the backend once they have storage
            dev = self.device
            with dev._lock:  # backends need not be thread-safe: one call at a time per device
                if dev.closed:  # (what _using checks, without its frames: this is every record)
                    dev._check_open()
                if bound.live_at != dev._frees:  # (nothing freed since it was looked at: still live)
                    _refuse_freed(bound.keep, lambda: f"kernel `{pk.name}` ({label!r})")
                    bound.live_at = dev._frees
                dev.backend.record(d)
                live = dev._frees  # this node's buffers are live at this count of frees
        with self._lock:
            node = Node(len(self.nodes), label, pk, d, bound.keep)
            self.nodes.append(node)
            self.stats.records += 1
            if live is not None and self._live_at == (self._version, live):  # and so were all the others'
                self._live_at = (self._version + 1, live)  # (submit need not look again)
            self._version += 1
        return node

    def temporary_buffer(self, n: int, dtype: Any = np.float32) -> "Temporary":
        """A scheme-local buffer of `n` elements (runtime/temporaries.py): binds like a Buffer,
        undefined at the start of each submit, never read back; storage comes at submit."""
        n = H.count("scheme.temporary_buffer", n, least=1)
        elem, gpu_dtype, _ = _gpu_array(np.zeros(0, dtype=H.host_dtype("scheme.temporary_buffer", dtype)))
        self.device._check_buffer_bytes(n, gpu_dtype, elem)
        if self._temps is None:
            self._temps = SchemeTemporaries(self)
        with self.device._lock:
            self.device._next_id += 1
            ident = self.device._next_id
        return self._temps.add(Temporary(self, int(n), elem, gpu_dtype, ident))

    def set_automatic_fusion(self, on: bool) -> None:
        """Fuse adjacent fusable dispatches automatically (runtime/fusion.py); overrides $GOLDY_FUSION."""
        self._auto_fusion = H.flag("scheme.set_automatic_fusion", on)

    def fusion_report(self):
        """The fused regions (constituent nodes, status) and the runs that stopped short, with why."""
        from .autofusion import FusionReport, fusion_enabled_by_env
        on = self._auto_fusion if self._auto_fusion is not None else fusion_enabled_by_env()
        return self._fusion.report(on) if self._fusion is not None else FusionReport(on)

    def wait_for_fusion(self, timeout: Optional[float] = None) -> bool:
        """Wait until automatic fusion's compiles finish; False on timeout."""
        timeout = H.timeout("Scheme.wait_for_fusion", timeout)
        return self._fusion.wait(timeout) if self._fusion is not None else True

    def set_specialization(self, on: bool) -> None:
        """Bake unchanged scalars and tensor shapes into variants (runtime/specialization.py);
        overrides $GOLDY_SPECIALIZE. Off also leaves `#[fact]` scalars run-time values."""
        self._specialize = "on" if on else "off"

    def specialization_report(self):
        """Per node: universal, compiling, active or failed, and which parameters are baked."""
        from .specialization import Specializer, specialization_mode
        return (self._spec or Specializer(self)).report(self._specialize or specialization_mode(None))

    def wait_for_specialization(self, timeout: Optional[float] = None) -> bool:
        """Wait until the variants' background compiles finish; False on timeout."""
        timeout = H.timeout("Scheme.wait_for_specialization", timeout)
        return self._spec.wait(timeout) if self._spec is not None else True

    def _specialized(self, entries: list) -> list:
        if self._specialize is None:
            self._specialize = eager.env_setting("GOLDY_SPECIALIZE", _specialization_by_env)
        if self._spec is None:  # nothing to bake (the default bakes #[fact] scalars only): no Specializer
            if self._specialize == "off" or (self._specialize == "facts" and not self._has_facts(entries)):
                return entries
            from .specialization import Specializer
            self._spec = Specializer(self)
        return self._spec.entries(entries, self._specialize)

    def _has_facts(self, entries: list) -> bool:
        seen = self._no_facts  # (entries, count, version) last found without a #[fact]: a replay need not look again
        if seen[0] is entries and seen[1] == len(entries) and seen[2] == self._version:
            return False
        for n in entries:
            facts = getattr(n.kernel, "has_facts", None)  # (a prepared kernel knows)
            if facts or (facts is None and any(p.fact for p in n.kernel.ir.params)):
                return True
        self._no_facts = (entries, len(entries), self._version)
        return False

    def _resolve(self, args: list) -> list:
        return self._temps.resolve(args) if self._temps is not None else args

    def _temporary_users(self) -> dict:
        return self._temps.users(self.nodes) if self._temps is not None else {}

    def _entries(self) -> list[Node]:
        """What a submit runs: the recorded nodes, or automatic fusion's list."""
        if self._temps is not None:
            self._temps.assign(self.nodes, self._version)
        on = self._auto_fusion
        if on is None:
            if len(self.nodes) < 2:  # nothing to fuse: $GOLDY_FUSION is read once there is
                return self.nodes
            from .autofusion import fusion_enabled_by_env
            on = self._auto_fusion = eager.env_setting("GOLDY_FUSION", fusion_enabled_by_env)
        if not on:
            if self._fusion is not None:
                self._fusion._fall_back()
            return self.nodes
        if self._fusion is None:
            from .autofusion import AutoFusion
            self._fusion = AutoFusion(self)
        return self._fusion.entries()

    def submit(self, wait: bool = True) -> Optional["eager.Submission"]:
        """Run every recorded node in order and wait for completion; `wait=False` returns
        a Submission (`.wait()`, `.done()`) at once instead."""
        if self.device.closed:
            self.device._check_open()
        if self._unfinished:
            rb = self._unfinished[0]
            raise GridError(f"kernel `{rb.pk.name}`: record(scheme, {rb.label!r}, ...) has no grid call, so nothing "
                            f"was recorded for it; finish it with .over_1d(n), .over_2d(w, h), .over_3d(w, h, d), "
                            f".over_tensor(view) or .groups((x, y, z)) before submit()")
        with self._lock:
            entries = self._specialized(self._entries())
            dev = self.device
            with dev._lock:  # frees and closes wait for the submit
                if dev.closed:  # (what _using checks, without its frames: this is every submit)
                    dev._check_open()
                backend = dev.backend
                live = (self._version, dev._frees)  # read under the lock: a free counts first
                if live != self._live_at:  # wgpu aborts on a destroyed buffer
                    for n in self.nodes:
                        _refuse_freed(n.keep, f"node {n.index} ({n.label!r}, kernel `{n.kernel.name}`)")
                    self._live_at = live
                if self._stale:
                    self._flush_scalars(backend, entries)
                spec = self._spec
                if spec is not None and spec.live is not None and spec.live.flush(backend):  # before its readers
                    self.stats.live_uploads += 1
                if wait:
                    faults = backend.submit([n.dispatch for n in entries])
                else:
                    handle = eager.Submission(self.device, backend.enqueue([n.dispatch for n in entries]),
                                              list(entries))
                    self.device._pending.append(handle)
            self.stats.submits += 1
            self.stats.dispatches += len(entries)
        if not wait:
            if self._fusion is not None and self._auto_fusion:
                self._fusion.after_submit()
            return handle
        if faults:
            raise kernel_fault(entries, faults)
        if self._fusion is not None and self._auto_fusion:
            self._fusion.after_submit()
        return None

    def set_node_param(self, node: Node, slot_or_name: Union[int, str], value: Any) -> None:
        """Change a scalar argument of a recorded node; takes effect at the next submit."""
        key = (id(node), slot_or_name) if type(slot_or_name) in (str, int) else None
        fast = self._setters.get(key) if key is not None else None
        if fast is not None and fast[0] is node:  # a decode loop's dozens of scalars per token
            _, idx, ty, where, effects, stamp = fast
            arg = ScalarArg(ty, _check_scalar(where, ty, value))
            if self.device.closed:
                self.device._check_open()
            with self._lock:
                if stamp == self._setter_key():
                    for target, slot in effects:
                        if type(target) is list:
                            target[slot] = arg
                        elif target is None:  # the scalar's word in the live block
                            self._spec.live.set(slot, arg)
                        else:
                            self._mark(target, slot)
                    return
        if not isinstance(node, Node) or node.index >= len(self.nodes) or self.nodes[node.index] is not node:
            raise BindingError(f"set_node_param: {node!r} is not a node of this scheme")
        pk = node.kernel
        # a slot or name that passed once is found again in the kernel's memo (exact str/int
        # keys only: True is not slot 1)
        idx = pk.settable.get(slot_or_name) if key is not None else None
        if idx is None:
            idx = _settable_slot(pk, slot_or_name)
        p = pk.ir.params[idx]
        arg = ScalarArg(p.ty, _check_scalar(pk.where[idx], p.ty, value))
        if self.device.closed:
            self.device._check_open()
        with self._lock:  # (a submit on another thread flushes what is marked)
            stamp = self._setter_key()
            self._rec = rec = []
            try:
                self._put(node.dispatch.args, idx, arg)
                self._put(node.args, idx, arg)
                self._mark(node.dispatch, idx)
                if self._fusion is not None:
                    self._fusion.scalar_changed(node, idx)
                if self._spec is not None:
                    self._spec.scalar_changed(node, idx)
            finally:
                self._rec = None
            steady = None not in rec and all(type(t) is not list or t[slot] is arg for t, slot in rec)
            if key is not None and steady:  # (nodes stay while the scheme does: at most one per node and key)
                self._setters[key] = (node, idx, p.ty, pk.where[idx], rec, stamp)

    def _setter_key(self) -> tuple:
        """What set_node_param's replayed effects depend on: the recorded structure, the
        nodes' dispatches (temporaries rebind them), the fused regions and the specializer's
        state (each bumps its counter on a change)."""
        f, sp, t = self._fusion, self._spec, self._temps
        return (self._version, -1 if t is None else t.rebinds, -1 if f is None else f.gen,
                -1 if sp is None else sp.gen)

    def _put(self, args: list, slot: int, arg: ScalarArg) -> None:
        """set_node_param stores the new value into an argument list (recorded for its replay)."""
        args[slot] = arg
        if self._rec is not None:
            self._rec.append((args, slot))

    def _unsteady(self) -> None:
        """This set_node_param changed more than values (a plan, a demotion): not replayed."""
        if self._rec is not None:
            self._rec.append(None)

    def _wrote_live(self, word: int) -> None:
        if self._rec is not None:
            self._rec.append((None, word))

    def _mark(self, d: Dispatch, slot: int) -> None:
        """Scalar `slot` of dispatch `d` (a node's, a fused region's or a variant's) changed:
        the backend sees it at the next submit. A decode loop changes dozens of scalars per
        token; each costs a dict update here, not a backend call under the device lock."""
        hit = self._stale.get(id(d))
        if hit is None or hit[0]() is not d:  # (held weakly: a dispatch that is gone takes its marks)
            self._stale[id(d)] = (weakref.ref(d), {slot})
        else:
            hit[1].add(slot)
        if self._rec is not None:
            self._rec.append((d, slot))

    def _flush_scalars(self, backend: Backend, entries: list) -> None:
        """The marked scalars of the dispatches this submit runs to the backend (under the
        device lock). The marks of the others wait until they run: a node whose variant or
        fused region runs in its place is not repacked per token. A mark goes only once the
        backend took it: after a BackendError the rest are still due."""
        stale = self._stale
        for n in entries:
            d = n.dispatch
            hit = stale.get(id(d))
            if hit is not None and hit[0]() is d:
                if d.state is not None:  # not yet with the backend: it reads the args then
                    backend.update_scalars(d, hit[1])
                del stale[id(d)]
        if len(stale) > 2 * len(self.nodes) + 64:  # the marks of dispatches that are gone
            for key in [k for k, (ref, _) in stale.items() if ref() is None]:
                del stale[key]


def _settable_slot(pk: "PreparedKernel", slot_or_name: Any) -> int:
    """The parameter index `set_node_param` may change for `slot_or_name`, or the BindingError
    saying why not; remembered in `pk.settable` once it passed."""
    k = pk.ir
    if isinstance(slot_or_name, str):
        idx = next((i for i, p in enumerate(k.params) if p.name == slot_or_name), None)
        if idx is None:
            raise BindingError(f"kernel `{k.name}` has no parameter `{slot_or_name}` "
                               f"(parameters: {', '.join(p.name for p in k.params)})")
    else:
        idx = H.index(f"set_node_param: kernel `{k.name}` parameter slot", slot_or_name)
        if not 0 <= idx < len(k.params):
            raise BindingError(f"kernel `{k.name}` has {len(k.params)} parameters; slot {idx} is out of range")
    p = k.params[idx]
    if p.category != "scalar":
        raise BindingError(f"kernel `{k.name}` parameter `{p.name}` ({rust_param_type(p)}) is not a scalar; "
                           f"only scalars can be changed with set_node_param")
    if p.fact:
        raise BindingError(f"kernel `{k.name}` parameter `{p.name}` is a `#[fact]`: its value is fixed when the "
                           f"op is recorded and baked into the compiled variant; record the node again with "
                           f"the new value instead of calling set_node_param")
    if type(slot_or_name) in (str, int):
        pk.settable[slot_or_name] = idx
    return idx


def _specialization_by_env() -> str:
    from .specialization import specialization_mode
    return specialization_mode(None)


def _temps_of(scheme: Scheme, keep: list, kernel: str) -> bool:
    if scheme._temps is None:
        scheme._temps = SchemeTemporaries(scheme)
    return scheme._temps.owner_check(scheme, keep, kernel)


def kernel_fault(nodes: list[Node], faults: list[Any]) -> KernelFault:
    """The first fault of a submit as a KernelFault naming kernel, Rust location,
    parameter, offending index and length; the others are counted."""
    f = faults[0]
    node = nodes[f.dispatch]
    k = node.dispatch.kernel
    sites = {s.id: s for s in pipeline.kernel_info(k).sites}
    site = sites.get(f.site)
    where = f"kernel `{k.name}` (node {node.index} {node.label!r})" if node.index >= 0 else f"kernel `{k.name}` ({node.label})"
    if site is None:
        msg = f"{where}: a run-time check failed (site {f.site})"
    else:
        loc = f"{k.source_file}:{site.span.line}:{site.span.col}"
        if site.kind == "divide":
            msg = f"{where}: integer division by zero at {loc}"
        else:
            p = k.param(site.resource or "")
            what = "workgroup array" if p is None else "parameter"
            if f.index_y is not None:
                msg = (f"{where}: texel ({f.index}, {f.index_y}) out of bounds at {loc}: {what} "
                       f"`{site.resource}` is {f.length} texels wide")
            else:
                msg = (f"{where}: index out of bounds at {loc}: {what} `{site.resource}` indexed at "
                       f"{f.index}, but its length is {f.length}")
    if len(faults) > 1:
        msg += f" ({len(faults) - 1} more faulted dispatch{'es' if len(faults) > 2 else ''} in this submit)"
    err = KernelFault(msg)
    err.kernel = k.name  # type: ignore[attr-defined]
    err.site = site  # type: ignore[attr-defined]
    err.index = f.index  # type: ignore[attr-defined]
    err.length = f.length  # type: ignore[attr-defined]
    return err


# runtime/eager.py binds and checks with these, without importing this module
eager.install(bind_arguments=bind_arguments, check_groups=_check_groups, check_in_place_grid=_check_in_place_grid,
              check_scalar=_check_scalar, groups_for=_groups_for, describe_value=_describe_value,
              kernel_fault=kernel_fault, own_types=frozenset({Buffer, Image, TensorView}))
