"""Fused element-wise expressions (ferric's `fuse.rs`, as IR): one kernel per expression.

    from goldy_import.expr import E, where
    gate = E.input(0).silu() * E.input(1)              # SwiGLU's gate: one kernel, no temporary
    out = gi.evaluate(dev, gate, [a, b])                # or out=buffer

An `E` is a DAG over f32 inputs: `E.input(i)`, constants (`E.scalar(2.0)`, or any Python
number next to an E), `+ - * /` and unary `-`, `exp exp2 log log2 sqrt abs floor ceil trunc
round sin cos tan relu sigmoid silu tanh`, `max min pow`, comparisons (`< <= > >=`,
`.eq()`, `.ne()`; bool-valued, combined with `& | ~`) and `where(cond, a, b)`.

`kernel(e)` turns it into an ordinary kernel definition: parameters `in0..in{k-1}: &[f32]`
and `out: gpu::Scattered<f32>`, one thread per element, every distinct subexpression
computed once (structural common-subexpression sharing: two separately built
`x.exp()` are one value). It is IR like an imported kernel, so it goes through the same
pipeline (trapping checks, the f32 math library, every backend, the compile cache) and can
be recorded in a Scheme and fused with other kernels. The only limit on inputs is the
device's storage-binding limit. Composite operations are spelled in the primitives:
`sigmoid(x) = 1 / (1 + exp(-x))`, `silu(x) = x / (1 + exp(-x))`, `relu(x) = max(x, 0)`
(Rust's `f32::max`: NaN gives 0), `tanh(x) = 1 - 2 / (exp(2x) + 1)`.
"""

from __future__ import annotations

import hashlib
import struct
import threading
from typing import TYPE_CHECKING, Any, Optional, Sequence, Union

from goldy_import.errors import BindingError

if TYPE_CHECKING:
    from goldy_import.runtime.core import Buffer, Device, KernelDef

__all__ = ["E", "where", "kernel", "evaluate"]

Number = Union[int, float]
_UNARY = ("exp", "exp2", "log", "log2", "sqrt", "abs", "floor", "ceil", "trunc", "round", "sin", "cos", "tan")
_ARITH = {"+": "add", "-": "sub", "*": "mul", "/": "div"}
_COMPARE = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne"}


