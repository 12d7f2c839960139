"""The batched entry's run layout and its fast path (issue 16).

Where every buffer access of an element-wise kernel is at the thread's own index
(`global_id().x`, directly or through a `let` of it) on a 4-byte buffer, the batched entry
gives a hardware thread runs of w = 4 consecutive logical threads (w = 2 for a batch of
2), one run per w copies, the block's threads side by side in each run: copy j = c * w + l
of thread t in block b runs the logical thread of global id
x = b * wx * batch + c * wx * w + t * w + l (instead of workgroup b * batch + j). Each
vector access of a warp then covers 32 * 4 * w consecutive bytes, as a coalesced scalar
loop's would (a thread's copies all consecutive left each warp-wide `.v4` half of every
sector it touched). Threads of a batchable kernel never observe each other except
through races, so which hardware thread runs which logical thread is not observable
(emitter.batchable).

A thread whose copies are all live, whose buffers are 16-byte aligned and in range for
all copies (lengths only where ir/checks.py did not prove the accesses) runs the fast path:
the body once for all copies without predicates, each buffer's elements read with one
`ld.global(.nc).v4` and written with one `st.global.v4` at an address computed once. Before
any store or recorded check the thread may still leave for the general path (from the
start: nothing has been written), and does where an `if` whose condition reads no memory
does not go the expected way for all its copies (true; false where its body is an early
`return`; a condition the same for every copy, with an `else`, branches instead), or where
a copy's input to a math-library call is rare (`Ops.when`, e.g. exp beyond |x| >= 86); the
tests share one branch, placed before the next memory access. After a store, an `if` runs
each copy under its condition (emitter.batched_block) and the copies' rare paths share one
branch to an out-of-line block. Every other thread runs the general predicated path. The
values are computed by the same sequences, so the bits are those of the plain entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from goldy_import.ir import abi as A
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import PROVEN

from . import math as PM

WORD = {"f32": ("f", "f32"), "u32": ("r", "u32"), "i32": ("r", "u32")}  # element type -> (kind, ld/st type)
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}


@dataclass
class Plan:
    own: set  # immutable locals holding global_id().x
    buffers: list  # buffers accessed at the own index, in first-access order
    unproven: list  # those of them with an access not proven in range (their lengths are tested)


def _is_gid_x(e: N.Expr) -> bool:
    return isinstance(e, N.Swizzle) and e.lanes == "x" and isinstance(e.value, N.Builtin) \
        and e.value.name == "global_id"


def _own(e: N.Expr, own: set) -> bool:
    return _is_gid_x(e) or (isinstance(e, N.Var) and e.name in own)


def _exprs(stmts: list) -> list:
    return [x for s in N.walk_stmts(stmts) for e in N.stmt_exprs(s) for x in N.walk_expr(e)]


def _checks(exprs) -> bool:
    """Whether evaluating these may record a fault other than a buffer access's (those the
    fast path's length test rules out)."""
    return any(isinstance(x, N.Binary) and x.check >= 0 for e in exprs for x in N.walk_expr(e))


def _pure(cond: N.Expr) -> bool:
    return not any(isinstance(x, N.Load) for x in N.walk_expr(cond)) and not _checks([cond])


def _effects(stmts: list) -> bool:
    return any(isinstance(s, (N.Store, N.Atomic)) for s in N.walk_stmts(stmts)) or \
        _checks(e for s in N.walk_stmts(stmts) for e in N.stmt_exprs(s))


def _shape_ok(stmts: list, effects: bool) -> Optional[bool]:
    """The fast path's walk (`_Fast.walk`) without emitting: the effects after `stmts`, or
    None where it cannot run them (a `return` inside a predicated `if`)."""
    for s in stmts:
        if isinstance(s, N.Return):
            return effects
        if isinstance(s, N.If):
            if _pure(s.cond) and not effects:
                e1, e2 = _shape_ok(s.then_body, effects), _shape_ok(s.else_body, effects)
                if e1 is None or e2 is None:
                    return None
                effects = e1 or e2
            elif any(isinstance(x, N.Return) for x in N.walk_stmts([s])):
                return None
            else:
                effects = effects or _effects([s])
        elif isinstance(s, N.Store):
            effects = True
        else:
            effects = effects or _checks(N.stmt_exprs(s))
    return effects


