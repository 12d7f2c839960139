"""goldy-import: GPU compute kernels in a restricted Rust dialect, run from Python.

    import goldy_import as gi
    kernels = gi.load("kernels.rs")
    dev = gi.Device("auto")
    k = kernels.saxpy.prepare(dev)

The names below load on first use (PEP 562), so importing the package, `goldy_import.errors`
or `goldy_import.runtime.launch` (what every generated launch module imports) loads neither
tree-sitter nor an emitter nor a backend.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import (AliasingError, BackendError, BackendUnavailable, BindingError, CodegenError, DeviceLimitError,
                     DiagnosticError, GoldyError, GridError, KernelFault, RaceError, ShapeContractError)
from .version import __version__

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from .builder import KernelBuilder
    from .kir import load_kir
    from .loader import KernelModule, StructType, load, load_slang, load_source
    from .runtime.core import (Buffer, Device, Image, Invocation, KernelDef, Node, PreparedKernel, Scheme,
                               backend_available)
    from .runtime.tensor import TensorView
    from .runtime.fusion import FusedKernel, FusionError, FusionRejection, FusionReport
    from . import expr
    from .expr import evaluate

_LAZY = {
    **dict.fromkeys(("load", "load_source", "load_slang", "KernelModule", "StructType"), "goldy_import.loader"),
    **dict.fromkeys(("Device", "Buffer", "Image", "Scheme", "Node", "KernelDef", "PreparedKernel", "Invocation",
                     "backend_available"), "goldy_import.runtime.core"),
    "TensorView": "goldy_import.runtime.tensor",
    "load_kir": "goldy_import.kir",
    "KernelBuilder": "goldy_import.builder",
    **dict.fromkeys(("FusedKernel", "FusionError", "FusionRejection", "FusionReport"), "goldy_import.runtime.fusion"),
    "expr": "goldy_import.expr",  # the module itself
    "torch": "goldy_import.torch",  # the module itself (imports torch)
    "evaluate": "goldy_import.expr",
}

__all__ = [
    "load", "load_source", "load_slang", "KernelModule", "StructType", "Device", "Buffer", "Image", "Scheme", "Node",
    "load_kir", "KernelBuilder",
    "KernelDef", "PreparedKernel", "Invocation", "TensorView", "backend_available",
    "FusedKernel", "FusionError", "FusionRejection", "FusionReport", "expr", "evaluate",
    "GoldyError", "DiagnosticError", "BindingError", "ShapeContractError", "AliasingError",
    "GridError", "KernelFault", "RaceError", "BackendUnavailable", "BackendError", "CodegenError", "DeviceLimitError",
    "__version__",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'goldy_import' has no attribute {name!r}")
    loaded = importlib.import_module(module)
    value = loaded if module == f"{__name__}.{name}" else getattr(loaded, name)
    globals()[name] = value  # later look-ups skip this function
    return value


def load_ipython_extension(ipython: Any) -> None:
    """`%load_ext goldy_import`: the `%%goldy` cell magic (goldy_import/notebook.py)."""
    from .notebook import load_ipython_extension as load
    load(ipython)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
