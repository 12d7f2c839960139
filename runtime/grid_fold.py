"""Grids beyond a device's per-dimension workgroup cap (WebGPU: 65535 per axis).

The logical grid (gx, gy, gz) workgroups is numbered linearly, x fastest, and that line of
T = gx*gy*gz workgroups is laid out over a folded dispatch (dx, dy, dz), each within the cap.
The generated code (codegen/wgsl/emitter.py `fold_prologue`) computes the folded workgroup's
linear index `fx + dx*(fy + dy*fz)`, returns at once for the padding workgroups past T (a
whole workgroup: barriers stay uniform) and splits the index back over the logical grid, so
`workgroup_id()`, `num_workgroups()` and `global_id()` mean the logical grid. All of it in
u32: the folded grid must hold at most 2^32 workgroups, and each logical axis at most 2^32
threads (a `global_id()` component is a u32).
"""

from __future__ import annotations

import struct

from goldy_import.errors import GridError

U32 = 1 << 32


def needs_fold(groups: tuple[int, int, int], cap: tuple[int, int, int]) -> bool:
    return groups[0] > cap[0] or groups[1] > cap[1] or groups[2] > cap[2]


def fold_kind(groups: tuple[int, int, int]) -> str:
    """The emitter's `fold_grid` for this logical grid: "1d" for (n, 1, 1), whose workgroup
    id is the folded linear index itself, "nd" otherwise (split by divisions)."""
    return "1d" if groups[1] == 1 and groups[2] == 1 else "nd"


def fold(kernel: str, groups: tuple[int, int, int], workgroup_size: tuple[int, int, int],
         cap: int) -> tuple[int, int, int]:
    """The folded dispatch of a logical grid of `groups` workgroups, each axis within `cap`."""
    for axis, (g, w) in enumerate(zip(groups, workgroup_size)):
        if g * w > U32:
            raise GridError(f"kernel `{kernel}`: {g} workgroups of {w} threads along axis {'xyz'[axis]} exceed "
                            f"2^32 threads, the range of a u32 `global_id()`")
    total = groups[0] * groups[1] * groups[2]
    # a folding whose padding stays within u32: x near the cap first, then powers of two
    # (a count near 2^32 may only fit as 2^32 itself); a few candidates suffice
    top = min(total, cap)
    for dx in list(range(top, max(top - 64, 0), -1)) + [1 << k for k in range(top.bit_length() - 1, 0, -1)]:
        first = -(-total // (dx * cap))
        for dz in range(first, min(first + 8, cap) + 1):
            dy = -(-total // (dx * dz))
            if dy <= cap and dx * dy * dz <= U32:
                return (dx, dy, dz)
    raise GridError(f"kernel `{kernel}`: a grid of {groups} workgroups ({total} in all) cannot be folded into "
                    f"dispatch dimensions of at most {cap} with a u32 workgroup index")


def grid_words(groups: tuple[int, int, int], dispatched: tuple[int, int, int] | None = None) -> bytes:
    """The `gi_grid` uniform: the logical grid and the workgroup count of the grid before
    folding (`dispatched`: the batched entry's, codegen/wgsl/batch.py; else the logical one)."""
    d = dispatched or groups
    return struct.pack("<4I", groups[0], groups[1], groups[2], d[0] * d[1] * d[2])
