"""Race checking for the CPU backend (`Device("cpu", racecheck=True)`, or `GOLDY_RACECHECK=1`).

The CPU backend runs the lanes of a dispatch in lock step, statement by statement, so a
kernel whose threads race still computes one plausible answer there. The racecheck build
(codegen/cpu/race.py) reports every access to a `Tracker`, which decides, as
compute-sanitizer's racecheck does on NVIDIA hardware, whether the same run could have
gone differently on a GPU. The rule (docs/semantics.md, "Data races"):

    two accesses to one element by different threads, at least one a write and not both
    atomics, race unless a barrier of their workgroup lies between them; accesses of two
    workgroups of one dispatch are never ordered.

Workgroup arrays are checked per workgroup, buffers, tensor views and images both within
a workgroup and across the dispatch. Each workgroup counts its barriers (its *epoch*; a
barrier counts for the workgroups with a lane at it), so "no barrier between" is "same
epoch", whatever order the lock-step run happened to use.

The tracker logs (element key, thread, kind, site) records and now and then compacts the
log: per element key and kind only the records of the lowest and the highest thread
matter (a kind's threads are none, one, or several, and that decides every conflict), so
a group keeps at most six records however often it is accessed, and a conflict is a pair
of records of one group at most five apart in sorted order. Intra-workgroup groups are
keyed (workgroup, element, epoch) and compare threads; cross-workgroup groups are keyed
by the element and compare workgroups.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from goldy_import.codegen.cpu import rt
from goldy_import.errors import RaceError

READ, WRITE, ATOMIC = 0, 1, 2
_KIND_NAMES = {"read": READ, "write": WRITE, "atomic": ATOMIC}
_WORDS = {READ: "read", WRITE: "write", ATOMIC: "atomic_add"}
_CATEGORY = {"tensor": "tensor", "tensor_mut": "tensor", "tensor_write": "tensor", "image": "image"}
COMPACT_AT = 1 << 21  # records logged before a log is compacted


class RaceFaults(rt.Faults):
    """The dispatch's Faults, carrying its race tracker to the generated function (`F.race`)."""

    __slots__ = ("race",)

    def __init__(self, tracker: "Tracker"):
        super().__init__()
        self.race = tracker


@dataclass(frozen=True)
class RaceAccess:
    """One side of a race: what the thread did (`kind`: read, write, atomic_add), where
    (`location`, Rust file:line:col) and which thread (`global_id`, `local_id`, `workgroup_id`)."""

    kind: str
    location: str
    global_id: tuple
    local_id: tuple
    workgroup_id: tuple
    order: tuple = ()  # source position first: the report lists the two accesses in program text order

    def describe(self) -> str:
        return (f"{self.kind} at {self.location} by thread {_xyz(self.global_id)} "
                f"(local {_xyz(self.local_id)} of workgroup {_xyz(self.workgroup_id)})")


def _xyz(t: tuple) -> str:
    return "(" + ", ".join(str(v) for v in t) + ")"


class _Log:
    """Access records of one resource, grouped by key columns; `who` is what must differ
    for a conflict (the thread, or the workgroup)."""

    def __init__(self, nkeys: int):
        self.nkeys = nkeys
        self.parts: list[tuple] = []
        self.size = 0

    def add(self, keys: tuple, who, lane, site: int, kind: int) -> None:
        n = lane.shape[0]
        self.parts.append((keys, who, lane, np.full(n, site, np.int32), np.full(n, kind, np.int8)))
        self.size += n

    def compact(self) -> Optional[tuple]:
        """Reduce the log to its deciding records; return the first conflict as (keys,
        record a, record b, number of conflicting groups), records as (lane, site, kind)."""
        if not self.parts:
            return None
        keys = [np.concatenate([p[0][j] for p in self.parts]) for j in range(self.nkeys)]
        who, lane, site, kind = (np.concatenate([p[c] for p in self.parts]) for c in range(1, 5))
        order = _order(keys, kind, who)
        keys = [k[order] for k in keys]
        who, lane, site, kind = who[order], lane[order], site[order], kind[order]
        n = who.shape[0]
        # new (key, kind) run: keep its first and last record (lowest and highest `who`)
        step = np.zeros(n, bool)
        step[0] = True
        for k in keys + [kind]:
            step[1:] |= k[1:] != k[:-1]
        keep = step.copy()
        keep[:-1] |= step[1:]
        keep[-1] = True
        keys = [k[keep] for k in keys]
        who, lane, site, kind = who[keep], lane[keep], site[keep], kind[keep]
        self.parts = [(tuple(keys), who, lane, site, kind)]
        self.size = who.shape[0]
        return _first_conflict(keys, who, lane, site, kind)

    def drop(self, stale) -> None:
        """Forget the records `stale` (a function of the key columns) marks as final."""
        if not self.parts:
            return
        (keys, who, lane, site, kind), = self.parts
        live = ~stale(keys)
        self.parts = [(tuple(k[live] for k in keys), who[live], lane[live], site[live], kind[live])]
        self.size = int(live.sum())


