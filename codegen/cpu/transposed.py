"""Transposed copies of read-only buffers for the one-pass loops (codegen/cpu/loops.py).

A row-major GEMV `for j in 0..n { acc = acc + w[i * n + j] * x[j]; }` adds each row's terms
in j order (Rust's order), so numpy vectorises it across rows: iteration j reads column j
of `w`, a strided walk (a row apart per lane) that costs several times a contiguous one.
Weights are read by every token and written by none, so the backend keeps, per buffer, a
copy of the matrix transposed (iteration-major: lanes contiguous) and `rt.span` reads
that instead. The additions are the same, in the same order: only where the operand comes
from changes, not the bits.

Exactness: a copy is only used while its buffer is unchanged. The CPU backend registers
each allocation it makes (`TransposedCache.track`) and calls `changed` for every write it
sees: `write()` from the host, and before each dispatch every buffer the dispatch binds
writably (any writable category, whether or not the kernel stores to it); during that
dispatch those buffers are `busy` (never copied: its own writes would not be seen).
Memory handed out writably (a zero-copy DLPack export) is `escaped`: never copied again
(a borrowed view of it counts as the allocation itself). Other borrowed memory (DLPack
imports of foreign arrays) is not the backend's, so never tracked. Writing through the raw
`Buffer.handle` bypasses all of this (docs/api.md says not to).

Cost and memory: a copy is made the second time a dispatch reads the same region of an
unchanged buffer this way (one-off reads never pay for a transposition), only for regions
of at least `MIN_ELEMENTS`, and all copies of one backend together take at most its `cap`
bytes (`Device("cpu", transposed_cache=...)`, default `CAP_BYTES`; 0: none). A copy that
does not fit is not made (that read stays strided): evicting would make a working set
bigger than the cap transpose on every read, dearer than the strided reads it replaces.
Copies go when their buffer changes, is freed or is garbage-collected.
"""

from __future__ import annotations

import weakref
from typing import Optional

import numpy as np

CAP_BYTES = 256 << 20  # all transposed copies of one cpu backend
MIN_ELEMENTS = 1 << 14  # smaller regions: the strided read is cheap, a copy not worth its bookkeeping
TILE_ROWS = 256  # rows transposed at a time (a tile stays in cache: 3x faster than one big copy)


class _Owner:
    """The cache state of one allocation (a uint8 numpy array the backend made)."""

    __slots__ = ("ref", "cache", "copies", "seen", "busy", "escaped", "views")

    def __init__(self, handle: np.ndarray, cache: "TransposedCache"):
        self.ref = weakref.ref(handle, cache._gone(id(handle)))
        self.cache = cache
        self.copies: dict = {}  # key -> transposed copy
        self.seen: set = set()  # keys read once since the last change
        self.busy = 0  # dispatches running that bind it writably
        self.escaped = False
        self.views: dict = {}  # id(view) -> (weakref to it, its byte offset): a bound view's, found again

    def offset(self, a: np.ndarray) -> int:
        """The byte offset of view `a` in the allocation (ndarray.ctypes is slow: memoised)."""
        v = self.views.get(id(a))
        if v is not None and v[0]() is a:
            return v[1]
        off = a.__array_interface__["data"][0] - self.ref().__array_interface__["data"][0]
        if len(self.views) > 64:
            self.views = {i: v for i, v in self.views.items() if v[0]() is not None}
        self.views[id(a)] = (weakref.ref(a), off)
        return off

    def drop(self) -> None:
        self.cache.bytes -= sum(c.nbytes for c in self.copies.values())
        self.copies.clear()
        self.seen.clear()


# id(handle) -> _Owner, for every tracking backend: rt.span finds a view's owner by its base
_OWNERS: dict[int, _Owner] = {}


class TransposedCache:
    """One backend's transposed copies: at most `cap` bytes together."""

    def __init__(self, cap: int = CAP_BYTES):
        self.cap = cap
        self.bytes = 0

    def _gone(self, ident: int):
        def forget(_ref) -> None:  # the allocation died: its copies go with it
            o = _OWNERS.get(ident)
            if o is not None and o.ref is _ref:
                o.drop()
                del _OWNERS[ident]
        return forget

    def track(self, handle: np.ndarray) -> None:
        """A new allocation of the backend's: its contents change only through it."""
        if self.cap > 0:
            _OWNERS[id(handle)] = _Owner(handle, self)

    def fits(self, nbytes: int) -> bool:
        return self.bytes + nbytes <= self.cap


def _owner(handle) -> Optional[_Owner]:
    """The state of the allocation `handle` is, or is a view of (a borrowed DLPack export)."""
    if isinstance(handle, np.ndarray) and handle.base is not None:
        handle = handle.base
    o = _OWNERS.get(id(handle))
    return o if o is not None and o.ref() is handle else None


def changed(handle) -> None:
    """The allocation's contents changed (or may have): its copies are stale."""
    o = _owner(handle)
    if o is not None and (o.copies or o.seen):
        o.drop()


def writing(handles, delta: int) -> None:
    """A dispatch binding `handles` writably starts (`delta` 1: each changes, and is busy
    until it ends) or ends (-1)."""
    for h in handles:
        o = _owner(h)
        if o is not None:
            if o.copies or o.seen:
                o.drop()
            o.busy += delta


def escaped(handle) -> None:
    """The allocation's memory was handed out writable: never copy it again."""
    o = _owner(handle)
    if o is not None:
        o.drop()
        o.escaped = True


def transposed(a: np.ndarray, b0: int, d: int, j0: int, k: int, good: int, lanes: int) -> Optional[tuple]:
    """(T, r) with T[j0 + j, r + l] == a[b0 + d*l + j0 + j] for j < k, l < good, and 0 for
    good <= l < lanes (runs wholly past the end of `a`, which rt.ld reads as 0), T's rows
    contiguous: the cached transposed copy of `a` read as rows of `d` from `b0 % d`, with
    zero columns after its last whole row. None: not cacheable, or the first read of this
    region since its buffer changed."""
    if d < 2 or j0 + k > d or good < 2 or k * lanes < MIN_ELEMENTS or a.ndim != 1 or a.strides[0] != a.itemsize:
        return None
    o = _owner(a)
    if o is None or o.busy or o.escaped:
        return None
    first = b0 % d
    r = b0 // d
    R = (a.shape[0] - first) // d  # whole rows of the matrix from `first`
    if r + good > R:
        return None
    start = o.offset(a) + first * a.itemsize
    key = (start, d, R, a.dtype)
    t = o.copies.get(key)
    if t is not None and r + lanes <= t.shape[1]:
        return t, r
    if t is None and key not in o.seen:
        o.seen.add(key)
        return None
    cols = max(R, -(-(r + lanes) // 64) * 64, 0 if t is None else t.shape[1])  # zero columns: lanes past the end
    if not o.cache.fits(d * cols * a.itemsize - (0 if t is None else t.nbytes)):
        return None
    m = a[first:first + R * d].reshape(R, d)
    new = np.empty((d, cols), a.dtype)
    new[:, R:] = 0
    for r0 in range(0, R, TILE_ROWS):
        new[:, r0:min(R, r0 + TILE_ROWS)] = m[r0:r0 + TILE_ROWS].T
    new.flags.writeable = False
    o.cache.bytes += new.nbytes - (0 if t is None else t.nbytes)
    o.copies[key] = new
    return new, r
