"""The row-warp entry: one warp per thread, for kernels whose threads each sum a long loop.

The decode step's GEMVs are written one thread per output row, each adding its row's
products in j order (`for j in 0..n { acc = acc + w[i * n + j] * x[j]; }`); Rust's f32
semantics make that order the only right answer. With a few hundred rows there are a few
hundred threads on the whole GPU, each waiting on its own row's loads: 8.8 us for a
288 x 288 GEMV even as nvcc compiles it (benchmarks/gemv_ceiling.py).

In the row-warp entry (`rowwarp_entry(kernel)`), each of the kernel's threads is a whole
warp: its 32 lanes run the thread's code together, as replicas (the same values, the same
branches, the same stores of the same bits to the same places: each lane reads back its own
writes, as the thread does), except in a loop of the form

    for j in start..end { acc = acc + E(j); }     // `..=` too; acc a u32, i32 or f32 local

where E is free of acc, its loads read buffers the kernel never writes at indices affine
in j (`coef * j + off`, both free of j, of loads and of checks) and it has no check but
those loads'. Where every load of every iteration is in range (one test before the loop,
in 64-bit arithmetic, so no index wraps either), the lanes compute E for 32 consecutive
iterations each (up to 8 such chunks loaded at once), and every lane then adds the terms in j
order, lane by lane through `shfl.sync.idx`: the same additions in the same order as the
thread's own loop, so the same bits. Otherwise (an access out of range: it must fault
exactly as the loop does) the lanes run the loop as written. The unrolled trips
ir/unroll.py put before such a loop are skipped: the loop itself then covers the range.

A kernel qualifies (`qualifies`) with a 1-D workgroup, no builtin but `global_id`, no
workgroup memory, barrier, collective or atomic (replicas would repeat an atomic), and at
least one such loop. The entry takes the batched entry's parameters (the workgroup count
along x last), runs ROWWARP_BLOCK hardware threads per block, ROWWARP_BLOCK / 32 of the
kernel's threads, and is launched with ceil(threads / (ROWWARP_BLOCK / 32)) blocks;
`global_id().x` is the warp's index (a warp past the grid's threads returns at once). The
CUDA backend uses it for dispatches of at most a GPU's worth of warps (runtime/cuda.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from goldy_import.ir import nodes as N
from goldy_import.ir.checks import PROVEN
from goldy_import.ir.clone import clone
from goldy_import.ir.info import kernel_info
from goldy_import.ir.unroll import trip_of

if TYPE_CHECKING:
    from .emitter import _Emitter

ROWWARP_BLOCK = 256  # hardware threads per block
# 32-term chunks per trip (one term per lane each), all loaded, then added. On the H200's
# decode step 8 beat 16 (255 against 282 us of device time per token)
BIG, SMALL = 8, 4
_NOT_REPLICABLE = (N.Barrier, N.Reduce, N.Softmax, N.Atomic)
_PURE = (N.Const, N.Var, N.Load, N.Binary, N.Unary, N.Cast, N.Call, N.Select, N.Len)
_ACC = ("f32", "u32", "i32")


@dataclass
class Split:
    """A loop the lanes split: `acc = acc + term` per iteration of `var`; `bounds`, per
    load of the term, (buffer, coef, off) with the load's index `coef * var + off`."""

    var: str
    acc: str
    ty: str
    term: N.Expr
    bounds: list


def qualifies(k: N.Kernel) -> bool:
    if k.workgroup_size[1:] != (1, 1) or not set(k.builtins) <= {"global_id"} or k.workgroup_arrays:
        return False
    stmts = list(N.walk_stmts(k.body))
    if any(isinstance(s, _NOT_REPLICABLE) for s in stmts):
        return False
    written = kernel_info(k).written
    return any(isinstance(s, N.For) and split_of(k, s, written) is not None for s in stmts)


