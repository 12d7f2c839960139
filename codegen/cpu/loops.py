"""Reduction loops on the CPU target: `for j in a..b { acc = acc + E(j); }` in one pass.

The SIMT form (codegen/cpu/emitter.py `loop`) runs a per-thread loop one iteration at a time
over all lanes: for a GEMV row loop that is several numpy calls per iteration, each on a
few hundred lanes, so the interpreter overhead dominates. When the trip count is the same
on every lane (the bounds are lane-invariant at run time: numpy scalars) and the body is
only `let`s and accumulations `acc = acc + E` (f32, no exits, stores, collectives, atomics
or workgroup memory; E reads no accumulator), nothing in the body depends on an
earlier iteration except the sums. Then the loop variable becomes a block of the iteration
range as an (n, 1, 1) array (broadcast against the (W, S) lanes) and every term of the
block is computed at once. A load of a run of elements per lane, `w[i * n + j]` with
`i * n` stepping evenly from lane to lane, is a strided view of the buffer (`rt.span`,
`Span`), not a gather. `accumulate` writes the terms (`x * y` computed there, so such a
view is read once) iteration-major into a buffer, a cache-sized block of lanes and
iterations at a time, and sums them with `np.add.reduce` along the iterations: with the
lanes contiguous numpy adds the rows one by one (`IN_ORDER`, probed at import; otherwise
a plain loop of adds), one rounded f32 add per iteration in iteration order, the same bits
as the SIMT loop. A failed trapping check reruns the loop the SIMT way
(codegen/cpu/emitter.py `s_For`), so the fault reported is the one the SIMT order meets
first. The SIMT loop stays as the fallback (lane-varying bounds) and as the oracle it is
tested against (tests/test_cpu_loops.py).

A span of a read-only buffer read again unchanged comes from a transposed copy
(codegen/cpu/transposed.py): the lanes are then contiguous, and `accumulate` takes wide
blocks of them (`WIDE_LANES`). A run per lane that is not a span (its start jumps between
lanes) is gathered on the loop's active lanes alone where few are (`rt._ld_lanes`), as a
`Sparse` operand: `accumulate` then sums on those lanes alone.
"""

from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

from goldy_import.ir import nodes as N

from . import native

BLOCK_ELEMENTS = 1 << 18  # terms per block of iterations: the temporaries stay in cache (L2)
# a lean loop's terms are views (rt.span) and (iterations, 1, 1) arrays until `accumulate`
# combines them a block at a time; only a gather where rt.span falls back is this big
LEAN_BLOCK_ELEMENTS = 1 << 24
LANE_TERMS = 1 << 17  # terms per block in `accumulate`: its buffer stays in cache (L2)
MIN_BLOCK_LANES = 256  # at least so many lanes per block where there are: long inner loops
# without a strided operand (an rt.span view not read from a transposed copy,
# codegen/cpu/transposed.py) the lanes are contiguous: blocks of up to WIDE_LANES lanes
# then, and WIDE_TERMS terms
WIDE_LANES = 1 << 16
WIDE_TERMS = 1 << 19


def reduction_accumulators(k: N.Kernel, s: N.Stmt) -> Optional[list[str]]:
    """The accumulators of a `For` that can run as one pass, or None."""
    if not isinstance(s, N.For) or not s.body:
        return None
    accs: list[str] = []
    terms: list[N.Expr] = []
    for b in s.body:
        if isinstance(b, N.Let) and b.value is not None:
            terms.append(b.value)
        elif (isinstance(b, N.Assign) and isinstance(b.target, N.Var) and b.target.name in k.locals
              and k.locals[b.target.name] == "f32" and isinstance(b.value, N.Binary) and b.value.op == "add"
              and isinstance(b.value.lhs, N.Var) and b.value.lhs.name == b.target.name
              and b.value.check < 0 and b.target.name not in accs):
            accs.append(b.target.name)
            terms.append(b.value.rhs)
        else:
            return None
    lets = {b.name for b in s.body if isinstance(b, N.Let)}
    if not accs or lets & set(accs) or s.var in accs:
        return None
    for e in terms:
        for x in N.walk_expr(e):
            if isinstance(x, N.Var) and x.name in accs:
                return None  # a term reading a sum: a loop-carried dependence
            if isinstance(x, N.Load) and k.workgroup_array(x.resource) is not None:
                return None  # rt.ld_w indexes per workgroup: (W, S) lanes only
            if not isinstance(x, (N.Const, N.Var, N.Load, N.Unary, N.Binary, N.Cast, N.Call, N.Select,
                                  N.Builtin, N.Swizzle, N.Len, N.Field, N.Construct)):
                return None
    return accs


