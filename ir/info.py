"""Facts about a kernel that more than one pass, emitter or backend asks about, computed
in one walk per kernel object (ir/pipeline.py hands them on with the lowered kernel)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from . import nodes as N
from .checks import Site, check_sites

SYNC_STATEMENTS = (N.Barrier, N.Reduce, N.Softmax)


@dataclass(frozen=True, eq=False)
class KernelInfo:
    """Facts about one lowered kernel, computed once by the pipeline."""

    kernel: N.Kernel
    sites: tuple[Site, ...]                 # trapping-check sites, by id (ir/checks.py)
    texel_sites: frozenset[int]             # sites on storage images (2-D index, `index_y`)
    written: frozenset[str]                 # buffers, tensors, images, workgroup arrays written
    atomic: frozenset[str]                  # buffers and workgroup arrays atomics touch
    syncs: bool                             # a barrier or a collective anywhere
    returns: bool                           # a `return` anywhere
    statements: int                         # statements in the body, nested ones included

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
    info = KernelInfo(k, sites, frozenset(s.id for s in sites if s.resource in images),
                      frozenset(written), frozenset(atomic), syncs, returns, statements)
    # keyed by id: a deepcopy (every pass starts with one) does not inherit stale facts
    k.__dict__["_goldy_info"] = (id(k), info)
    return info
