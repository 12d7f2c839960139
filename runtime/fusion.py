"""Fusion: several dispatches as one (explicit `FusedKernel`, and a Scheme's automatic fusion).

`FusedKernel.prepare(device, invocations)` checks that the invocations may share one
dispatch (`FusionRejection` says why not), composes their retained IR definitions into one
kernel (ir/compose.py) and prepares it like any imported kernel (ir/pipeline.py, the
device's compile cache). What the fused program depends on is the *shape* of the
sequence: which kernels, which arguments are the same buffer, the workgroup size and
whether the grid is 1-D (the thread's own index), never the buffers themselves; `id` is
that shape, and one FusedKernel records any invocation sequence of the same shape.

The rules (`plan`), shared by explicit and automatic fusion, in the order they are checked:

- every stage has a retained definition (hand-written Slang has none) and binds no tensor;
- every stage has the same workgroup size and the same grid;
- two different arguments that overlap in memory, one of them written, are refused (the
  same buffer twice is one binding, which keeps a write visible to a later stage);
- a buffer written by one stage and touched by another is accessed only at the thread's
  own index in every stage that touches it (ir/compose.py `cross_thread`);
- the fused entry stays within the device's storage-binding and workgroup-memory limits.

`AutoFusion` is a Scheme's automatic fusion (`scheme.set_automatic_fusion(True)` or
`GOLDY_FUSION=1`): once a structure has survived a submit it plans maximal runs of
adjacent fusable dispatches, compiles them on a worker thread while the recorded
dispatches keep running, and switches the submit list in one step when every compile is
done. The recorded graph is never changed: nodes and `set_node_param` keep addressing
it (a changed scalar is copied into the fused dispatch), and recording returns to it
until the fusion comes back from the scheme's cache.
"""

from __future__ import annotations

import enum
import hashlib
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Optional, Sequence

from goldy_import.errors import BindingError, DeviceLimitError, GoldyError
from goldy_import.ir import abi as A
from goldy_import.ir import compose as C
from goldy_import.ir import nodes as N

from .backend import BufferArg, Dispatch, ImageArg, ScalarArg
from .core import Bound, Device, Invocation, KernelDef, Node, PreparedKernel, Scheme

__all__ = ["FusionRejection", "FusionError", "FusedKernel", "FusionRegion", "StoppedRun", "FusionReport"]


class FusionRejection(enum.Enum):
    """Why invocations cannot share one dispatch (Goldy's list)."""

    NO_DEFINITION = "a stage has no retained definition (hand-written Slang)"
    TENSOR = "a stage binds tensors"
    WORKGROUP_SIZE = "stages differ in workgroup size"
    GRID = "stages differ in grid"
    OVERLAP = "two different arguments overlap in memory and one of them is written"
    CROSS_THREAD = "a buffer written by one stage is touched by another at another index than the thread's own"
    LIMITS = "the fused entry exceeds the device's binding or workgroup-memory limits"


class FusionError(GoldyError):
    """Invocations that the fusion rules refuse; `reason` is the FusionRejection."""

    def __init__(self, reason: FusionRejection, message: str):
        super().__init__(f"cannot fuse: {message}")
        self.reason = reason


# ---------------------------------------------------------------- the plan


@dataclass
class _Stage:
    pk: PreparedKernel
    args: list  # bound arguments in parameter order (temporaries unresolved)
    groups: tuple[int, int, int]
    keep: list


@dataclass(frozen=True)
class Plan:
    """What a fused program depends on, and where each fused argument comes from."""

    kernels: tuple[PreparedKernel, ...]
    arg_map: tuple[tuple[int, ...], ...]  # stage -> parameter -> fused parameter
    supply: tuple[tuple[int, int], ...]  # fused parameter -> (stage, parameter) that binds it
    one_d: bool
    checks: bool
    forward: bool
    elide: frozenset  # fused parameters that may bind no storage (scheme temporaries)

    @property
    def key(self) -> tuple:
        return (tuple((pk.kdef.identity, pk.options) for pk in self.kernels), self.arg_map,
                self.kernels[0].ir.workgroup_size, self.one_d, self.forward, tuple(sorted(self.elide)))


_SUMMARIES: dict[tuple, dict] = {}


def _summary(pk: PreparedKernel, one_d: bool) -> dict[int, C.Access]:
    key = (pk.kdef.identity, one_d)
    s = _SUMMARIES.get(key)
    if s is None:
        s = _SUMMARIES[key] = C.access_summary(pk.ir, one_d)
    return s


