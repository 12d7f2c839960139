"""Run-time support for the Python that codegen.cpu emits: the lane geometry of one chunk
of a dispatch, and the numpy helpers generated code calls (`rt.ld`, `rt.m_and`, ...).

Lanes of a chunk form a (W, S) grid: W whole workgroups, S threads per workgroup in linear
local order. A value is a numpy scalar (the same on every lane), or an array broadcastable
to (W, S): (W, 1) per workgroup, (1, S) per local lane, (W, S) per thread. Keeping values
in their smallest shape is what makes collectives and per-workgroup stores cheap.

Masks (which lanes are active): None = every lane, FALSE = none, or a bool array.
Exit flags (lanes that returned / broke / continued): FALSE = none, TRUE = all, or an array.
Helpers never modify their inputs in place: arrays may be shared between variables.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np

from .loops import Span, Sparse, accumulate, iteration_blocks, lane_shape, uniform_trips  # noqa: F401 (reduction loops in one pass)
from .math import evaluate as evaluate_math, evaluate_rule
from .transposed import transposed

TRUE = np.True_
FALSE = np.False_
_U0 = np.uint32(0)

# ---------------------------------------------------------------- layout of values


def components(ty: str, structs: dict) -> list[tuple[str, str]]:
    """(name suffix, scalar type) of each scalar a value of IR type `ty` is made of:
    vectors by lane, matrices column-major, structs field by field."""
    from goldy_import.ir import types as T
    if T.is_scalar(ty):
        return [("", ty)]
    if T.is_vector(ty):
        return [("_" + "xyzw"[i], T.elem_of(ty)) for i in range(T.vec_len(ty))]
    if T.is_matrix(ty):
        n = T.vec_len(ty)
        return [(f"_c{c}{r}", "f32") for c in range(n) for r in range(n)]
    from goldy_import.codegen.names import ascii_ident
    fields = structs[T.struct_name(ty)].fields
    out = [("__" + ascii_ident(f.name) + s, t) for f in fields for s, t in components(f.ty, structs)]
    if len({s for s, _ in out}) < len(out):  # `a: Vec2` (a_x, a_y) and `a_x` meet: number the fields
        out = [(f"__{i}" + s, t) for i, f in enumerate(fields) for s, t in components(f.ty, structs)]
    return out


def component_offsets(ty: str, structs: dict) -> list[int]:
    """Byte offset of each component (in `components` order) in the GPU layout."""
    from goldy_import.ir import layout as L
    from goldy_import.ir import types as T
    if T.is_scalar(ty):
        return [0]
    if T.is_vector(ty):
        return [4 * i for i in range(T.vec_len(ty))]
    if T.is_matrix(ty):
        n = T.vec_len(ty)
        col = 8 if n == 2 else 16
        return [c * col + 4 * r for c in range(n) for r in range(n)]
    out = []
    for f in L.struct_layout(structs[T.struct_name(ty)]).fields:
        out += [f.offset + o for o in component_offsets(f.ty, structs)]
    return out


DTYPES = {"u32": np.dtype("<u4"), "i32": np.dtype("<i4"), "f32": np.dtype("<f4"), "bool": np.dtype("<u4")}

# ---------------------------------------------------------------- geometry

_AR = np.arange(1 << 16, dtype=np.uint32)


def _ar(n: int) -> np.ndarray:
    """0..n-1 as u32 (a shared read-only view)."""
    global _AR
    if n > _AR.shape[0]:
        _AR = np.arange(max(n, 2 * _AR.shape[0]), dtype=np.uint32)
        _AR.flags.writeable = False
    return _AR[:n]


_AR.flags.writeable = False


class Geometry:
    """Lanes of workgroups [w0, w0 + W) of a dispatch (linear workgroup index, x fastest).

    Builtins are computed on first use and kept, so a geometry reused across submits of a
    small dispatch costs nothing after the first."""

    def __init__(self, wg: tuple, groups: tuple, w0: int, W: int, pool: dict = None):
        self.pool = {} if pool is None else pool  # workgroup arrays, reused chunk to chunk
        self.wx, self.wy, self.wz = wg
        self.gx, self.gy, self.gz = groups
        self.S = self.wx * self.wy * self.wz
        self.W, self.w0 = W, w0
        self.T = W * self.S
        self.t0 = w0 * self.S
        self.wg1d = self.wy == 1 and self.wz == 1
        # lane k of the chunk is thread t0 + k along x: buffer[global_id().x] is a slice
        self.lin1d = self.wg1d and self.gy == 1 and self.gz == 1
        # lane order is the global linear thread order (x, then y, then z) that atomics follow
        self.ordered = self.wg1d
        self._wg_off: dict = {}

    # local ids: (1, S), or a scalar 0 on an axis of extent 1
    @cached_property
    def lid_lin(self):
        return _ar(self.S).reshape(1, self.S)

    @cached_property
    def lid_x(self):
        return self.lid_lin if self.wg1d else self.lid_lin % np.uint32(self.wx)

    @cached_property
    def lid_y(self):
        return _U0 if self.wy == 1 else (self.lid_lin // np.uint32(self.wx)) % np.uint32(self.wy)

    @cached_property
    def lid_z(self):
        return _U0 if self.wz == 1 else self.lid_lin // np.uint32(self.wx * self.wy)

    # workgroup ids: (W, 1), or a scalar 0 on an axis with one workgroup
    @cached_property
    def _wl(self):
        return (np.arange(self.W, dtype=np.int64) + self.w0).reshape(self.W, 1)

    @cached_property
    def wgid_x(self):
        if self.gy == 1 and self.gz == 1:
            return self._wl.astype(np.uint32)
        return (self._wl % self.gx).astype(np.uint32)

    @cached_property
    def wgid_y(self):
        return _U0 if self.gy == 1 else ((self._wl // self.gx) % self.gy).astype(np.uint32)

    @cached_property
    def wgid_z(self):
        return _U0 if self.gz == 1 else (self._wl // (self.gx * self.gy)).astype(np.uint32)

    @cached_property
    def gid_x(self):
        if self.lin1d:
            return (np.uint32(self.t0 & 0xFFFFFFFF) + _ar(self.T)).reshape(self.W, self.S)
        return self.wgid_x * np.uint32(self.wx) + self.lid_x

    @cached_property
    def gid_y(self):
        return self.wgid_y * np.uint32(self.wy) + self.lid_y

    @cached_property
    def gid_z(self):
        return self.wgid_z * np.uint32(self.wz) + self.lid_z

    @cached_property
    def nwg_x(self):
        return np.uint32(self.gx)

    @cached_property
    def nwg_y(self):
        return np.uint32(self.gy)

    @cached_property
    def nwg_z(self):
        return np.uint32(self.gz)

    @cached_property
    def wgs_x(self):
        return np.uint32(self.wx)

    @cached_property
    def wgs_y(self):
        return np.uint32(self.wy)

    @cached_property
    def wgs_z(self):
        return np.uint32(self.wz)

    @cached_property
    def lin(self):
        """Global linear thread index of every lane (int64, (W, S)): the atomics order."""
        X, Y = self.gx * self.wx, self.gy * self.wy
        g = [np.asarray(a, dtype=np.int64) for a in (self.gid_x, self.gid_y, self.gid_z)]
        return np.broadcast_to(g[0] + g[1] * X + g[2] * (X * Y), (self.W, self.S))

    def wg_array(self, key: int, size: int, dtype) -> np.ndarray:
        """Workgroup array `key`: one row of `size` per workgroup. Its contents are undefined
        until written, so the allocation is kept and reused by later chunks and submits."""
        a = self.pool.get((key, self.W))
        if a is None:
            a = self.pool[(key, self.W)] = np.zeros((self.W, size), dtype)
        return a

    def wg_off(self, size: int) -> np.ndarray:
        """Flat offset of each lane's workgroup row in a (W, size) workgroup array."""
        off = self._wg_off.get(size)
        if off is None:
            off = self._wg_off[size] = (np.arange(self.W, dtype=np.intp) * size).reshape(self.W, 1)
        return off


