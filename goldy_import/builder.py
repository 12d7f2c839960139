"""Build kernel IR from Python (zyx's `Kernel` API), no Rust involved.

    b = gi.KernelBuilder("double", workgroup_size=(64, 1, 1))
    inp = b.define("f32", "global", read_only=True, n=4)
    gidx = b.group_index(0, 4)             # let gidx = global_id().x; if gidx >= 4 { return; }
    v = b.load(inp, gidx)
    out = b.define("f32", "global", read_only=False, n=4)
    b.store(out, v + v, gidx)
    k = b.build()                          # a KernelDef: prepare / record / invoke, every backend
    [y] = k.compile(gi.Device("cpu")).forward([np.arange(4, dtype=np.float32)], [4])

Each call appends the IR the importer would produce for the Rust statement it mirrors
(`let`, `if`, `while`, `for`, stores, barriers, atomics), with Rust's typing rules checked
as it is made: a bad call raises BuilderError naming the kernel and the Python file:line
of the call, and every node's span points at that line, so run-time faults name it too.
Python numbers take the type of the other operand, as Rust's untyped literals do.
"""

from __future__ import annotations

import copy
import os
import struct
import sys
from contextlib import contextmanager
from types import FrameType
from typing import Any, Iterator, Optional, Sequence, Union

import numpy as np

from goldy_import.errors import BindingError, GoldyError
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.uniformity import divergent_sync_points
from goldy_import.ir.verify import VerifyError, verify
from goldy_import.runtime.core import Device, KernelDef, PreparedKernel, Scheme

_HERE = os.path.abspath(__file__)
_DTYPES = {"f32": "f32", "u32": "u32", "i32": "i32", "bool": "bool", np.dtype(np.float32): "f32",
           np.dtype(np.uint32): "u32", np.dtype(np.int32): "i32", np.dtype(np.bool_): "bool"}
_NUMPY = {"f32": np.float32, "u32": np.uint32, "i32": np.int32, "bool": np.bool_}
_SCOPES = {"global": "global", "local": "workgroup", "workgroup": "workgroup", "shared": "workgroup"}
_AXES = "xyz"
_SYMBOLS = {"__add__": "+", "__radd__": "+", "__sub__": "-", "__rsub__": "-", "__mul__": "*", "__rmul__": "*",
            "__truediv__": "/", "__rtruediv__": "/", "__mod__": "%", "__rmod__": "%", "__and__": "&",
            "__rand__": "&", "__or__": "|", "__ror__": "|", "__xor__": "^", "__rxor__": "^", "__lshift__": "<<",
            "__rshift__": ">>", "__lt__": "<", "__le__": "<=", "__gt__": ">", "__ge__": ">=", "__neg__": "-",
            "__invert__": "!", "__getitem__": "[]"}
_OPS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "bitand": "&", "bitor": "|", "bitxor": "^",
        "shl": "<<", "shr": ">>", "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=",
        "and": "&&", "or": "||"}
Number = Union[int, float, bool]


class BuilderError(GoldyError):
    """A KernelBuilder call would make invalid IR; the message names the kernel and the call."""


def _caller() -> tuple[str, int, str]:
    """(file, line) of the first frame outside this module, and the builder call it made."""
    f: Optional[FrameType] = sys._getframe(1)
    call = "?"
    while f is not None and os.path.abspath(f.f_code.co_filename) == _HERE:
        call = f.f_code.co_name
        f = f.f_back
    if f is None:
        return "<builder>", 1, call
    return f.f_code.co_filename, f.f_lineno, call


def _operators(op: str, name: str) -> tuple[Any, Any]:
    """`Value.__<name>__` and `__r<name>__`: the IR binary operator `op` either way round."""
    def forward(self: "Value", other: Any) -> "Value":
        return self.b.binary(op, self, other)

    def backward(self: "Value", other: Any) -> "Value":
        return self.b.binary(op, other, self)
    # named as the operator, so errors show `+` rather than the closure
    forward.__code__ = forward.__code__.replace(co_name=f"__{name}__")
    backward.__code__ = backward.__code__.replace(co_name=f"__r{name}__")
    return forward, backward


