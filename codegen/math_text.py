"""The math library (ir/mathlib.py) and Rust's rules (ir/rules.py) rendered as source
text: one helper function per library function or rule, for WGSL, Slang and C (the cpu
backend's compiled form). Each operation becomes one `let`, so the text is the operation
list itself; `when` becomes an `if` around the guarded part.

WGSL rounds every f32 `+ - * /` through the emitter's pinned helpers (`gi_fadd_f32` ...,
`gi_fdiv_f32`, see codegen/wgsl/emitter.py), so no driver can fuse or reassociate them; the
returned `uses` names the helpers a module must define. Slang writes `*` and `/` as operators
and `+` `-` through goldy_abi.slang's rust_fadd / rust_fsub (codegen/slang/text.py)."""

from __future__ import annotations

import struct
from dataclasses import dataclass, replace
from typing import Callable

from goldy_import.ir import mathlib as ML
from goldy_import.ir.rules import RULES


def _bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", ML.f32(x)))[0]


def _wgsl_f32(x: float) -> str:
    """The shortest decimal that reads back as x (naga rounds literals correctly); the
    bits where no decimal literal is allowed or exact (inf, NaN, subnormals)."""
    b = _bits(x)
    if (b >> 23) & 0xFF in (0, 0xFF) and b & 0x7FFFFFFF:
        return f"bitcast<f32>(0x{b:08x}u)"
    for digits in range(1, 10):
        text = f"{x:.{digits}g}"
        if ML.f32(float(text)) == x:
            break
    if "e" not in text and "." not in text:
        text += ".0"
    return f"({text}f)" if text.startswith("-") else f"{text}f"


@dataclass(frozen=True)
class Syntax:
    name: Callable[[str], str]          # library function -> helper name
    rule_name: Callable[[str], str]     # rule -> helper name
    types: dict                         # value kind (f, u, i, p) -> type name
    fn_head: Callable[[str, list[tuple[str, str]], str], str]  # (name, [(arg, kind)], result kind)
    let: Callable[[str, str, str], str]  # (kind, name, value) -> declaration
    var: Callable[[str, str, str], str]
    fconst: Callable[[float], str]      # an f32 value -> its exact literal
    fop: dict                           # add sub mul div -> format with {a} {b}
    f2u: str                            # bit casts, formats with {a}
    u2f_bits: str
    u2i: str                            # u32 bits read as i32
    i2u: str
    conv_u: str                         # exact int -> f32 conversions
    conv_i: str
    trunc_i: str                        # truncating f32 -> i32 (in range), as u32 bits
    trunc_u: str                        # truncating f32 -> u32 (in range)
    sel: str                            # formats with {p} {a} {b}


_WGSL_TYPES = {"f": "f32", "u": "u32", "i": "i32", "p": "bool"}
WGSL = Syntax(
    name=lambda f: f"gi_{f}_f32",
    rule_name=lambda r: f"gi_{r}",
    types=_WGSL_TYPES,
    fn_head=lambda name, args, ret: (f"fn {name}({', '.join(f'{a}: {_WGSL_TYPES[k]}' for a, k in args)}) "
                                     f"-> {_WGSL_TYPES[ret]} {{"),
    let=lambda kind, name, value: f"let {name} = {value};",
    var=lambda kind, name, value: f"var {name} = {value};",
    fconst=_wgsl_f32,
    fop={op: f"gi_f{op}_f32({{a}}, {{b}})" for op in ("add", "sub", "mul", "div")},
    f2u="bitcast<u32>({a})", u2f_bits="bitcast<f32>({a})", u2i="bitcast<i32>({a})", i2u="bitcast<u32>({a})",
    conv_u="f32({a})", conv_i="f32(bitcast<i32>({a}))",
    trunc_i="bitcast<u32>(i32({a}))", trunc_u="u32({a})",
    sel="select({b}, {a}, {p})",
)