def plan(k: N.Kernel, batch: int) -> Optional[Plan]:
    """The contiguous layout's facts for a batchable kernel, None where it does not apply."""
    wx = k.workgroup_size[0]
    if (batch % 4 and batch != 2) or wx % batch:  # whole .v4 (or .v2) accesses per thread
        return None
    if not set(k.builtins) <= {"global_id", "num_workgroups", "workgroup_size"}:
        return None
    stmts = list(N.walk_stmts(k.body))
    assigned = {x.name for s in stmts if isinstance(s, N.Assign) for x in N.walk_expr(s.target)
                if isinstance(x, N.Var)}
    lets = [s.name for s in stmts if isinstance(s, N.Let)]
    own = {s.name for s in stmts if isinstance(s, N.Let) and not s.mutable and s.value is not None
           and _is_gid_x(s.value) and s.name not in assigned and lets.count(s.name) == 1}
    buffers: list = []
    unproven: list = []
    accesses = [(x.resource, x.index, x.check) for x in _exprs(k.body) if isinstance(x, N.Load)]
    accesses += [(s.resource, s.index, s.check) for s in stmts if isinstance(s, N.Store)]
    for name, index, check in accesses:
        p = k.param(name)
        if p is None or p.category not in N.BUFFER_CATEGORIES or p.ty not in WORD or not _own(index, own):
            return None
        if name not in buffers:
            buffers.append(name)
        if check != PROVEN and name not in unproven:
            unproven.append(name)
    if not buffers or _shape_ok(k.body, False) is None:
        return None
    return Plan(own, buffers, unproven)


class _Ops(PM.PtxOps):
    """PtxOps that remembers its last `when` (where its branch starts and ends)."""

    last: Optional[tuple] = None

    def when(self, p, fn, defaults):
        start = len(self.b.lines)
        outs = super().when(p, fn, defaults)
        self.last = (p, start, len(self.b.lines), outs)
        return outs


def contiguous_entry(em, pl: Plan) -> None:
    """The batched entry's prologue in the contiguous layout and its fast path; leaves
    `em.copies` and `em.valid` set for the general path that follows (emitter.run)."""
    _Fast(em, pl).run()


