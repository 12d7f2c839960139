"""One guard around every emitter's entry points: verified IR must print or fail with a
GoldyError, so an unexpected exception (a bug in an emitter) becomes a CodegenError naming
the kernel, the target and the Rust location of the node being emitted, never a traceback
from inside the toolchain.

The node is found without the emitters tracking it: the innermost frame of the failing
call that holds an IR statement or expression with a real span names it.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from types import TracebackType
from typing import Callable, Iterator, Optional, ParamSpec, TypeVar

from goldy_import.errors import CodegenError, GoldyError
from goldy_import.gcpause import gc_paused
from goldy_import.ir import nodes as N

__all__ = ["emitting", "emitter"]

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def emitting(kernel: N.Kernel, target: str) -> Iterator[None]:
    """Run the body as `target`'s emission of `kernel`; see the module docstring. The
    garbage collector waits meanwhile (goldy_import/gcpause.py)."""
    try:
        with gc_paused():
            yield
    except GoldyError:
        raise
    except Exception as e:
        span = _innermost_span(e.__traceback__) or kernel.span
        where = kernel.source_file or "<unknown>"
        if span != N.NO_SPAN:
            where += f":{span.line}:{span.col}"
        raise CodegenError(f"internal error emitting {target} for kernel `{kernel.name}` ({where}): "
                           f"{type(e).__name__}: {e}; this is a bug in goldy-import, please report it "
                           "with the kernel's source", kernel.name, target, where) from e


def emitter(target: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Decorate an entry point whose first argument is the kernel with `emitting`."""
    def wrap(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            kernel = args[0] if args else kwargs["kernel"]
            with emitting(kernel, target):  # type: ignore[arg-type]
                return fn(*args, **kwargs)
        return run
    return wrap


def _innermost_span(tb: Optional[TracebackType]) -> Optional[N.Span]:
    found = None
    while tb is not None:
        for value in tb.tb_frame.f_locals.values():
            if isinstance(value, (N.Stmt, N.Expr)) and value.span != N.NO_SPAN:
                found = value.span
                break
        tb = tb.tb_next
    return found