_SLANG_TYPES = {"f": "float", "u": "uint", "i": "int", "p": "bool"}
SLANG = Syntax(
    name=lambda f: f"_goldy_{f}_f32",
    rule_name=lambda r: f"_goldy_{r}",
    types=_SLANG_TYPES,
    fn_head=lambda name, args, ret: (f"{_SLANG_TYPES[ret]} {name}({', '.join(f'{_SLANG_TYPES[k]} {a}' for a, k in args)})"
                                     "\n{"),
    let=lambda kind, name, value: f"{_SLANG_TYPES[kind]} {name} = {value};",
    var=lambda kind, name, value: f"{_SLANG_TYPES[kind]} {name} = {value};",
    fconst=lambda x: f"asfloat(0x{_bits(x):08x}u)",  # bits: not every target parses enough digits
    # + and - through goldy_abi.slang's rust_fadd / rust_fsub, which Slang cannot fold
    fop={"add": "rust_fadd({a}, {b})", "sub": "rust_fsub({a}, {b})", "mul": "({a} * {b})", "div": "({a} / {b})"},
    # int(x)/uint(x) are modular conversions; asint() compares as unsigned on slangpy's CPU target
    f2u="asuint({a})", u2f_bits="asfloat({a})", u2i="int({a})", i2u="uint({a})",
    conv_u="float({a})", conv_i="float(int({a}))",
    trunc_i="uint(int({a}))", trunc_u="uint({a})",
    sel="({p} ? {a} : {b})",
)


def _c_f32(x: float) -> str:
    """An f32 literal with exactly x's bits: hexadecimal (no decimal rounding), bits where
    C has no literal (inf, NaN)."""
    b = _bits(x)
    if (b >> 23) & 0xFF == 0xFF:
        return f"gi_u2f(0x{b:08x}u)"
    text = float(ML.f32(x)).hex() + "f"
    return f"({text})" if b >> 31 else text


# C for the cpu backend's compiled form (codegen/cpu/ckernel.py, which defines gi_f2u and
# gi_u2f): built without contraction, `+ - * /` are single roundings as written; i32 values
# live as their u32 bits, so only the signed operations convert
_C_TYPES = {"f": "float", "u": "uint32_t", "i": "uint32_t", "p": "int"}
C = Syntax(
    name=lambda f: f"gi_{f}_f32",
    rule_name=lambda r: f"gi_{r}",
    types=_C_TYPES,
    fn_head=lambda name, args, ret: (f"static inline {_C_TYPES[ret]} {name}("
                                     f"{', '.join(f'{_C_TYPES[k]} {a}' for a, k in args)}) {{"),
    let=lambda kind, name, value: f"const {_C_TYPES[kind]} {name} = {value};",
    var=lambda kind, name, value: f"{_C_TYPES[kind]} {name} = {value};",
    fconst=_c_f32,
    fop={"add": "({a} + {b})", "sub": "({a} - {b})", "mul": "({a} * {b})", "div": "({a} / {b})"},
    f2u="gi_f2u({a})", u2f_bits="gi_u2f({a})", u2i="((int32_t)({a}))", i2u="({a})",
    conv_u="((float)({a}))", conv_i="((float)(int32_t)({a}))",
    trunc_i="((uint32_t)(int32_t)({a}))", trunc_u="((uint32_t)({a}))",
    sel="({p} ? {a} : {b})",
)