class _Fast:
    def __init__(self, em, pl: Plan):
        self.em, self.pl, self.b = em, pl, em.b
        self.n = em.batch
        self.w = 4 if self.n % 4 == 0 else 2  # logical threads per run: one .v4 (.v2) access
        self.memo: list[dict] = [{} for _ in range(self.n)]  # per copy: id(expr) -> registers
        self.j = 0
        self.rare: list[tuple] = []  # out-of-line blocks: (label, back, lines)

    def run(self) -> None:
        em, b, n = self.em, self.b, self.n
        k = em.k
        wx = k.workgroup_size[0]
        groups = em._ld_param("u32", A.GROUPS_PARAM)
        tid = em._sreg("%tid.x")
        ctaid = [em._sreg(f"%ctaid.{a}") for a in "xyz"]
        w = self.w
        t_w = em.new("r", f"mul.lo.s32 {{}}, {{}}, {w};", tid)
        g0 = em.new("r", f"mad.lo.s32 {{}}, {{}}, {wx * n}, {{}};", ctaid[0], t_w)
        nw = [groups, em._sreg("%nctaid.y"), em._sreg("%nctaid.z")]

        def copies() -> None:  # each path its own ids: the general path's are not live in the fast one
            em.copies = []
            for j in range(n):
                off = self.offset(j)
                gid = g0 if j == 0 else em.new("r", f"add.s32 {{}}, {{}}, {off};", g0)
                em.copies.append(({}, {"num_workgroups": nw, "workgroup_size": [str(wx), "1", "1"],
                                       "global_id": [gid, ctaid[1], ctaid[2]]}))
            em.alive, em.masks = [None] * n, {}
        b.comment(f"{n} threads per hardware thread in runs of {w}, the block's runs side by side "
                  f"(codegen/ptx/batched.py)")
        # the fast path: every copy of the block live ((b + 1) * n workgroups <= groups),
        # aligned, in range
        ok = em.new("p", "setp.le.u32 {}, {}, {};", em.new("r", f"mad.lo.s32 {{}}, {{}}, {n}, {n};", ctaid[0]), groups)
        # each buffer's address at copy 0, 4 * w * t bytes into the block's: aligned where its base is
        self.addr = {name: em.address(em.res[name]["ptr"], g0, 4) for name in self.pl.buffers}
        ptrs = list(self.addr.values())
        acc = ptrs[0]
        for p in ptrs[1:]:
            acc = em.new("rd", "or.b64 {}, {}, {};", acc, p)
        low = em.new("rd", f"and.b64 {{}}, {{}}, {4 * w - 1};", acc)
        ok = em.pred_and(ok, em.new("p", "setp.eq.u64 {}, {}, 0;", low))
        if self.pl.unproven:  # the last copy's id: below 2^32 in a live block
            last = em.new("r", f"add.s32 {{}}, {{}}, {self.offset(n - 1)};", g0)
            for name in self.pl.unproven:
                ok = em.pred_and(ok, em.lt_u(last, em.res[name]["len"]))
        self.slow = b.label("general")
        self.pending: Optional[str] = ok  # bail-out conditions not yet branched on (`bail`)
        copies()
        saved_m = em.m
        em.m = _Ops(b)
        em.expr = self.expr  # memoised per copy: the vector loads and hoisted calls
        em.use_copy = self.use_copy
        try:
            self.walk(k.body, False)
            self.flush_bail()
            em.flush_traps()
            b.op("ret;")
            for label, back, lines in self.rare:
                b.place(label)
                b.lines += lines
                b.op(f"bra.uni {back};")
        finally:
            em.m = saved_m
            del em.expr, em.use_copy
        # the general path: copy j live while its global id is below groups * wx (64-bit:
        # a grid of 2^32 threads)
        b.place(self.slow)
        b.comment("the general path: each copy under its predicate")
        copies()
        g64 = em.new("rd", "add.s64 {}, {}, {};", em.new("rd", f"mul.wide.u32 {{}}, {{}}, {wx * n};", ctaid[0]),
                     em.new("rd", "cvt.u64.u32 {}, {};", t_w))
        total = em.new("rd", f"mul.wide.u32 {{}}, {{}}, {wx};", groups)
        em.valid = []
        for j in range(n):
            gj = g64 if j == 0 else em.new("rd", f"add.s64 {{}}, {{}}, {self.offset(j)};", g64)
            em.valid.append(em.new("p", "setp.lt.u64 {}, {}, {};", gj, total))
        em.current_line = 0

    def offset(self, j: int) -> int:
        """Copy j's global id less copy 0's: its run's start in the block plus its place in the run."""
        return (j // self.w) * self.em.k.workgroup_size[0] * self.w + j % self.w

    # ------------------------------------------------------------ per copy

    def use_copy(self, j: int, pred: Optional[str]) -> None:
        self.j = j
        type(self.em).use_copy(self.em, j, pred)

    def expr(self, e: N.Expr) -> list[str]:
        hit = self.memo[self.j].get(id(e))
        return list(hit) if hit is not None else type(self.em).expr(self.em, e)

    # ------------------------------------------------------------ statements

    def walk(self, stmts: list, effects: bool) -> bool:
        """Mirrors `_shape_ok`: the effects (stores, recorded checks) after `stmts`."""
        em, b = self.em, self.b
        for s in stmts:
            em.line_comment(s.span)
            if isinstance(s, N.Return):  # every copy returns
                self.flush_bail()
                em.flush_traps()
                b.op("ret;")
                return effects
            if isinstance(s, N.If):
                if _pure(s.cond) and not effects:
                    effects = self.branch(s, effects)
                else:  # each copy under its condition (no `return` inside: `plan`)
                    self.flush_bail()
                    self.hoist([s.cond], effects)  # its loads as vectors all the same
                    live = em.new("p", "setp.eq.u32 {}, 0, 0;")
                    em.alive, em.masks = [None] * self.n, {}
                    em.batched_block([s], [live] * self.n)
                    effects = effects or _effects([s])
                continue
            exprs = N.stmt_exprs(s)
            if isinstance(s, N.Store) or _checks(exprs) or any(
                    isinstance(x, (N.Load, N.Call)) for e in exprs for x in N.walk_expr(e)):
                self.flush_bail()  # before memory is touched or a fault could be recorded
            self.hoist(exprs, effects)
            if isinstance(s, N.Store):
                vals = []
                for j in range(self.n):
                    self.use_copy(j, None)
                    vals.append(em.reg_of(em.expr(s.value)[0], WORD[em.k.param(s.resource).ty][0]))
                self.vector_store(s.resource, vals)
                effects = True
            else:
                for j in range(self.n):
                    self.use_copy(j, None)
                    if isinstance(s, N.Let):
                        regs = em.local(s.name)
                        em.move(regs, em.expr(s.value) if s.value is not None else [])
                    else:  # Assign (batchable, `plan`)
                        root, lanes = em.place(s.target)
                        regs = em.local(root)
                        em.move([regs[i] for i in lanes], em.expr(s.value))
                effects = effects or _checks(N.stmt_exprs(s))
            em.flush_traps()
        return effects

    def branch(self, s: N.If, effects: bool) -> bool:
        """A condition the same for every copy branches where there is an `else`; one that
        may differ between them, or a guard without `else`, is expected to hold for all
        copies (not to hold for any where its body is just `return`, an early exit): the
        other threads, e.g. past the end, take the general path."""
        b = self.b
        all_true, none_true, agree = self.condition(s.cond)
        if not agree or not s.else_body:  # (a uniform guard: false, the general path does nothing either)
            early = bool(s.then_body) and all(isinstance(x, N.Return) for x in s.then_body)
            self.bail(none_true if early else all_true)
            return self.walk(s.else_body if early else s.then_body, effects)
        self.flush_bail()
        els, end = b.label("else"), b.label("endif")
        b.op(f"@!{all_true} bra {els};")
        e1 = self.walk(s.then_body, effects)
        self.flush_bail()
        b.op(f"bra.uni {end};")
        b.place(els)
        e2 = self.walk(s.else_body, effects)
        self.flush_bail()
        b.place(end)
        return e1 or e2

    def bail(self, pred: str) -> None:
        """The thread takes the general path unless `pred`: deferred to the next memory
        access, branch or `return` (`flush_bail`), so that the tests share one branch."""
        self.pending = pred if self.pending is None else self.em.pred_and(self.pending, pred)

    def flush_bail(self) -> None:
        if self.pending is not None:
            self.b.op(f"@!{self.pending} bra {self.slow};")
            self.pending = None

    def condition(self, cond: N.Expr) -> tuple[str, str, bool]:
        """(all copies true, no copy true, whether the copies always agree)."""
        em = self.em
        at = []

        def value(j: int) -> str:
            self.use_copy(j, None)
            return em.reg_of(em.expr(cond)[0], "p")

        free = [x for x in N.walk_expr(cond) if isinstance(x, (N.Builtin, N.Var))]
        if all(isinstance(x, N.Var) and x.name not in em.k.locals for x in free):  # the same for every copy
            c = value(0)
            return c, em.new("p", "not.pred {}, {};", c), True
        if isinstance(cond, N.Binary) and cond.op in _FLIP and cond.lhs.ty == "u32":
            op = cond.op if _own(cond.lhs, self.pl.own) else _FLIP[cond.op] if _own(cond.rhs, self.pl.own) else ""
            other = cond.rhs if op == cond.op else cond.lhs
            if op and not any(isinstance(x, N.Builtin) or (isinstance(x, N.Var) and x.name in em.k.locals)
                              for x in N.walk_expr(other)):
                # the copies' ids increase: the first and the last decide (a full thread's
                # last id, g0 + offset(n - 1), does not wrap: compare g0 with C - that offset)
                first = value(0)
                span = self.offset(self.n - 1)
                if isinstance(other, N.Const) and int(other.value) >= span:
                    g0 = em.copies[0][1]["global_id"][0]
                    last = em.new("p", f"setp.{op}.u32 {{}}, {{}}, {int(other.value) - span};", g0)
                else:
                    last = value(self.n - 1)
                up, down = (last, first) if op in ("lt", "le") else (first, last)
                return up, em.new("p", "not.pred {}, {};", down), False
        for j in range(self.n):
            at.append(value(j))
        all_true, any_true = at[0], at[0]
        for c in at[1:]:
            all_true = em.pred_and(all_true, c)
            any_true = em.new("p", "or.pred {}, {}, {};", any_true, c)
        return all_true, em.new("p", "not.pred {}, {};", any_true), False

    # ------------------------------------------------------------ hoisting

    def hoist(self, exprs: list, effects: bool) -> None:
        """Before a statement: its buffer loads as one vector load per access, then its
        math-library calls (innermost first) for all copies, their rare paths on one branch
        (before any effect, to the general path: `hoist_call`)."""
        nodes = [x for e in exprs for x in N.walk_expr(e)]
        for x in nodes:
            if isinstance(x, N.Load) and id(x) not in self.memo[0]:
                for j, r in enumerate(self.vector_load(x.resource)):
                    self.memo[j][id(x)] = [r]
        for x in reversed(nodes):  # parents first reversed: an argument's calls come before
            if not (isinstance(x, N.Call) and x.func in PM.FUNCTIONS) or id(x) in self.memo[0]:
                continue
            if any((isinstance(y, N.Load) and id(y) not in self.memo[0]) for a in x.args for y in N.walk_expr(a)) \
                    or _checks(x.args):
                continue
            self.hoist_call(x, effects)

    def hoist_call(self, call: N.Call, effects: bool) -> None:
        """The call for every copy; where a copy's input is rare (`Ops.when`), a thread that
        has not written anything yet takes the general path (no reconvergence in the fast
        path), else one branch for all copies goes to a block after the fast path."""
        em, b = self.em, self.b
        rare: list[tuple[str, list[str]]] = []
        for j in range(self.n):
            self.use_copy(j, None)
            em.m.last = None
            regs = em.expr(call)
            self.memo[j][id(call)] = regs
            last = em.m.last
            if last is not None and last[2] == len(b.lines) and list(last[3]) == list(regs):
                p, start = last[0], last[1]
                i = next(i for i in range(start, len(b.lines)) if b.lines[i].startswith(f"\t@!{p} bra "))
                rare.append((p, b.lines[i:]))
                del b.lines[i:]
        if not rare:
            return
        anyp = rare[0][0]
        for p, _ in rare[1:]:
            anyp = em.new("p", "or.pred {}, {}, {};", anyp, p)
        if not effects:
            self.bail(em.new("p", "not.pred {}, {};", anyp))
            return
        label, back = b.label("rare"), b.label("common")
        b.op(f"@{anyp} bra {label};")
        b.place(back)
        self.rare.append((label, back, [line for _, lines in rare for line in lines]))

    # ------------------------------------------------------------ memory

    def _vectors(self, name: str, regs: list[str]):
        """(vector suffix, register operand, address) of each access of up to 4 words."""
        for i in range(0, self.n, self.w):
            part = regs[i:i + self.w]
            vec = f".v{len(part)}" if len(part) > 1 else ""
            operand = "{" + ", ".join(part) + "}" if len(part) > 1 else part[0]
            off = 4 * self.offset(i)
            yield vec, operand, f"[{self.addr[name]}{f'+{off}' if off else ''}]"

    def vector_load(self, name: str) -> list[str]:
        em = self.em
        kind, ty = WORD[em.k.param(name).ty]
        regs = [em.b.reg(kind) for _ in range(self.n)]
        nc = ".nc" if name not in em.written else ""
        for vec, dst, addr in self._vectors(name, regs):
            em.b.op(f"ld.global{nc}{vec}.{ty} {dst}, {addr};")
        return regs

    def vector_store(self, name: str, vals: list[str]) -> None:
        _, ty = WORD[self.em.k.param(name).ty]
        for vec, src, addr in self._vectors(name, vals):
            self.em.b.op(f"st.global{vec}.{ty} {addr}, {src};")
