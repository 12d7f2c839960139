"""Trapping checks: which accesses and divisions need a run-time check, after removing
those a dominating guard already proves.

`insert_checks(kernel)` returns a copy whose `Load`, `Store` and `AtomicAdd` nodes and
integer `div`/`rem` nodes carry `check >= 0` (a site id) where a check must run, and -1
where none is needed; an access a fact proves in range carries `PROVEN` (-2), so an
emitter may also drop its silent range guard (an access that was never checked, checks
off, keeps -1 and the guard). `check_sites(kernel)` lists the sites for the runtime's fault
messages. The pass is conservative: it removes a check only when a fact it can name
proves it; everything else stays checked.

Facts are `x < bound` for a local or scalar `x` that cannot change while the fact holds
(an immutable `let`, a `for` variable, a scalar parameter), and a bound that is `len(R)`,
an immutable name, or a constant. They come from
- `if a < b` (and `b > a`, and each `&&` term) for the then-branch,
- `if a >= b { return; }` (or `break`/`continue`, and each `||` term) for the rest of the block,
- `for j in lo..hi` giving `j < hi` (`j <= hi` for `..=`) inside the body,
- `n <= len(R)` style facts combining transitively with `i < n`, and a constant index
  below a constant lower bound of a length (`x.len() >= 4` proves `x[3]`: a specialized
  variant's baked lengths, ir/specialize.py),
- workgroup arrays: `local_id().x` (and y/z) are below the workgroup size.

`workgroup_softmax_in_place` is expanded first (ir/legalize.py `expand_softmax`), so its
accesses of the row `buf[base + t]` are sites like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union

from . import nodes as N
from .clone import clone
from .legalize import expand_softmax
from .uniformity import reassigned_locals

Bound = tuple  # ("len", resource) | ("name", ir_name) | ("const", int)
PROVEN = -2  # the `check` of an access proven in range (module docstring)


@dataclass(frozen=True)
class Site:
    id: int
    kind: str  # "index" | "divide"
    resource: Optional[str]  # the buffer/tensor/array for index checks
    span: N.Span
    text: str  # what was checked, for messages (`x[i]`, `a / b`)


def insert_checks(kernel: N.Kernel, softmax_one_tile: bool = False) -> N.Kernel:
    """The kernel with its check sites (module docstring); `softmax_one_tile`: softmax
    expanded as for a target that asks for its one-tile branch (ir/targets.py)."""
    k = expand_softmax(kernel, softmax_one_tile)
    k = clone(k) if k is kernel else k
    _Pass(k).run()
    return k


def check_sites(kernel: N.Kernel) -> list[Site]:
    """Sites of a kernel that went through insert_checks, ordered by id."""
    sites: dict[int, Site] = {}
    kids = N.expr_children
    for s in N.walk_stmts(kernel.body):
        if isinstance(s, (N.Store, N.AtomicAdd)) and s.check >= 0:
            sites[s.check] = Site(s.check, "index", s.resource, s.span, f"{s.resource}[_]")
        stack = N.stmt_exprs(s)[::-1]  # walk_expr's order (parents first, left to right), inlined
        while stack:
            x = stack.pop()
            if getattr(x, "check", -1) >= 0:  # a Load or a Binary (the expressions with a site)
                if isinstance(x, N.Load):
                    sites[x.check] = Site(x.check, "index", x.resource, x.span, f"{x.resource}[_]")
                elif isinstance(x, N.Binary):
                    sites[x.check] = Site(x.check, "divide", None, x.span, "/" if x.op == "div" else "%")
            c = kids(x)
            if c:
                stack += c[::-1]
    return [sites[i] for i in sorted(sites)]


def _key(e: N.Expr) -> Optional[Bound]:
    """A name or constant a fact can talk about."""
    if isinstance(e, N.Const) and isinstance(e.value, int) and not isinstance(e.value, bool):
        return ("const", e.value)
    if isinstance(e, N.Var):
        return ("name", e.name)
    if isinstance(e, N.Len):
        return ("len", e.resource)
    return None


class _Facts:
    """Facts `lhs < rhs` (strict) and `lhs <= rhs`, as sets of key pairs."""

    def __init__(self, lt=frozenset(), le=frozenset()):
        self.lt = frozenset(lt)
        self.le = frozenset(le)

    def plus(self, lt=(), le=()) -> "_Facts":
        return _Facts(self.lt | set(lt), self.le | set(le))

    def proves_lt(self, a: Bound, b: Bound, depth: int = 0) -> bool:
        if (a, b) in self.lt:
            return True
        if a[0] == "const" and b[0] == "const":
            return a[1] < b[1]
        if a[0] == "const" and (any(x[0] == "const" and a[1] < x[1] and m == b for (x, m) in self.le)
                                or any(x[0] == "const" and a[1] <= x[1] and m == b for (x, m) in self.lt)):
            return True  # c < C <= b (a baked length: `x.len() >= C`), or c <= C < b
        if depth > 3:
            return False
        # a < m and m <= b, or a <= m and m < b
        for (x, m) in self.lt:
            if x == a and (m == b or self.proves_le(m, b, depth + 1)):
                return True
        for (x, m) in self.le:
            if x == a and self.proves_lt(m, b, depth + 1):
                return True
        return False

    def proves_le(self, a: Bound, b: Bound, depth: int = 0) -> bool:
        if a == b or (a, b) in self.le or (a, b) in self.lt:
            return True
        if a[0] == "const" and b[0] == "const":
            return a[1] <= b[1]
        if depth > 3:
            return False
        return any(x == a and self.proves_le(m, b, depth + 1) for (x, m) in self.le)


class _Pass:
    def __init__(self, k: N.Kernel):
        self.k = k
        self.next_site = 0
        self.stable = self._stable_names()
        self.wg_size = k.workgroup_size
        self.lid_vars: dict[str, int] = {}  # immutable locals holding local_id().<axis>

    def _stable_names(self) -> set[str]:
        """Names whose value cannot change after definition: scalar params, immutable
        lets assigned once, and for-loop variables (never assigned by the dialect)."""
        stable = {p.name for p in self.k.params if p.category == "scalar"}
        assigned = reassigned_locals(self.k)
        lets: dict[str, N.Let] = {}
        for s in N.walk_stmts(self.k.body):
            if isinstance(s, N.Let):
                lets[s.name] = s
            elif isinstance(s, N.For):
                stable.add(s.var)
        for name, let in lets.items():
            if not let.mutable and let.value is not None and name not in assigned:
                stable.add(name)
        return stable

    def site(self) -> int:
        self.next_site += 1
        return self.next_site - 1

    def run(self) -> None:
        for s in N.walk_stmts(self.k.body):
            if isinstance(s, N.Let) and not s.mutable and s.value is not None:
                v = s.value
                if (isinstance(v, N.Swizzle) and len(v.lanes) == 1 and isinstance(v.value, N.Builtin)
                        and v.value.name == "local_id"):
                    self.lid_vars[s.name] = "xyz".index(v.lanes)
        self.block(self.k.body, _Facts())

    # -- facts from conditions

    def facts_true(self, c: N.Expr) -> tuple[list, list]:
        """(lt, le) facts that hold when `c` is true."""
        lt: list = []
        le: list = []
        if isinstance(c, N.Binary) and c.op == "and":
            for part in (c.lhs, c.rhs):
                a, b = self.facts_true(part)
                lt += a
                le += b
        elif isinstance(c, N.Binary) and c.op in ("lt", "gt", "le", "ge") and c.lhs.ty in ("u32", "i32"):
            lhs, rhs = (c.lhs, c.rhs) if c.op in ("lt", "le") else (c.rhs, c.lhs)
            a, b = _key(lhs), _key(rhs)
            if a is not None and b is not None and self.usable(a) and self.usable(b) and c.lhs.ty == "u32":
                (lt if c.op in ("lt", "gt") else le).append((a, b))
        elif isinstance(c, N.Unary) and c.op == "not":
            return self.facts_false(c.operand)
        return lt, le

    def facts_false(self, c: N.Expr) -> tuple[list, list]:
        """Facts that hold when `c` is false: `!(a >= b)` is `a < b`."""
        lt: list = []
        le: list = []
        if isinstance(c, N.Binary) and c.op == "or":
            for part in (c.lhs, c.rhs):
                a, b = self.facts_false(part)
                lt += a
                le += b
        elif isinstance(c, N.Binary) and c.op in ("ge", "le", "gt", "lt") and c.lhs.ty == "u32":
            flipped = {"ge": "lt", "le": "gt", "gt": "le", "lt": "ge"}[c.op]
            return self.facts_true(N.Binary("bool", c.span, flipped, c.lhs, c.rhs))
        elif isinstance(c, N.Unary) and c.op == "not":
            return self.facts_true(c.operand)
        return lt, le

    def usable(self, key: Bound) -> bool:
        return key[0] in ("const", "len") or (key[0] == "name" and key[1] in self.stable)

    # -- statements

    def block(self, stmts: list[N.Stmt], facts: _Facts) -> None:
        for s in stmts:
            self.stmt(s, facts)
            if isinstance(s, N.If) and _leaves(s.then_body) and not s.else_body:
                lt, le = self.facts_false(s.cond)
                facts = facts.plus(lt, le)
            elif isinstance(s, N.If) and _leaves(s.else_body) and not _leaves(s.then_body):
                lt, le = self.facts_true(s.cond)
                facts = facts.plus(lt, le)

    def stmt(self, s: N.Stmt, facts: _Facts) -> None:
        if isinstance(s, N.Let):
            if s.value is not None:
                self.expr(s.value, facts)
        elif isinstance(s, N.Assign):
            self.expr(s.value, facts)
        elif isinstance(s, N.Store):
            self.expr(s.index, facts)
            self.expr(s.value, facts)
            s.check = PROVEN if self.proven(s.resource, s.index, facts) else self.site()
        elif isinstance(s, N.Atomic):
            self.expr(s.index, facts)
            self.expr(s.value, facts)
            if s.compare is not None:
                self.expr(s.compare, facts)
            s.check = PROVEN if self.proven(s.resource, s.index, facts) else self.site()
        elif isinstance(s, N.If):
            self.expr(s.cond, facts)
            lt, le = self.facts_true(s.cond)
            self.block(s.then_body, facts.plus(lt, le))
            lt, le = self.facts_false(s.cond)
            self.block(s.else_body, facts.plus(lt, le))
        elif isinstance(s, N.While):
            self.expr(s.cond, facts)
            lt, le = self.facts_true(s.cond)
            self.block(s.body, facts.plus(lt, le))
        elif isinstance(s, N.Loop):
            self.block(s.body, facts)
        elif isinstance(s, N.For):
            self.expr(s.start, facts)
            self.expr(s.end, facts)
            hi = _key(s.end)
            inner = facts
            if hi is not None and self.usable(hi) and s.ty == "u32":
                fact = (("name", s.var), hi)
                inner = facts.plus(le=[fact]) if s.inclusive else facts.plus(lt=[fact])
            self.block(s.body, inner)
        elif isinstance(s, N.Reduce):
            self.expr(s.value, facts)
        elif isinstance(s, N.Softmax):
            self.expr(s.base, facts)
            self.expr(s.count, facts)

    def expr(self, e: N.Expr, facts: _Facts) -> None:
        for c in N.expr_children(e):
            self.expr(c, facts)
        if isinstance(e, N.Load):
            e.check = PROVEN if self.proven(e.resource, e.index, facts) else self.site()
        elif isinstance(e, N.Binary) and e.op in ("div", "rem") and e.ty in ("u32", "i32"):
            divisor = e.rhs
            nonzero = isinstance(divisor, N.Const) and divisor.value != 0
            e.check = -1 if nonzero else self.site()

    def proven(self, resource: str, index: N.Expr, facts: _Facts) -> bool:
        p = self.k.param(resource)
        if p is not None and p.category == "image":
            return False  # a 2-D coordinate: always checked
        w = self.k.workgroup_array(resource)
        bound: Bound = ("const", w.size) if w is not None else ("len", resource)
        key = _key(index)
        if isinstance(index, N.Const):
            if w is not None:
                return 0 <= index.value < w.size
            return key is not None and key[1] >= 0 and facts.proves_lt(key, bound)
        if w is not None:
            axis = self._local_id_axis(index)
            if axis is not None and self.wg_size[axis] <= w.size:
                return True
        if key is None or not self.usable(key):
            return False
        return facts.proves_lt(key, bound)

    def _local_id_axis(self, e: N.Expr) -> Optional[int]:
        if isinstance(e, N.Var) and e.name in self.lid_vars:
            return self.lid_vars[e.name]
        if isinstance(e, N.Swizzle) and len(e.lanes) == 1 and isinstance(e.value, N.Builtin) \
                and e.value.name == "local_id":
            return "xyz".index(e.lanes)
        return None


def _leaves(body: list[N.Stmt]) -> bool:
    """The block always leaves the enclosing straight-line code (return/break/continue last)."""
    return bool(body) and isinstance(body[-1], (N.Return, N.Break, N.Continue))


def count_checks(kernel: N.Kernel) -> tuple[int, int]:
    """(checked sites, candidate sites) of a kernel after insert_checks, for reports."""
    checked = len(check_sites(kernel))
    total = 0
    for s in N.walk_stmts(kernel.body):
        if isinstance(s, (N.Store, N.AtomicAdd)):
            total += 1
        for e in N.stmt_exprs(s):
            for x in N.walk_expr(e):
                if isinstance(x, N.Load) or (isinstance(x, N.Binary) and x.op in ("div", "rem")
                                             and x.ty in ("u32", "i32")):
                    total += 1
    return checked, total


CheckedNode = Union[N.Load, N.Store, N.AtomicAdd, N.Binary]
