"""The math library (ir/mathlib.py) and Rust's rules (ir/rules.py) evaluated on numpy
arrays: the CPU oracle's transcendentals, integer division, casts, min/max/clamp and
round. Every operation is the IEEE f32 or u32 operation the other targets render, so the
results are the same bits as theirs."""

from __future__ import annotations

import numpy as np

from goldy_import.ir import mathlib as ML
from goldy_import.ir.rules import RULES

_F, _U = np.float32, np.uint32


class NumpyOps(ML.Ops):
    """f32 values as float32 arrays, u32 values as uint32 arrays, predicates as bool arrays."""

    exact_subnormal_mul = True

    def c(self, x):
        return _F(x)

    def add(self, a, b):
        return np.add(a, b, dtype=_F)

    def sub(self, a, b):
        return np.subtract(a, b, dtype=_F)

    def mul(self, a, b):
        return np.multiply(a, b, dtype=_F)

    def div(self, a, b):
        return np.divide(a, b, dtype=_F)

    def sqrt(self, a):
        return np.sqrt(a, dtype=_F)

    def neg(self, a):
        return (np.asarray(a, _F).view(_U) ^ _U(0x80000000)).view(_F)

    def fabs(self, a):
        return (np.asarray(a, _F).view(_U) & _U(0x7FFFFFFF)).view(_F)

    def flt(self, a, b):
        return np.less(a, b)

    def fgt(self, a, b):
        return np.greater(a, b)

    def sel(self, p, a, b):
        return np.where(p, a, b)

    def i(self, x):
        return _U(x & 0xFFFFFFFF)

    def iadd(self, a, b):
        return np.add(a, b, dtype=_U)

    def isub(self, a, b):
        return np.subtract(a, b, dtype=_U)

    def imul(self, a, b):
        return np.multiply(a, b, dtype=_U)

    def iand(self, a, b):
        return np.bitwise_and(a, b, dtype=_U)

    def ior(self, a, b):
        return np.bitwise_or(a, b, dtype=_U)

    def ixor(self, a, b):
        return np.bitwise_xor(a, b, dtype=_U)

    def shl(self, a, n):
        return np.left_shift(a, _U(n) if isinstance(n, int) else n, dtype=_U)

    def shr_u(self, a, n):
        return np.right_shift(a, _U(n) if isinstance(n, int) else n, dtype=_U)

    def shr_s(self, a, n):
        s = np.asarray(a, _U).view(np.int32)
        return np.right_shift(s, np.asarray(n, _U).astype(np.int32)).view(_U)

    def ieq(self, a, b):
        return np.equal(a, b)

    def ilt_u(self, a, b):
        return np.less(a, b)

    def ilt_s(self, a, b):
        return np.less(np.asarray(a, _U).view(np.int32), np.asarray(b, _U).view(np.int32))

    def u2f(self, a):
        return np.asarray(a, _U).astype(_F)

    def i2f(self, a):
        return np.asarray(a, _U).view(np.int32).astype(_F)

    def udiv(self, a, b):
        return np.floor_divide(a, b, dtype=_U)

    def urem(self, a, b):
        return np.remainder(a, b, dtype=_U)

    def f2i_trunc(self, a):
        return np.asarray(a, _F).astype(np.int32).view(_U)

    def f2u_trunc(self, a):
        return np.asarray(a, _F).astype(_U)

    # one instruction each where numpy's operation is the derived one exactly: C's
    # integer -> float conversions round to nearest even, float compares are IEEE's
    def u2f_rn(self, a):
        return np.asarray(a, _U).astype(_F)

    def i2f_rn(self, a):
        return np.asarray(a, _U).view(np.int32).astype(_F)

    def flt_exact(self, a, b):
        return np.less(a, b)

    def fbits(self, a):
        return np.asarray(a, _F).view(_U)

    def bitsf(self, a):
        return np.asarray(a, _U).view(_F)

    def pand(self, a, b):
        return np.logical_and(a, b)

    def por(self, a, b):
        return np.logical_or(a, b)

    def pnot(self, a):
        return np.logical_not(a)

    def when(self, p, fn, defaults):
        if not np.any(p):  # fn only matters where p holds (exp's rare inputs): skip it
            return list(defaults)
        return [np.where(p, v, d) for v, d in zip(fn(), defaults)]

    def isnan(self, a):
        return np.isnan(a)

    def mulhi_u(self, a, b):
        return (np.asarray(a, np.uint64) * np.asarray(b, np.uint64) >> np.uint64(32)).astype(_U)


def evaluate(name: str, *args) -> np.ndarray:
    """ir.mathlib's `name` on f32 arrays (broadcast together); same shape as the inputs."""
    xs = [np.asarray(a, dtype=_F) for a in args]
    shape = np.broadcast_shapes(*(x.shape for x in xs))
    xs = [np.ascontiguousarray(np.broadcast_to(x, shape)).reshape(-1) for x in xs]
    with np.errstate(all="ignore"):
        out = ML.FUNCTIONS[name](NumpyOps(), *xs)
    return np.asarray(out, dtype=_F).reshape(shape)


_KIND_DTYPE = {"f": _F, "u": _U, "i": np.int32}
_OPS = NumpyOps()


def evaluate_rule(name: str, *args):
    """ir.rules' `name` on numpy values of the rule's argument types (arrays broadcast
    together; 0-d inputs give a numpy scalar)."""
    rule = RULES[name]
    xs = [np.asarray(a, _KIND_DTYPE[k]) for a, k in zip(args, rule.args)]
    xs = [x.view(_U) if k == "i" else x for x, k in zip(xs, rule.args)]
    with np.errstate(all="ignore"):
        out = np.asarray(rule.fn(_OPS, *xs))
    return (out.view(np.int32) if rule.ret == "i" else out)[()]
