"""Legalisation: rewrite into plain IR what a target does not render natively
(ir/targets.py), so each rule is written once, here, for every target without it.

`legalize(kernel, target)` returns a new kernel (the input is left as it is) that the
verifier accepts. It runs after `ir.checks.insert_checks`: the nodes it adds carry no
check site (the reduction tree's scratch accesses are in range by construction), so a
kernel faults exactly where it did before. Softmax reads and writes the caller's row, so
`insert_checks` expands it first (`expand_softmax`) and checks those accesses like any other.

Collectives (docs/semantics.md, "Workgroup operations"):

- `Reduce` without "reduce": lane `l` (the linear local index) stores its value to
  `scratch[l]`, barrier; then for s = 0 .. log2(N) - 1, lanes with `l % 2^(s+1) == 0` set
  `scratch[l] = scratch[l] op scratch[l + 2^s]` (lower lane on the left), barrier after
  each level; every lane reads `scratch[0]`, and a trailing barrier ends the call.
- `Softmax` without "softmax": in terms of `Reduce` (lowered in turn where the target
  lacks "reduce"). Lane `l` covers t = l, l + N, l + 2N, ... < count: its max is x[l]
  (-1e30 past count) folded with `f32::max` over its later elements in that order; then
  `m = workgroup_max`; its sum is exp(x[l] - m) (0 past count) plus exp(x[t] - m) for its
  later elements, left to right; `s = workgroup_sum`; it writes x[t] = exp(x[t] - m) / s
  for each of its elements; a trailing barrier makes the row visible to every lane.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from . import nodes as N
from .bool_fields import store_bool_fields_as_u32
from .clone import clone, clone_unshared
from .targets import FEATURES, Target
from .uniformity import Uniformity

__all__ = ["legalize", "expand_softmax", "NEG_BIG"]

NEG_BIG = -1e30  # softmax's stand-in for lanes past `count` in the max


def legalize(kernel: N.Kernel, target: Target) -> N.Kernel:
    k = clone_unshared(kernel)  # every expression position its own node from the start
    store_bool_fields_as_u32(k)  # every target: ir/bool_fields.py (adds no shared node)
    _lower_body(k, target, unshared=True)
    return k


_SOFTMAX_ONLY = Target("softmax", frozenset(FEATURES) - {"softmax"}, "lowers softmax, keeps the rest")
_SOFTMAX_ONLY_ONE_TILE = dataclasses.replace(_SOFTMAX_ONLY, softmax_one_tile=True)


def expand_softmax(kernel: N.Kernel, one_tile: bool = False) -> N.Kernel:
    """`workgroup_softmax_in_place` in plain IR (its max and sum kept as `Reduce`, for
    `legalize` to lower per target), so that ir/checks.py sees its loads and stores of the
    row; no target renders softmax natively. `one_tile`: as for a target with
    `softmax_one_tile` (ir/targets.py). Returns the input when it has none."""
    if not any(isinstance(s, N.Softmax) for s in N.walk_stmts(kernel.body)):
        return kernel
    k = clone(kernel)
    _lower_body(k, _SOFTMAX_ONLY_ONE_TILE if one_tile else _SOFTMAX_ONLY)
    return k


def _lower_body(k: N.Kernel, target: Target, unshared: bool = False) -> None:
    """`unshared`: no node of `k.body` is shared yet, so only the builders' output needs `_unshare`."""
    low = _Lowering(k, target)
    k.body = low.block(k.body)
    if not unshared or low.count:
        _unshare(k.body, set())
    if low.used_lane and "local_id" not in k.builtins:
        k.builtins = [b for b in N.BUILTINS if b in k.builtins or b == "local_id"]


