"""The racecheck build of the CPU target: the same vectorised function as codegen.cpu's
emitter, plus one call to the dispatch's race tracker (runtime/racecheck.py) before every
memory access, barrier and collective.

Each load, store and atomic of the kernel is an access *site* (`RaceSite`: its kind, its
resource and the Rust span). The call made at a site passes the lanes that really perform
the access (the statement's mask, and for a load the enclosing `&&`/`||` conditions, as
the trapping checks do) and the element index, evaluated once and then reused by the
access itself, so the build computes exactly what the plain one does.

The generated function finds the tracker as `F.race` (runtime.racecheck.RaceFaults) and
opens each chunk with `RC.begin(G)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from goldy_import.ir import nodes as N

from .emitter import CpuKernel, _Emitter, compile_cpu


@dataclass(frozen=True)
class RaceSite:
    """One access site: `kind` is "read", "write" or "atomic" ("write" for a collective's
    stores to its scratch array); `workgroup` says whether `resource` is a workgroup array;
    `lane`, whether the index is the thread's own lane index (`local_id().x` of a 1-D
    workgroup for a workgroup array, `global_id().x` for a buffer, which is one element per
    thread when the dispatch is 1-D too)."""

    kind: str
    resource: str
    span: N.Span
    workgroup: bool
    lane: bool = False


class RaceEmitter(_Emitter):
    one_pass_loops = False  # every access tracked per iteration, with (W, S) lanes
    def __init__(self, k: N.Kernel):
        super().__init__(k)
        self.race_sites: list[RaceSite] = []
        self.stash: dict[int, list[str]] = {}  # index atoms computed for a site, for the access to reuse

    def run(self) -> tuple[str, str]:
        self.emit("RC = F.race")
        self.emit("RC.begin(G)")
        return super().run()

    def expr(self, e: N.Expr) -> list[str]:
        hit = self.stash.pop(id(e), None)
        return hit if hit is not None else super().expr(e)

    def site(self, kind: str, node, resource: str, lane: bool = False) -> int:
        self.race_sites.append(RaceSite(kind, resource, node.span, self.k.workgroup_array(resource) is not None, lane))
        return len(self.race_sites) - 1

    def index_atoms(self, index: N.Expr, lin: Optional[str]) -> list[str]:
        """The index's atoms; unless it is a lane index with a fast path (`lin`), hoisted and
        stashed so that the access evaluates them no second time."""
        if lin is not None:
            return [f"G.{lin}id_x"]
        atoms = [self.hoist(a) for a in self.expr(index)]
        self.stash[id(index)] = atoms
        return atoms

    def track(self, kind: str, node, resource: str, index: N.Expr, guarded: bool) -> None:
        r = self.rnames[resource]
        g = f", ({''.join(x + ', ' for x in self.guards)})" if guarded and self.guards else ""
        wg = self.k.workgroup_array(resource) is not None
        if not wg and self.k.param(resource).category == "image":
            site = self.site(kind, node, resource)
            x, y = self.index_atoms(index, None)
            self.emit(f"RC.img(G, {site}, iw_{r}, ih_{r}, {x}, {y}, {self.M}{g})")
            return
        lane = "l" if wg else "g"
        lin = lane if self.lin_kind(index) == lane else None
        site = self.site(kind, node, resource, self.lin_kind(index) == lane)
        (i,) = self.index_atoms(index, None if kind == "atomic" else lin)
        self.emit(f"RC.acc(G, {site}, {'w_' if wg else 'p_'}{r}, {i}, {self.M}{g})")

    # ------------------------------------------------------------ accesses

    def load(self, e: N.Load, start: int, count: Optional[int]) -> list[str]:
        self.track("read", e, e.resource, e.index, True)
        out = super().load(e, start, count)
        self.stash.pop(id(e.index), None)
        return out

    def s_Store(self, s: N.Store) -> None:
        p = self.k.param(s.resource)
        if p is None or p.category != "image":  # the value before the place, as the access does it
            self.stash[id(s.value)] = [self.hoist(a) for a in self.expr(s.value)]
        self.track("write", s, s.resource, s.index, False)
        super().s_Store(s)
        self.stash.pop(id(s.index), None)
        self.stash.pop(id(s.value), None)

    def s_Atomic(self, s: N.Atomic) -> None:
        self.track("atomic", s, s.resource, s.index, False)
        super().s_Atomic(s)
        self.stash.pop(id(s.index), None)

    # ------------------------------------------------------------ synchronisation

    def s_Barrier(self, s) -> None:
        self.emit(f"RC.barrier(G, {self.M})")

    def s_Reduce(self, s: N.Reduce) -> None:
        # the collective stores scratch[lane] for lanes below n, then synchronises (docs/semantics.md)
        site = self.site("write", s, s.scratch, lane=True)
        self.emit(f"RC.reduce(G, {site}, w_{self.rnames[s.scratch]}, {s.n}, {self.M})")
        super().s_Reduce(s)


def compile_racecheck(kernel: N.Kernel) -> CpuKernel:
    """The racecheck build of `kernel`, compiled and cached like `compile_cpu`'s."""
    return compile_cpu(kernel, RaceEmitter)