class TextOps(ML.Ops):
    """Values are text: a temporary's name or a literal; `kind` remembers each one's kind."""

    def __init__(self, syn: Syntax):
        self.syn = syn
        self.lines: list[str] = []
        self.depth = 1
        self.n = 0
        self.kind: dict[str, str] = {}
        self.uses: set[str] = set()
        self.seen: dict[tuple[str, str], str] = {}  # top-level values already computed

    def _emit(self, kind: str, value: str, decl=None) -> str:
        """A temporary holding `value`; a value computed before at the top level is
        reused (every operation is pure), so a sequence's repeated steps print once."""
        key = (kind, value)
        if decl is None and key in self.seen:
            return self.seen[key]
        self.n += 1
        name = f"t{self.n}"
        self.kind[name] = kind
        self.lines.append("    " * self.depth + (decl or self.syn.let)(kind, name, value))
        if decl is None and self.depth == 1:
            self.seen[key] = name
        return name

    def _lit(self, kind: str, text: str) -> str:
        self.kind[text] = kind
        return text

    def _f(self, op: str, a, b):
        helper = self.syn.fop[op].split("(")[0]
        if helper.startswith("gi_"):  # a WGSL helper the module must define
            self.uses.add(helper)
        return self._emit("f", self.syn.fop[op].format(a=a, b=b))

    def _u(self, a) -> str:
        return self.syn.f2u.format(a=a)

    def _fb(self, a) -> str:
        return self.syn.u2f_bits.format(a=a)

    def c(self, x):
        return self._lit("f", self.syn.fconst(ML.f32(x)))

    def add(self, a, b):
        return self._f("add", a, b)

    def sub(self, a, b):
        return self._f("sub", a, b)

    def mul(self, a, b):
        return self._f("mul", a, b)

    def div(self, a, b):
        return self._f("div", a, b)

    def sqrt(self, a):
        if self.syn is WGSL:  # the emitter's correctly rounded sqrt (WGSL's own is not)
            self.uses.add("gi_sqrt_f32")
            return self._emit("f", f"gi_sqrt_f32({a})")
        return self._emit("f", f"sqrt({a})")

    def neg(self, a):
        return self._emit("f", self._fb(f"({self._u(a)} ^ 0x80000000u)"))

    def fabs(self, a):
        return self._emit("f", self._fb(f"({self._u(a)} & 0x7fffffffu)"))

    def flt(self, a, b):
        return self._emit("p", f"({a} < {b})")

    def fgt(self, a, b):
        return self._emit("p", f"({a} > {b})")

    def sel(self, p, a, b):
        return self._emit(self.kind[a], self.syn.sel.format(p=p, a=a, b=b))

    def i(self, x):
        x &= 0xFFFFFFFF
        return self._lit("u", f"{x}u" if x < 1 << 16 else f"0x{x:08x}u")

    def _bin(self, sym: str, a, b):
        return self._emit("u", f"({a} {sym} {b})")

    def iadd(self, a, b):
        return self._bin("+", a, b)

    def isub(self, a, b):
        return self._bin("-", a, b)

    def imul(self, a, b):
        return self._bin("*", a, b)

    def iand(self, a, b):
        return self._bin("&", a, b)

    def ior(self, a, b):
        return self._bin("|", a, b)

    def ixor(self, a, b):
        return self._bin("^", a, b)

    def _amount(self, n) -> str:
        return f"{n}u" if isinstance(n, int) else n

    def shl(self, a, n):
        return self._bin("<<", a, self._amount(n))

    def shr_u(self, a, n):
        return self._bin(">>", a, self._amount(n))

    def shr_s(self, a, n):
        s = self.syn
        return self._emit("u", s.i2u.format(a=f"({s.u2i.format(a=a)} >> {self._amount(n)})"))

    def ieq(self, a, b):
        return self._emit("p", f"({a} == {b})")

    def ilt_u(self, a, b):
        return self._emit("p", f"({a} < {b})")

    def ilt_s(self, a, b):
        return self._emit("p", f"({self.syn.u2i.format(a=a)} < {self.syn.u2i.format(a=b)})")

    def u2f(self, a):
        return self._emit("f", self.syn.conv_u.format(a=a))

    def i2f(self, a):
        return self._emit("f", self.syn.conv_i.format(a=a))

    def udiv(self, a, b):
        return self._bin("/", a, b)

    def urem(self, a, b):
        return self._bin("%", a, b)

    def f2i_trunc(self, a):
        return self._emit("u", self.syn.trunc_i.format(a=a))

    def f2u_trunc(self, a):
        return self._emit("u", self.syn.trunc_u.format(a=a))

    def fbits(self, a):
        return self._emit("u", self._u(a))

    def bitsf(self, a):
        return self._emit("f", self._fb(a))

    def pand(self, a, b):
        return self._emit("p", f"({a} && {b})")

    def por(self, a, b):
        return self._emit("p", f"({a} || {b})")

    def pnot(self, a):
        return self._emit("p", f"(!{a})")

    def when(self, p, fn, defaults):
        outs = [self._emit(self.kind[d], d, self.syn.var) for d in defaults]
        self.lines.append("    " * self.depth + f"if ({p}) {{")
        self.depth += 1
        for o, v in zip(outs, fn()):
            self.lines.append("    " * self.depth + f"{o} = {v};")
        self.depth -= 1
        self.lines.append("    " * self.depth + "}")
        return outs


