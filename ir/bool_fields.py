"""`bool` fields of `#[goldy::gpu]` structs, stored as u32 0/1 on every target.

No GPU language can share a `bool` with the host (WGSL forbids it in storage and uniform
buffers, C++ makes it one byte), so the one rule is written here, for every target: the
struct declaration holds `u32`, a read of the field is `field != 0` and a write stores
`value as u32`. ir/layout.py already gives `bool` the 4 bytes of a `u32`, and the host
dtypes (runtime/dtypes.py) convert numpy bools to 0/1 when they pack a struct."""

from __future__ import annotations

import dataclasses

from . import nodes as N
from . import types as T

__all__ = ["store_bool_fields_as_u32"]


def store_bool_fields_as_u32(k: N.Kernel) -> None:
    """Rewrite kernel `k` (a copy the caller owns) in place."""
    fields = {(s.name, f.name) for s in k.structs for f in s.fields if f.ty == "bool"}
    if not fields:
        return
    k.structs = [N.StructDecl(s.name, [N.StructField(f.name, "u32" if f.ty == "bool" else f.ty, f.span)
                                       for f in s.fields], s.span) for s in k.structs]

    def is_bool_field(e: N.Expr) -> bool:
        return isinstance(e, N.Field) and T.is_struct(e.value.ty) and (T.struct_name(e.value.ty), e.name) in fields

    def expr(e: N.Expr) -> N.Expr:
        _children(e, expr)
        if is_bool_field(e):
            e.ty = "u32"
            return N.Binary("bool", e.span, "ne", e, N.Const("u32", e.span, 0))
        return e

    def stmts(body: list[N.Stmt]) -> None:
        for s in body:
            if isinstance(s, N.Assign) and is_bool_field(s.target):
                _children(s.target, expr)
                s.target.ty = "u32"
                s.value = N.Cast("u32", s.value.span, expr(s.value))
            else:
                _children(s, expr)
            for b in N.child_bodies(s):
                stmts(b)
    stmts(k.body)


def _children(node, fn) -> None:
    """Replace every expression field of `node` (a statement or expression) by `fn` of it."""
    for f in dataclasses.fields(node):
        v = getattr(node, f.name)
        if isinstance(v, N.Expr):
            setattr(node, f.name, fn(v))
        elif isinstance(v, list) and v and isinstance(v[0], N.Expr):
            setattr(node, f.name, [fn(x) for x in v])
