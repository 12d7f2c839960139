"""Register-tile code in PTX: what a blocked matmul's inner loop needs from the emitter.

- `full_trips`: a `for` over constant bounds with a short straight-line body is emitted
  once per iteration (the variable a known value in each copy), so that ptxas sees one
  basic block: `for kk in 0..8 { 16 loads, 64 mul_adds }` becomes 512 FFMAs with their
  shared-memory loads hoisted and interleaved, not a loop of 8 trips.
- `vector_group`: four (or two) consecutive statements that read, or write, consecutive
  elements `w[base + c]`, `w[base + c + 1]`, ... of one workgroup array become one
  `ld.shared.v4` / `st.shared.v4` (LDS.128), where the first index is provably a multiple
  of the vector width (`multiple_of`) and the whole group provably in range (then no
  check site is left on it). Workgroup arrays accessed so are declared 16-byte aligned.

- `global_group`: four consecutive statements that read `x[base + c]` ... `x[base + c + 3]`
  of one buffer of 4-byte scalars into locals (`let v = x[i];` or `v = x[i];`) become one
  `ld.global.v4` where, at run time, the first index is below `len - 3` (so all four are in
  range: one range test for the group instead of four, and no trapping check) and the
  address is 16-byte aligned; otherwise the four statements run as written, one by one,
  each with its own range test and trapping check, so a fault is reported exactly as
  without the group (the same first failing access, index and length).

All only change how the same loads, stores and arithmetic are issued: each element is
read or written once, in the group's place in program order, with the same value, so the
results are bit for bit those of the statements one by one.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir.checks import PROVEN
from goldy_import.ir.uniformity import reassigned_locals

MAX_TRIPS = 16
MAX_UNROLLED = 1024  # statements after unrolling
_EXITS = (N.Break, N.Continue, N.Return)


def full_trips(s: N.For) -> Optional[list[int]]:
    """The values of the loop variable when `s` is to be fully unrolled, else None."""
    if not (isinstance(s.start, N.Const) and isinstance(s.end, N.Const)):
        return None
    lo, hi = int(s.start.value), int(s.end.value) + (1 if s.inclusive else 0)
    stmts = list(N.walk_stmts(s.body))
    if not 0 < hi - lo <= MAX_TRIPS or (hi - lo) * len(stmts) > MAX_UNROLLED:
        return None
    if any(isinstance(x, _EXITS + (N.While, N.Loop)) for x in stmts):
        return None
    return list(range(lo, hi))


def _key(e) -> tuple:
    """A structural key of an expression (spans and check sites left out)."""
    if isinstance(e, N.Expr):
        return (type(e).__name__,) + tuple(_key(getattr(e, f.name)) for f in fields(e)
                                           if f.name not in ("span", "check"))
    if isinstance(e, list):
        return tuple(_key(x) for x in e)
    return (e,)


def _split(e: N.Expr) -> tuple[N.Expr, int]:
    """index = base + constant."""
    if isinstance(e, N.Binary) and e.op == "add" and e.ty == "u32":
        if isinstance(e.rhs, N.Const):
            return e.lhs, int(e.rhs.value)
        if isinstance(e.lhs, N.Const):
            return e.rhs, int(e.lhs.value)
    return e, 0


def _pure(e: N.Expr) -> bool:
    """No memory read and nothing that can fault: evaluating it early or late is the same."""
    for x in N.walk_expr(e):
        if isinstance(x, (N.Load, N.Call)):
            return False
        if isinstance(x, N.Binary) and x.op in ("div", "rem") and not (
                isinstance(x.rhs, N.Const) and x.rhs.value != 0):
            return False
    return True


class Alignment:
    """`multiple_of(e)`: a power of two (at most CAP) that divides every value of the u32
    expression `e`; u32 arithmetic wraps modulo 2^32, which keeps such factors."""

    CAP = 64

    def __init__(self, k: N.Kernel):
        again = reassigned_locals(k)
        lets: dict[str, list[N.Expr]] = {}
        for s in N.walk_stmts(k.body):
            if isinstance(s, N.Let) and s.value is not None:
                lets.setdefault(s.name, []).append(s.value)
        self.defs = {n: v[0] for n, v in lets.items() if len(v) == 1 and n not in again}
        self.memo: dict[str, int] = {}
        self.vectored: set[str] = set()  # workgroup arrays accessed as vectors: declared 16-byte aligned

    def multiple_of(self, e: N.Expr) -> int:
        if e.ty != "u32":
            return 1
        if isinstance(e, N.Const):
            v = int(e.value) & 0xFFFFFFFF
            return self.CAP if v == 0 else min(self.CAP, v & -v)
        if isinstance(e, N.Var):
            if e.name not in self.memo:
                self.memo[e.name] = 1  # a cycle (not possible for a single let) stays unknown
                d = self.defs.get(e.name)
                self.memo[e.name] = self.multiple_of(d) if d is not None else 1
            return self.memo[e.name]
        if isinstance(e, N.Binary) and e.lhs.ty == "u32" and e.rhs.ty == "u32":
            a, b = self.multiple_of(e.lhs), self.multiple_of(e.rhs)
            if e.op in ("add", "sub"):
                return min(a, b)
            if e.op == "mul":
                return min(self.CAP, a * b)
            if e.op == "shl" and isinstance(e.rhs, N.Const):
                return min(self.CAP, a << (int(e.rhs.value) & 31))
        return 1


def vector_group(em, stmts: list[N.Stmt], i: int) -> int:
    """Emit stmts[i:i + n] as one vector access of a workgroup array when they form such a
    group (see the module doc) and return n; else emit nothing and return 0. `em` is the
    PTX emitter (plain entry only)."""
    s = stmts[i]
    if em.pred is not None or em.lanes > 1:
        return 0
    if isinstance(s, N.Assign) and isinstance(s.value, N.Load):
        return global_group(em, stmts, i)
    if isinstance(s, N.Let) and s.value is not None and isinstance(s.value, N.Load):
        res, first = s.value.resource, s.value.index
    elif isinstance(s, N.Store):
        res, first = s.resource, s.index
    else:
        return 0
    w = em.k.workgroup_array(res)
    if w is None:
        return global_group(em, stmts, i) if isinstance(s, N.Let) else 0
    if not _pure(first):
        return 0
    base, c0 = _split(first)
    bk = _key(base)
    for width in (4, 2):
        group = stmts[i:i + width]
        if len(group) < width or not _same_kind(group, res, bk, c0) or c0 % width:
            continue
        if em.tiles.multiple_of(base) < width:
            continue
        lo_hi = [em.uni.range(g.value.index if isinstance(g, N.Let) else g.index) for g in group]
        if any(r is None or r[1] >= w.size for r in lo_hi):
            continue
        if isinstance(s, N.Let):
            names = {g.name for g in group}
            if any(isinstance(x, N.Var) and x.name in names for x in N.walk_expr(base)):
                continue
            _load(em, group, w, first)
        else:
            _store(em, group, w, first)
        return width
    return 0


def _same_kind(group: list[N.Stmt], res: str, bk: tuple, c0: int) -> bool:
    want = type(group[0])
    for j, g in enumerate(group):
        if type(g) is not want:
            return False
        if isinstance(g, N.Let):
            if g.value is None or not isinstance(g.value, N.Load) or g.value.resource != res:
                return False
            idx = g.value.index
        else:
            # values are evaluated in order before the one store: they may read memory, not `res`
            if g.resource != res or any(isinstance(x, N.Load) and x.resource == res for x in N.walk_expr(g.value)):
                return False
            idx = g.index
        base, c = _split(idx)
        if c != c0 + j or _key(base) != bk or not _pure(idx):
            return False
    return True


def _address(em, w: N.WorkgroupArray, first: N.Expr) -> str:
    em.tiles.vectored.add(w.name)
    idx = em.reg_of(em.expr(first)[0], "r")
    base = em.new("r", f"mov.u32 {{}}, S_{em.names(w.name)};")
    return em.new("r", "mad.lo.s32 {}, {}, 4, {};", idx, base)


_PTY = {"f32": ("f32", "f"), "u32": ("u32", "r"), "i32": ("u32", "r")}


def _load(em, group: list[N.Let], w: N.WorkgroupArray, first: N.Expr) -> None:
    for g in group:
        em.line_comment(g.span)
    pty, kind = _PTY[w.ty]
    addr = _address(em, w, first)
    regs = [em.b.reg(kind) for _ in group]
    em.b.op(f"ld.shared.v{len(group)}.{pty} {{{', '.join(regs)}}}, [{addr}];")
    for g, r in zip(group, regs):
        em.move(em.local(g.name), [r])


def _store(em, group: list[N.Store], w: N.WorkgroupArray, first: N.Expr) -> None:
    # each value in order, then the places (pure) and one store: nothing in between reads `w`
    vals = []
    for g in group:
        em.line_comment(g.span)
        vals.append(em.reg_of(em.expr(g.value)[0], _PTY[w.ty][1]))
    addr = _address(em, w, first)
    em.b.op(f"st.shared.v{len(group)}.{_PTY[w.ty][0]} [{addr}], {{{', '.join(vals)}}};")


def global_group(em, stmts: list[N.Stmt], i: int) -> int:
    """Emit stmts[i:i + 4] as one guarded `ld.global.v4` when they form a group of loads of
    a buffer (module doc) and return 4; else emit nothing and return 0."""
    group = stmts[i:i + 4]
    if len(group) < 4 or em.pred is not None or em.lanes > 1 or em.guards:
        return 0
    loads, targets = [], []
    for g in group:
        if isinstance(g, N.Let) and isinstance(g.value, N.Load):
            targets.append(g.name)
        elif isinstance(g, N.Assign) and isinstance(g.target, N.Var) and isinstance(g.value, N.Load):
            targets.append(g.target.name)
        else:
            return 0
        loads.append(g.value)
    res = loads[0].resource
    r = em.res.get(res)
    if r is None or r["kind"] != "buffer" or r["param"].ty not in _PTY or em.k.workgroup_array(res) is not None:
        return 0
    base, c0 = _split(loads[0].index)
    bk = _key(base)
    for j, ld in enumerate(loads):
        b, c = _split(ld.index)
        if ld.resource != res or c != c0 + j or _key(b) != bk or not _pure(ld.index):
            return 0
    if any(em.k.locals.get(t) not in _PTY for t in targets) or \
            any(isinstance(x, N.Var) and x.name in targets for x in N.walk_expr(base)):
        return 0
    em.flush_traps()  # the group branches: checks deferred before it are taken first
    for g in group:
        em.line_comment(g.span)
    idx = em.reg_of(em.expr(loads[0].index)[0], "r")
    addr = em.address(r["ptr"], idx, 4)
    vec = em.new("p", "setp.eq.u64 {}, {}, 0;", em.new("rd", "and.b64 {}, {}, 15;", addr))
    if any(ld.check != PROVEN for ld in loads):  # idx < len - 3: idx + 0..3 in range, no wrap
        vec = em.pred_and(vec, em.lt_u(idx, _room(em, r["len"])))
    b = em.b
    slow, done = b.label("gscalar"), b.label("gvector")
    b.op(f"@!{vec} bra {slow};")
    pty, kind = _PTY[r["param"].ty]
    regs = [b.reg(kind) for _ in group]
    nc = ".nc" if res not in em.written else ""
    b.op(f"ld.global{nc}.v4.{pty} {{{', '.join(regs)}}}, [{addr}];")
    for t, reg in zip(targets, regs):
        em.move(em.local(t), [reg])
    b.op(f"bra.uni {done};")
    b.place(slow)
    for g in group:  # as written: each access with its own range test and trapping check
        em.stmt(g)
    em.flush_traps()
    b.place(done)
    return 4


def _room(em, length: str) -> str:
    """A register holding max(length, 3) - 3, computed once where the entry loads `length`
    (a loop-invariant that ptxas does not hoist), else here."""
    cache = em.__dict__.setdefault("_tile_room", {})
    if length not in cache:
        t, room = em.b.reg("r"), em.b.reg("r")
        ops = [f"\tmax.u32 {t}, {em.reg_of(length, 'r')}, 3;", f"\tsub.u32 {room}, {t}, 3;"]
        at = next((i + 1 for i, line in enumerate(em.b.lines) if line.startswith(f"\tld.param.u32 {length},")), None)
        if at is None:
            for op in ops:
                em.b.op(op.strip())
            return room  # not cached: this point need not dominate the next use
        em.b.lines[at:at] = ops
        cache[length] = room
    return cache[length]
