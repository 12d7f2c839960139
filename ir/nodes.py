"""Kernel IR: typed, structured, every node spanned.

Expressions are side-effect free; everything that writes memory or synchronises is a
statement. Locals are uniquely named within a kernel (the importer renames shadowed Rust
bindings `x`, `x_1`, ...), so emitters can declare them without scoping worries.
A `Var` names either a local or a scalar/uniform parameter; emitters tell them apart
through `Kernel.param(name)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Union


@dataclass(frozen=True)
class Span:
    """A region of the Rust source: byte offsets, and 1-based line/column (in characters)."""

    start: int
    end: int
    line: int
    col: int
    end_line: int
    end_col: int


NO_SPAN = Span(0, 0, 1, 1, 1, 1)

# ---------------------------------------------------------------- expressions

BINARY_OPS = (
    "add", "sub", "mul", "div", "rem",
    "bitand", "bitor", "bitxor", "shl", "shr",
    "eq", "ne", "lt", "le", "gt", "ge",
    "and", "or",
)
COMPARISONS = ("eq", "ne", "lt", "le", "gt", "ge")
LOGICAL = ("and", "or")
UNARY_OPS = ("neg", "not")

# Math intrinsics: name -> arity. `fma(a, b, c)` is `a.mul_add(b, c)`; `from_bits`
# reinterprets u32 as f32 and `to_bits` the reverse.
INTRINSICS = {
    "abs": 1, "floor": 1, "ceil": 1, "trunc": 1, "round": 1, "sqrt": 1,
    "sin": 1, "cos": 1, "tan": 1, "exp": 1, "exp2": 1, "log": 1, "log2": 1,
    "length": 1, "from_bits": 1, "to_bits": 1,
    "min": 2, "max": 2, "pow": 2, "dot": 2,
    "clamp": 3, "fma": 3,
    # the math library's (ir/mathlib.py)
    "tanh": 1, "atan2": 2, "hypot": 2,
    # one rule each on scalars (ir/rules.py CALLS)
    "signum": 1, "is_nan": 1, "is_finite": 1, "is_infinite": 1,
    "count_ones": 1, "leading_zeros": 1, "trailing_zeros": 1, "rotate_left": 2, "rotate_right": 2,
}

BUILTINS = ("global_id", "local_id", "workgroup_id", "num_workgroups", "workgroup_size")


@dataclass
class Expr:
    ty: str
    span: Span


@dataclass
class Const(Expr):
    value: Union[int, float, bool]


@dataclass
class Var(Expr):
    name: str


@dataclass
class Builtin(Expr):
    """One of BUILTINS, a vec3<u32>."""

    name: str


@dataclass
class Load(Expr):
    """Element `index` of a buffer, tensor view (logical index), workgroup array or,
    for an image, the texel at a vec2<u32> coordinate."""

    resource: str
    index: Expr
    check: int = -1  # trapping-check site id (ir/checks.py), -1: no check needed


@dataclass
class Len(Expr):
    """Logical element count of a buffer, tensor view or workgroup array (u32)."""

    resource: str


@dataclass
class TensorDim(Expr):
    resource: str
    axis: Expr


@dataclass
class TensorRank(Expr):
    resource: str


@dataclass
class ImageSize(Expr):
    """Width (axis 0) or height (axis 1) of a storage image, u32."""

    resource: str
    axis: int


@dataclass
class Field(Expr):
    value: Expr
    name: str


@dataclass
class Swizzle(Expr):
    """Lanes of a vector by letters from `xyzw`; one letter gives a scalar."""

    value: Expr
    lanes: str


@dataclass
class Unary(Expr):
    op: str
    operand: Expr


@dataclass
class Binary(Expr):
    op: str
    lhs: Expr
    rhs: Expr
    check: int = -1  # integer div/rem: division-by-zero check site id, -1: none


@dataclass
class Cast(Expr):
    """Rust `as` between scalar types (saturating float->int, wrapping int->int)."""

    value: Expr


@dataclass
class Call(Expr):
    """A math intrinsic from INTRINSICS."""

    func: str
    args: list[Expr]


@dataclass
class Construct(Expr):
    """A vector built from scalars or smaller vectors (`float3(a, b, c)`)."""

    args: list[Expr]


@dataclass
class Select(Expr):
    """`if cond { a } else { b }` whose arms are side-effect free and cannot fault."""

    cond: Expr
    if_true: Expr
    if_false: Expr


# ---------------------------------------------------------------- statements


@dataclass
class Stmt:
    span: Span


@dataclass
class Let(Stmt):
    """Declares local `name`. Without a value it is always `mutable` (assigned later)."""

    name: str
    ty: str
    value: Optional[Expr]
    mutable: bool


@dataclass
class Assign(Stmt):
    """`target = value` where target is a Var, or a Field/Swizzle chain rooted at one."""

    target: Expr
    value: Expr


@dataclass
class Store(Stmt):
    """Write one element of a buffer, tensor view, workgroup array or image."""

    resource: str
    index: Expr
    value: Expr
    check: int = -1  # trapping-check site id (ir/checks.py), -1: no check needed


@dataclass
class If(Stmt):
    cond: Expr
    then_body: list[Stmt]
    else_body: list[Stmt]


@dataclass
class While(Stmt):
    cond: Expr
    body: list[Stmt]


@dataclass
class Loop(Stmt):
    body: list[Stmt]


@dataclass
class For(Stmt):
    """`for var in start..end` (or `..=end` when inclusive); var is u32 or i32. The importer
    keeps `end` loop-invariant (no loads, no mutable locals), so evaluating it once or on
    every iteration gives the same result."""

    var: str
    ty: str
    start: Expr
    end: Expr
    inclusive: bool
    body: list[Stmt]


@dataclass
class Break(Stmt):
    pass


@dataclass
class Continue(Stmt):
    pass


@dataclass
class Return(Stmt):
    pass


@dataclass
class Barrier(Stmt):
    pass


@dataclass
class Reduce(Stmt):
    """`target = workgroup_{op}::<n>(value, scratch)`: every lane receives the pairwise-tree
    combination of all n lanes' values (lane l with lane l + 2^s, s = 0, 1, ...); ends with
    a barrier."""

    target: str
    op: str  # "sum" | "max"
    n: int
    value: Expr
    scratch: str


@dataclass
class Softmax(Stmt):
    """`workgroup_softmax_in_place::<n>(resource, base, count, scratch)`."""

    n: int
    resource: str
    base: Expr
    count: Expr
    scratch: str


# Atomic read-modify-writes: the new value from the old one `o` and the operand `v`.
# `compare_exchange` stores `v` where `o == compare`; every one returns `o`.
ATOMIC_OPS = ("add", "sub", "min", "max", "and", "or", "xor", "exchange", "compare_exchange")


@dataclass
class Atomic(Stmt):
    """`target = atomic_<op>(resource, index, value)` (target None when discarded) on a
    buffer or a workgroup array; `compare` is compare_exchange's expected value."""

    target: Optional[str]
    resource: str
    index: Expr
    value: Expr
    check: int = -1  # trapping-check site id (ir/checks.py), -1: no check needed
    op: str = "add"  # one of ATOMIC_OPS
    compare: Optional[Expr] = None


