"""Race lints: warnings about writes and reads that threads of one workgroup make to the
same memory without ordering them. The kernel is still imported.

Following gpu_native's rule that a thread writes only where no other thread writes:

- G0043: a write to a buffer, tensor view or image at an index that is the same for every
  thread of a workgroup, outside any thread-dependent guard, of a value that may differ
  between threads (every thread writes `out[0] = x[i]`). Atomics are exempt, and so is a
  write of a value that is the same on every thread (`out[0] = 1.0`): whichever thread's
  write lands, the element gets that value.
- G0044: a workgroup array read at another lane's element after a write and before any
  barrier (barrier, collective or softmax) in program order.

Both lints are conservative: a false warning on a correct kernel is worse than a missed
race. Uniformity questions go to `ir.uniformity`: "does this vary per lane?" uses its
"must" mode (only what certainly depends on the thread), "is this the same on every
lane?" its "may" mode (only what certainly does not). Where the answer is unsure, no
warning. Concretely G0044 reports only three shapes of read, each with a write still
pending (not yet followed by a barrier on some path):

1. the write's index certainly varies per lane, the read's index certainly does not and
   every lane performs the read (`s[lid] = v; let t = s[0];`);
2. the read's index is the write's `local_id()`/`global_id()` lane index plus, minus or
   xor a lane-independent offset that is not known to be 0 (`s[lid + stride]`), unless
   the ranges of the two indices are known to be disjoint;
3. the write's index is lane-independent and the write certainly happens on some lanes
   only, while every lane reads that element (`if lid == 0 { s[0] = v; } let t = s[0];`).

The same walk, with the reads still pending as well, gives the other two orders:

- G0045: a workgroup array written at an element another lane read since the last
  barrier (a statement's own reads count: they may happen after another lane's write).
  Shapes: every lane read one element and every lane then writes at its lane index,
  which covers that element (`let m = s[0]; s[lid] = v;`); the read and the write are at
  the lane index and the lane index shifted as in G0044 shape 2, both on every lane
  (`let t = s[lid + 1]; s[lid] = v;`); every lane read a lane-independent element that a
  write then stores at the same index (`let t = s[0]; if lid == 0 { s[0] = t + 1.0; }`).
  A pair G0044 already reports (a write, then a read, then the write again in a loop) is
  reported once.
- G0046: a workgroup array element written by two lanes with no barrier between: every
  lane writes one lane-independent element a value that may differ between lanes (G0043
  for workgroup memory), or two writes on every lane, at the lane index and at the lane
  index shifted (`s[lid] = a; s[lid + 1] = b;`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir.uniformity import Uniformity, reassigned_locals

from goldy_import.ir.diagnostics import Diagnostic, Label

UNIFORM_WRITE = "G0043"
UNSYNCED_READ = "G0044"
WRITE_AFTER_READ = "G0045"
WRITE_AFTER_WRITE = "G0046"

_SYNC = (N.Barrier, N.Reduce, N.Softmax)
_MAX_LOOP_PASSES = 16
_MAX_SUBST_DEPTH = 32
_MAX_STEPS = 200_000  # statements visited per kernel before the lints give up (and report nothing)
# access pairs compared per kernel, likewise: n pending accesses of one array make n^2 pairs.
# Real kernels compare a few hundred; 50,000 (about 220 accesses of one array between two
# barriers) keeps the worst case near 0.1 s.
_MAX_PAIRS = 50_000


class _GiveUp(Exception):
    pass


def lint_diagnostics(kernel: N.Kernel, filename: str, must: Optional[Uniformity] = None) -> list[Diagnostic]:
    """Race warnings for a verified kernel (severity "warning"), in source order. `must`:
    the kernel's "must" analysis, where the caller has it (G0042's, shared)."""
    lanes = kernel.workgroup_size[0] * kernel.workgroup_size[1] * kernel.workgroup_size[2]
    if lanes <= 1:
        return []  # one thread per workgroup: nothing to race with inside it
    walker = _Walker(kernel, must)
    try:
        walker.run()
    except _GiveUp:
        return []  # a pathological kernel: better no warning than a slow import
    out = [_uniform_write(s, filename) for s in walker.uniform_stores.values()]
    out += [_unsynced_read(load, store, filename) for load, store in walker.unsynced.values()]
    raw = {(id(load), id(store)) for load, store in walker.unsynced.values()}
    out += [_write_after_read(store, load, filename) for store, load in walker.war.values()
            if (id(load), id(store)) not in raw]
    out += [_write_after_write(store, first, filename) for store, first in walker.waw.values()]
    out.sort(key=lambda d: (d.span.start, d.code))
    return out


# ---------------------------------------------------------------- diagnostics


def _uniform_write(s: N.Store, filename: str) -> Diagnostic:
    return Diagnostic(
        UNIFORM_WRITE, f"every thread of a workgroup writes the same element of `{s.resource}`", filename,
        [Label(s.span, "every thread of the workgroup writes this element")],
        ["index the write by the thread (`gpu::global_id().x`), let one thread write it "
         "(`if gpu::local_id().x == 0 { ... }`), or use `atomic_add`"],
        ["threads may write only where no other thread writes; which write lands is unspecified"],
        severity="warning")


def _unsynced_read(load: N.Load, store: N.Store, filename: str) -> Diagnostic:
    labels = [Label(load.span, "read here, before a barrier"),
              Label(store.span, "written here", primary=False)]
    return Diagnostic(
        UNSYNCED_READ, f"workgroup array `{load.resource}` is read at another thread's element "
                       "without a barrier after the write", filename,
        labels,
        ["call `gpu::workgroup_barrier();` between the write and the read, where every thread "
         "of the workgroup reaches it"],
        ["another thread may not have written the element yet; only a barrier orders writes of "
         "one thread before reads of another"],
        severity="warning")


def _write_after_read(store: N.Store, load: N.Load, filename: str) -> Diagnostic:
    return Diagnostic(
        WRITE_AFTER_READ, f"workgroup array `{store.resource}` is written at an element another thread "
                          "reads, without a barrier after the read", filename,
        [Label(store.span, "written here, before a barrier"), Label(load.span, "read here", primary=False)],
        ["call `gpu::workgroup_barrier();` between the read and the write, where every thread "
         "of the workgroup reaches it"],
        ["another thread may not have read the element yet; only a barrier orders reads of one "
         "thread before writes of another"],
        severity="warning")


def _write_after_write(store: N.Store, first: Optional[N.Store], filename: str) -> Diagnostic:
    if first is None:
        labels = [Label(store.span, "every thread of the workgroup writes this element")]
        msg = f"every thread of a workgroup writes the same element of workgroup array `{store.resource}`"
        fix = ("index the write by the thread (`s[gpu::local_id().x]`) or let one thread write it "
               "(`if gpu::local_id().x == 0 { ... }`)")
    else:
        labels = [Label(store.span, "written here, before a barrier"),
                  Label(first.span, "another thread wrote it here", primary=False)]
        msg = f"workgroup array `{store.resource}` is written by two threads without a barrier between"
        fix = ("call `gpu::workgroup_barrier();` between the writes, where every thread of the workgroup "
               "reaches it")
    return Diagnostic(WRITE_AFTER_WRITE, msg, filename, labels, [fix],
                      ["which thread's write lands is unspecified"], severity="warning")


# ---------------------------------------------------------------- the walk


@dataclass(frozen=True)
class _Flow:
    may: bool  # some lanes may not be here (control flow may be thread-dependent)
    must: bool  # control flow certainly depends on the thread (the dialect's definition)

    def join(self, other: "_Flow") -> "_Flow":
        return _Flow(self.may or other.may, self.must or other.must)


# pending workgroup-array accesses: array -> {id(store): (store, flow at the store)} for the
# writes, ("read", array) -> {id(load): (load, flow at the load)} for the reads
_Pending = dict[object, dict[int, tuple[object, _Flow]]]


@dataclass
class _Exits:
    brk: list[_Pending] = field(default_factory=list)
    cont: list[_Pending] = field(default_factory=list)
    diverged: Optional[_Flow] = None  # some lanes may have left (return/break/continue)


def _union(*states: _Pending) -> _Pending:
    out: _Pending = {}
    for st in states:
        for arr, sites in st.items():
            out.setdefault(arr, {}).update(sites)
    return out


def _same(a: _Pending, b: _Pending) -> bool:
    return {k: set(v) for k, v in a.items() if v} == {k: set(v) for k, v in b.items() if v}


class _Walker:
    """Two walks over the kernel: the first settles, for every statement, whether control
    flow may or must be thread-dependent there (joined over loop passes); the second, with
    those flows fixed, follows pending workgroup-array writes and records the findings.
    Pending sets only grow across loop passes, so a race seen in any pass is real."""

    def __init__(self, k: N.Kernel, must: Optional[Uniformity] = None):
        self.k = k
        self.must = must if must is not None else Uniformity(k, "must")
        self.may = self.must.sibling("may")  # the same walk answers both modes
        # the analysis' own set when it walked this kernel: one walk fewer
        self.again = self.must.reassigned if self.must.k is k else reassigned_locals(k)
        self.defs = _immutable_defs(k, self.again)
        self.flows: dict[object, _Flow] = {}
        self.loops: dict[tuple, tuple[_Pending, Optional[_Flow]]] = {}  # memo: nested loops stay linear
        self.steps = 0
        self.pairs = 0
        self._normed: dict[int, tuple[N.Expr, N.Expr, object]] = {}  # id -> (expr, norm(expr), its key)
        self.recording = False
        self.has_arrays = bool(k.workgroup_arrays)
        self.grew = False  # a statement's flow became more divergent on a later visit
        self._facts: dict[int, tuple] = {}  # id(index) -> (index, norm, key, facts): see facts()
        self.uniform_stores: dict[int, N.Store] = {}
        self.unsynced: dict[int, tuple[N.Load, N.Store]] = {}
        self.war: dict[int, tuple[N.Store, N.Load]] = {}
        self.waw: dict[int, tuple[N.Store, Optional[N.Store]]] = {}
        self._lane_keys = {_key(N.Swizzle("u32", N.NO_SPAN, N.Builtin("vec3<u32>", N.NO_SPAN, b), axis))
                           for b in ("local_id", "global_id")
                           for axis, extent in zip("xyz", k.workgroup_size) if extent > 1}

    def run(self) -> None:
        # The walk records as it goes. Only where a statement is seen again with a more
        # divergent flow (a later loop pass) could a finding of an earlier visit be one the
        # joined flow suppresses: then the findings are dropped and the walk repeated with
        # the joined flows, as a settling walk followed by a recording one would.
        self.recording = True
        self.block(self.k.body, _Flow(False, False), {})
        if self.grew:
            self.uniform_stores.clear()
            self.unsynced.clear()
            self.war.clear()
            self.waw.clear()
            self.loops.clear()  # no loop may be skipped
            self.block(self.k.body, _Flow(False, False), {})

    def at(self, key: object, flow: _Flow) -> _Flow:
        old = self.flows.get(key)
        if old is None:
            self.flows[key] = flow
            return flow
        joined = old.join(flow)
        if joined != old:
            self.flows[key] = joined
            self.grew = True
        return joined

    # -------------------------------------------------------- control flow

    def block(self, stmts: list[N.Stmt], flow: _Flow, pending: _Pending) -> tuple[_Pending, _Exits]:
        exits = _Exits()
        for s in stmts:
            if exits.diverged is not None:
                flow = flow.join(exits.diverged)
            pending, ex = self.stmt(s, self.at(id(s), flow), pending)
            exits.brk += ex.brk
            exits.cont += ex.cont
            exits.diverged = _join_opt(exits.diverged, ex.diverged)
        return pending, exits

    def stmt(self, s: N.Stmt, flow: _Flow, pending: _Pending) -> tuple[_Pending, _Exits]:
        self.steps += 1
        if self.steps > _MAX_STEPS:
            raise _GiveUp
        if self.has_arrays and not isinstance(s, N.While):  # (reads matter for workgroup arrays only)
            for e in N.stmt_exprs(s):
                self.reads(e, flow, pending)
                pending = self.pend_reads(e, flow, pending)
        divergent_exit = flow if (flow.may or flow.must) else None
        if isinstance(s, N.Store):
            self.store(s, flow)
            if self.k.workgroup_array(s.resource) is not None:
                self.ordered_write(s, flow, pending)
                pending = _union(pending, {s.resource: {id(s): (s, flow)}})
            return pending, _Exits()
        if isinstance(s, _SYNC):
            return {}, _Exits()
        if isinstance(s, N.If):
            inner = flow.join(self.cond_flow(s.cond))
            p1, e1 = self.block(s.then_body, inner, pending)
            p2, e2 = self.block(s.else_body, inner, pending)
            return _union(p1, p2), _Exits(e1.brk + e2.brk, e1.cont + e2.cont, _join_opt(e1.diverged, e2.diverged))
        if isinstance(s, (N.While, N.Loop, N.For)):
            key = (id(s), flow, frozenset((arr, i, f) for arr, sites in pending.items()
                                          for i, (_st, f) in sites.items()))
            hit = self.loops.get(key)
            if hit is None:
                after, ex = self.loop(s, flow, pending)
                hit = self.loops[key] = (after, ex.diverged)
            return hit[0], _Exits(diverged=hit[1])
        if isinstance(s, N.Return):
            return {}, _Exits(diverged=divergent_exit)
        if isinstance(s, N.Break):
            return {}, _Exits(brk=[pending], diverged=divergent_exit)
        if isinstance(s, N.Continue):
            return {}, _Exits(cont=[pending], diverged=divergent_exit)
        return pending, _Exits()

    def loop(self, s, flow: _Flow, pending: _Pending) -> tuple[_Pending, _Exits]:
        """Iterates the body until the pending writes at its head and the divergence left
        by its exits stop growing. A divergent `break`/`continue`/`return` inside diverges
        the rest of the body on later iterations and, conservatively, the rest of the kernel."""
        if isinstance(s, N.While):
            head = self.cond_flow(s.cond)
        elif isinstance(s, N.For):
            head = self.cond_flow(s.start).join(self.cond_flow(s.end))
        else:
            head = _Flow(False, False)
        entry = pending
        diverged: Optional[_Flow] = None
        for _ in range(_MAX_LOOP_PASSES):
            here = flow if diverged is None else flow.join(diverged)
            body_entry = entry
            if isinstance(s, N.While):
                cflow = self.at(("cond", id(s)), here)
                self.reads(s.cond, cflow, entry)
                body_entry = self.pend_reads(s.cond, cflow, entry)
            out, ex = self.block(s.body, here.join(head), body_entry)
            new_diverged = _join_opt(diverged, ex.diverged)
            new_entry = _union(pending, out, *ex.cont)
            if _same(new_entry, entry) and new_diverged == diverged:
                break
            entry, diverged = new_entry, new_diverged
        after = _union(*ex.brk) if isinstance(s, N.Loop) else _union(entry, *ex.brk)
        return after, _Exits(diverged=diverged)

    def cond_flow(self, e: N.Expr) -> _Flow:
        return _Flow(self.may.varies(e), self.must.varies(e))

    # -------------------------------------------------------- the lints

    def store(self, s: N.Store, flow: _Flow) -> None:
        p = self.k.param(s.resource)
        if p is None or p.category not in N.WRITABLE_CATEGORIES or not self.recording:
            return
        if flow.may or self.may.varies(s.index):
            return
        if not self.may.varies(s.value):
            return  # every thread writes the same value: whichever write lands, the result is one
        self.uniform_stores.setdefault(id(s), s)

    def reads(self, e: N.Expr, flow: _Flow, pending: _Pending) -> None:
        for sub in N.walk_expr(e):
            if not self.recording or not isinstance(sub, N.Load) or id(sub) in self.unsynced:
                continue
            sites = pending.get(sub.resource)
            if not sites or self.k.workgroup_array(sub.resource) is None:
                continue
            load = self.facts(sub.index)
            for store, wflow in sites.values():
                if self.races(load, flow, self.facts(store.index), wflow):
                    self.unsynced[id(sub)] = (sub, store)
                    break

    def normed(self, e: N.Expr) -> tuple[N.Expr, object]:
        """norm(e) and its key, once per expression."""
        hit = self._normed.get(id(e))
        if hit is None or hit[0] is not e:
            n = self.norm(e)
            hit = self._normed[id(e)] = (e, n, _key(n))
        return hit[1], hit[2]

    def facts(self, index: N.Expr) -> "_Index":
        """What the race shapes ask of an access's index, once per index: every pending
        access is compared with every later one, so each comparison must be cheap."""
        self.pairs += 1
        if self.pairs > _MAX_PAIRS:
            raise _GiveUp
        hit = self._facts.get(id(index))
        if hit is None or hit.expr is not index:
            n, key = self.normed(index)
            hit = self._facts[id(index)] = _Index(
                index, n, key, self.must.varies(index), not self.may.varies(index), self.may.range(index),
                frozenset(lk for lk in self._lane_keys if self.shifted(n, lk)))
        return hit

    def races(self, r: "_Index", rflow: _Flow, w: "_Index", wflow: _Flow) -> bool:
        # 1. lane-indexed write, one element read by every lane
        if w.must_varies and r.uniform and not rflow.may and _overlap(w, r):
            return True
        # 2. the lane's own index shifted by a lane-independent offset
        if w.key in r.shifted_from and _overlap(w, r):
            return True
        # 3. one element written by some lanes only, read by every lane
        return w.uniform and wflow.must and not rflow.may and r.key == w.key

    def shifted(self, e: N.Expr, lane_key) -> bool:
        """Is (normalised) `e` the lane index `lane_key` plus, minus or xor a lane-independent
        offset not known to be 0?"""
        if lane_key not in self._lane_keys or not isinstance(e, N.Binary) or e.op not in ("add", "sub", "bitxor"):
            return False
        for mine, off in ((e.lhs, e.rhs), (e.rhs, e.lhs)) if e.op != "sub" else ((e.lhs, e.rhs),):
            if _key(mine) == lane_key and not self.may.varies(off) and self.may.range(off) != (0, 0):
                return True
        return False

    def pend_reads(self, e: N.Expr, flow: _Flow, pending: _Pending) -> _Pending:
        """`pending` plus the workgroup-array reads of `e` (for G0045)."""
        new: _Pending = {}
        for sub in N.walk_expr(e):
            if isinstance(sub, N.Load) and self.k.workgroup_array(sub.resource) is not None:
                new.setdefault(("read", sub.resource), {})[id(sub)] = (sub, flow)
        return _union(pending, new) if new else pending

    def ordered_write(self, s: N.Store, flow: _Flow, pending: _Pending) -> None:
        """G0045 and G0046 at a store to a workgroup array."""
        if not self.recording:
            return
        w = self.facts(s.index)
        for load, rflow in pending.get(("read", s.resource), {}).values():
            if self.war_races(load, self.facts(load.index), rflow, w, flow):
                self.war.setdefault(id(s), (s, load))
                break
        if not flow.may and w.uniform and self.may.varies(s.value):
            self.waw.setdefault(id(s), (s, None))  # every lane writes one element
            return
        if flow.may:
            return  # the shapes below need every lane to write
        for first, f1 in pending.get(s.resource, {}).values():
            w1 = self.facts(first.index)
            if not f1.may and (w1.key in w.shifted_from or w.key in w1.shifted_from) and _overlap(w1, w):
                self.waw.setdefault(id(s), (s, first))
                break

    def war_races(self, load: N.Load, r: "_Index", rflow: _Flow, w: "_Index", wflow: _Flow) -> bool:
        if rflow.may:
            return False  # shapes below need every lane to read
        # a. one element read by every lane, overwritten at the lane index by every lane
        if r.uniform and w.key in self._lane_keys and not wflow.may and _overlap(w, r):
            return True
        # b. the lane index and the lane index shifted, on every lane
        if not wflow.may and (w.key in r.shifted_from or r.key in w.shifted_from) and _overlap(w, r):
            return True
        # c. one element every lane read, written by some lane at the same (unchanged) index
        return r.uniform and r.key == w.key and not any(isinstance(x, N.Var) and x.name in self.again
                                                        for x in N.walk_expr(r.norm))


    def norm(self, e: N.Expr, depth: int = 0) -> N.Expr:
        """`e` with never-reassigned locals replaced by their values (for comparing indices)."""
        if isinstance(e, N.Var) and e.name in self.defs and depth < _MAX_SUBST_DEPTH:
            return self.norm(self.defs[e.name], depth + 1)
        if isinstance(e, N.Binary):
            return N.Binary(e.ty, e.span, e.op, self.norm(e.lhs, depth), self.norm(e.rhs, depth))
        if isinstance(e, N.Swizzle):
            return N.Swizzle(e.ty, e.span, self.norm(e.value, depth), e.lanes)
        if isinstance(e, N.Cast):
            return N.Cast(e.ty, e.span, self.norm(e.value, depth))
        if isinstance(e, N.Unary):
            return N.Unary(e.ty, e.span, e.op, self.norm(e.operand, depth))
        return e


@dataclass(frozen=True)
class _Index:
    """An access's index as the race shapes see it."""

    expr: N.Expr
    norm: N.Expr  # never-reassigned locals replaced by their values
    key: object  # norm's structural key
    must_varies: bool  # certainly differs between lanes
    uniform: bool  # certainly the same on every lane
    range: Optional[tuple[int, int]]
    shifted_from: frozenset  # the lane-index keys it is a shift of (G0044 shape 2)


