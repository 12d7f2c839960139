"""A hypothesis strategy for well-typed random kernels, written as Rust source text.

`kernels()` draws a `GenKernel`: one `#[goldy::compute]` function `fuzz` over every scalar
type of the dialect (u32, i32, f32, bool), every operator, `as` casts, `if`/`else` and
`if` values, bounded `for` and `while` loops with `break`/`continue`, early returns,
guarded buffer reads at computed indices, and the math intrinsics. Every kernel it
produces must import with no diagnostic at all: a generator that produced an invalid
program would be a bug of this file (tests assert it).

The signature is fixed; each thread writes only its own elements (no races):

    fn fuzz(xu: &[u32], xi: &[i32], xf: &[f32], xb: &[bool],
            ou: &mut [u32], oi: gpu::Scattered<i32>, of: &mut [f32], ob: &mut [bool],
            oa: gpu::Scattered<f32>, pu: u32, pi: i32, pf: f32, pb: bool)

Outputs `ou oi of ob` hold values computed with exact operations only (integer
arithmetic, comparisons, casts, f32 `+ - * / %`, `sqrt`, `abs`, `floor`, `ceil`,
`trunc`, `round`, `min`, `max`, `clamp`, `mul_add`, `from_bits`): docs/semantics.md
makes each of them exact, so every backend must agree with the CPU oracle bit for bit.

Transcendentals (`sin cos tan exp exp2 ln log2 powf`) are only within the semantics'
tolerance, so they never feed control flow, casts or the exact outputs (an off-by-one-ulp
result could flip a comparison). They appear in `oa[i * 2 + t]`, one approximate term per
slot, built so that errors cannot cancel: a signed transcendental alone, times a small
constant or times another; a positive one (exp, exp2, pow) alone, times or plus another.
Arguments are clamped to ranges where the semantics' bound holds ([-100, 100] for sin and
cos, [-1.4, 1.4] for tan, [-20, 20] for exp/exp2, [0.001, 1000] for logs, base [0.1, 10]
and exponent [-4, 4] for pow). `GenKernel.approx` gives each slot's tolerance.

Integer division and remainder never divide by zero (`a / (b | 1)`), so the kernels
stay valid whether or not trapping checks (issue 9) are on.
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
SCALARS = {"u32": "pu", "i32": "pi", "f32": "pf", "bool": "pb"}
APPROX_SLOTS = 2
SIGNATURE = ("xu: &[u32], xi: &[i32], xf: &[f32], xb: &[bool], "
             "ou: &mut [u32], oi: gpu::Scattered<i32>, of: &mut [f32], ob: &mut [bool], "
             "oa: gpu::Scattered<f32>, pu: u32, pi: i32, pf: f32, pb: bool")
EXACT_INTRINSICS = {"sqrt", "abs", "floor", "ceil", "trunc", "round", "min", "max", "clamp", "fma", "from_bits"}
TRANSCENDENTAL = {"sin", "cos", "tan", "exp", "exp2", "log", "log2", "pow"}
# docs/semantics.md: relative 2e-6 plus absolute 1e-6 per transcendental
REL_PER_CALL = 2e-6
ABS_PER_CALL = 1e-6


@dataclass
class Approx:
    """One approximate output slot: its tolerance for `np.allclose`-style comparison."""

    text: str
    rtol: float
    atol: float


@dataclass
class GenKernel:
    source: str
    approx: list[Approx]  # oa slots 0..len-1 are written; the rest stay poisoned
    intrinsics: set[str] = field(default_factory=set)  # every math intrinsic used
    exact_intrinsics: set[str] = field(default_factory=set)  # those reaching the exact outputs
    statements: int = 0

    @property
    def only_basic_float_ops(self) -> bool:
        """True when the exact outputs used no intrinsic beyond + - * / sqrt and casts
        (the brief's minimum for bitwise agreement; the semantics make the others exact too)."""
        return not (self.exact_intrinsics - {"sqrt"})


# ---------------------------------------------------------------- literals


def _f32_text(v: float) -> str:
    t = str(np.float32(v))  # the shortest decimal that rounds back to this f32
    if "e" in t and "." not in t.split("e")[0]:
        t = t.replace("e", ".0e")
    elif "." not in t and "e" not in t:
        t += ".0"
    return f"{t}f32" if not t.startswith("-") else f"(-{t[1:]}f32)"


U32_SPECIAL = [0, 1, 2, 3, 7, 31, 32, 33, 255, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFE, 0xFFFFFFFF]
I32_SPECIAL = [0, 1, -1, 2, -2, 31, 32, -32, 2**31 - 1, -(2**31), -(2**31) + 1]
F32_SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.5, -2.5, 3.0, 100.0, 1e6, -1e6, 0.1, 1e-3, 16777217.0,
               2147483648.0, -2147483904.0, 4294967296.0]


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
        if v == -(2**31):
            return "i32::MIN"
        return f"{v}i32" if v >= 0 else f"(-{-v}i32)"
    if kind == 2:
        v = float(np.float32(draw.rng.uniform(-1000, 1000))) if isinstance(draw, RandomDraw) else draw(_F32_RANDOM)
    else:
        v = _pick(draw, F32_SPECIAL) if kind == 0 else _int(draw, -20, 20) / 2
    if v != 0.0 and abs(v) < 1e-3:
        v = 0.0  # no literal near the subnormal range (semantics: tests avoid subnormals)
    return _f32_text(v)