def split_of(k: N.Kernel, s: N.For, written: set) -> Optional[Split]:
    """The loop as a Split (module docstring), or None."""
    if s.ty != "u32" or len(s.body) != 1 or not (_plain(s.start) and _plain(s.end)):
        return None
    a = s.body[0]
    if not (isinstance(a, N.Assign) and isinstance(a.target, N.Var) and isinstance(a.value, N.Binary)
            and a.value.op == "add" and isinstance(a.value.lhs, N.Var) and a.value.lhs.name == a.target.name):
        return None
    acc, term = a.target.name, a.value.rhs
    ty = k.locals.get(acc)
    if ty not in _ACC or a.value.ty != ty or term.ty != ty:
        return None
    bounds = []
    for e in N.walk_expr(term):
        if not isinstance(e, _PURE) or (isinstance(e, N.Var) and e.name == acc):
            return None
        if isinstance(e, N.Binary) and e.check >= 0:  # a division's check: only loads are tested up front
            return None
        if isinstance(e, N.Load):
            p = k.param(e.resource)
            if p is None or p.category not in N.BUFFER_CATEGORIES or e.resource in written or p.ty not in _ACC:
                return None
            aff = _affine(e.index, s.var)
            if aff is None:
                return None
            bounds.append((e.resource, *aff))
    return Split(s.var, acc, ty, term, bounds) if bounds else None


def _plain(e: N.Expr) -> bool:
    """Free of loads and checks: evaluating it again, or first, changes nothing."""
    return all(isinstance(x, (N.Const, N.Var, N.Binary, N.Unary, N.Cast, N.Len)) and getattr(x, "check", -1) < 0
               for x in N.walk_expr(e))


def _uses(e: N.Expr, name: str) -> bool:
    return any(isinstance(x, N.Var) and x.name == name for x in N.walk_expr(e))


def _affine(e: N.Expr, j: str) -> Optional[tuple[N.Expr, N.Expr]]:
    """(coef, off) with e == coef * j + off in u32 arithmetic (mod 2^32), both free of j;
    None if e is not so, or reads a load or a check."""
    if e.ty != "u32" or not _plain(e):
        return None
    if not _uses(e, j):
        return _const(0), e
    if isinstance(e, N.Var):
        return _const(1), _const(0)
    if isinstance(e, N.Binary) and e.op in ("add", "sub"):
        a, b = _affine(e.lhs, j), _affine(e.rhs, j)
        if a is None or b is None:
            return None
        return _op(e.op, a[0], b[0]), _op(e.op, a[1], b[1])
    if isinstance(e, N.Binary) and e.op == "mul":
        for f, g in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            if not _uses(f, j):
                a = _affine(g, j)
                return None if a is None else (_op("mul", f, a[0]), _op("mul", f, a[1]))
    return None


def _const(v: int) -> N.Const:
    return N.Const("u32", N.NO_SPAN, v)


def _op(op: str, a: N.Expr, b: N.Expr) -> N.Expr:
    """a op b in u32, folding the zeros and ones the decomposition makes."""
    ca = a.value if isinstance(a, N.Const) else None
    cb = b.value if isinstance(b, N.Const) else None
    if op == "mul":
        if ca == 0 or cb == 0:
            return _const(0)
        if ca == 1:
            return b
        if cb == 1:
            return a
    elif cb == 0:
        return a
    elif op == "add" and ca == 0:
        return b
    if ca is not None and cb is not None:
        v = ca + cb if op == "add" else ca - cb if op == "sub" else ca * cb
        return _const(v & 0xFFFFFFFF)
    return N.Binary("u32", N.NO_SPAN, op, a, b)


# ---------------------------------------------------------------- emission


