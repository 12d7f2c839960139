"""IR value types, spelled as short strings so they read well in JSON and snapshots.

    scalars   u32 i32 f32 bool
    vectors   vec2<f32> vec3<u32> vec4<i32> ...   (2 to 4 lanes of u32/i32/f32)
    matrices  mat2<f32> mat3<f32> mat4<f32>       (square, f32, column-major)
    structs   struct:Name                          (a #[goldy::gpu] struct)
    void      the type of nothing
"""

from __future__ import annotations

import re

SCALARS = ("u32", "i32", "f32", "bool")
INTS = ("u32", "i32")
NUMERIC = ("u32", "i32", "f32")
VOID = "void"

_VEC = re.compile(r"^vec([234])<(u32|i32|f32)>$")
_MAT = re.compile(r"^mat([234])<f32>$")


def vec(elem: str, n: int) -> str:
    return f"vec{n}<{elem}>"


def mat(n: int) -> str:
    return f"mat{n}<f32>"


def struct(name: str) -> str:
    return f"struct:{name}"


def is_scalar(t: str) -> bool:
    return t in SCALARS


def is_int(t: str) -> bool:
    return t in INTS


def is_float(t: str) -> bool:
    return t == "f32"


# Answers per type string, found once: every pass and emitter asks these per node.
_IS_VEC: dict[str, bool] = {}
_IS_MAT: dict[str, bool] = {}
_ELEM: dict[str, str] = {}


def is_vector(t: str) -> bool:
    r = _IS_VEC.get(t)
    if r is None:
        r = _IS_VEC[t] = _VEC.match(t) is not None
    return r


def is_matrix(t: str) -> bool:
    r = _IS_MAT.get(t)
    if r is None:
        r = _IS_MAT[t] = _MAT.match(t) is not None
    return r


def is_struct(t: str) -> bool:
    return t.startswith("struct:")


def struct_name(t: str) -> str:
    return t[len("struct:"):]


def vec_len(t: str) -> int:
    m = _VEC.match(t) or _MAT.match(t)
    if not m:
        raise ValueError(f"not a vector or matrix type: {t}")
    return int(m.group(1))


def elem_of(t: str) -> str:
    """Lane type of a vector or matrix; a scalar is its own lane type."""
    r = _ELEM.get(t)
    if r is None:
        m = _VEC.match(t)
        r = _ELEM[t] = m.group(2) if m else "f32" if _MAT.match(t) else t
    return r


def is_valid(t: str) -> bool:
    return is_scalar(t) or is_vector(t) or is_matrix(t) or (is_struct(t) and len(t) > 7)


def rust_name(t: str) -> str:
    """How a type is written in the Rust dialect, for diagnostics."""
    m = _VEC.match(t)
    if m:
        return f"[{m.group(2)}; {m.group(1)}]"
    m = _MAT.match(t)
    if m:
        return f"[[f32; {m.group(1)}]; {m.group(1)}]"
    if is_struct(t):
        return struct_name(t)
    if t == VOID:
        return "()"
    return t


INT_RANGES = {"u32": (0, 2**32 - 1), "i32": (-(2**31), 2**31 - 1)}
