"""A deep copy of kernel IR with `copy.deepcopy`'s meaning (a node shared in the original is
shared in the copy; objects that define `__deepcopy__` decide for themselves), several times
faster: IR nodes are plain dataclasses of strings, numbers, frozen spans, lists and other
nodes, so the copy needs no `__reduce_ex__` round trip per node. Frozen `Span`s are shared,
not copied: nothing can change them. Every pass that starts from a copy of the kernel
(legalize, insert_checks) pays this once per statement, so it is the emitters' floor."""

from __future__ import annotations

import copy
from typing import Any, Optional

from . import nodes as N

__all__ = ["clone", "clone_unshared"]

_SHARED = (str, int, float, bool, type(None), N.Span)
_PLAIN: dict[type, bool] = {}  # dataclass types copied field by field


def clone(x: Any, memo: Optional[dict] = None) -> Any:
    return _clone(x, {} if memo is None else memo)


def _plain(t: type) -> bool:
    ok = _PLAIN.get(t)
    if ok is None:
        ok = _PLAIN[t] = (hasattr(t, "__dataclass_fields__") and getattr(t, "__deepcopy__", None) is None
                          and not hasattr(t, "__slots__"))
    return ok


def _clone(x: Any, memo: dict) -> Any:
    t = type(x)
    if t in _SHARED:
        return x
    hit = memo.get(id(x))
    if hit is not None:
        return hit
    if t is list:
        out: Any = []
        memo[id(x)] = out
        out.extend([_clone(v, memo) for v in x])
    elif t is dict:
        out = {}
        memo[id(x)] = out
        for k, v in x.items():
            out[_clone(k, memo)] = _clone(v, memo)
    elif t is tuple:
        out = tuple([_clone(v, memo) for v in x])
        memo[id(x)] = out
    elif _plain(t):
        out = t.__new__(t)
        memo[id(x)] = out
        d = out.__dict__
        for k, v in x.__dict__.items():  # leaves inline: a call per string field was half the cost
            d[k] = v if type(v) in _SHARED else _clone(v, memo)
    else:
        return copy.deepcopy(x, memo)
    return out  # (the originals outlive the copy, so no id in `memo` is reused meanwhile)


def clone_unshared(kernel: N.Kernel) -> N.Kernel:
    """`clone(kernel)`, except that the body's statements and expressions are copied without
    a memo: a node the original shares (a `Var` at two positions) becomes one node per
    position, as `ir/legalize.py`'s `_unshare` would make it, in one walk instead of two."""
    t = type(kernel)
    out = t.__new__(t)
    memo = {id(kernel): out}
    d = out.__dict__
    for k, v in kernel.__dict__.items():
        d[k] = [_fresh(s) for s in v] if k == "body" else v if type(v) in _SHARED else _clone(v, memo)
    return out


def _fresh(x: Any) -> Any:
    """A copy of statement or expression `x` owning every node under it."""
    t = type(x)
    if t in _SHARED:
        return x
    if not _plain(t):
        return clone(x)
    out = t.__new__(t)
    d = out.__dict__
    for k, v in x.__dict__.items():
        tv = type(v)
        if tv in _SHARED:
            d[k] = v
        elif tv is list:
            d[k] = [y if type(y) in _SHARED else _fresh(y) for y in v]
        else:
            d[k] = _fresh(v)
    return out
