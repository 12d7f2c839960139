"""Per-thread accumulation loops, four iterations at a time with their loads first (issue 18).

`for j in a..b { acc = acc + x[base + j * 256]; }` as emitted plainly waits for each load
before the next: one load in flight per thread. When a `for` loop's body is assignments
only and each of its loads (of a plain buffer) is indexed by the loop variable and values
the body does not assign, the WGSL runs it four iterations at a time: the four iterations'
indices and raw reads first, then each iteration's checks (in Rust's order: iteration by
iteration, each load's failure recorded where it was) and assignments; a plain loop runs
the remaining iterations. Reads are memory-safe in WGSL (`_Emitter.speculable`), and the
assignments cannot fault, so only when a failure is recorded moves, and nothing observes
that within the thread. Loads under `&&`, `||` or a select (evaluated conditionally) keep
the plain loop.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N

from .parens import _bare

UNROLL = 4


def _top_loads(e: N.Expr, out: list, conditional: bool = False) -> bool:
    """The loads of `e` not inside another load's index, in evaluation order; False when
    one is evaluated conditionally."""
    if isinstance(e, N.Load):
        out.append(e)
        return not conditional
    cond = conditional or isinstance(e, N.Select) or (isinstance(e, N.Binary) and e.op in ("and", "or"))
    return all(_top_loads(c, out, cond) for c in N.expr_children(e))


def _vars(e: N.Expr) -> set[str]:
    return {x.name for x in N.walk_expr(e) if isinstance(x, N.Var)}


def hoistable_loads(em, s: N.For) -> list | None:
    """The body's loads, in order, when the loop may run four iterations at a time."""
    if s.inclusive or not s.body or not all(isinstance(b, N.Assign) and isinstance(b.target, N.Var) for b in s.body):
        return None
    assigned = {b.target.name for b in s.body}
    loads: list[N.Load] = []
    for b in s.body:
        if not _top_loads(b.value, loads):
            return None
        if any(getattr(x, "check", -1) >= 0 and not isinstance(x, N.Load) for x in N.walk_expr(b.value)):
            return None  # a faulting division would move behind later loads' failures
    for ld in loads:
        p = em.param(ld.resource)
        if (p is None or p.category in N.TENSOR_CATEGORIES or p.category == "image"
                or not em.speculable(ld.resource, p.ty) or _vars(ld.index) & assigned):
            return None
    return loads or None


def unrolled_for(em, s: N.For, loads: list, maybe_done: bool) -> None:
    """Emit `s` (for which `hoistable_loads` answered `loads`) four iterations at a time."""
    v, t = em.names[s.var], s.ty
    em.line("{", s.span)  # the loop variable's scope, as in a `for`
    em.indent += 1
    end = em.fresh("end")
    em.line(f"let {end}: {t} = {_bare(em.expr(s.end))};", s.span)
    em.line(f"var {v}: {t} = {_bare(em.expr(s.start))};", s.span)
    em.line(f"// {UNROLL} iterations at a time, their loads first (codegen/wgsl/unroll.py)")
    em.line("loop {", s.span)
    em.indent += 1
    em.line(f"if (!({v} < {end}) || bitcast<u32>({end} - {v}) < {UNROLL}u) {{ break; }}")
    names, taken = [], []
    saved = em.names[s.var]
    for k in range(UNROLL):  # every iteration's indices and reads
        jk = v if k == 0 else em.fresh("j")
        if k:
            em.line(f"let {jk}: {t} = {v} + {k}{'u' if t == 'u32' else 'i'};")
        em.names[s.var] = jk
        got = {}
        for ld in loads:
            n = em.names[ld.resource]
            i, r = em.fresh("i"), em.fresh("r")
            em.line(f"let {i}: {em.ty(ld.index.ty)} = {_bare(em.expr(ld.index))};", ld.span)
            em.line(f"let {r} = {n}[gi_u.gi_off_{n} + {i}];", ld.span)
            got[id(ld)] = (i, r)
        names.append(jk)
        taken.append(got)
    for k in range(UNROLL):  # then each iteration's checks and assignments, in order
        em.names[s.var], em.hoisted = names[k], taken[k]
        em.block(s.body, s, maybe_done)
    em.names[s.var], em.hoisted = saved, {}
    em.line(f"{v} = {v} + {UNROLL}{'u' if t == 'u32' else 'i'};")
    em.indent -= 1
    em.line("}")
    one = "1u" if t == "u32" else "1i"
    em.line(f"for (; {v} < {end}; {v} = {v} + {one}) {{", s.span)
    em.nested(s.body, s, maybe_done)
    em.line("}")
    em.indent -= 1
    em.line("}")
