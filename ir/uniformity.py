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

Both modes come from one walk (`_Analysis`): each lane of a value carries two bits, "must
vary" and "may vary" (the first implies the second), and each point of control flow a
reason per mode. `Uniformity(k, mode)` is a view of it; `u.sibling(other_mode)` shares it.
The walk is a worklist: an assignment that read a local which changes later is evaluated
again at once (after the statement that changed it), so a chain of n locals settles in one
walk; the kernel is walked again only when a condition that decided control flow read a
local that changed after it was read (a loop-carried dependency), and taint only grows.
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
    """Why this point is divergent at all (`kernel`) and which divergence arose inside the
    innermost loop (`loop`), in "must" mode and in "may" mode."""

    kernel_must: Optional[Reason]
    kernel_may: Optional[Reason]
    loop_must: Optional[Reason]
    loop_may: Optional[Reason]

    def bits(self) -> int:
        return (MUST if self.kernel_must is not None else 0) | (MAY if self.kernel_may is not None else 0)

    def diverge(self, must: Optional[Reason], may: Optional[Reason]) -> "_Ctx":
        """Divergent from here on (in the kernel and the loop) for the modes given a reason."""
        if must is None and may is None:
            return self
        return _Ctx(self.kernel_must or must, self.kernel_may or may, self.loop_must or must, self.loop_may or may)


_UNIFORM = _Ctx(None, None, None, None)


@dataclass
class _Exits:
    """Divergent exits found in a block, per mode: some threads may have left the kernel,
    the loop, or this iteration, while others go on."""

    ret: tuple = (None, None)  # (must, may) reasons
    brk: tuple = (None, None)
    cont: tuple = (None, None)

    def merge(self, other: "_Exits") -> None:
        self.ret = _first(self.ret, other.ret)
        self.brk = _first(self.brk, other.brk)
        self.cont = _first(self.cont, other.cont)


_NO_EXITS = _Exits()  # what a straight-line statement returns (never merged into: `_block` skips it)


def _first(a: tuple, b: tuple) -> tuple:
    return (a[0] or b[0], a[1] or b[1])


MUST, MAY = 1, 2  # bits of a lane: certainly varies per thread / may vary; MUST implies MAY
VARIES = MUST | MAY
Lanes = tuple  # per lane of a value: its bits

_NLANES: dict[str, int] = {}
_LEAVES = frozenset((N.Var, N.Const, N.Len, N.Builtin, N.TensorRank, N.ImageSize))


def _nlanes(ty: str) -> int:
    n = _NLANES.get(ty)
    if n is None:
        n = _NLANES[ty] = T.vec_len(ty) if T.is_vector(ty) else 1
    return n


def _or(lanes: Lanes) -> int:
    out = 0
    for x in lanes:
        out |= x
    return out


class Uniformity:
    """One mode's answers ("may" or "must", see the module doc) of the kernel's analysis."""

    def __init__(self, k: N.Kernel, mode: str = "may", _core: Optional["_Analysis"] = None):
        if mode not in ("may", "must"):
            raise ValueError(f"mode must be 'may' or 'must', not {mode!r}")
        self.k = k
        self.mode = mode
        self.core = _core if _core is not None else _Analysis(k)
        self._bit = MUST if mode == "must" else MAY
        self.written = self.core.written
        self.reassigned = self.core.reassigned
        self.ranges = self.core.ranges
        self.aligned: set[int] = self.core.aligned[mode]  # id() of sync statements reached in uniform control flow

    def sibling(self, mode: str) -> "Uniformity":
        """The other mode's answers, from the same walk."""
        return self if mode == self.mode else Uniformity(self.k, mode, self.core)

    @property
    def findings(self) -> list[Finding]:
        """Sync statements in divergent control flow, in source order."""
        return sorted(self.core.findings[self.mode].values(), key=lambda f: (f.stmt.span.start, f.stmt.span.end))

    @property
    def varying(self) -> dict[str, list[bool]]:
        return {n: [bool(x & self._bit) for x in v] for n, v in self.core.varying.items()}

    def varies(self, e: N.Expr) -> bool:
        return bool(_or(self.core.lanes(e)) & self._bit)

    def lanes(self, e: N.Expr) -> list[bool]:
        return [bool(x & self._bit) for x in self.core.lanes(e)]

    def range(self, e: N.Expr) -> Optional[tuple[int, int]]:
        """Bounds [lo, hi] of a u32 expression, where they follow from constants, the
        workgroup size and never-reassigned locals; None when unknown."""
        return self.core.range(e)

    def decided(self, e: N.Expr) -> Optional[bool]:
        """The value of a bool expression when the ranges of its operands fix it."""
        return self.core.decided(e)


