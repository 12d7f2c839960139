"""DLPack in both directions, and copies of buffers between devices.

- Import (`device.from_dlpack(obj)`): zero-copy where the producer's memory is the device's
  own: host memory on the cpu backend (through `numpy.from_dlpack`), the same GPU on cuda
  (the producer's legacy `dltensor` capsule, read here with ctypes and bound through the
  backend's `__cuda_array_interface__` path, so device, dtype and contiguity are checked in
  one place). The producer is asked to order its pending work before the cuda backend's
  stream (`__dlpack__(stream=...)`), so no host wait is needed. Host memory bound on a GPU
  device (wgpu, slang, cuda) is copied; GPU memory on another device is refused.
- Export (`buffer.__dlpack__()`): the cpu backend hands out a numpy view of its memory, the
  cuda backend a capsule of its device memory (submits complete before they return, so any
  consumer stream sees finished data); wgpu and slang memory is not host-addressable, so
  they export a host copy (`copy=False` is refused there).
- `copy_to(buffer, device)`: the bytes through the host (any pair of backends).

Elements: f32, u32 and i32 (what every backend's buffers hold); bool buffers are u32 words
in memory and export as uint32; struct buffers have no DLPack type and are refused.
"""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from goldy_import.errors import BindingError

if TYPE_CHECKING:
    from .core import Buffer, Device

KDL_CPU, KDL_CUDA, KDL_CUDA_HOST = 1, 2, 3
_KINDS = {KDL_CPU: "host memory", KDL_CUDA: "CUDA device", KDL_CUDA_HOST: "CUDA host memory"}
_CODES = {"f32": (2, 32), "u32": (1, 32), "i32": (0, 32), "bool": (1, 32)}  # (DLDataTypeCode, bits)
_ELEM_OF = {(2, 32): "f32", (1, 32): "u32", (0, 32): "i32"}
_TYPESTR = {"f32": "<f4", "u32": "<u4", "i32": "<i4"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32), ("dtype", DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)), ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _DELETER)]


_NAME, _USED = b"dltensor", b"used_dltensor"
_api = ctypes.pythonapi
_CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _capi(name: str, restype: Any, *argtypes: Any) -> Any:  # private prototypes: pythonapi's are shared
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, _api))


_capsule_new = _capi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, _CAPSULE_DESTRUCTOR)
_capsule_pointer = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_rename = _capi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
# the capsule destructor gets the capsule as a bare address
_valid_raw = _capi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_pointer_raw = _capi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)

_live: dict[int, tuple] = {}  # address of an exported DLManagedTensor -> what it keeps alive


@_DELETER
def _delete_managed(address: Optional[int]) -> None:  # the consumer is done with an export
    _live.pop(int(address or 0), None)


@_CAPSULE_DESTRUCTOR
def _capsule_gone(capsule: Optional[int]) -> None:  # never consumed: the capsule owns the tensor
    if capsule and _valid_raw(capsule, _NAME):
        _live.pop(int(_pointer_raw(capsule, _NAME) or 0), None)


def make_capsule(ptr: int, shape: tuple, elem: str, device: tuple[int, int], keep: Any) -> Any:
    """A legacy `dltensor` capsule of C-contiguous memory at `ptr` (no strides: row-major)."""
    code, bits = _CODES[elem]
    dims = (ctypes.c_int64 * max(len(shape), 1))(*shape)
    mt = DLManagedTensor()
    mt.dl_tensor = DLTensor(ptr, DLDevice(*device), len(shape), DLDataType(code, bits, 1),
                            ctypes.cast(dims, ctypes.POINTER(ctypes.c_int64)), None, 0)
    mt.deleter = _delete_managed
    address = ctypes.addressof(mt)
    _live[address] = (mt, dims, keep)
    return _capsule_new(address, _NAME, _capsule_gone)