def _extent(a: Any, structs: dict) -> tuple[int, int]:
    """Byte range of a bound resource inside its allocation."""
    if isinstance(a, ImageArg):
        return 0, a.width * a.height * A.element_stride(a.elem, structs)
    return a.offset * a.stride, (a.offset + a.length) * a.stride


def _ident(a: Any) -> tuple:
    if isinstance(a, ImageArg):
        return (id(a.handle), "image", a.width, a.height, a.elem)
    return (id(a.handle), a.offset, a.length, a.elem)


def _address(h: Any) -> Optional[int]:
    ptr = getattr(h, "ptr", None)
    return int(ptr) if isinstance(ptr, int) else None


def plan(stages: Sequence[_Stage], device: Device, *, forward: bool = True,
         temporaries: frozenset = frozenset()) -> Plan:
    """Check the fusion rules (module docstring) and map the stages' arguments; raises
    FusionError. `temporaries`: ids of placeholder handles that may be elided."""
    if not stages:
        raise BindingError("FusedKernel.prepare: expected at least one invocation")
    for s, st in enumerate(stages):
        if getattr(st.pk.ir, "slang_source", None):
            raise FusionError(FusionRejection.NO_DEFINITION,
                              f"stage {s} (`{st.pk.name}`) is hand-written Slang with no retained definition")
        t = next((p for p in st.pk.ir.params if p.category in N.TENSOR_CATEGORIES), None)
        if t is not None:
            raise FusionError(FusionRejection.TENSOR, f"stage {s} (`{st.pk.name}`) binds the tensor `{t.name}`")
    first = stages[0]
    for s, st in enumerate(stages[1:], 1):
        if st.pk.ir.workgroup_size != first.pk.ir.workgroup_size:
            raise FusionError(FusionRejection.WORKGROUP_SIZE,
                              f"stage {s} (`{st.pk.name}`) has workgroup size {list(st.pk.ir.workgroup_size)}, "
                              f"stage 0 (`{first.pk.name}`) {list(first.pk.ir.workgroup_size)}")
        if tuple(st.groups) != tuple(first.groups):
            raise FusionError(FusionRejection.GRID, f"stage {s} (`{st.pk.name}`) runs {tuple(st.groups)} workgroups, "
                                                    f"stage 0 (`{first.pk.name}`) {tuple(first.groups)}")
    wg, groups = first.pk.ir.workgroup_size, first.groups
    one_d = wg[1] == wg[2] == 1 and groups[1] == groups[2] == 1
    summaries = [_summary(st.pk, one_d) for st in stages]
    # arguments: the same buffer is one fused parameter; scalars and uniforms one each
    index: dict[tuple, int] = {}
    supply: list[tuple[int, int]] = []
    written: set[int] = set()
    resources: list[tuple[int, Any, N.Kernel]] = []
    arg_map = []
    for s, st in enumerate(stages):
        row = []
        for p, (param, a) in enumerate(zip(st.pk.ir.params, st.args)):
            if param.category in ("scalar", "uniform"):
                row.append(len(supply))
                supply.append((s, p))
                continue
            key = _ident(a)
            j = index.get(key)
            if j is None:
                j = index[key] = len(supply)
                supply.append((s, p))
                resources.append((j, a, st.pk.ir))
            row.append(j)
            acc = summaries[s].get(p)
            if param.category in N.WRITABLE_CATEGORIES and (acc is None or acc.writes) or (acc and acc.writes):
                written.add(j)
        arg_map.append(tuple(row))
    _check_overlap(resources, written, stages, supply)
    why = C.cross_thread(summaries, arg_map, [st.pk.ir for st in stages])
    if why is not None:
        raise FusionError(FusionRejection.CROSS_THREAD, why)
    elide = frozenset(j for j, a, _ in resources if id(a.handle) in temporaries)
    checks = any(st.pk.options.checks for st in stages)
    p = Plan(tuple(st.pk for st in stages), tuple(arg_map), tuple(supply), one_d, checks, forward, elide)
    _check_limits(p, device, len(resources) - len(elide))
    return p