class _Lowering:
    def __init__(self, k: N.Kernel, target: Target):
        self.k = k
        self.target = target
        self.taken = ({p.name for p in k.params} | {w.name for w in k.workgroup_arrays}
                      | {s.name for s in k.structs} | set(k.locals))
        self.count = 0
        self.used_lane = False
        self.uniformity = None  # of `k` before this lowering, made when a softmax asks (one_tile_branch)

    # -- helpers building IR at one span

    def fresh(self, stem: str, ty: str) -> str:
        name, j = stem, 1
        while name in self.taken:
            j += 1
            name = f"{stem}_{j}"
        self.taken.add(name)
        self.k.locals[name] = ty
        return name

    def block(self, stmts: list[N.Stmt]) -> list[N.Stmt]:
        out: list[N.Stmt] = []
        for s in stmts:
            if isinstance(s, N.Reduce) and not self.target.has("reduce"):
                out += self.reduce(s, None)
            elif isinstance(s, N.Softmax) and not self.target.has("softmax"):
                out += self.softmax(s)
            else:
                if isinstance(s, N.If):
                    s.then_body = self.block(s.then_body)
                    s.else_body = self.block(s.else_body)
                elif isinstance(s, (N.While, N.Loop, N.For)):
                    s.body = self.block(s.body)
                out.append(s)
        return out

    def lane(self, sp: N.Span, stem: str) -> tuple[N.Stmt, N.Expr]:
        """`let <stem>_lane = <linear local index>` and a reference to it."""
        self.used_lane = True
        lid = N.Builtin("vec3<u32>", sp, "local_id")
        wx, wy, wz = self.k.workgroup_size
        e: N.Expr = N.Swizzle("u32", sp, lid, "x")
        if wy > 1 or wz > 1:  # x fastest
            yz = _add(sp, N.Swizzle("u32", sp, lid, "y"), _mul(sp, _u32(sp, wy), N.Swizzle("u32", sp, lid, "z")))
            e = _add(sp, e, _mul(sp, _u32(sp, wx), yz))
        name = self.fresh(f"{stem}_lane", "u32")
        return N.Let(sp, name, "u32", e, False), N.Var("u32", sp, name)

    # -- workgroup_sum / workgroup_max

    def reduce(self, s: N.Reduce, lane: Optional[N.Expr]) -> list[N.Stmt]:
        sp, ty, n = s.span, s.value.ty, s.n
        out: list[N.Stmt] = []
        self.count += 1
        stem = f"{s.op}{self.count}"
        if lane is None:
            let, lane = self.lane(sp, stem)
            out.append(let)
        wx, wy, wz = self.k.workgroup_size
        extra = wx * wy * wz > n  # lanes past n take no part (the importer makes the group exactly n)
        in_n = _lt(sp, lane, _u32(sp, n))

        def slot(i: N.Expr) -> N.Load:
            return N.Load(ty, sp, s.scratch, i)

        first = N.Store(sp, s.scratch, lane, s.value)
        out += [N.If(sp, in_n, [first], []) if extra else first, N.Barrier(sp)]
        levels = n.bit_length() - 1
        if levels:
            # for level in 0..log2(N) { let step = 1 << level; if lane % (2 * step) == 0 {...} barrier }
            level = self.fresh(f"{stem}_level", "u32")
            step = self.fresh(f"{stem}_step", "u32")
            h = N.Var("u32", sp, step)
            mask = N.Binary("u32", sp, "sub", N.Binary("u32", sp, "shl", h, _u32(sp, 1)), _u32(sp, 1))
            cond: N.Expr = N.Binary("bool", sp, "eq", N.Binary("u32", sp, "bitand", lane, mask), _u32(sp, 0))
            if extra:
                cond = N.Binary("bool", sp, "and", in_n, cond)
            combined = _combine(sp, s.op, ty, slot(lane), slot(_add(sp, lane, h)))
            body = [N.Let(sp, step, "u32", N.Binary("u32", sp, "shl", _u32(sp, 1), N.Var("u32", sp, level)), False),
                    N.If(sp, cond, [N.Store(sp, s.scratch, lane, combined)], []), N.Barrier(sp)]
            out.append(N.For(sp, level, "u32", _u32(sp, 0), _u32(sp, levels), False, body))
        out += [N.Assign(sp, N.Var(ty, sp, s.target), slot(_u32(sp, 0))), N.Barrier(sp)]
        return out

    # -- workgroup_softmax_in_place

    def softmax(self, s: N.Softmax) -> list[N.Stmt]:
        sp, n = s.span, s.n
        self.count += 1
        stem = f"softmax{self.count}"
        out: list[N.Stmt] = []
        lane_let, lane = self.lane(sp, stem)
        out.append(lane_let)
        base = self.let(out, sp, stem, "base", "u32", s.base)
        count = self.let(out, sp, stem, "count", "u32", s.count)
        if self.one_tile_branch(s):
            # count == N (a row softmax whose rows are the workgroup's width): every lane has
            # exactly one element, so that copy has no `lane < count` guard and no loop over
            # later tiles; count < N: no lane has a later element, so that copy has no such
            # loop. The same loads, stores and operations in the same order as the general
            # form, so the same bits and the same first fault. No lane can disagree on
            # either condition
            whole = self.let(out, sp, stem, "one_tile", "bool", N.Binary("bool", sp, "eq", count, _u32(sp, n)))
            fast: list[N.Stmt] = []
            self.softmax_one_tile(s, stem, lane, base, fast)
            part: list[N.Stmt] = []
            self.softmax_row(s, stem, lane, base, count, part, single=True)
            slow: list[N.Stmt] = []
            self.softmax_row(s, stem, lane, base, count, slow)
            short = N.Binary("bool", sp, "lt", count, _u32(sp, n))
            out.append(N.If(sp, whole, fast, [N.If(sp, short, part, slow)]))
        else:
            self.softmax_row(s, stem, lane, base, count, out)
        out.append(N.Barrier(sp))  # the trailing barrier
        return out

    def let(self, out: list[N.Stmt], sp: N.Span, stem: str, role: str, ty: str, value: Optional[N.Expr],
            mutable: bool = False) -> N.Var:
        """`let <stem>_<role>: ty = value` appended to `out` (no value: declared mutable), and its Var."""
        name = self.fresh(f"{stem}_{role}", ty)
        out.append(N.Let(sp, name, ty, value, mutable or value is None))
        return N.Var(ty, sp, name)

    def one_tile_branch(self, s: N.Softmax) -> bool:
        """Whether softmax `s` gets the branches to its one-tile copies: the target asks for them
        (ir/targets.py `softmax_one_tile`), the workgroup is exactly [N, 1, 1], and `s` is
        reached by every lane together with a count no lane can disagree on (else the
        branch would be a lane-varying one around barriers)."""
        if not self.target.softmax_one_tile or tuple(self.k.workgroup_size) != (s.n, 1, 1):
            return False
        if self.uniformity is None:
            self.uniformity = Uniformity(self.k, "may")
        return id(s) in self.uniformity.aligned and not self.uniformity.varies(s.count)

    def softmax_row(self, s: N.Softmax, stem: str, lane: N.Expr, base: N.Var, count: N.Var,
                    out: list[N.Stmt], single: bool = False) -> None:
        """The row's max, sum and normalised stores into `out` (module docstring); `single`:
        count < N is known, so no lane has a later element (no loops over later tiles)."""
        sp, n = s.span, s.n

        def let(role: str, ty: str, value: Optional[N.Expr], mutable: bool = False) -> N.Var:
            return self.let(out, sp, stem, role, ty, value, mutable)

        def f32(v: float) -> N.Const:
            return N.Const("f32", sp, float(v))

        # tiles of N elements the row spans: count / N rounded up, without overflow
        if not single:
            rest = N.Binary("bool", sp, "ne", N.Binary("u32", sp, "bitand", count, _u32(sp, n - 1)), _u32(sp, 0))
            tiles = let("tiles", "u32", _add(sp, N.Binary("u32", sp, "shr", count, _u32(sp, n.bit_length() - 1)),
                                             N.Select("u32", sp, rest, _u32(sp, 1), _u32(sp, 0))))
        first = _lt(sp, lane, count)

        def x(i: N.Expr) -> N.Load:
            return N.Load("f32", sp, s.resource, _add(sp, base, i))

        def later(body: Callable[[N.Expr], list[N.Stmt]]) -> list[N.Stmt]:
            """`for j in 1..tiles { if lane < count - j * N { body(j * N + lane) } }`:
            the lane's elements after its first, in increasing order (none if `single`)."""
            if single:
                return []
            j = self.fresh(f"{stem}_j", "u32")
            jn = _mul(sp, N.Var("u32", sp, j), _u32(sp, n))
            inside = _lt(sp, lane, N.Binary("u32", sp, "sub", count, jn))
            t = self.fresh(f"{stem}_t", "u32")
            tv = N.Var("u32", sp, t)
            return [N.For(sp, j, "u32", _u32(sp, 1), tiles, False,
                          [N.If(sp, inside, [N.Let(sp, t, "u32", _add(sp, jn, lane), False)] + body(tv), [])])]

        # the maximum
        x0 = let("x", "f32", f32(NEG_BIG), mutable=True)
        out.append(N.If(sp, first, [_set(sp, x0, x(lane))], []))
        mine = let("lane_max", "f32", x0, mutable=True)
        out += later(lambda t: [_set(sp, mine, _combine(sp, "max", "f32", mine, x(t)))])
        m = let("max", "f32", None)
        out += self.collective(N.Reduce(sp, m.name, "max", n, mine, s.scratch), lane)

        # the sum
        e0 = let("e", "f32", f32(0.0), mutable=True)
        out.append(N.If(sp, first, [_set(sp, e0, _exp_minus(sp, x0, m))], []))
        part = let("lane_sum", "f32", e0, mutable=True)
        out += later(lambda t: [_set(sp, part, _combine(sp, "sum", "f32", part, _exp_minus(sp, x(t), m)))])
        total = let("sum", "f32", None)
        out += self.collective(N.Reduce(sp, total.name, "sum", n, part, s.scratch), lane)

        # the row, normalised
        def write(t: N.Expr, value: N.Expr) -> N.Store:
            return N.Store(sp, s.resource, _add(sp, base, t), N.Binary("f32", sp, "div", value, total))

        out.append(N.If(sp, first, [write(lane, e0)], []))
        out += later(lambda t: [write(t, _exp_minus(sp, x(t), m))])

    def softmax_one_tile(self, s: N.Softmax, stem: str, lane: N.Expr, base: N.Var, out: list[N.Stmt]) -> None:
        """`softmax_row` at count == N: lane l's one element x[base + l] (its address
        computed once), no guard and no later tiles. Every value, access and operation is
        the general form's at that count, in its order."""
        sp, n = s.span, s.n
        at = self.let(out, sp, stem, "at", "u32", _add(sp, base, lane))
        x0 = self.let(out, sp, stem, "x", "f32", N.Load("f32", sp, s.resource, at))
        m = self.let(out, sp, stem, "max", "f32", None)
        out += self.collective(N.Reduce(sp, m.name, "max", n, x0, s.scratch), lane)
        e0 = self.let(out, sp, stem, "e", "f32", _exp_minus(sp, x0, m))
        total = self.let(out, sp, stem, "sum", "f32", None)
        out += self.collective(N.Reduce(sp, total.name, "sum", n, e0, s.scratch), lane)
        out.append(N.Store(sp, s.resource, at, N.Binary("f32", sp, "div", e0, total)))

    def collective(self, r: N.Reduce, lane: N.Expr) -> list[N.Stmt]:
        return [r] if self.target.has("reduce") else self.reduce(r, lane)