def chunks(wg: tuple, groups: tuple, target: int, atomics: bool = True):
    """(w0, W) chunks of whole workgroups, about `target` threads each. With `atomics`, in an
    order that keeps them in global thread order: with a 2-D/3-D workgroup a chunk then holds
    whole rows/slabs of workgroups, because thread order interleaves a row's workgroups."""
    S = wg[0] * wg[1] * wg[2]
    gx, gy, gz = groups
    total = gx * gy * gz
    unit = 1 if (not atomics or (wg[1] == 1 and wg[2] == 1)) else (gx if wg[2] == 1 else gx * gy)
    per = max(unit, (max(1, target // S) // unit) * unit)
    for w0 in range(0, total, per):
        yield w0, min(per, total - w0)


# ---------------------------------------------------------------- masks


def m_and(m, c):
    """Lanes of mask `m` where condition `c` holds."""
    if np.ndim(c) == 0:
        return m if c else FALSE
    if m is None:
        return None if c.all() else c
    if m is FALSE:
        return FALSE
    return m & c


def m_andnot(m, c):
    """Lanes of mask `m` where `c` does not hold."""
    if np.ndim(c) == 0:
        return FALSE if c else m
    if m is None:
        r = ~c
        return None if r.all() else r
    if m is FALSE:
        return FALSE
    return m & ~c


def m_exit(m, *flags):
    """Mask `m` without the lanes that left (return / break / continue flags)."""
    for f in flags:
        m = m_andnot(m, f)
    return m


def m_any(m) -> bool:
    return m is None or bool(m.any())


def f_or(f, m):
    """Exit flag `f` plus the lanes of mask `m`."""
    if m is None:
        return TRUE
    if np.ndim(f) == 0:
        return TRUE if f else m
    return f | m


def sel(m, new, old):
    """`new` on the lanes of `m`, `old` elsewhere."""
    if m is None:
        return new
    if m is FALSE:
        return old
    return np.where(m, new, old)


# ---------------------------------------------------------------- trapping checks
# A checked access or division gets `chk = (faults, site, mask, guards)`: the dispatch's
# Faults, the check's site id (ir/checks.py), the statement's mask and the conditions of
# enclosing `&&`/`||` (a GPU short-circuits them, so lanes where they fail never evaluate
# the access). Only lanes active under all of them can fault. The failing access itself is
# suppressed as usual (load 0, store dropped, quotient 0) and the lane carries on.


class Faults:
    """The first failed check of one dispatch, as (site, index, length, index_y)."""

    __slots__ = ("hit",)

    def __init__(self):
        self.hit = None


def _trap(chk, bad, idx, length: int, idx_y=None) -> None:
    """Record the first active lane of `bad` (lane order), unless a fault is recorded."""
    F, site, m, guards = chk
    if F.hit is not None:
        return
    act = bad if m is None else bad & m
    for g in guards:
        act = act & g
    if not act.any():
        return
    shape = np.broadcast_shapes(np.shape(act), np.shape(idx), np.shape(idx_y))
    pos = int(np.argmax(_bc(act, shape))) if shape else 0

    def pick(x):
        return int(_bc(x, shape).flat[pos]) if shape else int(x)

    F.hit = (site, pick(idx), int(length), None if idx_y is None else pick(idx_y))


# ---------------------------------------------------------------- buffers
# Loads out of range give 0; stores out of range are dropped. (Values are numpy scalars or
# arrays, never Python numbers, so `.ndim` and `.shape` always exist.)


def _bc(x, shape: tuple):
    """`x` broadcast to `shape` (itself when it has that shape: np.broadcast_to is slow)."""
    return x if np.shape(x) == shape else np.broadcast_to(x, shape)


def ld(a: np.ndarray, i, chk=None):
    n = a.shape[0]
    if i.ndim == 0:
        if i < n:
            return a[i]
        if chk is not None:
            _trap(chk, TRUE, i, n)
        return a.dtype.type(0)
    if n == 0:
        if chk is not None:
            _trap(chk, TRUE, i, n)
        return np.zeros(i.shape, a.dtype)
    out = a.take(i, mode="clip")
    bad = i >= n
    if bad.any():
        out[bad] = 0
        if chk is not None:
            _trap(chk, bad, i, n)
    return out


def ld_lin(a: np.ndarray, G: Geometry, chk=None):
    """`a[global_id().x]`: a slice when the dispatch is 1-D (a view: callers copy it before
    binding it to a variable if `a` is written by the kernel)."""
    if not G.lin1d:
        return ld(a, G.gid_x, chk)
    t0, t1, n = G.t0, G.t0 + G.T, a.shape[0]
    if t1 <= n:
        return a[t0:t1].reshape(G.W, G.S)
    if chk is not None:
        _trap(chk, G.gid_x >= n, G.gid_x, n)
    out = np.zeros(G.T, a.dtype)
    if t0 < n:
        out[: n - t0] = a[t0:n]
    return out.reshape(G.W, G.S)


def _flat_along(shape: tuple, ax: int) -> bool:
    return len(shape) == 0 or shape[ax] == 1


def _fold_mask(m, i, v, axes=(0, 1)):
    """Lanes along an axis on which neither index nor value varies all write the same
    element with the same value: one active lane there is as good as all of them."""
    if m is None or m.ndim != 2:
        return m
    ish, vsh = i.shape, v.shape
    fold = tuple(ax for ax in axes if m.shape[ax] > 1 and _flat_along(ish, ax) and _flat_along(vsh, ax))
    if not fold:
        return m
    m = m.any(axis=fold, keepdims=True)
    return None if m.all() else m


def st(a: np.ndarray, i, v, m, chk=None) -> None:
    if m is FALSE:
        return
    m = _fold_mask(m, i, v)
    n = a.shape[0]
    ish, vsh = i.shape, v.shape
    if ish == () and (m is None or vsh == ()):
        if i < n:
            if m is None or m.any():
                a[i] = v if vsh == () else v.reshape(-1)[-1]  # every lane writes here: the last wins
        elif chk is not None:
            _trap(chk, TRUE, i, n)
        return
    if m is None and (vsh == ish or vsh == ()):  # the common cases, without broadcasting
        ok = i < n
        if ok.all():
            a[i] = v
            return
        if chk is not None:
            _trap(chk, ~ok, i, n)
        a[i[ok]] = v[ok] if vsh else v
        return
    shape = np.broadcast_shapes(ish, vsh, () if m is None else m.shape)
    ib = _bc(i, shape)
    inside = ib < n
    if chk is not None and not inside.all():
        _trap(chk, ~inside, ib, n)
    ok = inside if m is None else inside & m
    vb = _bc(v, shape)
    if ok.all():
        a[ib.reshape(-1)] = vb.reshape(-1)
    else:
        a[ib[ok]] = vb[ok]


def st_lin(a: np.ndarray, G: Geometry, v, m, chk=None, off=None) -> None:
    """`a[global_id().x] = v`, or `a[off + global_id().x] = v` (u32 `off`, the same on
    every lane): a slice assignment when the dispatch is 1-D (and no index wraps)."""
    if m is FALSE:
        return
    if not G.lin1d or (off is not None and int(off) + G.t0 + G.T > 1 << 32):
        st(a, G.gid_x if off is None else off + G.gid_x, v, m, chk)
        return
    t0, n = G.t0 if off is None else int(off) + G.t0, a.shape[0]
    k = min(G.T, n - t0)
    if k < G.T and chk is not None:
        i = G.gid_x if off is None else off + G.gid_x
        _trap(chk, i >= n, i, n)
    if k <= 0:
        return
    if k == G.T:
        dst = a[t0:t0 + k].reshape(G.W, G.S)
        if m is None:
            dst[...] = v
        else:
            np.copyto(dst, v, where=m)
        return
    vb = _bc(v, (G.W, G.S)).reshape(-1)[:k]
    if m is None:
        a[t0:t0 + k] = vb
    else:
        np.copyto(a[t0:t0 + k], vb, where=_bc(m, (G.W, G.S)).reshape(-1)[:k])


def ld_n(comps: tuple, i, chk=None) -> tuple:
    """Several component arrays (a struct's fields, a vector's lanes) at index `i`."""
    n = comps[0].shape[0]
    if i.ndim == 0:
        if i < n:
            return tuple(c[i] for c in comps)
        if chk is not None:
            _trap(chk, TRUE, i, n)
        return tuple(c.dtype.type(0) for c in comps)
    bad = i >= n
    anybad = bool(bad.any())
    if anybad and chk is not None:
        _trap(chk, bad, i, n)
    if n == 0:
        return tuple(np.zeros(i.shape, c.dtype) for c in comps)
    ii = np.where(bad, 0, i) if anybad else i
    out = []
    for c in comps:
        x = c.take(ii)
        if anybad:
            x[bad] = 0
        out.append(x)
    return tuple(out)


def ld_n_lin(comps: tuple, G: Geometry, chk=None) -> tuple:
    if not G.lin1d:
        return ld_n(comps, G.gid_x, chk)
    return (ld_lin(comps[0], G, chk),) + tuple(ld_lin(c, G) for c in comps[1:])


def st_n(comps: tuple, i, vs: tuple, m, chk=None) -> None:
    for k, (c, v) in enumerate(zip(comps, vs)):
        st(c, i, v, m, chk if k == 0 else None)


class Strided:
    """A tensor view that is not row-major contiguous: logical index -> element offset by
    delinearising through the shape and applying the strides."""

    __slots__ = ("data", "off", "dims", "strides", "numel")

    def __init__(self, data: np.ndarray, off: int, dims: tuple, strides: tuple, numel: int):
        self.data, self.off, self.dims, self.strides, self.numel = data, off, dims, strides, numel

    def offsets(self, i):
        """Element offsets for logical indices `i`, past the data's end where out of range."""
        rem = np.asarray(i, dtype=np.int64)
        ok = rem < self.numel
        off = np.full(rem.shape, self.off, dtype=np.int64)
        for d, s in zip(reversed(self.dims), reversed(self.strides)):
            d = max(d, 1)
            off = off + (rem % d) * s
            rem = rem // d
        ok = ok & (off < self.data.shape[0])
        return np.where(ok, off, self.data.shape[0])[()], ok


def ld_t(t, i, chk=None):
    if type(t) is not Strided:
        return ld(t, i, chk)
    off, ok = t.offsets(i)
    if chk is not None and not np.all(ok):
        _trap(chk, ~ok, i, t.numel)
    return ld(t.data, off)


def ld_t_lin(t, G: Geometry, chk=None):
    return ld_lin(t, G, chk) if type(t) is not Strided else ld_t(t, G.gid_x, chk)


def st_t(t, i, v, m, chk=None) -> None:
    if type(t) is not Strided:
        st(t, i, v, m, chk)
        return
    off, ok = t.offsets(i)
    if chk is not None and not np.all(ok):
        _trap(chk, ~ok, i, t.numel)
    st(t.data, off, v, m)


def st_t_lin(t, G: Geometry, v, m, chk=None) -> None:
    if type(t) is not Strided:
        st_lin(t, G, v, m, chk)
    else:
        st_t(t, G.gid_x, v, m, chk)


def tdim(dims: np.ndarray, axis):
    """`.dim(axis)` of a tensor (0 past the fourth axis)."""
    return ld(dims, axis)


_OUT = 1 << 62  # an index past the end of any buffer


def _texel(w: int, h: int, x, y, chk):
    """Flat texel index of (x, y), or an out-of-range index outside the image."""
    x = np.asarray(x, dtype=np.int64)
    y = np.asarray(y, dtype=np.int64)
    inside = (x < w) & (y < h)
    if chk is not None and not np.all(inside):
        _trap(chk, ~inside, x, w, y)
    return np.where(inside, y * w + x, _OUT)[()]


def ld_img(comps: tuple, w: int, h: int, x, y, chk=None) -> tuple:
    return ld_n(comps, _texel(w, h, x, y, chk))


def st_img(comps: tuple, w: int, h: int, x, y, vs: tuple, m, chk=None) -> None:
    st_n(comps, _texel(w, h, x, y, chk), vs, m)


# ---------------------------------------------------------------- workgroup memory
# A workgroup array is a (W, size) array: one row per workgroup of the chunk.


def ld_w(a: np.ndarray, G: Geometry, i, chk=None):
    size = a.shape[1]
    if i.ndim == 0:
        if i < size:
            return a[:, i:i + 1].copy()
        if chk is not None:
            _trap(chk, TRUE, i, size)
        return a.dtype.type(0)
    ok = i < size
    flat = G.wg_off(size) + np.where(ok, i, 0)
    out = a.reshape(-1).take(flat)
    if not ok.all():
        if chk is not None:
            _trap(chk, ~ok, i, size)
        out = np.where(ok, out, a.dtype.type(0))
    return out


def ld_w_lid(a: np.ndarray, G: Geometry, chk=None):
    """`a[local_id().x]` with a 1-D workgroup: the array's first S columns (a view)."""
    if a.shape[1] >= G.S:
        return a[:, :G.S]
    return ld_w(a, G, G.lid_x, chk)


def st_w(a: np.ndarray, G: Geometry, i, v, m, chk=None) -> None:
    if m is FALSE:
        return
    m = _fold_mask(m, i, v, axes=(1,))  # never across workgroups: they own different rows
    size = a.shape[1]
    if m is None and i.ndim == 0:
        if i < size:
            a[:, i] = v if v.ndim == 0 else np.broadcast_to(v, (G.W, G.S))[:, -1]
        elif chk is not None:
            _trap(chk, TRUE, i, size)
        return
    shape = np.broadcast_shapes((G.W, 1), i.shape, v.shape, () if m is None else m.shape)
    ib = np.broadcast_to(i, shape)
    inside = ib < size
    if chk is not None and not inside.all():
        _trap(chk, ~inside, ib, size)
    ok = inside if m is None else inside & m
    flat = np.broadcast_to(G.wg_off(size), shape) + np.where(ok, ib, 0)
    a.reshape(-1)[flat[ok]] = np.broadcast_to(v, shape)[ok]


def st_w_lid(a: np.ndarray, G: Geometry, v, m, chk=None) -> None:
    if a.shape[1] < G.S:
        st_w(a, G, G.lid_x, v, m, chk)
    elif m is None:
        a[:, :G.S] = v
    elif m is not FALSE:
        np.copyto(a[:, :G.S], v, where=m)


def _cols(x, k: int):
    return x[:, :k] if np.ndim(x) == 2 and x.shape[1] > k else x


def reduce(sc: np.ndarray, G: Geometry, n: int, v, m, op, keep: bool = True):
    """`workgroup_sum/max::<n>(v, sc)`: lane l writes sc[l] = v, then for s = 0, 1, ...
    lane l (l % 2^(s+1) == 0) sets sc[l] = op(sc[l], sc[l + 2^s]); every lane gets sc[0].
    Each step is one elementwise op over all workgroups, so float sums round exactly as on
    a GPU running the same tree. Returns a (W, 1) per-workgroup value.

    `keep`: the kernel reads `sc` itself, so leave it holding what the in-place tree leaves
    there. Otherwise nobody can observe sc, and the tree runs on compact half-width copies
    (same pairs, same roundings, about 3x faster)."""
    k = min(G.S, sc.shape[1])
    if keep or m is not None or k < n:
        if m is None:
            sc[:, :k] = _cols(v, k)
        elif m is not FALSE:
            np.copyto(sc[:, :k], _cols(v, k), where=_cols(m, k))
        if keep:
            h = 1
            while h < n:
                lo = sc[:, 0:n:2 * h]
                op(lo, sc[:, h:n:2 * h], out=lo)
                h *= 2
            return sc[:, 0:1].copy()
        x = sc[:, :n]
    else:
        x = v if v.shape == (G.W, G.S) else np.broadcast_to(v, (G.W, G.S))
        if n < G.S:
            x = x[:, :n]
    if x.dtype.kind == "f":  # the tree's pairs in order: sums round, and f32::max keeps the later of
        while x.shape[1] > 1:  # equals (np.fmax elementwise does; its reduce regroups, a zero's sign then moves)
            x = op(x[:, 0::2], x[:, 1::2])
        return x if x.base is None else x.copy()
    # integer maxima and wrapping integer sums do not depend on the order
    return op.reduce(x, axis=1, keepdims=True, dtype=x.dtype)


def atomic_add(a: np.ndarray, G: Geometry, i, v, m, want_old: bool, chk=None):
    """`atomic_add(a, i, v)` on every active lane, applied in increasing global thread index;
    returns each lane's previous value (wrapping u32/i32 adds)."""
    shape = (G.W, G.S)
    n = a.shape[0]
    ib = np.broadcast_to(i, shape)
    inside = ib < n
    if chk is not None and not inside.all():
        _trap(chk, ~inside, ib, n)
    if m is FALSE:
        ok = np.zeros(shape, bool)
    else:
        ok = inside if m is None else inside & m
    ib = ib.reshape(-1)
    lanes = np.flatnonzero(ok)
    if not G.ordered and lanes.size:
        lanes = lanes[np.argsort(G.lin.reshape(-1)[lanes], kind="stable")]
    au = a.view(np.uint32)
    idx = ib[lanes].astype(np.intp)
    val = np.broadcast_to(v, shape).reshape(-1)[lanes].view(np.uint32)
    if not want_old:
        np.add.at(au, idx, val)
        return None
    old = np.zeros(G.T, np.uint32)
    if lanes.size:
        # sort by element (stably: thread order within an element), then a segmented
        # exclusive prefix sum gives each lane the value its add found
        key = idx.astype(np.uint16) if n <= 1 << 16 else idx
        order = np.argsort(key, kind="stable")
        si, sv = idx[order], val[order]
        incl = np.cumsum(sv, dtype=np.uint32)
        excl = incl - sv
        start = np.empty(si.shape[0], bool)
        start[0] = True
        np.not_equal(si[1:], si[:-1], out=start[1:])
        seg = np.cumsum(start) - 1
        starts = np.flatnonzero(start)
        ends = np.append(starts[1:], si.shape[0]) - 1
        cur = au[si[starts]]
        old[lanes[order]] = cur[seg] + (excl - excl[starts][seg])
        au[si[starts]] = cur + (incl[ends] - excl[starts])
    return old.reshape(shape).view(a.dtype)


_RMW = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum, "and": np.bitwise_and,
        "or": np.bitwise_or, "xor": np.bitwise_xor}


def atomic(op: str, a: np.ndarray, G: Geometry, i, v, m, want_old: bool, wg: bool, chk=None, cmp=None):
    """`atomic_<op>(a, i, v)` (ir/nodes.py ATOMIC_OPS) on every active lane, one lane after
    another in increasing global thread index; returns each lane's previous value. `wg`: `a`
    is a workgroup array, one row per workgroup. Integers wrap; f32 adds round in that order."""
    shape = (G.W, G.S)
    n = a.shape[1] if wg else a.shape[0]
    ib = np.broadcast_to(i, shape)
    inside = ib < n
    if chk is not None and not inside.all():
        _trap(chk, ~inside, ib, n)
    ok = np.zeros(shape, bool) if m is FALSE else inside if m is None else inside & m
    lanes = np.flatnonzero(ok)
    if not G.ordered and lanes.size:
        lanes = lanes[np.argsort(G.lin.reshape(-1)[lanes], kind="stable")]
    flat = a.reshape(-1)
    idx = ib.reshape(-1)[lanes].astype(np.intp)
    if wg:
        idx = idx + np.broadcast_to(G.wg_off(n), shape).reshape(-1)[lanes]
    val = np.broadcast_to(np.asarray(v, a.dtype), shape).reshape(-1)[lanes]
    with np.errstate(over="ignore"):
        if not want_old and op in _RMW:
            _RMW[op].at(flat, idx, val)  # unbuffered, in the order given
            return None
        old = np.zeros(G.T, a.dtype)
        c = np.broadcast_to(np.asarray(cmp, a.dtype), shape).reshape(-1)[lanes] if cmp is not None else None
        fn = _RMW.get(op)
        for k in range(lanes.size):
            j, x = idx[k], val[k]
            o = flat[j]
            old[lanes[k]] = o
            flat[j] = fn(o, x) if fn is not None else x if op == "exchange" or o == c[k] else o
    return old.reshape(shape) if want_old else None


# ---------------------------------------------------------------- arithmetic


def _zero_divisor(b, chk) -> None:
    if chk is not None and chk[0].hit is None:
        z = b == 0
        if z.any():
            _trap(chk, z, _U0, 0)


def _rule(name: str):
    def g(*xs):
        return evaluate_rule(name, *xs)
    g.__name__ = name
    g.__doc__ = f"ir/rules.py's `{name}`: the same function as on every GPU backend."
    return g


_div_i32, _rem_i32, _div_u32, _rem_u32 = (_rule(n) for n in ("div_i32", "rem_i32", "div_u32", "rem_u32"))


def idiv(a, b, chk=None):
    """i32 `/` (ir/rules.py): truncates toward zero; x / 0 = 0; i32::MIN / -1 = i32::MIN.
    A trapping check records a zero divisor first."""
    _zero_divisor(b, chk)
    return _div_i32(a, b)


def irem(a, b, chk=None):
    """i32 `%` (sign of the dividend); x % 0 = 0."""
    _zero_divisor(b, chk)
    return _rem_i32(a, b)


def udiv(a, b, chk=None):
    if b.ndim == 0 and b:  # a uniform nonzero divisor: the rule is plain u32 division
        return a // b
    _zero_divisor(b, chk)
    return _div_u32(a, b)


def urem(a, b, chk=None):
    if b.ndim == 0 and b:
        return a % b
    _zero_divisor(b, chk)
    return _rem_u32(a, b)


# the rest of Rust's rules the generated code calls by these names
f2i, f2u, i2f, u2f = (_rule(n) for n in ("f32_to_i32", "f32_to_u32", "i32_to_f32", "u32_to_f32"))
shl_u32, shl_i32, shr_u32, shr_i32 = (_rule(n) for n in ("shl_u32", "shl_i32", "shr_u32", "shr_i32"))
abs_i32, abs_f32, round_away = _rule("abs_i32"), _rule("abs_f32"), _rule("round_f32")
fmin, fmax, fclamp = _rule("min_f32"), _rule("max_f32"), _rule("clamp_f32")


def fma(a, b, c):
    """Correctly rounded a * b + c in f32. The product of two f32 is exact in f64; the sum
    is rounded to f64 *to odd* (TwoSum recovers the error; an inexact even result steps one
    ulp toward the exact value), and round-to-odd at 53 bits followed by round-to-nearest
    at 24 bits is a correct rounding (53 >= 24 + 2). A plain f64 sum could double-round."""
    p = np.asarray(a, dtype=np.float64) * np.asarray(b, dtype=np.float64)
    c = np.asarray(c, dtype=np.float64)
    s = p + c
    bb = s - p
    err = (p - (s - bb)) + (c - bb)
    bits = s.view(np.int64)
    fix = (err != 0) & ((bits & 1) == 0) & np.isfinite(s)
    if np.any(fix):
        step = np.where((err > 0) == (s > 0), 1, -1)
        s = np.where(fix, bits + step, bits).view(np.float64)
    return s.astype(np.float32)[()]


def on_lanes(m, fn, *xs):
    """`fn(*xs)` (a math library function) on the lanes of mask `m`, computed on those lanes
    alone where few are active (`SPARSE_LANES`), 0 on the others: what a value holds on a
    lane outside the statement's mask is never read (selects, stores, collectives and
    checks all take the mask)."""
    if m is None or np.ndim(m) != 2 or all(np.ndim(x) == 0 for x in xs):  # uniform values stay scalars
        return fn(*xs)
    active = np.count_nonzero(m)
    if active * SPARSE_LANES > m.size:
        return fn(*xs)
    shapes = [np.shape(x) for x in xs]
    if any(len(sh) > 2 for sh in shapes):  # an iteration block (a one-pass loop's terms)
        return fn(*xs)
    shape = lane_shape([m.shape] + shapes)
    out = np.zeros(shape, np.float32)
    if active:
        on = np.flatnonzero(m if m.shape == shape else np.broadcast_to(m, shape))
        picks = [x if np.ndim(x) == 0 else np.broadcast_to(x, shape).reshape(-1)[on] for x in xs]
        out.reshape(-1)[on] = fn(*picks)
    return out


def _mathlib(name: str):
    def g(*xs):
        return evaluate_math(name, *xs)[()]
    g.__name__ = name
    g.__doc__ = f"f32 {name}: ir/mathlib.py's sequence, the same bits as every GPU backend."
    return g


def rule(name: str, *xs):
    """ir/rules.py's `name` (an intrinsic call of ir/rules.py CALLS): as on every GPU backend."""
    return evaluate_rule(name, *xs)


sin, cos, tan = _mathlib("sin"), _mathlib("cos"), _mathlib("tan")
exp, exp2, log, log2 = _mathlib("exp"), _mathlib("exp2"), _mathlib("log"), _mathlib("log2")
pow = _mathlib("pow")
tanh, atan2, hypot = _mathlib("tanh"), _mathlib("atan2"), _mathlib("hypot")


def from_bits(x):
    return np.asarray(x, dtype=np.uint32).view(np.float32)[()]


def to_bits(x):
    return np.asarray(x, dtype=np.float32).view(np.uint32)[()]


def cmp_lin(G: Geometry, n, op: str):
    """`global_id().x <op> n` for a uniform n: decided for the whole chunk at once when the
    dispatch is 1-D and every lane agrees (no thread-index array is built)."""
    if G.lin1d and np.ndim(n) == 0:
        lo, hi, n = G.t0, G.t0 + G.T - 1, int(n)
        if op == "lt":
            if hi < n:
                return TRUE
            if lo >= n:
                return FALSE
        elif op == "le":
            if hi <= n:
                return TRUE
            if lo > n:
                return FALSE
        elif op == "gt":
            if lo > n:
                return TRUE
            if hi <= n:
                return FALSE
        elif op == "ge":
            if lo >= n:
                return TRUE
            if hi < n:
                return FALSE
    return _CMP[op](G.gid_x, n)


_CMP = {"lt": np.less, "le": np.less_equal, "gt": np.greater, "ge": np.greater_equal}


def ld_span(a: np.ndarray, base, J: np.ndarray, chk=None, m=None):
    """`a[base + J]` (rt.ld's meaning, checks included) for lane-invariant-in-J `base` (u32,
    (W, S)) and an iteration block J (k, 1, 1), as a (k, W, S) array: `span`'s view of `a`
    where every lane's run is in range, else its parts put together."""
    r = span(a, base, J, chk, m)
    if isinstance(r, Sparse):
        return r.dense()
    return r.rows(0, r.shape[1]) if isinstance(r, Span) else r


def span(a: np.ndarray, base, J: np.ndarray, chk=None, m=None):
    """`ld_span` for rt.accumulate: where `base` steps by a constant d >= 0 from lane to lane
    (row-major GEMV rows: base = i * n), a Span: the runs of the lanes in range as a strided
    view of `a` (no copy), the lanes past the end through rt.ld's rules (0, and a trap on
    active lanes, now: in statement order). Otherwise rt.ld's gather (`_ld_lanes`: only on
    the lanes of the loop's mask `m` where few are active)."""
    if np.ndim(base) != 2 or base.dtype != np.uint32 or a.ndim != 1:
        return _ld_lanes(a, base, J, chk, m)
    flat = base.reshape(-1)
    size, k, n, j0 = flat.size, J.shape[0], a.shape[0], int(J[0, 0, 0])
    b0 = int(flat[0])
    d = int(flat[1]) - b0 if size > 1 else 0
    if d < 0 or int(flat[-1]) != b0 + d * (size - 1) or (size > 2 and not (flat[1:] - flat[:-1] == d).all()):
        return _ld_lanes(a, base, J, chk, m)  # not affine (flat[-1] checked exactly: the u32 diffs do not wrap)
    first = b0 + j0  # element of lane 0 at J[0]; lane l's run is [first + d*l, first + d*l + k)
    if first + k > n:
        good = 0
    else:
        good = size if d == 0 else min(size, (n - k - first) // d + 1)
    tail, covered = None, good  # lanes whose runs are all in range or all past the end
    if good < size:
        start, last = int(flat[good]) + j0, int(flat[-1]) + j0 + k - 1
        if n <= start and last < 1 << 32:  # every run past the end (no u32 wrap-around): all 0
            tail, covered = np.zeros((k, size - good), a.dtype), size
            bad, idx = TRUE, flat[good:].reshape(1, -1) + J[0, 0]  # an active lane faults at J[0]
        else:
            idx = flat[good:].reshape(1, -1) + J.reshape(k, 1)  # u32 wraps as the SIMT form does
            tail = a.take(idx, mode="clip") if n else np.zeros(idx.shape, a.dtype)
            bad = idx >= n
            if bad.any():
                tail[bad] = 0
            else:
                bad = None
        if bad is not None and chk is not None:  # iteration-major, then lane order: the SIMT loop's first fault
            F, site, m, guards = chk
            if bad is TRUE and any(np.ndim(g) == 3 for g in guards):  # then the first fault may be past J[0]
                idx = flat[good:].reshape(1, -1) + J.reshape(k, 1)
            cols = slice(good, None)
            _trap((F, site, _lane_cols(m, base.shape, cols), [_lane_cols(g, base.shape, cols) for g in guards]),
                  bad, idx, n)
    tr = transposed(a, b0, d, j0, k, good, covered) if good > 1 else None  # a cached copy, lanes contiguous
    return Span(a, first, d, good, tail, (k,) + base.shape, tr and (tr[0], j0, tr[1], covered))


SPARSE_LANES = 4  # `_ld_lanes` gathers the active lanes alone where at most 1 in this many are


def _ld_lanes(a: np.ndarray, base, J: np.ndarray, chk, m):
    """rt.ld's `a[base + J]` as a (k, W, S) array, or gathered on the lanes of mask `m` alone
    where few are active (a loops.Sparse): in a one-pass loop nothing reads a value on an
    inactive lane (the sums are selected by the same mask), and a check traps on active
    lanes only, in the same order (iteration, then lane)."""
    if m is None or np.ndim(m) != 2 or a.ndim != 1 or np.ndim(base) > 2:
        return ld(a, base + J, chk)
    shape = np.broadcast_shapes(np.shape(base), m.shape)
    on = np.flatnonzero(m if m.shape == shape else np.broadcast_to(m, shape))
    if on.size * SPARSE_LANES > shape[0] * shape[1]:
        return ld(a, base + J, chk)
    k = J.shape[0]
    pick = np.broadcast_to(base, shape).reshape(-1)[on]
    if chk is not None:  # every lane left is active: the guards alone still say which access
        F, site, _, guards = chk
        chk = (F, site, None, [_lane_cols(g, shape, on) for g in guards])
    return Sparse(on, ld(a, pick.reshape(1, -1) + J.reshape(k, 1), chk), (k,) + shape)


def _lane_cols(m, shape: tuple, cols):
    """Lanes `cols` (a slice or indices of the flat (W, S) lanes) of a mask or guard that
    broadcasts to (W, S), or to (k, W, S) (a guard that varies with the iteration), as a
    (1 or k, lanes) array."""
    if m is None or np.ndim(m) == 0:
        return m
    if m.shape == shape:
        return m.reshape(1, -1)[:, cols]
    lead = m.shape[0] if np.ndim(m) == 3 else 1
    return np.broadcast_to(m, (lead,) + shape).reshape(lead, -1)[:, cols]
