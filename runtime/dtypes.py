"""Host numpy dtypes for IR element types, including the GPU layout of structs."""

from __future__ import annotations

from typing import Optional

import numpy as np

from goldy_import.ir import layout as L
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

SCALAR_DTYPES = {"u32": np.dtype("<u4"), "i32": np.dtype("<i4"), "f32": np.dtype("<f4"), "bool": np.dtype("<u4")}
_KIND_TO_IR = {("u", 4): "u32", ("i", 4): "i32", ("f", 4): "f32", ("b", 1): "bool"}


def scalar_ir_type(dtype: np.dtype) -> Optional[str]:
    """The IR element type of a plain numpy dtype (bool counts: it is stored as u32)."""
    return _KIND_TO_IR.get((dtype.kind, dtype.itemsize))


def field_ir_type(dtype: np.dtype) -> Optional[str]:
    """IR type of one structured-dtype field: a scalar, an (n,) vector or an (n, n) matrix."""
    base = scalar_ir_type(dtype.base)
    if base is None:
        return None
    shape = dtype.shape
    if shape == ():
        return base
    if base == "bool":
        return None  # bool vectors have no GPU form
    if len(shape) == 1 and shape[0] in (2, 3, 4):
        return T.vec(base, shape[0])
    if len(shape) == 2 and base == "f32" and shape[0] in (2, 3, 4) and shape[1] in (shape[0], 4):
        return T.mat(shape[0])
    return None


def _field_format(ty: str):
    if T.is_scalar(ty):
        return SCALAR_DTYPES[ty]
    if T.is_vector(ty):
        return (SCALAR_DTYPES[T.elem_of(ty)], (T.vec_len(ty),))
    n = T.vec_len(ty)
    # columns padded to their GPU stride (16 bytes for mat3/mat4, 8 for mat2)
    return (np.dtype("<f4"), (n, 2 if n == 2 else 4))


def struct_gpu_dtype(decl: N.StructDecl) -> np.dtype:
    """A structured dtype whose field offsets and itemsize are the GPU layout."""
    lay = L.struct_layout(decl)
    return np.dtype({
        "names": [f.name for f in lay.fields],
        "formats": [_field_format(f.ty) for f in lay.fields],
        "offsets": [f.offset for f in lay.fields],
        "itemsize": lay.stride,
    })


def struct_host_dtype(decl: N.StructDecl) -> np.dtype:
    """The tightly packed host dtype (what a user builds by hand without padding)."""
    fmts = []
    for f in decl.fields:
        if T.is_matrix(f.ty):
            n = T.vec_len(f.ty)
            fmts.append((f.name, "<f4", (n, n)))
        elif T.is_vector(f.ty):
            fmts.append((f.name, SCALAR_DTYPES[T.elem_of(f.ty)], (T.vec_len(f.ty),)))
        else:
            fmts.append((f.name, np.dtype("?") if f.ty == "bool" else SCALAR_DTYPES[f.ty]))
    return np.dtype(fmts)


def decl_from_dtype(dtype: np.dtype) -> Optional[N.StructDecl]:
    """Read a struct declaration off a structured dtype's field order and types."""
    if dtype.names is None:
        return None
    fields = []
    for name in dtype.names:
        ft = field_ir_type(dtype.fields[name][0])
        if ft is None:
            return None
        fields.append(N.StructField(name, ft, N.NO_SPAN))
    return N.StructDecl("?", fields, N.NO_SPAN)


def to_gpu_struct_array(arr: np.ndarray, gpu: np.dtype) -> np.ndarray:
    """Copy a structured array field by field into the GPU layout (padding zeroed)."""
    if arr.dtype == gpu:
        return np.ascontiguousarray(arr)
    out = np.zeros(arr.shape, dtype=gpu)
    for name in gpu.names:
        src = arr[name]
        dst = out[name]
        if dst.shape != src.shape:  # padded matrix columns
            dst[..., : src.shape[-1]] = src
        else:
            dst[...] = src
    return out