# ---------------------------------------------------------------- the generator


@dataclass
class _Var:
    name: str
    ty: str
    mutable: bool


class _Gen:
    """Draws one kernel. Scopes are a stack of variable lists; every name is fresh."""

    def __init__(self, draw, max_depth: int, max_stmts: int):
        self.draw = draw
        self.max_depth = max_depth
        self.budget = max_stmts
        self.scopes: list[list[_Var]] = [[_Var("i", "u32", False)] +
                                         [_Var(SCALARS[t], t, False) for t in TYPES]]
        self.counter = 0
        self.intrinsics: set[str] = set()
        self.statements = 0

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
        return [v for sc in self.scopes for v in sc if v.ty == ty and (v.mutable or not mutable)]

    # -------------------------------------------------------- expressions

    def expr(self, ty: str, depth: int) -> str:
        if depth <= 0 or self.num(0, 3) == 0:
            return self.leaf(ty)
        kind = self.pick(self.kinds(ty))
        return getattr(self, f"e_{kind}")(ty, depth - 1)

    def kinds(self, ty: str) -> list[str]:
        common = ["binary", "cast", "select", "read", "read"]
        if ty in ("u32", "i32"):
            return common + ["binary", "unary", "int_call", "divide", "shift"]
        if ty == "f32":
            return common + ["binary", "unary", "float_call", "float_call", "from_bits"]
        return ["compare", "compare", "logic", "unary", "select", "read", "bool_eq"]

    def leaf(self, ty: str) -> str:
        options = self.vars(ty)
        if options and self.flip():
            return self.pick(options).name
        if ty == "u32" and self.num(0, 5) == 0:
            return f"{self.pick(list(INPUTS.values()) + list(OUTPUTS.values()))}.len()"
        return literal(self.draw, ty)

    def e_binary(self, ty: str, depth: int) -> str:
        ops = {"u32": ["+", "-", "*", "&", "|", "^"], "i32": ["+", "-", "*", "&", "|", "^"],
               "f32": ["+", "-", "*", "/", "%"]}[ty]
        op = self.pick(ops)
        return f"({self.expr(ty, depth)} {op} {self.expr(ty, depth)})"

    def e_divide(self, ty: str, depth: int) -> str:
        op = self.pick(["/", "%"])
        one = "1u32" if ty == "u32" else "1i32"
        return f"({self.expr(ty, depth)} {op} ({self.expr(ty, depth)} | {one}))"

    def e_shift(self, ty: str, depth: int) -> str:
        op = self.pick(["<<", ">>"])
        amount_ty = self.pick(["u32", "i32"])
        return f"({self.expr(ty, depth)} {op} {self.expr(amount_ty, depth)})"

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
        base = self.pick(["i", "(i + 1u32)", "(i * 3u32)", "(i ^ 1u32)"])
        if self.flip():
            return base
        return f"({base} + {self.expr('u32', min(depth, 1))})"

    def e_read(self, ty: str, depth: int) -> str:
        buf = self.pick([INPUTS[ty], INPUTS[ty], OUTPUTS[ty]] if ty != "bool" else [INPUTS[ty]])
        if buf == OUTPUTS[ty] and ty != "i32":  # an output this thread owns (Scattered is write-only)
            return f"{buf}[i]"
        buf = INPUTS[ty]
        idx = self.index(depth)
        if self.flip():
            return f"{buf}[{idx} % {buf}.len()]"
        name = self.fresh("ix")
        fallback = literal(self.draw, ty)
        return f"({{ let {name} = {idx}; if {name} < {buf}.len() {{ {buf}[{name}] }} else {{ {fallback} }} }})"

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

    def e_float_call(self, ty: str, depth: int) -> str:
        f = self.pick(["sqrt", "abs", "floor", "ceil", "trunc", "round", "min", "max", "clamp", "fma"])
        self.intrinsics.add(f)
        a = self.expr("f32", depth)
        style = self.pick(["method", "gpu", "f32", "bare"])
        args = [a] + [self.expr("f32", depth) for _ in range({"min": 1, "max": 1, "clamp": 2, "fma": 2}.get(f, 0))]
        if style == "method":
            name = "mul_add" if f == "fma" else f
            return f"{self.recv(args[0])}.{name}({', '.join(args[1:])})"
        if style == "f32" and f != "fma":
            return f"f32::{f}({', '.join(args)})"
        return f"gpu::{f}({', '.join(args)})" if style == "gpu" or f == "fma" else f"{f}({', '.join(args)})"

    def e_from_bits(self, ty: str, depth: int) -> str:
        self.intrinsics.add("from_bits")
        u = self.expr("u32", depth)
        # exponent 127: a value in [1, 2), never NaN, infinite or subnormal
        return f"f32::from_bits(({u} & 0x007fffffu32) | 0x3f800000u32)"

    def e_compare(self, ty: str, depth: int) -> str:
        t = self.pick(["u32", "i32", "f32"])
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        return f"({self.expr(t, depth)} {op} {self.expr(t, depth)})"

    def e_bool_eq(self, ty: str, depth: int) -> str:
        op = self.pick(["==", "!=", "&", "|", "^"])
        return f"({self.expr('bool', depth)} {op} {self.expr('bool', depth)})"

    def e_logic(self, ty: str, depth: int) -> str:
        op = self.pick(["&&", "||"])
        return f"({self.expr('bool', depth)} {op} {self.expr('bool', depth)})"

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
        kind = self.pick(kinds)
        depth = self.max_depth
        if kind == "let":
            ty = self.pick(TYPES)
            mutable = self.num(0, 3) > 0
            name = self.fresh("v")
            value = self.expr(ty, depth)
            typed = f": {ty}" if self.flip() or ty != "bool" else ""
            self.scopes[-1].append(_Var(name, ty, mutable))
            return [f"{pad}let {'mut ' if mutable else ''}{name}{typed} = {value};"]
        if kind == "assign":
            targets = [v for t in TYPES for v in self.vars(t, mutable=True)]
            if not targets:
                return [f"{pad}let _ = {self.expr('u32', 1)};"]
            v = self.pick(targets)
            op = self.pick(self.compound_ops(v.ty))
            if op in ("/=", "%=") and v.ty != "f32":
                one = "1u32" if v.ty == "u32" else "1i32"
                return [f"{pad}{v.name} {op} ({self.expr(v.ty, depth)} | {one});"]
            if op in ("<<=", ">>="):
                return [f"{pad}{v.name} {op} {self.expr(self.pick(['u32', 'i32']), depth)};"]
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
            lo_t = f"{lo}{ty}" if lo >= 0 else f"(-{-lo}{ty})"
            hi_t = f"{hi}{ty}" if hi >= 0 else f"(-{-hi}{ty})"
            self.scopes.append([_Var(name, ty, False)])
            body = self.block(indent + 1, "for", nesting + 1)
            self.scopes.pop()
            return [f"{pad}for {name} in {lo_t}..{'=' if inclusive else ''}{hi_t} {{"] + body + [f"{pad}}}"]
        if kind == "while":
            name = self.fresh("c")
            bound = self.num(0, 4)
            lines = [f"{pad}let mut {name} = 0u32;", f"{pad}while {name} < {bound}u32 {{",
                     f"{pad}    {name} += 1u32;"]
            self.scopes.append([_Var(name, "u32", False)])  # readable, never assigned again
            body = self.block(indent + 1, "while", nesting + 1)
            self.scopes.pop()
            return lines + body + [f"{pad}}}"]
        word = {"break": "break", "continue": "continue", "return": "return"}[kind]
        return [f"{pad}if {self.expr('bool', depth)} {{", f"{pad}    {word};", f"{pad}}}"]

    @staticmethod
    def compound_ops(ty: str) -> list[str]:
        if ty == "f32":
            return ["=", "+=", "-=", "*=", "/=", "%="]
        if ty == "bool":
            return ["=", "&=", "|=", "^="]
        return ["=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="]

    # -------------------------------------------------------- approximate terms

    def arg(self, lo: float, hi: float) -> str:
        return f"{self.recv(self.expr('f32', 1))}.clamp({_f32_text(lo)}, {_f32_text(hi)})"

    def call(self, f: str, *args: str) -> str:
        self.intrinsics.add(f)
        style = self.pick(["method", "gpu"])
        if style == "method":
            name = {"log": "ln", "pow": "powf"}.get(f, f)
            return f"{self.recv(args[0]) if not args[0].endswith(')') else f'({args[0]})'}.{name}({', '.join(args[1:])})"
        return f"gpu::{f}({', '.join(args)})"

    def signed(self) -> str:
        f = self.pick(["sin", "cos", "tan", "log", "log2"])
        rng = {"sin": (-100, 100), "cos": (-100, 100), "tan": (-1.4, 1.4), "log": (1e-3, 1e3), "log2": (1e-3, 1e3)}[f]
        return self.call(f, self.arg(*rng))

    def positive(self) -> str:
        f = self.pick(["exp", "exp2", "pow"])
        if f == "pow":
            return self.call("pow", self.arg(0.1, 10.0), self.arg(-4.0, 4.0))
        return self.call(f, self.arg(-20.0, 20.0))

    def approx_term(self) -> Approx:
        shape = self.pick(["s", "s*c", "s*s", "p", "p*p", "p+p", "c*p"])
        c = self.pick([0.5, -0.5, 2.0, -3.0, 4.0])
        if shape == "s":
            return Approx(self.signed(), REL_PER_CALL, ABS_PER_CALL)
        if shape == "s*c":
            return Approx(f"({self.signed()} * {_f32_text(c)})", 2 * REL_PER_CALL, 4 * ABS_PER_CALL)
        if shape == "s*s":  # |each| <= 10 (log2(1000)): the absolute error scales by 10
            return Approx(f"({self.signed()} * {self.signed()})", 3 * REL_PER_CALL, 20 * ABS_PER_CALL)
        if shape == "p":
            return Approx(self.positive(), REL_PER_CALL, ABS_PER_CALL)
        if shape == "c*p":
            return Approx(f"({_f32_text(abs(c))} * {self.positive()})", 2 * REL_PER_CALL, 4 * ABS_PER_CALL)
        op = "*" if shape == "p*p" else "+"
        return Approx(f"({self.positive()} {op} {self.positive()})", 3 * REL_PER_CALL, 2 * ABS_PER_CALL)


