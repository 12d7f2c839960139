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
the facts left). With specialization on, that variant reads each such scalar from the
scheme's live block (runtime/live_scalars.py): from then on a change writes one word, and
the dispatch's arguments stay as recorded. Variants live in a small per-device LRU keyed by
(kernel, options, facts, live words), so schemes and re-recordings share them.

An automatically fused region (runtime/autofusion.py) is specialized as a whole, the same
way: its fused entry's scalars are its constituents' (each a fact under the rules above,
per constituent node and slot) plus the lengths of elided temporaries (`<p>_len`, fixed for
the structure: baked with specialization on). `set_node_param` on a constituent's baked
scalar demotes the region in the same submit; the report lists regions apart from nodes.
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
from goldy_import.envflag import OFF
from goldy_import.ir.specialize import bakeable, specialize

from . import live_scalars
from .backend import BufferArg, Dispatch, ScalarArg, TensorArg

__all__ = ["Specializer", "SpecializationReport", "NodeSpecialization", "RegionSpecialization", "VariantCache",
           "specialization_mode", "VARIANT_CACHE_SIZE"]

VARIANT_CACHE_SIZE = 32  # variants kept per device


def specialization_mode(setting: Optional[str]) -> str:
    """"on" | "facts" | "off": the scheme's setting, else $GOLDY_SPECIALIZE (module docstring)."""
    if setting is not None:
        return setting
    env = os.environ.get("GOLDY_SPECIALIZE", "").strip().lower()
    if env == "":
        return "facts"
    return "off" if env in OFF else "on"


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
    status: str  # "universal" | "compiling" | "active" | "failed"; "fused": runs in an active fused region
    baked: tuple[str, ...] = ()  # parameter names whose values (or shapes) are baked
    dynamic: tuple[str, ...] = ()  # scalars changed with set_node_param: run-time values
    error: str = ""
    live: tuple[str, ...] = ()  # of `dynamic`, those the variant reads from the live block


@dataclass
class RegionSpecialization:
    """An active auto-fused region; `baked` and `dynamic` name the fused entry's parameters."""

    nodes: tuple[int, ...]
    kernel: str
    status: str  # "universal" | "compiling" | "active" | "failed"
    baked: tuple[str, ...] = ()
    dynamic: tuple[str, ...] = ()
    error: str = ""
    live: tuple[str, ...] = ()


@dataclass
class SpecializationReport:
    mode: str
    nodes: list[NodeSpecialization] = field(default_factory=list)
    regions: list[RegionSpecialization] = field(default_factory=list)

    def __str__(self) -> str:
        active = sum(n.status == "active" for n in self.nodes)
        lines = [f"specialization {self.mode}: {active} of {len(self.nodes)} node(s) run a variant"]
        if self.regions:
            lines[0] += (f", {sum(r.status == 'active' for r in self.regions)} of {len(self.regions)} "
                         f"fused region(s)")
        for n in self.nodes:
            lines.append(f"  node {n.node} {n.label!r} ({n.kernel}): {_status(n)}")
        for r in self.regions:
            lines.append(f"  fused nodes {r.nodes[0]}..{r.nodes[-1]} ({r.kernel}): {_status(r)}")
        return "\n".join(lines)


def _status(u: Any) -> str:
    dyn = [n + (" (live)" if n in u.live else "") for n in u.dynamic]
    return (u.status + (f", baked {', '.join(u.baked)}" if u.baked else "")
            + (f", run-time {', '.join(dyn)}" if dyn else "") + (f": {u.error}" if u.error else ""))


def _value_key(a: ScalarArg) -> Any:
    return struct.pack("<f", a.value) if a.ty == "f32" else a.value  # -0.0 and 0.0 differ


