"""The cyclic garbage collector paused while one import or emit runs.

Importing and emitting a large kernel allocates hundreds of thousands of IR and syntax
objects and frees almost none until it returns, so each generation-2 collection the
allocations trigger walks them all for nothing: a quarter of the import time of an
8000-statement kernel (issue 14's bound is 1 s per kernel). Reference counting still frees
everything acyclic at once; the collector runs again as soon as the outermost pause ends.
What the pause allocated and kept (the imported IR) is moved to the oldest generation
then (`gc.freeze()` + `gc.unfreeze()`), instead of waiting in the youngest for a scan that
would walk it all once more (60-77 ms of an 8000-statement import): the next full
collection looks at it, as at any long-lived object. Pauses nest and may overlap across threads (a count, under a lock).
"""

from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["gc_paused"]

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextmanager
def gc_paused() -> Iterator[None]:
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.freeze()  # every tracked object to the permanent generation ...
                gc.unfreeze()  # ... and back into the oldest, without a scan
                gc.enable()
