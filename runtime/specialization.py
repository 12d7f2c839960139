"""A Scheme's specialization: run-time facts baked into variants (ir/specialize.py).

What is baked into a node's variant (its "facts"):
- every `#[fact]` scalar parameter (a value fixed when the op is recorded; set_node_param
  refuses it), in every mode but off;
- with specialization on, also every other scalar not changed with `set_node_param` since
  recording, and the layout (rank, extents, element count) of every tensor view it binds.

Modes: `scheme.set_specialization(True | False)`, else `$GOLDY_SPECIALIZE`: `1` on, `0` off,
unset: facts only (no kernel without `#[fact]` is ever recompiled unasked: a variant costs a
compile per distinct set of values, which only repays itself for a scheme replayed often).

At a node's first submit with facts the variant compiles on a worker thread while the
universal program keeps running; a later submit switches the node to it once its compile is
done (`scheme.wait_for_specialization()` waits). `set_node_param` on a baked scalar demotes
the node to the universal program at once (that submit already runs it with the new value)
and the scalar stays a run-time value for that node (a later submit may compile a variant of
the facts left). Variants live in a small per-device LRU keyed by (kernel, options, facts),
so schemes and re-recordings share them. Automatic fusion composes with it: a fused region
runs the fused program unspecialized; only dispatches that run as recorded are specialized.
"""

from __future__ import annotations

import os
import queue
import struct
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Optional

from goldy_import.errors import GoldyError
from goldy_import.ir.specialize import bakeable, specialize

from .backend import Dispatch, ScalarArg, TensorArg

__all__ = ["Specializer", "SpecializationReport", "NodeSpecialization", "VariantCache", "specialization_mode",
           "VARIANT_CACHE_SIZE"]

VARIANT_CACHE_SIZE = 32  # variants kept per device


def specialization_mode(setting: Optional[str]) -> str:
    """"on" | "facts" | "off": the scheme's setting, else $GOLDY_SPECIALIZE (module docstring)."""
    if setting is not None:
        return setting
    env = os.environ.get("GOLDY_SPECIALIZE", "").strip().lower()
    if env == "":
        return "facts"
    return "off" if env in ("0", "false", "off") else "on"


class VariantCache:
    """One device's compiled variants, least recently used first out."""

    def __init__(self, device: Any, size: int = VARIANT_CACHE_SIZE):
        self.device, self.size = device, size
        self.entries: OrderedDict = OrderedDict()
        self.lock = threading.Lock()

    @classmethod
    def of(cls, device: Any) -> "VariantCache":
        with device._lock:
            if device._variants is None:
                device._variants = cls(device)
            return device._variants

    def get(self, key: tuple) -> Any:
        with self.lock:
            pk = self.entries.get(key)
            if pk is not None:
                self.entries.move_to_end(key)
            return pk

    def put(self, key: tuple, pk: Any) -> None:
        with self.lock:
            self.entries[key] = pk
            while len(self.entries) > self.size:
                _, old = self.entries.popitem(last=False)
                with self.device._lock:  # the device's compile cache holds it too
                    self.device._kernel_cache.pop((old.kdef.identity, old.options), None)


@dataclass
class NodeSpecialization:
    node: int
    label: str
    kernel: str
    status: str  # "universal" | "compiling" | "active" | "failed"
    baked: tuple[str, ...] = ()  # parameter names whose values (or shapes) are baked
    dynamic: tuple[str, ...] = ()  # scalars changed with set_node_param: run-time values
    error: str = ""


@dataclass
class SpecializationReport:
    mode: str
    nodes: list[NodeSpecialization] = field(default_factory=list)

    def __str__(self) -> str:
        active = sum(n.status == "active" for n in self.nodes)
        lines = [f"specialization {self.mode}: {active} of {len(self.nodes)} node(s) run a variant"]
        for n in self.nodes:
            lines.append(f"  node {n.node} {n.label!r} ({n.kernel}): {n.status}"
                         + (f", baked {', '.join(n.baked)}" if n.baked else "")
                         + (f", run-time {', '.join(n.dynamic)}" if n.dynamic else "")
                         + (f": {n.error}" if n.error else ""))
        return "\n".join(lines)


def _value_key(a: ScalarArg) -> Any:
    return struct.pack("<f", a.value) if a.ty == "f32" else a.value  # -0.0 and 0.0 differ


