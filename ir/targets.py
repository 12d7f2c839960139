"""What each target renders natively, for the legalisation passes (ir/legalize.py).

A `Target` names a code generator and the feature keys (FEATURES) its emitter renders
itself with the semantics docs/semantics.md states. A pass rewrites, into plain IR, every
construct whose key the target lacks, so a rule is written once, in the pass, for all the
targets without it. Keeping a key means the emitter's own form must give the same bits
(for collectives: the same tree, the same operand order).

A new target is one more `Target(...)` in TARGETS; a new pass adds its key to FEATURES
and to the targets that keep their own form.
"""

from __future__ import annotations

from dataclasses import dataclass

# key -> the construct it stands for
FEATURES = {
    # collectives (ir/legalize.py lowers them to stores, barriers and the pairwise tree)
    "reduce": "workgroup_sum / workgroup_max (N.Reduce)",
    "softmax": "workgroup_softmax_in_place (N.Softmax)",
    # intrinsics and integer rules each emitter still writes itself
    "dot": "dot(a, b) and length(v), summed left to right",
    "matrix": "matrix * vector and matrix * matrix products, left to right",
    "clamp": "clamp(x, lo, hi)",
    "min_max": "f32 min / max with Rust's NaN rules",
    "round": "round half away from zero",
    "fma": "mul_add, one rounding",
    "int_divide": "integer / and % by zero and i32::MIN / -1",
    "shift": "shift amounts taken modulo 32",
    "float_to_int": "saturating f32 -> int casts, NaN -> 0",
    "transcendentals": "sin cos tan exp exp2 log log2 pow",
    # operations some targets do not have at all (no pass can supply them: ir/pipeline.py refuses)
    "float_atomics": "atomic_add on f32 buffers and workgroup arrays",
}

# everything but the collectives: emitters render these themselves today
_INTRINSICS = frozenset(FEATURES) - {"reduce", "softmax", "float_atomics"}


@dataclass(frozen=True)
class Target:
    name: str
    native: frozenset
    doc: str
    unroll: int = 1  # per-thread loops of loads: iterations per trip, their loads first (ir/unroll.py)
    unroll_sync: bool = False  # in kernels with barriers or collectives too (PTX: their `for`s feed the lanes entry)
    # softmax with a count the same for every lane: branches to a copy without the
    # `lane < count` guards and later tiles when count == N, and without later tiles when
    # count < N (ir/legalize.py; PTX's lanes entry runs them as branches, codegen/ptx/lanes.py)
    softmax_one_tile: bool = False

    def has(self, feature: str) -> bool:
        if feature not in FEATURES:
            raise KeyError(f"unknown target feature `{feature}`")
        return feature in self.native


CPU = Target("cpu", _INTRINSICS | {"reduce", "float_atomics"},
             "numpy over every thread of a chunk: the tree runs level by level on whole rows of "
             "workgroups (codegen.cpu.rt.reduce), the same pairs in the same order")
WGSL = Target("wgsl", _INTRINSICS, "WGSL via wgpu", unroll=4, unroll_sync=True)
PTX = Target("ptx", _INTRINSICS | {"reduce", "float_atomics"},
             "PTX: warp shuffles for the first five tree levels where every lane arrives, each level "
             "combining the same lanes as the tree, lower lane on the left", unroll=64, softmax_one_tile=True)
SLANG = Target("slang", _INTRINSICS, "canonical Slang and its lane-serial CPU form")

TARGETS = {t.name: t for t in (CPU, WGSL, PTX, SLANG)}


def target(name: str) -> Target:
    try:
        return TARGETS[name]
    except KeyError:
        raise KeyError(f"unknown target `{name}`: expected one of {', '.join(TARGETS)}") from None