def _check_overlap(resources, written: set, stages, supply) -> None:
    """Different arguments overlapping in memory, one of them written: only arguments of
    one allocation, or external arrays with device addresses, can overlap."""
    groups: dict[Any, list] = {}
    for r in resources:
        h = r[1].handle
        groups.setdefault("external" if _address(h) is not None else id(h), []).append(r)
    for members in groups.values():
        for x in range(len(members)):
            for y in range(x + 1, len(members)):
                (i, a, ka), (j, b, kb) = members[x], members[y]
                if i not in written and j not in written:
                    continue
                (a0, a1) = _extent(a, {d.name: d for d in ka.structs})
                (b0, b1) = _extent(b, {d.name: d for d in kb.structs})
                if a.handle is not b.handle:
                    pa, pb = _address(a.handle), _address(b.handle)
                    assert pa is not None and pb is not None
                    a0, a1, b0, b1 = a0 + pa, a1 + pa, b0 + pb, b1 + pb
                if a0 < b1 and b0 < a1:
                    (sa, ia), (sb, ib) = supply[i], supply[j]
                    na, nb = stages[sa].pk.ir.params[ia].name, stages[sb].pk.ir.params[ib].name
                    raise FusionError(FusionRejection.OVERLAP,
                                      f"`{na}` of stage {sa} (`{stages[sa].pk.name}`) and `{nb}` of stage {sb} "
                                      f"(`{stages[sb].pk.name}`) are different but overlapping ranges of one "
                                      f"buffer (bytes {a0}..{a1} and {b0}..{b1}) and one of them is written")


def _check_limits(p: Plan, device: Device, resources: int) -> None:
    lim = device.backend.limits
    storage = resources + p.checks  # the error word, where checks stay on
    if storage > lim.max_storage_buffers_per_stage:
        raise FusionError(FusionRejection.LIMITS,
                          f"the fused entry would bind {storage} storage buffers"
                          f"{' (one of them the trapping-check error word)' if p.checks else ''}; the "
                          f"{device.backend_name} device allows {lim.max_storage_buffers_per_stage} "
                          f"(max_storage_buffers_per_stage)")
    shared = sum(w.size * 4 for pk in p.kernels for w in pk.ir.workgroup_arrays)
    if shared > lim.max_workgroup_storage_bytes:
        raise FusionError(FusionRejection.LIMITS,
                          f"the stages' workgroup arrays together need {shared} bytes; the {device.backend_name} "
                          f"device allows {lim.max_workgroup_storage_bytes} (max_workgroup_storage_bytes)")


# ---------------------------------------------------------------- composition and compile

_COMPOSED: dict[tuple, tuple[C.Composition, KernelDef]] = {}
_COMPOSED_LOCK = threading.Lock()


def _fused_name(kernels: Sequence[PreparedKernel]) -> str:
    names = [pk.name for pk in kernels]
    shown = names if len(names) <= 4 else names[:4] + [f"and_{len(names) - 4}_more"]
    return "fused_" + "_".join(shown)


def composed(p: Plan) -> tuple[C.Composition, KernelDef]:
    """The composition of a plan's shape, made once per process."""
    key = p.key
    with _COMPOSED_LOCK:
        hit = _COMPOSED.get(key)
    if hit is None:
        stages = [C.StageSpec(pk.ir, row) for pk, row in zip(p.kernels, p.arg_map)]
        comp = C.compose(_fused_name(p.kernels), stages, forward=p.forward, one_d=p.one_d, elide=p.elide)
        hit = (comp, KernelDef(comp.kernel))
        with _COMPOSED_LOCK:
            hit = _COMPOSED.setdefault(key, hit)
    return hit


def shape_id(p: Plan) -> str:
    return hashlib.sha256(repr(p.key).encode()).hexdigest()[:16]


def _prepare(p: Plan, device: Device) -> tuple[C.Composition, PreparedKernel]:
    comp, kdef = composed(p)
    try:
        return comp, kdef.prepare(device, checks=p.checks)
    except DeviceLimitError as e:  # a limit the backend knows better than the plan
        raise FusionError(FusionRejection.LIMITS, str(e)) from None


def fused_arguments(p: Plan, comp: C.Composition, stages: Sequence[_Stage]) -> Bound:
    """The fused dispatch's arguments: each fused parameter from the stage that binds it;
    an elided temporary as its length."""
    args: list = []
    for j, (s, i) in enumerate(p.supply):
        a = stages[s].args[i]
        if j in comp.elided:
            assert isinstance(a, BufferArg)
            a = ScalarArg("u32", a.length)
        args.append(a)
    keep = [b for st in stages for b in st.keep]
    return Bound(args, keep)


