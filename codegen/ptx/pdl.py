"""Programmatic dependent launch (PDL, sm_90 and newer, PTX ISA 7.8).

In a replayed Scheme each dispatch depends on the one before it. With an ordinary graph
edge the next kernel is launched only once the previous one has finished: per dispatch,
the GPU pays the whole launch latency again. With a programmatic edge the next kernel's
blocks may be launched as soon as every block of the previous one has *started*
(`griddepcontrol.launch_dependents`), and each of them waits at `griddepcontrol.wait`
until the previous grid has completed and its memory is visible. Both come first in
every entry, before any memory access, so the overlap is the launch alone and the
ordering is exactly a normal edge's. Without a programmatic edge (an eager launch, an
older driver) the two instructions do nothing.

On the H200, a 100-node Scheme of 1024-element saxpys replays in 0.70 us per dispatch
with programmatic edges against 0.95 us with ordinary ones (benchmarks/RESULTS.md).
"""

from __future__ import annotations

PROLOGUE = ("\tgriddepcontrol.launch_dependents;", "\tgriddepcontrol.wait;")
MARK = "griddepcontrol.wait;"


def supported(sm: int, ptx_version: str) -> bool:
    """Whether an entry for `sm` in PTX ISA `ptx_version` may carry the PDL prologue."""
    major, _, minor = ptx_version.partition(".")
    return sm >= 90 and (int(major), int(minor or 0)) >= (7, 8)


def waits(ptx: str) -> bool:
    """Whether the module's entries wait for their programmatic predecessor (all of a
    module's entries come from one `emit_ptx`, so one does if any does)."""
    return MARK in ptx
