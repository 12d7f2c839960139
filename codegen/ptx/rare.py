"""Rare paths out of line, one branch per statement (issue 18), and the division by a
divisor the copies share.

A statement of the batched and lanes entries runs once per copy. Where a copy's value
needs a rare path (exp beyond |x| >= 86 or NaN, a division outside the fast path's
range), branching around it inline costs each copy a branch and its reconvergence. Here
each copy's fast value is computed, its rare predicate remembered (`Rare.defer`), and
after every copy of the statement has been evaluated, before any copy's value is moved or
stored, one branch (`Rare.flush`) goes to an out-of-line block after the kernel's `ret`
that recomputes the rare copies and jumps back (`Rare.blocks`). Only an expression that is
a statement's whole value may defer (`_Emitter.top`): nothing reads it before the flush.

`fast_div(em, a, b)` is `a / b`, correctly rounded, for a divisor that is the same in
every copy (uniform over the workgroup: the lanes entry's softmax divides every element by
the row's sum): what depends on b alone is the same instructions in every copy, which
ptxas computes once; per element it is one mul and three fmas.

- yh = RN(1/b) exactly: r1 = rcp.approx (<= 1 ulp, the PTX ISA's bound) refined by one
  Newton step is within 1 ulp of 1/b, so r1 and its neighbour c toward 1/b (the sign of
  the exact residual 1 - b r1) bracket 1/b; the one with the smaller exact residual
  |1 - b x| is the nearer. yl = RN((1 - b yh) yh), so yh + yl = 1/b (1 + O(2^-47)).
- q0 = RN(a yh + RN(a yl)) is within 1/2 ulp + 2^-46 |a/b| of a/b; r = a - b q0 is exact
  (fma); q = RN(q0 + r yh). Proof that q = RN(a/b): only a midpoint m adjacent to q0 (m =
  q0 +- ulp/2) lies near a/b, and q0 + r yh - m = (q0 - m)(1 - b yh) + (a - b m) yh, where
  a - b m is a nonzero multiple of ulp(b) ulp(q0) / 2 and |1 - b yh| <= b ulp(1/b) / 2, so
  the second term dominates (yh > b / 4 after scaling b into [1, 2)) and q0 + r yh lies on
  the same side of every midpoint as a/b. tests/test_ptx_rare.py checks the sequence bit
  for bit against numpy's division, the reciprocal over every significand of b with r1
  one ulp off either way.
- Fast where 2^-60 <= |a|, |b| <= 2^60 (no intermediate underflows, the quotient is
  normal), and for a = +0 with b > 0; every other input (zeros of other signs, subnormals,
  infinities, NaN, huge or tiny operands) takes `div.rn.f32` on the rare path.
"""

from __future__ import annotations

from typing import Callable

__all__ = ["Rare", "fast_div", "LO", "HI"]

LO, HI = "0f21800000", "0f5D800000"  # 2^-60 and 2^60: the fast division's operand range


class Rare:
    """The deferred rare paths of the statement being emitted and the out-of-line blocks.

    A deferred `emit()` must compute the right value for every input, not only where its
    predicate holds (exp's rare branch selects on its own test, `div.rn` is exact): the
    block runs every emit of its statement, so no copy's predicate stays live past the
    one that says whether any copy needs the block."""

    def __init__(self) -> None:
        self.any: str | None = None  # whether some copy of the statement needs the block
        self.pending: list[Callable[[], None]] = []
        self.done: list[tuple[str, str, list[Callable[[], None]]]] = []

    def defer(self, em, pred: str, emit: Callable[[], None]) -> None:
        """`emit()` (which writes the value's registers) runs out of line if `pred` holds
        for this or another copy of the statement."""
        self.any = pred if self.any is None else em.new("p", "or.pred {}, {}, {};", self.any, pred)
        self.pending.append(emit)

    def flush(self, em) -> None:
        """One branch for the statement's deferred rare paths (before its values are used)."""
        if self.any is None:
            return
        go, back = em.b.label("rare"), em.b.label("common")
        em.b.op(f"@{self.any} bra {go};")
        em.b.place(back)
        self.done.append((go, back, self.pending))
        self.any, self.pending = None, []

    def blocks(self, em) -> None:
        """After the kernel's `ret`: each block recomputes its statement's values, back."""
        for go, back, pending in self.done:
            em.b.place(go)
            for emit in pending:
                emit()
            em.b.op(f"bra.uni {back};")