def prologue(em: "_Emitter") -> None:
    """global_id().x = the warp's index; the lane in `em.rowwarp_lane`; past the grid's
    threads the whole warp returns."""
    from goldy_import.ir import abi as A
    wx = em.k.workgroup_size[0]
    groups = em._ld_param("u32", A.GROUPS_PARAM)
    tid = em._sreg("%tid.x")
    ctaid = em._sreg("%ctaid.x")
    hw = em.new("r", f"mad.lo.s32 {{}}, {{}}, {ROWWARP_BLOCK}, {{}};", ctaid, tid)
    em.rowwarp_lane = em.new("r", "and.b32 {}, {}, 31;", tid)
    gid = em.new("r", "shr.u32 {}, {}, 5;", hw)
    total = em.new("r", f"mul.lo.s32 {{}}, {{}}, {wx};", groups)
    past = em.new("p", "setp.ge.u32 {}, {}, {};", gid, total)
    em.b.op(f"@{past} ret;")
    em.builtin["global_id"] = [gid, "0", "0"]
    em.b.comment("each warp runs one thread of the kernel: 32 replicas, splitting its sum loops (rowwarp.py)")


def without_trips(em: "_Emitter", stmts: list) -> list:
    """The statements less ir/unroll.py's trips before a loop this entry splits (that loop
    then starts where the trips would have: at the range's start)."""
    out = []
    for i, s in enumerate(stmts):
        if isinstance(s, N.While):
            t = trip_of(em.k, s)
            if t is not None and t.followed and _split_follows(em, stmts[i + 1:], s):
                continue
        out.append(s)
    return out


def _split_follows(em: "_Emitter", rest: list, trip: N.While) -> bool:
    j = trip.cond.lhs.lhs.name  # the trip's induction local (trip_of's form)
    for s in rest:
        if isinstance(s, N.For) and isinstance(s.start, N.Var) and s.start.name == j:
            return em.split(s) is not None
    return False


def emit(em: "_Emitter", s: N.For, sp: Split, slow) -> None:
    """The split loop where every access is in range, else `slow()` (the loop as written)."""
    b = em.b
    start = em.reg_of(em.expr(s.start)[0], "r")
    end = em.reg_of(em.expr(s.end)[0], "r")
    em.flush_traps()
    if s.inclusive:  # `start..=end`: end + 1 must not wrap
        fast = em.pred_and(em.new("p", "setp.le.u32 {}, {}, {};", start, end),
                           em.new("p", "setp.lt.u32 {}, {}, 0xFFFFFFFF;", end))
        last = end
    else:
        fast = em.new("p", "setp.lt.u32 {}, {}, {};", start, end)
        last = em.new("r", "sub.s32 {}, {}, 1;", end)
    for name, coef, off in sp.bounds:  # off + coef * last < len, in 64 bits
        c = em.reg_of(em.expr(coef)[0], "r")
        o = em.reg_of(em.expr(off)[0], "r")
        hi = em.new("rd", "mul.wide.u32 {}, {}, {};", c, last)
        hi = em.new("rd", "add.s64 {}, {}, {};", hi, em.new("rd", "cvt.u64.u32 {}, {};", o))
        n = em.new("rd", "cvt.u64.u32 {}, {};", em.res[name]["len"])
        fast = em.pred_and(fast, em.new("p", "setp.lt.u64 {}, {}, {};", hi, n))
    count = em.new("r", "sub.s32 {}, {}, {};", end, start)
    if s.inclusive:
        count = em.new("r", "add.s32 {}, {}, 1;", count)
    fast = em.pred_and(fast, em.new("p", "setp.lt.u32 {}, {}, 0x80000000;", count))  # trips cannot wrap
    em.flush_traps()
    slow_l, done = b.label("rwslow"), b.label("rwdone")
    b.op(f"@!{fast} bra {slow_l};")
    c = em.new("r", "mov.b32 {}, 0;")
    big, small = b.label("rwbig"), b.label("rwsmall")
    b.place(big)  # long ranges: BIG chunks per trip, then SMALL ones
    left = em.new("r", "sub.s32 {}, {}, {};", count, c)
    more = em.pred_and(em.new("p", "setp.lt.u32 {}, {}, {};", c, count),
                       em.new("p", f"setp.gt.u32 {{}}, {{}}, {32 * SMALL};", left))
    b.op(f"@!{more} bra {small};")
    _trip(em, sp, s, start, count, c, BIG, big)
    b.place(small)
    b.op(f"@!{em.new('p', 'setp.lt.u32 {}, {}, {};', c, count)} bra {done};")
    _trip(em, sp, s, start, count, c, SMALL, small)
    b.place(slow_l)
    slow()
    b.place(done)


