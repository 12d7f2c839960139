"""Eager launches and asynchronous submits (issue 17).

`pk.launch(*args).over_1d(n)` enqueues one dispatch on the device's stream without a
Scheme and returns without waiting; `scheme.submit(wait=False)` returns a `Submission`.
Faults surface at the wait that observes them: `Submission.wait()`, `Device.synchronize()`,
or the next `Buffer.numpy()` / `write()` (which order themselves after pending work).

The hot path is cheap because the bound arguments are cached per prepared kernel, keyed by
the identity of each resource argument and the type of each scalar (`_key`): a hit
re-checks only the scalars that changed and that no bound buffer was freed, and reuses
the recorded backend Dispatch of that grid (CUDA: its packed parameter block, launched
with one cuLaunchKernel). A cache entry holds its arguments alive (that is also what
keeps their ids unique); the last PLANS argument sets per kernel are kept. A launch passing
the very objects of the kernel's previous launch, with nothing freed on the device since
(`Device._frees`), skips even that and launches the previous dispatch again.
"""

from __future__ import annotations

import dataclasses
import os
from operator import is_ as _is
from typing import TYPE_CHECKING, Any, Optional

from types import SimpleNamespace

from goldy_import.errors import BindingError, GoldyError, GridError

from .backend import Dispatch, ScalarArg

if TYPE_CHECKING:
    from .core import Device, PreparedKernel

# core's validators, handed over by core.py at import (`install`): this module must not
# import core, which imports it (no import cycles between package modules)
C = SimpleNamespace()


def install(**core_functions: Any) -> None:
    C.__dict__.update(core_functions)


PLANS = 16  # argument sets cached per prepared kernel
GRIDS = 8  # recorded grids per argument set
EAGER_LABEL = "eager launch"


class _Plan:
    """One cached argument set: the bound arguments and a recorded Dispatch per grid."""

    __slots__ = ("args", "bound", "allocs", "scalars", "dispatches", "cached")

    def __init__(self, args: tuple, bound: Any, scalars: list):
        self.args = args  # held: keeps the ids in the key unique
        self.bound = bound
        self.allocs = [getattr(getattr(b, "buffer", b), "_alloc", None) for b in bound.keep]
        self.allocs = [a for a in self.allocs if a is not None]
        self.scalars = scalars  # (param index, IR type, where)
        self.dispatches: dict = {}
        self.cached = False  # in the kernel's cache (its arguments may be held)


def _key(pk: "PreparedKernel", args: tuple) -> Optional[tuple]:
    """The cache key of an argument tuple, or None when it must be bound afresh each time
    (uniforms and external arrays, wrapped or borrowed: their contents or producers'
    streams may change, and a cache entry would keep their memory alive)."""
    key = []
    for v, cat in zip(args, pk._eager_categories):
        if cat == "scalar":
            key.append(type(v))
        elif type(v) in C.own_types:  # (hasattr on them would raise and catch AttributeError: slow)
            alloc = getattr(getattr(v, "buffer", v), "_alloc", None)
            if alloc is not None and alloc.external is not None:
                return None  # borrowed memory (wrap, from_dlpack): holding it would keep the producer's alive
            key.append(id(v))
        elif cat == "uniform" or hasattr(v, "__cuda_array_interface__"):
            return None
        else:
            key.append(id(v))
    return tuple(key)


def _plan(pk: "PreparedKernel", args: tuple, launching: bool = True) -> _Plan:
    key = _key(pk, args) if len(args) == len(pk._eager_categories) else None
    plans = pk._eager_plans
    plan = plans.get(key) if key is not None else None
    if plan is not None:
        for a in plan.allocs:
            if a.freed:  # bind again: that names the parameter
                plans.pop(key, None)
                return _plan(pk, args, launching)
        return plan
    bound = C.bind_arguments(pk, args)
    scalars = [(i, p.ty, pk.where[i]) for i, p in enumerate(pk.ir.params) if p.category == "scalar"]
    plan = _Plan(args, bound, scalars)
    if bound.scheme_local:  # scheme-local: never cached
        if launching:
            raise BindingError(f"kernel `{pk.name}`: launch() cannot bind a scheme's temporary buffer; "
                               f"record the kernel into that scheme instead")
        key = None
    if key is not None:
        if len(plans) >= PLANS:
            _evict_oldest(plans)
        plans[key] = plan
        plan.cached = True
    return plan


