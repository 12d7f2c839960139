"""Kernel composition: several retained kernel definitions as one kernel (fusion).

`compose(name, stages, ...)` takes the stages' IR (never target text) and returns one
`N.Kernel` whose body runs each stage in order on the same thread, the way the unfused
dispatches would have run on the same grid:

- every stage keeps its own locals and workgroup arrays (renamed apart where they clash)
  and its own `return`: in every stage but the last, a `return` sets the stage's flag
  `ret_<k>` and the rest of the stage runs only while it is false (inside a loop it also
  leaves the loop), so later stages still run on that thread;
- `StageSpec.args` maps each stage parameter to a fused parameter: arguments that are the
  same buffer share one (the runtime decides which are, runtime/fusion.py), scalars and
  uniforms each get their own, in stage order;
- forwarding: an element a stage stores at the thread's own index (`global_id().x` on a
  1-D grid) and a later stage reads at that index is kept in a register `fwd_<p>`; the
  read takes it when this thread has stored it (`fwd_<p>_ok`) and loads otherwise. Every
  store still happens, so memory ends as after the unfused stages. An *elided* parameter
  (a scheme temporary only these stages bind) is never stored or loaded: its loads read
  the register and its `.len()` becomes a u32 parameter `<p>_len`.

The result goes through ir/pipeline.py like any imported kernel (checks, legalisation,
every target). `access_summary` and `cross_thread` state the rule that decides whether
stages may be composed at all: a buffer written by one stage and touched by another must
be accessed only at the thread's own index in every stage that touches it.
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from . import nodes as N
from . import types as T
from .info import OwnIndex

__all__ = ["StageSpec", "Access", "Composition", "compose", "access_summary", "cross_thread", "merged_category"]


@dataclass(frozen=True)
class StageSpec:
    kernel: N.Kernel
    args: tuple[int, ...]  # fused parameter index of each of the kernel's parameters


@dataclass(frozen=True)
class Access:
    """How one stage touches one of its resource parameters."""

    loads: bool = False
    writes: bool = False  # stores, atomics, softmax
    atomic: bool = False
    foreign: Optional[N.Span] = None  # an access at another index than the thread's own (first one)


@dataclass
class Composition:
    kernel: N.Kernel
    forwarded: tuple[int, ...]  # fused parameters kept in a register between stages
    elided: tuple[int, ...]  # forwarded parameters that bind no storage (become `<p>_len` scalars)


def _zero(ty: str) -> Union[int, float, bool]:
    return {"f32": 0.0, "bool": False}.get(ty, 0)


# ---------------------------------------------------------------- the thread's own index


def access_summary(k: N.Kernel, one_d: bool) -> dict[int, Access]:
    """Parameter index -> how the kernel touches it, for every buffer and image it uses."""
    own = OwnIndex(k, one_d)
    index = {p.name: i for i, p in enumerate(k.params) if p.category in N.BUFFER_CATEGORIES + ("image",)}
    acc: dict[int, dict] = {}

    def note(res: str, kind: str, at: Optional[N.Expr], span: N.Span) -> None:
        i = index.get(res)
        if i is None:
            return
        a = acc.setdefault(i, {"loads": False, "writes": False, "atomic": False, "foreign": None})
        a["loads" if kind == "load" else "writes"] = True
        a["atomic"] = a["atomic"] or kind == "atomic"
        if a["foreign"] is None and (at is None or not own(at)):
            a["foreign"] = span

    for s in N.walk_stmts(k.body):
        for e in N.stmt_exprs(s):
            for x in N.walk_expr(e):
                if isinstance(x, N.Load):
                    note(x.resource, "load", x.index, x.span)
        if isinstance(s, N.Store):
            note(s.resource, "store", s.index, s.span)
        elif isinstance(s, N.AtomicAdd):
            note(s.resource, "atomic", s.index, s.span)
        elif isinstance(s, N.Softmax):  # lanes cover a row: never one element per thread
            note(s.resource, "load", None, s.span)
            note(s.resource, "store", None, s.span)
    return {i: Access(**a) for i, a in acc.items()}


def cross_thread(summaries: Sequence[dict[int, Access]], args: Sequence[Sequence[int]],
                 kernels: Sequence[N.Kernel]) -> Optional[str]:
    """Why the stages cannot share a dispatch (None: they can): a fused buffer that one
    stage writes and another touches, accessed somewhere at another index than the
    thread's own, so one thread would need another thread's element from an earlier stage."""
    touch: dict[int, list[tuple[int, int, Access]]] = {}
    for s, summary in enumerate(summaries):
        for p, a in summary.items():
            touch.setdefault(args[s][p], []).append((s, p, a))
    for uses in touch.values():
        stages = {s for s, _, _ in uses}
        if len(stages) < 2 or not any(a.writes for _, _, a in uses):
            continue
        for s, p, a in uses:
            if a.foreign is not None:
                k = kernels[s]
                w = next((kernels[t].name for t, _, b in uses if b.writes and t != s), None)
                other = f"written by stage {next(t for t, _, b in uses if b.writes)}" if w is None else f"written by `{w}`"
                return (f"stage {s} (`{k.name}`) accesses `{k.params[p].name}` at {k.source_file}:"
                        f"{a.foreign.line}:{a.foreign.col}, not at the thread's own index (`global_id().x` on a "
                        f"1-D grid), and the buffer is shared with another stage ({other})")
    return None


def merged_category(categories: Sequence[str]) -> str:
    """The category of one fused parameter bound by several stage parameters."""
    cats = set(categories)
    if cats == {"image"}:
        return "image"
    if len(cats) == 1:
        return next(iter(cats))
    if cats & set(N.WRITABLE_CATEGORIES):
        return "read_write" if cats - {"write"} else "write"
    return "read"


# ---------------------------------------------------------------- renaming


class _Names:
    """Fresh names in the fused kernel: a name keeps its spelling while it is free."""

    def __init__(self) -> None:
        self.taken: set[str] = set()

    def fresh(self, name: str, stage: int) -> str:
        out, j = name, 0
        if out in self.taken:
            out = f"{name}_s{stage}"
        while out in self.taken:
            j += 1
            out = f"{name}_s{stage}_{j}"
        self.taken.add(out)
        return out


_RESOURCE_FIELDS = {N.Load: ("resource",), N.Len: ("resource",), N.TensorDim: ("resource",),
                    N.TensorRank: ("resource",), N.ImageSize: ("resource",), N.Store: ("resource",),
                    N.AtomicAdd: ("resource", "target"), N.Softmax: ("resource", "scratch"),
                    N.Reduce: ("target", "scratch"), N.Var: ("name",), N.Let: ("name",), N.For: ("var",)}


def _rename(node, names: dict[str, str], types: dict[str, str]) -> None:
    """Rename identifiers and struct types in place throughout an IR subtree."""
    if isinstance(node, list):
        for x in node:
            _rename(x, names, types)
        return
    if not dataclasses.is_dataclass(node) or isinstance(node, N.Span):
        return
    for name in _RESOURCE_FIELDS.get(type(node), ()):
        v = getattr(node, name)
        if v is not None and v in names:
            setattr(node, name, names[v])
    if types and hasattr(node, "ty") and node.ty in types:
        node.ty = types[node.ty]
    for f in dataclasses.fields(node):
        v = getattr(node, f.name)
        if isinstance(v, (list, N.Expr, N.Stmt)):
            _rename(v, names, types)


# ---------------------------------------------------------------- returns per stage


def _strip_returns(body: list[N.Stmt], flag: str, in_loop: bool, span: N.Span) -> tuple[list[N.Stmt], bool]:
    """`body` with each `return` turned into `flag = true` (and `break` inside a loop);
    statements after one that may have returned run under `if !flag`. Returns the new
    body and whether it may set the flag."""
    out: list[N.Stmt] = []
    may = False
    for at, s in enumerate(body):
        if isinstance(s, N.Return):
            out.append(N.Assign(s.span, N.Var("bool", s.span, flag), N.Const("bool", s.span, True)))
            if in_loop:
                out.append(N.Break(s.span))
            return out, True  # the rest of the block is unreachable
        ret = False
        if isinstance(s, N.If):
            s.then_body, r1 = _strip_returns(s.then_body, flag, in_loop, span)
            s.else_body, r2 = _strip_returns(s.else_body, flag, in_loop, span)
            ret = r1 or r2
        elif isinstance(s, (N.While, N.Loop, N.For)):
            s.body, ret = _strip_returns(s.body, flag, True, span)
        out.append(s)
        if not ret:
            continue
        may = True
        if in_loop:
            if isinstance(s, (N.While, N.Loop, N.For)):  # the inner loop only left itself
                out.append(N.If(s.span, N.Var("bool", s.span, flag), [N.Break(s.span)], []))
            continue  # otherwise the branch that returned already left this loop
        rest, _ = _strip_returns(body[at + 1:], flag, False, span)
        if rest:
            out.append(N.If(s.span, N.Unary("bool", s.span, "not", N.Var("bool", s.span, flag)), rest, []))
        return out, True
    return out, may


# ---------------------------------------------------------------- forwarding


class _Forward:
    """Rewrites the fused body so forwarded elements live in registers (module docstring)."""

    def __init__(self, k: N.Kernel, forwarded: dict[str, str], elided: dict[str, str], own: OwnIndex):
        self.k = k
        self.fwd = forwarded  # resource -> element type
        self.elided = elided  # resource -> name of its `_len` parameter
        self.own = own
        self.names = _Names()
        self.names.taken = {p.name for p in k.params} | {w.name for w in k.workgroup_arrays} | set(k.locals)
        self.reg: dict[str, tuple[str, str]] = {}  # resource -> (value register, stored flag)

    def local(self, stem: str, ty: str) -> str:
        name = self.names.fresh(stem, 0)
        self.k.locals[name] = ty
        return name

    def prologue(self, span: N.Span) -> list[N.Stmt]:
        out: list[N.Stmt] = []
        for res, ty in self.fwd.items():
            v = self.local(f"fwd_{res}", ty)
            ok = self.local(f"fwd_{res}_ok", "bool")
            self.reg[res] = (v, ok)
            out.append(N.Let(span, v, ty, N.Const(ty, span, _zero(ty)), True))
            if res not in self.elided:
                out.append(N.Let(span, ok, "bool", N.Const("bool", span, False), True))
            else:
                del self.k.locals[ok]
        return out

    def forwarded_load(self, e: N.Expr) -> bool:
        return isinstance(e, N.Load) and e.resource in self.fwd and self.own(e.index)

    def replace(self, e: N.Expr, hoist: dict, conditional: bool) -> N.Expr:
        """`e` with forwarded loads replaced: by the register for elided resources (any
        position), by a hoisted local for the others (only where the expression is always
        evaluated, so hoisting adds no access; elsewhere the load stays, which is correct
        too because the store happened)."""
        if self.forwarded_load(e):
            assert isinstance(e, N.Load)
            if e.resource in self.elided:
                return N.Var(e.ty, e.span, self.reg[e.resource][0])
            if not conditional:
                if e.resource not in hoist:
                    hoist[e.resource] = (self.local(f"ld_{e.resource}", e.ty), e.index)
                return N.Var(e.ty, e.span, hoist[e.resource][0])
            return e
        if isinstance(e, N.Len) and e.resource in self.elided:
            return N.Var("u32", e.span, self.elided[e.resource])
        for f in dataclasses.fields(e):
            v = getattr(e, f.name)
            if isinstance(v, N.Expr):
                cond = conditional or (isinstance(e, N.Binary) and e.op in N.LOGICAL and f.name == "rhs") \
                    or (isinstance(e, N.Select) and f.name != "cond")
                setattr(e, f.name, self.replace(v, hoist, cond))
            elif isinstance(v, list) and v and isinstance(v[0], N.Expr):
                setattr(e, f.name, [self.replace(x, hoist, conditional) for x in v])
        return e

    def block(self, body: list[N.Stmt]) -> list[N.Stmt]:
        out: list[N.Stmt] = []
        for s in body:
            hoist: dict[str, tuple[str, N.Expr]] = {}
            for f in dataclasses.fields(s):
                v = getattr(s, f.name)
                if isinstance(v, N.Expr) and not (isinstance(s, N.Assign) and f.name == "target"):
                    # a while condition runs again after the body: keep its loads
                    setattr(s, f.name, self.replace(v, {} if isinstance(s, N.While) else hoist,
                                                    isinstance(s, N.While)))
            for res, (name, index) in hoist.items():
                v, ok = self.reg[res]
                load = N.Load(self.fwd[res], s.span, res, index)
                out.append(N.Let(s.span, name, self.fwd[res], None, True))
                out.append(N.If(s.span, N.Var("bool", s.span, ok),
                                [N.Assign(s.span, N.Var(self.fwd[res], s.span, name), N.Var(self.fwd[res], s.span, v))],
                                [N.Assign(s.span, N.Var(self.fwd[res], s.span, name), load)]))
            for child in N.child_bodies(s):
                child[:] = self.block(child)
            if isinstance(s, N.Store) and s.resource in self.fwd:
                v, ok = self.reg[s.resource]
                ty = self.fwd[s.resource]
                out.append(N.Assign(s.span, N.Var(ty, s.span, v), s.value))
                if s.resource in self.elided:
                    continue  # lives only in the register
                out.append(N.Assign(s.span, N.Var("bool", s.span, ok), N.Const("bool", s.span, True)))
                s.value = N.Var(ty, s.span, v)
            out.append(s)
        return out


# ---------------------------------------------------------------- compose


def compose(name: str, stages: Sequence[StageSpec], *, forward: bool = True, one_d: bool = True,
            elide: frozenset = frozenset()) -> Composition:
    """One kernel running `stages` in order (module docstring). The caller has checked
    `cross_thread` and that the stages share a workgroup size and bind no tensors.
    `elide`: fused parameter indices (scheme temporaries bound only by these stages) that
    bind no storage when they are forwarded."""
    assert stages, "compose needs at least one stage"
    wg = stages[0].kernel.workgroup_size
    n_params = 1 + max((i for st in stages for i in st.args), default=-1)
    names = _Names()
    sources: list[list[tuple[int, N.Param]]] = [[] for _ in range(n_params)]
    for s, st in enumerate(stages):
        for p, i in zip(st.kernel.params, st.args):
            sources[i].append((s, p))
    # fused parameters, named after their first stage parameter
    params: list[N.Param] = []
    for i, src in enumerate(sources):
        s, p = src[0]
        cat = p.category if p.category in ("scalar", "uniform") else merged_category([q.category for _, q in src])
        params.append(N.Param(names.fresh(p.name, s), cat, p.ty, p.span, None))
    structs: dict[str, N.StructDecl] = {}
    wg_arrays: list[N.WorkgroupArray] = []
    locals_: dict[str, str] = {}
    builtins: set[str] = set()
    body: list[N.Stmt] = []
    summaries = []
    retyped: list[dict[str, str]] = []
    for s, st in enumerate(stages):
        k = copy.deepcopy(st.kernel)
        types: dict[str, str] = {}
        for d in k.structs:
            have = structs.get(d.name)
            if have is None or _same_struct(have, d):
                structs.setdefault(d.name, d)
                continue
            new = names.fresh(d.name, s)
            types[T.struct(d.name)] = T.struct(new)
            structs[new] = dataclasses.replace(d, name=new)
        ren = {p.name: params[i].name for p, i in zip(k.params, st.args)}
        for w in k.workgroup_arrays:
            ren[w.name] = names.fresh(w.name, s)
            wg_arrays.append(dataclasses.replace(w, name=ren[w.name]))
        for local in k.locals:
            ren[local] = names.fresh(local, s)
        _rename(k.body, ren, types)
        for local, ty in k.locals.items():
            locals_[ren[local]] = types.get(ty, ty)
        if s < len(stages) - 1 and any(isinstance(x, N.Return) for x in N.walk_stmts(k.body)):
            flag = names.fresh(f"ret_{s}", s)
            locals_[flag] = "bool"
            stripped, _ = _strip_returns(k.body, flag, False, k.span)
            k.body = [N.Let(k.span, flag, "bool", N.Const("bool", k.span, False), True)] + stripped
        body += k.body
        builtins |= set(k.builtins)
        summaries.append(access_summary(st.kernel, one_d))
        retyped.append(types)
    for i, src in enumerate(sources):  # a struct renamed apart: the fused parameter's type follows
        params[i].ty = retyped[src[0][0]].get(params[i].ty, params[i].ty)
    files = list(dict.fromkeys(st.kernel.source_file for st in stages))
    fused = N.Kernel(name=name, workgroup_size=wg, params=params, workgroup_arrays=wg_arrays,
                     structs=list(structs.values()), body=body, builtins=[b for b in N.BUILTINS if b in builtins],
                     source_file="+".join(files), doc=f"{name}: " + ", ".join(st.kernel.name for st in stages),
                     span=_span(stages), locals=locals_, source_lines=_lines(stages) if len(files) == 1 else [])
    forwarded = _forwarded(summaries, [st.args for st in stages], params) if forward else ()
    fwd = {params[i].name: params[i].ty for i in forwarded}
    dropped = tuple(i for i in forwarded if i in elide)
    gone = {params[i].name: names.fresh(f"{params[i].name}_len", 0) for i in dropped}
    if fwd:
        own = OwnIndex(fused, one_d)
        fw = _Forward(fused, fwd, gone, own)
        fw.names.taken |= names.taken
        pro = fw.prologue(fused.span)
        fused.body = pro + fw.block(fused.body)
    for i in dropped:
        p = params[i]
        params[i] = N.Param(gone[p.name], "scalar", "u32", p.span, None)
    return Composition(fused, tuple(forwarded), dropped)


def _forwarded(summaries, args, params: list[N.Param]) -> tuple[int, ...]:
    """Fused buffers some stage stores and a later stage (or the same one, later) reads,
    touched only at the thread's own index, of a scalar element type, without atomics."""
    first_write: dict[int, int] = {}
    read_after: set[int] = set()
    bad: set[int] = set()
    stages_of: dict[int, set[int]] = {}
    for s, summary in enumerate(summaries):
        for p, a in summary.items():
            i = args[s][p]
            stages_of.setdefault(i, set()).add(s)
            if a.foreign is not None or a.atomic:
                bad.add(i)
            if a.loads and i in first_write and first_write[i] < s:
                read_after.add(i)
            if a.writes:
                first_write.setdefault(i, s)
    return tuple(sorted(i for i in read_after - bad
                        if params[i].category in N.BUFFER_CATEGORIES and T.is_scalar(params[i].ty)))


def _same_struct(a: N.StructDecl, b: N.StructDecl) -> bool:
    return [(f.name, f.ty) for f in a.fields] == [(f.name, f.ty) for f in b.fields]


def _span(stages: Sequence[StageSpec]) -> N.Span:
    spans = [st.kernel.span for st in stages]
    lo = min(spans, key=lambda s: s.start)
    hi = max(spans, key=lambda s: s.end)
    return N.Span(lo.start, hi.end, lo.line, lo.col, hi.end_line, hi.end_col)


def _lines(stages: Sequence[StageSpec]) -> list[str]:
    """The Rust text of the fused span's lines, from what each stage carries."""
    span = _span(stages)
    out = [""] * (span.end_line - span.line + 1)
    for st in stages:
        k = st.kernel
        for j, text in enumerate(k.source_lines):
            at = k.span.line + j - span.line
            if 0 <= at < len(out):
                out[at] = text
    return out