class _Imported:
    """A consumed capsule: its tensor as `__cuda_array_interface__`; frees it when dropped."""

    def __init__(self, capsule: Any, where: str):
        try:
            address = _capsule_pointer(capsule, _NAME)
        except (ValueError, TypeError):
            raise BindingError(f"{where}: the producer's __dlpack__() gave {type(capsule).__name__}, not an "
                               f"unconsumed 'dltensor' capsule") from None
        mt = DLManagedTensor.from_address(address)
        _capsule_rename(capsule, _USED)  # ours now: the capsule will not free it
        self._address, self._mt = address, mt
        t = mt.dl_tensor
        self.device = (int(t.device.device_type), int(t.device.device_id))
        key = (int(t.dtype.code), int(t.dtype.bits))
        shape = tuple(int(t.shape[i]) for i in range(t.ndim))
        self.elem = _ELEM_OF.get(key) if t.dtype.lanes == 1 else None
        if self.elem is None:
            raise BindingError(f"{where}: DLPack array of type code {key[0]}, {key[1]} bits, {t.dtype.lanes} lanes: "
                               f"buffers hold float32, uint32 or int32 (convert it first)")
        strides = None if not t.strides else tuple(4 * int(t.strides[i]) for i in range(t.ndim))
        self.__cuda_array_interface__ = {"shape": shape, "typestr": _TYPESTR[self.elem], "strides": strides,
                                         "data": (int(t.data or 0) + int(t.byte_offset), False), "version": 3,
                                         "stream": None}

    def __del__(self) -> None:
        try:
            deleter = self._mt.deleter
            if ctypes.cast(deleter, ctypes.c_void_p).value:
                deleter(self._address)
        except Exception:  # interpreter shutdown: nothing left to free
            pass


def _producer_device(obj: Any, where: str) -> tuple[int, int]:
    fn = getattr(obj, "__dlpack_device__", None)
    if fn is None or not hasattr(obj, "__dlpack__"):
        raise BindingError(f"{where}: expected an object with __dlpack__ / __dlpack_device__ (a torch tensor, "
                           f"numpy or CuPy array), got {type(obj).__name__}")
    kind, ordinal = fn()
    return int(kind), int(ordinal)


def _producer(where: str, export: Any) -> Any:
    """`export()`, with the producer's refusal (BufferError: needs grad, another GPU is
    current, ...) as a BindingError."""
    try:
        return export()
    except BufferError as e:
        raise BindingError(f"{where}: the producer refused to export: {e}") from None


def _host_array(obj: Any, where: str) -> np.ndarray:
    arr = _producer(where, lambda: np.from_dlpack(obj))
    if arr.dtype.kind == "b":
        raise BindingError(f"{where}: a bool array is one byte per element, a bool buffer one u32 per element; "
                           f"convert it first (e.g. `.to(torch.int32)`), or copy with device.buffer(array)")
    return arr


def from_dlpack(device: "Device", obj: Any) -> "Buffer":
    where = f"device.from_dlpack on {device.name}"
    kind, ordinal = _producer_device(obj, where)
    host = kind in (KDL_CPU, KDL_CUDA_HOST)
    if device.backend_name == "cpu" and host:
        arr = _host_array(obj, where)
        from . import dtypes as DT
        elem = DT.scalar_ir_type(arr.dtype)
        if elem not in _TYPESTR:
            raise BindingError(f"{where}: array of {arr.dtype}: buffers hold float32, uint32 or int32 (convert it "
                               f"first, e.g. `.to(torch.float32)`)")
        if not arr.flags.c_contiguous:
            raise BindingError(f"{where}: array with strides {arr.strides} is not C-contiguous "
                               f"(call `.contiguous()` / `numpy.ascontiguousarray` first)")
        flat = arr.reshape(-1).view(np.uint8)  # a view: the kernels write the producer's memory
        return device._borrow(flat, arr.size, elem, tuple(arr.shape), obj, read_only=not arr.flags.writeable)
    if device.backend_name == "cuda" and kind == KDL_CUDA and ordinal == getattr(device.backend, "ordinal", 0):
        stream = getattr(device.backend, "stream", None)  # the producer orders its work before ours
        # DLPack spells CUDA's legacy default stream (handle 0, torch's default) as 1; 0 is invalid
        handle = None if stream is None else (int(stream) or 1)
        capsule = _producer(where, lambda: obj.__dlpack__(stream=handle))
        return device.wrap(_Imported(capsule, where))
    if host:  # GPU memory of its own: a copy
        arr = _host_array(obj, where)
        buf = device.buffer(arr)
        buf.shape = tuple(arr.shape) if arr.ndim else (1,)
        return buf
    raise BindingError(f"{where}: the array lives in {_KINDS.get(kind, f'DLPack device type {kind}')} {ordinal}, "
                       f"which a {device.name} device cannot bind; move it to the host first "
                       f"(e.g. `t.cpu()`) or use a `cuda:{ordinal}` device")


