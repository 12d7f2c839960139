"""goldy-import: GPU compute kernels in a restricted Rust dialect, run from Python."""

from __future__ import annotations

from .errors import (AliasingError, BackendError, BackendUnavailable, BindingError, DeviceLimitError,
                     DiagnosticError, GoldyError, GridError, KernelFault, ShapeContractError)

__version__ = "0.1.0"

__all__ = [
    "GoldyError", "DiagnosticError", "BindingError", "ShapeContractError", "AliasingError",
    "GridError", "KernelFault", "BackendUnavailable", "BackendError", "DeviceLimitError",
    "__version__",
]