class Value:
    """An IR expression being built; Python operators make Rust's operators (`&`, `|` are
    bitwise; `b.and_`/`b.or_` are `&&`/`||`; `.eq()`/`.ne()` are `==`/`!=`)."""

    __slots__ = ("b", "expr")

    def __init__(self, b: "KernelBuilder", expr: N.Expr):
        self.b, self.expr = b, expr

    @property
    def ty(self) -> str:
        return self.expr.ty

    def __repr__(self) -> str:
        return f"<{self.ty} value>"

    def __bool__(self) -> bool:
        raise self.b._error("a kernel value has no Python truth value; use `with b.if_(cond):`")

    __add__, __radd__ = _operators("add", "add")
    __sub__, __rsub__ = _operators("sub", "sub")
    __mul__, __rmul__ = _operators("mul", "mul")
    __truediv__, __rtruediv__ = _operators("div", "truediv")
    __mod__, __rmod__ = _operators("rem", "mod")
    __and__, __rand__ = _operators("bitand", "and")
    __or__, __ror__ = _operators("bitor", "or")
    __xor__, __rxor__ = _operators("bitxor", "xor")
    __lshift__, _ = _operators("shl", "lshift")
    __rshift__, _ = _operators("shr", "rshift")
    __lt__, _ = _operators("lt", "lt")
    __le__, _ = _operators("le", "le")
    __gt__, _ = _operators("gt", "gt")
    __ge__, _ = _operators("ge", "ge")
    del _

    def eq(self, other) -> "Value":
        return self.b.binary("eq", self, other)

    def ne(self, other) -> "Value":
        return self.b.binary("ne", self, other)

    def __neg__(self) -> "Value":
        return self.b.unary("neg", self)

    def __invert__(self) -> "Value":
        return self.b.unary("not", self)

    def cast(self, dtype) -> "Value":
        return self.b.cast(self, dtype)


class Resource:
    """A buffer parameter or workgroup array; `r[i]` loads, `r.len()` is its length."""

    def __init__(self, b: "KernelBuilder", name: str, ty: str, kind: str, n: Optional[int]):
        self.b, self.name, self.ty, self.kind, self.n = b, name, ty, kind, n  # kind: a category | "workgroup"

    def __repr__(self) -> str:
        return f"<{self.kind} {self.name}: {self.ty}>"

    def __getitem__(self, index) -> Value:
        return self.b.load(self, index)

    def len(self) -> Value:
        return self.b.len(self)


