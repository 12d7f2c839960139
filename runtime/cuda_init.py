"""Opening a CUDA device without waiting for the driver (issue 17's cold start).

On the first device of a process, `cuInit` and creating the primary context take 0.1-0.2 s
each. cuda-python releases the GIL inside its driver calls, so runtime/cuda.py's
`CudaBackend` makes them on a background thread (`Opening`) and `gi.Device("cuda")`
returns at once: loading and lowering kernels overlap the driver's start.

While it opens, the backend is an instance of `opening_class(CudaBackend)`, whose driver
facts (context, stream, limits, names, ...) are `AfterInit` attributes. Reading one waits
for the thread (a join: an init cannot be cancelled), then either raises the opening's
failure, the GoldyError `Device("cuda")` raised before this existed (every time it is
read: never lost), or stores the values in the instance, makes it a plain `CudaBackend`
again and makes the context current on the calling thread. (A class attribute of the
same name, even one the instance's own shadows, would slow every read of it fourfold on
the hot paths: CPython's attribute cache then takes the slow path.)
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from goldy_import.errors import BackendUnavailable, GoldyError


class AfterInit:
    """A backend attribute whose value the background opening supplies."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: Optional[type] = None) -> Any:
        if obj is None:
            return self
        obj._opening.apply(obj)
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None


_OPENING: dict = {}  # backend class -> its opening subclass


def opening_class(cls: type, names: tuple) -> type:
    """`cls` with AfterInit attributes `names`: what a backend is while it opens."""
    sub = _OPENING.get(cls)
    if sub is None:
        sub = _OPENING[cls] = type(f"Opening{cls.__name__}", (cls,), {n: AfterInit() for n in names})
    return sub


class Opening:
    """`work()` (returning the AfterInit values) run on a background thread; `apply`
    waits for it and hands its result to the backend."""

    def __init__(self, work: Callable[[], dict], what: str, current: Callable[[Any], None]):
        self._values: Optional[dict] = None
        self._error: Optional[GoldyError] = None
        self._what = what  # names the device in an unexpected failure
        self._current = current  # makes the context current on the calling thread
        self._lock = threading.Lock()
        self.applied = False
        self.reported = False  # its failure was raised to a caller
        self._thread = threading.Thread(target=self._run, args=(work,), name="goldy-cuda-init", daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], dict]) -> None:
        try:
            self._values = work()
        except GoldyError as e:
            self._error = e
        except BaseException as e:  # a GoldyError at first use, never a traceback from a thread
            self._error = BackendUnavailable(f"{self._what}: opening the device failed: {type(e).__name__}: {e}")

    def apply(self, backend: Any) -> None:
        """Wait for the opening; raise its failure or store its values in `backend`."""
        if not self.applied:
            with self._lock:  # a second thread's first use waits for the first's
                if not self.applied:
                    self._thread.join()
                    if self._error is None:
                        assert self._values is not None
                        for k, v in self._values.items():  # (an attribute set meanwhile wins)
                            backend.__dict__.setdefault(k, v)
                        self._values = None
                        backend.__class__ = type(backend).__mro__[1]  # plain again: no AfterInit
                    self.applied = True
        if self._error is not None:
            self.reported = True
            raise self._error.with_traceback(None)
        self._current(backend)  # the thread made it current on itself only

    def failed(self) -> bool:
        """Whether the opening failed (waiting for it); raises the failure if no caller
        has seen it yet (closing a device that never opened)."""
        self._thread.join()
        if self._error is not None and not self.reported:
            self.reported = True
            raise self._error.with_traceback(None)
        return self._error is not None


class _Opened:
    """The opening of a backend opened without a thread (its values are set already)."""

    applied = True

    def apply(self, backend: Any) -> None:
        pass

    def failed(self) -> bool:
        return False


OPENED = _Opened()