def _reciprocal(em, b: str) -> tuple[str, str, str, str]:
    """(yh, yl, b in range, b > 0 and in range) for the divisor b (module docstring)."""
    new = em.new
    ab = new("f", "abs.f32 {}, {};", b)
    nab = new("f", "neg.f32 {}, {};", ab)
    r0 = new("f", "rcp.approx.ftz.f32 {}, {};", ab)
    e0 = new("f", "fma.rn.f32 {}, {}, {}, 0f3F800000;", nab, r0)
    r1 = new("f", "fma.rn.f32 {}, {}, {}, {};", r0, e0, r0)
    e1 = new("f", "fma.rn.f32 {}, {}, {}, 0f3F800000;", nab, r1)      # exact: 1/|b| - r1 = e1 / |b|
    toward = new("r", "shr.s32 {}, {}, 31;", new("r", "mov.b32 {}, {};", e1))  # 0: up, -1: down
    step = new("r", "or.b32 {}, {}, 1;", toward)                           # +1 or -1 in the bits
    c = new("f", "mov.b32 {}, {};", new("r", "add.s32 {}, {}, {};", new("r", "mov.b32 {}, {};", r1), step))
    ec = new("f", "fma.rn.f32 {}, {}, {}, 0f3F800000;", nab, c)        # exact too
    nearer = new("p", "setp.lt.f32 {}, {}, {};", new("f", "abs.f32 {}, {};", ec), new("f", "abs.f32 {}, {};", e1))
    y = new("f", "selp.f32 {}, {}, {}, {};", c, r1, nearer)                # RN(1/|b|)
    yh = new("f", "copysign.f32 {}, {}, {};", b, y)
    nb = new("f", "neg.f32 {}, {};", b)
    e2 = new("f", "fma.rn.f32 {}, {}, {}, 0f3F800000;", nb, yh)
    yl = new("f", "mul.rn.f32 {}, {}, {};", e2, yh)
    lo = new("p", f"setp.ge.f32 {{}}, {{}}, {LO};", ab)
    ok = new("p", f"setp.le.and.f32 {{}}, {{}}, {HI}, {{}};", ab, lo)
    pos = new("p", "setp.gt.and.f32 {}, {}, 0f00000000, {};", b, ok)
    return yh, yl, ok, pos


def fast_div(em, a: str, b: str) -> tuple[str, str]:
    """(q, rare): q = a / b correctly rounded where `rare` is false (module docstring); the
    caller defers `div.rn.f32` into q where it is true."""
    new = em.new
    yh, yl, b_ok, b_pos = _reciprocal(em, b)
    nb = new("f", "neg.f32 {}, {};", b)
    t = new("f", "mul.rn.f32 {}, {}, {};", a, yl)
    q0 = new("f", "fma.rn.f32 {}, {}, {}, {};", a, yh, t)
    r = new("f", "fma.rn.f32 {}, {}, {}, {};", nb, q0, a)
    q = new("f", "fma.rn.f32 {}, {}, {}, {};", r, yh, q0)
    aa = new("f", "abs.f32 {}, {};", a)
    lo = new("p", f"setp.ge.and.f32 {{}}, {{}}, {LO}, {{}};", aa, b_ok)
    ok = new("p", f"setp.le.and.f32 {{}}, {{}}, {HI}, {{}};", aa, lo)
    zero = new("p", "setp.eq.and.u32 {}, {}, 0, {};", new("r", "mov.b32 {}, {};", a), b_pos)
    return q, new("p", "not.pred {}, {};", new("p", "or.pred {}, {}, {};", ok, zero))
