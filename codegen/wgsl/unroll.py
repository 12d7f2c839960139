"""An unrolled trip's reads first (issue 18).

ir/unroll.py writes a per-thread loop of loads as trips of Target.unroll iterations (4 on
WGSL) whose loads lead as `let`s (`trip_of`). A checked load's own helper reads before
its check, but the check's branch (recording a failure) still stands between one load
and the next. So before the trip's statements, every leading load's index and raw read
are written, in order, with no branch between them; the lets then only check, in Rust's
order (iteration by iteration, each failure recorded where it was), and take the read
(`_Emitter.x_Load` with `hoisted`). Reads are memory-safe in WGSL (`_Emitter.speculable`)
and nothing in between writes memory, so only when a failure is recorded moves, and
nothing observes that within the thread.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N
from goldy_import.ir.unroll import trip_of

from .parens import _bare


def reads_first(em, s: N.While) -> dict:
    """Write the reads of trip `s`'s loads (when it is one and all may be read ahead) and
    return id(Load) -> (index, read) for `em.hoisted`; else write nothing, return {}."""
    t = trip_of(em.k, s)
    if t is None:
        return {}
    for x in t.loads:
        p = em.param(x.value.resource)
        if (p is None or p.category in N.TENSOR_CATEGORIES or p.category == "image"
                or not em.speculable(x.value.resource, p.ty)):
            return {}
    em.line("// the trip's reads first (codegen/wgsl/unroll.py)")
    got = {}
    for x in t.loads:
        ld = x.value
        n = em.names[ld.resource]
        i, r = em.fresh("i"), em.fresh("r")
        em.line(f"let {i}: {em.ty(ld.index.ty)} = {_bare(em.expr(ld.index))};", ld.span)
        em.line(f"let {r} = {n}[gi_u.gi_off_{n} + {i}];", ld.span)
        got[id(ld)] = (i, r)
    return got
