"""A hypothesis strategy for well-typed random kernels, written as Rust source text.

`kernels()` draws a `GenKernel`: one `#[goldy::compute]` function `fuzz` over every scalar
type of the dialect (u32, i32, f32, bool), every operator, `as` casts, `if`/`else` and
`if` values, bounded `for` and `while` loops with `break`/`continue`, early returns,
guarded buffer reads at computed indices, the math intrinsics and transcendentals, and
the workgroup operations. Every kernel it produces must import with no diagnostic at all:
a generator that produced an invalid program would be a bug of this file (tests assert it).

The signature is fixed; each thread writes only its own elements (no races):

    fn fuzz(xu: &[u32], xi: &[i32], xf: &[f32], xb: &[bool],
            ou: &mut [u32], oi: gpu::Scattered<i32>, of: &mut [f32], ob: &mut [bool],
            sm: &mut [f32], pu: u32, pi: i32, pf: f32, pb: bool)

A kernel has two parts.

- The *uniform prelude* runs on every thread of every workgroup (threads past `n`
  included: no `return`, `break` or `continue`, reads of `ou of ob` at `i` guarded). It
  holds the workgroup operations, each sometimes inside an `if` on a uniform condition
  (scalars, lengths, earlier collective results) or a constant `for`: `workgroup_sum` and
  `workgroup_max` of `u32 i32 f32` whose result is used by the very next statement;
  exchanges through a workgroup array (every lane writes its slot, barrier, lanes read
  other lanes' slots, barrier); and `workgroup_softmax_in_place` on the workgroup's own row
  of `sm` (`row = workgroup_id().x * ROW`) with `count` below, at and above the workgroup
  size, read back right after the call. One scratch array per type serves every operation
  of that type, so each relies on the previous one's trailing barrier.
- The *body* follows `if i >= ou.len() { return; }`: random statements over the prelude's
  values, stores to `ou[i] oi[i] of[i] ob[i]` and reads of them back.

Every operation the dialect has is exact on every backend (docs/semantics.md; the
transcendentals come from one math library, ir/mathlib.py), so every output is compared
bit for bit, NaN as one value. Values cover the edges: negative integers for every
integer operator (`/ %` with negative operands, `i32::MIN / -1`, shifts by >= 32 and by
negative amounts), NaN, infinities, -0.0 and subnormals for every float operator. Two
things Rust leaves open are kept out: which zero `f32::min`/`max`/`clamp` return for
`-0.0` against `0.0` (their operands go through `+ 0.0`, which makes every zero `+0.0`),
and NaN payloads (`to_bits` of a NaN is replaced by `0x7fc00000`). Constructs a backend is
known to get wrong, pinned by a corpus case, are left out on that backend (KNOWN_WRONG).

Integer division and remainder never divide by zero (`a / (b | 1)`, `a / (if d == 0 {..}
else { d })`, nonzero constants) unless the kernel is drawn `unchecked`: then raw divisors
appear too and the kernel must run with trapping checks off (division by zero gives 0).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Optional

import numpy as np
from hypothesis import strategies as st

NAME = "fuzz"
TYPES = ("u32", "i32", "f32", "bool")
INPUTS = {"u32": "xu", "i32": "xi", "f32": "xf", "bool": "xb"}
OUTPUTS = {"u32": "ou", "i32": "oi", "f32": "of", "bool": "ob"}
READABLE_OUTPUTS = {"u32": "ou", "f32": "of", "bool": "ob"}  # oi is Scattered: write-only
SCALARS = {"u32": "pu", "i32": "pi", "f32": "pf", "bool": "pb"}
SCRATCH = {"u32": "su", "i32": "si", "f32": "sf"}
PARAMS = ["xu", "xi", "xf", "xb", "ou", "oi", "of", "ob", "sm", "pu", "pi", "pf", "pb"]
SIGNATURE = ("xu: &[u32], xi: &[i32], xf: &[f32], xb: &[bool], "
             "ou: &mut [u32], oi: gpu::Scattered<i32>, of: &mut [f32], ob: &mut [bool], "
             "sm: &mut [f32], pu: u32, pi: i32, pf: f32, pb: bool")
WORKGROUP_SIZES = (8, 32, 64)
EXACT_INTRINSICS = {"sqrt", "abs", "floor", "ceil", "trunc", "round", "min", "max", "clamp", "fma", "from_bits",
                    "to_bits"}
TRANSCENDENTAL = {"sin", "cos", "tan", "exp", "exp2", "log", "log2", "pow"}
COLLECTIVES = {"workgroup_sum", "workgroup_max", "workgroup_softmax_in_place", "exchange"}


# Wrong answers the corpus (tests/data/fuzz_corpus/) already pins with a strict xfail: the
# generator leaves these constructs out on the backends named, so that the fuzz stays green
# and finds new cases; the entry goes with the fix (the corpus case then flips first).
KNOWN_WRONG: dict[str, dict[str, str]] = {}


def avoided(backend: str) -> frozenset:
    return frozenset(KNOWN_WRONG.get(backend, {}))


def row_len(wg: int) -> int:
    """Elements of `sm` per workgroup: room for a softmax of 3 * wg at an offset up to 4."""
    return 3 * wg + 4


@dataclass
class GenKernel:
    source: str
    wg: int
    unchecked: bool = False  # raw integer divisors: run with trapping checks off
    intrinsics: set[str] = field(default_factory=set)  # every math intrinsic used
    collectives: set[str] = field(default_factory=set)  # workgroup operations used
    statements: int = 0

    @property
    def row(self) -> int:
        return row_len(self.wg)

    def inputs(self, n: int, seed: int) -> list:
        return inputs(n, seed, self.wg)


# ---------------------------------------------------------------- literals


def _f32_text(v: float) -> str:
    if np.isnan(v):
        return "f32::from_bits(0x7fc00000u32)"
    if np.isinf(v):
        return "f32::INFINITY" if v > 0 else "f32::NEG_INFINITY"
    t = str(np.float32(v))  # the shortest decimal that rounds back to this f32
    if "e" in t and "." not in t.split("e")[0]:
        t = t.replace("e", ".0e")
    elif "." not in t and "e" not in t:
        t += ".0"
    return f"{t}f32" if not t.startswith("-") else f"(-{t[1:]}f32)"


def _int_text(v: int, ty: str) -> str:
    if ty == "i32" and v == -(2**31):
        return "i32::MIN"
    return f"{v}{ty}" if v >= 0 else f"(-{-v}{ty})"


U32_SPECIAL = [0, 1, 2, 3, 4, 7, 9, 31, 32, 33, 63, 64, 255, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
I32_SPECIAL = [0, 1, -1, 2, -2, 3, -3, -4, 7, -7, 9, -9, 31, 32, -32, 33, -33, 2**31 - 1, -(2**31),
               -(2**31) + 1]
SHIFT_AMOUNTS = [0, 1, 31, 32, 33, 63, 64, 255, -1, -31, -32, -33, -(2**31)]  # negatives as i32 only
SUBNORMALS = [1e-45, 3e-45, -3e-45, 1e-40, -5e-40, 1.1754942e-38, -1.1754942e-38]
F32_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, 31.0, 100.0, 1e6, -1e6, 0.1, 1e-3, 16777217.0,
               2147483648.0, -2147483904.0, 4294967296.0, float("nan"), float("inf"), float("-inf"),
               3.4028235e38, -3.4028235e38, 1.1754944e-38] + SUBNORMALS
F32_CONSTANTS = ["f32::MAX", "f32::MIN", "f32::MIN_POSITIVE", "f32::EPSILON", "f32::INFINITY", "f32::NEG_INFINITY"]


_INTS: dict[tuple[int, int], st.SearchStrategy[int]] = {}


class RandomDraw:
    """Stands in for hypothesis' `draw` when kernels come from a `random.Random` instead
    (`sample()`): unbiased by hypothesis' preference for small examples, and fast."""

    def __init__(self, rng: random.Random):
        self.rng = rng


