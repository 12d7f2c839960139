"""The lanes entry: each hardware thread runs several lanes of one workgroup (issue 18).

A workgroup of [wx, 1, 1] lanes that uses collectives is, one lane per thread, a block of
wx threads: at wx = 1024 an SM holds two of them, so two rows of a row softmax are in
flight per SM while the barriers between the loads and the stores wait, which caps such
kernels near 30% of the copy rate however the collective is written (the CUDA C build of
the same algorithm does no better). The lanes entry, `lanes_entry(kernel, c)`, launches
wx / c threads per workgroup instead; hardware thread t runs lanes t + j * (wx / c) for
j = 0 .. c - 1 ("copies"), statement by statement, the `if`s of the kernel as predication
(as the batched entry of element-wise kernels does across workgroups). Each warp holds 32
consecutive lanes of one copy, so loads stay coalesced and the collectives' first five
tree levels are still warp shuffles between the same lane pairs; the later levels run on
the same scratch slots. Same pairs, same operand order: the same bits as the oracle.

Only kernels whose shape makes that a plain re-scheduling take it (`lanes_ok`): every
barrier and collective reached by all lanes together (ir.uniformity, "may" mode) and
outside any predicated `if`, loops only as `for` over ranges that are the same for every
lane and carry no check (one loop runs for all copies), no `return`, `break`, `continue`,
`while`, `loop` or atomic. An `if` whose condition is the same for every lane and whose
arms hold barriers, collectives or loops runs as one branch for all copies (`branches`);
other `if`s are predication. Lanes of one workgroup then observe each other only through barriers,
collectives and workgroup memory between barriers (where the order of a race is
unspecified anyway), so running them interleaved in one thread is one of the executions
the GPU could have produced.
"""

from __future__ import annotations

from goldy_import.ir import nodes as N
from goldy_import.ir.uniformity import Uniformity

__all__ = ["lanes_for", "lanes_ok", "branches", "LANES_SM_THREADS", "private_scratch", "packed_warp_totals", "LANE_THREADS"]

LANE_THREADS = 256  # hardware threads per block the lanes entry aims at
# threads per SM the lanes entry's registers are sized for (`.minnctapersm`): 40 registers at
# 128 threads per block; 1536 of sm_90's 2048 (the H200's row softmax: 75% -> 82% of copy,
# benchmarks/RESULTS.md); more costs spills in the hot path. At most 16 blocks (the limit of
# the oldest architectures the backend targets)
LANES_SM_THREADS = 1536
_ALLOWED = (N.Let, N.Assign, N.Store, N.If, N.For, N.Barrier, N.Reduce)


def lanes_for(kernel: N.Kernel, threads: int = LANE_THREADS) -> int:
    """Lanes per thread for the lanes entry of a lowered kernel: wx / threads when the
    kernel qualifies (`lanes_ok`) and that is 2 or more, else 1 (no lanes entry)."""
    wx = kernel.workgroup_size[0]
    if threads < 32 or threads % 32 or wx % threads or wx // threads < 2:
        return 1
    c = wx // threads
    return c if lanes_ok(kernel, c) else 1


def lanes_ok(kernel: N.Kernel, c: int) -> bool:
    """Whether the lowered kernel may run `c` lanes per thread (module docstring)."""
    wx, wy, wz = kernel.workgroup_size
    if c < 2 or wy != 1 or wz != 1 or wx % (32 * c):
        return False
    stmts = list(N.walk_stmts(kernel.body))
    if not any(isinstance(s, N.Reduce) for s in stmts) or not all(isinstance(s, _ALLOWED) for s in stmts):
        return False
    uni = Uniformity(kernel, "may")
    return _ok(kernel.body, uni, False)


def _ok(stmts: list[N.Stmt], uni: Uniformity, under_if: bool) -> bool:
    for s in stmts:
        if isinstance(s, (N.Barrier, N.Reduce)):
            if under_if or id(s) not in uni.aligned:
                return False
        elif isinstance(s, N.For):
            if under_if:  # the loop would run where the `if` skips it (`0..n - 1` at n = 0)
                return False
            bounds = (s.start, s.end)
            if any(uni.varies(e) or _checked(e) for e in bounds) or not _ok(s.body, uni, under_if):
                return False
        elif isinstance(s, N.If):
            inner = under_if or not branches(s, uni)
            if not (_ok(s.then_body, uni, inner) and _ok(s.else_body, uni, inner)):
                return False
    return True


