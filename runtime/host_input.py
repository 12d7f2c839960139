"""Host-API inputs checked once, so that what numpy or Python would raise about them
(ValueError for a ragged list, TypeError for a dtype name numpy does not know, a float
where a count belongs) reaches the user as a BindingError naming the call and the value.

runtime/core.py and runtime/tensor.py call these before anything is allocated or bound.
"""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from goldy_import.errors import BindingError


def shown(v: Any) -> str:
    return f"{type(v).__name__} {v!r}"[:120]


def host_array(what: str, array: Any) -> np.ndarray:
    """`np.asarray(array)`; a ragged nesting or an object numpy cannot convert is refused."""
    if isinstance(array, np.ndarray):
        return array
    try:
        return np.asarray(array)
    except (ValueError, TypeError, OverflowError) as e:
        raise BindingError(f"{what}: expected an array (or a rectangular nesting of numbers), got {shown(array)}: "
                           f"{str(e).splitlines()[0][:160]}") from None


def host_dtype(what: str, dtype: Any) -> np.dtype:
    try:
        return np.dtype(dtype)
    except (TypeError, ValueError) as e:
        raise BindingError(f"{what}: {dtype!r} is not a dtype ({e}); expected float32, uint32, int32, bool "
                           f"or a structured dtype of a #[goldy::gpu] struct") from None


def is_int(v: Any) -> bool:
    """A Python or numpy integer, not a bool (Rust has no bool-to-integer coercion)."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def count(what: str, n: Any, least: int = 0) -> int:
    """An element count: an integer >= `least`."""
    if not is_int(n) or n < least:
        kind = "non-negative" if least == 0 else "positive"
        raise BindingError(f"{what}: expected a {kind} element count, got {shown(n)}")
    return int(n)


def index(what: str, v: Any) -> int:
    """An integer index (slice bounds, a parameter slot): never a float or a bool."""
    if not is_int(v):
        raise BindingError(f"{what}: expected an integer, got {shown(v)}")
    return int(v)


def timeout(what: str, t: Any) -> Optional[float]:
    """A wait's timeout: None (no limit) or a non-negative number of seconds; inf is None."""
    if t is None:
        return None
    if isinstance(t, (bool, np.bool_)) or not isinstance(t, (int, float, np.integer, np.floating)) or not t >= 0:
        raise BindingError(f"{what}: expected a timeout in seconds (a number >= 0) or None, got {shown(t)}")
    return None if t == float("inf") else float(t)


def flag(what: str, v: Any) -> bool:
    """A keyword that must be True or False (a string "no" would be truthy)."""
    if not isinstance(v, (bool, np.bool_)):
        raise BindingError(f"{what}: expected True or False, got {shown(v)}")
    return bool(v)


def path(what: str, p: Any) -> Any:
    """A file path: str or os.PathLike (bytes paths too)."""
    if not isinstance(p, (str, bytes)) and not hasattr(p, "__fspath__"):
        raise BindingError(f"{what}: expected a path (str or os.PathLike), got {shown(p)}")
    return p


def text(what: str, t: Any, kinds: tuple = (str, bytes)) -> Any:
    if not isinstance(t, kinds):
        raise BindingError(f"{what}: expected {' or '.join(k.__name__ for k in kinds)}, got {shown(t)}")
    return t