def _stages_of(invocations: Sequence[Invocation], device: Device) -> list[_Stage]:
    out = []
    for n, inv in enumerate(invocations):
        if not isinstance(inv, Invocation):
            raise BindingError(f"FusedKernel: stage {n} is {type(inv).__name__}, expected an Invocation "
                               f"(kernel.invoke(args...).over_1d(n))")
        if inv.kernel.device is not device:
            raise BindingError(f"FusedKernel: stage {n} (`{inv.kernel.name}`) is for {inv.kernel.device!r}, "
                               f"not {device!r}")
        out.append(_Stage(inv.kernel, list(inv.bound.args), inv.groups, list(inv.bound.keep)))
    return out


class FusedKernel:
    """Invocations composed into one dispatch (module docstring). Make one with
    `FusedKernel.prepare(device, invocations)` or `prepare_conservative` (every load kept)."""

    def __init__(self, device: Device, p: Plan, comp: C.Composition, prepared: PreparedKernel):
        self.device = device
        self.plan = p
        self.composition = comp
        self.prepared = prepared
        self.id = shape_id(p)
        self.stages = tuple(pk.name for pk in p.kernels)
        params = comp.kernel.params
        self.forwarded = tuple(params[j].name for j in comp.forwarded)
        self._slots = {(s, pk.ir.params[i].name): p.arg_map[s][i]
                       for s, pk in enumerate(p.kernels) for i in range(len(pk.ir.params))
                       if pk.ir.params[i].category == "scalar"}

    @classmethod
    def prepare(cls, device: Device, invocations: Sequence[Invocation]) -> "FusedKernel":
        return cls._make(device, invocations, forward=True)

    @classmethod
    def prepare_conservative(cls, device: Device, invocations: Sequence[Invocation]) -> "FusedKernel":
        """The same composition with every load kept (nothing forwarded), to compare against."""
        return cls._make(device, invocations, forward=False)

    @classmethod
    def _make(cls, device: Device, invocations: Sequence[Invocation], forward: bool) -> "FusedKernel":
        if not isinstance(device, Device):
            raise BindingError(f"FusedKernel.prepare(device, ...) expects a goldy_import.Device, "
                               f"got {type(device).__name__}")
        stages = _stages_of(list(invocations), device)
        p = plan(stages, device, forward=forward)
        comp, prepared = _prepare(p, device)
        return cls(device, p, comp, prepared)

    @property
    def name(self) -> str:
        return self.prepared.name

    @property
    def definition(self) -> KernelDef:
        """The composed kernel's retained definition (its IR)."""
        return self.prepared.kdef

    def __repr__(self) -> str:
        fwd = f", forwarded {', '.join(self.forwarded)}" if self.forwarded else ""
        return f"<FusedKernel {self.id}: {' + '.join(self.stages)} on {self.device.backend_name}{fwd}>"

    def scalar_slot(self, stage: int, name: str) -> Optional[int]:
        """The fused parameter slot of stage `stage`'s scalar `name` (for set_node_param)."""
        return self._slots.get((stage, name))

    def record(self, scheme: Scheme, label: str, invocations: Sequence[Invocation]) -> Node:
        """Record `invocations` (the same shape as at prepare) as one dispatch node."""
        if not isinstance(scheme, Scheme) or scheme.device is not self.device:
            raise BindingError(f"FusedKernel.record: expected a Scheme on {self.device!r}, got {scheme!r}")
        stages = _stages_of(list(invocations), self.device)
        p = plan(stages, self.device, forward=self.plan.forward)
        if p.key != self.plan.key:
            raise BindingError(f"FusedKernel {self.id} ({' + '.join(self.stages)}): these invocations have "
                               f"another shape (kernels, shared arguments or grid) than the ones it was "
                               f"prepared for; prepare a FusedKernel for them")
        node = scheme._append(self.prepared, label, fused_arguments(p, self.composition, stages), stages[0].groups)
        node.fused = self
        return node


# ---------------------------------------------------------------- automatic fusion


@dataclass
class FusionRegion:
    """A run of recorded nodes that automatic fusion runs as one dispatch."""

    nodes: tuple[int, ...]
    status: str  # "compiling" | "ready" | "active" | "failed"
    kernel: str = ""  # the fused kernel's name
    forwarded: tuple[str, ...] = ()
    elided: int = 0  # temporaries that live only in registers
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
    nodes: list[Node]
    plan: Plan
    report: FusionRegion
    comp: Optional[C.Composition] = None
    prepared: Optional[PreparedKernel] = None
    entry: Optional[Node] = None  # the fused dispatch while active
    slots: dict = field(default_factory=dict)  # (node index, parameter) -> fused slot


