"""Explicit fusion: `FusedKernel.prepare(device, invocations)` composes invocations into
one dispatch, `fused.record(scheme, label, invocations)` records it as one node.

The rules it checks and what the fused program depends on are runtime/fusion_rules.py;
the composition (each stage run in order on one thread, its own locals and `return`,
arguments that are the same buffer sharing one binding, forwarding at the thread's own
index) is ir/compose.py. Every store still happens, so buffers end as after the unfused
sequence; `prepare_conservative` keeps every load too, for comparison. The fused entry
takes every stage's scalars in order (`scalar_slot`). `id` identifies the shape (the
kernels, the argument map, the workgroup size): FusedKernels with one id share one
compiled program, and one FusedKernel records any invocation sequence of its shape.

Automatic fusion of a Scheme's recorded dispatches is runtime/autofusion.py.
"""

from __future__ import annotations

from typing import Optional, Sequence

from goldy_import.errors import BindingError
from goldy_import.ir import compose as C

from .autofusion import FusionRegion, FusionReport, StoppedRun
from .core import Bound, Device, Invocation, KernelDef, Node, PreparedKernel, Scheme
from .fusion_rules import (FusionError, FusionRejection, Plan, Stage, fused_arguments, plan, prepare_plan,
                           shape_id)

__all__ = ["FusionRejection", "FusionError", "FusedKernel", "FusionRegion", "StoppedRun", "FusionReport"]


def _stages_of(invocations: Sequence[Invocation], device: Device) -> list[Stage]:
    out = []
    for n, inv in enumerate(invocations):
        if not isinstance(inv, Invocation):
            raise BindingError(f"FusedKernel: stage {n} is {type(inv).__name__}, expected an Invocation "
                               f"(kernel.invoke(args...).over_1d(n))")
        if inv.kernel.device is not device:
            raise BindingError(f"FusedKernel: stage {n} (`{inv.kernel.name}`) is for {inv.kernel.device!r}, "
                               f"not {device!r}")
        out.append(Stage(inv.kernel, list(inv.bound.args), inv.groups, list(inv.bound.keep)))
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
        if isinstance(invocations, (str, bytes)) or not hasattr(invocations, "__iter__"):
            raise BindingError(f"FusedKernel.prepare(device, invocations) expects a list of Invocations "
                               f"(kernel.invoke(...).over_1d(n)), got {type(invocations).__name__}")
        stages = _stages_of(list(invocations), device)
        p = plan(stages, device, forward=forward)
        comp, prepared = prepare_plan(p, device)
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
        args, keep = fused_arguments(p, self.composition, stages)
        node = scheme._append(self.prepared, label, Bound(args, keep), stages[0].groups)
        node.fused = self
        return node