class E:
    """An element-wise expression node (module docstring). Immutable; build with the
    constructors and operators, never by hand."""

    __slots__ = ("op", "args", "value", "ty", "key")

    def __init__(self, op: str, args: tuple = (), value: Any = None, ty: str = "f32"):
        self.op, self.args, self.value, self.ty = op, args, value, ty
        self.key = (op, value, tuple(a.key for a in args))  # structural: equal keys, one value

    # -- leaves
    @staticmethod
    def input(i: int) -> "E":
        if isinstance(i, bool) or not isinstance(i, int) or i < 0:
            raise BindingError(f"E.input: expected a non-negative input index, got {i!r}")
        return E("input", value=i)

    @staticmethod
    def scalar(v: Number) -> "E":
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise BindingError(f"E.scalar: expected a number, got {v!r}")
        try:
            bits = struct.unpack("<I", struct.pack("<f", float(v)))[0]  # the f32 it rounds to
        except OverflowError:
            raise BindingError(f"E.scalar: {v} is out of range for f32") from None
        return E("const", value=bits)

    # -- building
    def _f32(self, what: str) -> "E":
        if self.ty != "f32":
            raise BindingError(f"expression: `{what}` needs an f32 operand, got a comparison (bool): {self}")
        return self

    @staticmethod
    def _wrap(x: Any) -> "E":
        return x if isinstance(x, E) else E.scalar(x)

    def _bin(self, op: str, other: Any, rev: bool = False) -> "E":
        o = E._wrap(other)
        a, b = (o, self) if rev else (self, o)
        return E(op, (a._f32(op), b._f32(op)))

    def _cmp(self, op: str, other: Any) -> "E":
        o = E._wrap(other)
        return E(op, (self._f32(op), o._f32(op)), ty="bool")

    def _un(self, op: str) -> "E":
        return E(op, (self._f32(op),))

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("sub", o)
    def __rsub__(self, o): return self._bin("sub", o, True)
    def __mul__(self, o): return self._bin("mul", o)
    def __rmul__(self, o): return self._bin("mul", o, True)
    def __truediv__(self, o): return self._bin("div", o)
    def __rtruediv__(self, o): return self._bin("div", o, True)
    def __neg__(self): return self._un("neg")
    def __lt__(self, o): return self._cmp("lt", o)
    def __le__(self, o): return self._cmp("le", o)
    def __gt__(self, o): return self._cmp("gt", o)
    def __ge__(self, o): return self._cmp("ge", o)
    def eq(self, o: Any) -> "E": return self._cmp("eq", o)
    def ne(self, o: Any) -> "E": return self._cmp("ne", o)

    def _logic(self, op: str, o: Any) -> "E":
        if not isinstance(o, E) or self.ty != "bool" or o.ty != "bool":
            raise BindingError(f"expression: `{'&' if op == 'and' else '|'}` combines comparisons, got {self} and {o}")
        return E(op, (self, o), ty="bool")

    def __and__(self, o): return self._logic("and", o)
    def __or__(self, o): return self._logic("or", o)

    def __invert__(self) -> "E":
        if self.ty != "bool":
            raise BindingError(f"expression: `~` negates a comparison, got {self}")
        return E("not", (self,), ty="bool")

    def __bool__(self) -> bool:
        raise BindingError("an expression has no truth value; use where(cond, a, b) to choose per element")

    # -- functions
    def max(self, o: Any) -> "E": return self._bin("max", o)
    def min(self, o: Any) -> "E": return self._bin("min", o)
    def pow(self, o: Any) -> "E": return self._bin("pow", o)
    def relu(self) -> "E": return self.max(0.0)
    def sigmoid(self) -> "E": return 1.0 / (1.0 + (-self).exp())
    def silu(self) -> "E": return self / (1.0 + (-self).exp())
    def tanh(self) -> "E": return 1.0 - 2.0 / ((self * 2.0).exp() + 1.0)

    def where(self, a: Any, b: Any) -> "E":
        return where(self, a, b)

    def __repr__(self) -> str:
        if self.op == "input":
            return f"in{self.value}"
        if self.op == "const":
            return repr(struct.unpack("<f", struct.pack("<I", self.value))[0])
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
               "eq": "==", "ne": "!=", "and": "&", "or": "|"}
        if self.op in sym:
            return f"({self.args[0]!r} {sym[self.op]} {self.args[1]!r})"
        if self.op == "neg":
            return f"-{self.args[0]!r}"
        if self.op == "not":
            return f"~{self.args[0]!r}"
        if self.op == "select":
            return f"where({', '.join(repr(a) for a in self.args)})"
        return f"{self.op}({', '.join(repr(a) for a in self.args)})"


for _name in _UNARY:
    setattr(E, _name, (lambda op: lambda self: self._un(op))(_name))


def where(cond: E, a: Any, b: Any) -> E:
    """Per element: `a` where `cond` holds, else `b` (both are computed)."""
    if not isinstance(cond, E) or cond.ty != "bool":
        raise BindingError(f"where(cond, a, b): cond must be a comparison, got {cond!r}")
    x, y = E._wrap(a)._f32("where"), E._wrap(b)._f32("where")
    return E("select", (cond, x, y))


# ---------------------------------------------------------------- lowering to IR

_KERNELS: dict[tuple, "KernelDef"] = {}
_LOCK = threading.Lock()


def inputs_of(e: E) -> int:
    """How many inputs the expression reads (one past the highest index)."""
    seen: set = set()
    most = -1
    stack = [e]
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if x.op == "input":
            most = max(most, x.value)
        stack.extend(x.args)
    return most + 1