def _order(keys: list, kind, who) -> np.ndarray:
    """The permutation sorting records by (keys..., kind, who): two sort keys when the key
    columns and the kind pack into one int64, else all of them."""
    packed = np.zeros(kind.shape[0], np.int64)
    span = 1
    for k in keys + [kind]:
        hi = int(k.max()) + 1 if k.shape[0] else 1
        if span * hi >= 1 << 62:
            return np.lexsort((who, kind, *reversed(keys)))
        packed = packed * hi + k
        span *= hi
    return np.lexsort((who, packed))


def _first_conflict(keys, who, lane, site, kind) -> Optional[tuple]:
    """The first pair of records of one group with different `who` and conflicting kinds
    (not both reads, not both atomics), and how many groups have one."""
    n = who.shape[0]
    hits = np.zeros(n, bool)
    best = None
    for d in range(1, 6):
        if d >= n:
            break
        same = np.ones(n - d, bool)
        for k in keys:
            same &= k[d:] == k[:-d]
        bad = same & (who[d:] != who[:-d]) & ((kind[d:] != kind[:-d]) | (kind[d:] == WRITE))
        if bad.any():
            i = int(np.argmax(bad))
            hits[:n - d] |= bad
            if best is None or i < best[0]:
                best = (i, i + d)
    if best is None:
        return None
    group = np.zeros(n, bool)
    group[0] = True
    for k in keys:
        group[1:] |= k[1:] != k[:-1]
    gid = np.cumsum(group)
    i, j = best
    return (tuple(int(k[i]) for k in keys), (int(lane[i]), int(site[i]), int(kind[i])),
            (int(lane[j]), int(site[j]), int(kind[j])), int(np.unique(gid[hits]).shape[0]))