def _int(draw, lo: int, hi: int) -> int:
    """`draw(st.integers(lo, hi))` with the strategy built once (building is the slow part)."""
    if isinstance(draw, RandomDraw):
        return draw.rng.randint(lo, hi)
    s = _INTS.get((lo, hi))
    if s is None:
        s = _INTS[(lo, hi)] = st.integers(lo, hi)
    return draw(s)


def _pick(draw, seq):
    return seq[_int(draw, 0, len(seq) - 1)]


_F32_RANDOM = st.floats(-1000.0, 1000.0, allow_nan=False, width=32)


def literal(draw, ty: str) -> str:
    if ty == "bool":
        return _pick(draw, ["true", "false"])
    kind = _int(draw, 0, 2)
    if ty == "u32":
        v = _pick(draw, U32_SPECIAL) if kind == 0 else _int(draw, 0, 64) if kind == 1 else _int(draw, 0, 2**32 - 1)
        return f"{v}u32"
    if ty == "i32":
        v = _pick(draw, I32_SPECIAL) if kind == 0 else _int(draw, -64, 64) if kind == 1 else \
            _int(draw, -(2**31), 2**31 - 1)
        return _int_text(v, "i32")
    if kind == 2:
        v = float(np.float32(draw.rng.uniform(-1000, 1000))) if isinstance(draw, RandomDraw) else draw(_F32_RANDOM)
    elif kind == 0:
        if _int(draw, 0, 5) == 0:
            return _pick(draw, F32_CONSTANTS)
        v = _pick(draw, F32_SPECIAL)
    else:
        v = _int(draw, -20, 20) / 2
    return _f32_text(v)


# ---------------------------------------------------------------- the generator


@dataclass
class _Var:
    name: str
    ty: str
    mutable: bool
    uniform: bool = False  # the same on every lane of a workgroup (may decide a barrier)