def _u32(sp: N.Span, v: int) -> N.Const:
    return N.Const("u32", sp, v)


def _add(sp: N.Span, a: N.Expr, b: N.Expr) -> N.Binary:
    return N.Binary(a.ty, sp, "add", a, b)


def _mul(sp: N.Span, a: N.Expr, b: N.Expr) -> N.Binary:
    return N.Binary(a.ty, sp, "mul", a, b)


def _lt(sp: N.Span, a: N.Expr, b: N.Expr) -> N.Binary:
    return N.Binary("bool", sp, "lt", a, b)


def _set(sp: N.Span, var: N.Var, value: N.Expr) -> N.Assign:
    return N.Assign(sp, N.Var(var.ty, sp, var.name), value)


def _exp_minus(sp: N.Span, value: N.Expr, m: N.Expr) -> N.Call:
    """softmax's `exp(value - max)`."""
    return N.Call("f32", sp, "exp", [N.Binary("f32", sp, "sub", value, m)])


def _combine(sp: N.Span, op: str, ty: str, a: N.Expr, b: N.Expr) -> N.Expr:
    """One tree step, `a` the lower lane: wrapping add, or Rust's max (f32: NaN-ignoring)."""
    return N.Binary(ty, sp, "add", a, b) if op == "sum" else N.Call(ty, sp, "max", [a, b])


def _unshare(stmts: list[N.Stmt], seen: set) -> None:
    """Give every expression position its own node: the builders above reuse nodes (a
    lane's `Var`, a bound), and passes may annotate nodes in place."""
    for s in stmts:
        _unshare_fields(s, seen)
        for body in N.child_bodies(s):
            _unshare(body, seen)


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}  # per node class (dataclasses.fields is slow per call)


def _unshare_fields(node, seen: set) -> None:
    names = _FIELD_NAMES.get(type(node))
    if names is None:
        names = _FIELD_NAMES[type(node)] = tuple(f.name for f in dataclasses.fields(node))
    for name in names:
        v = getattr(node, name)
        if isinstance(v, N.Expr):
            setattr(node, name, _own(v, seen))
        elif isinstance(v, list) and v and isinstance(v[0], N.Expr):
            setattr(node, name, [_own(x, seen) for x in v])


def _own(e: N.Expr, seen: set) -> N.Expr:
    if id(e) in seen:
        return clone(e)  # a fresh subtree: none of its nodes is seen yet
    seen.add(id(e))
    _unshare_fields(e, seen)
    return e