def _evict_oldest(cache: dict) -> None:
    try:  # another thread may be changing the cache too: losing an entry only costs a re-bind
        cache.pop(next(iter(cache)), None)
    except (StopIteration, RuntimeError):
        pass


def env_setting(name: str, read: Any) -> Any:
    """`read()` (the one reader of environment variable `name`), memoised by the variable's
    raw value: a fresh Scheme's first submit asks for its defaults, and os.environ's Python
    mapping costs microseconds per look-up where its dict of bytes costs nanoseconds."""
    data = getattr(os.environ, "_data", None)
    if data is None:  # not CPython's os._Environ: ask every time
        return read()
    key = _ENV_KEYS.get(name)
    if key is None:
        key = _ENV_KEYS[name] = os.environ.encodekey(name)  # type: ignore[attr-defined]
    memo = (name, data.get(key))
    hit = _ENV_MEMO.get(memo, _ENV_MEMO)
    if hit is _ENV_MEMO:
        hit = _ENV_MEMO[memo] = read()
    return hit


_ENV_KEYS: dict = {}
_ENV_MEMO: dict = {}


def _same_scalar(v: Any, old: Any) -> bool:
    """`v` passes the value `old` did: the same object, or an equal int (not an equal float:
    -0.0 == 0.0, and not a bool: True == 1)."""
    return v is old or (type(v) is int and type(old) is int and v == old)


def bind(pk: "PreparedKernel", args: tuple) -> Any:
    """`core.bind_arguments` through the cache, for record and invoke: a fresh Bound whose
    scalars are these arguments' (the cached one may hold other values)."""
    last = pk._bind_last  # (args, Bound, device frees) of the previous bind of cached arguments
    if last is not None and len(args) == len(last[0]) and all(map(_is, args, last[0])) \
            and last[2] == pk.device._frees:  # the very objects again, nothing freed since: that Bound
        return last[1]
    frees = pk.device._frees  # (before the plan's look-up checks its buffers)
    plan = _plan(pk, args, launching=False)
    if not plan.scalars or plan.args is args or all(_same_scalar(args[i], plan.args[i]) for i, _, _ in plan.scalars):
        if plan.cached:  # (never borrowed memory, uniforms or temporaries)
            pk._bind_last = (args, plan.bound, frees)
        return plan.bound
    out = list(plan.bound.args)
    for i, ty, where in plan.scalars:
        out[i] = ScalarArg(ty, C.check_scalar(where, ty, args[i]))
    return dataclasses.replace(plan.bound, args=out)


def launch(pk: "PreparedKernel", args: tuple, groups: tuple) -> None:
    """Enqueue one dispatch of `pk` over `groups` workgroups (already counted, unchecked)."""
    dev = pk.device
    if dev.closed:
        dev._check_open()
    last = pk._eager_last  # (args, groups, Dispatch, device frees) of the previous launch
    if last is not None and last[1] == groups and len(args) == len(last[0]) and all(map(_is, args, last[0])):
        # the very objects of the previous launch: its dispatch as it is (its scalars are
        # these: the previous launch set them), if nothing was freed since (looked at under
        # the lock, which every free takes)
        with dev._lock:
            repeat = last[3] == dev._frees
            if repeat:
                faults = dev.backend.launch(last[2])
                dev._eager_launches += 1
        if repeat:
            if faults:
                dev._eager_faults.extend((last[2], f) for f in faults)
            return
    frees = dev._frees  # before binding: a free while we bind invalidates the memo below
    plan = _plan(pk, args)
    d = plan.dispatches.get(groups)
    with dev._lock:
        if d is None:
            groups = C.check_groups(pk, groups)
            C.check_in_place_grid(pk, plan.bound, groups)
            d_args = list(plan.bound.args)
            for i, ty, where in plan.scalars:  # this call's scalars (the plan was bound with its first's)
                d_args[i] = ScalarArg(ty, C.check_scalar(where, ty, args[i]))
            d = Dispatch(pk.target_ir, pk.compiled, d_args, groups, EAGER_LABEL)
            d.raw = list(args)  # type: ignore[attr-defined]  # the scalars as last given
            dev.backend.record(d)
            if len(plan.dispatches) >= GRIDS:
                _evict_oldest(plan.dispatches)
            plan.dispatches[groups] = d
        else:
            raw = d.raw  # type: ignore[attr-defined]
            for i, ty, where in plan.scalars:
                v = args[i]
                if not _same_scalar(v, raw[i]):
                    d.args[i] = ScalarArg(ty, C.check_scalar(where, ty, v))
                    raw[i] = v
                    dev.backend.update_scalar(d, i)
        faults = dev.backend.launch(d)
        dev._eager_launches += 1
        if plan.cached:  # (never borrowed memory or uniforms: the cache does not hold those either)
            pk._eager_last = (args, groups, d, frees)  # holds the arguments: their ids stay theirs
    if faults:
        dev._eager_faults.extend((d, f) for f in faults)


