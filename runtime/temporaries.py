"""Scheme temporaries: buffers that only carry data between one scheme's own dispatches.

`scheme.temporary_buffer(n, dtype)` gives a `Temporary` (runtime/core.py, a Buffer that
refuses to be observed), which binds wherever a buffer does. Its contents are undefined when each submit starts and unobservable after it, so:

- it has no storage until the first submit; then each temporary gets storage from the
  device's pool (`TransientPool`), and temporaries of one length and element type whose
  lifetimes (first to last node that binds them) do not overlap share one allocation.
  The storage goes back to the pool when the structure changes (and is assigned again at
  the next submit) or the scheme is dropped;
- reading it back (`numpy()`), writing it from the host, slicing it, or binding it on
  another scheme is a BindingError;
- automatic fusion may keep it in registers only (runtime/fusion.py): then the fused
  dispatch binds no storage for it.

A node that binds a temporary is handed to the backend (`Backend.record`) once its storage
is known, i.e. at the first submit after the structure changed.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING, Any, Optional

from goldy_import.errors import BindingError

from .backend import BufferArg, Dispatch

if TYPE_CHECKING:
    from .core import Device, Node, Scheme

__all__ = ["TemporaryHandle", "TransientPool", "SchemeTemporaries", "is_temporary", "has_temporaries"]


class TemporaryHandle:
    """The placeholder a temporary's bound arguments carry until storage is assigned."""

    __slots__ = ("temporary", "__weakref__")

    def __init__(self, temporary: Any):
        self.temporary = weakref.proxy(temporary)

    def __repr__(self) -> str:
        return "<temporary storage, assigned at submit>"


class TransientPool:
    """Per-device free lists of allocations by size, shared by every scheme's temporaries."""

    def __init__(self, device: "Device"):
        self.device = device
        self.free: dict[int, list[Any]] = {}
        self.lock = threading.Lock()
        self.allocated = 0  # allocations made from the backend, for tests and reports

    @staticmethod
    def of(device: "Device") -> "TransientPool":
        pool = device.__dict__.get("_goldy_transient_pool")
        if pool is None:
            pool = device.__dict__.setdefault("_goldy_transient_pool", TransientPool(device))
        return pool

    def acquire(self, nbytes: int) -> Any:
        with self.lock:
            free = self.free.get(nbytes)
            if free:
                return free.pop()
            self.allocated += 1
        with self.device._using() as backend:
            return backend.alloc(max(nbytes, 4))

    def release(self, handles: list[tuple[int, Any]]) -> None:
        with self.lock:
            for nbytes, h in handles:
                self.free.setdefault(nbytes, []).append(h)


def is_temporary(b: Any) -> bool:
    """A core.Temporary (it marks itself; this module does not import core)."""
    return getattr(b, "scheme_local", False)


def has_temporaries(keep: list) -> bool:
    for b in keep:
        if getattr(b, "scheme_local", False):
            return True
    return False


class SchemeTemporaries:
    """A scheme's temporaries and the storage assigned to them for its current structure."""

    def __init__(self, scheme: "Scheme"):
        self.scheme_ref = weakref.ref(scheme)
        self.pool = TransientPool.of(scheme.device)
        self.temps: list[Any] = []
        self.storage: dict[int, Any] = {}  # id(placeholder handle) -> backend handle
        self.held: list[tuple[int, Any]] = []  # (nbytes, handle) taken from the pool
        self.rebinds = 0  # nodes given a new dispatch so far (Scheme._setter_key)
        self.version = -1
        self.shared = 0  # temporaries that share another one's storage (this structure)
        self._finalizer = weakref.finalize(scheme, self.pool.release, self.held)

    def add(self, t: Any) -> Any:
        self.temps.append(t)
        return t

    def users(self, nodes: list["Node"]) -> dict[int, set[int]]:
        """id(placeholder handle) -> indices of the nodes that bind it."""
        out: dict[int, set[int]] = {}
        for n in nodes:
            for a in n.args:
                if isinstance(a, BufferArg) and isinstance(a.handle, TemporaryHandle):
                    out.setdefault(id(a.handle), set()).add(n.index)
        return out

    def assign(self, nodes: list["Node"], version: int) -> None:
        """Storage for the structure `version`: lifetimes from the nodes, one allocation
        per set of same-sized temporaries whose lifetimes do not overlap."""
        if version == self.version:
            return
        self.pool.release(self.held)
        self.held.clear()
        spans: dict[int, list[int]] = {}
        handles: dict[int, TemporaryHandle] = {}
        for n in nodes:
            for a in n.args:
                if isinstance(a, BufferArg) and isinstance(a.handle, TemporaryHandle):
                    s = spans.setdefault(id(a.handle), [n.index, n.index])
                    s[1] = n.index
                    handles[id(a.handle)] = a.handle
        by_kind: dict[tuple, list[int]] = {}
        for key in sorted(spans, key=lambda h: spans[h][0]):
            t = handles[key].temporary
            by_kind.setdefault((t.length, t.elem, t.dtype.itemsize), []).append(key)
        self.storage, self.shared = {}, 0
        for (length, _elem, size), keys in by_kind.items():
            slots: list[list] = []  # [last node index using it, handle]
            for key in keys:
                first, last = spans[key]
                slot = next((s for s in slots if s[0] < first), None)
                if slot is None:
                    h = self.pool.acquire(length * size)
                    self.held.append((length * size, h))
                    slot = [last, h]
                    slots.append(slot)
                else:
                    self.shared += 1
                    slot[0] = last
                self.storage[key] = slot[1]
        self.version = version
        for n in nodes:
            if any(isinstance(a, BufferArg) and isinstance(a.handle, TemporaryHandle) for a in n.args):
                self.rebind(n)

    def resolve(self, args: list) -> list:
        """`args` with each temporary's placeholder replaced by its assigned storage."""
        out = []
        for a in args:
            if isinstance(a, BufferArg) and isinstance(a.handle, TemporaryHandle):
                a = BufferArg(self.storage[id(a.handle)], a.offset, a.length, a.elem, a.stride)
            out.append(a)
        return out

    def rebind(self, n: "Node") -> None:
        """A new backend dispatch for a node whose temporaries have (new) storage."""
        scheme = self.scheme_ref()
        assert scheme is not None
        d = n.dispatch
        fresh = Dispatch(d.kernel, d.compiled, self.resolve(n.args), d.groups, d.label)
        with scheme.device._using() as backend:
            backend.record(fresh)
        n.dispatch = fresh
        self.rebinds += 1

    def owner_check(self, scheme: "Scheme", keep: list, kernel: str) -> bool:
        """Whether `keep` (a bound argument list's objects) holds temporaries; a temporary
        of another scheme is a BindingError."""
        found = False
        for b in keep:
            if is_temporary(b):
                if b.scheme_ref() is not scheme:
                    raise BindingError(f"kernel `{kernel}`: {b!r} belongs to another scheme; a temporary binds "
                                       f"only on the scheme that declared it")
                found = True
        return found


def release(st: Optional[SchemeTemporaries]) -> None:
    if st is not None:
        st.pool.release(st.held)
        st.held.clear()
