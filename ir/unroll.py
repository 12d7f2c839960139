"""Per-thread loops of loads, unrolled with their loads first (issue 18): the one unroller,
for the targets that ask for it (ir/targets.py `Target.unroll`: PTX 64, WGSL 4).

A loop such as `for j in 0..n { acc = acc + w[i * n + j] * x[j]; }` waits for each
iteration's loads before the next iteration's: one load in flight per thread, so a row of
288 costs 288 memory latencies. `unroll_loops(kernel, factor)` rewrites such a loop as

    let mut j_u = start;  let e_u = end;
    while j_u < e_u && e_u - j_u >= U {      // `<=` for `..=`: U more iterations all exist
        let t0 = w[i * n + j_u]; let t1 = x[j_u]; ... let t(2U-1) = x[j_u + (U - 1)];
        acc = acc + t0 * t1; ... acc = acc + t(2U-2) * t(2U-1);
        j_u = j_u + U;
    }
    while ... e_u - j_u >= U / 2 { the same for U / 2 iterations }   // at most once each,
    ...                                                         // down to 8 (MIN_TRIP)
    for j in j_u..e_u { original body }     // the rest (`..=` kept), as before

so that the U iterations' loads are issued before any of their uses. What the loop computes
is unchanged: the same iterations, each one's arithmetic in the same order (the f32 sum
stays Rust's sequential one), the same values loaded (the body stores nothing, and a
hoisted load's index depends only on the loop variable and on names the body does not
assign). The trapping checks run in the same order as well (each copy keeps its load's
site id, and the body's only checked nodes are those loads and their indices, in
evaluation order), so the first failed access, the one reported, is the same access with
the same index.

A loop qualifies when its variable is u32, its body is at most MAX_BODY `let`s and
assignments (no store, branch, call of a collective, nested loop, `break`) that contain
loads of scalars, every load is evaluated unconditionally (not under `&&`/`||`'s right operand or a
`select` arm) with an index free of loads and of names the body changes, and no check
other than those loads' sits in the body. U is at most the target's factor, and at most
what half of a lane's share of a workgroup's REGISTERS holds (one per loaded value).
Kernels with barriers or collectives are unrolled only for a target with `unroll_sync`
(WGSL; on PTX their `for` loops feed the lanes entry, codegen/ptx/lanes.py).

`trip_of` reads a trip back for an emitter: which of its loads form runs of consecutive
elements (PTX reads those four at a time, codegen/ptx/vectors.py; WGSL writes a trip's
reads first, codegen/wgsl/unroll.py), and whether this pass wrote it (then shorter trips
and the plain loop follow it).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Optional

from . import nodes as N
from .checks import PROVEN
from .uniformity import SYNC_STATEMENTS

__all__ = ["unroll_loops", "unroll_factor", "trip_of", "Trip", "Run", "MAX_BODY", "MAX_LOADS", "VECTOR"]

MAX_BODY = 8     # statements of a body worth repeating
MAX_LOADS = 128  # loads per unrolled trip (registers: one per loaded value, and ptxas -v stays under 255)
VECTOR = 4       # loads of one buffer a vector load may combine (`ld.global.v4`)
MIN_TRIP = 8     # the smallest trip after the first (fewer are the emitter's plain loop)
_TRIPS = "_goldy_unrolled_trips"  # the kernel's trips unroll_loops wrote (kept by deepcopy)
REGISTERS = 65536  # 32-bit registers for a workgroup (an SM's): half of a thread's share may hold loads
_SCALARS = ("f32", "u32", "i32", "bool")


def unroll_loops(kernel: N.Kernel, factor: int, sync: bool = False) -> N.Kernel:
    """`kernel` with each qualifying loop unrolled by up to `factor`; the input itself when
    none qualifies (or factor < 2), else a copy. `sync`: kernels with barriers or
    collectives too (ir/targets.py `Target.unroll_sync`)."""
    if factor < 2 or (not sync and any(isinstance(s, SYNC_STATEMENTS) for s in N.walk_stmts(kernel.body))):
        return kernel
    threads = _threads(kernel)
    if not any(isinstance(s, N.For) and unroll_factor(s, factor, threads) > 1 for s in N.walk_stmts(kernel.body)):
        return kernel
    k = copy.deepcopy(kernel)
    _Unroller(k, factor).run()
    return k


def _threads(kernel: N.Kernel) -> int:
    wx, wy, wz = kernel.workgroup_size
    return wx * wy * wz


def unroll_factor(s: N.For, factor: int, threads: int = 1) -> int:
    """How many iterations of `s` one trip runs (1: the loop stays as it is), in a kernel of
    `threads` lanes per workgroup (their registers bound the loads a trip holds)."""
    if s.ty != "u32" or not s.body or len(s.body) > MAX_BODY:
        return 1
    if not all(isinstance(x, (N.Let, N.Assign)) and (not isinstance(x, N.Let) or x.value is not None)
               for x in s.body):
        return 1
    changed = {x.name for x in s.body if isinstance(x, N.Let)} | {_root(x.target) for x in s.body
                                                                    if isinstance(x, N.Assign)}
    loads = 0
    for x in s.body:
        for e in N.stmt_exprs(x):
            n = _hoistable_loads(e, changed, s.var)
            if n is None:
                return 1
            loads += n
    if not loads:
        return 1
    budget = min(MAX_LOADS, REGISTERS // max(threads, 1) // 2)
    u = factor
    while u > 4 and u * loads > budget:
        u //= 2
    trips = _const_trips(s)
    while trips is not None and u > MIN_TRIP and trips < u:
        u //= 2
    if u * loads > budget or (trips is not None and trips < u):
        return 1
    return u


@dataclasses.dataclass
class Run:
    """The U copies' loads of one load site of a trip, at consecutive elements: copy c
    reads element `index + c` of `resource` (u32 arithmetic; `lets` in copy order)."""
    resource: str
    index: N.Expr  # copy 0's index
    lets: list
    check: int  # PROVEN where every copy's access is proven in range


@dataclasses.dataclass
class Trip:
    """An unrolled trip as `unroll_loops` writes it (`trip_of`): its leading loads, those
    of them that form runs, the others, and the statements after the loads."""
    step: int
    loads: list
    runs: list
    others: list
    rest: list
    followed: bool  # written by unroll_loops: shorter trips and the plain loop run what it leaves


def trip_of(kernel: N.Kernel, s: N.While) -> Optional[Trip]:
    """`s` read as an unrolled trip: `while j < e && e - j >= U { lets of loads; uses;
    j = j + U }` (`<=` for `..=`), whatever wrote it. A load site forms a Run where its
    U copies' lets are there in copy order, load a buffer of 4-byte scalars, and copy c's
    index is copy 0's with `j + c` for `j`, and steps by one element with j: `j`, `j + F`,
    `F + j` or `j - F` of such, F free of j, of loads and of checks (so computing copy 0's
    index alone skips nothing that could fault, and copy c's is that plus c, mod 2^32).
    An emitter may then load a Run's elements four at a time where they are in range and
    aligned: the values are the same, and no load of a Run can fail there. None when
    `s` is not such a trip."""
    c = s.cond
    if not (isinstance(c, N.Binary) and c.op == "and" and isinstance(c.rhs, N.Binary) and c.rhs.op == "ge"
            and isinstance(c.rhs.rhs, N.Const) and isinstance(c.lhs, N.Binary) and isinstance(c.lhs.lhs, N.Var)):
        return None
    j, u = c.lhs.lhs.name, int(c.rhs.rhs.value)
    last = s.body[-1] if s.body else None
    if not (isinstance(last, N.Assign) and isinstance(last.target, N.Var) and last.target.name == j
            and _plus_const(last.value, j) == u):
        return None
    loads = []
    for x in s.body:
        if not (isinstance(x, N.Let) and isinstance(x.value, N.Load)):
            break
        loads.append(x)
    names = {x.name for x in loads}
    if any(isinstance(y, N.Var) and y.name in names for x in loads for y in N.walk_expr(x.value)):
        return None  # a load's index reads another load's value
    if any(_assigns(x, j) for x in s.body[len(loads):-1]):
        return None
    sites: dict = {}
    for x in loads:
        p = kernel.param(x.value.resource)
        if p is None or p.category not in N.BUFFER_CATEGORIES or p.ty not in ("f32", "u32", "i32"):
            continue
        got = _copy_of(x.value.index, j)
        if got is None:
            continue
        key, off = got
        sites.setdefault((x.value.resource, key), []).append((off, x))
    runs, taken = [], set()
    for (resource, _key_), members in sites.items():
        if u % VECTOR or [off for off, _ in members] != list(range(u)) or not _unit(members[0][1].value.index, j):
            continue
        checks = {x.value.check for _, x in members}
        runs.append(Run(resource, members[0][1].value.index, [x for _, x in members],
                        PROVEN if checks == {PROVEN} else max(checks)))
        taken |= {id(x) for _, x in members}
    followed = any(w is s for w in kernel.__dict__.get(_TRIPS, ()))
    return Trip(u, loads, runs, [x for x in loads if id(x) not in taken], s.body[len(loads):], followed)


def _assigns(s: N.Stmt, name: str) -> bool:
    return any(isinstance(x, (N.Assign, N.Let)) and (x.name if isinstance(x, N.Let) else _root(x.target)) == name
               for x in N.walk_stmts([s]))


def _plus_const(e: N.Expr, j: str) -> Optional[int]:
    """c where `e` is `j + c` (c a constant), else None."""
    if isinstance(e, N.Binary) and e.op == "add" and isinstance(e.lhs, N.Var) and e.lhs.name == j \
            and isinstance(e.rhs, N.Const):
        return int(e.rhs.value)
    return None


def _copy_of(e: N.Expr, j: str) -> Optional[tuple]:
    """(key of `e` with every `j + c` read as `j`, c) when all its uses of j are `j` (c =
    0) or `j + c` with one constant c; None otherwise."""
    offs: set = set()

    def norm(x):
        c = _plus_const(x, j) if isinstance(x, N.Expr) else None
        if c is not None:
            offs.add(c)
            return ("j",)
        if isinstance(x, N.Var) and x.name == j:
            offs.add(0)
            return ("j",)
        if isinstance(x, N.Expr):
            return (type(x).__name__,) + tuple(norm(getattr(x, f.name)) for f in dataclasses.fields(x)
                                               if f.name != "span")
        if isinstance(x, list):
            return tuple(norm(y) for y in x)
        return (x,)
    key = norm(e)
    return (key, offs.pop()) if len(offs) == 1 else None


def _unit(e: N.Expr, j: str) -> bool:
    """`e` is j, j + F, F + j or j - F (nested), F free of j, loads and checks; u32."""
    def free(x):
        return not any((isinstance(y, N.Var) and y.name == j) or isinstance(y, N.Load)
                       or getattr(y, "check", -1) >= 0 for y in N.walk_expr(x))
    if e.ty != "u32":
        return False
    if isinstance(e, N.Var):
        return e.name == j
    if isinstance(e, N.Binary) and e.op == "add":
        return (_unit(e.lhs, j) and free(e.rhs)) or (free(e.lhs) and _unit(e.rhs, j))
    if isinstance(e, N.Binary) and e.op == "sub":
        return _unit(e.lhs, j) and free(e.rhs)
    return False


def _root(e: N.Expr) -> str:
    while isinstance(e, (N.Field, N.Swizzle)):
        e = e.value
    assert isinstance(e, N.Var)
    return e.name


def _const_trips(s: N.For) -> Optional[int]:
    if isinstance(s.start, N.Const) and isinstance(s.end, N.Const):
        return max(0, s.end.value - s.start.value + (1 if s.inclusive else 0))
    return None


def _hoistable_loads(e: N.Expr, changed: set, var: str, conditional: bool = False) -> Optional[int]:
    """Loads in `e`, or None when one cannot move ahead of the body or a check other than a
    load's (and its index's) sits in `e`."""
    if isinstance(e, N.Load):
        if conditional or e.ty not in _SCALARS or any(isinstance(x, N.Load) for x in N.walk_expr(e.index)):
            return None  # (a struct element stays where it is: the emitter loads just the field read)
        if any(isinstance(x, N.Var) and x.name in changed for x in N.walk_expr(e.index)):
            return None
        return 1
    if isinstance(e, N.Binary) and e.check >= 0:
        return None  # a division check among the arithmetic: it would run after the hoisted loads
    kids = N.expr_children(e)
    lazy: set[int] = set()
    if isinstance(e, N.Binary) and e.op in N.LOGICAL:
        lazy = {1}
    elif isinstance(e, N.Select):
        lazy = {1, 2}
    total = 0
    for i, c in enumerate(kids):
        n = _hoistable_loads(c, changed, var, conditional or i in lazy)
        if n is None:
            return None
        total += n
    return total


class _Unroller:
    def __init__(self, k: N.Kernel, factor: int):
        self.k, self.factor = k, factor
        self.taken = set(k.locals) | {p.name for p in k.params}

    def fresh(self, stem: str, ty: str) -> str:
        name, j = f"{stem}_u", 1
        while name in self.taken:
            j += 1
            name = f"{stem}_u{j}"
        self.taken.add(name)
        self.k.locals[name] = ty
        return name

    def run(self) -> None:
        self.k.body = self.block(self.k.body)

    def block(self, stmts: list[N.Stmt]) -> list[N.Stmt]:
        out: list[N.Stmt] = []
        for s in stmts:
            if isinstance(s, N.For):
                u = unroll_factor(s, self.factor, _threads(self.k))
                if u > 1:
                    out += self.unrolled(s, u)
                    continue
            if isinstance(s, N.If):
                s.then_body, s.else_body = self.block(s.then_body), self.block(s.else_body)
            elif isinstance(s, (N.While, N.Loop, N.For)):
                s.body = self.block(s.body)
            out.append(s)
        return out

    def unrolled(self, s: N.For, u: int) -> list[N.Stmt]:
        sp = s.span
        j, e = self.fresh(s.var, "u32"), self.fresh(f"{s.var}_end", "u32")
        out: list[N.Stmt] = [N.Let(sp, j, "u32", s.start, True), N.Let(sp, e, "u32", s.end, False)]
        out.append(self.trip(s, u, j, e))  # trips of u while u remain, then at most one of u / 2, ...
        while u // 2 >= MIN_TRIP:
            u //= 2
            out.append(self.trip(s, u, j, e))
        self.k.__dict__.setdefault(_TRIPS, []).extend(x for x in out if isinstance(x, N.While))
        return out + [N.For(sp, s.var, s.ty, N.Var("u32", sp, j), N.Var("u32", sp, e), s.inclusive, s.body)]

    def trip(self, s: N.For, u: int, j: str, e: str) -> N.While:
        """`while j < e && e - j >= u` (`<=` for `..=`) { the u copies' loads; their uses; j += u }"""
        sp = s.span
        jv = lambda: N.Var("u32", sp, j)  # noqa: E731 (a fresh node per use)
        ev = lambda: N.Var("u32", sp, e)  # noqa: E731
        more = N.Binary("bool", sp, "le" if s.inclusive else "lt", jv(), ev())
        room = N.Binary("bool", sp, "ge", N.Binary("u32", sp, "sub", ev(), jv()), N.Const("u32", sp, u))
        loads: list[N.Stmt] = []
        uses: list[N.Stmt] = []
        for c in range(u):
            at = jv() if c == 0 else N.Binary("u32", sp, "add", jv(), N.Const("u32", sp, c))
            names = {s.var: at}
            for x in s.body:
                x = copy.deepcopy(x)
                for f in dataclasses.fields(x):
                    v = getattr(x, f.name)
                    if isinstance(v, N.Expr) and not (isinstance(x, N.Assign) and f.name == "target"):
                        setattr(x, f.name, self.hoist(self.rename(v, names), loads))
                if isinstance(x, N.Let):
                    new = self.fresh(x.name, x.ty)
                    names[x.name] = N.Var(x.ty, x.span, new)
                    x.name = new
                else:
                    x.target = self.rename(x.target, names)
                uses.append(x)
        step = N.Assign(sp, jv(), N.Binary("u32", sp, "add", jv(), N.Const("u32", sp, u)))
        return N.While(sp, N.Binary("bool", sp, "and", more, room), loads + uses + [step])

    def rename(self, e: N.Expr, names: dict) -> N.Expr:
        """`e` with the loop variable and the copy's locals substituted (fresh nodes)."""
        if isinstance(e, N.Var) and e.name in names:
            return copy.deepcopy(names[e.name])
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, N.Expr):
                setattr(e, f.name, self.rename(v, names))
            elif isinstance(v, list) and v and isinstance(v[0], N.Expr):
                setattr(e, f.name, [self.rename(x, names) for x in v])
        return e

    def hoist(self, e: N.Expr, loads: list[N.Stmt]) -> N.Expr:
        """`e` with each load (left to right, as evaluated) moved to a `let` in `loads`."""
        if isinstance(e, N.Load):
            t = self.fresh("ld", e.ty)
            loads.append(N.Let(e.span, t, e.ty, e, False))
            return N.Var(e.ty, e.span, t)
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, N.Expr):
                setattr(e, f.name, self.hoist(v, loads))
            elif isinstance(v, list) and v and isinstance(v[0], N.Expr):
                setattr(e, f.name, [self.hoist(x, loads) for x in v])
        return e
