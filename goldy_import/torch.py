"""Goldy kernels as PyTorch operators: `gi.torch.custom_op(kernel, outputs=..., grid=...)`.

The kernel becomes a `torch.library` operator (`torch.ops.goldy.<name>_<identity>`) with a
CPU and a CUDA implementation and a fake (meta) implementation computed from the shape
contracts, so it traces under `torch.compile` without running. Tensors bind through DLPack
(runtime/dlpack.py): CPU tensors zero-copy on the cpu backend, CUDA tensors zero-copy on
`Device("cuda:N")` of their GPU, torch ordering its pending work before the backend's stream.
Binding and grid errors are the GoldyErrors of a Scheme record, naming the kernel and
parameter. No autograd formula is registered (the op is not differentiable).

Importing goldy_import does not import torch; this module does.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Mapping, Optional, Sequence, Union

import torch

from goldy_import.errors import BindingError, GridError
from goldy_import.ir import nodes as N
from goldy_import.runtime.core import Device, KernelDef, PreparedKernel, Scheme, rust_param_type
from goldy_import.runtime.tensor import TensorView, _contiguous_strides

__all__ = ["custom_op", "GoldyOp", "device_for"]

TORCH_DTYPES = {"f32": torch.float32, "u32": torch.uint32, "i32": torch.int32}
SCHEMA_SCALARS = {"f32": "float", "u32": "int", "i32": "int", "bool": "bool"}
OUTPUT_CATEGORIES = ("read_write", "write", "tensor_mut", "tensor_write")

ShapeSpec = Union[None, str, Sequence[Union[int, str]], Callable[..., Sequence[int]]]

_libraries: dict[str, Any] = {}  # namespace -> torch.library.Library (kept alive: it owns the registrations)
_ops: dict[str, "GoldyOp"] = {}
_devices: dict[str, Device] = {}
_lock = threading.Lock()


def device_for(t: torch.Tensor) -> Device:
    """The goldy Device the op runs a tensor's work on: one per process for `cpu` and for
    each `cuda:N`."""
    name = "cpu" if t.device.type == "cpu" else f"cuda:{t.device.index or 0}" if t.device.type == "cuda" else None
    if name is None:
        raise BindingError(f"tensors on {t.device} cannot run goldy kernels: expected cpu or cuda tensors")
    with _lock:
        dev = _devices.get(name)
        if dev is None or dev.closed:
            dev = _devices[name] = Device(name)
    return dev


def _follow_torch_stream(dev: Any, place: Any) -> bool:
    """The one place the op meets torch's CUDA stream: the device queues its work on torch's
    current stream (`Device.use_stream`), so the tensors torch exports need no event and
    the kernel is ordered with torch's work without a device-wide sync. True while torch
    captures a CUDA graph on that stream."""
    stream = torch.cuda.current_stream(place)
    dev.use_stream(stream.cuda_stream)
    return bool(torch.cuda.is_current_stream_capturing())


class GoldyOp:
    """A kernel registered as a torch operator; call it like a function of its inputs (the
    kernel's parameters in order, less the outputs). Returns the output tensor, a tuple of
    them, or None; inputs bound to writable parameters are written in place."""

    def __init__(self, kernel: KernelDef, qualname: str, outputs: dict[str, ShapeSpec], grid: Any,
                 checks: Optional[bool]):
        self.kernel = kernel
        self.qualname = qualname
        self.outputs = outputs
        self.grid = grid
        self.checks = checks
        params = kernel.ir.params
        self.inputs = [p for p in params if p.name not in outputs]
        self.mutated = [p.name for p in self.inputs if p.category in OUTPUT_CATEGORIES]
        self.schema = _schema(kernel, self.inputs, len(outputs))

    @property
    def op(self) -> Any:
        """The registered `torch.ops.<ns>.<name>.default` overload."""
        ns, name = self.qualname.split("::")
        return getattr(getattr(torch.ops, ns), name).default

    def __repr__(self) -> str:
        return f"<goldy op {self.qualname}{self.schema}>"

    def __call__(self, *args: Any) -> Any:
        return self.op(*args)

    # -- shapes (shared by the real and the fake implementation)
    def _named(self, args: Sequence[Any]) -> dict[str, Any]:
        if len(args) != len(self.inputs):
            sig = ", ".join(f"{p.name}: {rust_param_type(p)}" for p in self.inputs)
            raise BindingError(f"op {self.qualname} (kernel `{self.kernel.name}`) takes {len(self.inputs)} inputs "
                               f"({sig}), got {len(args)}")
        return {p.name: v for p, v in zip(self.inputs, args)}

    def _symbols(self, named: dict[str, Any]) -> dict[str, Any]:
        """Contract names (`#[tensor(shape = [n, _])]`) bound by the inputs' extents."""
        out: dict[str, Any] = {}
        for p in self.inputs:
            v = named[p.name]
            if p.shape is not None and isinstance(v, torch.Tensor) and v.dim() == len(p.shape):
                for want, got in zip(p.shape, v.shape):
                    if isinstance(want, str) and want != "_":
                        out.setdefault(want, got)
        return out

    def _extent(self, what: str, x: Any, named: dict[str, Any], symbols: dict[str, Any]) -> Any:
        if isinstance(x, str):
            if x in symbols:
                return symbols[x]
            if isinstance(named.get(x), torch.Tensor):
                return named[x].numel()
            raise BindingError(f"op {self.qualname}: {what} names `{x}`, which is neither a shape-contract name "
                               f"bound by an input ({', '.join(symbols) or 'none'}) nor an input tensor")
        return x

    def output_shapes(self, named: dict[str, Any]) -> list[tuple]:
        symbols = self._symbols(named)
        shapes = []
        for name, spec in self.outputs.items():
            p = self.kernel.ir.param(name)
            assert p is not None
            if callable(spec):
                shape = tuple(spec(**named))
            elif isinstance(spec, str):
                ref = named.get(spec)
                if not isinstance(ref, torch.Tensor):
                    raise BindingError(f"op {self.qualname}: output `{name}` takes the shape of `{spec}`, "
                                       f"which is not an input tensor")
                shape = tuple(ref.shape)
            else:
                dims = spec if spec is not None else p.shape
                if dims is None or "_" in dims:
                    raise BindingError(f"op {self.qualname}: the shape of output `{name}` ({rust_param_type(p)}) "
                                       f"does not follow from a shape contract; give it, e.g. "
                                       f"outputs={{'{name}': 'x'}} (like input x) or a tuple of extents")
                shape = tuple(self._extent(f"output `{name}`", d, named, symbols) for d in dims)
            shapes.append(shape)
        return shapes

    def grid_extents(self, named: dict[str, Any], outs: dict[str, Any]) -> tuple:
        everything = {**named, **outs}
        g = self.grid
        if g is None:
            first = next(iter(outs.values()), None) if outs else None
            if first is None:
                first = next((named[n] for n in self.mutated), None)
            if first is None:
                raise GridError(f"op {self.qualname}: no output to size the grid by; give grid=...")
            return (first.numel(),)
        if callable(g):
            g = g(**everything)
        if isinstance(g, (int, str)):
            g = (g,)
        return tuple(int(self._extent("grid", x, everything, self._symbols(named))) for x in g)

    # -- implementations
    def fake(self, *args: Any) -> Any:
        named = self._named(args)
        like = next((v for v in args if isinstance(v, torch.Tensor)), None)
        where = like.device if like is not None else torch.device("cpu")
        outs = [torch.empty(s, dtype=TORCH_DTYPES[self.kernel.ir.param(n).ty], device=where)  # type: ignore
                for n, s in zip(self.outputs, self.output_shapes(named))]
        return _result(outs)

    def run(self, *args: Any) -> Any:
        named = self._named(args)
        tensors = [v for v in args if isinstance(v, torch.Tensor)]
        if not tensors:
            raise BindingError(f"op {self.qualname}: needs at least one tensor input to pick a device")
        place = tensors[0].device
        for p in self.inputs:
            v = named[p.name]
            if isinstance(v, torch.Tensor) and v.device != place:
                raise BindingError(f"op {self.qualname} parameter `{p.name}`: tensor on {v.device}, the others "
                                   f"on {place}")
        dev = device_for(tensors[0])
        pk = self.kernel.prepare(dev, self.checks)
        outs = {n: torch.empty(s, dtype=TORCH_DTYPES[self.kernel.ir.param(n).ty], device=place)  # type: ignore
                for n, s in zip(self.outputs, self.output_shapes(named))}
        extents = self.grid_extents(named, outs)
        if any(e == 0 for e in extents):
            return _result(list(outs.values()))  # an empty grid: nothing to compute
        if len(extents) > 3:
            raise GridError(f"op {self.qualname}: grid {extents} has more than 3 extents")
        everything = {**named, **outs}
        on_gpu = place.type == "cuda"
        with torch.cuda.device(place) if on_gpu else _nothing():  # torch exports from its current GPU only
            capturing = _follow_torch_stream(dev, place) if on_gpu else False
            bound = [_bind(pk, i, p, everything[p.name]) for i, p in enumerate(self.kernel.ir.params)]
            if capturing:  # one launch on the capturing stream, which the graph records. Nothing may
                # wait or allocate during capture, so a replay's fault could not be reported: the
                # kernel runs unchecked there (its shape contracts were checked at this call)
                lb = self.kernel.prepare(dev, False).launch(*bound)
                (lb.over_1d, lb.over_2d, lb.over_3d)[len(extents) - 1](*extents)
            else:  # the submit waits for torch's stream (not the device), so a fault is raised here
                scheme = Scheme(dev)
                rb = pk.record(scheme, self.qualname, *bound)
                (rb.over_1d, rb.over_2d, rb.over_3d)[len(extents) - 1](*extents)
                scheme.submit()
        return _result(list(outs.values()))


_nothing = contextlib.nullcontext


def _result(outs: list) -> Any:
    return None if not outs else outs[0] if len(outs) == 1 else tuple(outs)


def _bind(pk: PreparedKernel, i: int, p: N.Param, v: Any) -> Any:
    """A torch tensor as the Buffer or TensorView its parameter takes (other values as they are)."""
    if not isinstance(v, torch.Tensor):
        return v
    where = pk.where[i]
    if p.category in ("scalar", "uniform", "image"):
        raise BindingError(f"{where}: expected a Python value, got a tensor")
    want = TORCH_DTYPES.get(p.ty)
    if want is not None and v.dtype != want:
        raise BindingError(f"{where}: expected a {want} tensor, got {v.dtype}")
    if not v.is_contiguous():
        if p.category in OUTPUT_CATEGORIES:
            raise BindingError(f"{where}: the kernel writes this tensor in place, but it is not contiguous "
                               f"(shape {list(v.shape)}, strides {list(v.stride())}); pass `.contiguous()` and "
                               f"use the result")
        v = v.contiguous()
    try:
        buf = pk.device.from_dlpack(v.detach())
    except BindingError as e:
        raise BindingError(f"{where}: {e}") from None
    if p.category in N.TENSOR_CATEGORIES:
        return TensorView(buf, tuple(v.shape), _contiguous_strides(tuple(v.shape)), 0)
    return buf


def _schema(kernel: KernelDef, inputs: list, n_out: int) -> str:
    parts, alias = [], iter("abcdefghijklmnopqrstuvwxyz")
    for p in inputs:
        if p.category == "scalar":
            parts.append(f"{SCHEMA_SCALARS[p.ty]} {p.name}")
        elif p.category in N.BUFFER_CATEGORIES or p.category in N.TENSOR_CATEGORIES:
            parts.append(f"Tensor({next(alias)}!) {p.name}" if p.category in OUTPUT_CATEGORIES else f"Tensor {p.name}")
        else:
            raise BindingError(f"kernel `{kernel.name}` parameter `{p.name}` ({rust_param_type(p)}): torch ops take "
                               f"slices, gpu::Tensor parameters and scalars, not {p.category} parameters")
    ret = "()" if n_out == 0 else "Tensor" if n_out == 1 else "(" + ", ".join(["Tensor"] * n_out) + ")"
    return f"({', '.join(parts)}) -> {ret}"


def _outputs(kernel: KernelDef, outputs: Any) -> dict[str, ShapeSpec]:
    if isinstance(outputs, str):
        outputs = [outputs]
    spec = dict(outputs) if isinstance(outputs, Mapping) else {n: None for n in outputs}
    for name in spec:
        p = kernel.ir.param(name)
        if p is None:
            raise BindingError(f"kernel `{kernel.name}` has no parameter `{name}` (parameters: "
                               f"{', '.join(q.name for q in kernel.ir.params)})")
        if p.category not in OUTPUT_CATEGORIES or p.ty not in TORCH_DTYPES:
            raise BindingError(f"kernel `{kernel.name}` parameter `{name}` ({rust_param_type(p)}) cannot be an "
                               f"output: outputs are written slices or tensors of f32, u32 or i32")
    return spec


def custom_op(kernel: Union[KernelDef, PreparedKernel], *, outputs: Any = (), grid: Any = None,
              name: Optional[str] = None, checks: Optional[bool] = None) -> GoldyOp:
    """Register `kernel` as a torch operator.

    outputs: the written parameters the op allocates and returns, as names (shape from the
      parameter's shape contract) or a dict name -> shape: an input's name (its shape), a
      tuple of ints / contract names / input names (their numel), or a callable of the inputs
      by name. The other parameters are the op's inputs, in order.
    grid: the extents of over_1d / over_2d / over_3d: None (the first output's numel), an int,
      a contract name or tensor name, a tuple of those, or a callable of all tensors by name.
    name: "namespace::op" (default `goldy::<kernel>_<identity>`)."""
    kernel = getattr(kernel, "prepared", kernel)  # a generated module's prepared kernel
    if isinstance(kernel, PreparedKernel):
        kernel = kernel.kdef
    if isinstance(kernel, type) and hasattr(kernel, "definition"):  # a loaded module's kernel class
        kernel = kernel.definition()
    if not isinstance(kernel, KernelDef):
        raise BindingError(f"custom_op expects a kernel (module.kernel_name), got {type(kernel).__name__}")
    spec = _outputs(kernel, outputs)
    qualname = name or f"goldy::{kernel.name}_{kernel.identity[:8]}"
    if qualname.count("::") != 1:
        raise BindingError(f"custom_op name {qualname!r}: expected 'namespace::name'")
    with _lock:
        known = _ops.get(qualname)
        if known is not None:
            if known.kernel.identity != kernel.identity or known.outputs != spec:
                raise BindingError(f"torch op {qualname} is already registered for another kernel or outputs")
            known.grid, known.checks = grid, checks
            return known
        ns, opname = qualname.split("::")
        lib = _libraries.get(ns)
        if lib is None:
            lib = _libraries[ns] = torch.library.Library(ns, "FRAGMENT")
        op = GoldyOp(kernel, qualname, spec, grid, checks)
        lib.define(opname + op.schema)
        lib.impl(opname, op.run, "CPU")
        lib.impl(opname, op.run, "CUDA")
        torch.library.register_fake(qualname, op.fake, lib=lib)
        _ops[qualname] = op
    return op