def _overlap(a: _Index, b: _Index) -> bool:
    """May the two indices be equal on some lanes (unless their ranges are disjoint)?"""
    if a.range is None or b.range is None:
        return True
    return not (a.range[1] < b.range[0] or b.range[1] < a.range[0])


def _join_opt(a: Optional[_Flow], b: Optional[_Flow]) -> Optional[_Flow]:
    if a is None:
        return b
    return a if b is None else a.join(b)


def _immutable_defs(k: N.Kernel, again: set) -> dict[str, N.Expr]:
    """Locals bound once by a `let` with a value and never assigned again (`again`: the
    kernel's `reassigned_locals`)."""
    return {s.name: s.value for s in N.walk_stmts(k.body)
            if isinstance(s, N.Let) and s.value is not None and not s.mutable and s.name not in again}


def _key(e: N.Expr):
    """A structural key of an expression, ignoring spans and check-site ids."""
    if isinstance(e, N.Const):
        return ("const", e.ty, repr(e.value))
    if isinstance(e, N.Var):
        return ("var", e.name)
    if isinstance(e, N.Builtin):
        return ("builtin", e.name)
    if isinstance(e, N.Load):
        return ("load", e.resource, _key(e.index))
    if isinstance(e, N.Len):
        return ("len", e.resource)
    if isinstance(e, N.Swizzle):
        return ("swizzle", e.lanes, _key(e.value))
    if isinstance(e, N.Field):
        return ("field", e.name, _key(e.value))
    if isinstance(e, N.Unary):
        return ("unary", e.op, e.ty, _key(e.operand))
    if isinstance(e, N.Binary):
        return ("binary", e.op, e.ty, _key(e.lhs), _key(e.rhs))
    if isinstance(e, N.Cast):
        return ("cast", e.ty, _key(e.value))
    if isinstance(e, N.Call):
        return ("call", e.func, e.ty, tuple(_key(a) for a in e.args))
    return (type(e).__name__, e.ty, tuple(_key(c) for c in N.expr_children(e)), id(e))
