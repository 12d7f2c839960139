"""The fusion rules and the composed program of a fused dispatch, shared by explicit
fusion (runtime/fusion.py, `FusedKernel`) and a Scheme's automatic fusion
(runtime/autofusion.py).

`plan(stages, device)` checks the rules, in this order, and maps the stages' arguments
onto the fused parameters; a refusal is a `FusionError` carrying a `FusionRejection`:

- every stage has a retained definition (hand-written Slang has none) and binds no tensor;
- every stage has the same workgroup size and the same grid;
- two different arguments that overlap in memory, one of them written, are refused (the
  same buffer twice is one binding, which keeps a write visible to a later stage);
- a buffer written by one stage and touched by another is accessed only at the thread's
  own index in every stage that touches it (ir/compose.py `cross_thread`);
- the fused entry stays within the device's storage-binding and workgroup-memory limits.

What the fused program depends on is the plan's `key`: the kernels and their options,
which arguments are the same buffer (the argument map), the workgroup size, whether the
grid is 1-D (what makes `global_id().x` the thread's own index), forwarding on or off
and which temporaries are elided; never the buffers themselves. `composed(plan)` makes
the composition of a key once per process (ir/compose.py), so two fused kernels of one
shape share one definition and, through the device's cache, one compiled program.
"""

from __future__ import annotations

import enum
import hashlib
import threading
from dataclasses import dataclass
from typing import Any, Optional, Sequence

from goldy_import.errors import BindingError, DeviceLimitError, GoldyError
from goldy_import.ir import abi as A
from goldy_import.ir import compose as C
from goldy_import.ir import nodes as N

from .backend import BufferArg, ImageArg, ScalarArg

__all__ = ["FusionRejection", "FusionError", "Stage", "Plan", "plan", "composed", "prepare_plan", "fused_arguments",
           "shape_id"]


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
class Stage:
    pk: Any  # a core.PreparedKernel
    args: list  # bound arguments in parameter order (temporaries unresolved)
    groups: tuple[int, int, int]
    keep: list


@dataclass(frozen=True)
class Plan:
    """What a fused program depends on, and where each fused argument comes from."""

    kernels: tuple  # core.PreparedKernel per stage
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


def _summary(pk: Any, one_d: bool) -> dict[int, C.Access]:
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


def plan(stages: Sequence[Stage], device: Any, *, forward: bool = True,
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
            acc = summaries[s].get(p)  # None: the kernel never touches it
            if acc.writes if acc is not None else param.category in N.WRITABLE_CATEGORIES:
                written.add(j)
        arg_map.append(tuple(row))
    _check_overlap(resources, written, stages, supply)
    why = C.cross_thread(summaries, arg_map, [st.pk.ir for st in stages])
    if why is not None:
        raise FusionError(FusionRejection.CROSS_THREAD, why)
    elide = frozenset(j for j, a, _ in resources if id(a.handle) in temporaries)
    checks = any(st.pk.options.checks for st in stages)
    result = Plan(tuple(st.pk for st in stages), tuple(arg_map), tuple(supply), one_d, checks, forward, elide)
    _check_limits(result, device, len(resources) - len(elide))
    return result


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


def _check_limits(p: Plan, device: Any, resources: int) -> None:
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

_COMPOSED: dict[tuple, tuple[C.Composition, Any]] = {}
_COMPOSED_LOCK = threading.Lock()


def _fused_name(kernels: Sequence[Any]) -> str:
    names = [pk.name for pk in kernels]
    shown = names if len(names) <= 4 else names[:4] + [f"and_{len(names) - 4}_more"]
    return "fused_" + "_".join(shown)


def composed(p: Plan) -> tuple[C.Composition, Any]:
    """The composition of a plan's shape and its kernel definition, made once per process."""
    key = p.key
    with _COMPOSED_LOCK:
        hit = _COMPOSED.get(key)
    if hit is None:
        stages = [C.StageSpec(pk.ir, row) for pk, row in zip(p.kernels, p.arg_map)]
        comp = C.compose(_fused_name(p.kernels), stages, forward=p.forward, one_d=p.one_d, elide=p.elide)
        hit = (comp, type(p.kernels[0].kdef)(comp.kernel))  # a core.KernelDef, like the stages''
        with _COMPOSED_LOCK:
            hit = _COMPOSED.setdefault(key, hit)
    return hit


def shape_id(p: Plan) -> str:
    return hashlib.sha256(repr(p.key).encode()).hexdigest()[:16]


def prepare_plan(p: Plan, device: Any) -> tuple[C.Composition, Any]:
    """The composition and its prepared kernel on `device` (the device's compile cache)."""
    comp, kdef = composed(p)
    try:
        return comp, kdef.prepare(device, checks=p.checks)
    except DeviceLimitError as e:  # a limit the backend knows better than the plan
        raise FusionError(FusionRejection.LIMITS, str(e)) from None


def fused_arguments(p: Plan, comp: C.Composition, stages: Sequence[Stage]) -> tuple[list, list]:
    """The fused dispatch's arguments: each fused parameter from the stage that binds it;
    an elided temporary as its length. Returns (arguments, objects to keep alive)."""
    args: list = []
    for j, (s, i) in enumerate(p.supply):
        a = stages[s].args[i]
        if j in comp.elided:
            assert isinstance(a, BufferArg)
            a = ScalarArg("u32", a.length)
        args.append(a)
    keep = [b for st in stages for b in st.keep]
    return args, keep