# f32 `x op y` terms that rt.accumulate computes itself, into its buffer of iteration-major
# lanes (so strided operands are read once)
TERM_UFUNCS = {"mul": "np.multiply", "add": "np.add", "sub": "np.subtract"}


def term_parts(e: N.Expr) -> tuple:
    """(x, ufunc, y) of a term rt.accumulate computes itself (`TERM_UFUNCS`), else (e, None, None)."""
    if isinstance(e, N.Binary) and e.op in TERM_UFUNCS and e.ty == "f32":
        return e.lhs, TERM_UFUNCS[e.op], e.rhs
    return e, None, None


def span_load(k: N.Kernel, e: N.Load, var: Optional[str]) -> Optional[N.Expr]:
    """`b` where `e` loads a scalar buffer at `b + var` (`span_base`): rt.ld_span's case."""
    p = k.param(e.resource)
    if var is None or p is None or p.category not in N.BUFFER_CATEGORIES or p.ty not in ("u32", "i32", "f32"):
        return None
    return span_base(e.index, var)


def lean_terms(k: N.Kernel, s: N.For) -> bool:
    """Whether no term of the one-pass loop `s` builds an (iterations x lanes) array before
    rt.accumulate does: in each (`term_parts`) every operand is a span load (a view), does
    not read the loop variable (no iteration axis), or reads nothing that varies by lane
    (an (iterations, 1, 1) array). Such loops run in bigger blocks of iterations."""
    def lean(e: N.Expr) -> bool:
        if isinstance(e, N.Load) and span_load(k, e, s.var) is not None:
            return True
        xs = list(N.walk_expr(e))
        return not any(isinstance(x, N.Var) and x.name == s.var for x in xs) or \
            not any(isinstance(x, N.Builtin) or (isinstance(x, N.Var) and x.name in k.locals and x.name != s.var)
                    for x in xs)
    for b in s.body:
        if not isinstance(b, N.Assign):
            return False
        x, op, y = term_parts(b.value.rhs)
        if not (lean(x) and (op is None or lean(y))):
            return False
    return True


# ---------------------------------------------------------------- run time (via rt)


def uniform_trips(start, end) -> bool:
    """Whether every lane runs the same iterations (both bounds lane-invariant)."""
    return np.ndim(start) == 0 and np.ndim(end) == 0


