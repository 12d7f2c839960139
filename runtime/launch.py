"""Typed bases for generated launch modules (codegen/pymodule.py writes subclasses).

A generated module holds each kernel's IR as versioned JSON, so running it never parses
Rust; it only checks that the Rust file it came from has not changed since.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import warnings
from typing import Any, ClassVar, Optional, Sequence

import numpy as np

from goldy_import.errors import BindingError
from goldy_import.ir import nodes as N
from goldy_import.ir.serialize import from_json

from .core import Device, InvokeBuilder, KernelDef, PreparedKernel, RecordBuilder, Scheme
from .eager import LaunchBuilder
from .dtypes import struct_gpu_dtype, struct_host_dtype


class StaleSourceWarning(UserWarning):
    """The Rust file changed after its launch module was generated."""


def check_source(module_file: str, source_file: str, source_sha256: str) -> None:
    """Warn when the Rust source next to a generated module no longer matches its hash."""
    path = source_file
    if not os.path.isabs(path):
        path = os.path.join(os.path.dirname(os.path.abspath(module_file)), source_file)
    try:
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return  # shipped without its source: nothing to compare
    if digest != source_sha256:
        warnings.warn(f"{os.path.basename(module_file)} was generated from {source_file}, which has changed since; "
                      f"regenerate it with `goldy-import {source_file} -o {os.path.basename(module_file)}`",
                      StaleSourceWarning, stacklevel=3)


class StructType:
    """A `#[goldy::gpu]` struct's host dtypes: `dtype` is the GPU layout (what a buffer of
    it holds), `host_dtype` the packed fields. Either makes arrays `device.buffer` and
    uniform parameters accept: `np.zeros(n, dtype=Params.host_dtype)`."""

    def __init__(self, decl: N.StructDecl):
        self.name: str = decl.name
        self.decl = decl
        self.dtype: np.dtype[Any] = struct_gpu_dtype(decl)
        self.host_dtype: np.dtype[Any] = struct_host_dtype(decl)

    def __repr__(self) -> str:
        return f"<gpu struct {self.name}: host {self.host_dtype.itemsize} bytes, GPU stride {self.dtype.itemsize}>"


def struct_type(name: str, fields: Sequence[tuple[str, str]]) -> StructType:
    """What a generated module declares for each struct: name and (field, IR type) pairs."""
    return StructType(N.StructDecl(name, [N.StructField(f, t, N.NO_SPAN) for f, t in fields], N.NO_SPAN))


class GeneratedKernel:
    """One kernel of a generated module. Subclasses set IR_JSON and SOURCE_SHA256."""

    IR_JSON: ClassVar[str] = ""
    SOURCE_SHA256: ClassVar[str] = ""
    _kdef: ClassVar[Optional[KernelDef]] = None

    @classmethod
    def definition(cls) -> KernelDef:
        """The kernel's retained definition (IR and identity)."""
        kd = cls.__dict__.get("_kdef")
        if kd is None:
            kd = KernelDef(from_json(cls.IR_JSON), cls.SOURCE_SHA256)
            cls._kdef = kd
        return kd

    @classmethod
    def _prepare(cls, device: Device, checks: Optional[bool]) -> PreparedKernel:
        return cls.definition().prepare(device, checks)


class GeneratedPrepared:
    """A prepared kernel; generated subclasses add `record`/`invoke` with typed parameters."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in ("record", "invoke", "launch"):
            if name in cls.__dict__:
                setattr(cls, name, _arity_checked(cls.__dict__[name], name))

    def __init__(self, prepared: PreparedKernel):
        self.prepared = prepared
        self._record = prepared.record  # (one frame fewer on every record than the method below)

    @property
    def device(self) -> Device:
        return self.prepared.device

    def __repr__(self) -> str:
        return repr(self.prepared)

    def _record(self, scheme: Scheme, label: str, *args: Any) -> RecordBuilder:
        return self.prepared.record(scheme, label, *args)

    def _invoke(self, *args: Any) -> InvokeBuilder:
        return self.prepared.invoke(*args)

    def _launch(self, *args: Any) -> LaunchBuilder:
        return LaunchBuilder(self.prepared, args)


def _arity_checked(fn: Any, what: str) -> Any:
    """`fn` whose call with the wrong arguments (count or keywords) raises a BindingError
    naming the kernel and its parameters, not Python's TypeError. Only a TypeError of the
    call itself is translated: one raised inside the method has a frame of its own."""
    params = list(inspect.signature(fn).parameters)[1:]  # without `self`
    sig = f"{what}({', '.join(params)})"

    @functools.wraps(fn)
    def call(self: GeneratedPrepared, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(self, *args, **kwargs)
        except TypeError as e:
            if e.__traceback__ is None or e.__traceback__.tb_next is not None:
                raise
            raise BindingError(f"kernel `{self.prepared.name}`: {sig} takes {len(params)} arguments, got "
                               f"{len(args)}{f' and keywords {sorted(kwargs)}' if kwargs else ''} ({e})") from None
    return call
