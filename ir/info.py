"""Facts about a kernel that more than one pass, emitter or backend asks about, computed
in one walk per kernel object (ir/pipeline.py hands them on with the lowered kernel)."""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import cached_property

from . import nodes as N
from .checks import Site, check_sites
from .uniformity import SYNC_STATEMENTS



@dataclass(frozen=True, eq=False)
class KernelInfo:
    """Facts about one lowered kernel, computed once by the pipeline."""

    kernel_ref: weakref.ref                 # the kernel, held weakly (it holds its info)
    sites: tuple[Site, ...]                 # trapping-check sites, by id (ir/checks.py)
    texel_sites: frozenset[int]             # sites on storage images (2-D index, `index_y`)
    written: frozenset[str]                 # buffers, tensors, images, workgroup arrays written
    atomic: frozenset[str]                  # buffers and workgroup arrays atomics touch
    syncs: bool                             # a barrier or a collective anywhere
    returns: bool                           # a `return` anywhere
    statements: int                         # statements in the body, nested ones included

    @property
    def kernel(self) -> N.Kernel:
        return self.kernel_ref()

    @property
    def has_checks(self) -> bool:
        """Whether any node carries a check site, i.e. whether the kernel takes an error
        word. Without one it has no error-word binding or traffic at all."""
        return bool(self.sites)

    @property
    def return_before_sync(self) -> bool:
        """A `return` in a kernel that synchronises: targets that need barriers in uniform
        control flow keep returned threads walking (WGSL's `gi_done` flag)."""
        return self.returns and self.syncs

    def __deepcopy__(self, memo):  # a pass's copy of the kernel recomputes its own facts
        return self

    @cached_property
    def uniformity(self):
        """Which expressions may differ between the lanes of a workgroup ("may" mode)."""
        from .uniformity import Uniformity
        return Uniformity(self.kernel, "may")


def kernel_info(k: N.Kernel) -> KernelInfo:
    """The facts of `k`, computed once per kernel object (a copy gets its own)."""
    cached = k.__dict__.get("_goldy_info")
    if cached is not None and cached[0] == id(k):
        return cached[1]
    sites = tuple(check_sites(k))
    images = {p.name for p in k.params if p.category == "image"}
    written: set[str] = set()
    atomic: set[str] = set()
    syncs = returns = False
    statements = 0
    for s in N.walk_stmts(k.body):
        statements += 1
        if isinstance(s, (N.Store, N.AtomicAdd, N.Softmax)):
            written.add(s.resource)
        elif isinstance(s, N.Reduce):
            written.add(s.scratch)
        if isinstance(s, N.AtomicAdd):
            atomic.add(s.resource)
        syncs = syncs or isinstance(s, SYNC_STATEMENTS)
        returns = returns or isinstance(s, N.Return)
    info = KernelInfo(weakref.ref(k), sites, frozenset(s.id for s in sites if s.resource in images),
                      frozenset(written), frozenset(atomic), syncs, returns, statements)
    # keyed by id: a deepcopy (every pass starts with one) does not inherit stale facts; no
    # cycle (the info holds `k` weakly), so a lowered kernel is freed as soon as it is dropped
    k.__dict__["_goldy_info"] = (id(k), info)
    return info


class OwnIndex:
    """Whether an index expression is the thread's own index: `global_id().x`, directly
    or through immutable `let`s (locals are unique per kernel, so a name has one value)."""

    def __init__(self, k: N.Kernel, one_d: bool):
        self.one_d = one_d
        self.lets: dict[str, N.Expr] = {}
        for s in N.walk_stmts(k.body):
            if isinstance(s, N.Let) and not s.mutable and s.value is not None:
                self.lets[s.name] = s.value

    def __call__(self, e: N.Expr) -> bool:
        if not self.one_d:
            return False  # x alone does not tell threads of a 2-D or 3-D grid apart
        seen = 0
        while isinstance(e, N.Var) and e.name in self.lets and seen < 64:
            e, seen = self.lets[e.name], seen + 1
        return (isinstance(e, N.Swizzle) and e.lanes == "x" and isinstance(e.value, N.Builtin)
                and e.value.name == "global_id")
