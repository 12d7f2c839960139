"""Specialization: a kernel with some of its run-time facts baked in as constants.

`specialize(kernel, scalars, tensors)` returns a copy of `kernel` (the input is left as it
is) in which every read of a baked scalar parameter is its value, and every `rank()`,
`dim(a)` (constant `a`) and `len()` of a baked tensor view is read from its layout record;
constant subexpressions are then folded with ir/fold.py (Rust's rules, one place), `if`s
and `while`s on a constant condition lose the arm that cannot run, and `&&` / `||` /
`select` with a constant deciding operand keep the operand that decides; repeated guards
(`if c {A} if c {B}`, a fused region's stages) merge (ir/guards.py); baked buffer lengths
prove the bounds checks below them. The parameter list
is unchanged, so a variant binds exactly the arguments of the universal program (it simply
never reads the baked ones) and runs through the same pipeline (checks, legalisation).

`live` scalars (name -> word) are the opposite of baked ones: values that change between
submits, read from a word of the scheme's live block (runtime/live_scalars.py) instead of
the parameter. The variant gains one last parameter, `live: &[u32]` (under a name no
parameter or local has), and starts with
one `let` per live scalar loading its word (`from_bits` for f32, `as i32`, `!= 0` for
bool: the same bits as the parameter); the parameter itself is no longer read. Changing
such a scalar then changes a word of memory, not the dispatch's arguments.

What is never folded, so a variant computes the same bits as the universal program on
every backend: integer division or remainder by zero (its trapping check must still run
and fault), f32 `/`, `%` and `sqrt` (WGSL allows them inexact, so a backend's run-time
value may differ from the correctly rounded constant), and anything ir/fold.py leaves alone
(transcendentals, vectors). Non-finite f32 values are not baked (see `bakeable`).
"""

from __future__ import annotations

import copy
import math
from typing import Mapping, Optional, Sequence, Union

from . import nodes as N
from .fold import fold
from .guards import merge_guards

__all__ = ["specialize", "bakeable"]

Value = Union[int, float, bool]

_NOT_FOLDED_F32 = ("div", "rem")
_NOT_FOLDED_CALLS = ("sqrt",)


def bakeable(ty: str, value: Value) -> bool:
    """Whether a scalar value may become a constant: every finite value (an f32 NaN or
    infinity is left a run-time value: not every target prints it as a literal)."""
    return not (ty == "f32" and not math.isfinite(float(value)))


def specialize(kernel: N.Kernel, scalars: Mapping[str, Value],
               tensors: Optional[Mapping[str, Sequence[int]]] = None,
               live: Optional[Mapping[str, int]] = None, live_words: int = 0) -> N.Kernel:
    """`kernel` with the scalar parameters in `scalars` and the tensor layouts in `tensors`
    (name -> the 12-u32 layout record of runtime/tensor.py) baked in; `tensors` may also
    give a buffer's logical length as ("len", n): its `len()` reads are baked and the
    accesses it bounds are proven (`_assume_lengths`).
    `live`: scalar name -> its word in the live block of `live_words` words (module docstring)."""
    tensors = dict(tensors or {})
    lengths = {n: int(v[1]) for n, v in tensors.items() if len(v) == 2 and v[0] == "len"}
    k = copy.deepcopy(kernel)
    rename = {}
    if live:
        block, rename = _add_live(k, dict(live))
        lengths[block] = live_words
    _Baker(k, dict(scalars), {n: v for n, v in tensors.items() if n not in lengths}, lengths, rename).run()
    merge_guards(k)  # fused stages' guards, now one condition
    _assume_lengths(k, lengths)
    return k


def _assume_lengths(k: N.Kernel, lengths: dict) -> None:
    """The body under `if x.len() >= n && ... { }` for the baked buffer lengths: always
    true (the variant runs only with those lengths), it gives ir/checks.py the facts
    `n <= x.len()` that prove accesses below a baked bound. Kernels with barriers or
    collectives are left as they are (their lanes entry wants every barrier outside any
    `if`)."""
    if not lengths or any(isinstance(s, (N.Barrier, N.Reduce, N.Softmax)) for s in N.walk_stmts(k.body)):
        return
    sp = k.span
    cond: Optional[N.Expr] = None
    for name, n in lengths.items():
        c = N.Binary("bool", sp, "ge", N.Len("u32", sp, name), N.Const("u32", sp, n))
        cond = c if cond is None else N.Binary("bool", sp, "and", cond, c)
    k.body = [N.If(sp, cond, k.body, [])]


def _add_live(k: N.Kernel, live: dict) -> tuple[str, dict]:
    """Appends the live block's parameter and the `let`s that read the live scalars' words;
    returns its name and the renaming (scalar parameter -> its local) for the body's reads."""
    sp = k.span
    block = _fresh(k, "live")
    k.params.append(N.Param(block, "read", "u32", sp))
    rename: dict[str, str] = {}
    lets: list[N.Stmt] = []
    for name, word in live.items():
        p = k.param(name)
        assert p is not None and p.category == "scalar", name
        word_of = N.Load("u32", sp, block, N.Const("u32", sp, int(word)))
        value: N.Expr = (word_of if p.ty == "u32" else N.Cast("i32", sp, word_of) if p.ty == "i32"
                         else N.Call("f32", sp, "from_bits", [word_of]) if p.ty == "f32"
                         else N.Binary("bool", sp, "ne", word_of, N.Const("u32", sp, 0)))
        local = _fresh(k, f"{name}_live")
        k.locals[local] = p.ty
        rename[name] = local
        lets.append(N.Let(sp, local, p.ty, value, False))
    k.body = lets + k.body
    return block, rename


