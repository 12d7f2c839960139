"""PTX rendering of the f32 math library (ir/mathlib.py) and of Rust's rules (ir/rules.py),
and PTX's exact f32 `%`.

`PtxOps` renders each of the library's operations as one PTX instruction, inline where the
kernel calls the function. Every f32 add/sub/mul/div carries an explicit `.rn`, so ptxas
cannot contract them into an fma, and no instruction flushes subnormals (no `.ftz`): the
results are the bits the CPU oracle computes (codegen/cpu/math.py).

`fmod` (Rust's f32 `%`, exact) is written here against the same interface plus three u64
extras (`mulwide`, `rem64`, `copysign`): the integer remainder of the significands, 2^d mod
m by square and multiply, no loop. WGSL, Slang and the CPU compute the same exact
remainder their own way (a loop, C fmod, numpy fmod).
"""

from __future__ import annotations

import math

import numpy as np

from goldy_import.ir.mathlib import FUNCTIONS, Ops, exp  # noqa: F401  (what ptx.py renders)
from goldy_import.ir.rules import RULES

from ..cpu.math import NumpyOps

__all__ = ["FUNCTIONS", "PtxOps", "exp", "fmod", "fimm", "dimm", "evaluate_fmod", "rule"]


def rule(m, name: str, *args):
    """ir/rules.py's `name` rendered inline on registers or immediates."""
    return RULES[name].fn(m, *args)


def _pow2i(m, k):
    """2^k as f32 for integer k in [-126, 127]."""
    return m.bitsf(m.shl(m.iadd(k, m.i(127)), 23))


def fmod(m, x, y):
    """Truncated remainder, exact: |x| = mx*2^ex, |y| = my*2^ey (integer significands), so
    |x| mod |y| = ((mx * 2^(ex-ey)) mod my) * 2^ey, with 2^(ex-ey) mod my by square and
    multiply over the 9 bits of ex-ey (at most 277)."""
    bx = m.iand(m.fbits(x), m.i(0x7FFFFFFF))
    by = m.iand(m.fbits(y), m.i(0x7FFFFFFF))

    def parts(b):
        ex = m.shr_u(b, 23)
        mx = m.iand(b, m.i(0x7FFFFF))
        sub = m.ieq(ex, m.i(0))
        return m.sel(sub, m.i(1), ex), m.sel(sub, mx, m.ior(mx, m.i(0x800000)))

    ex, mx = parts(bx)
    ey, my = parts(by)
    small = m.ilt_u(bx, by)                   # |x| < |y| (also y = inf)
    d = m.sel(small, m.i(0), m.isub(ex, ey))
    myd = m.sel(m.ieq(my, m.i(0)), m.i(1), my)  # y = 0 handled below; avoid % 0
    p = m.rem64(m.mulwide(m.i(1), m.i(1)), myd)
    for bit in range(8, -1, -1):
        p = m.rem64(m.mulwide(p, p), myd)
        twice = m.rem64(m.mulwide(p, m.i(2)), myd)
        p = m.sel(m.ieq(m.iand(m.shr_u(d, bit), m.i(1)), m.i(1)), twice, p)
    rm = m.rem64(m.mulwide(mx, p), myd)
    a = m.isub(ey, m.i(150))
    a1 = m.shr_s(a, 1)
    mag = m.mul(m.mul(m.u2f(rm), _pow2i(m, a1)), _pow2i(m, m.isub(a, a1)))
    res = m.copysign(x, mag)
    res = m.sel(small, x, res)
    bad = m.por(m.por(m.ieq(by, m.i(0)), m.isnan(y)),
                m.por(m.isnan(x), m.ieq(bx, m.i(0x7F800000))))
    return m.sel(bad, m.c(math.nan), res)


class _NumpyFmodOps(NumpyOps):
    """NumpyOps plus fmod's u64 extras, to test the PTX sequence without a GPU."""

    def mulwide(self, a, b):
        return np.asarray(a, np.uint64) * np.asarray(b, np.uint64)

    def rem64(self, a, m):
        return (a % np.asarray(m, np.uint64)).astype(np.uint32)

    def copysign(self, sign, mag):
        return ((np.asarray(mag, np.float32).view(np.uint32) & np.uint32(0x7FFFFFFF)) |
                (np.asarray(sign, np.float32).view(np.uint32) & np.uint32(0x80000000))).view(np.float32)


def evaluate_fmod(x, y) -> np.ndarray:
    """The PTX fmod sequence on f32 arrays."""
    x, y = (np.ascontiguousarray(np.broadcast_to(np.asarray(v, np.float32), np.broadcast_shapes(
        np.shape(x), np.shape(y)))).reshape(-1) for v in (x, y))
    with np.errstate(all="ignore"):
        return np.asarray(fmod(_NumpyFmodOps(), x, y), np.float32)


# ---------------------------------------------------------------- PTX rendering


_FIMM: dict = {}  # (value, sign) -> fimm text: kernels repeat their constants