class _Gen:
    """Draws one kernel. Scopes are a stack of variable lists; every name is fresh."""

    def __init__(self, draw, max_depth: int, max_stmts: int, wg: int, unchecked: bool, avoid: frozenset):
        self.draw = draw
        self.avoid = avoid
        self.max_depth = max_depth
        self.budget = max_stmts
        self.wg = wg
        self.unchecked = unchecked
        self.scopes: list[list[_Var]] = [[_Var("i", "u32", False), _Var("lid", "u32", False),
                                          _Var("row", "u32", False, uniform=True)] +
                                         [_Var(SCALARS[t], t, False, uniform=True) for t in TYPES]]
        self.counter = 0
        self.intrinsics: set[str] = set()
        self.collectives: set[str] = set()
        self.scratch: set[str] = set()  # workgroup arrays used (declared at the top)
        self.statements = 0
        self.in_range = False  # i < n holds (the body); false in the prelude
        self.uniform = False  # drawing a uniform expression: uniform names, no loads
        self.last: Optional[_Var] = None  # the value a workgroup operation just produced
        self.reductions = False  # draw reduction loops too (tests/test_cpu_loops.py)

    def num(self, lo: int, hi: int) -> int:
        return _int(self.draw, lo, hi)

    def pick(self, seq):
        return _pick(self.draw, seq)

    def flip(self) -> bool:
        return _int(self.draw, 0, 1) == 1

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def vars(self, ty: str, mutable: bool = False) -> list[_Var]:
        return [v for sc in self.scopes for v in sc
                if v.ty == ty and (v.mutable or not mutable) and (v.uniform or not self.uniform)]

    def declare(self, name: str, ty: str, mutable: bool = False, uniform: bool = False) -> _Var:
        v = _Var(name, ty, mutable, uniform)
        self.scopes[-1].append(v)
        return v

    # -------------------------------------------------------- expressions

    def expr(self, ty: str, depth: int) -> str:
        if depth <= 0 or self.num(0, 3) == 0:
            return self.leaf(ty)
        kind = self.pick(self.kinds(ty))
        return getattr(self, f"e_{kind}")(ty, depth - 1)

    def uniform_expr(self, ty: str, depth: int) -> str:
        was, self.uniform = self.uniform, True
        try:
            return self.expr(ty, depth)
        finally:
            self.uniform = was

    def kinds(self, ty: str) -> list[str]:
        reads = [] if self.uniform else ["read", "read"]
        common = ["binary", "cast", "select"] + reads
        if ty == "u32":
            return common + ["binary", "unary", "int_call", "divide", "shift", "to_bits"]
        if ty == "i32":
            return common + ["binary", "unary", "int_call", "divide", "shift"]
        if ty == "f32":
            return common + ["binary", "unary", "float_call", "float_call", "transcendental", "from_bits"]
        return ["compare", "compare", "logic", "unary", "select", "bool_eq"] + reads[:1]

    def leaf(self, ty: str) -> str:
        options = self.vars(ty)
        if options and self.flip():
            return self.pick(options).name
        if ty == "u32" and self.num(0, 5) == 0:
            return f"{self.pick(list(INPUTS.values()) + list(OUTPUTS.values()) + ['sm'])}.len()"
        return literal(self.draw, ty)

    def e_binary(self, ty: str, depth: int) -> str:
        ops = {"u32": ["+", "-", "*", "&", "|", "^"], "i32": ["+", "-", "*", "&", "|", "^"],
               "f32": ["+", "-", "*", "/", "%"]}[ty]
        op = self.pick(ops)
        return f"({self.expr(ty, depth)} {op} {self.expr(ty, depth)})"

    def divisor(self, ty: str, depth: int) -> str:
        """A divisor that is never zero (unless the kernel runs unchecked)."""
        kind = self.num(0, 4 if self.unchecked else 3)
        one = f"1{ty}"
        if kind == 0:
            return f"({self.expr(ty, depth)} | {one})"
        if kind == 1:
            d = self.fresh("d")
            return (f"({{ let {d}: {ty} = {self.expr(ty, depth)}; "
                    f"if {d} == 0{ty} {{ {literal(self.draw, ty)} | {one} }} "
                    f"else {{ {d} }} }})")
        if kind == 2:
            vals = [1, 3, 7, 0xFFFFFFFF, 0x80000000] if ty == "u32" else [-1, 3, -3, -4, 7, -(2**31), 2**31 - 1]
            return _int_text(self.pick(vals), ty)
        if kind == 3:
            return f"({self.expr(ty, depth)} | {one})"
        return self.expr(ty, depth)  # may be zero: only in unchecked kernels

    def e_divide(self, ty: str, depth: int) -> str:
        op = self.pick(["/", "%"])
        return f"({self.expr(ty, depth)} {op} {self.divisor(ty, depth)})"

    def shift_amount(self, depth: int) -> str:
        ty = self.pick(["u32", "i32"])
        if self.flip():
            v = self.pick(SHIFT_AMOUNTS)
            return _int_text(v if ty == "i32" or v >= 0 else v & 0xFFFFFFFF, ty)
        return self.expr(ty, depth)

    def e_shift(self, ty: str, depth: int) -> str:
        op = self.pick(["<<", ">>"])
        return f"({self.expr(ty, depth)} {op} {self.shift_amount(depth)})"

    def e_unary(self, ty: str, depth: int) -> str:
        if ty == "u32" or ty == "bool":
            return f"(!{self.expr(ty, depth)})"
        op = self.pick(["-", "!"] if ty == "i32" else ["-"])
        return f"({op}{self.expr(ty, depth)})"

    def e_cast(self, ty: str, depth: int) -> str:
        sources = {"u32": ["i32", "f32", "bool", "u32"], "i32": ["u32", "f32", "bool", "i32"],
                   "f32": ["u32", "i32", "f32"]}[ty]
        src = self.pick(sources)
        return f"({self.expr(src, depth)} as {ty})"

    def e_select(self, ty: str, depth: int) -> str:
        c = self.expr("bool", depth)
        return f"(if {c} {{ {self.expr(ty, depth)} }} else {{ {self.expr(ty, depth)} }})"

    def index(self, depth: int) -> str:
        base = self.pick(["i", "(i + 1u32)", "(i * 3u32)", "(i ^ 1u32)", "lid"])
        if self.flip():
            return base
        return f"({base} + {self.expr('u32', min(depth, 1))})"

    def e_read(self, ty: str, depth: int) -> str:
        kind = self.num(0, 5)
        if kind == 0 and ty in READABLE_OUTPUTS:  # what this thread (may have) stored
            buf = READABLE_OUTPUTS[ty]
            if self.in_range:
                return f"{buf}[i]"
            return f"(if i < {buf}.len() {{ {buf}[i] }} else {{ {literal(self.draw, ty)} }})"
        if kind == 1 and ty == "f32":  # the workgroup's softmax row (what softmax wrote, if it ran)
            return f"sm[row + ({self.index(depth)} % {self.row}u32)]"
        buf = INPUTS[ty]
        idx = self.index(depth)
        if self.flip():
            return f"{buf}[{idx} % {buf}.len()]"
        name = self.fresh("ix")
        fallback = literal(self.draw, ty)
        return f"({{ let {name} = {idx}; if {name} < {buf}.len() {{ {buf}[{name}] }} else {{ {fallback} }} }})"

    @property
    def row(self) -> int:
        return row_len(self.wg)

    def e_int_call(self, ty: str, depth: int) -> str:
        f = self.pick(["min", "max", "clamp", "abs"] if ty == "i32" else ["min", "max", "clamp"])
        self.intrinsics.add(f)
        a = self.expr(ty, depth)
        if f == "abs":
            return f"{self.recv(a)}.abs()" if self.flip() else f"gpu::abs({a})"
        if f == "clamp":
            lo, hi = self.expr(ty, depth), self.expr(ty, depth)
            return f"{self.recv(a)}.clamp({lo}, {hi})" if self.flip() else f"gpu::clamp({a}, {lo}, {hi})"
        b = self.expr(ty, depth)
        return f"{self.recv(a)}.{f}({b})" if self.flip() else f"gpu::{f}({a}, {b})"

    @staticmethod
    def recv(a: str) -> str:
        """A receiver for a method call: literals and names as they are, else parenthesised."""
        if a.startswith("(") or a.replace("_", "").isalnum() or a.endswith("()"):
            return a if not a.startswith("{") else f"({a})"
        return f"({a})"

    def call(self, f: str, args: list[str], method: Optional[str] = None) -> str:
        """`f` applied to `args` in one of the dialect's spellings."""
        style = self.pick(["method", "gpu", "f32", "bare"])
        if style == "method":
            return f"{self.recv(args[0])}.{method or f}({', '.join(args[1:])})"
        if style == "f32" and method is None:
            return f"f32::{f}({', '.join(args)})"
        return f"gpu::{f}({', '.join(args)})" if style != "bare" else f"{f}({', '.join(args)})"

    def e_float_call(self, ty: str, depth: int) -> str:
        f = self.pick(["sqrt", "abs", "floor", "ceil", "trunc", "round", "min", "max", "clamp", "fma"])
        self.intrinsics.add(f)
        args = [self.expr("f32", depth) for _ in range(1 + {"min": 1, "max": 1, "clamp": 2, "fma": 2}.get(f, 0))]
        if f in ("min", "max", "clamp"):  # which zero they return for -0.0 vs 0.0 is unspecified (Rust)
            args = [f"({a} + 0.0f32)" for a in args]
        return self.call(f, args, "mul_add" if f == "fma" else None)

    def e_transcendental(self, ty: str, depth: int) -> str:
        f = self.pick(sorted(TRANSCENDENTAL))
        self.intrinsics.add(f)
        args = [self.expr("f32", depth) for _ in range(2 if f == "pow" else 1)]
        return self.call(f, args, {"log": "ln", "pow": "powf"}.get(f))

    def e_from_bits(self, ty: str, depth: int) -> str:
        self.intrinsics.add("from_bits")
        u = self.expr("u32", depth)
        if self.flip():  # exponent 127: a value in [1, 2)
            return f"f32::from_bits(({u} & 0x007fffffu32) | 0x3f800000u32)"
        return f"f32::from_bits({u})"  # any pattern: NaN, infinities, subnormals, -0.0

    def e_to_bits(self, ty: str, depth: int) -> str:
        self.intrinsics.add("to_bits")
        t = self.fresh("t")
        value = self.expr("f32", depth)
        return f"({{ let {t}: f32 = {value}; if {t} == {t} {{ {t}.to_bits() }} else {{ 0x7fc00000u32 }} }})"

    def e_compare(self, ty: str, depth: int) -> str:
        t = self.pick(["u32", "i32", "f32"])
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        if op == "!=" and t == "f32" and "f32 !=" in self.avoid:
            op = "=="
        return f"({self.expr(t, depth)} {op} {self.expr(t, depth)})"

    def e_bool_eq(self, ty: str, depth: int) -> str:
        op = self.pick(["==", "!=", "&", "|", "^"])
        return f"({self.expr('bool', depth)} {op} {self.expr('bool', depth)})"

    def e_logic(self, ty: str, depth: int) -> str:
        op = self.pick(["&&", "||"])
        return f"({self.expr('bool', depth)} {op} {self.expr('bool', depth)})"

    # -------------------------------------------------------- the uniform prelude

    def phases(self, indent: int, count: int) -> list[str]:
        out: list[str] = []
        for _ in range(count):
            out += self.phase(indent, wrapped=False)
        return out

    def phase(self, indent: int, wrapped: bool) -> list[str]:
        """One workgroup operation with its use, at top level or (once) inside a uniform
        `if` or constant `for`: every lane reaches it through the same statement."""
        pad = "    " * indent
        kind = self.num(0, 9)
        if not wrapped and kind >= 8:
            self.scopes.append([])
            if kind == 8:
                head = f"{pad}if {self.uniform_expr('bool', 2)} {{"
            else:
                j = self.fresh("j")
                head = f"{pad}for {j} in 0u32..{self.num(1, 3)}u32 {{"
                self.declare(j, "u32", uniform=True)
            inner = self.phase(indent + 1, wrapped=True) + self.phase(indent + 1, wrapped=True)
            self.scopes.pop()
            return [head] + inner + [f"{pad}}}"]
        op = self.pick(["sum", "max", "sum", "max", "exchange", "exchange", "softmax", "softmax"])
        lines = getattr(self, f"p_{op}")(pad)
        return lines + self.use(pad, wrapped)

    def use(self, pad: str, wrapped: bool) -> list[str]:
        """The statement right after a workgroup operation: it reads the value just made;
        inside a block, into an accumulator (the block's names end with it)."""
        assert self.last is not None
        ty, new = self.last.ty, self.last.name
        op = self.pick({"u32": ["+", "^", "-"], "i32": ["+", "-", "*"], "f32": ["+", "-", "*", "/"]}[ty])
        value = self.pick([new, f"({new} {op} {self.expr(ty, 2)})", f"({self.expr(ty, 2)} {op} {new})"])
        if wrapped or self.flip():
            acc = f"a{ty[0]}"
            op = self.pick({"u32": ["=", "+=", "^="], "i32": ["=", "-=", "|="], "f32": ["=", "+=", "*="]}[ty])
            return [f"{pad}{acc} {op} {value};"]
        name = self.fresh("v")
        self.declare(name, ty)
        return [f"{pad}let {name}: {ty} = {value};"]

    def collective_arg(self, ty: str) -> str:
        return self.expr(ty, self.max_depth)

    def p_sum(self, pad: str) -> list[str]:
        return self.reduce(pad, "sum")

    def p_max(self, pad: str) -> list[str]:
        return self.reduce(pad, "max")

    def reduce(self, pad: str, op: str) -> list[str]:
        ty = self.pick(["u32", "i32", "f32"])
        v = self.collective_arg(ty)
        if op == "max" and ty == "f32":  # which zero f32::max returns is unspecified
            v = f"({v} + 0.0f32)"
        s = SCRATCH[ty]
        self.scratch.add(ty)
        self.collectives.add(f"workgroup_{op}")
        size = self.pick([f"::<{self.wg}>", f"::<{self.wg}>", ""])
        r = self.fresh("r")
        line = f"{pad}let {r} = {self.pick(['gpu::', ''])}workgroup_{op}{size}({v}, {s});"
        self.last = self.declare(r, ty, uniform=True)
        return [line]

    def p_exchange(self, pad: str) -> list[str]:
        ty = self.pick(["u32", "i32", "f32"])
        s = SCRATCH[ty]
        self.scratch.add(ty)
        self.collectives.add("exchange")
        wg = self.wg
        lines = [f"{pad}{s}[lid] = {self.expr(ty, self.max_depth)};", f"{pad}gpu::workgroup_barrier();"]
        for _ in range(self.num(1, 2)):
            idx = self.pick(["(lid ^ 1u32)", f"((lid + {self.num(1, wg - 1)}u32) % {wg}u32)",
                             f"({wg - 1}u32 - lid)", "0u32", f"((lid * 5u32) % {s}.len())",
                             f"(({self.expr('u32', 1)}) % {wg}u32)"])
            w = self.fresh("w")
            lines.append(f"{pad}let {w}: {ty} = {s}[{idx}];")
            self.last = self.declare(w, ty)
        lines.append(f"{pad}gpu::workgroup_barrier();")
        return lines

    def p_softmax(self, pad: str) -> list[str]:
        self.scratch.add("f32")
        self.collectives.add("workgroup_softmax_in_place")
        wg = self.wg
        off = self.pick([0, 0, 1, 4])
        room = self.row - off
        count = self.pick([1, wg - 1, wg, wg, wg + 1, 2 * wg + 3, room])
        count_text = f"{count}u32" if self.num(0, 3) else f"(pu % {room + 1}u32)"
        size = self.pick([f"::<{wg}>", ""])
        base = f"row + {off}u32" if off else "row"
        lines = [f"{pad}gpu::workgroup_softmax_in_place{size}(sm, {base}, {count_text}, sf);"]
        q = self.fresh("q")
        idx = self.pick(["lid", f"(lid + {wg}u32)", f"({wg - 1}u32 - lid)", f"((lid * 7u32 + 3u32) % {room}u32)"])
        lines.append(f"{pad}let {q}: f32 = sm[{base} + {idx}];")  # < room: inside the row
        self.last = self.declare(q, "f32")
        return lines

    # -------------------------------------------------------- statements

    def block(self, indent: int, loop: Optional[str], nesting: int) -> list[str]:
        self.scopes.append([])
        out: list[str] = []
        n = self.num(0, 4 if nesting == 0 else 3)
        for _ in range(n):
            if self.budget <= 0:
                break
            self.budget -= 1
            self.statements += 1
            out += self.stmt(indent, loop, nesting)
        self.scopes.pop()
        return out

    def stmt(self, indent: int, loop: Optional[str], nesting: int) -> list[str]:
        pad = "    " * indent
        kinds = ["let", "assign", "assign", "assign", "store", "if"]
        if nesting < 2:
            kinds += ["for", "while"]
        if loop is not None:
            kinds += ["break", "continue"]
        kinds.append("return")
        if self.reductions:
            kinds += ["reduce", "reduce"]
        kind = self.pick(kinds)
        depth = self.max_depth
        if kind == "let":
            ty = self.pick(TYPES)
            mutable = self.num(0, 3) > 0
            name = self.fresh("v")
            value = self.expr(ty, depth)
            typed = f": {ty}" if self.flip() or ty != "bool" else ""
            self.declare(name, ty, mutable)
            return [f"{pad}let {'mut ' if mutable else ''}{name}{typed} = {value};"]
        if kind == "assign":
            targets = [v for t in TYPES for v in self.vars(t, mutable=True)]
            if not targets:
                return [f"{pad}let _ = {self.expr('u32', 1)};"]
            v = self.pick(targets)
            op = self.pick(self.compound_ops(v.ty))
            if op in ("/=", "%=") and v.ty != "f32":
                return [f"{pad}{v.name} {op} {self.divisor(v.ty, depth)};"]
            if op in ("<<=", ">>="):
                return [f"{pad}{v.name} {op} {self.shift_amount(depth)};"]
            return [f"{pad}{v.name} {op} {self.expr(v.ty, depth)};"]
        if kind == "store":
            ty = self.pick(TYPES)
            buf = OUTPUTS[ty]
            op = "=" if ty in ("bool", "i32") or self.flip() else self.pick(["+=", "-=", "*="])
            return [f"{pad}{buf}[i] {op} {self.expr(ty, depth)};"]
        if kind == "if":
            cond = self.expr("bool", depth)
            then = self.block(indent + 1, loop, nesting + 1)
            lines = [f"{pad}if {cond} {{"] + then
            if self.flip():
                lines += [f"{pad}}} else {{"] + self.block(indent + 1, loop, nesting + 1)
            return lines + [f"{pad}}}"]
        if kind == "for":
            ty = self.pick(["u32", "i32"])
            lo = self.num(-3 if ty == "i32" else 0, 3)
            count = self.num(0, 4)
            inclusive = self.flip()
            hi = lo + count - (1 if inclusive else 0)
            if ty == "u32" and hi < 0:
                hi, inclusive = lo, False
            name = self.fresh("j")
            self.scopes.append([_Var(name, ty, False)])
            body = self.block(indent + 1, "for", nesting + 1)
            self.scopes.pop()
            return [f"{pad}for {name} in {_int_text(lo, ty)}..{'=' if inclusive else ''}{_int_text(hi, ty)} {{"] + \
                body + [f"{pad}}}"]
        if kind == "while":
            name = self.fresh("c")
            bound = self.num(0, 4)
            lines = [f"{pad}let mut {name} = 0u32;", f"{pad}while {name} < {bound}u32 {{",
                     f"{pad}    {name} += 1u32;"]
            self.scopes.append([_Var(name, "u32", False)])  # readable, never assigned again
            body = self.block(indent + 1, "while", nesting + 1)
            self.scopes.pop()
            return lines + body + [f"{pad}}}"]
        if kind == "reduce":
            return self.reduction(pad)
        word = {"break": "break", "continue": "continue", "return": "return"}[kind]
        return [f"{pad}if {self.expr('bool', depth)} {{", f"{pad}    {word};", f"{pad}}}"]

    def reduction(self, pad: str) -> list[str]:
        """`let mut s = e; for j in lo..hi { let t = e(j); s = s + e(j, t); }`: the CPU
        backend's one-pass reduction loop (codegen/cpu/loops.py); bounds constant, from the
        scalars (uniform) or from `i` (lane-varying: the SIMT fallback)."""
        ty = self.pick(["u32", "i32"])
        acc, j = self.fresh("s"), self.fresh("j")
        lines = [f"{pad}let mut {acc}: f32 = {self.expr('f32', 2)};"]
        lo = _int_text(self.num(-3 if ty == "i32" else 0, 3), ty)
        hi = self.pick([_int_text(self.num(0, 40), ty), f"({'pu' if ty == 'u32' else 'pi'} % {_int_text(37, ty)})",
                        f"(i as {ty} % {_int_text(9, ty)})"])
        self.scopes.append([_Var(j, ty, False)])
        body = []
        for _ in range(self.num(0, 2)):
            t = self.fresh("t")
            tty = self.pick(TYPES)
            body.append(f"{pad}    let {t}: {tty} = {self.expr(tty, self.max_depth)};")
            self.declare(t, tty)
        op = self.pick([f"{acc} = {acc} + ", f"{acc} += "])
        body.append(f"{pad}    {op}{self.expr('f32', self.max_depth)};")
        self.scopes.pop()
        self.declare(acc, "f32", mutable=True)
        return lines + [f"{pad}for {j} in {lo}..{'=' if self.flip() else ''}{hi} {{"] + body + [f"{pad}}}"]

    @staticmethod
    def compound_ops(ty: str) -> list[str]:
        if ty == "f32":
            return ["=", "+=", "-=", "*=", "/=", "%="]
        if ty == "bool":
            return ["=", "&=", "|=", "^="]
        return ["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="]