class Specializer:
    """One scheme's specialization (module docstring)."""

    def __init__(self, scheme: Any):
        self.scheme = scheme
        self.cache = VariantCache.of(scheme.device)
        self.version = -1
        self.mode = ""
        # a unit is a recorded node (its index) or an auto-fused region (its node indices)
        self.plans: dict[Any, tuple] = {}  # unit -> (key, scalars, tensors, live), until its args change
        self.active: dict[Any, tuple[tuple, Any, frozenset]] = {}  # unit -> (key, variant core.Node, its live names)
        self.regions: dict[tuple, tuple[Any, list]] = {}  # region -> (fused entry, its sources)
        self.seen: dict[int, tuple] = {}  # id(fused entry) -> region
        self.by_source: Optional[dict] = None  # (node index, slot) -> [(region, its slot)]; None: rebuild
        self.units: dict = {}  # (node index, slot) -> [(unit, its entry, slot, name)], rebuilt with by_source
        self.dynamic: dict[int, set[int]] = {}  # node index -> scalar slots changed since recording
        self.pending: set[tuple] = set()
        self.failed: dict[tuple, str] = {}
        self.live: Optional[live_scalars.LiveScalars] = None  # the live block, with the first live scalar
        self.jobs: "queue.Queue" = queue.Queue()
        self.idle = threading.Event()
        self.idle.set()
        self.worker: Optional[threading.Thread] = None
        self.lock = threading.Lock()
        # bumped by whatever can change what `entries` returns for the same list: a plan, an
        # activation or demotion, a region, a finished compile (a replay returns its memo)
        self.gen = 0
        self.memo: Optional[tuple] = None  # (input list, (its len, version, mode, gen), output)

    # -- the facts of a node

    def facts(self, node: Any, mode: str, sources: Optional[list] = None,
              assign: bool = True) -> tuple[dict, dict, dict]:
        """(scalar name -> value, tensor name -> layout, live scalar name -> word) to bake
        into `node`'s variant, and what it reads from the live block. `sources`: a fused
        entry's (node index, parameter) per parameter, None for a temporary's length
        (AutoFusion.sources); default: the recorded node's own. `assign`: a changed scalar
        without a word gets one (not for the report)."""
        pk = node.kernel
        scalars: dict = {}
        tensors: dict = {}
        live: dict = {}
        if mode == "off" or getattr(pk.ir, "slang_source", None):
            return scalars, tensors, live
        if sources is None:
            sources = [(node.index, i) for i in range(len(pk.ir.params))]
        nodes = self.scheme.nodes
        for p, a, src in zip(pk.ir.params, node.args, sources):
            if isinstance(a, ScalarArg):
                fact = src is not None and nodes[src[0]].kernel.ir.params[src[1]].fact
                changed = src is not None and src[1] in self.dynamic.get(src[0], ())
                if (fact or (mode == "on" and not changed)) and bakeable(a.ty, a.value):
                    scalars[p.name] = a.value
                elif mode == "on" and changed:
                    w = self._word(src, a, pk.ir, assign)
                    if w is not None:
                        live[p.name] = w
            elif mode == "on" and isinstance(a, TensorArg):
                tensors[p.name] = tuple(a.layout)
        if mode == "on" and (scalars or tensors or live):  # with them, the buffers' lengths (prove checks)
            tensors.update((p.name, ("len", a.length)) for p, a in zip(pk.ir.params, node.args)
                           if isinstance(a, BufferArg))
        return scalars, tensors, live

    def _word(self, src: tuple, a: ScalarArg, kernel: Any, assign: bool) -> Optional[int]:
        """The live word of a recorded node's scalar (None: the kernel binds no more, the
        block is full, or `assign` is off and it has none yet)."""
        if not live_scalars.fits(kernel, self.scheme.device.backend):
            return None
        lv = self.live
        if not assign:
            return lv.words.get(src) if lv is not None else None
        if lv is None:
            lv = self.live = live_scalars.LiveScalars(self.scheme.device)
        return lv.word(src, a)

    def key(self, node: Any, scalars: dict, tensors: dict, live: Optional[dict] = None) -> tuple:
        pk = node.kernel
        vals = tuple((n, _value_key(ScalarArg(pk.ir.param(n).ty, v))) for n, v in scalars.items())
        shapes = tuple((n, lay[1:7]) for n, lay in tensors.items())  # rank, numel, extents: what is baked
        return (pk.kdef.identity, pk.options, vals, shapes, tuple((live or {}).items()))

    # -- the submit path

    def entries(self, entries: list, mode: str) -> list:
        """What this submit runs: each recorded node's variant where one is ready."""
        sch = self.scheme
        if self.version != sch._version or self.mode != mode:  # variants come back from the cache
            self.active.clear()
            self.plans.clear()
            self.regions.clear()
            self.by_source = None
            self.seen.clear()
            self.version, self.mode = sch._version, mode
            for n in sch.nodes:
                self._plan(n.index, n)
        key = (len(entries), sch._version, mode, self.gen)
        memo = self.memo
        if memo is not None and memo[0] is entries and memo[1] == key:  # a replay: nothing changed since
            return memo[2]
        out = []
        for e in entries:
            u = e.index if sch.nodes[e.index] is e else self._region(e)
            out.append(self._entry(u, e) if u in self.plans else e)
        # the input list itself is kept (its id cannot be reused while held), with the gen read
        # before building: a change while building is seen next time
        self.memo = (entries, key, out)
        return out

    def _region(self, entry: Any) -> Optional[tuple]:
        """The region a fused entry runs (planned when first seen); None: not a region's."""
        u = self.seen.get(id(entry))
        if u is not None and self.regions[u][0] is entry:
            return u
        fusion = self.scheme._fusion
        src = fusion.sources(entry) if fusion is not None else None
        if src is None:
            return None
        u, sources = src
        self.seen[id(entry)] = u
        self.regions[u] = (entry, sources)
        self.by_source = None
        self.gen += 1
        for i in (u,) + u:  # another fused entry: its variant gets its own dispatch; the nodes no longer run
            self.active.pop(i, None)
        self._plan(u, entry)
        return u

    def _plan(self, u: Any, entry: Any) -> None:
        self.gen += 1
        scalars, tensors, live = self.facts(entry, self.mode, self.regions[u][1] if isinstance(u, tuple) else None)
        if scalars or tensors or live:
            self.plans[u] = (self.key(entry, scalars, tensors, live), scalars, tensors, live)
        else:
            self.plans.pop(u, None)

    def _entry(self, u: Any, node: Any) -> Any:
        key, scalars, tensors, live = self.plans[u]
        hit = self.active.get(u)
        if hit is not None and hit[0] == key:
            return hit[1]
        vpk = self.cache.get(key)
        if vpk is None:
            with self.lock:
                if key not in self.pending and key not in self.failed:
                    self.pending.add(key)
                    self.idle.clear()
                    self.jobs.put((key, node.kernel, scalars, tensors, live))
                    self._start()
            return node
        sch = self.scheme
        args = list(node.dispatch.args) + ([self.live.arg()] if live else [])
        d = Dispatch(vpk.target_ir, vpk.compiled, args, node.dispatch.groups, node.label)
        with sch.device._lock:
            sch.device.backend.record(d)
        variant = type(node)(node.index, node.label, vpk, d, node.keep, args=node.args, fused=node.fused)
        self.active[u] = (key, variant, frozenset(live))
        self.gen += 1
        sch.stats.specializations += 1
        sch.stats.region_specializations += isinstance(u, tuple)
        return variant

    def scalar_changed(self, node: Any, index: int) -> None:
        """set_node_param: a baked scalar demotes the node, and each fused region it is
        baked into; a run-time one is copied over (automatic fusion has already copied it
        into the fused entry)."""
        src = (node.index, index)
        dyn = self.dynamic.get(node.index)
        if dyn is None:
            dyn = self.dynamic[node.index] = set()
        new = index not in dyn
        if new:
            dyn.add(index)
            self.scheme._unsteady()  # (a first change plans and may demote: set_node_param runs it in full again)
        if self.by_source is None:  # set_node_param runs per token: no scan of every region's sources
            self.by_source, self.units = {}, {}
            for u, (_, sources) in self.regions.items():
                for slot, s in enumerate(sources):
                    if s is not None and u not in (r for r, _ in self.by_source.get(s, ())):
                        self.by_source.setdefault(s, []).append((u, slot))
        units = self.units.get(src)
        if units is None:  # the units the scalar feeds (the node, the regions it is fused into) and its name there
            units = [(node.index, node, index, node.kernel.ir.params[index].name)]
            units += [(u, self.regions[u][0], slot, self.regions[u][0].kernel.ir.params[slot].name)
                      for u, slot in self.by_source.get(src, ())]
            self.units[src] = units
        w = self.live.changed(src, node.dispatch.args[index]) if self.live is not None else None
        word = w is not None
        if word:
            self.scheme._wrote_live(w)
        for u, entry, slot, name in units:
            hit = self.active.get(u)
            if new:
                self._plan(u, entry)
                if hit is not None and name in dict(hit[0][2]):
                    del self.active[u]
                    self.gen += 1
                    self.scheme.stats.specialization_demotions += 1
                    continue
            if hit is not None:
                d = hit[1].dispatch
                self.scheme._put(d.args, slot, entry.dispatch.args[slot])
                if not (word and name in hit[2]):
                    self.scheme._mark(d, slot)  # (a live one: its word is the value it reads)

    # -- the worker

    def _start(self) -> None:
        if self.worker is None:
            self.worker = threading.Thread(target=self._compile_all, daemon=True, name="goldy-specialize")
            self.worker.start()

    def _compile_all(self) -> None:
        while True:
            with self.lock:
                if self.jobs.empty():
                    self.worker = None
                    self.idle.set()
                    return
                key, pk, scalars, tensors, live = self.jobs.get()
            try:
                ir = specialize(pk.ir, scalars, tensors, live, live_scalars.WORDS)
                variant = type(pk.kdef)(ir, pk.kdef.source_hash)  # a KernelDef (core imports this module)
                vpk = variant.prepare(pk.device, checks=pk.options.checks)
            except GoldyError as e:
                with self.lock:
                    self.failed[key] = str(e).splitlines()[0]
                    self.pending.discard(key)
                    self.gen += 1
                    self.scheme.stats.specialization_failures += 1
                continue
            self.cache.put(key, vpk)
            with self.lock:
                self.pending.discard(key)
                self.gen += 1  # the next submit switches to it
                self.scheme.stats.specialization_compiles += 1

    def wait(self, timeout: Optional[float]) -> bool:
        return self.idle.wait(timeout)

    # -- the report

    def report(self, mode: str) -> SpecializationReport:
        rep = SpecializationReport(mode)
        fusion = self.scheme._fusion
        for e in (fusion.active or ()) if fusion is not None and self.scheme._auto_fusion else ():
            src = fusion.sources(e)
            if src is None:
                continue
            u, sources = src
            dyn = tuple(p.name for p, s in zip(e.kernel.ir.params, sources)
                        if s is not None and s[1] in self.dynamic.get(s[0], ()))
            status, baked, error, live = self._status(u, e, sources, mode)
            if status == "active" and self.regions.get(u, (None,))[0] is not e:
                status, live = "universal", ()  # a fused entry this specializer has not run yet
            rep.regions.append(RegionSpecialization(u, e.kernel.name, status, baked, dyn, error, live))
        fused = {i for r in rep.regions for i in r.nodes}
        for n in self.scheme.nodes:
            dyn = tuple(n.kernel.ir.params[i].name for i in sorted(self.dynamic.get(n.index, ())))
            status, baked, error, live = self._status(n.index, n, None, mode)
            fused_in = n.index in fused
            rep.nodes.append(NodeSpecialization(n.index, n.label, n.kernel.name, "fused" if fused_in else status,
                                                baked, dyn, error, () if fused_in else live))
        return rep

    def _status(self, u: Any, entry: Any, sources: Optional[list], mode: str) -> tuple[str, tuple, str, tuple]:
        """(status, baked parameter names, error, names read from the live block when
        active) of a unit, for the report."""
        scalars, tensors, live = self.facts(entry, mode, sources, assign=False)
        if not scalars and not tensors and not live:
            return "universal", (), "", ()
        key = self.key(entry, scalars, tensors, live)
        hit = self.active.get(u)
        status = ("active" if hit is not None and hit[0] == key else "compiling" if key in self.pending
                  else "failed" if key in self.failed else "universal")
        return status, tuple(scalars) + tuple(tensors), self.failed.get(key, ""), \
            tuple(live) if status == "active" else ()
