"""goldy-import: GPU compute kernels in a restricted Rust dialect, run from Python.

    import goldy_import as gi
    kernels = gi.load("kernels.rs")
    dev = gi.Device("auto")
    k = kernels.saxpy.prepare(dev)
"""

from __future__ import annotations

from .errors import (AliasingError, BackendError, BackendUnavailable, BindingError, DeviceLimitError,
                     DiagnosticError, GoldyError, GridError, KernelFault, ShapeContractError)
from .loader import KernelModule, StructType, load, load_slang, load_source
from .runtime.core import (Buffer, Device, Image, Invocation, KernelDef, Node, PreparedKernel, Scheme,
                           backend_available)
from .runtime.tensor import TensorView

from .version import __version__

__all__ = [
    "load", "load_source", "load_slang", "KernelModule", "StructType", "Device", "Buffer", "Image", "Scheme", "Node",
    "KernelDef", "PreparedKernel", "Invocation", "TensorView", "backend_available",
    "GoldyError", "DiagnosticError", "BindingError", "ShapeContractError", "AliasingError",
    "GridError", "KernelFault", "BackendUnavailable", "BackendError", "DeviceLimitError",
    "__version__",
]