def _trip(em: "_Emitter", sp: Split, s: N.For, start: str, count: str, c: str, chunks: int, top: str) -> None:
    """Terms c .. c + 32 * chunks (a lane past the range computes the last one again: no
    load leaves it), then their sum in order, the chunks past the range skipped; back to
    `top` with c advanced."""
    b = em.b
    lane, acc = em.rowwarp_lane, em.local(sp.acc)[0]
    last = em.new("r", "sub.s32 {}, {}, 1;", count)
    first = em.new("r", "add.s32 {}, {}, {};", c, lane)
    terms = []
    for u in range(chunks):
        k = em.new("r", "min.u32 {}, {}, {};", em.new("r", f"add.s32 {{}}, {{}}, {u * 32};", first), last)
        terms.append(_term(em, sp, em.new("r", "add.s32 {}, {}, {};", start, k)))
    left = em.new("r", "sub.s32 {}, {}, {};", count, c)
    b.op(f"add.s32 {c}, {c}, {32 * chunks};")
    for u, t in enumerate(terms):
        m = em.new("r", f"sub.s32 {{}}, {{}}, {u * 32};", left)  # terms of this chunk in range, if below 32
        part = b.label("rwpart")
        b.op(f"@!{em.new('p', 'setp.ge.s32 {}, {}, 32;', m)} bra {part};")
        # the 32 lanes' terms 8 at a time (written out, no faster on the H200: the adds'
        # dependency chain sets the pace)
        base, fl = em.new("r", "mov.b32 {}, 0;"), b.label("rwfull")
        b.place(fl)
        for k in range(8):
            src = base if k == 0 else em.new("r", f"add.s32 {{}}, {{}}, {k};", base)
            _add(em, sp, acc, em.new(b.kind_of(t), "shfl.sync.idx.b32 {}, {}, {}, 31, 0xffffffff;", t, src))
        b.op(f"add.s32 {base}, {base}, 8;")
        b.op(f"@{em.new('p', 'setp.lt.u32 {}, {}, 32;', base)} bra {fl};")
        nxt = b.label("rwnext")
        b.op(f"bra.uni {nxt};")
        b.place(part)  # the range ends in this chunk (m <= 0: before it)
        src, ltop = em.new("r", "mov.b32 {}, 0;"), b.label("rwlane")
        b.place(ltop)
        b.op(f"@!{em.new('p', 'setp.lt.s32 {}, {}, {};', src, m)} bra {top};")
        _add(em, sp, acc, em.new(b.kind_of(t), "shfl.sync.idx.b32 {}, {}, {}, 31, 0xffffffff;", t, src))
        b.op(f"add.s32 {src}, {src}, 1;")
        b.op(f"bra.uni {ltop};")
        b.place(nxt)
    b.op(f"bra.uni {top};")


def _add(em: "_Emitter", sp: Split, acc: str, v: str) -> None:
    em.b.op(f"{_mov(em, acc)} {acc}, {em.combine('sum', sp.ty, acc, v)};")


def _term(em: "_Emitter", sp: Split, j: str) -> str:
    """The term at iteration `j` (a register), its loads proven in range by the test."""
    term = clone(sp.term)
    for e in N.walk_expr(term):
        if isinstance(e, N.Load):
            e.check = PROVEN
    saved = em.locals.get(sp.var)
    em.locals[sp.var] = [j]
    try:
        v = em.reg_of(em.expr(term)[0], "f" if sp.ty == "f32" else "r")
    finally:
        if saved is None:
            em.locals.pop(sp.var, None)
        else:
            em.locals[sp.var] = saved
    em.flush_traps()
    return v


def _mov(em: "_Emitter", reg: str) -> str:
    return "mov.f32" if em.b.kind_of(reg) == "f" else "mov.b32"