@st.composite
def kernels(draw, max_depth: int = 3, max_stmts: int = 10, wg: int = 64) -> GenKernel:
    """The hypothesis strategy (shrinks failing kernels)."""
    return build(draw, max_depth, max_stmts, wg)


def sample(rng: random.Random, max_depth: int = 3, max_stmts: int = 10, wg: int = 64) -> GenKernel:
    """One kernel drawn with a plain `random.Random` (no shrinking)."""
    return build(RandomDraw(rng), max_depth, max_stmts, wg)


def build(draw, max_depth: int, max_stmts: int, wg: int) -> GenKernel:
    g = _Gen(draw, max_depth, max_stmts)
    # one mutable accumulator per type, live for the whole kernel: assignments, compound
    # assignments and reads across loops and branches have something to work on
    body = []
    for ty in TYPES:
        name = f"a{ty[0]}"
        body.append(f"    let mut {name}: {ty} = {g.expr(ty, 2)};")
        g.scopes[0].append(_Var(name, ty, True))
    body += g.block(1, None, 0)
    # after the body only the top scope is left: i, the scalars and the accumulators
    tail = []
    for ty in TYPES:
        if g.flip() or ty == "u32":
            tail.append(f"    {OUTPUTS[ty]}[i] = {g.expr(ty, max_depth)};")
    exact = set(g.intrinsics)
    approx = [g.approx_term() for _ in range(g.num(0, APPROX_SLOTS))]
    for t, a in enumerate(approx):
        tail.append(f"    oa[i * {APPROX_SLOTS}u32 + {t}u32] = {a.text};")
    lines = ["use goldy::gpu;", "",
             f"#[goldy::compute(workgroup_size = [{wg}, 1, 1])]",
             f"fn {NAME}({SIGNATURE}) {{",
             "    let i = gpu::global_id().x;",
             "    if i >= ou.len() {", "        return;", "    }"]
    lines += body + tail + ["}", ""]
    return GenKernel("\n".join(lines), approx, set(g.intrinsics), exact, g.statements)


