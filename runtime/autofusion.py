"""A Scheme's automatic fusion (`scheme.set_automatic_fusion(True)`, or `GOLDY_FUSION=1`
for schemes that never call it).

Once a structure has survived one submit, `AutoFusion` plans maximal runs of adjacent
dispatches that the fusion rules admit (runtime/fusion_rules.py), greedily from the first
node; each run that stopped short is reported with its rejection. The runs compile on a
worker thread while the recorded dispatches keep running; when every compile is done the
next submit switches to the fused list in one step. The recorded graph is never changed:
nodes and `set_node_param` keep addressing it (a changed scalar is copied into the fused
dispatch), recording returns to it, and the fusion of a structure seen before comes back
from the scheme's cache. A region whose compile fails stays unfused and is reported.

A scheme temporary (runtime/temporaries.py) that a region forwards, and that no node
outside the region binds, lives only in registers: the fused dispatch binds no storage
for it (`FusionRegion.elided`).
"""

from __future__ import annotations

import dataclasses
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from goldy_import.errors import GoldyError
from goldy_import.envflag import env_flag
from goldy_import.ir import compose as C

from .backend import Dispatch
from .fusion_rules import FusionError, FusionRejection, Plan, Stage, fused_arguments, plan, prepare_plan

__all__ = ["AutoFusion", "FusionRegion", "StoppedRun", "FusionReport", "fusion_enabled_by_env"]




@dataclass
class FusionRegion:
    """A run of recorded nodes that automatic fusion runs as one dispatch."""

    nodes: tuple[int, ...]
    status: str  # "compiling" | "ready" | "active" | "failed"
    kernel: str = ""  # the fused kernel's name
    forwarded: tuple[str, ...] = ()
    elided: int = 0  # temporaries that live only in registers
    storage: int = 0  # storage buffers the fused dispatch binds
    error: str = ""


@dataclass
class StoppedRun:
    """A run of adjacent nodes that stopped short: `next` could not join `nodes`."""

    nodes: tuple[int, ...]
    next: int
    reason: FusionRejection
    message: str


@dataclass
class FusionReport:
    enabled: bool
    regions: list[FusionRegion] = field(default_factory=list)
    stopped: list[StoppedRun] = field(default_factory=list)

    @property
    def elided(self) -> int:
        return sum(r.elided for r in self.regions)

    def __str__(self) -> str:
        lines = [f"automatic fusion {'on' if self.enabled else 'off'}: {len(self.regions)} region(s), "
                 f"{self.elided} temporar{'y' if self.elided == 1 else 'ies'} elided"]
        for r in self.regions:
            lines.append(f"  nodes {r.nodes[0]}..{r.nodes[-1]}: {r.status} {r.kernel}"
                         + (f" (forwarded {', '.join(r.forwarded)})" if r.forwarded else "")
                         + (f": {r.error}" if r.error else ""))
        for s in self.stopped:
            lines.append(f"  nodes {s.nodes[0]}..{s.nodes[-1]} stopped before node {s.next}: {s.message}")
        return "\n".join(lines)


@dataclass
class _Region:
    nodes: list  # core.Node
    plan: Plan
    report: FusionRegion
    comp: Optional[C.Composition] = None
    prepared: Any = None  # core.PreparedKernel
    entry: Any = None  # a core.Node: the fused dispatch while active
    slots: dict = field(default_factory=dict)  # (node index, parameter) -> fused slot


def fusion_enabled_by_env() -> bool:
    return env_flag("GOLDY_FUSION", False)