def _fresh(k: N.Kernel, name: str) -> str:
    """`name`, or `name` and a number, that no parameter, local or workgroup array of `k` has."""
    out, n = name, 0
    while out in k.locals or k.param(out) is not None or k.workgroup_array(out) is not None:
        n += 1
        out = f"{name}{n}"
    return out


class _Baker:
    def __init__(self, k: N.Kernel, scalars: dict, tensors: dict, lengths: dict, rename: Optional[dict] = None):
        self.k = k
        self.rename = rename or {}  # live scalar -> the local holding its word (_add_live)
        self.scalars = {n: (k.param(n).ty, v) for n, v in scalars.items()}  # type: ignore[union-attr]
        self.tensors = tensors
        self.lengths = lengths  # buffer name -> its logical length

    def run(self) -> None:
        self.k.body = self.block(self.k.body)

    # -- statements

    def block(self, body: list[N.Stmt]) -> list[N.Stmt]:
        out: list[N.Stmt] = []
        for s in body:
            out.extend(self.stmt(s))
        return out

    def stmt(self, s: N.Stmt) -> list[N.Stmt]:
        for f in ("value", "target", "index", "cond", "start", "end", "base", "count", "compare"):
            e = getattr(s, f, None)
            if isinstance(e, N.Expr):
                setattr(s, f, self.expr(e))
        if isinstance(s, N.If):
            c = _const(s.cond)
            if c is not None:  # the arm that cannot run goes; locals are unique, so no scoping
                return self.block(s.then_body if c else s.else_body)
            s.then_body, s.else_body = self.block(s.then_body), self.block(s.else_body)
        elif isinstance(s, N.While):
            if _const(s.cond) is False:
                return []
            s.body = self.block(s.body)
        elif isinstance(s, (N.Loop, N.For)):
            s.body = self.block(s.body)
        return [s]

    # -- expressions (children first, then the node itself)

    def expr(self, e: N.Expr) -> N.Expr:
        for f in ("value", "operand", "lhs", "rhs", "index", "axis", "cond", "if_true", "if_false"):
            c = getattr(e, f, None)
            if isinstance(c, N.Expr):
                setattr(e, f, self.expr(c))
        if isinstance(e, (N.Call, N.Construct)):
            e.args = [self.expr(a) for a in e.args]
        return self.node(e)

    def node(self, e: N.Expr) -> N.Expr:
        if isinstance(e, N.Var) and e.name in self.scalars:
            ty, v = self.scalars[e.name]
            return N.Const(ty, e.span, v)
        if isinstance(e, N.Var) and e.name in self.rename:
            return N.Var(e.ty, e.span, self.rename[e.name])
        if isinstance(e, N.Len) and e.resource in self.lengths:
            return N.Const("u32", e.span, self.lengths[e.resource])
        lay = self.tensors.get(getattr(e, "resource", None))
        if lay is not None:
            if isinstance(e, N.TensorRank):
                return N.Const("u32", e.span, int(lay[1]))
            if isinstance(e, N.Len):
                return N.Const("u32", e.span, int(lay[2]))
            if isinstance(e, N.TensorDim):
                a = _const(e.axis)
                if isinstance(a, int) and not isinstance(a, bool) and 0 <= a < 4:
                    return N.Const("u32", e.span, int(lay[3 + a]))
            return e
        if isinstance(e, N.Select):
            c = _const(e.cond)
            if c is not None:
                return e.if_true if c else e.if_false
        if isinstance(e, N.Binary) and e.op in N.LOGICAL:
            a = _const(e.lhs)
            if a is not None:  # `true && x` is x, `false || x` is x; the other two decide alone
                decides = (not a) if e.op == "and" else a
                return N.Const("bool", e.span, bool(a)) if decides else e.rhs
        if isinstance(e, N.Const) or not _foldable(e):
            return e
        v = fold(e)
        return e if v is None else N.Const(e.ty, e.span, v)


def _const(e: N.Expr) -> Optional[Value]:
    return e.value if isinstance(e, N.Const) else None


def _foldable(e: N.Expr) -> bool:
    """Only nodes whose operands are constants now, and only what every backend computes
    exactly as ir/fold.py does (module docstring)."""
    if not all(isinstance(c, N.Const) for c in N.expr_children(e)):
        return False
    if isinstance(e, N.Binary) and e.op in ("div", "rem"):
        if e.lhs.ty == "f32" and e.op in _NOT_FOLDED_F32:
            return False
        return e.rhs.value != 0  # type: ignore[attr-defined]
    if isinstance(e, N.Call) and e.func in _NOT_FOLDED_CALLS:
        return False
    return True
