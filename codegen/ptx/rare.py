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


def reciprocal(o, b):
    """(yh, yl): yh = RN(1/b), yh + yl = 1/b (1 + O(2^-47)), for 2^-60 <= |b| <= 2^60, in
    terms of `o` (`PtxSeq` here; tests/test_ptx_rare.py runs it in numpy)."""
    ab = o.abs(b)
    nab = o.neg(ab)
    r0 = o.rcp(ab)                                  # within 1 ulp (the PTX ISA's bound)
    r1 = o.fma(r0, o.fma(nab, r0, o.ONE), r0)       # one Newton step: within 1/2 ulp + 2^-46
    e1 = o.fma(nab, r1, o.ONE)                      # exact: 1/|b| - r1 = e1 / |b|
    c = o.step_toward(r1, e1)                       # r1's neighbour on 1/|b|'s side
    ec = o.fma(nab, c, o.ONE)                       # exact too
    y = o.sel(o.abs_lt(ec, e1), c, r1)              # the nearer of the two: RN(1/|b|)
    yh = o.copysign(b, y)
    return yh, o.mul(o.fma(o.neg(b), yh, o.ONE), yh)


def quotient(o, a, b, yh, yl):
    """a / b correctly rounded from b's (yh, yl) where the operands are in range."""
    q0 = o.fma(a, yh, o.mul(a, yl))                 # within 1/2 ulp + 2^-46 |a/b|
    return o.fma(o.fma(o.neg(b), q0, a), yh, q0)    # the remainder is exact; one rounding


class PtxSeq:
    """`reciprocal` and `quotient` as PTX instructions of the emitter `em`."""

    ONE = "0f3F800000"

    def __init__(self, em):
        self.em = em

    def _f(self, text: str, *srcs: str) -> str:
        return self.em.new("f", text, *srcs)

    def abs(self, a):
        return self._f("abs.f32 {}, {};", a)

    def neg(self, a):
        return self._f("neg.f32 {}, {};", a)

    def rcp(self, a):
        return self._f("rcp.approx.ftz.f32 {}, {};", a)

    def fma(self, a, b, c):
        return self._f("fma.rn.f32 {}, {}, {}, {};", a, b, c)

    def mul(self, a, b):
        return self._f("mul.rn.f32 {}, {}, {};", a, b)

    def step_toward(self, x, e):
        """x (> 0) one ulp up where e >= 0, else one down: the bits plus (e's sign | 1)."""
        new = self.em.new
        step = new("r", "or.b32 {}, {}, 1;", new("r", "shr.s32 {}, {}, 31;", new("r", "mov.b32 {}, {};", e)))
        return self._f("mov.b32 {}, {};", new("r", "add.s32 {}, {}, {};", new("r", "mov.b32 {}, {};", x), step))

    def abs_lt(self, a, b):
        return self.em.new("p", "setp.lt.f32 {}, {}, {};", self.abs(a), self.abs(b))

    def sel(self, p, a, b):
        return self._f("selp.f32 {}, {}, {}, {};", a, b, p)

    def copysign(self, sign, mag):
        return self._f("copysign.f32 {}, {}, {};", sign, mag)


def fast_div(em, a: str, b: str) -> tuple[str, str]:
    """(q, rare): q = a / b correctly rounded where `rare` is false (module docstring); the
    caller defers `div.rn.f32` into q where it is true. The part on b alone is the same
    instructions in every copy: ptxas computes it once."""
    new, o = em.new, PtxSeq(em)
    yh, yl = reciprocal(o, b)
    ab, aa = o.abs(b), o.abs(a)
    b_ok = new("p", f"setp.le.and.f32 {{}}, {{}}, {HI}, {{}};", ab, new("p", f"setp.ge.f32 {{}}, {{}}, {LO};", ab))
    b_pos = new("p", "setp.gt.and.f32 {}, {}, 0f00000000, {};", b, b_ok)
    lo = new("p", f"setp.ge.and.f32 {{}}, {{}}, {LO}, {{}};", aa, b_ok)
    ok = new("p", f"setp.le.and.f32 {{}}, {{}}, {HI}, {{}};", aa, lo)
    zero = new("p", "setp.eq.and.u32 {}, {}, 0, {};", new("r", "mov.b32 {}, {};", a), b_pos)  # +0 / b > 0
    q = quotient(o, a, b, yh, yl)
    return q, new("p", "not.pred {}, {};", new("p", "or.pred {}, {}, {};", ok, zero))