@st.composite
def kernels(draw, max_depth: int = 3, max_stmts: int = 10, max_phases: int = 3,
            avoid: frozenset = frozenset()) -> GenKernel:
    """The hypothesis strategy (shrinks failing kernels); `avoid`: see KNOWN_WRONG."""
    return build(draw, max_depth, max_stmts, max_phases, avoid)


def sample(rng: random.Random, max_depth: int = 3, max_stmts: int = 10, max_phases: int = 3,
           avoid: frozenset = frozenset(), reductions: bool = False) -> GenKernel:
    """One kernel drawn with a plain `random.Random` (no shrinking); `reductions`: reduction
    loops among the statements."""
    return build(RandomDraw(rng), max_depth, max_stmts, max_phases, avoid, reductions)


def build(draw, max_depth: int, max_stmts: int, max_phases: int, avoid: frozenset,
          reductions: bool = False) -> GenKernel:
    wg = _pick(draw, WORKGROUP_SIZES)
    unchecked = _int(draw, 0, 3) == 0
    g = _Gen(draw, max_depth, max_stmts, wg, unchecked, avoid)
    g.reductions = reductions
    # one mutable accumulator per type, live for the whole kernel: assignments, compound
    # assignments and reads across loops and branches have something to work on
    prelude = []
    for ty in TYPES:
        name = f"a{ty[0]}"
        prelude.append(f"    let mut {name}: {ty} = {g.expr(ty, 2)};")
        g.declare(name, ty, mutable=True)
    prelude += g.phases(1, _int(draw, 0, max_phases))
    g.in_range = True
    body = ["    if i >= ou.len() {", "        return;", "    }"] + g.block(1, None, 0)
    # after the body only the top scope is left: i, the scalars, the accumulators, the prelude's values
    for ty in TYPES:
        if g.flip() or ty == "u32":
            body.append(f"    {OUTPUTS[ty]}[i] = {g.expr(ty, max_depth)};")
    lines = ["use goldy::gpu;", "",
             f"#[goldy::compute(workgroup_size = [{wg}, 1, 1])]",
             f"fn {NAME}({SIGNATURE}) {{",
             "    let i = gpu::global_id().x;",
             "    let lid = gpu::local_id().x;",
             f"    let row = gpu::workgroup_id().x * {row_len(wg)}u32;"]
    lines += [f"    let {SCRATCH[t]} = gpu::workgroup_array::<{t}, {wg}>();" for t in SCRATCH if t in g.scratch]
    lines += prelude + body + ["}", ""]
    return GenKernel("\n".join(lines), wg, unchecked, set(g.intrinsics), set(g.collectives), g.statements)


