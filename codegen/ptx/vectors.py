"""An unrolled trip's loads (ir/unroll.py `trip_of`, issue 18): four elements per
`ld.global.v4` where the trip allows it, all of them in flight together.

Per trip, one test: for each Run (a load site whose U copies read consecutive elements
from copy 0's index on), the first element's address is 16-byte aligned and the last
index is in range without wrapping past 2^32 (dropped where ir/checks.py proved the site
in range). Where every Run passes, its elements are read U / 4 vectors at a time, with no
bounds check: none of them can fail, so the checks left (the trip's other loads) report
the same first failure. Where one fails (a buffer offset or a row length that is not a
multiple of four, the end of a buffer, a wrapping index), a trip of more than SCALAR_TRIP
iterations that ir/unroll.py wrote (`Trip.followed`) leaves its loop before anything of
it ran: the next, shorter trips and the plain loop after them run the same iterations in
order; the smallest trip (and a loop of that shape written by hand) runs its loads one by
one as written. So the scalar form is written once per loop,
not once per trip (ptxas time). Every load's bounds check waits for one branch after the
trip's last load (`leading`): the trip's loads are in flight together instead of every
MAX_PENDING checks ending a basic block.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N
from goldy_import.ir.checks import PROVEN
from goldy_import.ir.unroll import VECTOR, Trip

_PTY = {"f32": "f32", "u32": "u32", "i32": "u32"}
SCALAR_TRIP = 8  # trips of up to this many iterations load one by one where they fail the test


def trip(em, t: Trip, brk: str) -> None:
    """Emit the body of the trip `t` (emitter `em`, codegen/ptx/emitter.py, plain entry);
    `brk`: the label after its loop."""
    b = em.b
    if not t.runs:
        leading(em, t.loads)
        em.block(t.rest)
        return
    fast, bases = "", []
    for r in t.runs:
        em.line_comment(r.lets[0].span)
        res = em.res[r.resource]
        idx = em.reg_of(em.expr(r.index)[0], "r")
        a0 = em.address(res["ptr"], idx, 4)
        ok = em.new("p", "setp.eq.u64 {}, {}, 0;", em.new("rd", "and.b64 {}, {}, 15;", a0))
        if r.check != PROVEN:
            last = em.new("r", f"add.s32 {{}}, {{}}, {t.step - 1};", idx)
            ok = em.pred_and(ok, em.lt_u(last, res["len"]))
            ok = em.pred_and(ok, em.new("p", "setp.ge.u32 {}, {}, {};", last, idx))
        fast = em.pred_and(fast, ok) if fast else ok
        bases.append(a0)
    em.flush_traps()  # nothing is pending (the Runs' indices carry no checks): no branch
    scalar, loaded = b.label("scalar"), b.label("loaded")
    leave = t.followed and t.step > SCALAR_TRIP
    b.op(f"@!{fast} bra {brk if leave else scalar};")
    for r, a0 in zip(t.runs, bases):
        nc = ".nc" if r.resource not in em.written else ""
        ty = _PTY[em.k.param(r.resource).ty]
        for g in range(t.step // VECTOR):
            regs = ", ".join(em.local(x.name)[0] for x in r.lets[g * VECTOR:(g + 1) * VECTOR])
            b.op(f"ld.global{nc}.v{VECTOR}.{ty} {{{regs}}}, [{a0}{f'+{16 * g}' if g else ''}];")
    leading(em, t.others)
    if not leave:
        b.op(f"bra.uni {loaded};")
        b.place(scalar)
        leading(em, t.loads)
        b.place(loaded)
    em.block(t.rest)


def leading(em, lets: list[N.Let]) -> None:
    """The loads one by one, their checks deferred to one branch after the last."""
    saved, em.max_pending = em.max_pending, max(em.max_pending, len(lets))
    for x in lets:
        em.stmt(x)
    em.flush_traps()
    em.max_pending = saved