def _to_ir(e: E, name: str):
    from goldy_import.ir import nodes as N
    sp = N.NO_SPAN
    n_in = inputs_of(e)
    params = [N.Param(f"in{k}", "read", "f32", sp) for k in range(n_in)] + [N.Param("out", "write", "f32", sp)]
    locals_: dict[str, str] = {"i": "u32"}
    body: list = []
    memo: dict[tuple, str] = {}
    i = N.Var("u32", sp, "i")

    def emit(x: E) -> N.Expr:
        """A Var holding `x`, its `let` emitted once per distinct subexpression (post-order)."""
        if x.op == "const":  # printed in place; folding is the pipeline's business
            return N.Const("f32", sp, struct.unpack("<f", struct.pack("<I", x.value))[0])
        got = memo.get(x.key)
        if got is not None:
            return N.Var(x.ty, sp, got)
        args = [emit(a) for a in x.args]
        if x.op == "input":
            value: N.Expr = N.Load("f32", sp, f"in{x.value}", i)
        elif x.op in ("add", "sub", "mul", "div", "lt", "le", "gt", "ge", "eq", "ne", "and", "or"):
            value = N.Binary(x.ty, sp, x.op, args[0], args[1])
        elif x.op in ("neg", "not"):
            value = N.Unary(x.ty, sp, x.op, args[0])
        elif x.op == "select":
            value = N.Select("f32", sp, args[0], args[1], args[2])
        else:  # a math intrinsic (INTRINSICS)
            value = N.Call("f32", sp, x.op, args)
        v = f"v{len(memo)}"
        memo[x.key] = v
        locals_[v] = x.ty
        body.append(N.Let(sp, v, x.ty, value, False))
        return N.Var(x.ty, sp, v)

    if e.ty != "f32":
        raise BindingError(f"expression: the result must be f32, got a comparison (bool): {e}; use where(...)")
    root = emit(e)
    inner = body + [N.Store(sp, "out", i, root)]
    gid = N.Swizzle("u32", sp, N.Builtin("vec3<u32>", sp, "global_id"), "x")
    top = [N.Let(sp, "i", "u32", gid, False),
           N.If(sp, N.Binary("bool", sp, "lt", i, N.Len("u32", sp, "out")), inner, [])]
    return N.Kernel(name=name, workgroup_size=(256, 1, 1), params=params, workgroup_arrays=[], structs=[],
                    body=top, builtins=["global_id"], source_file="<expr>", doc=f"out = {e!r}", span=sp,
                    locals=locals_)


def kernel(e: E) -> "KernelDef":
    """The expression as a kernel definition (cached by structure): `in0.., out`."""
    from goldy_import.runtime.core import KernelDef
    if not isinstance(e, E):
        raise BindingError(f"expected an expression (goldy_import.expr.E), got {type(e).__name__}")
    with _LOCK:
        hit = _KERNELS.get(e.key)
    if hit is None:
        name = "expr_" + hashlib.sha256(repr(e.key).encode()).hexdigest()[:10]
        hit = KernelDef(_to_ir(e, name))
        with _LOCK:
            hit = _KERNELS.setdefault(e.key, hit)
    return hit


def evaluate(device: "Device", e: E, inputs: Sequence[Any], out: Optional["Buffer"] = None) -> "Buffer":
    """Run `e` over `inputs` (f32 Buffers or arrays of one length) as one dispatch and
    return `out` (a new buffer when not given)."""
    from goldy_import.runtime.core import Buffer, Scheme
    k = kernel(e)
    need = len(k.ir.params) - 1
    if len(inputs) != need:
        raise BindingError(f"evaluate: the expression reads {need} input{'s' if need != 1 else ''} "
                           f"(in0..in{need - 1}), got {len(inputs)}" if need else
                           f"evaluate: the expression reads no inputs, got {len(inputs)}")
    bufs = [x if isinstance(x, Buffer) else device.buffer(x) for x in inputs]
    n = len(out) if out is not None else (len(bufs[0]) if bufs else None)
    if n is None:
        raise BindingError("evaluate: an expression without inputs needs `out` to know its length")
    for j, b in enumerate(bufs):
        if len(b) != n:
            raise BindingError(f"evaluate: input {j} has {len(b)} elements, the output {n}")
    if out is None:
        out = device.empty(n)
    if n == 0:
        return out
    scheme = Scheme(device)
    k.prepare(device).record(scheme, "evaluate", *bufs, out).over_1d(n)
    scheme.submit()
    return out