class KernelBuilder:
    """Builds one kernel; see the module docstring."""

    def __init__(self, name: str, workgroup_size: Sequence[int] = (64, 1, 1), doc: str = ""):
        self.file, line, _ = _caller()
        self.name = name
        if not (isinstance(name, str) and name.isidentifier()):
            raise BuilderError(f"{self.file}:{line}: KernelBuilder: kernel name {name!r} is not an identifier")
        wg = tuple(workgroup_size)
        if len(wg) != 3 or not all(isinstance(d, int) and d >= 1 for d in wg) or wg[0] * wg[1] * wg[2] > 1024:
            raise self._error(f"workgroup size {list(wg)}: three positive integers with a product of at most 1024")
        self.workgroup_size = wg
        self.doc = doc
        self.params: list[N.Param] = []
        self.arrays: list[N.WorkgroupArray] = []
        self.locals: dict[str, str] = {}
        self.builtins: set[str] = set()
        self.names: set[str] = set()
        self.body: list[N.Stmt] = []
        self.stack: list[list[N.Stmt]] = [self.body]
        self.loops = 0
        self.lines = [line, line]
        self.grid: dict[int, int] = {}  # axis -> extent from group_index(axis, n)
        self.last_if: Optional[N.If] = None  # what `else_` attaches to
        self.counts: dict[str, int] = {}

    # ------------------------------------------------------------ helpers

    def _error(self, message: str) -> BuilderError:
        file, line, call = _caller()
        shown = f"`{_SYMBOLS[call]}`" if call in _SYMBOLS else f"{call}()"
        return BuilderError(f"kernel `{self.name}`: {file}:{line}: {shown}: {message}")

    def _span(self) -> N.Span:
        _file, line, _ = _caller()
        self.lines = [min(self.lines[0], line), max(self.lines[1], line)]
        return N.Span(0, 0, line, 1, line, 1)

    def _emit(self, stmt: N.Stmt) -> None:
        self.stack[-1].append(stmt)
        self.last_if = None

    def _name(self, name: Optional[str], kind: str) -> str:
        if name is None:
            self.counts[kind] = self.counts.get(kind, -1) + 1
            name = f"{kind}{self.counts[kind]}"
        if not (isinstance(name, str) and name.isidentifier()):
            raise self._error(f"{name!r} is not an identifier")
        base, k = name, 1
        while name in self.names:  # shadowing, as the importer renames it: x, x_1, ...
            name, k = f"{base}_{k}", k + 1
        self.names.add(name)
        return name

    def _dtype(self, dtype) -> str:
        try:
            ty = _DTYPES.get(dtype) or _DTYPES.get(np.dtype(dtype))
        except TypeError:
            ty = None
        if ty is None:
            raise self._error(f"unsupported dtype {dtype!r}: use f32, u32, i32 or bool")
        return ty

    def _value(self, v, want: Optional[str] = None) -> Value:
        """A Value, or a Python number as a constant of type `want` (its own type without one)."""
        if isinstance(v, Value):
            if v.b is not self:
                raise self._error("the value belongs to another KernelBuilder")
            return v
        if isinstance(v, Resource):
            raise self._error(f"`{v.name}` is a {v.kind} buffer, not a value: load an element with `{v.name}[i]`")
        if isinstance(v, (bool, np.bool_)):
            return self.const(bool(v), "bool")
        if isinstance(v, (int, np.integer)):
            return self.const(int(v), want if want in ("u32", "i32", "f32") else "i32")
        if isinstance(v, (float, np.floating)):
            if want in ("u32", "i32"):
                raise self._error(f"expected `{want}`, found the float {v!r}")
            return self.const(float(v), "f32")
        raise self._error(f"expected a kernel value or a number, got {type(v).__name__}")

    def _expect(self, v: Value, ty: str, what: str) -> None:
        if v.ty != ty:
            raise self._error(f"mismatched types: {what} is `{ty}`, found `{v.ty}`")

    # ------------------------------------------------------------ parameters and arrays

    def define(self, dtype, scope: str = "global", read_only: bool = True, n: Optional[int] = None,
               name: Optional[str] = None, write_only: bool = False) -> Resource:
        """A buffer parameter (`global`: `&[T]` when read-only, else `&mut [T]`, or
        `gpu::Scattered<T>` when `write_only`), in the order of the calls; or a workgroup
        array of `n` elements (`local`). For a buffer, `n` is the length `forward` allocates."""
        ty = self._dtype(dtype)
        where = _SCOPES.get(scope)
        if where is None:
            raise self._error(f"unknown scope {scope!r}: use 'global' or 'local'")
        sp = self._span()
        if where == "workgroup":
            if not isinstance(n, int) or not 1 <= n <= 16384 or ty == "bool":
                raise self._error("a workgroup array holds 1 to 16384 elements of u32, i32 or f32")
            arr = N.WorkgroupArray(self._name(name, "wg"), ty, n, sp)
            self.arrays.append(arr)
            return Resource(self, arr.name, ty, "workgroup", n)
        category = "write" if write_only else "read" if read_only else "read_write"
        if write_only and read_only:
            raise self._error("a buffer cannot be both read-only and write-only")
        p = N.Param(self._name(name, "inp" if read_only else "out"), category, ty, sp)
        self.params.append(p)
        return Resource(self, p.name, ty, category, n)

    def scalar(self, dtype, name: Optional[str] = None) -> Value:
        """A scalar parameter (`u32`, `i32`, `f32`, `bool`)."""
        ty = self._dtype(dtype)
        p = N.Param(self._name(name, "s"), "scalar", ty, self._span())
        self.params.append(p)
        return Value(self, N.Var(ty, p.span, p.name))

    # ------------------------------------------------------------ thread coordinates

    def _builtin(self, name: str, axis: int) -> Value:
        if axis not in (0, 1, 2):
            raise self._error(f"axis {axis!r}: use 0, 1 or 2")
        sp = self._span()
        self.builtins.add(name)
        return Value(self, N.Swizzle("u32", sp, N.Builtin("vec3<u32>", sp, name), _AXES[axis]))

    def global_id(self, axis: int = 0) -> Value:
        return self._builtin("global_id", axis)

    def local_id(self, axis: int = 0) -> Value:
        return self._builtin("local_id", axis)

    def workgroup_id(self, axis: int = 0) -> Value:
        return self._builtin("workgroup_id", axis)

    def num_workgroups(self, axis: int = 0) -> Value:
        return self._builtin("num_workgroups", axis)

    def group_index(self, axis: int = 0, n: Optional[int] = None, name: str = "gidx") -> Value:
        """`let gidx = global_id().<axis>;`, and with `n`, `if gidx >= n { return; }`: the
        thread's index along an axis of `n` threads (`forward` launches `n` along it)."""
        g = self.let(name, self.global_id(axis))
        if n is not None:
            if not isinstance(n, int) or not 1 <= n <= T.INT_RANGES["u32"][1]:
                raise self._error(f"n = {n!r}: a positive u32 extent")
            self.grid[axis] = n
            with self.if_(g >= n):
                self.return_()
        return g

    # ------------------------------------------------------------ expressions

    def const(self, value: Number, dtype) -> Value:
        ty = self._dtype(dtype)
        sp = self._span()
        if ty == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise self._error(f"expected a bool, got {value!r}")
            return Value(self, N.Const("bool", sp, bool(value)))
        if ty == "f32":
            try:
                f = struct.unpack("<f", struct.pack("<f", float(value)))[0]
            except (OverflowError, TypeError, ValueError):
                raise self._error(f"{value!r} is not a finite f32 literal") from None
            return Value(self, N.Const("f32", sp, f))
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise self._error(f"expected an integer for `{ty}`, got {value!r}")
        lo, hi = T.INT_RANGES[ty]
        if not lo <= int(value) <= hi:
            raise self._error(f"literal out of range for `{ty}`: {value} is not in {lo}..={hi}")
        return Value(self, N.Const(ty, sp, int(value)))

    def binary(self, op: str, a, b) -> Value:
        """`a op b` with Rust's typing: both sides one type (a shift amount any integer),
        comparisons give bool, `and`/`or` are `&&`/`||` on bools."""
        if op not in N.BINARY_OPS:
            raise self._error(f"unknown operator {op!r}")
        if op in ("shl", "shr"):
            lhs = self._value(a)
            rhs = self._value(b, "u32")
        elif isinstance(a, Value) or not isinstance(b, Value):
            lhs = self._value(a, "bool" if op in N.LOGICAL else None)
            rhs = self._value(b, lhs.ty)
        else:
            rhs = self._value(b)
            lhs = self._value(a, rhs.ty)
        sp = self._span()
        lt, rt = lhs.ty, rhs.ty
        if op in ("shl", "shr"):
            if lt not in T.INTS or rt not in T.INTS:
                raise self._error(f"shifts take integers, found `{lt}` and `{rt}`")
            return Value(self, N.Binary(lt, sp, op, lhs.expr, rhs.expr))
        if lt != rt:
            raise self._error(f"mismatched types: `{lt} {_OPS.get(op, op)} {rt}` (no implicit conversion; use .cast())")
        if op in N.LOGICAL:
            if lt != "bool":
                raise self._error(f"`{op}` takes bools, found `{lt}`")
            ty = "bool"
        elif op in N.COMPARISONS:
            if lt == "bool" and op not in ("eq", "ne"):
                raise self._error("bools are only compared with eq and ne")
            ty = "bool"
        elif op in ("bitand", "bitor", "bitxor"):
            if lt == "f32":
                raise self._error("bit operations take integers or bools, found `f32`")
            ty = lt
        else:
            if lt == "bool":
                raise self._error(f"cannot apply {op} to bools")
            ty = lt
        return Value(self, N.Binary(ty, sp, op, lhs.expr, rhs.expr))

    def unary(self, op: str, a) -> Value:
        v = self._value(a)
        if op == "neg" and v.ty not in ("i32", "f32"):
            raise self._error(f"cannot negate `{v.ty}`")
        if op == "not" and v.ty == "f32":
            raise self._error("cannot apply `!` to `f32`")
        if op not in N.UNARY_OPS:
            raise self._error(f"unknown unary operator {op!r}")
        return Value(self, N.Unary(v.ty, self._span(), op, v.expr))

    def and_(self, a, b) -> Value:
        return self.binary("and", a, b)

    def or_(self, a, b) -> Value:
        return self.binary("or", a, b)

    def eq(self, a, b) -> Value:
        return self.binary("eq", a, b)

    def ne(self, a, b) -> Value:
        return self.binary("ne", a, b)

    def cast(self, a, dtype) -> Value:
        """`a as T` (Rust's rules: saturating float -> int, wrapping int -> int, nothing to bool)."""
        v = self._value(a)
        ty = self._dtype(dtype)
        if ty == "bool" and v.ty != "bool":
            raise self._error(f"cannot cast `{v.ty}` as `bool`; compare with zero instead")
        if v.ty == "bool" and ty == "f32":
            raise self._error("cannot cast `bool` as `f32`; cast to an integer first")
        if v.ty == ty:
            return v
        sp = self._span()
        if isinstance(v.expr, N.Const) and T.is_int(v.ty) and T.is_int(ty):  # as the importer folds it
            bits = v.expr.value & 0xFFFFFFFF
            return Value(self, N.Const(ty, sp, bits - 2**32 if ty == "i32" and bits >= 2**31 else bits))
        return Value(self, N.Cast(ty, sp, v.expr))

    def call(self, func: str, *args) -> Value:
        """A math intrinsic of ir.nodes.INTRINSICS (`sqrt`, `exp`, `min`, `fma`, ...) on scalars."""
        arity = N.INTRINSICS.get(func)
        if arity is None or func in ("length", "dot"):
            raise self._error(f"unknown function {func!r}")
        if len(args) != arity:
            raise self._error(f"`{func}` takes {arity} argument{'s' * (arity != 1)}, got {len(args)}")
        lead = next((a for a in args if isinstance(a, Value)), None)
        want = "u32" if func == "from_bits" else lead.ty if lead is not None else "f32"
        vals = [self._value(a, want) for a in args]
        t0 = vals[0].ty
        if func == "from_bits":
            self._expect(vals[0], "u32", "the argument of from_bits")
            return Value(self, N.Call("f32", self._span(), func, [v.expr for v in vals]))
        if func == "to_bits":
            self._expect(vals[0], "f32", "the argument of to_bits")
            return Value(self, N.Call("u32", self._span(), func, [v.expr for v in vals]))
        for v in vals[1:]:
            self._expect(v, t0, f"the first argument of `{func}`")
        if t0 == "bool" or (func not in ("abs", "min", "max", "clamp") and t0 != "f32"):
            raise self._error(f"`{func}` is not defined for `{t0}`")
        return Value(self, N.Call(t0, self._span(), func, [v.expr for v in vals]))

    def __getattr__(self, name: str):  # b.sqrt(x), b.max(a, b), ...: the math intrinsics
        if name in N.INTRINSICS and name not in ("length", "dot"):
            return lambda *args: self.call(name, *args)
        raise AttributeError(f"'KernelBuilder' object has no attribute {name!r}")

    def select(self, cond, if_true, if_false) -> Value:
        """`if cond { a } else { b }` as a value (both sides evaluated, neither may fault)."""
        c = self._value(cond, "bool")
        self._expect(c, "bool", "the condition")
        a = self._value(if_true, if_false.ty if isinstance(if_false, Value) else None)
        f = self._value(if_false, a.ty)
        self._expect(f, a.ty, "the other arm")
        return Value(self, N.Select(a.ty, self._span(), c.expr, a.expr, f.expr))

    # ------------------------------------------------------------ memory

    def _resource(self, r) -> Resource:
        if not isinstance(r, Resource) or r.b is not self:
            raise self._error(f"expected a buffer or workgroup array of this kernel, got {type(r).__name__}")
        return r

    def _index(self, index) -> N.Expr:
        i = self._value(index, "u32")
        self._expect(i, "u32", "an index")
        return i.expr

    def load(self, r: Resource, index) -> Value:
        r = self._resource(r)
        if r.kind == "write":
            raise self._error(f"cannot read write-only `{r.name}`")
        return Value(self, N.Load(r.ty, self._span(), r.name, self._index(index)))

    def len(self, r: Resource) -> Value:
        r = self._resource(r)
        sp = self._span()
        return Value(self, N.Const("u32", sp, r.n) if r.kind == "workgroup" else N.Len("u32", sp, r.name))

    def store(self, r: Resource, value, index) -> None:
        """`r[index] = value` (zyx's argument order: value before index)."""
        r = self._resource(r)
        if r.kind == "read":
            raise self._error(f"cannot write to read-only `{r.name}`; define it with read_only=False")
        i = self._index(index)
        v = self._value(value, r.ty)
        self._expect(v, r.ty, f"an element of `{r.name}`")
        self._emit(N.Store(self._span(), r.name, i, v.expr))

    def atomic_add(self, r: Resource, index, value, name: Optional[str] = None) -> Optional[Value]:
        """`atomic_add(r, index, value)`; with `name`, `let name = ...` (the old value)."""
        r = self._resource(r)
        if r.kind != "read_write" or r.ty not in T.INTS:
            raise self._error(f"`atomic_add` needs a read-write u32 or i32 buffer, `{r.name}` is {r.kind} {r.ty}")
        i = self._index(index)
        v = self._value(value, r.ty)
        self._expect(v, r.ty, f"an element of `{r.name}`")
        sp = self._span()
        target = None
        if name is not None:
            target = self._name(name, "old")
            self.locals[target] = r.ty
            self._emit(N.Let(sp, target, r.ty, None, True))
        self._emit(N.AtomicAdd(sp, target, r.name, i, v.expr))
        return Value(self, N.Var(r.ty, sp, target)) if target is not None else None

    def barrier(self) -> None:
        self._emit(N.Barrier(self._span()))

    # ------------------------------------------------------------ locals and control flow

    def let(self, name: str, value=None, mutable: bool = False, dtype=None) -> Value:
        """`let [mut] name[: T] = value;` (`let mut name: T;` without a value)."""
        ty = self._dtype(dtype) if dtype is not None else None
        if value is None:
            if ty is None:
                raise self._error(f"`{name}` needs a value or a dtype")
            v_expr, mutable = None, True
        else:
            v = self._value(value, ty)
            if ty is not None:
                self._expect(v, ty, f"`{name}`")
            ty, v_expr = v.ty, v.expr
        ir = self._name(name, "v")
        self.locals[ir] = ty
        sp = self._span()
        self._emit(N.Let(sp, ir, ty, v_expr, mutable))
        return Value(self, N.Var(ty, sp, ir))

    def assign(self, var: Value, value) -> None:
        """`var = value;` for a mutable `let`."""
        if not isinstance(var, Value) or not isinstance(var.expr, N.Var) or var.expr.name not in self.locals:
            raise self._error("assign to a local made by let()")
        v = self._value(value, var.ty)
        self._expect(v, var.ty, f"`{var.expr.name}`")
        self._emit(N.Assign(self._span(), N.Var(var.ty, self._span(), var.expr.name), v.expr))

    @contextmanager
    def _block(self, body: list[N.Stmt], loop: bool = False) -> Iterator[None]:
        self.stack.append(body)
        self.loops += loop
        try:
            yield
        finally:
            self.loops -= loop
            self.stack.pop()

    @contextmanager
    def if_(self, cond) -> Iterator[None]:
        c = self._value(cond, "bool")
        self._expect(c, "bool", "the condition")
        stmt = N.If(self._span(), c.expr, [], [])
        self._emit(stmt)
        with self._block(stmt.then_body):
            yield
        self.last_if = stmt

    @contextmanager
    def else_(self) -> Iterator[None]:
        """The `else` of the `if_` block just closed."""
        stmt = self.last_if
        if stmt is None or stmt.else_body:
            raise self._error("else_() must follow an if_() block directly")
        with self._block(stmt.else_body):
            yield
        self.last_if = None

    @contextmanager
    def while_(self, cond) -> Iterator[None]:
        c = self._value(cond, "bool")
        self._expect(c, "bool", "the condition")
        stmt = N.While(self._span(), c.expr, [])
        self._emit(stmt)
        with self._block(stmt.body, loop=True):
            yield

    @contextmanager
    def loop(self) -> Iterator[None]:
        stmt = N.Loop(self._span(), [])
        self._emit(stmt)
        with self._block(stmt.body, loop=True):
            yield

    @contextmanager
    def for_range(self, name: str, start, end, inclusive: bool = False) -> Iterator[Value]:
        """`for name in start..end` (`..=end` when inclusive), u32 or i32; `end` is evaluated
        once, so it must not read memory or mutable locals (bind it with let() first)."""
        if isinstance(start, Value) or not isinstance(end, Value):
            lo = self._value(start, "u32" if not isinstance(end, Value) else None)
            hi = self._value(end, lo.ty)
        else:
            hi = self._value(end)
            lo = self._value(start, hi.ty)
        if lo.ty not in T.INTS or hi.ty != lo.ty:
            raise self._error(f"a range needs two bounds of one integer type, found `{lo.ty}` and `{hi.ty}`")
        for x in N.walk_expr(hi.expr):
            if isinstance(x, N.Load) or (isinstance(x, N.Var) and self._mutable(x.name)):
                raise self._error("the end of the range reads memory or a mutable local: bind it with let() first")
        ir = self._name(name, "k")
        self.locals[ir] = lo.ty
        sp = self._span()
        stmt = N.For(sp, ir, lo.ty, lo.expr, hi.expr, inclusive, [])
        self._emit(stmt)
        with self._block(stmt.body, loop=True):
            yield Value(self, N.Var(lo.ty, sp, ir))

    def _mutable(self, name: str) -> bool:
        return any(isinstance(s, N.Let) and s.name == name and s.mutable for s in N.walk_stmts(self.body))

    def break_(self) -> None:
        if not self.loops:
            raise self._error("`break` outside of a loop")
        self._emit(N.Break(self._span()))

    def continue_(self) -> None:
        if not self.loops:
            raise self._error("`continue` outside of a loop")
        self._emit(N.Continue(self._span()))

    def return_(self) -> None:
        self._emit(N.Return(self._span()))

    # ------------------------------------------------------------ result

    def kernel(self) -> N.Kernel:
        """The IR built so far (a copy), unverified."""
        line = self.lines
        return copy.deepcopy(N.Kernel(
            self.name, self.workgroup_size, self.params, self.arrays, [], self.body,
            [b for b in N.BUILTINS if b in self.builtins], self.file, self.doc,
            N.Span(0, 0, line[0], 1, line[1], 1), dict(self.locals)))

    def verify(self) -> N.Kernel:
        """Check the kernel as the importer does (the IR verifier; barriers every thread
        reaches): a BuilderError names the offending call's line."""
        if len(self.stack) != 1:
            raise self._error("a with-block is still open")
        k = self.kernel()
        try:
            verify(k)
        except VerifyError as e:
            at = f"{self.file}:{e.span.line}: " if e.span is not None else ""
            raise BuilderError(f"kernel `{self.name}`: {at}invalid IR: {e.message}") from None
        for f in divergent_sync_points(k):
            raise BuilderError(f"kernel `{self.name}`: {self.file}:{f.stmt.span.line}: a barrier in control flow "
                               f"that depends on the thread (from line {f.reason.span.line}): every thread of the "
                               f"workgroup must reach it")
        return k

    def build(self) -> "BuiltKernel":
        """Verify and return the kernel, like an imported one (prepare, record, invoke)."""
        return BuiltKernel(self.verify(), dict(self.grid))