# ---------------------------------------------------------------- inputs


def inputs(n: int, seed: int) -> list:
    """Arguments in signature order: inputs with normal, special and half-integer values
    (no subnormals), outputs filled with recognisable garbage, scalars."""
    rng = np.random.default_rng(seed)
    f = rng.standard_normal(n).astype(np.float32) * np.float32(rng.choice([1, 10, 1000]))
    special = np.array(F32_SPECIAL + [k / 2 for k in range(-9, 10, 2)], np.float32)
    pick = rng.random(n) < 0.3
    f[pick] = rng.choice(special, pick.sum())
    f[(f != 0) & (np.abs(f) < 1e-3)] = 0
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    small = rng.random(n) < 0.4
    u[small] = rng.integers(0, 70, small.sum()).astype(np.uint32)
    i = rng.integers(-(2**31), 2**31, n, dtype=np.int64).astype(np.int32)
    i[small] = rng.integers(-40, 40, small.sum()).astype(np.int32)
    b = rng.integers(0, 2, n).astype(bool)
    return [u, i, f, b,
            rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32),
            np.zeros(n, np.int32),
            rng.standard_normal(n).astype(np.float32),
            rng.integers(0, 2, n).astype(bool),
            np.zeros(n * APPROX_SLOTS, np.float32),
            int(rng.choice([0, 1, 5, 63, 64, 2**31, 2**32 - 1])),
            int(rng.choice([0, 1, -1, -7, 100, -(2**31), 2**31 - 1])),
            float(np.float32(rng.choice([0.0, -1.5, 2.5, 0.1, 1e4]))),
            bool(rng.integers(0, 2))]