class Specializer:
    """One scheme's specialization (module docstring)."""

    def __init__(self, scheme: Any):
        self.scheme = scheme
        self.cache = VariantCache.of(scheme.device)
        self.version = -1
        self.mode = ""
        self.plans: dict[int, tuple] = {}  # node index -> (key, scalars, tensors), until its args change
        self.active: dict[int, tuple[tuple, Any]] = {}  # node index -> (key, variant core.Node)
        self.dynamic: dict[int, set[int]] = {}  # node index -> scalar slots changed since recording
        self.pending: set[tuple] = set()
        self.failed: dict[tuple, str] = {}
        self.jobs: "queue.Queue" = queue.Queue()
        self.idle = threading.Event()
        self.idle.set()
        self.worker: Optional[threading.Thread] = None
        self.lock = threading.Lock()

    # -- the facts of a node

    def facts(self, node: Any, mode: str) -> tuple[dict, dict]:
        """(scalar name -> value, tensor name -> layout) to bake into `node`'s variant."""
        pk = node.kernel
        scalars: dict = {}
        tensors: dict = {}
        if mode == "off" or getattr(pk.ir, "slang_source", None):
            return scalars, tensors
        dyn = self.dynamic.get(node.index, ())
        for i, (p, a) in enumerate(zip(pk.ir.params, node.args)):
            if isinstance(a, ScalarArg) and (p.fact or (mode == "on" and i not in dyn)) and bakeable(a.ty, a.value):
                scalars[p.name] = a.value
            elif mode == "on" and isinstance(a, TensorArg):
                tensors[p.name] = tuple(a.layout)
        return scalars, tensors

    def key(self, node: Any, scalars: dict, tensors: dict) -> tuple:
        pk = node.kernel
        vals = tuple((n, _value_key(ScalarArg(pk.ir.param(n).ty, v))) for n, v in scalars.items())
        shapes = tuple((n, lay[1:7]) for n, lay in tensors.items())  # rank, numel, extents: what is baked
        return (pk.kdef.identity, pk.options, vals, shapes)

    # -- the submit path

    def entries(self, entries: list, mode: str) -> list:
        """What this submit runs: each recorded node's variant where one is ready."""
        sch = self.scheme
        if self.version != sch._version or self.mode != mode:  # variants come back from the cache
            self.active.clear()
            self.plans.clear()
            self.version, self.mode = sch._version, mode
            for n in sch.nodes:
                self._plan(n)
        if not self.plans:
            return entries
        out = []
        for e in entries:
            out.append(self._entry(e) if e.index in self.plans and sch.nodes[e.index] is e else e)  # fused: as is
        return out

    def _plan(self, node: Any) -> None:
        scalars, tensors = self.facts(node, self.mode)
        if scalars or tensors:
            self.plans[node.index] = (self.key(node, scalars, tensors), scalars, tensors)
        else:
            self.plans.pop(node.index, None)

    def _entry(self, node: Any) -> Any:
        key, scalars, tensors = self.plans[node.index]
        hit = self.active.get(node.index)
        if hit is not None and hit[0] == key:
            return hit[1]
        vpk = self.cache.get(key)
        if vpk is None:
            with self.lock:
                if key not in self.pending and key not in self.failed:
                    self.pending.add(key)
                    self.idle.clear()
                    self.jobs.put((key, node.kernel, scalars, tensors))
                    self._start()
            return node
        sch = self.scheme
        d = Dispatch(vpk.target_ir, vpk.compiled, list(node.dispatch.args), node.dispatch.groups, node.label)
        with sch.device._lock:
            sch.device.backend.record(d)
        variant = type(node)(node.index, node.label, vpk, d, node.keep, args=node.args, fused=node.fused)
        self.active[node.index] = (key, variant)
        sch.stats.specializations += 1
        return variant

    def scalar_changed(self, node: Any, index: int) -> None:
        """set_node_param: a baked scalar demotes the node; a run-time one is copied over."""
        dyn = self.dynamic.setdefault(node.index, set())
        hit = self.active.get(node.index)
        if index not in dyn:
            dyn.add(index)
            self._plan(node)
            if hit is not None and node.kernel.ir.params[index].name in dict(hit[0][2]):
                del self.active[node.index]
                self.scheme.stats.specialization_demotions += 1
                return
        if hit is not None:
            d = hit[1].dispatch
            d.args[index] = node.dispatch.args[index]
            with self.scheme.device._lock:
                if d.state is not None:
                    self.scheme.device.backend.update_scalar(d, index)

    # -- the worker

    def _start(self) -> None:
        if self.worker is None:
            self.worker = threading.Thread(target=self._compile_all, daemon=True, name="goldy-specialize")
            self.worker.start()

    def _compile_all(self) -> None:
        from .core import KernelDef
        while True:
            with self.lock:
                if self.jobs.empty():
                    self.worker = None
                    self.idle.set()
                    return
                key, pk, scalars, tensors = self.jobs.get()
            try:
                variant = KernelDef(specialize(pk.ir, scalars, tensors), pk.kdef.source_hash)
                vpk = variant.prepare(pk.device, checks=pk.options.checks)
            except GoldyError as e:
                with self.lock:
                    self.failed[key] = str(e).splitlines()[0]
                    self.pending.discard(key)
                    self.scheme.stats.specialization_failures += 1
                continue
            self.cache.put(key, vpk)
            with self.lock:
                self.pending.discard(key)
                self.scheme.stats.specialization_compiles += 1

    def wait(self, timeout: Optional[float]) -> bool:
        return self.idle.wait(timeout)

    # -- the report

    def report(self, mode: str) -> SpecializationReport:
        rep = SpecializationReport(mode)
        for n in self.scheme.nodes:
            scalars, tensors = self.facts(n, mode)
            params = n.kernel.ir.params
            dyn = tuple(params[i].name for i in sorted(self.dynamic.get(n.index, ())))
            if not scalars and not tensors:
                rep.nodes.append(NodeSpecialization(n.index, n.label, n.kernel.name,
                                                    "universal", dynamic=dyn))
                continue
            key = self.key(n, scalars, tensors)
            hit = self.active.get(n.index)
            status = ("active" if hit is not None and hit[0] == key else "compiling" if key in self.pending
                      else "failed" if key in self.failed else "universal")
            rep.nodes.append(NodeSpecialization(n.index, n.label, n.kernel.name, status,
                                                tuple(scalars) + tuple(tensors), dyn, self.failed.get(key, "")))
        return rep