class _Analysis:
    def __init__(self, k: N.Kernel):
        self.k = k
        self.written = written_resources(k)
        self.reassigned = reassigned_locals(k)
        self._wg_arrays = {w.name for w in k.workgroup_arrays}
        self._lane_bits = tuple(VARIES if w > 1 else 0 for w in k.workgroup_size)  # local_id / global_id
        self.varying: dict[str, Lanes] = {}
        self._lanes_memo: dict[int, tuple[N.Expr, int, Lanes]] = {}
        self._generation = 0  # bumped whenever a cached answer may have changed
        self.ranges: dict[str, tuple[int, int]] = {}
        for _ in range(4 * len(k.locals) + 4):  # taint only grows: a fixed point is reached
            self.aligned: dict[str, set[int]] = {"must": set(), "may": set()}
            self.findings: dict[str, dict[int, Finding]] = {"must": {}, "may": {}}
            self._loop_spans: list[N.Span] = []
            self._readers: dict[str, list[tuple[N.Stmt, _Ctx]]] = {}  # local -> assignments reading it
            self._changed: list[str] = []
            self._draining = False
            self._cond_names: set[str] = set()  # locals a control-flow decision of this walk read
            self._stale = False  # one of them changed after it was read: walk again
            self._block(k.body, _UNIFORM)
            if not self._stale:
                break
        # a loop body walked twice (after a divergent `break`) may have seen a statement
        # aligned on its first walk: a finding anywhere wins
        for mode in ("must", "may"):
            self.aligned[mode] -= set(self.findings[mode])

    def _drain(self) -> None:
        """Evaluate again, at once, every assignment that read a local which changed since
        (what is evaluated again is not recorded as a reader again)."""
        if self._draining:
            return
        self._draining = True
        try:
            while self._changed:
                name = self._changed.pop()
                for s, ctx in self._readers.get(name, ()):
                    self._stmt(s, ctx)
        finally:
            self._draining = False

    def _control(self, e: N.Expr) -> None:
        """`e` decides control flow: a later change of a local it reads means another walk."""
        for sub in N.walk_expr(e):
            if isinstance(sub, N.Var):
                self._cond_names.add(sub.name)

    # ------------------------------------------------------------ values

    def lanes(self, e: N.Expr) -> Lanes:
        # memoised per expression node: parents ask again for every child (quadratic in depth);
        # a leaf costs no more than its memo entry would
        if type(e) in _LEAVES:
            return self._lanes(e)
        key = id(e)
        hit = self._lanes_memo.get(key)
        if hit is not None and hit[0] is e and hit[1] == self._generation:
            return hit[2]
        got = self._lanes(e)
        self._lanes_memo[key] = (e, self._generation, got)
        return got

    def _lanes(self, e: N.Expr) -> Lanes:
        ty = e.ty
        n = _nlanes(ty)
        if ty == "u32":
            r = self.range(e)
            if r is not None and r[0] == r[1]:
                return (0,)
        elif ty == "bool" and self.decided(e) is not None:
            return (0,)
        if isinstance(e, N.Var):
            got = self.varying.get(e.name)
            if got is None:
                return (0,) * n
            return got if len(got) == n else (_or(got),) * n
        if isinstance(e, (N.Const, N.Len, N.TensorRank, N.ImageSize)):
            return (0,) * n
        if isinstance(e, N.Binary) and not (T.is_matrix(e.lhs.ty) or T.is_matrix(e.rhs.ty)):
            if n == 1:  # `_per_lane` of one lane, inline
                return (_or(self.lanes(e.lhs)) | _or(self.lanes(e.rhs)),)
            return self._per_lane(n, (self.lanes(e.lhs), self.lanes(e.rhs)))
        if isinstance(e, N.Builtin):
            return self._lane_bits if e.name in ("local_id", "global_id") else (0, 0, 0)
        if isinstance(e, N.Load):
            v = _or(self.lanes(e.index))
            if e.resource in self.written or e.resource in self._wg_arrays:
                v |= MAY  # another thread may have written it
            return (v,) * n
        if isinstance(e, N.Swizzle):
            inner = self.lanes(e.value)
            if T.is_vector(e.value.ty) and len(inner) == _nlanes(e.value.ty):
                return tuple(inner["xyzw".index(c)] for c in e.lanes)
            return (_or(inner),) * n
        if isinstance(e, N.Construct):
            parts = tuple(x for a in e.args for x in self.lanes(a))
            return parts if len(parts) == n else (_or(parts),) * n
        if isinstance(e, (N.Unary, N.Cast)):
            inner = self.lanes(e.operand if isinstance(e, N.Unary) else e.value)
            return inner if len(inner) == n else (_or(inner),) * n
        if isinstance(e, N.Call) and e.func not in ("dot", "length"):
            return self._per_lane(n, [self.lanes(a) for a in e.args])
        if isinstance(e, N.Select):
            c = _or(self.lanes(e.cond))
            return tuple(c | x for x in self._per_lane(n, (self.lanes(e.if_true), self.lanes(e.if_false))))
        # fields, tensor extents, dot/length, matrix products: any varying input
        v = 0
        for c in N.expr_children(e):
            v |= _or(self.lanes(c))
        return (v,) * n

    @staticmethod
    def _per_lane(n: int, parts) -> Lanes:
        if n == 1:
            v = 0
            for p in parts:
                v |= _or(p)
            return (v,)
        if all(len(p) in (1, n) for p in parts):
            return tuple(_or([p[i] if len(p) == n else p[0] for p in parts]) for i in range(n))
        return (_or([x for p in parts for x in p]),) * n

    def range(self, e: N.Expr) -> Optional[tuple[int, int]]:
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

    def _reasons(self, e: N.Expr, kind: str, span: N.Span) -> tuple[Optional[Reason], Optional[Reason]]:
        """(must, may) reasons that control flow decided by `e` diverges."""
        self._control(e)
        v = _or(self.lanes(e))
        if not v:
            return None, None
        why = Reason(kind, span)
        return (why if v & MUST else None), (why if v & MAY else None)

    # ------------------------------------------------------------ statements

    def _taint(self, name: str, lanes: Lanes, ctx: Optional[_Ctx]) -> None:
        if ctx is not None:
            c = ctx.bits()
            if c:
                lanes = tuple(x | c for x in lanes)
        old = self.varying.get(name)
        if old is None:
            merged = lanes
        elif len(old) != len(lanes):
            merged = (_or(lanes) | _or(old),) * len(lanes)
        else:
            merged = tuple(a | b for a, b in zip(old, lanes))
        if merged != old:
            self.varying[name] = merged
            if old is not None or _or(merged):  # (a new uniform name changes no answer)
                self._generation += 1  # cached answers may depend on this name
                if name in self._readers:
                    self._changed.append(name)
                if name in self._cond_names:
                    self._stale = True

    def _set_range(self, name: str, r: tuple[int, int]) -> None:
        if self.ranges.get(name) != r:
            self.ranges[name] = r
            self._generation += 1
            if name in self._cond_names:
                self._stale = True

    def _block(self, stmts: list[N.Stmt], ctx: _Ctx) -> _Exits:
        exits = _Exits()
        for s in stmts:
            e = self._stmt(s, ctx)
            if self._changed:
                self._drain()
            if e is not _NO_EXITS:
                exits.merge(e)
                for r in (e.ret, e.brk, e.cont):
                    ctx = ctx.diverge(*r)
        return exits

    def _reads(self, s: N.Stmt, value: N.Expr, ctx: _Ctx) -> None:
        readers, var, kids = self._readers, N.Var, N.expr_children
        stack = [value]  # walk_expr's order, without a generator: once per assignment
        while stack:
            e = stack.pop()
            if isinstance(e, var):
                readers.setdefault(e.name, []).append((s, ctx))
            else:
                c = kids(e)
                if c:
                    stack += c[::-1]

    def _stmt(self, s: N.Stmt, ctx: _Ctx) -> _Exits:
        if isinstance(s, N.Let):
            if s.value is not None:
                if not self._draining:
                    self._reads(s, s.value, ctx)
                self._taint(s.name, self.lanes(s.value), ctx)
                if s.name not in self.reassigned and s.ty == "u32":
                    r = self.range(s.value)
                    if r is not None:
                        self._set_range(s.name, r)
            elif ctx.kernel_may is not None:
                self._taint(s.name, (0,) * _nlanes(s.ty), ctx)
        elif isinstance(s, N.Assign):
            if not self._draining:
                self._reads(s, s.value, ctx)
            self._assign(s.target, self.lanes(s.value), ctx)
        elif isinstance(s, N.AtomicAdd):
            if s.target is not None:
                reads_only = s.op in ("add", "sub", "or", "xor") and isinstance(s.value, N.Const) and s.value.value == 0
                self._taint(s.target, (MAY if reads_only else VARIES,), ctx)
        elif isinstance(s, SYNC_STATEMENTS):
            for mode, why in (("must", ctx.kernel_must), ("may", ctx.kernel_may)):
                if why is None:
                    self.aligned[mode].add(id(s))
                else:
                    self.findings[mode].setdefault(id(s), Finding(s, why))
            if isinstance(s, N.Reduce):
                # uniform, "may" mode: unless reached in divergent control flow
                self._taint(s.target, (MAY if ctx.kernel_may is not None else 0,), None)
        elif isinstance(s, N.If):
            inner = ctx.diverge(*self._reasons(s.cond, "branch", s.cond.span))
            exits = self._block(s.then_body, inner)
            exits.merge(self._block(s.else_body, inner))
            return exits
        elif isinstance(s, (N.While, N.Loop, N.For)):
            return self._loop(s, ctx)
        elif isinstance(s, N.Return):
            why = Reason("return", s.span)
            return _Exits(ret=(why if ctx.kernel_must else None, why if ctx.kernel_may else None))
        elif isinstance(s, (N.Break, N.Continue)):
            if ctx.loop_may is None:
                return _NO_EXITS
            left = Reason("break" if isinstance(s, N.Break) else "continue", s.span)
            reasons = []
            for loop in (ctx.loop_must, ctx.loop_may):
                if loop is None:
                    reasons.append(None)
                elif self._loop_spans and s.span == self._loop_spans[-1] and loop.kind == "branch":
                    reasons.append(Reason("loop", loop.span))  # a `while` whose condition needed statements
                else:
                    reasons.append(left)
            return _Exits(brk=tuple(reasons)) if isinstance(s, N.Break) else _Exits(cont=tuple(reasons))
        return _NO_EXITS

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
            full = [0] * n
            c = ctx.bits()
            for ch, x in zip(swizzle, lanes):
                full["xyzw".index(ch)] = x | c
            self._taint(root.name, tuple(full), None)
        else:
            self._taint(root.name, (_or(lanes),) * n, ctx)

    def _loop(self, s: Union[N.While, N.Loop, N.For], ctx: _Ctx) -> _Exits:
        must = may = None
        if isinstance(s, N.While):
            must, may = self._reasons(s.cond, "loop", s.cond.span)
        if isinstance(s, N.For):
            a, b = self.range(s.start), self.range(s.end)
            if s.ty == "u32" and a is not None and b is not None and s.var not in self.reassigned:
                hi = b[1] if s.inclusive else b[1] - 1  # the variable is only read inside the loop
                if hi >= a[0]:
                    self._set_range(s.var, (a[0], hi))
            lo, hi_span = s.start.span, s.end.span
            span = N.Span(lo.start, hi_span.end, lo.line, lo.col, hi_span.end_line, hi_span.end_col)
            m1, y1 = self._reasons(s.start, "loop", span)
            m2, y2 = self._reasons(s.end, "loop", span)
            must, may = m1 or m2, y1 or y2
            self._taint(s.var, ((MUST if must else 0) | (MAY if may else 0),), ctx)
        body_ctx = _Ctx(ctx.kernel_must or must, ctx.kernel_may or may, None, None)
        self._loop_spans.append(s.span)
        exits = self._block(s.body, body_ctx)
        left_must, left_may = (exits.brk[0] or exits.ret[0]), (exits.brk[1] or exits.ret[1])
        # the threads that left are missing from every later iteration; a body already walked
        # in divergent flow would see nothing new (and walking it twice per level is exponential).
        # A mode that needs no second walk sees the first one again: nothing new either.
        again_must = left_must is not None and body_ctx.kernel_must is None
        again_may = left_may is not None and body_ctx.kernel_may is None
        if again_must or again_may:
            second = _Ctx(body_ctx.kernel_must or (left_must if again_must else None),
                          body_ctx.kernel_may or (left_may if again_may else None),
                          left_must if again_must else None, left_may if again_may else None)
            exits.merge(self._block(s.body, second))
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