def iteration_blocks(start, end, inclusive: bool, dtype, G, lean: bool = False) -> Iterator[np.ndarray]:
    """The loop variable's values as (n, 1, 1) arrays, in order, in blocks of bounded size
    (larger for a `lean` loop: `lean_terms`)."""
    lo, hi = int(start), int(end) + (1 if inclusive else 0)
    if hi <= lo:
        return
    per = max(1, (LEAN_BLOCK_ELEMENTS if lean else BLOCK_ELEMENTS) // max(1, G.T))
    for a in range(lo, hi, per):
        yield np.arange(a, min(hi, a + per), dtype=np.int64).astype(dtype).reshape(-1, 1, 1)


def _reduce_adds_in_order() -> bool:
    """Whether `np.add.reduce` along the outer axis of a C-contiguous (rows, 2) array adds
    the rows one by one in order (numpy sums pairwise only along the contiguous axis).
    Probed once on terms where a regrouping gives other bits: 0 + 1 + 2^24 + 1 - 2^24 ...
    is 0 in order (each `2^24 + 1` rounds to 2^24) and not 0 summed pairwise."""
    col = np.tile(np.float32([1.0, 2.0 ** 24, 1.0, -(2.0 ** 24)]), 10)
    t = np.stack([col, -col], axis=1)
    seq = np.zeros(2, np.float32)
    for row in t:
        seq = seq + row
    return all(np.array_equal(r.view(np.uint32), seq.view(np.uint32)) for r in
               (np.add.reduce(t, axis=0, initial=np.float32(0)), np.add.reduce(np.vstack([seq * 0, t]), axis=0)))


IN_ORDER = _reduce_adds_in_order()


class Span:
    """A load of a run of k elements per lane (rt.span), lanes in flat (W, S) order: lane l
    reads src[first + d*l + j] (j < k) for l < `good` (in range), `tail` (k, size - good)
    holds the rest (rt.ld's zeros past the end) or is None. `rows` gives lane rows
    [r0, r1) as a (k, r1 - r0, S) array: a strided view where they are all in range, read
    from `tr` = (T, c, r, lanes) where given (codegen/cpu/transposed.py: lane l's run is
    T[c:c + k, r + l] for l < lanes, the lanes contiguous, zeros past `good`)."""

    __slots__ = ("src", "first", "d", "good", "tail", "shape", "tr")

    def __init__(self, src: np.ndarray, first: int, d: int, good: int, tail: Optional[np.ndarray], shape: tuple,
                 tr: Optional[tuple] = None):
        self.src, self.first, self.d, self.good, self.tail, self.shape = src, first, d, good, tail, shape
        self.tr = tr

    def _runs(self, a: int, b: int) -> np.ndarray:
        """The runs of lanes [a, b) (all in range) as a (k, b - a) view."""
        if self.tr is not None:
            t, c, r, _ = self.tr
            return t[c:c + self.shape[0], r + a:r + b]
        return run_view(self.src, self.first + self.d * a, (self.shape[0], b - a), self.d)

    def rows(self, r0: int, r1: int) -> np.ndarray:
        k, _, S = self.shape
        a, b, good = r0 * S, r1 * S, self.good
        if b <= (good if self.tr is None else self.tr[3]):
            return self._runs(a, b).reshape(k, r1 - r0, S)
        out = np.empty((k, b - a), self.tail.dtype)
        if a < good:
            out[:, :good - a] = self._runs(a, good)
        out[:, max(0, good - a):] = self.tail[:, max(0, a - good):b - good]
        return out.reshape(k, r1 - r0, S)


class Sparse:
    """A load gathered on the active lanes alone (rt._ld_lanes, where few are): `vals` is
    (k, len(on)), lane `on[c]` of the flat (W, S) lanes reading vals[:, c]; the other lanes
    of `shape` = (k, W, S) hold nothing anyone reads (the loop's sums are selected by the
    same mask). `accumulate` then sums on those lanes alone."""

    __slots__ = ("on", "vals", "shape")

    def __init__(self, on: np.ndarray, vals: np.ndarray, shape: tuple):
        self.on, self.vals, self.shape = on, vals, shape

    def dense(self) -> np.ndarray:
        """The (k, W, S) array, 0 on the lanes not gathered."""
        k, w, s = self.shape
        out = np.zeros((k, w * s), self.vals.dtype)
        out[:, self.on] = self.vals
        return out.reshape(self.shape)


def _on_lanes(x, on: np.ndarray, lanes: tuple) -> np.ndarray:
    """An `_iteration_major` operand on the flat lanes `on` of `lanes`: (k or 1, len(on))."""
    if isinstance(x, Sparse):
        if x.on is on or np.array_equal(x.on, on):
            return x.vals
        return x.dense().reshape(x.shape[0], -1)[:, on]
    if isinstance(x, Span):
        x = x.rows(0, x.shape[1])
    return np.broadcast_to(x, (x.shape[0],) + lanes).reshape(x.shape[0], -1)[:, on]


def _accumulate_sparse(acc, count: int, ops: list, op, lanes: tuple) -> np.ndarray:
    """`accumulate` on the lanes of the first `Sparse` operand alone; the others hold `acc`."""
    on = next(o.on for o in ops if isinstance(o, Sparse))
    cols = [_on_lanes(o, on, lanes) for o in ops]
    out = np.array(np.broadcast_to(np.asarray(acc, np.float32), lanes))
    if on.size == 0:
        return out
    flat = out.reshape(-1)
    start = flat[on]
    terms = np.broadcast_to(cols[0] if op is None else op(cols[0], cols[1]), (count, on.size))
    if on.size < 2 or not IN_ORDER:
        flat[on] = _accumulate_slow(start, count, terms, (1, on.size)).reshape(-1)
    else:
        buf = np.empty((1 + count, on.size), np.float32)
        buf[0], buf[1:] = start, terms
        flat[on] = np.add.reduce(buf, axis=0)  # the rows in order (IN_ORDER)
    return out


def run_view(a: np.ndarray, first: int, shape: tuple, d: int) -> np.ndarray:
    """Read-only (k, lanes) view of 1-D `a`: element [j, l] is a[first + j + d*l]."""
    st = a.strides[0]
    if a.flags.c_contiguous and shape[0] * shape[1]:
        v = np.ndarray(shape, a.dtype, buffer=a, offset=first * st, strides=(st, d * st))
    else:
        v = np.lib.stride_tricks.as_strided(a[first:], shape=shape, strides=(st, d * st))
    v.flags.writeable = False
    return v


def _iteration_major(x):
    """A term or operand as a 3-D (iterations or 1, lanes...) array, or a Span or Sparse."""
    if isinstance(x, (Span, Sparse)):
        return x
    x = np.asarray(x, dtype=np.float32)
    return x.reshape((1,) * (3 - x.ndim) + x.shape) if x.ndim < 3 else x


def _rows(x, r0: int, r1: int):
    """Lane rows [r0, r1) of an `_iteration_major` operand (all of it if it has one row)."""
    if x.shape[1] == 1:
        return x.rows(0, 1) if isinstance(x, Span) else x
    return x.rows(r0, r1) if isinstance(x, Span) else x[:, r0:r1]


def _lane_rows(h: int, per: int):
    """[r0, r1) blocks of `h` lane rows, `per` at a time, none of a single lane left alone
    (np.add.reduce over one lane would sum pairwise)."""
    cuts = list(range(0, h, per)) + [h]
    if len(cuts) > 2 and cuts[-1] - cuts[-2] == 1:
        del cuts[-2]
    return zip(cuts[:-1], cuts[1:])


def lane_shape(shapes: list) -> tuple:
    """The (H, S) that (W, S)-broadcastable shapes broadcast to (np.broadcast_shapes,
    without its cost: a few microseconds per loop)."""
    h = s = 1
    for sh in shapes:
        if len(sh) == 2:
            h, s = max(h, sh[0]), max(s, sh[1])
        elif len(sh) == 1:
            s = max(s, sh[0])
    return h, s


def accumulate(acc, count: int, x, op=None, y=None):
    """`acc + t[0] + t[1] + ...` with t = `op(x, y)` (a numpy ufunc) or `x`, each add rounded
    to f32, left to right per lane: the SIMT loop's bits. A block of lanes and iterations
    at a time, the terms are written iteration-major into a buffer (the lanes contiguous,
    so `op` reads strided operands such as rt.span's once, and the block stays in cache),
    then summed by `np.add.reduce` along the iterations, which adds the rows in order
    (`IN_ORDER`), from the sum so far (reduce's `initial`, or the buffer's first row).
    One lane: `np.add.accumulate`."""
    ops = [_iteration_major(x)] + ([] if op is None else [_iteration_major(y)])
    lanes = lane_shape([np.shape(acc)] + [o.shape[1:] for o in ops])
    H, S = lanes
    if any(isinstance(o, Sparse) for o in ops):
        return _accumulate_sparse(acc, count, ops, op, lanes)
    if native.library() is not None:  # the same sums in one C pass (codegen/cpu/native.py)
        out = native.accumulate(acc, count, [_rows(o, 0, o.shape[1]) for o in ops], op, lanes)
        if out is not None:
            return out
    if H * S < 2 or not IN_ORDER:
        ops = [_rows(o, 0, o.shape[1]) for o in ops]
        return _accumulate_slow(acc, count, ops[0] if op is None else op(ops[0], ops[1]), lanes)
    out = np.empty(lanes, np.float32)
    if any(isinstance(o, Span) and o.tr is None for o in ops):  # a strided view: blocks it reads in cache
        per = min(H, -(-MIN_BLOCK_LANES // S))  # lane rows per block
        step = max(1, min(count, LANE_TERMS // (per * S)))  # iterations per block
    else:  # contiguous along the lanes (arrays, transposed copies): wide blocks
        per = min(H, max(1, WIDE_LANES // S))
        step = max(1, min(count, WIDE_TERMS // (per * S)))
    buf = np.empty((1 + step, min(H, per + 1), S), np.float32)  # row 0: the sum so far
    whole = np.ndim(acc) == 0
    for r0, r1 in _lane_rows(H, per):
        parts = [_rows(o, r0, r1) for o in ops]
        o = out[r0:r1]
        for j0 in range(0, count, step):
            j1 = min(count, j0 + step)
            b = buf[:1 + j1 - j0, :r1 - r0]
            js = [p[j0:j1] if p.shape[0] != 1 else p for p in parts]
            if op is None:
                b[1:] = js[0]
            else:
                op(js[0], js[1], out=b[1:], order="C")  # lanes innermost, whatever the strides
            if j0 == 0 and whole:
                np.add.reduce(b[1:], axis=0, out=o, initial=acc)
            else:
                b[0] = o if j0 else np.broadcast_to(acc, lanes)[r0:r1]
                np.add.reduce(b, axis=0, out=o, initial=None)  # from the first row: the sum so far
    return out


def _accumulate_slow(acc, count: int, terms: np.ndarray, lanes: tuple) -> np.ndarray:
    """`accumulate` for one lane (np.add.accumulate, sequential by definition), or for a
    numpy whose reduce regroups the adds (one add per iteration over all lanes)."""
    size = lanes[0] * lanes[1]
    rows = np.broadcast_to(terms, (count,) + lanes).reshape(count, size)
    start = np.broadcast_to(np.asarray(acc, np.float32), lanes).reshape(size)
    if size == 1:
        buf = np.empty(count + 1, np.float32)
        buf[0], buf[1:] = start[0], rows[:, 0]
        return np.add.accumulate(buf)[-1:].reshape(lanes)
    a = start + rows[0]
    for t in range(1, count):
        a = a + rows[t]
    return a.reshape(lanes)


def span_base(index: N.Expr, var: str) -> Optional[N.Expr]:
    """`b` where a load index is `b + var` or `var + b` (u32, `b` not reading `var`): the
    load then reads a run of consecutive elements per lane (`rt.ld_span`)."""
    if not (isinstance(index, N.Binary) and index.op == "add" and index.ty == "u32" and index.check < 0):
        return None
    for here, other in ((index.rhs, index.lhs), (index.lhs, index.rhs)):
        if isinstance(here, N.Var) and here.name == var and \
                not any(isinstance(x, N.Var) and x.name == var for x in N.walk_expr(other)):
            return other
    return None
