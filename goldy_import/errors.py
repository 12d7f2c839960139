"""The exception hierarchy. Every error a user can meet is a GoldyError."""

from __future__ import annotations

from typing import Any, Iterable, Optional


class GoldyError(Exception):
    """Base of every error goldy-import raises on purpose."""


class DiagnosticError(GoldyError):
    """The Rust source has errors; `diagnostics` holds them, `str()` renders them."""

    def __init__(self, message: str, diagnostics: Optional[Iterable[Any]] = None, rendered: str = ""):
        super().__init__(message + ("\n\n" + rendered if rendered else ""))
        self.diagnostics = list(diagnostics or [])


class BindingError(GoldyError):
    """An argument does not fit the parameter it is bound to."""


class ShapeContractError(BindingError):
    """A tensor argument breaks the parameter's `#[tensor(shape = ...)]` contract."""


class AliasingError(BindingError):
    """Overlapping memory bound to a written parameter and another parameter."""


class GridError(GoldyError):
    """An empty grid, or one beyond the backend's limits."""


class KernelFault(GoldyError):
    """A kernel failed a check at run time (out-of-bounds access, division by zero)."""


class RaceError(KernelFault):
    """A race-checking CPU run (`Device("cpu", racecheck=True)`) found two accesses to one
    element by different threads, at least one a write and not both atomics, that nothing
    orders: the same barrier interval of one workgroup, or two workgroups of one dispatch.
    `kernel`, `resource` and `element` say where; `accesses` holds the two `RaceAccess`es."""

    def __init__(self, message: str, kernel: str = "", resource: str = "", element: int = -1,
                 accesses: tuple = ()):
        super().__init__(message)
        self.kernel, self.resource, self.element, self.accesses = kernel, resource, element, tuple(accesses)


class BackendUnavailable(GoldyError):
    """The requested backend cannot run here; the message says what to install."""


class BackendError(GoldyError):
    """A backend call failed (compile, launch, driver error)."""


class CodegenError(BackendError):
    """An emitter failed on IR that passed the verifier: a bug in goldy-import, reported
    with the kernel, the target and, when known, the Rust location being emitted."""

    def __init__(self, message: str, kernel: str = "", target: str = "", location: str = ""):
        super().__init__(message)
        self.kernel, self.target, self.location = kernel, target, location


class TargetUnsupported(BackendError):
    """The kernel uses an operation its target does not have (an `f32` atomic on WGSL); the
    message names the operation, the kernel, the Rust location and the backends that have it."""


class DeviceLimitError(GoldyError):
    """A kernel or argument exceeds a device limit; the message names the limit."""