# ---------------------------------------------------------------- inputs


def f32_values(rng: np.random.Generator, n: int, special_rate: float) -> np.ndarray:
    f = rng.standard_normal(n).astype(np.float32) * np.float32(rng.choice([1, 10, 1000]))
    special = np.array(F32_SPECIAL + [k / 2 for k in range(-9, 10, 2)], np.float32)
    pick = rng.random(n) < special_rate
    f[pick] = rng.choice(special, pick.sum())
    return f


def inputs(n: int, seed: int, wg: int) -> list:
    """Arguments in signature order: inputs with normal, half-integer and special values
    (NaN, infinities, -0.0, subnormals, integer extremes; how many varies from seed to seed,
    so that collectives over a workgroup are not always NaN), outputs filled with
    recognisable garbage, one softmax row per workgroup, scalars."""
    rng = np.random.default_rng(seed)
    rate = float(rng.choice([0.0, 0.03, 0.3]))
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    small = rng.random(n) < 0.4
    u[small] = rng.integers(0, 70, small.sum()).astype(np.uint32)
    i = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    i[small] = rng.integers(-40, 40, small.sum()).astype(np.int32)
    edge = rng.random(n) < rate
    i[edge] = rng.choice(np.array(I32_SPECIAL, np.int64), edge.sum()).astype(np.int32)
    b = rng.integers(0, 2, n).astype(bool)
    groups = -(-n // wg)
    return [u, i, f32_values(rng, n, rate), b,
            rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
            np.zeros(n, np.int32),
            f32_values(rng, n, rate),
            rng.integers(0, 2, n).astype(bool),
            f32_values(rng, groups * row_len(wg), rate / 3),
            int(rng.choice([0, 1, 5, 31, 32, 33, 63, 64, 2**31, 2**32 - 1])),
            int(rng.choice([0, 1, -1, -7, 100, -32, -33, -(2**31), 2**31 - 1])),
            float(np.float32(rng.choice(np.array([0.0, -0.0, -1.5, 2.5, 0.1, 1e4, np.nan, np.inf, -np.inf, 3e-45],
                                                 np.float32)))),
            bool(rng.integers(0, 2))]


# ---------------------------------------------------------------- hostile shapes (issue 14)
#
# Source text for the importer's worst cases, each a function of its size: deep nesting,
# long dependency chains, huge literals, hostile names. The importer must stay bounded on
# every one (tests/test_abuse_import.py times the largest; tests/test_importer_fuzz.py draws
# random ones). `hostile(rng)` picks a shape and a size.

_HEAD = "use goldy::gpu;\n"


def _one(body: str, params: str = "x: &[f32], out: &mut [f32]", name: str = "k", pre: str = "") -> str:
    return (_HEAD + pre + f"#[goldy::compute(workgroup_size = [64, 1, 1])]\nfn {name}({params}) {{\n"
            "    let i = gpu::global_id().x;\n" + body + "\n}\n")


def nested_breaks(n: int, break_first: bool = True) -> str:
    """n nested loops, each left by a thread-dependent `break` (before or after the inner loop)."""
    s = "    let mut acc = 0.0;\n"
    for d in range(n):
        s += f"    for j{d} in 0..3u32 {{\n" + (f"    if i > {d}u32 + j{d} {{ break; }}\n" if break_first else "")
    s += "    acc += 1.0;\n"
    for d in reversed(range(n)):
        s += ("" if break_first else f"    if i > {d}u32 + j{d} {{ break; }}\n") + "    }\n"
    return _one(s + "    if i < out.len() { out[i] = acc; }")


def taint_chain(n: int) -> str:
    """n locals, each assigned the previous one, in reverse order inside a loop: a
    flow-insensitive fixed point moving one local per pass needs n passes."""
    s = "".join(f"    let mut v{j} = 0u32;\n" for j in range(n + 1)) + "    for t in 0..2u32 {\n"
    s += "".join(f"        v{j} = v{j - 1};\n" for j in range(n, 0, -1)) + "        v0 = i;\n    }\n"
    return _one(s + f"    if v{n} > 3u32 {{ gpu::workgroup_barrier(); }}\n    if i < out.len() {{ out[i] = 1.0; }}")


def lane_offset_accesses(n: int) -> str:
    """n writes and n reads of one workgroup array at lane-offset indices (G0044's pairs)."""
    s = "    let l = gpu::local_id().x;\n    let s = gpu::workgroup_array::<f32, 16384>();\n"
    s += "".join(f"    s[l + {j}u32] = 1.0;\n" for j in range(n)) + "    let mut a = 0.0;\n"
    s += "".join(f"    a += s[l + {j}u32];\n" for j in range(n))
    return _one(s + "    gpu::workgroup_barrier();\n    if i < out.len() { out[i] = a; }")


def syntax_error_flood(n: int) -> str:
    """n kernels with one syntax error each."""
    return _HEAD + "".join(f"#[goldy::compute(workgroup_size = [64, 1, 1])]\nfn k{j}(out: &mut [f32]) {{ let = ; }}\n"
                           for j in range(n))


def let_chain(n: int, typed: bool = True, tainted: bool = False) -> str:
    """n `let`s each built from the previous; untyped integer literals when not `typed`, their
    type decided by the last use only (`u32`), n steps away. `tainted`: the first one varies
    per thread (so does every later one)."""
    if typed:
        s = "    let a0 = x[i];\n" if tainted else "    let a0 = 1.0;\n"
        s += "".join(f"    let a{j} = a{j - 1} + 1.5;\n" for j in range(1, n + 1))
        return _one(s + f"    if i < out.len() {{ out[i] = a{n}; }}")
    s = "    let a0 = 1;\n" + "".join(f"    let a{j} = a{j - 1} + 1;\n" for j in range(1, n + 1))
    return _one(s + f"    if i < out.len() {{ out[i] = (a{n} + i) as f32; }}")


def nested_loops(n: int) -> str:
    s = "    let mut acc = 0.0;\n" + "".join(f"    for j{d} in 0..2u32 {{\n" for d in range(n))
    return _one(s + "    acc += 1.0;\n" + "    }\n" * n + "    if i < out.len() { out[i] = acc; }")


def else_if_chain(n: int) -> str:
    """An `if` with n - 1 `else if` branches."""
    s = "    if i >= out.len() { return; }\n    let mut v = 0.0;\n    if i == 0u32 { v = 0.5; }\n"
    s += "".join(f"    else if i == {j}u32 {{ v = x[i] + {j}.0; }}\n" for j in range(1, n))
    return _one(s + "    else { v = -1.0; }\n    out[i] = v;")


def deep_ifs(n: int) -> str:
    s = "    if i >= out.len() { return; }\n    let mut v = 0.0;\n"
    s += "".join(f"    if x[i] > {d}.0 - 40.0 {{ v += 1.0;\n" for d in range(n))
    return _one(s + "    }" * n + "\n    out[i] = v;")


def float_literal(text: str) -> str:
    return _one(f"    if i < out.len() {{ out[i] = x[i] * {text}; }}")


def named(kernel: str = "k", field: str = "b", doc: str = "/// doc", comment: str = "") -> str:
    """A kernel named `kernel` reading a `#[goldy::gpu]` struct with a field `field`."""
    pre = f"#[goldy::gpu]\nstruct S {{ {field}: f32, other: f32 }}\n{comment}\n{doc}\n"
    body = f"    if i < out.len() {{ out[i] = xs[i].{field} + xs[i].other; }}"
    return _one(body, "xs: &[S], out: &mut [f32]", kernel, pre)


# names every target reserves somewhere (Python, C++/Slang, WGSL, PTX) or that the loaded
# module itself uses
HOSTILE_NAMES = ("class", "lambda", "None", "def", "r#loop", "kernels", "result", "structs", "source_file",
                 "source_hash", "self", "main", "float", "namespace", "new", "operator", "this", "uniform",
                 "kernel", "r#type", "r#match", "in", "out", "ptr", "array", "vec2", "f32", "sizeof", "reg",
                 "entry", "__init__", "_goldy_x", "gi_x", "np", "rt", "G", "ret", "brk1", "TRUE")
HOSTILE_TEXT = ("nul \x00 byte", "größe π ✓", '""" \\ \'\'\' end"""', "*/ /* ", "\\u{0}", "tab\tand\rcr")


def _literal_text(rng: random.Random) -> str:
    mant = rng.choice(["1", "9.99", "0.000001", "3.4028235", "1" * rng.randrange(1, 400),
                       "0." + "0" * rng.randrange(0, 300) + "7"])
    exp = rng.choice(["", f"e{rng.randrange(-60, 60)}", f"e{rng.randrange(10**6, 10**12)}",
                      f"e-{rng.randrange(10**6, 10**12)}", "e" + "9" * rng.randrange(13, 40), "e-" + "0" * 50 + "3"])
    return mant + ("" if "." in mant or exp else ".0") + exp


def hostile(rng: random.Random) -> tuple[str, str]:
    """One hostile source: (label, text), at a random size within the importer's limits."""
    kind = rng.randrange(11)
    if kind == 0:
        n = rng.randrange(1, 17)
        return f"nested_breaks({n})", nested_breaks(n, rng.random() < 0.5)
    if kind == 1:
        n = rng.randrange(1, 400)
        return f"taint_chain({n})", taint_chain(n)
    if kind == 2:
        n = rng.randrange(1, 300)
        return f"lane_offset_accesses({n})", lane_offset_accesses(n)
    if kind == 3:
        n = rng.randrange(1, 2000)
        return f"syntax_error_flood({n})", syntax_error_flood(n)
    if kind == 4:
        n, typed = rng.randrange(1, 1000), rng.random() < 0.5
        return f"let_chain({n}, {typed})", let_chain(n, typed)
    if kind == 5:
        n = rng.randrange(1, 20)  # past 16: G0040
        return f"nested_loops({n})", nested_loops(n)
    if kind == 6:
        n = rng.randrange(1, 100)
        return f"else_if_chain({n})", else_if_chain(n)
    if kind == 7:
        n = rng.randrange(1, 100)
        return f"deep_ifs({n})", deep_ifs(n)
    if kind == 8:
        t = _literal_text(rng)
        return f"float_literal({t[:40]!r})", float_literal(t)
    if kind == 9:
        kname, field = rng.choice(HOSTILE_NAMES), rng.choice(HOSTILE_NAMES)
        if field == kname or field == "other":
            field = "b"
        return f"named({kname!r}, {field!r})", named(kname, field)
    text = rng.choice(HOSTILE_TEXT)
    return f"named(doc={text!r})", named(doc=f"/// {text}", comment=f"// {text}\n/* {text.replace('*/', '')} */")