def fimm(x: float) -> str:
    """An f32 immediate, exact: 0f followed by the bits in hex."""
    key = (x, math.copysign(1.0, x))  # -0.0 == 0.0: the sign tells them apart
    text = _FIMM.get(key)
    if text is None:
        text = "0f%08X" % int(np.array(x, dtype=np.float32).view(np.uint32))
        if len(_FIMM) < 4096:
            _FIMM[key] = text
    return text


def dimm(x: float) -> str:
    return "0d%016X" % int(np.array(x, dtype=np.float64).view(np.uint64))


def _is_int(v) -> bool:
    """An integer immediate (registers start with %, float immediates with 0f/0d)."""
    return isinstance(v, str) and not v.startswith(("%", "0f", "0d")) and v.lstrip("-").isdigit()


_MOV = {"f": "f32", "r": "b32", "fd": "f64", "rd": "b64"}


class PtxOps(Ops):
    """Renders each operation as PTX through a builder with `reg(kind)`, `op(text)` and
    `kind_of(value)` (kinds: f = .f32, r = .b32, p = .pred, rd = .b64).

    Derived operations PTX has as one instruction with exactly the derived semantics (the
    target's declaration): `isnan` (setp.nan), `mulhi_u` (mul.hi.u32), `u2f_rn`/`i2f_rn`
    (cvt.rn.f32.u32/s32: round to nearest even for every input) and `flt_exact`
    (setp.lt.f32 without .ftz: subnormals compare exactly, NaN gives false), `big_or_nan`
    (setp.geu.f32 on abs.f32: NaN gives true, ptxas folds the abs into the compare),
    `sub_exact_product` (fma.rn.f32: the product is exact, so the one rounding is sub's). Integer
    operations on two immediates are folded here (rules applied to constants)."""

    exact_subnormal_mul = True  # mul.rn.f32 without .ftz

    def __init__(self, b):
        self.b = b
        # set by the emitter for a call whose last `when` is its result and a statement's
        # whole value: (predicate, emit) goes out of line (codegen/ptx/rare.py)
        self.defer = None

    def _un(self, kind: str, text: str, *srcs) -> str:
        d = self.b.reg(kind)
        self.b.op(text.format(d, *srcs))
        return d

    def _reg(self, v: str, kind: str) -> str:
        """Immediates are not allowed everywhere (first operands, cvt, mov between kinds)."""
        if v.startswith("%"):
            return v
        d = self.b.reg(kind)
        self.b.op(f"mov.{_MOV[kind]} {d}, {v};")
        return d

    def _f(self, text: str, a, b) -> str:
        return self._un("f", text, self._reg(a, "f"), b)

    def _i(self, text: str, a, b, fold=None) -> str:
        if fold is not None and _is_int(a) and _is_int(b):
            return str(fold(int(a, 0) & 0xFFFFFFFF, int(b, 0) & 0xFFFFFFFF) & 0xFFFFFFFF)
        return self._un("r", text, self._reg(a, "r"), b)

    def c(self, x):
        return fimm(x)

    def add(self, a, b):
        return self._f("add.rn.f32 {}, {}, {};", a, b)

    def sub(self, a, b):
        return self._f("sub.rn.f32 {}, {}, {};", a, b)

    def mul(self, a, b):
        return self._f("mul.rn.f32 {}, {}, {};", a, b)

    def div(self, a, b):
        return self._f("div.rn.f32 {}, {}, {};", a, b)

    def sqrt(self, a):
        return self._un("f", "sqrt.rn.f32 {}, {};", self._reg(a, "f"))

    def sub_exact_product(self, x, a, c: float):
        # a * c exact (the caller's guarantee): fma's one rounding is sub's
        return self._un("f", "fma.rn.f32 {}, {}, {}, {};", self._reg(a, "f"), fimm(-c), self._reg(x, "f"))

    def neg(self, a):
        return self._un("f", "xor.b32 {}, {}, -2147483648;", self._reg(a, "f"))

    def fabs(self, a):
        return self._un("f", "and.b32 {}, {}, 2147483647;", self._reg(a, "f"))

    def copysign(self, sign, mag):
        return self._un("f", "copysign.f32 {}, {}, {};", self._reg(sign, "f"), self._reg(mag, "f"))

    def flt(self, a, b):
        return self._un("p", "setp.lt.f32 {}, {}, {};", self._reg(a, "f"), b)

    def fgt(self, a, b):
        return self._un("p", "setp.gt.f32 {}, {}, {};", self._reg(a, "f"), b)

    def isnan(self, a):
        a = self._reg(a, "f")
        return self._un("p", "setp.nan.f32 {}, {}, {};", a, a)

    def big_or_nan(self, a, c):
        # one compare: unordered-or-greater-equal on |a| (no .ftz: subnormals are exact)
        return self._un("p", f"setp.geu.f32 {{}}, {{}}, {fimm(c)};", self._un("f", "abs.f32 {}, {};", self._reg(a, "f")))

    def sel(self, p, a, b):
        kind = self.b.kind_of(a) if a.startswith("%") else self.b.kind_of(b)
        if kind == "p":
            t1 = self._un("p", "and.pred {}, {}, {};", p, a)
            t2 = self._un("p", "and.pred {}, !{}, {};", p, b)
            return self._un("p", "or.pred {}, {}, {};", t1, t2)
        return self._un(kind, f"selp.{_MOV[kind]} {{}}, {{}}, {{}}, {{}};", a, b, p)

    def i(self, x):
        return str(x & 0xFFFFFFFF)

    def iadd(self, a, b):
        return self._i("add.u32 {}, {}, {};", a, b, lambda x, y: x + y)

    def isub(self, a, b):
        return self._i("sub.u32 {}, {}, {};", a, b, lambda x, y: x - y)

    def imul(self, a, b):
        return self._i("mul.lo.u32 {}, {}, {};", a, b)

    def mulhi_u(self, a, b):
        return self._i("mul.hi.u32 {}, {}, {};", a, b)

    def iand(self, a, b):
        return self._i("and.b32 {}, {}, {};", a, b, lambda x, y: x & y)

    def ior(self, a, b):
        return self._i("or.b32 {}, {}, {};", a, b, lambda x, y: x | y)

    def ixor(self, a, b):
        return self._i("xor.b32 {}, {}, {};", a, b, lambda x, y: x ^ y)

    def shl(self, a, n):
        return self._i("shl.b32 {}, {}, {};", a, str(n), lambda x, y: x << y)

    def shr_s(self, a, n):
        return self._i("shr.s32 {}, {}, {};", a, str(n), lambda x, y: (x - ((x >> 31) << 32)) >> y)

    def shr_u(self, a, n):
        return self._i("shr.u32 {}, {}, {};", a, str(n), lambda x, y: x >> y)

    def ieq(self, a, b):
        return self._un("p", "setp.eq.u32 {}, {}, {};", self._reg(a, "r"), b)

    def ilt_u(self, a, b):
        return self._un("p", "setp.lt.u32 {}, {}, {};", self._reg(a, "r"), b)

    def ilt_s(self, a, b):
        return self._un("p", "setp.lt.s32 {}, {}, {};", self._reg(a, "r"), self._reg(b, "r"))

    def udiv(self, a, b):
        return self._i("div.u32 {}, {}, {};", a, b)

    def urem(self, a, b):
        return self._i("rem.u32 {}, {}, {};", a, b)

    def f2i_trunc(self, a):
        return self._un("r", "cvt.rzi.s32.f32 {}, {};", self._reg(a, "f"))

    def f2u_trunc(self, a):
        return self._un("r", "cvt.rzi.u32.f32 {}, {};", self._reg(a, "f"))

    def u2f_rn(self, a):
        return self.u2f(a)

    def i2f_rn(self, a):
        return self.i2f(a)

    def flt_exact(self, a, b):
        return self.flt(a, b)

    def u2f(self, a):
        return self._un("f", "cvt.rn.f32.u32 {}, {};", self._reg(a, "r"))

    def i2f(self, a):
        return self._un("f", "cvt.rn.f32.s32 {}, {};", self._reg(a, "r"))

    def fbits(self, a):
        return self._un("r", "mov.b32 {}, {};", self._reg(a, "f"))

    def bitsf(self, a):
        return self._un("f", "mov.b32 {}, {};", self._reg(a, "r"))

    def pand(self, a, b):
        return self._un("p", "and.pred {}, {}, {};", a, b)

    def por(self, a, b):
        return self._un("p", "or.pred {}, {}, {};", a, b)

    def pnot(self, a):
        return self._un("p", "not.pred {}, {};", a)

    # fmod's extras
    def mulwide(self, a, b):
        return self._un("rd", "mul.wide.u32 {}, {}, {};", self._reg(a, "r"), b)

    def rem64(self, a, m):
        m64 = self._un("rd", "cvt.u64.u32 {}, {};", self._reg(m, "r"))
        r64 = self._un("rd", "rem.u64 {}, {}, {};", a, m64)
        return self._un("r", "cvt.u32.u64 {}, {};", r64)

    def when(self, p, fn, defaults):
        outs = [self._copy(self._reg(d, self.b.kind_of(d))) for d in defaults]
        if self.defer is not None:
            defer, self.defer = self.defer, None  # only this `when`; those fn() makes stay inline

            def emit():
                for o, v in zip(outs, fn()):
                    self.b.op(f"mov.{_MOV[self.b.kind_of(o)]} {o}, {v};")
            defer(p, emit)
            return outs
        skip = self.b.label("skip")
        self.b.op(f"@!{p} bra {skip};")
        for o, v in zip(outs, fn()):
            self.b.op(f"mov.{_MOV[self.b.kind_of(o)]} {o}, {v};")
        self.b.place(skip)
        return outs

    def _copy(self, v):
        kind = self.b.kind_of(v)
        d = self.b.reg(kind)
        self.b.op(f"mov.{_MOV[kind]} {d}, {v};")
        return d
