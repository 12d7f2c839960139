"""GPU memory layout of IR types (WGSL/std430 rules, which Slang and PTX follow here too).

A vec3 or vec4 aligns to 16 bytes, a vec2 to 8, a scalar to 4; matrices are column arrays
with 16-byte column stride. A struct aligns to its widest member and its stride rounds up
to that alignment: `{position: [f32; 3], uv: [f32; 2]}` packs into 20 host bytes but
occupies 32 on the GPU.
"""

from __future__ import annotations

from dataclasses import dataclass

from . import nodes as N
from . import types as T


@dataclass(frozen=True)
class FieldLayout:
    name: str
    ty: str
    offset: int
    size: int


@dataclass(frozen=True)
class StructLayout:
    name: str
    fields: tuple[FieldLayout, ...]
    align: int
    stride: int
    packed_size: int  # bytes with no padding at all (the host's tightly packed view)


def align_of(t: str) -> int:
    if T.is_scalar(t):
        return 4
    if T.is_vector(t):
        return 8 if T.vec_len(t) == 2 else 16
    if T.is_matrix(t):
        return 8 if T.vec_len(t) == 2 else 16
    raise ValueError(f"no standalone alignment for {t}")


def size_of(t: str) -> int:
    if T.is_scalar(t):
        return 4
    if T.is_vector(t):
        return 4 * T.vec_len(t)
    if T.is_matrix(t):
        n = T.vec_len(t)
        return n * (8 if n == 2 else 16)
    raise ValueError(f"no standalone size for {t}")


def packed_size_of(t: str) -> int:
    if T.is_matrix(t):
        return 4 * T.vec_len(t) ** 2
    return size_of(t)


def round_up(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def struct_layout(decl: N.StructDecl) -> StructLayout:
    offset = 0
    align = 4
    fields = []
    packed = 0
    for f in decl.fields:
        a = align_of(f.ty)
        offset = round_up(offset, a)
        fields.append(FieldLayout(f.name, f.ty, offset, size_of(f.ty)))
        offset += size_of(f.ty)
        align = max(align, a)
        packed += packed_size_of(f.ty)
    return StructLayout(decl.name, tuple(fields), align, round_up(offset, align), packed)