def _render(fn, name: str, kinds: tuple[str, ...], ret: str, syn: Syntax, head: str) -> tuple[str, set[str]]:
    """A helper `name` running sequence `fn` on arguments of `kinds` (i32 arguments enter
    the sequence as u32 bits, an i32 result leaves it as i32)."""
    ops = TextOps(syn)
    args = ["x", "y", "z"][:len(kinds)] if ret == "f" and set(kinds) == {"f"} else ["a", "b", "c"][:len(kinds)]
    vals = []
    for a, k in zip(args, kinds):
        ops.kind[a] = "f" if k == "f" else "u"
        vals.append(ops._emit("u", syn.i2u.format(a=a)) if k == "i" else a)
    out = fn(ops, *vals)
    if ret == "i":
        out = syn.u2i.format(a=out)
    text = "\n".join([head, syn.fn_head(name, list(zip(args, kinds)), ret)] + ops.lines + [f"    return {out};", "}"])
    return text, ops.uses


def render(func: str, syn: Syntax) -> tuple[str, set[str]]:
    """(the helper function's text, the emitter helpers it calls) for library function `func`."""
    head = f"// ir/mathlib.py `{func}`: the same operations, and bits, on every backend"
    return _render(ML.FUNCTIONS[func], syn.name(func), ("f",) * ML.ARITY[func], "f", syn, head)


def render_rule(rule: str, syn: Syntax) -> tuple[str, set[str]]:
    """(the helper function's text, the emitter helpers it calls) for ir/rules.py's `rule`,
    named `syn.rule_name(rule)`."""
    r = RULES[rule]
    return _render(r.fn, syn.rule_name(rule), r.args, r.ret, syn, f"// ir/rules.py `{rule}`: {r.doc}")


# ---------------------------------------------------------------- the Slang ABI module's rules

# ir/rules.py's rules under the names canonical Slang calls (codegen/slang/goldy_abi.slang),
# overloaded by type; the vector forms there call these lane by lane
SLANG_ABI_RULES = {
    "div_u32": "rust_div", "div_i32": "rust_div", "rem_u32": "rust_rem", "rem_i32": "rust_rem",
    "shl_u32": "wrapping_shl", "shl_i32": "wrapping_shl", "shr_u32": "wrapping_shr", "shr_i32": "wrapping_shr",
    "abs_i32": "wrapping_abs", "f32_to_i32": "rust_f32_to_i32", "f32_to_u32": "rust_f32_to_u32",
    "u32_to_f32": "rust_u32_to_f32", "i32_to_f32": "rust_i32_to_f32", "neg_f32": "rust_neg",
    "abs_f32": "rust_abs", "min_f32": "rust_min", "max_f32": "rust_max", "clamp_f32": "rust_clamp",
    "round_f32": "rust_round", "lt_f32": "rust_lt", "gt_f32": "rust_gt", "le_f32": "rust_le",
    "ge_f32": "rust_ge", "eq_f32": "rust_eq", "ne_f32": "rust_ne",
}
ABI_BEGIN = "// ---- generated from ir/rules.py by codegen/math_text.py `slang_abi_rules`; do not edit"
ABI_END = "// ---- end of generated rules"
_SLANG_ABI = replace(SLANG, fn_head=lambda name, args, ret: "public " + SLANG.fn_head(name, args, ret))


def slang_abi_rules() -> str:
    """The block of codegen/slang/goldy_abi.slang between ABI_BEGIN and ABI_END (tests/test_rules.py
    keeps the file current)."""
    parts = []
    for rule, name in SLANG_ABI_RULES.items():
        r = RULES[rule]
        parts.append(_render(r.fn, name, r.args, r.ret, _SLANG_ABI, f"// `{rule}`: {r.doc}")[0])
    return "\n".join([ABI_BEGIN, ""] + [p + "\n" for p in parts] + [ABI_END])


# WGSL for a driver that flushes subnormals: the library never lets a subnormal reach an
# operation (ir/mathlib.py), so it keeps the plain pinned `+ - *` where user code gets the
# exact ones (codegen/wgsl/emitter.py `fop`), which would make its helpers slow to compile.
WGSL_FLUSHING = replace(WGSL, fop={**WGSL.fop, **{op: f"gi_f{op}_raw_f32({{a}}, {{b}})" for op in ("add", "sub", "mul")}})
