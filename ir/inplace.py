"""In-place bindings: when one buffer may be bound to a read parameter and a written one.

Goldy's in-place `_into` ops (`add_into(left, ones, left)`) bind the same memory to
`a: &[f32]` and `out: &mut [f32]`. Rust's aliasing rule forbids that in general: a
kernel written for separate buffers may read an element another thread (or the same
thread, earlier) has already overwritten. It is allowed where the IR proves nobody can
observe the difference, the rule fusion uses for a parcel shared between stages:

- every access (load, store) to both parameters is at the thread's own index, the
  value of `global_id().x` (directly or through immutable `let`s), in a kernel whose
  workgroup is `[N, 1, 1]` (the runtime also requires a one-dimensional grid), so each
  element is touched by exactly one thread;
- no atomic, collective or other statement uses either parameter;
- within the thread, no load of the read parameter comes after a store to the written
  one (in program order, loops counted twice), so every read sees the original value.

Then no element is read by any thread after it was written, and the result is the one
separate buffers would give, on every backend (PTX may even keep loading the read
parameter through the non-coherent cache). `refusal` returns None when the rule holds,
otherwise the first reason it fails, naming the Rust line.
"""

from __future__ import annotations

from typing import Optional

from . import nodes as N
from .info import OwnIndex

OWN_INDEX = "`global_id().x`"


class _Refused(Exception):
    pass


def refusal(kernel: N.Kernel, read: str, written: str) -> Optional[str]:
    """Why `read` and `written` may not share one buffer (None: they may)."""
    pr, pw = kernel.param(read), kernel.param(written)
    if pr is None or pw is None:
        return f"no parameter `{read if pr is None else written}`"
    families = (N.BUFFER_CATEGORIES, N.TENSOR_CATEGORIES)
    if not any(pr.category in f and pw.category in f for f in families):
        return f"`{read}` and `{written}` are not both buffers or both tensor views"
    if pr.category in N.WRITABLE_CATEGORIES:
        return f"both `{read}` and `{written}` are written"
    if tuple(kernel.workgroup_size[1:]) != (1, 1):
        return (f"the workgroup size {list(kernel.workgroup_size)} is not [N, 1, 1], so {OWN_INDEX} "
                f"does not tell threads apart")
    try:
        _Walk(kernel, read, written).body(kernel.body, False)
    except _Refused as e:
        return str(e)
    return None


class _Walk:
    def __init__(self, kernel: N.Kernel, read: str, written: str):
        self.read, self.written = read, written
        self.own = OwnIndex(kernel, one_d=True)  # the runtime refuses in-place use on other grids
        self.first_store: Optional[N.Span] = None

    def body(self, stmts: list[N.Stmt], stored: bool) -> bool:
        """Walk `stmts` in order; `stored`: a store to `written` may have happened before."""
        for s in stmts:
            stored = self.stmt(s, stored)
        return stored

    def stmt(self, s: N.Stmt, stored: bool) -> bool:
        for e in N.stmt_exprs(s):
            if isinstance(s, N.Store) and e is s.index and s.resource in (self.read, self.written):
                self.at_own(s.index, s.resource, s.span, "written")
            self.loads(e, stored)
        if isinstance(s, N.If):
            return self.body(s.then_body, stored) | self.body(s.else_body, stored)
        if isinstance(s, (N.While, N.Loop, N.For)):
            once = self.body(s.body, stored)
            if isinstance(s, N.While):
                self.loads(s.cond, once)  # the condition runs again after the body
            return self.body(s.body, once)  # the next iteration follows the previous one
        if isinstance(s, N.Store):
            if s.resource == self.written:
                self.first_store = self.first_store or s.span
                return True
            return stored
        used = {getattr(s, a, None) for a in ("resource", "buffer", "target_resource")}
        for name in (self.read, self.written):
            if name in used:
                raise _Refused(f"`{name}` is used by `{_what(s)}` at line {s.span.line}")
        return stored

    def loads(self, e: N.Expr, stored: bool) -> None:
        for x in N.walk_expr(e):
            if isinstance(x, N.Load) and x.resource in (self.read, self.written):
                self.at_own(x.index, x.resource, x.span, "read")
                if x.resource == self.read and stored:
                    where = f" (line {self.first_store.line})" if self.first_store is not None else ""
                    raise _Refused(f"`{self.read}` is read at line {x.span.line} after `{self.written}` may have "
                                   f"been written{where}: sharing one buffer, it would see the new value")

    def at_own(self, index: N.Expr, name: str, span: N.Span, how: str) -> None:
        if not self.own(index):
            raise _Refused(f"`{name}` is {how} at line {span.line} at an index other than the thread's own "
                           f"index {OWN_INDEX}")


def _what(s: N.Stmt) -> str:
    if isinstance(s, N.Atomic):
        return f"atomic_{s.op}"
    name = type(s).__name__
    return {"Softmax": "workgroup_softmax_in_place"}.get(name, name)