def fusion_enabled_by_env() -> bool:
    return os.environ.get("GOLDY_FUSION", "0") not in ("0", "", "false", "off")


class AutoFusion:
    """One scheme's automatic fusion (module docstring)."""

    def __init__(self, scheme: Scheme):
        self.scheme = scheme
        self.version = -1  # the structure the plan is for
        self.switched = False
        self.regions: list[_Region] = []
        self.stopped: list[StoppedRun] = []
        self.active: Optional[list[Node]] = None
        self.cache: dict[tuple, tuple[C.Composition, PreparedKernel]] = {}
        self.failed: dict[tuple, str] = {}
        self.worker: Optional[threading.Thread] = None
        self.lock = threading.Lock()

    # -- the submit path

    def entries(self) -> list[Node]:
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
        if self.active is not None:
            self.scheme.stats.fusion_fallbacks += 1
        self.active = None
        self.switched = False
        self.regions, self.stopped = [], []
        self.version = -1

    def _switch(self) -> None:
        """Every region is compiled (or failed): the fused list, built in one step."""
        by_first = {}
        for r in self.regions:
            if r.prepared is None:
                continue
            stages = [_Stage(n.kernel, list(n.args), n.dispatch.groups, n.keep) for n in r.nodes]
            bound = fused_arguments(r.plan, r.comp, stages)
            sch = self.scheme
            d = Dispatch(r.prepared.target_ir, r.prepared.compiled, sch._resolve(bound.args), stages[0].groups,
                         r.report.kernel)
            with sch.device._lock:
                sch.device.backend.record(d)
            label = "+".join(n.label for n in r.nodes)
            r.entry = Node(r.nodes[0].index, label, r.prepared, d, bound.keep, args=bound.args)
            r.slots = {(n.index, i): r.plan.arg_map[s][i] for s, n in enumerate(r.nodes)
                       for i, p in enumerate(n.kernel.ir.params) if p.category == "scalar"}
            by_first[r.nodes[0].index] = r
            r.report.status = "active"
            self.scheme.stats.fusion_promotions += 1
        if not by_first:
            return
        out: list[Node] = []
        skip = -1
        for n in self.scheme.nodes:
            if n.index <= skip:
                continue
            r = by_first.get(n.index)
            if r is not None:
                assert r.entry is not None
                out.append(r.entry)
                skip = r.nodes[-1].index
            else:
                out.append(n)
        self.active = out

    def scalar_changed(self, node: Node, index: int) -> None:
        """set_node_param on a recorded node: the active fused dispatch follows."""
        for r in self.regions:
            slot = r.slots.get((node.index, index))
            if slot is not None and r.entry is not None:
                r.entry.dispatch.args[slot] = node.args[index]
                r.entry.args[slot] = node.args[index]
                with self.scheme.device._lock:
                    self.scheme.device.backend.update_scalar(r.entry.dispatch, slot)

    # -- planning

    def _plan(self) -> None:
        sch = self.scheme
        self.version = sch._version
        self.regions, self.stopped = self._regions(sch.nodes)
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
                comp, prepared = _prepare(r.plan, self.scheme.device)
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

    def _regions(self, nodes: list[Node]) -> tuple[list[_Region], list[StoppedRun]]:
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

    def _plan_of(self, run: list[Node], temps: dict) -> Plan:
        stages = [_Stage(n.kernel, list(n.args), n.dispatch.groups, n.keep) for n in run]
        inside = {n.index for n in run}
        elidable = frozenset(h for h, users in temps.items() if users <= inside)
        return plan(stages, self.scheme.device, forward=True, temporaries=elidable)

    def report(self, enabled: bool) -> FusionReport:
        with self.lock:
            return FusionReport(enabled, [dataclass_copy(r.report) for r in self.regions], list(self.stopped))

    def wait(self, timeout: Optional[float]) -> bool:
        w = self.worker
        if w is not None:
            w.join(timeout)
        return self.worker is None


def _source_name(p: Plan, j: int) -> str:
    s, i = p.supply[j]
    return p.kernels[s].ir.params[i].name


def dataclass_copy(r: FusionRegion) -> FusionRegion:
    return FusionRegion(r.nodes, r.status, r.kernel, r.forwarded, r.elided, r.error)
