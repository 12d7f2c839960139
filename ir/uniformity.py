"""Uniformity: which values, and which points of a kernel, are the same for every thread
of a workgroup.

One analysis, two questions that err in opposite directions:

- `Uniformity(k, "may")`, for code generators: could the threads of a workgroup disagree?
  Where unsure it answers yes. PTX uses it to choose `bar.sync` and full-warp shuffles
  (only where every thread arrives together, `aligned`) over `barrier.sync`.
- `Uniformity(k, "must")`, for the importer: is a barrier or collective reached in
  control flow that the dialect calls thread-dependent (docs/semantics.md, "Divergent
  barriers")? Where unsure it answers no: a false report on a correct kernel is worse
  than a missed one. Its `findings` become diagnostic G0042.

Values. Constants, scalar and uniform parameters, `workgroup_id`, `num_workgroups`,
`workgroup_size`, lengths, image sizes and tensor ranks are uniform. `local_id` and
`global_id` vary along each axis whose workgroup extent is above 1. A load varies when
its index does; in "may" mode also when it reads a workgroup array or memory the kernel
writes. An `atomic_add` result varies (in "must" mode unless it adds the constant 0).
A collective's result is uniform ("may" mode: unless reached in divergent control flow).
A local varies when any assignment to it assigns a varying value or happens in divergent
control flow (flow-insensitive, iterated to a fixed point; locals are uniquely named).
Vectors are tracked lane by lane (`let g = global_id(); g.y` is uniform in a 1-D
workgroup), and u32 values with a known range are folded: an expression whose range is
one value, or a comparison the ranges decide (`local_id().x < 256` in a workgroup of 256),
is uniform.

Control flow becomes divergent inside an `if` on a varying condition, inside a loop whose
condition or range varies, after an `if`/loop in which some threads may have returned
(for the rest of the kernel), and inside a loop after a `break` or `continue` in control
flow that diverged within that loop (for the rest of the iteration; for every later
iteration too after a `break`). A `return`/`break` reached by all threads together
diverges nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from . import nodes as N
from . import types as T

U32_MAX = 0xFFFFFFFF
SYNC_STATEMENTS = (N.Barrier, N.Reduce, N.Softmax)


@dataclass(frozen=True)
class Reason:
    """Why control flow is divergent at a point: `kind` is "branch" (an `if` on a varying
    condition, at `span`), "loop" (a loop whose condition or range varies), "return",
    "break" or "continue" (some threads may have left there, in divergent control flow)."""

    kind: str
    span: N.Span


@dataclass(frozen=True)
class Finding:
    """A barrier, collective or softmax reached in divergent control flow."""

    stmt: N.Stmt
    reason: Reason


@dataclass(frozen=True)
class _Ctx:
    kernel: Optional[Reason]  # why this point is divergent at all
    loop: Optional[Reason]  # divergence that arose inside the innermost loop


@dataclass
class _Exits:
    """Divergent exits found in a block: some threads may have left the kernel, the loop,
    or this iteration, while others go on."""

    ret: Optional[Reason] = None
    brk: Optional[Reason] = None
    cont: Optional[Reason] = None

    def merge(self, other: "_Exits") -> None:
        self.ret = self.ret or other.ret
        self.brk = self.brk or other.brk
        self.cont = self.cont or other.cont


Lanes = list[bool]  # per lane of a value: whether it may (or does) vary


def _nlanes(ty: str) -> int:
    return T.vec_len(ty) if T.is_vector(ty) else 1


class Uniformity:
    def __init__(self, k: N.Kernel, mode: str = "may"):
        if mode not in ("may", "must"):
            raise ValueError(f"mode must be 'may' or 'must', not {mode!r}")
        self.k = k
        self.mode = mode
        self.written = written_resources(k)
        self.reassigned = reassigned_locals(k)
        self.varying: dict[str, Lanes] = {}
        self._lanes_memo: dict[int, tuple[N.Expr, int, Lanes]] = {}
        self._generation = 0  # bumped whenever a cached answer may have changed
        self.ranges: dict[str, tuple[int, int]] = {}
        self.aligned: set[int] = set()  # id() of sync statements reached in uniform control flow
        self._findings: dict[int, Finding] = {}
        for _ in range(4 * len(k.locals) + 4):  # taint only grows: a fixed point is reached
            before = {n: list(v) for n, v in self.varying.items()}
            self.aligned = set()
            self._findings = {}
            self._loop_spans: list[N.Span] = []
            self._readers: Optional[dict[str, list[tuple[N.Stmt, _Ctx]]]] = {}  # local -> assignments reading it
            self._changed: list[str] = []
            self._block(k.body, _Ctx(None, None))
            self._propagate()
            if self.varying == before:
                break
        # a loop body walked twice (after a divergent `break`) may have seen a statement
        # aligned on its first walk: a finding anywhere wins
        self.aligned -= set(self._findings)

    def _propagate(self) -> None:
        """Worklist over the value dependencies of this pass: an assignment that read a local
        which became varying later in the walk is evaluated again at once, so a chain of n
        locals each tainted by the previous settles in one pass, not n. Only what control flow
        depends on needs another pass."""
        readers, self._readers = self._readers, None  # (what is evaluated again is not recorded again)
        while self._changed:
            name = self._changed.pop()
            for s, ctx in readers.get(name, ()):
                self._stmt(s, ctx)

    @property
    def findings(self) -> list[Finding]:
        """Sync statements in divergent control flow, in source order."""
        return sorted(self._findings.values(), key=lambda f: (f.stmt.span.start, f.stmt.span.end))

    # ------------------------------------------------------------ values

    def varies(self, e: N.Expr) -> bool:
        return any(self.lanes(e))

    def lanes(self, e: N.Expr) -> Lanes:
        # memoised per expression node: parents ask again for every child (quadratic in depth)
        key = id(e)
        hit = self._lanes_memo.get(key)
        if hit is not None and hit[0] is e and hit[1] == self._generation:
            return list(hit[2])
        got = self._lanes(e)
        self._lanes_memo[key] = (e, self._generation, got)
        return list(got)

    def _lanes(self, e: N.Expr) -> Lanes:
        n = _nlanes(e.ty)
        if e.ty == "u32":
            r = self.range(e)
            if r is not None and r[0] == r[1]:
                return [False]
        if e.ty == "bool" and self.decided(e) is not None:
            return [False]
        if isinstance(e, (N.Const, N.Len, N.TensorRank, N.ImageSize)):
            return [False] * n
        if isinstance(e, N.Var):
            got = self.varying.get(e.name)
            return list(got) if got is not None and len(got) == n else [bool(got and any(got))] * n
        if isinstance(e, N.Builtin):
            if e.name in ("local_id", "global_id"):
                return [w > 1 for w in self.k.workgroup_size]
            return [False, False, False]
        if isinstance(e, N.Load):
            v = self.varies(e.index)
            if self.mode == "may":
                v = v or e.resource in self.written or self.k.workgroup_array(e.resource) is not None
            return [v] * n
        if isinstance(e, N.Swizzle):
            inner = self.lanes(e.value)
            if T.is_vector(e.value.ty) and len(inner) == T.vec_len(e.value.ty):
                return [inner["xyzw".index(c)] for c in e.lanes]
            return [any(inner)] * n
        if isinstance(e, N.Construct):
            parts = [x for a in e.args for x in self.lanes(a)]
            if len(parts) == n:
                return parts
            return [any(parts)] * n
        if isinstance(e, (N.Unary, N.Cast)):
            inner = self.lanes(e.operand if isinstance(e, N.Unary) else e.value)
            return inner if len(inner) == n else [any(inner)] * n
        if isinstance(e, N.Binary) and not (T.is_matrix(e.lhs.ty) or T.is_matrix(e.rhs.ty)):
            return self._per_lane(n, [self.lanes(e.lhs), self.lanes(e.rhs)])
        if isinstance(e, N.Call) and e.func not in ("dot", "length"):
            return self._per_lane(n, [self.lanes(a) for a in e.args])
        if isinstance(e, N.Select):
            c = self.varies(e.cond)
            return [c or x for x in self._per_lane(n, [self.lanes(e.if_true), self.lanes(e.if_false)])]
        # fields, tensor extents, dot/length, matrix products: any varying input
        return [any(self.varies(c) for c in N.expr_children(e))] * n

    @staticmethod
    def _per_lane(n: int, parts: list[Lanes]) -> Lanes:
        if all(len(p) in (1, n) for p in parts):
            return [any(p[i] if len(p) == n else p[0] for p in parts) for i in range(n)]
        return [any(x for p in parts for x in p)] * n

    def range(self, e: N.Expr) -> Optional[tuple[int, int]]:
        """Bounds [lo, hi] of a u32 expression, where they follow from constants, the
        workgroup size and never-reassigned locals; None when unknown."""
        if e.ty != "u32":
            return None
        if isinstance(e, N.Const):
            v = int(e.value) & U32_MAX
            return (v, v)
        if isinstance(e, N.Var):
            return self.ranges.get(e.name)
        if isinstance(e, N.Len):
            arr = self.k.workgroup_array(e.resource)
            return (arr.size, arr.size) if arr is not None else None
        if isinstance(e, N.Swizzle) and isinstance(e.value, N.Builtin) and len(e.lanes) == 1:
            extent = self.k.workgroup_size["xyz".index(e.lanes)]
            if e.value.name == "local_id":
                return (0, extent - 1)
            if e.value.name == "workgroup_size":
                return (extent, extent)
            return None
        if isinstance(e, N.Call) and e.func in ("min", "max") and len(e.args) == 2:
            a, b = self.range(e.args[0]), self.range(e.args[1])
            if a is None or b is None:
                return None
            f = min if e.func == "min" else max
            return (f(a[0], b[0]), f(a[1], b[1]))
        if not isinstance(e, N.Binary) or e.lhs.ty != "u32" or e.rhs.ty != "u32":
            return None
        a, b = self.range(e.lhs), self.range(e.rhs)
        op = e.op
        if a is None and op in ("rem", "div", "shr", "bitand"):
            a = (0, U32_MAX)  # `t % 2` is in [0, 1] whatever t is
        if a is None or b is None:
            return None
        if op == "add" and a[1] + b[1] <= U32_MAX:
            return (a[0] + b[0], a[1] + b[1])
        if op == "sub" and a[0] >= b[1]:
            return (a[0] - b[1], a[1] - b[0])
        if op == "mul" and a[1] * b[1] <= U32_MAX:
            return (a[0] * b[0], a[1] * b[1])
        if op == "div" and b[0] > 0:
            return (a[0] // b[1], a[1] // b[0])
        if op == "rem" and b[0] > 0:
            return (a[0], a[1]) if a[1] < b[0] else (0, min(a[1], b[1] - 1))
        if op == "shr" and b[0] == b[1]:
            s = b[0] & 31
            return (a[0] >> s, a[1] >> s)
        if op == "shl" and b[0] == b[1] and (a[1] << (b[0] & 31)) <= U32_MAX:
            s = b[0] & 31
            return (a[0] << s, a[1] << s)
        if op == "bitand":
            return (0, min(a[1], b[1]))
        return None

    def decided(self, e: N.Expr) -> Optional[bool]:
        """The value of a bool expression when the ranges of its operands fix it."""
        if isinstance(e, N.Const) and e.ty == "bool":
            return bool(e.value)
        if isinstance(e, N.Unary) and e.op == "not" and e.ty == "bool":
            d = self.decided(e.operand)
            return None if d is None else not d
        if isinstance(e, N.Binary) and e.op in N.LOGICAL:
            p, q = self.decided(e.lhs), self.decided(e.rhs)
            if e.op == "and":
                return False if False in (p, q) else (True if p is True and q is True else None)
            return True if True in (p, q) else (False if p is False and q is False else None)
        if isinstance(e, N.Binary) and e.op in N.COMPARISONS and e.lhs.ty == "u32":
            a, b = self.range(e.lhs), self.range(e.rhs)
            if a is None or b is None:
                return None
            (alo, ahi), (blo, bhi) = a, b
            table = {
                "lt": (ahi < blo, alo >= bhi), "le": (ahi <= blo, alo > bhi),
                "gt": (alo > bhi, ahi <= blo), "ge": (alo >= bhi, ahi < blo),
                "eq": (alo == ahi == blo == bhi, ahi < blo or bhi < alo),
                "ne": (ahi < blo or bhi < alo, alo == ahi == blo == bhi),
            }
            yes, no = table[e.op]
            return True if yes else (False if no else None)
        return None

    # ------------------------------------------------------------ statements

    def _taint(self, name: str, lanes: Lanes, ctx: _Ctx) -> None:
        if ctx.kernel is not None:
            lanes = [True] * len(lanes)
        old = self.varying.get(name)
        if old is None or len(old) != len(lanes):
            merged = lanes if old is None else [any(lanes) or any(old)] * len(lanes)
        else:
            merged = [a or b for a, b in zip(old, lanes)]
        if merged != old and (old is not None or any(merged)):  # (a new uniform name changes no answer)
            self._generation += 1  # cached answers may depend on this name
            self._changed.append(name)
        self.varying[name] = merged

    def _block(self, stmts: list[N.Stmt], ctx: _Ctx) -> _Exits:
        exits = _Exits()
        for s in stmts:
            e = self._stmt(s, ctx)
            exits.merge(e)
            if e.ret is not None:
                ctx = _Ctx(ctx.kernel or e.ret, ctx.loop or e.ret)
            for r in (e.brk, e.cont):
                if r is not None:
                    ctx = _Ctx(ctx.kernel or r, ctx.loop or r)
        return exits

    def _reads(self, s: N.Stmt, value: N.Expr, ctx: _Ctx) -> None:
        for e in N.walk_expr(value):
            if isinstance(e, N.Var):
                self._readers.setdefault(e.name, []).append((s, ctx))

    def _stmt(self, s: N.Stmt, ctx: _Ctx) -> _Exits:
        if isinstance(s, (N.Let, N.Assign)) and s.value is not None and self._readers is not None:
            self._reads(s, s.value, ctx)
        if isinstance(s, N.Let):
            if s.value is not None:
                self._taint(s.name, self.lanes(s.value), ctx)
                if s.name not in self.reassigned and s.ty == "u32":
                    r = self.range(s.value)
                    if r is not None and self.ranges.get(s.name) != r:
                        self.ranges[s.name] = r
                        self._generation += 1
            elif ctx.kernel is not None:
                self._taint(s.name, [True] * _nlanes(s.ty), ctx)
        elif isinstance(s, N.Assign):
            self._assign(s.target, self.lanes(s.value), ctx)
        elif isinstance(s, N.AtomicAdd):
            if s.target is not None:
                reads_only = s.op in ("add", "sub", "or", "xor") and isinstance(s.value, N.Const) and s.value.value == 0
                self._taint(s.target, [not (self.mode == "must" and reads_only)], ctx)
        elif isinstance(s, SYNC_STATEMENTS):
            if ctx.kernel is None:
                self.aligned.add(id(s))
            else:
                self._findings.setdefault(id(s), Finding(s, ctx.kernel))
            if isinstance(s, N.Reduce):
                self._taint(s.target, [False], ctx if self.mode == "may" else _Ctx(None, None))
        elif isinstance(s, N.If):
            why = Reason("branch", s.cond.span) if self.varies(s.cond) else None
            inner = _Ctx(ctx.kernel or why, ctx.loop or why)
            exits = self._block(s.then_body, inner)
            exits.merge(self._block(s.else_body, inner))
            return exits
        elif isinstance(s, (N.While, N.Loop, N.For)):
            return self._loop(s, ctx)
        elif isinstance(s, N.Return):
            return _Exits(ret=Reason("return", s.span)) if ctx.kernel is not None else _Exits()
        elif isinstance(s, (N.Break, N.Continue)):
            if ctx.loop is None:
                return _Exits()
            left = Reason("break" if isinstance(s, N.Break) else "continue", s.span)
            if self._loop_spans and s.span == self._loop_spans[-1] and ctx.loop.kind == "branch":
                left = Reason("loop", ctx.loop.span)  # a `while` whose condition needed statements
            return _Exits(brk=left) if isinstance(s, N.Break) else _Exits(cont=left)
        return _Exits()

    def _assign(self, target: N.Expr, lanes: Lanes, ctx: _Ctx) -> None:
        path: list[str] = []
        root = target
        while isinstance(root, (N.Field, N.Swizzle)):
            path.append(root.lanes if isinstance(root, N.Swizzle) else "")
            root = root.value
        if not isinstance(root, N.Var):
            return
        n = _nlanes(root.ty)
        swizzle = path[0] if len(path) == 1 and path[0] and T.is_vector(root.ty) else ""
        if swizzle and len(swizzle) == len(lanes):
            # `v.xy = ...` writes those lanes only (in divergent flow they become varying)
            full = [False] * n
            for c, x in zip(swizzle, lanes):
                full["xyzw".index(c)] = x or ctx.kernel is not None
            self._taint(root.name, full, _Ctx(None, None))
        else:
            self._taint(root.name, [any(lanes)] * n, ctx)

    def _loop(self, s: Union[N.While, N.Loop, N.For], ctx: _Ctx) -> _Exits:
        reason = None
        if isinstance(s, N.While) and self.varies(s.cond):
            reason = Reason("loop", s.cond.span)
        if isinstance(s, N.For):
            a, b = self.range(s.start), self.range(s.end)
            if s.ty == "u32" and a is not None and b is not None and s.var not in self.reassigned:
                hi = b[1] if s.inclusive else b[1] - 1  # the variable is only read inside the loop
                if hi >= a[0] and self.ranges.get(s.var) != (a[0], hi):
                    self.ranges[s.var] = (a[0], hi)
                    self._generation += 1
            if self.varies(s.start) or self.varies(s.end):
                lo, hi_span = s.start.span, s.end.span
                reason = Reason("loop", N.Span(lo.start, hi_span.end, lo.line, lo.col, hi_span.end_line,
                                               hi_span.end_col))
            self._taint(s.var, [reason is not None], ctx)
        body_ctx = _Ctx(ctx.kernel or reason, None)
        self._loop_spans.append(s.span)
        exits = self._block(s.body, body_ctx)
        left = exits.brk or exits.ret
        # the threads that left are missing from every later iteration; a body already walked
        # in divergent flow would see nothing new (and walking it twice per level is exponential)
        if left is not None and body_ctx.kernel is None:
            exits.merge(self._block(s.body, _Ctx(ctx.kernel or reason or left, left)))
        self._loop_spans.pop()
        return _Exits(ret=exits.ret)


def written_resources(k: N.Kernel) -> set[str]:
    """Buffers, tensors, images and workgroup arrays the kernel writes."""
    out = set()
    for s in N.walk_stmts(k.body):
        if isinstance(s, (N.Store, N.AtomicAdd, N.Softmax)):
            out.add(s.resource)
        elif isinstance(s, N.Reduce):
            out.add(s.scratch)
    return out


def reassigned_locals(k: N.Kernel) -> set[str]:
    """Locals assigned anywhere other than their own `let` or `for` (ranges are kept for
    the rest)."""
    out = set()
    for s in N.walk_stmts(k.body):
        if isinstance(s, N.Assign):
            root = s.target
            while isinstance(root, (N.Field, N.Swizzle)):
                root = root.value
            if isinstance(root, N.Var):
                out.add(root.name)
        elif isinstance(s, (N.Reduce, N.AtomicAdd)) and s.target is not None:
            out.add(s.target)
        elif isinstance(s, N.Let) and s.value is None:
            out.add(s.name)
    return out


def divergent_sync_points(k: N.Kernel) -> list[Finding]:
    """Barriers, collectives and softmaxes the dialect rejects: reached in thread-dependent
    control flow (the importer reports each as G0042)."""
    return Uniformity(k, "must").findings