AtomicAdd = Atomic  # the name before the other operations existed


# ---------------------------------------------------------------- declarations

PARAM_CATEGORIES = (
    "read",          # &[T], gpu::BufRO<T>
    "read_write",    # &mut [T]
    "write",         # gpu::Scattered<T>
    "scalar",        # u32 i32 f32 bool
    "tensor",        # gpu::Tensor<T>
    "tensor_mut",    # gpu::TensorMut<T>
    "tensor_write",  # gpu::TensorWrite<T>
    "uniform",       # gpu::Uniform<S>
    "image",         # gpu::DirectSpatial<E>
)
BUFFER_CATEGORIES = ("read", "read_write", "write")
TENSOR_CATEGORIES = ("tensor", "tensor_mut", "tensor_write")
WRITABLE_CATEGORIES = ("read_write", "write", "tensor_mut", "tensor_write", "image")
READABLE_CATEGORIES = ("read", "read_write", "tensor", "tensor_mut", "image")


@dataclass
class Param:
    name: str
    category: str
    ty: str  # element type for buffers/tensors/images, value type for scalars/uniforms
    span: Span
    shape: Optional[list[Union[str, int]]] = None  # tensor contract: "_", int or identifier
    fact: bool = False  # `#[fact]` scalar: fixed when the op is recorded, always baked (ir/specialize.py)


@dataclass
class WorkgroupArray:
    name: str
    ty: str
    size: int
    span: Span


@dataclass
class StructField:
    name: str
    ty: str
    span: Span


@dataclass
class StructDecl:
    name: str
    fields: list[StructField]
    span: Span