class LaunchBuilder:
    """Returned by `PreparedKernel.launch(*args)`; its grid call enqueues the dispatch."""

    __slots__ = ("pk", "args")

    def __init__(self, pk: "PreparedKernel", args: tuple):
        self.pk, self.args = pk, args

    def over_1d(self, n: int) -> None:
        wg = self.pk.ir.workgroup_size
        if type(n) is int and n > 0:  # the common case, fast
            return launch(self.pk, self.args, (-(-n // wg[0]), 1, 1))
        launch(self.pk, self.args, C.groups_for(self.pk, (n, 1, 1), f"over_1d({n})"))

    def over_2d(self, w: int, h: int) -> None:
        launch(self.pk, self.args, C.groups_for(self.pk, (w, h, 1), f"over_2d({w}, {h})"))

    def over_3d(self, w: int, h: int, d: int) -> None:
        launch(self.pk, self.args, C.groups_for(self.pk, (w, h, d), f"over_3d({w}, {h}, {d})"))

    def over_tensor(self, view: Any) -> None:
        numel = getattr(view, "numel", None)
        if numel is None:
            raise GridError(f"kernel `{self.pk.name}`: over_tensor expects a TensorView, got {C.describe_value(view)}")
        self.over_1d(int(numel))

    def groups(self, groups: tuple[int, int, int]) -> None:
        launch(self.pk, self.args, C.check_groups(self.pk, tuple(groups)))


# ---------------------------------------------------------------- waiting


class _EagerNode:
    """What `core.kernel_fault` reads of a node, for a fault of an eager launch."""

    index = -1

    def __init__(self, d: Dispatch):
        self.dispatch, self.label = d, d.label


class Submission:
    """`scheme.submit(wait=False)`: `.done()` polls, `.wait()` waits and raises the
    submit's first KernelFault (every time it is called)."""

    def __init__(self, device: "Device", ticket: Any, entries: list):
        self.device, self._ticket, self._entries = device, ticket, entries
        self._finished = False
        self._error: Optional[GoldyError] = None
        self._reported = False  # the error was raised to the caller once

    def __repr__(self) -> str:
        return f"<Submission of {len(self._entries)} dispatches: {'done' if self._finished else 'pending'}>"

    def done(self) -> bool:
        if self._finished:
            return True
        with self.device._lock:
            return self.device.closed or self.device.backend.ticket_done(self._ticket)

    def wait(self) -> None:
        self._finish()
        if self._error is not None:
            self._reported = True
            raise self._error

    def _finish(self) -> None:
        if self._finished:
            return
        dev = self.device
        with dev._lock:
            if self._finished:
                return
            faults = dev.backend.wait_ticket(self._ticket)
            self._finished = True
            if self in dev._pending:
                dev._pending.remove(self)
        if faults:
            self._error = C.kernel_fault(self._entries, faults)


def synchronize(dev: "Device") -> None:
    """Wait for every pending submit and eager launch; raise the first fault not yet raised."""
    first: Optional[GoldyError] = None
    if dev._pending:
        for s in list(dev._pending):
            s._finish()
            if s._error is not None and not s._reported and first is None:
                s._reported = True
                first = s._error
    with dev._lock:
        late = dev.backend.synchronize() if not dev.closed and dev._eager_launches else None
        dev._eager_launches = 0
    faults = dev._eager_faults
    if late:
        faults = faults + late
    if faults:
        dev._eager_faults = []
    if first is not None:
        raise first
    if faults:
        d, f = faults[0]
        f = dataclasses.replace(f, dispatch=0)
        err = C.kernel_fault([_EagerNode(d)], [f])
        if len(faults) > 1:
            err.args = (err.args[0] + f" ({len(faults) - 1} more faulted eager launch"
                        f"{'es' if len(faults) > 2 else ''} since the last synchronize)",)
        raise err


def settle(dev: "Device") -> None:
    """Before a host read or write: order it after pending work (and report its faults)."""
    if dev._pending or dev._eager_launches or dev._eager_faults:
        synchronize(dev)