class Tracker:
    """The race state of one dispatch: `begin` opens each chunk, the generated code calls
    `acc`/`img`/`barrier`/`reduce`, and `finish` (after the last chunk) raises RaceError."""

    def __init__(self, kernel, sites: list, wg: tuple, groups: tuple, where: str):
        self.kernel, self.sites, self.where = kernel, sites, where
        self.wg, self.groups = tuple(wg), tuple(groups)
        self.S = wg[0] * wg[1] * wg[2]
        self.intra: dict[str, _Log] = {}
        self.cross: dict[str, _Log] = {}
        self.kinds = [_KIND_NAMES[s.kind] for s in sites]
        # accesses that cannot race, not recorded: a resource only read or only atomically
        # added to, and one every site indexes by the lane (one element per thread; for
        # buffers in a 1-D dispatch, unless a tensor view's strides move the elements)
        kinds = {}
        for s in sites:
            kinds.setdefault(s.resource, set()).add(s.kind)
        written = {r for r, ks in kinds.items() if "write" in ks or ks >= {"read", "atomic"}}
        own = {s.resource for s in sites} - {s.resource for s in sites if not s.lane}
        self.skip = [s.resource not in written or (s.resource in own and s.workgroup) for s in sites]
        self.skip_1d = [s.resource in own for s in sites]
        self.ep = np.zeros(0, np.int64)
        self.w0 = 0

    # -- called by the generated function

    def begin(self, G: rt.Geometry) -> None:
        self._end_chunk()
        self.w0 = G.w0
        self.ep = np.zeros(G.W, np.int64)

    def acc(self, G: rt.Geometry, site: int, obj, idx, m, guards=()) -> None:
        if self.skip[site] or (G.lin1d and self.skip_1d[site] and type(obj) is not rt.Strided):
            return
        s = self.sites[site]
        if s.workgroup:
            n = obj.shape[1]
        elif type(obj) is rt.Strided:  # the element the logical index lands on
            idx, _ = obj.offsets(idx)
            n = obj.data.shape[0]
        else:
            n = (obj[0] if isinstance(obj, tuple) else obj).shape[0]
        self._record(G, site, s, idx, n, m, guards)

    def img(self, G: rt.Geometry, site: int, w, h, x, y, m, guards=()) -> None:
        if self.skip[site]:
            return
        x, y = np.asarray(x, np.int64), np.asarray(y, np.int64)
        texel = np.where((x < int(w)) & (y < int(h)), y * int(w) + x, int(w) * int(h))
        self._record(G, site, self.sites[site], texel, int(w) * int(h), m, guards)

    def barrier(self, G: rt.Geometry, m) -> None:
        if m is None:
            self.ep += 1
        elif m is not rt.FALSE:
            self.ep += np.broadcast_to(m, (G.W, G.S)).any(axis=1)

    def reduce(self, G: rt.Geometry, site: int, scratch, n: int, m) -> None:
        """A collective: lane l < n stores scratch[l], then the workgroup synchronises."""
        if not self.skip[site]:
            self._record(G, site, self.sites[site], G.lid_lin, min(n, scratch.shape[1]), m, ())
        self.barrier(G, m)

    # -- bookkeeping

    def _record(self, G, site: int, s, idx, n: int, m, guards) -> None:
        if m is rt.FALSE:
            return
        ok = np.broadcast_to(np.asarray(idx) < n, (G.W, G.S))
        if m is not None:
            ok = ok & m
        for g in guards:
            ok = ok & g
        pos = np.flatnonzero(ok)
        if pos.shape[0] == 0:
            return
        elem = np.broadcast_to(idx, (G.W, G.S)).reshape(-1)[pos].astype(np.int64)
        wl = pos // self.S
        wg = wl + G.w0
        lane = pos + G.t0
        kind = self.kinds[site]
        log = self.intra.get(s.resource)
        if log is None:
            log = self.intra[s.resource] = _Log(3)
        log.add((wg, elem, self.ep[wl]), lane, lane, site, kind)
        if log.size > COMPACT_AT:
            self._check(s.resource, log.compact(), False)
            log.drop(lambda keys: keys[2] < self.ep[keys[0] - self.w0])  # a later barrier closed them
        if not s.workgroup:
            log = self.cross.get(s.resource)
            if log is None:
                log = self.cross[s.resource] = _Log(1)
            log.add((elem,), wg, lane, site, kind)
            if log.size > COMPACT_AT:
                self._check(s.resource, log.compact(), True)

    def _end_chunk(self) -> None:
        for name, log in self.intra.items():
            self._check(name, log.compact(), False)
        self.intra.clear()  # the next chunk holds other workgroups

    def finish(self) -> None:
        """After the dispatch's last chunk: raise RaceError for the first race found."""
        self._end_chunk()
        for name, log in self.cross.items():
            self._check(name, log.compact(), True)

    # -- the report

    def _check(self, resource: str, found: Optional[tuple], across: bool) -> None:
        if found is None:
            return
        keys, a, b, groups = found
        elem = keys[0] if across else keys[1]
        accesses = sorted((self._access(*a), self._access(*b)), key=lambda x: x.order)
        k = self.kernel
        p = k.param(resource)
        what = "workgroup array" if p is None else _CATEGORY.get(p.category, "buffer")
        if across:
            why = "the threads are in different workgroups: within one dispatch only atomics may share an element"
        else:
            why = f"no barrier of workgroup {_xyz(accesses[0].workgroup_id)} lies between them"
        if groups > 1:
            why += f" ({groups - 1} more racing element{'s' if groups > 2 else ''} in this dispatch)"
        msg = (f"data race in {self.where} on {what} `{resource}`, element {elem}\n  "
               + "\n  ".join(x.describe() for x in accesses) + "\n  " + why)
        raise RaceError(msg, k.name, resource, elem, accesses)

    def _access(self, lane: int, site: int, kind: int) -> RaceAccess:
        s = self.sites[site]
        wx, wy, wz = self.wg
        gx, gy, _ = self.groups
        w, l = divmod(lane, self.S)
        local = (l % wx, (l // wx) % wy, l // (wx * wy))
        group = (w % gx, (w // gx) % gy, w // (gx * gy))
        glob = tuple(g * e + x for g, e, x in zip(group, self.wg, local))
        loc = f"{self.kernel.source_file}:{s.span.line}:{s.span.col}"
        return RaceAccess(_WORDS[kind], loc, glob, local, group, (s.span.start, kind, lane))


def tracker_for(d, where: str) -> Tracker:
    """A fresh tracker for dispatch `d` (its compiled kernel is a racecheck build)."""
    return Tracker(d.kernel, d.compiled.race_sites, d.kernel.workgroup_size, d.groups, where)