@dataclass
class Kernel:
    name: str
    workgroup_size: tuple[int, int, int]
    params: list[Param]
    workgroup_arrays: list[WorkgroupArray]
    structs: list[StructDecl]
    body: list[Stmt]
    builtins: list[str]  # builtins the body uses, in BUILTINS order
    source_file: str
    doc: str
    span: Span
    locals: dict[str, str] = field(default_factory=dict)  # every local's name -> type
    # The Rust text of lines span.line..span.end_line, so emitters can quote the source
    # (PTX line comments) without reading a file that may have moved; empty when built in Python.
    source_lines: list[str] = field(default_factory=list)

    def source_line(self, line: int) -> str:
        """The Rust text of 1-based `line`, or "" where the kernel does not carry it."""
        i = line - self.span.line
        return self.source_lines[i] if 0 <= i < len(self.source_lines) else ""

    def param(self, name: str) -> Optional[Param]:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def workgroup_array(self, name: str) -> Optional[WorkgroupArray]:
        for w in self.workgroup_arrays:
            if w.name == name:
                return w
        return None

    def struct(self, name: str) -> Optional[StructDecl]:
        for s in self.structs:
            if s.name == name:
                return s
        return None


def walk_stmts(body: list[Stmt]):
    """Every statement, depth first, in source order."""
    for s in body:
        yield s
        for child in child_bodies(s):
            yield from walk_stmts(child)


# Each node class's child getter, found once by the isinstance ladders below (subclasses
# included): walks call these per node, and the ladders were most of a walk's time.
_BODIES: dict = {}
_EXPRS: dict = {}
_KIDS: dict = {}


def _getter(cache: dict, t: type, ladder):
    g = cache[t] = ladder(t)
    return g


def _bodies_of(t: type):
    if issubclass(t, If):
        return lambda s: [s.then_body, s.else_body]
    if issubclass(t, (While, Loop, For)):
        return lambda s: [s.body]
    return None


def _exprs_of(t: type):
    if issubclass(t, Let):
        return lambda s: [s.value] if s.value is not None else []
    if issubclass(t, Assign):
        return lambda s: [s.target, s.value]
    if issubclass(t, Store):
        return lambda s: [s.index, s.value]
    if issubclass(t, (If, While)):
        return lambda s: [s.cond]
    if issubclass(t, For):
        return lambda s: [s.start, s.end]
    if issubclass(t, Reduce):
        return lambda s: [s.value]
    if issubclass(t, Softmax):
        return lambda s: [s.base, s.count]
    if issubclass(t, Atomic):
        return lambda s: [s.index, s.value] + ([s.compare] if s.compare is not None else [])
    return None


def _kids_of(t: type):
    if issubclass(t, Load):
        return lambda e: [e.index]
    if issubclass(t, TensorDim):
        return lambda e: [e.axis]
    if issubclass(t, (Field, Swizzle, Cast)):
        return lambda e: [e.value]
    if issubclass(t, Unary):
        return lambda e: [e.operand]
    if issubclass(t, Binary):
        return lambda e: [e.lhs, e.rhs]
    if issubclass(t, (Call, Construct)):
        return lambda e: list(e.args)
    if issubclass(t, Select):
        return lambda e: [e.cond, e.if_true, e.if_false]
    return None


def child_bodies(s: Stmt) -> list[list[Stmt]]:
    t = type(s)
    g = _BODIES[t] if t in _BODIES else _getter(_BODIES, t, _bodies_of)
    return g(s) if g is not None else []


def stmt_exprs(s: Stmt) -> list[Expr]:
    """The expressions a statement evaluates directly (not those of nested bodies)."""
    t = type(s)
    g = _EXPRS[t] if t in _EXPRS else _getter(_EXPRS, t, _exprs_of)
    return g(s) if g is not None else []


def expr_children(e: Expr) -> list[Expr]:
    t = type(e)
    g = _KIDS[t] if t in _KIDS else _getter(_KIDS, t, _kids_of)
    return g(e) if g is not None else []


def walk_expr(e: Expr):
    """`e` and every subexpression, parents first, left to right. Iterative: nested
    generators would make each node cost its depth."""
    stack = [e]
    kids = _KIDS
    while stack:
        x = stack.pop()
        yield x
        t = type(x)
        g = kids[t] if t in kids else _getter(kids, t, _kids_of)
        if g is not None:
            children = g(x)
            if children:
                stack.extend(reversed(children))