def branches(s: N.If, uni: Uniformity) -> bool:
    """Whether the lanes entry runs `if` statement `s` as one branch for all copies instead
    of as predication: its condition is the same for every lane of the workgroup, and an
    arm holds what predication cannot run for some copies only (a barrier, a collective, a
    loop), such as a softmax's branch to its one-tile copy (ir/legalize.py). Outside any
    predicated `if` only (`_ok`): there every copy is live."""
    return not uni.varies(s.cond) and any(isinstance(x, (N.Barrier, N.Reduce, N.For))
                                          for arm in (s.then_body, s.else_body) for x in N.walk_stmts(arm))


def _checked(e: N.Expr) -> bool:
    return any(getattr(x, "check", -1) >= 0 for x in N.walk_expr(e))


def private_scratch(kernel: N.Kernel) -> set[str]:
    """The workgroup arrays no statement but a collective touches (no Load, Store or Atomic
    names them). What a collective leaves in such a scratch array is never observed (each
    collective writes every slot its tree reads before reading it), so the PTX tree may
    keep only the values it needs: the warp levels carry one accumulator, not the state
    each slot would hold."""
    if not kernel.workgroup_arrays:
        return set()
    used = set()
    for s in N.walk_stmts(kernel.body):
        if isinstance(s, (N.Store, N.Atomic)):
            used.add(s.resource)
        for e in N.stmt_exprs(s):
            used.update(x.resource for x in N.walk_expr(e) if isinstance(x, N.Load))
    return {w.name for w in kernel.workgroup_arrays} - used


def packed_warp_totals(em, op: str, ty: str, kind: str, vs: list[str], lids: list[str], n: int,
                       base: str) -> tuple[str, str, str]:
    """Tree levels 0..4 of the lanes entry's c copies (c = len(vs), a power of two <= 32)
    over a private scratch array (`private_scratch`), c copies sharing each shuffle:
    (predicate, scratch address, value) of the one store of the warp totals.

    Level s pairs lane l (bit s clear) with lane l + 2^s. While two streams of copies
    remain to pair, A and B, each lane sends B if its bit s is clear, else A, to lane
    l ^ 2^s (shfl.bfly), and computes lower-lane value op upper-lane value: a lower lane
    A[l] op A[l + 2^s], an upper lane B[l - 2^s] op B[l], each the value the tree gives
    slot l (or l - 2^s) of its copy, with the tree's operand order. The new stream holds A
    in lanes with bit s clear and B in the others, and at the next level lanes l and
    l ^ 2^(s+1) hold the same copy again. Once one stream is left the levels are plain
    shuffles down. Copy j's warp total ends in lane j of each warp: the tree's value of
    slot lids[j] & ~31. One shuffle serves c / 2^s copies at level s: 2c - 1 + 5 - log2 c
    shuffles instead of 5c."""
    sel = "selp.f32" if kind == "f" else "selp.b32"
    lane = em.new("r", "and.b32 {}, {}, 31;", lids[0])
    streams = list(vs)
    for s in range(5):
        if len(streams) == 1:
            other = em.new(kind, f"shfl.sync.down.b32 {{}}, {{}}, {1 << s}, 31, 0xffffffff;", streams[0])
            streams = [em.combine(op, ty, streams[0], other)]
            continue
        bit = em.new("p", "setp.ne.u32 {}, {}, 0;", em.new("r", f"and.b32 {{}}, {{}}, {1 << s};", lane))
        paired = []
        for a, b in zip(streams[0::2], streams[1::2]):
            send = em.new(kind, f"{sel} {{}}, {{}}, {{}}, {{}};", a, b, bit)
            other = em.new(kind, f"shfl.sync.bfly.b32 {{}}, {{}}, {1 << s}, 31, 0xffffffff;", send)
            lo = em.new(kind, f"{sel} {{}}, {{}}, {{}}, {{}};", other, a, bit)
            hi = em.new(kind, f"{sel} {{}}, {{}}, {{}}, {{}};", b, other, bit)
            paired.append(em.combine(op, ty, lo, hi))
        streams = paired
    threads = em.k.workgroup_size[0] // len(vs)  # lids[j] = lids[0] + j * threads
    first = em.new("r", "and.b32 {}, {}, 4294967264;", lids[0])  # the warp's first lane
    slot = em.new("r", f"mad.lo.s32 {{}}, {{}}, {threads}, {{}};", lane, first)
    ok = em.pred_and(em.lt_u(lane, str(len(vs))), em.lt_u(slot, str(n)))
    return ok, em.new("r", "mad.lo.s32 {}, {}, 4, {};", slot, base), streams[0]
