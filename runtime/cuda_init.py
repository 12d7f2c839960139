"""Opening a CUDA device without waiting for the driver (issue 17's cold start).

On the first device of a process, `cuInit` and creating the primary context take 0.1-0.2 s
each. cuda-python releases the GIL inside its driver calls, so runtime/cuda.py's
`CudaBackend` makes them on a background thread (`Opening`) and `gi.Device("cuda")`
returns at once: loading and lowering kernels overlap the driver's start.

What the backend learns from the driver (context, stream, limits, names, ...) becomes
plain attributes once the opening is applied: the calls that need them first call
`CudaBackend._ready` (through `_current`, which every driver-using path calls), which
waits for the thread (a join: an init cannot be cancelled), then either raises the
opening's failure, the GoldyError `Device("cuda")` raised before this existed (every
time: never lost), or sets the attributes. (Not descriptors, `__getattr__` or a class
swap: each of those makes every attribute read of the backend several times slower,
since CPython's specialised attribute loads then stop applying.)
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Optional

from goldy_import.errors import BackendUnavailable, GoldyError


class Opening:
    """`work()` (returning the backend's attributes) run on a background thread; `apply`
    waits for it and hands its result to the backend."""

    def __init__(self, work: Callable[[], dict], what: str):
        self._values: Optional[dict] = None
        self._error: Optional[GoldyError] = None
        self._what = what  # names the device in an unexpected failure
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
        """Wait for the opening; raise its failure or set its values on `backend`."""
        if not self.applied:
            with self._lock:  # a second thread's first use waits for the first's
                if not self.applied:
                    self._thread.join()
                    if self._error is None:
                        assert self._values is not None
                        for k, v in self._values.items():
                            setattr(backend, k, v)
                        self._values = None
                    self.applied = True
        if self._error is not None:
            self.reported = True
            raise self._error.with_traceback(None)

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
