"""Tensor views: a logical (shape, strides, offset) window onto a physical buffer, and the
record-time shape contracts of `#[tensor(shape = [...])]` parameters.

The layout travels to kernels as Goldy's 48-byte record of 12 u32:
`off, rank, numel, d0..d3, s0..s3, flags`, in elements, axes left-aligned, unused axes
extent 1 and stride 0, flags bit 0 set when the view is row-major contiguous.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from goldy_import.errors import BindingError, DeviceLimitError, ShapeContractError
from goldy_import.ir import nodes as N

from .backend import TensorArg
from .host_input import host_array

if TYPE_CHECKING:  # core imports this module
    from .core import Buffer, Device, PreparedKernel

MAX_RANK = 4
U32_MAX = 0xFFFFFFFF
FLAG_CONTIGUOUS = 1


def _ints(name: str, xs: Sequence[Any]) -> tuple[int, ...]:
    out = []
    if isinstance(xs, (str, bytes)) or not hasattr(xs, "__iter__"):
        raise BindingError(f"{name}: expected a sequence of integers, got {xs!r}")
    for x in xs:
        if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
            raise BindingError(f"{name}: expected integers, got {list(xs)!r}")
        out.append(int(x))
    return tuple(out)


class TensorView:
    """A view of `buffer` with logical `shape`, element `strides` and element `offset`."""

    def __init__(self, buffer: "Buffer", shape: Sequence[int], strides: Sequence[int], offset: int = 0):
        if not hasattr(buffer, "_alloc"):  # a core.Buffer (this module does not import core)
            raise BindingError(f"TensorView(buffer, shape, strides, offset) expects a device Buffer, got "
                               f"{type(buffer).__name__} (upload an array with device.tensor(array))")
        shape = _ints("tensor shape", shape)
        strides = _ints("tensor strides", strides)
        (offset,) = _ints("tensor offset", (offset,))
        if len(shape) > MAX_RANK:
            raise BindingError(f"tensor rank {len(shape)} exceeds the maximum of {MAX_RANK} (shape {list(shape)})")
        if len(strides) != len(shape):
            raise BindingError(f"tensor has {len(shape)} extents {list(shape)} but {len(strides)} strides {list(strides)}")
        if any(d < 0 for d in shape):
            raise BindingError(f"negative extent in tensor shape {list(shape)}")
        if any(s < 0 for s in strides):
            raise BindingError(f"negative stride in {list(strides)}: views with negative strides are not supported")
        if offset < 0:
            raise BindingError(f"negative tensor offset {offset}")
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if numel:
            last = offset + sum((d - 1) * s for d, s in zip(shape, strides))
            if last >= buffer.length:
                raise BindingError(
                    f"view shape {list(shape)} strides {list(strides)} offset {offset} reaches element {last}, "
                    f"past the end of a buffer of {buffer.length} elements")
        if buffer.elem not in ("f32", "u32", "i32"):
            raise BindingError(f"tensors hold f32, u32 or i32 elements, not {buffer.elem}")
        self.buffer = buffer
        self.shape = shape
        self.strides = strides
        self.offset = int(offset)
        self.numel = numel

    # -- construction
    @staticmethod
    def strided(buffer: "Buffer", shape: Sequence[int], strides: Sequence[int], offset: int = 0) -> "TensorView":
        return TensorView(buffer, shape, strides, offset)

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def elem(self) -> str:
        return self.buffer.elem

    @property
    def device(self) -> "Device":
        return self.buffer.device

    def __repr__(self) -> str:
        return (f"TensorView({self.elem}, shape={list(self.shape)}, strides={list(self.strides)}, "
                f"offset={self.offset}, on {self.device.backend_name})")

    def is_contiguous(self) -> bool:
        expect = 1
        for d, s in zip(reversed(self.shape), reversed(self.strides)):
            if d != 1 and s != expect:
                return False
            expect *= d
        return True

    def has_broadcast_axis(self) -> bool:
        return any(d > 1 and s == 0 for d, s in zip(self.shape, self.strides))

    # -- views
    def view(self) -> "TensorView":
        return TensorView(self.buffer, self.shape, self.strides, self.offset)

    def _axis(self, axis: int) -> int:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -self.rank <= axis < self.rank:
            raise BindingError(f"axis {axis!r} is out of range for a rank-{self.rank} tensor (shape {list(self.shape)})")
        return int(axis) % self.rank

    def narrow(self, axis: int, start: int, length: int) -> "TensorView":
        a = self._axis(axis)
        (start, length) = _ints("narrow(start, length)", (start, length))
        if start < 0 or length < 0 or start + length > self.shape[a]:
            raise BindingError(f"narrow(axis={a}, start={start}, length={length}) is outside extent "
                               f"{self.shape[a]} of shape {list(self.shape)}")
        shape = list(self.shape)
        shape[a] = length
        return TensorView(self.buffer, shape, self.strides, self.offset + start * self.strides[a])

    def reshape(self, shape: Sequence[int]) -> "TensorView":
        shape = _ints("reshape", shape)
        numel = int(np.prod(shape, dtype=np.int64)) if shape else 1
        if numel != self.numel:
            raise BindingError(f"cannot reshape {list(self.shape)} ({self.numel} elements) to {list(shape)} "
                               f"({numel} elements)")
        if not self.is_contiguous():
            raise BindingError(f"reshape needs a contiguous view; shape {list(self.shape)} strides "
                               f"{list(self.strides)} is not (materialise it with device.tensor(view.numpy()))")
        return TensorView(self.buffer, shape, _contiguous_strides(shape), self.offset)

    def permute(self, axes: Sequence[int]) -> "TensorView":
        axes = _ints("permute", axes)
        if sorted(axes) != list(range(self.rank)):
            raise BindingError(f"permute{tuple(axes)} is not a permutation of the {self.rank} axes")
        return TensorView(self.buffer, [self.shape[a] for a in axes], [self.strides[a] for a in axes], self.offset)

    def transpose(self, a: int = -2, b: int = -1) -> "TensorView":
        if self.rank < 2:
            return self.view()
        axes = list(range(self.rank))
        i, j = self._axis(a), self._axis(b)
        axes[i], axes[j] = axes[j], axes[i]
        return self.permute(axes)

    def broadcast_to(self, shape: Sequence[int]) -> "TensorView":
        shape = _ints("broadcast_to", shape)
        if len(shape) < self.rank or len(shape) > MAX_RANK:
            raise BindingError(f"cannot broadcast shape {list(self.shape)} to {list(shape)}")
        pad = len(shape) - self.rank
        old_shape = (1,) * pad + self.shape
        old_strides = (0,) * pad + self.strides
        strides = []
        for d_old, s_old, d_new in zip(old_shape, old_strides, shape):
            if d_old == d_new:
                strides.append(s_old)
            elif d_old == 1:
                strides.append(0)
            else:
                raise BindingError(f"cannot broadcast shape {list(self.shape)} to {list(shape)}: "
                                   f"extent {d_old} is neither 1 nor {d_new}")
        return TensorView(self.buffer, shape, strides, self.offset)

    # -- data
    def numpy(self) -> np.ndarray:
        """The logical contents as a new contiguous array."""
        flat = self.buffer.numpy()
        if self.numel == 0:
            return np.zeros(self.shape, dtype=flat.dtype)
        idx = np.full(self.shape, self.offset, dtype=np.int64)
        for a, (d, s) in enumerate(zip(self.shape, self.strides)):
            shape = [1] * self.rank
            shape[a] = d
            idx = idx + (np.arange(d, dtype=np.int64) * s).reshape(shape)
        return flat[idx]

    def layout(self) -> tuple[int, ...]:
        dims = list(self.shape) + [1] * (MAX_RANK - self.rank)
        strides = list(self.strides) + [0] * (MAX_RANK - self.rank)
        flags = FLAG_CONTIGUOUS if self.is_contiguous() else 0
        return (self.offset, self.rank, self.numel, *dims, *strides, flags)

    def element_range(self) -> tuple[int, int]:
        """First and one-past-last element of the parent buffer the view can touch."""
        if self.numel == 0:
            return self.offset, self.offset
        return self.offset, self.offset + sum((d - 1) * s for d, s in zip(self.shape, self.strides)) + 1

    def as_physical_buffer(self, where: str) -> "Buffer":
        """A view bound to a plain slice parameter indexes its parent buffer physically."""
        return self.buffer


def _contiguous_strides(shape: Sequence[int]) -> list[int]:
    strides = []
    acc = 1
    for d in reversed(shape):
        strides.append(acc)
        acc *= d
    return list(reversed(strides))


def tensor_from_array(device: "Device", array: Any) -> TensorView:
    arr = host_array("device.tensor", array)
    if arr.ndim > MAX_RANK:
        raise BindingError(f"tensor rank {arr.ndim} exceeds the maximum of {MAX_RANK} (shape {list(arr.shape)})")
    if arr.dtype.kind not in "uif" or arr.dtype.itemsize != 4:
        raise BindingError(f"tensors hold float32, uint32 or int32, got {arr.dtype}")
    buf = device.buffer(np.ascontiguousarray(arr).reshape(-1))
    return TensorView(buf, arr.shape, _contiguous_strides(arr.shape), 0)


def tensor_zeros(device: "Device", shape: Sequence[int], dtype: Any = np.float32) -> TensorView:
    try:
        host = np.zeros(tuple(shape), dtype=dtype)
    except MemoryError:
        raise DeviceLimitError(f"out of host memory for a tensor of shape {list(shape)} "
                               f"(device.tensor_zeros on {device.backend_name})") from None
    except (TypeError, ValueError) as e:
        raise BindingError(f"device.tensor_zeros: bad shape {shape!r} or dtype {dtype!r}: {e}") from None
    return tensor_from_array(device, host)


def bind_tensor(where: str, p: N.Param, v: Any, pk: "PreparedKernel") -> tuple[TensorArg, Any]:
    if not isinstance(v, TensorView):
        hint = " (wrap a buffer with device.tensor(array) or TensorView.strided(buffer, shape, strides))"
        raise BindingError(f"{where}: expected a TensorView of {p.ty}, got {type(v).__name__}{hint}")
    buf = v.buffer
    if buf._alloc.freed:
        raise BindingError(f"{where}: the tensor's buffer was freed")
    if buf.device is not pk.device:
        raise BindingError(f"{where}: the tensor lives on {buf.device!r}, the kernel runs on {pk.device!r}")
    if v.elem != p.ty:
        raise BindingError(f"{where}: expected a tensor of {p.ty}, got a tensor of {v.elem}")
    if p.category in ("tensor_mut", "tensor_write"):
        if v.has_broadcast_axis():
            raise BindingError(f"{where}: a view with a zero stride on an expanded axis (shape {list(v.shape)}, "
                               f"strides {list(v.strides)}) is not a legal write destination")
        if buf.read_only:
            raise BindingError(f"{where}: the kernel writes this tensor, but its buffer is read-only")
    lo, hi = v.element_range()
    physical = buf[lo:hi] if hi > lo else buf[lo:lo]
    layout = v.layout()
    if buf.offset + max(layout) > U32_MAX:  # the layout record is u32 on every backend
        raise BindingError(f"{where}: a view of shape {list(v.shape)} ({v.numel} elements, strides "
                               f"{list(v.strides)}) does not fit the u32 layout record kernels see: numel, extents, "
                               f"strides and offset must each be below 2^32")
    arg = TensorArg(buf.handle, p.ty, layout, buf.length)
    # the parent buffer's own offset (buffer views) shifts the layout's element offset
    if buf.offset:
        lay = list(arg.layout)
        lay[0] += buf.offset
        arg = TensorArg(buf.handle, p.ty, tuple(lay), buf.offset + buf.length)
    return arg, physical


def check_contracts(k: N.Kernel, args: Sequence[Any]) -> None:
    """`#[tensor(shape = [...])]`: fixed rank, literal extents exact, names equal throughout."""
    names: dict[str, tuple[int, str, int]] = {}
    for p, v in zip(k.params, args):
        if p.shape is None or not isinstance(v, TensorView):
            continue
        spec = "[" + ", ".join(str(d) for d in p.shape) + "]"
        got = list(v.shape)
        if len(got) != len(p.shape):
            raise ShapeContractError(f"kernel `{k.name}` parameter `{p.name}`: expected rank {len(p.shape)} {spec}, "
                                     f"got rank {len(got)} {got}")
        for axis, (want, d) in enumerate(zip(p.shape, got)):
            if want == "_":
                continue
            if isinstance(want, int):
                if d != want:
                    raise ShapeContractError(f"kernel `{k.name}` parameter `{p.name}` axis {axis}: expected {want}, "
                                             f"got {d} (shape {got})")
                continue
            if want in names:
                val, src, src_axis = names[want]
                if d != val:
                    raise ShapeContractError(
                        f"kernel `{k.name}` parameter `{p.name}` axis {axis}: expected `{want}`={val} "
                        f"(from `{src}` axis {src_axis}), got {d} (shape {got})")
            else:
                names[want] = (d, p.name, axis)