class AutoFusion:
    """One scheme's automatic fusion (module docstring)."""

    def __init__(self, scheme: Any):
        self.scheme = scheme
        self.version = -1  # the structure the plan is for
        self.switched = False
        self.regions: list[_Region] = []
        self.by_slot: dict = {}  # (node index, parameter index) -> [(active region, fused slot)]
        self.stopped: list[StoppedRun] = []
        self.active: Optional[list] = None
        self.gen = 0  # bumped when the regions or their fused dispatches change (Scheme._setter_key)
        self.cache: dict[tuple, tuple[C.Composition, Any]] = {}
        self.failed: dict[tuple, str] = {}
        self.worker: Optional[threading.Thread] = None
        self.lock = threading.Lock()

    # -- the submit path

    def entries(self) -> list:
        """What this submit runs: the fused list once it is ready, else the recorded nodes."""
        sch = self.scheme
        if self.version != sch._version:
            self._fall_back()
        elif not self.switched and self.regions and self.worker is None:
            self.switched = True
            self._switch()
        return self.active if self.active is not None else sch.nodes

    def after_submit(self) -> None:
        """A structure that survived a submit gets its plan."""
        if self.version != self.scheme._version:
            self._plan()

    def _fall_back(self) -> None:
        self.gen += 1
        if self.active is not None:
            self.scheme.stats.fusion_fallbacks += 1
        self.active = None
        self.switched = False
        self.regions, self.stopped = [], []
        self.by_slot = {}
        self.version = -1

    def _switch(self) -> None:
        """Every region is compiled (or failed): the fused list, built in one step."""
        self.gen += 1
        by_first, self.by_slot = {}, {}
        for r in self.regions:
            if r.prepared is None:
                continue
            stages = [Stage(n.kernel, list(n.args), n.dispatch.groups, n.keep) for n in r.nodes]
            args, keep = fused_arguments(r.plan, r.comp, stages)
            sch = self.scheme
            d = Dispatch(r.prepared.target_ir, r.prepared.compiled, sch._resolve(args), stages[0].groups,
                         r.report.kernel)
            with sch.device._using() as backend:
                backend.record(d)
            label = "+".join(n.label for n in r.nodes)
            r.entry = type(r.nodes[0])(r.nodes[0].index, label, r.prepared, d, keep, args=args)  # a core.Node
            r.slots = {(n.index, i): r.plan.arg_map[s][i] for s, n in enumerate(r.nodes)
                       for i, p in enumerate(n.kernel.ir.params) if p.category == "scalar"}
            for key, slot in r.slots.items():
                self.by_slot.setdefault(key, []).append((r, slot))
            by_first[r.nodes[0].index] = r
            r.report.status = "active"
            self.scheme.stats.fusion_promotions += 1
        if not by_first:
            return
        out: list = []
        skip = -1
        for n in self.scheme.nodes:
            if n.index <= skip:
                continue
            region = by_first.get(n.index)
            if region is not None:
                assert region.entry is not None
                out.append(region.entry)
                skip = region.nodes[-1].index
            else:
                out.append(n)
        self.active = out

    def scalar_changed(self, node: Any, index: int) -> None:
        """set_node_param on a recorded node: the active fused dispatch follows (found by
        an index: this runs for every changed scalar of every token)."""
        for r, slot in self.by_slot.get((node.index, index), ()):
            if r.entry is not None:
                self.scheme._put(r.entry.dispatch.args, slot, node.args[index])
                self.scheme._put(r.entry.args, slot, node.args[index])
                self.scheme._mark(r.entry.dispatch, slot)

    def sources(self, entry: Any) -> Optional[tuple[tuple[int, ...], list]]:
        """For an active region's fused dispatch: (its nodes, per fused parameter the
        (node index, parameter) that supplies it, None for a length fusion added);
        None for any other entry (runtime/specialization.py specializes regions with it)."""
        for r in self.regions:
            if r.entry is entry:
                out: list = [(r.nodes[s].index, i) for s, i in r.plan.supply]
                for j in r.comp.elided if r.comp is not None else ():
                    out[j] = None
                return r.report.nodes, out
        return None

    # -- planning

    def _plan(self) -> None:
        sch = self.scheme
        self.version = sch._version
        self.regions, self.stopped = self._regions(sch.nodes)
        self.by_slot = {}
        todo = []
        for r in self.regions:
            key = r.plan.key
            if key in self.cache:
                r.comp, r.prepared = self.cache[key]
                self._describe(r)
            elif key in self.failed:
                r.report.status, r.report.error = "failed", self.failed[key]
            else:
                todo.append(r)
        if todo:
            self.worker = threading.Thread(target=self._compile, args=(todo, self.version), daemon=True,
                                           name="goldy-fusion")
            self.worker.start()

    def _compile(self, todo: list[_Region], version: int) -> None:
        for r in todo:
            try:
                comp, prepared = prepare_plan(r.plan, self.scheme.device)
            except GoldyError as e:
                with self.lock:
                    self.failed[r.plan.key] = str(e).splitlines()[0]
                    r.report.status, r.report.error = "failed", self.failed[r.plan.key]
                    self.scheme.stats.fusion_compile_failures += 1
                continue
            with self.lock:
                self.cache[r.plan.key] = (comp, prepared)
                r.comp, r.prepared = comp, prepared
                self._describe(r)
        with self.lock:
            if self.worker is threading.current_thread():
                self.worker = None

    def _describe(self, r: _Region) -> None:
        assert r.comp is not None and r.prepared is not None
        r.report.status = "ready"
        r.report.kernel = r.prepared.name
        r.report.forwarded = tuple(_source_name(r.plan, j) for j in r.comp.forwarded)
        r.report.elided = len(r.comp.elided)
        r.report.storage = sum(p.category not in ("scalar", "uniform") for p in r.comp.kernel.params)

    def _regions(self, nodes: list) -> tuple[list[_Region], list[StoppedRun]]:
        """Maximal runs of adjacent nodes the rules admit, greedily from the first."""
        temps = self.scheme._temporary_users()
        regions: list[_Region] = []
        stopped: list[StoppedRun] = []
        i = 0
        while i < len(nodes):
            j, good, why = i + 1, None, None
            while j < len(nodes):
                try:
                    good = self._plan_of(nodes[i:j + 1], temps)
                except FusionError as e:
                    why = e
                    break
                j += 1
            if good is not None:
                run = nodes[i:j]
                regions.append(_Region(run, good, FusionRegion(tuple(n.index for n in run), "compiling")))
            if why is not None:
                stopped.append(StoppedRun(tuple(n.index for n in nodes[i:j]), nodes[j].index, why.reason,
                                          str(why)))
            i = j
        return regions, stopped

    def _plan_of(self, run: list, temps: dict) -> Plan:
        stages = [Stage(n.kernel, list(n.args), n.dispatch.groups, n.keep) for n in run]
        inside = {n.index for n in run}
        elidable = frozenset(h for h, users in temps.items() if users <= inside)
        return plan(stages, self.scheme.device, forward=True, temporaries=elidable)

    def report(self, enabled: bool) -> FusionReport:
        with self.lock:
            return FusionReport(enabled, [dataclasses.replace(r.report) for r in self.regions], list(self.stopped))

    def wait(self, timeout: Optional[float]) -> bool:
        w = self.worker
        if w is not None:
            w.join(timeout)
        return self.worker is None


def _source_name(p: Plan, j: int) -> str:
    s, i = p.supply[j]
    return p.kernels[s].ir.params[i].name