class BuiltKernel(KernelDef):
    """A KernelDef made by KernelBuilder, with zyx's `compile(device).forward(inputs, shapes)`."""

    def __init__(self, kernel: N.Kernel, grid: dict[int, int]):
        super().__init__(kernel)
        self.grid = grid

    def compile(self, device: Device, checks: Optional[bool] = None) -> "CompiledKernel":
        return CompiledKernel(self, self.prepare(device, checks))


class CompiledKernel:
    """A built kernel prepared on a device; `forward` allocates the outputs and returns them."""

    def __init__(self, kdef: BuiltKernel, prepared: PreparedKernel):
        self.kdef, self.prepared = kdef, prepared
        self.outputs = [p for p in kdef.ir.params if p.category in ("read_write", "write")]
        self.inputs = [p for p in kdef.ir.params if p not in self.outputs]

    def forward(self, inputs: Sequence[Any], shapes: Sequence[Union[int, Sequence[int]]],
                grid: Any = None) -> list[np.ndarray]:
        """Run once: `inputs` are the read-only buffers (arrays) and scalars in parameter
        order, `shapes` one per output buffer (zero-filled before the run). The grid is
        `group_index`'s extents unless given (`n`, `(x, y)`, `(x, y, z)` threads, or
        `("groups", (gx, gy, gz))`)."""
        k = self.kdef.ir
        if len(inputs) != len(self.inputs) or len(shapes) != len(self.outputs):
            raise BindingError(f"kernel `{k.name}`: forward takes {len(self.inputs)} inputs "
                               f"({', '.join(p.name for p in self.inputs)}) and {len(self.outputs)} output shapes "
                               f"({', '.join(p.name for p in self.outputs)}), got {len(inputs)} and {len(shapes)}")
        dev = self.prepared.device
        given = iter(inputs)
        made = iter(shapes)
        args: list = []
        outs: list = []
        for p in k.params:
            if p in self.outputs:
                shape = next(made)
                shape = (shape,) if isinstance(shape, int) else tuple(shape)
                buf = dev.buffer(np.zeros(int(np.prod(shape)), _NUMPY[p.ty]))
                args.append(buf)
                outs.append((buf, shape))
            elif p.category == "scalar":
                args.append(next(given))
            else:
                a = next(given)
                args.append(a if not isinstance(a, (np.ndarray, list, tuple)) else
                            dev.buffer(np.ascontiguousarray(a, dtype=_NUMPY[p.ty]).reshape(-1)))
        scheme = Scheme(dev)
        node = self.prepared.record(scheme, k.name, *args)
        kind, extent = self._grid(grid)
        node.groups(extent) if kind == "groups" else getattr(node, kind)(*extent)
        scheme.submit()
        return [buf.numpy().reshape(shape) for buf, shape in outs]

    def _grid(self, grid) -> tuple[str, Any]:
        if grid is None:
            axes = self.kdef.grid
            if not axes:
                raise BindingError(f"kernel `{self.kdef.name}`: no group_index(axis, n) gives the grid; "
                                   f"pass forward(..., grid=n)")
            grid = tuple(axes.get(a, 1) for a in range(max(axes) + 1))
        if isinstance(grid, tuple) and len(grid) == 2 and grid[0] == "groups":
            return "groups", tuple(grid[1])
        dims = (grid,) if isinstance(grid, int) else tuple(grid)
        if not 1 <= len(dims) <= 3:
            raise BindingError(f"kernel `{self.kdef.name}`: grid {grid!r}: one to three extents")
        return ("over_1d", "over_2d", "over_3d")[len(dims) - 1], dims
