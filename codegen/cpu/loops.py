"""Reduction loops on the CPU target: `for j in a..b { acc = acc + E(j); }` in one pass.

The SIMT form (codegen/cpu/emitter.py `loop`) runs a per-thread loop one iteration at a time
over all lanes: for a GEMV row loop that is several numpy calls per iteration, each on a
few hundred lanes, so the interpreter overhead dominates. When the trip count is the same
on every lane (the bounds are lane-invariant at run time: numpy scalars) and the body is
only `let`s and accumulations `acc = acc + E` (f32, no exits, stores, collectives, atomics
or workgroup memory; E reads no accumulator), nothing in the body depends on an
earlier iteration except the sums. Then the loop variable becomes the whole iteration
range as an (n, 1, 1) array (broadcast against the (W, S) lanes), every term is computed
at once, and the sums are taken with `np.add.accumulate` along the iteration axis: one
rounded f32 add per iteration in iteration order, the same bits as the SIMT loop. A failed
trapping check reruns the loop the SIMT way (codegen/cpu/emitter.py `s_For`), so the fault
reported is the one the SIMT order meets first. The SIMT loop stays as the fallback (lane-varying bounds) and as the oracle it is tested against
(tests/test_cpu_loops.py).
"""

from __future__ import annotations

from typing import Iterator, Optional

import numpy as np

from goldy_import.ir import nodes as N

BLOCK_ELEMENTS = 1 << 18  # terms per block of iterations: the temporaries stay in cache (L2)
MANY_LANES = 2048  # from here `accumulate` adds row by row (np.add.accumulate is slow on them)
LANE_BLOCK = 1024  # lanes per block of those adds: a block's terms stay in cache


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


# ---------------------------------------------------------------- run time (via rt)


def uniform_trips(start, end) -> bool:
    """Whether every lane runs the same iterations (both bounds lane-invariant)."""
    return np.ndim(start) == 0 and np.ndim(end) == 0


def iteration_blocks(start, end, inclusive: bool, dtype, G) -> Iterator[np.ndarray]:
    """The loop variable's values as (n, 1, 1) arrays, in order, in blocks of bounded size."""
    lo, hi = int(start), int(end) + (1 if inclusive else 0)
    if hi <= lo:
        return
    per = max(1, BLOCK_ELEMENTS // max(1, G.T))
    for a in range(lo, hi, per):
        yield np.arange(a, min(hi, a + per), dtype=np.int64).astype(dtype).reshape(-1, 1, 1)


def accumulate(acc, terms, count: int):
    """`acc + terms[0] + terms[1] + ...`, each add rounded to f32, left to right per lane:
    one add per iteration over a row of lanes where the terms are iteration-major (as
    `rt.ld_span` gives them) or the lanes many (then copied so, a cache-sized block of lanes
    at a time); otherwise `np.add.accumulate` along the iterations."""
    terms = np.asarray(terms, dtype=np.float32)
    if terms.ndim < 3:  # a term not reading the loop variable: the same every iteration
        terms = terms.reshape((1,) * (3 - terms.ndim) + terms.shape)
    lanes = np.broadcast_shapes(np.shape(acc), terms.shape[1:])
    if terms.shape[0] == 1 and count > 1:
        terms = np.broadcast_to(terms, (count,) + terms.shape[1:])
    size = int(np.prod(lanes))
    rows = np.broadcast_to(terms, (count,) + lanes).reshape(count, size)
    if rows.strides[1] == rows.itemsize or size >= MANY_LANES:
        start = np.broadcast_to(np.asarray(acc, np.float32), lanes).reshape(size)
        if rows.strides[1] == rows.itemsize:  # rows of lanes contiguous already
            a = start + rows[0]
            for t in range(1, count):
                a += rows[t]  # rounded to f32 per add, in iteration order
            return a.reshape(lanes)
        out = np.empty(size, np.float32)
        for l0 in range(0, size, LANE_BLOCK):
            blk = np.ascontiguousarray(rows[:, l0:l0 + LANE_BLOCK])
            a = start[l0:l0 + LANE_BLOCK] + blk[0]
            for t in range(1, count):
                a += blk[t]
            out[l0:l0 + LANE_BLOCK] = a
        return out.reshape(lanes)
    buf = np.empty((count,) + lanes, np.float32)
    buf[...] = terms
    buf[0] = acc + buf[0]
    np.add.accumulate(buf, axis=0, out=buf)
    return buf[-1].copy()


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