def _exportable(buf: "Buffer", what: str, structs: bool = False) -> None:
    if getattr(buf, "scheme_local", False):
        raise buf._refuse(f"cannot be {what}")  # type: ignore[attr-defined]
    buf._check_live()
    if buf.elem.startswith("struct") and not structs:
        raise BindingError(f"{buf!r} cannot be {what}: DLPack has no struct element type; export each field "
                           f"from buffer.numpy() instead")


def _shape(buf: "Buffer") -> tuple:
    n = int(np.prod(buf.shape, dtype=np.int64)) if buf.shape else 1
    return tuple(buf.shape) if n == buf.length else (buf.length,)


def dlpack_device(buf: "Buffer") -> tuple[int, int]:
    if buf.device.backend_name == "cuda":
        return KDL_CUDA, int(getattr(buf.device.backend, "ordinal", 0))
    return KDL_CPU, 0  # cpu memory itself; wgpu and slang export host copies


def export(buf: "Buffer", *, stream: Any = None, max_version: Any = None, dl_device: Any = None,
           copy: Optional[bool] = None) -> Any:
    _exportable(buf, "exported through DLPack")
    name = buf.device.backend_name
    here = dlpack_device(buf)
    if dl_device is not None and tuple(dl_device) != here:
        raise BufferError(f"{buf!r} is on DLPack device {here}, not {tuple(dl_device)}")
    if name == "cuda":
        if copy:
            raise BufferError(f"{buf!r}: a copying export of CUDA memory is not supported (copy=True)")
        s, _ = buf.byte_range
        base = buf._alloc.address()
        assert base is not None  # CudaMemory has one
        return make_capsule(base + s, _shape(buf), buf.elem, here, buf)
    if name == "cpu":
        s, e = buf.byte_range
        dtype = np.dtype(np.uint32) if buf.elem == "bool" else buf.dtype
        host = buf.handle[s:e].view(dtype).reshape(_shape(buf))
        if copy:
            host = host.copy()
        else:  # writable from now on behind the backend's back
            buf.device.backend.exported(buf.handle)
    else:
        if copy is False:
            raise BufferError(f"{buf!r}: {name} memory is not host-addressable; DLPack export copies it (copy=False)")
        host = buf.numpy().reshape(_shape(buf))
    if max_version is not None:
        try:
            return host.__dlpack__(stream=stream, max_version=max_version)  # versioned: marks it writable
        except TypeError:  # numpy < 2.1
            pass
    return host.__dlpack__(stream=stream)


def copy_to(buf: "Buffer", device: "Device") -> "Buffer":
    if buf.device is device:
        return buf
    _exportable(buf, "copied to another device", structs=True)  # the same GPU layout on every backend
    device._check_open()
    out = device._alloc(buf.length, buf.elem, buf.dtype, buf.read_only)
    out.shape = buf.shape
    if buf.length:
        s, _ = buf.byte_range
        with buf.device._lock:
            data = buf.device.backend.read(buf.handle, s, buf.nbytes)
        with device._lock:
            device.backend.write(out.handle, 0, memoryview(data))
    return out
