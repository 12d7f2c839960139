"""The lowering pipeline between the verified IR and the emitters.

    verify -> insert checks (when on) -> legalize for the target -> verify -> KernelInfo

`lower(kernel, target, checks=...)` runs it and returns a `Lowered`: the kernel the
emitter prints, the facts every emitter and backend needs about it (computed once, here,
instead of one walk per emitter), and the compile cache key. The runtime calls `lower`;
emitters only print, asking `info(kernel)` for the facts. An emitter called directly on
IR that did not come through `lower` (tests, the CLI's `--emit`) gets it legalised for its
target by `for_target`, with the check sites the caller already inserted (or none).

Where a new rule goes: a rewrite that some target lacks natively is a pass in `ir/`
applied here for the targets that do not declare it; a fact more than one emitter or
backend asks about is a field of `KernelInfo`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from goldy_import.errors import TargetUnsupported
from goldy_import.version import __version__

from . import nodes as N
from .checks import insert_checks
from . import targets
from .info import KernelInfo, kernel_info
from .legalize import legalize
from .unroll import unroll_loops
from .serialize import IR_VERSION, to_json
from .verify import VerifyError, verify

TARGETS = tuple(targets.TARGETS)  # ("cpu", "wgsl", "ptx", "slang"): ir/targets.py declares them
BACKEND_OF = {"cpu": "cpu", "wgsl": "wgpu", "ptx": "cuda", "slang": "slang"}  # runtime/<backend>.py


@dataclass(frozen=True, eq=False)
class Lowered:
    kernel: N.Kernel
    info: KernelInfo
    target: str
    checks: bool
    source: N.Kernel  # the IR as given to the pipeline
    extra: tuple = ()

    @cached_property
    def key(self) -> str:
        """The compile cache key (IR, compiler version, target and options), hashed when asked."""
        return cache_key(self.source, self.target, self.checks, self.extra)


def cache_key(kernel: N.Kernel, target: str, checks: bool, extra: tuple = ()) -> str:
    """What a compiled artefact depends on: the IR as given (before checks and
    legalisation, which are functions of it and of the options), the IR format and
    compiler version, the target and the options."""
    h = hashlib.sha256()
    for part in (f"goldy-import {__version__}", f"ir {IR_VERSION}", target, f"checks={checks}",
                 repr(extra), to_json(kernel, indent=None)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def _legalize(kernel: N.Kernel, target: str) -> N.Kernel:
    """Rewrite what `target` lacks natively (ir/legalize.py, per ir/targets.py); refuse what
    it cannot have."""
    t = targets.target(target)
    if not t.has("float_atomics"):
        _refuse_float_atomics(kernel, t)
    return unroll_loops(legalize(kernel, t), t.unroll, t.unroll_sync)


def _refuse_float_atomics(kernel: N.Kernel, t: targets.Target) -> None:
    for s in N.walk_stmts(kernel.body):
        if isinstance(s, N.Atomic) and s.value.ty == "f32":
            where = f"{kernel.source_file or '<unknown>'}:{s.span.line}:{s.span.col}"
            have = " and ".join(BACKEND_OF[n] for n, x in targets.TARGETS.items() if x.has("float_atomics"))
            what = "workgroup array" if kernel.workgroup_array(s.resource) else "buffer"
            raise TargetUnsupported(
                f"kernel `{kernel.name}` ({where}): `atomic_add` on the f32 {what} `{s.resource}` needs float "
                f"atomics, which the {BACKEND_OF[t.name]} backend ({t.name}) does not have; run it on the {have} "
                "backends, or accumulate in `u32`/`i32` (fixed point)")


def lower(kernel: N.Kernel, target: str, checks: bool = True, extra: tuple = ()) -> Lowered:
    """Run the pipeline for `target`. Raises VerifyError when the input (or, which would be
    a bug in a pass, the output) is not valid IR."""
    if target not in TARGETS:
        raise ValueError(f"unknown target `{target}` (expected one of {', '.join(TARGETS)})")
    verify(kernel)
    k = insert_checks(kernel, targets.target(target).softmax_one_tile) if checks else kernel
    k = _legalize(k, target)
    try:
        verify(k)
    except VerifyError as e:  # a pass produced invalid IR: say which kernel and target
        raise VerifyError(f"internal error: lowering `{kernel.name}` for {target} produced invalid IR: {e}") from e
    k.__dict__["_goldy_lowered"] = (id(k), target)
    return Lowered(k, kernel_info(k), target, checks, kernel, extra)


def for_target(kernel: N.Kernel, target: str) -> Lowered:
    """`kernel` ready for `target`'s emitter: as the pipeline left it, or legalised now
    (keeping whatever check sites it carries) when it did not come through `lower`."""
    mark = kernel.__dict__.get("_goldy_lowered")
    if mark is not None and mark[0] == id(kernel) and mark[1] == target:
        return Lowered(kernel, kernel_info(kernel), target, bool(kernel_info(kernel).sites), kernel)
    k = _legalize(kernel, target)
    k.__dict__["_goldy_lowered"] = (id(k), target)
    return Lowered(k, kernel_info(k), target, bool(kernel_info(k).sites), kernel)
