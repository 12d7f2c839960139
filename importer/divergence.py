"""G0042: a barrier or collective in control flow that depends on the thread.

The analysis is `ir.uniformity` in its "must" mode: it reports only what the dialect
defines as thread-dependent (docs/semantics.md, "Divergent barriers"), never a point it is
unsure about. This module turns its findings into diagnostics with the reason as a
secondary label.
"""

from __future__ import annotations

from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir.uniformity import Finding, Uniformity, divergent_sync_points

from goldy_import.ir.diagnostics import Diagnostic, Label

CODE = "G0042"

_WHY = {
    "branch": "this condition depends on the thread",
    "loop": "the number of iterations depends on the thread",
    "return": "some threads may return here",
    "break": "some threads may leave the loop here",
    "continue": "some threads may skip the rest of the iteration here",
}

_HELP = {
    "branch": "move it out of the `if` so that every thread reaches it; keep only the memory accesses "
              "inside the `if`",
    "loop": "give the loop the same trip count on every thread (from constants, scalars, lengths or "
            "`workgroup_id()`) and guard the work inside it",
    "return": "instead of returning early, put the work after the check inside an `if` and leave the "
              "barrier outside it",
    "break": "leave the loop on every thread together: guard the work inside the loop instead of "
             "breaking out of it",
    "continue": "guard the rest of the iteration with an `if` instead of `continue`, and keep the "
                "barrier outside it",
}


def _what(s: N.Stmt) -> str:
    if isinstance(s, N.Reduce):
        return f"workgroup_{s.op}"
    if isinstance(s, N.Softmax):
        return "workgroup_softmax_in_place"
    return "workgroup_barrier"


def diagnostic(f: Finding, filename: str) -> Diagnostic:
    what = _what(f.stmt)
    help = [_HELP[f.reason.kind]]
    if not isinstance(f.stmt, N.Barrier):
        help.append("threads with nothing to contribute still call it, with a neutral value "
                    "(0 for a sum, `f32::NEG_INFINITY` or the type's minimum for a max)"
                    if isinstance(f.stmt, N.Reduce) else
                    "threads past the row still call it: lanes at or past `count` contribute nothing")
    return Diagnostic(CODE, f"`{what}` in control flow that depends on the thread", filename,
                      [Label(f.stmt.span, "every thread of the workgroup must reach this"),
                       Label(f.reason.span, _WHY[f.reason.kind], primary=False)],
                      help,
                      ["barriers and collectives synchronise the whole workgroup; if some threads "
                       "skip one, the kernel may hang or compute garbage"])


def divergence_diagnostics(kernel: N.Kernel, filename: str, must: Optional[Uniformity] = None) -> list[Diagnostic]:
    """`must`: the kernel's "must" analysis, where the caller has it (the race lints share it)."""
    found = divergent_sync_points(kernel) if must is None else must.findings
    return [diagnostic(f, filename) for f in found]
