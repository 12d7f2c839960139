"""Merging repeated guards: `if c {A}` followed by `if c {B}` becomes `if c {A; B}`.

A fused region (runtime/autofusion.py) runs its stages in order, each behind its own guard
(`let i_s1 = global_id().x; if i_s1 < n_s1 { ... }`); once specialization has baked the
stages' `n` (ir/specialize.py) the guards are one condition written four times, and each
costs a compare, a predicate and a select of every forwarded value per element. Merged,
the stages' bodies run under one guard.

The rewrite keeps every thread's execution: the two bodies run in the same order under the
same condition, evaluated once instead of twice, which is the same value where
- the condition reads no memory, calls nothing and divides no integers (it has no effect
  and no check site),
- the first body assigns no variable the condition reads (immutable `let`s never change),
- neither body leaves the statement sequence (`return`, `break`, `continue`).
Between the two `if`s only immutable `let`s of such pure values may stand; they move
before the first `if` (their values depend on nothing the body changes). Two conditions
are the same when they are equal after replacing each such `let` by the earlier one with
the same value (`i_s1` by `i`); reads of such a `let` then read the earlier one (the same
value), so what ir/checks.py knows of `i` covers them. Locals are unique in the IR, so the
merged body needs no renaming.
"""

from __future__ import annotations

from typing import Optional

from . import nodes as N

__all__ = ["merge_guards"]

_PURE = (N.Var, N.Const, N.Builtin, N.Binary, N.Unary, N.Cast, N.Field, N.Swizzle, N.Select)
_LEAVES = (N.Return, N.Break, N.Continue)


def merge_guards(kernel: N.Kernel) -> N.Kernel:
    """`kernel` with its top-level repeated guards merged (module docstring), in place."""
    body = kernel.body
    lets = {s.name for s in N.walk_stmts(body) if isinstance(s, N.Let) and not s.mutable}
    fixed = (lets | {p.name for p in kernel.params}) - _assigned(body)
    kernel.body = _block(body, fixed)
    return kernel


def _block(body: list[N.Stmt], fixed: set[str]) -> list[N.Stmt]:
    """`fixed`: the variables no statement changes (immutable lets, parameters)."""
    out: list[N.Stmt] = []
    alias: dict[str, str] = {}  # an immutable let -> the earlier one with the same value
    values: dict[str, str] = {}  # the canonical text of a pure value -> its first let
    pending: list[N.Stmt] = []  # pure immutable lets after out[-1]
    for s in body:
        if isinstance(s, N.Let) and s.value is not None and s.name in fixed and _pure(s.value, fixed):
            key = _key(s.value, alias)
            if key in values:
                alias[s.name] = values[key]
            else:
                values[key] = s.name
            pending.append(s)
            continue
        last = out[-1] if out else None
        if isinstance(s, N.If) and isinstance(last, N.If) and _mergeable(last, s, alias):
            out[-1:-1] = pending  # the lets move before the first `if`
            last.then_body = last.then_body + s.then_body
            last.else_body = last.else_body + s.else_body
        else:
            out += pending + [s]
        pending = []
    out += pending
    for st in N.walk_stmts(out):  # `i_s1` reads become `i`, so facts about `i` cover them
        for e in N.stmt_exprs(st):
            for x in N.walk_expr(e):
                if isinstance(x, N.Var) and x.name in alias:
                    x.name = alias[x.name]
    return out


def _mergeable(a: N.If, b: N.If, alias: dict[str, str]) -> bool:
    if not (_pure(a.cond) and _pure(b.cond)) or _key(a.cond, alias) != _key(b.cond, alias):
        return False
    reads = {x.name for x in N.walk_expr(a.cond) if isinstance(x, N.Var)}
    if reads & _assigned(a.then_body + a.else_body):
        return False
    stmts = list(N.walk_stmts(a.then_body + a.else_body + b.then_body + b.else_body))
    return not any(isinstance(x, _LEAVES) for x in stmts)


def _pure(e: N.Expr, fixed: Optional[set[str]] = None) -> bool:
    """No memory read, call, check site or integer division; with `fixed`, reading only
    variables in it or parameters (so the value is the same wherever it is evaluated)."""
    for x in N.walk_expr(e):
        if not isinstance(x, _PURE) or getattr(x, "check", -1) >= 0:
            return False
        if isinstance(x, N.Binary) and x.op in ("div", "rem") and x.ty in ("u32", "i32"):
            return False  # may trap once ir/checks.py has run: it must not move
        if fixed is not None and isinstance(x, N.Var) and x.name not in fixed:
            return False
    return True


def _key(e: N.Expr, alias: dict[str, str]) -> str:
    """A canonical text of a pure expression: its node types, fields and children, with
    aliased names replaced."""
    def walk(x: N.Expr) -> str:
        if isinstance(x, N.Var):
            return f"Var({alias.get(x.name, x.name)}:{x.ty})"
        fields = sorted((k, v) for k, v in vars(x).items()
                        if k != "span" and not isinstance(v, (N.Expr, list)))
        kids = ",".join(walk(c) for c in N.expr_children(x))
        return f"{type(x).__name__}{fields}({kids})"
    return walk(e)


def _assigned(body: list[N.Stmt]) -> set[str]:
    """Every variable a statement in `body` may assign (Assign, a `for` variable, the
    target of an Atomic or a Reduce)."""
    out: set[str] = set()
    for s in N.walk_stmts(body):
        if isinstance(s, N.Assign):
            out |= {x.name for x in N.walk_expr(s.target) if isinstance(x, N.Var)}
        elif isinstance(s, N.For):
            out.add(s.var)
        t = getattr(s, "target", None)
        if isinstance(t, str):
            out.add(t)
    return out
