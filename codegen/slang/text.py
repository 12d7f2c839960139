"""IR -> Slang text pieces shared by the canonical emitter and the CPU lane-serial form:
identifiers, types, struct declarations, constants, and one printer for expressions and
statements. Every Rust semantic GPU languages disagree on goes through a named helper of
the ABI module (codegen/goldy_abi.slang), so it is visible in the source."""

from __future__ import annotations

import math
import struct as _struct
from typing import Callable, Optional

from goldy_import.errors import BackendError
from goldy_import.ir import abi as A
from goldy_import.ir import layout as L
from goldy_import.ir.checks import check_sites
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.mathlib import FUNCTIONS as MATH_FUNCTIONS
from goldy_import.ir.rules import call_rule

from ..math_text import SLANG as _MATH_SLANG, render as _render_math, render_rule as _render_rule

from ..names import SLANG, SLANG_ABI_NAMES, field_namer, kernel_namer

INDENT = "    "

# What a user identifier must not become (keywords, types, intrinsics, the ABI module's
# names, generated prefixes) is the SLANG target of codegen/names.py.
ABI_NAMES = SLANG_ABI_NAMES

# The builtins' canonical parameter types and names, in IR BUILTINS order.
BUILTIN_PARAMS = {
    "global_id": ("ThreadId", "_goldy_gid"),
    "local_id": ("GroupThreadId", "_goldy_lid"),
    "workgroup_id": ("GroupId", "_goldy_wid"),
    "num_workgroups": ("GroupCount", "_goldy_nwg"),
}
PARAM_WRAPPERS = {
    "read": "BufRO", "read_write": "Scattered", "write": "Scattered", "tensor": "Tensor",
    "tensor_mut": "TensorMut", "tensor_write": "TensorWrite", "uniform": "Uniform",
    "image": "DirectSpatial",
}
_SCALAR = {"u32": "uint", "i32": "int", "f32": "float", "bool": "bool"}

# The error word of a kernel with trapping-check sites (ir/abi.py): the canonical function's
# last parameter, a field of the wrapper's argument block, a local of the lane-serial form.
FAULTS, FAULTS_TYPE, FAULT_WORDS = A.FAULTS, A.FAULTS_TYPE, A.FAULT_WORDS


class Names:
    """User identifiers -> Slang identifiers (codegen/names.py): unchanged unless reserved
    or taken. Called with a value's name; `struct` and `field` name types and members."""

    def __init__(self, kernel: N.Kernel):
        self.namer = kernel_namer(kernel, SLANG)
        self.map = self.namer.map
        self.fields = {s.name: field_namer(s, SLANG).map for s in kernel.structs}

    def __call__(self, name: str) -> str:
        return self.map.get(name, name)

    def struct(self, name: str) -> str:
        return self.map.get("struct:" + name, name)

    def field(self, struct: str, name: str) -> str:
        return self.fields.get(struct, {}).get(name, name)

    def kernel(self, name: str) -> str:
        return self.map.get("kernel:" + name, name)


def _struct_name(names: Callable[[str], str], name: str) -> str:
    return names.struct(name) if isinstance(names, Names) else names(name)


def slang_type(ty: str, names: Callable[[str], str] = lambda s: s) -> str:
    if ty in _SCALAR:
        return _SCALAR[ty]
    if T.is_vector(ty):
        return f"{_SCALAR[T.elem_of(ty)]}{T.vec_len(ty)}"
    if T.is_matrix(ty):
        return f"GoldyMat{T.vec_len(ty)}"
    if T.is_struct(ty):
        return _struct_name(names, T.struct_name(ty))
    raise BackendError(f"no Slang type for `{ty}`")


def element_type(ty: str, names: Callable[[str], str] = lambda s: s) -> str:
    """Element type of a buffer in memory: `bool` elements are stored as u32 0/1."""
    return "uint" if ty == "bool" else slang_type(ty, names)


def param_type(p: N.Param, names: Callable[[str], str] = lambda s: s) -> str:
    if p.category == "scalar":
        return slang_type(p.ty)
    return f"{PARAM_WRAPPERS[p.category]}<{element_type(p.ty, names)}>"


def struct_decl(decl: N.StructDecl, names: Callable[[str], str]) -> list[str]:
    """A struct with explicit u32 padding, so every target (std430 on Vulkan, C layout on
    the CPU and CUDA) places each field at its ir.layout offset with the ir.layout stride."""
    lay = L.struct_layout(decl)
    lines = [f"struct {_struct_name(names, decl.name)}", "{"]
    at = 0
    pad = 0

    def padding(upto: int) -> None:
        nonlocal at, pad
        while at < upto:
            lines.append(f"{INDENT}uint _pad{pad};")
            pad += 1
            at += 4

    for f in lay.fields:
        padding(f.offset)
        field = names.field(decl.name, f.name) if isinstance(names, Names) else f.name
        lines.append(f"{INDENT}{slang_type(f.ty, names)} {field};")
        at += f.size
    padding(lay.stride)
    lines.append("};")
    return lines


def f32_literal(v: float) -> str:
    """An f32 constant written so that every target reads back the exact same bits."""
    if math.isnan(v):
        return "asfloat(0x7fc00000u)"
    if math.isinf(v):
        return "asfloat(0x7f800000u)" if v > 0 else "asfloat(0xff800000u)"
    bits = _struct.unpack("<I", _struct.pack("<f", v))[0]
    # Short decimals that are exact in binary (integers, halves, quarters...) read the same
    # everywhere; anything else is spelled by its bits, since not every target prints or
    # parses float literals with enough digits.
    if v == 0.0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    if abs(v) < 2.0 ** 24 and (v * 1024.0).is_integer():
        text = repr(float(v))
        return text if "e" not in text else f"asfloat(0x{bits:08x}u)"
    return f"asfloat(0x{bits:08x}u)"


def const(c: N.Const) -> str:
    if c.ty == "bool":
        return "true" if c.value else "false"
    if c.ty == "u32":
        return f"{int(c.value)}u"
    if c.ty == "i32":
        v = int(c.value)
        if v == -(2 ** 31):
            return "int(0x80000000u)"
        return str(v) if v >= 0 else f"(-{-v})"
    if c.ty == "f32":
        text = f32_literal(float(c.value))
        return f"({text})" if text.startswith("-") else text
    raise BackendError(f"constant of type `{c.ty}`")


def zero_value(ty: str, names: Callable[[str], str] = lambda s: s) -> str:
    if ty == "f32":
        return "0.0"
    if ty == "u32":
        return "0u"
    if ty == "i32":
        return "0"
    if ty == "bool":
        return "false"
    if T.is_vector(ty):
        return f"{slang_type(ty)}({zero_value(T.elem_of(ty))})"
    raise BackendError(f"no zero value for `{ty}`")


def signature_builtins(kernel: N.Kernel) -> list[str]:
    """The builtins the canonical signature declares: those the body names, plus local_id
    for collectives (their tree indexes scratch by lane), minus workgroup_size (a constant)."""
    used = set(kernel.builtins)
    if any(isinstance(s, (N.Reduce, N.Softmax)) for s in N.walk_stmts(kernel.body)):
        used.add("local_id")
    return [b for b in N.BUILTINS if b in used and b in BUILTIN_PARAMS]


_INTERLOCKED = {"add": "InterlockedAdd", "sub": "InterlockedAdd", "min": "InterlockedMin", "max": "InterlockedMax",
                "and": "InterlockedAnd", "or": "InterlockedOr", "xor": "InterlockedXor",
                "exchange": "InterlockedExchange", "compare_exchange": "InterlockedCompareExchange"}


def _slang_interlocked(op: str, ty: str, slot: str, v: str, old: str, c: Optional[str] = "c") -> str:
    if op == "sub":  # no InterlockedSub: add the wrapping negation
        v = f"(0u - {v})" if ty == "u32" else f"wrapping_sub(0, {v})"
    if op == "compare_exchange":
        return f"InterlockedCompareExchange({slot}, {c}, {v}, {old})"
    return f"{_INTERLOCKED[op]}({slot}, {v}, {old})"


def _slang_rmw(op: str, ty: str, old: str, v: str, c: str = "c") -> str:
    """The new value of a read-modify-write, for targets that run one lane at a time."""
    if op in ("add", "sub"):
        return f"wrapping_{op}({old}, {v})" if ty == "i32" else f"({old} {'+' if op == 'add' else '-'} {v})"
    if op in ("min", "max"):
        return f"{op}({old}, {v})"
    if op in ("and", "or", "xor"):
        return f"({old} {dict(zip(('and', 'or', 'xor'), '&|^'))[op]} {v})"
    return v if op == "exchange" else f"({old} == {c} ? {v} : {old})"


def has_sync(s: N.Stmt) -> bool:
    """Whether a statement is, or contains, a workgroup barrier (collectives end in one)."""
    return any(isinstance(x, (N.Barrier, N.Reduce, N.Softmax)) for x in N.walk_stmts([s]))


class Printer:
    """Renders IR expressions and statements as fully parenthesised Slang.

    Subclasses change how locals are named and declared, how `return` ends a thread and
    how barriers are written (the CPU lane-serial form overrides these)."""

    def __init__(self, kernel: N.Kernel, names: Optional[Names] = None):
        self.k = kernel
        self.names = names or Names(kernel)
        self.tmp = 0
        self.helpers: dict[str, str] = {}  # math library functions used (ir/mathlib.py), name -> text

    # -- hooks
    def local(self, name: str) -> str:
        return self.names(name)

    def builtin(self, name: str) -> str:
        if name == "workgroup_size":
            x, y, z = self.k.workgroup_size
            return f"uint3({x}u, {y}u, {z}u)"
        return BUILTIN_PARAMS[name][1]

    def fresh(self, stem: str) -> str:
        self.tmp += 1
        return f"_goldy_{stem}{self.tmp}"

    # -- expressions
    def expr(self, e: N.Expr) -> str:
        m = getattr(self, "e_" + type(e).__name__, None)
        if m is None:
            raise BackendError(f"kernel `{self.k.name}`: Slang cannot render {type(e).__name__}")
        return m(e)

    def e_Const(self, e: N.Const) -> str:
        return const(e)

    def e_Var(self, e: N.Var) -> str:
        if e.name in self.k.locals:
            return self.local(e.name)
        return self.names(e.name)

    def e_Builtin(self, e: N.Builtin) -> str:
        return self.builtin(e.name)

    def e_Load(self, e: N.Load) -> str:
        """A checked load (e.check >= 0) records a failure in the error word; an unchecked
        one keeps the silent guard (out of range gives 0) even where ir/checks.py proved it
        in range: the guard is cheap and the safe choice."""
        idx = self.expr(e.index)
        w = self.k.workgroup_array(e.resource)
        name = self.names(e.resource)
        site = e.check
        if w is not None:
            if site >= 0:
                return f"({FAULTS}.in_range({idx}, {w.size}u, {site}u) ? {name}[{idx}] : {zero_value(w.ty)})"
            if isinstance(e.index, N.Const) and 0 <= e.index.value < w.size:
                return f"{name}[{idx}]"
            return f"(({idx} < {w.size}u) ? {name}[{idx}] : {zero_value(w.ty)})"
        p = self.k.param(e.resource)
        value = f"{name}.load_checked({idx}, {site}u, {FAULTS})" if site >= 0 else f"{name}[{idx}]"
        if p is not None and p.ty == "bool":
            return f"({value} != 0u)"
        return value

    def e_Len(self, e: N.Len) -> str:
        w = self.k.workgroup_array(e.resource)
        if w is not None:
            return f"{w.size}u"
        return f"{self.names(e.resource)}.len()"

    def e_TensorDim(self, e: N.TensorDim) -> str:
        return f"{self.names(e.resource)}.dim({self.expr(e.axis)})"

    def e_TensorRank(self, e: N.TensorRank) -> str:
        return f"{self.names(e.resource)}.rank()"

    def e_ImageSize(self, e: N.ImageSize) -> str:
        return f"{self.names(e.resource)}.{'width' if e.axis == 0 else 'height'}()"

    def e_Field(self, e: N.Field) -> str:
        return f"{self.expr(e.value)}.{self.names.field(T.struct_name(e.value.ty), e.name)}"

    def e_Swizzle(self, e: N.Swizzle) -> str:
        return f"{self.expr(e.value)}.{e.lanes}"

    def e_Unary(self, e: N.Unary) -> str:
        v = self.expr(e.operand)
        if e.op == "neg":
            elem = T.elem_of(e.ty)
            if elem == "f32" and not T.is_matrix(e.ty):  # the sign bit (ir/rules.py), never flushed
                return f"rust_neg({v})"
            return f"wrapping_neg({v})" if elem == "i32" else f"(-{v})"
        return f"(!{v})" if e.ty == "bool" else f"(~{v})"

    def splat(self, code: str, from_ty: str, to_ty: str) -> str:
        return f"{slang_type(to_ty)}({code})" if T.is_vector(to_ty) and not T.is_vector(from_ty) else code

    def e_Binary(self, e: N.Binary) -> str:
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        lt, rt, op = e.lhs.ty, e.rhs.ty, e.op
        if op in ("and", "or"):
            return f"({a} {'&&' if op == 'and' else '||'} {b})"
        if op in N.COMPARISONS and lt == "f32":  # on the bits (ir/rules.py): NaN and subnormals kept
            return f"rust_{op}({a}, {b})"
        if op in N.COMPARISONS:
            sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
            return f"({a} {sym} {b})"
        if op in ("shl", "shr"):
            if isinstance(e.rhs, N.Const):
                amount = f"{int(e.rhs.value) & 0xFFFFFFFF}u"
            else:
                amount = f"asuint({b})" if rt == "i32" else b
            return f"wrapping_{op}({a}, {amount})"
        if T.is_matrix(lt):
            if op == "mul":
                return f"mat_scale({a}, {b})" if rt == "f32" else f"mat_mul({a}, {b})"
            return f"mat_{op}({a}, {b})"
        if lt == "bool":  # bitwise ops on bools
            sym = {"bitand": "&&", "bitor": "||", "bitxor": "!="}[op]
            return f"({a} {sym} {b})"
        elem = T.elem_of(e.ty)
        if op in ("bitand", "bitor", "bitxor"):
            return f"({a} {dict(bitand='&', bitor='|', bitxor='^')[op]} {b})"
        if elem == "i32" and op in ("add", "sub", "mul"):
            return f"wrapping_{op}({self.splat(a, lt, e.ty)}, {self.splat(b, rt, e.ty)})"
        if op in ("div", "rem") and e.check >= 0:  # scalar integer division, checked
            return f"rust_{op}_checked({a}, {b}, {e.check}u, {FAULTS})"
        if op in ("div", "rem") and (elem in T.INTS or op == "rem"):
            return f"rust_{op}({self.splat(a, lt, e.ty)}, {self.splat(b, rt, e.ty)})"
        if elem == "f32" and op in ("add", "sub"):  # Slang folds x + 0.0 to x (goldy_abi.slang rust_fadd)
            return f"rust_f{op}({self.splat(a, lt, e.ty)}, {self.splat(b, rt, e.ty)})"
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
        return f"({a} {sym} {b})"

    def e_Cast(self, e: N.Cast) -> str:
        v, src, dst = self.expr(e.value), e.value.ty, e.ty
        if src == "bool":
            return f"({v} ? {'1u' if dst == 'u32' else '1'} : {'0u' if dst == 'u32' else '0'})"
        if src == "f32":
            return f"rust_f32_to_{dst}({v})" if dst in T.INTS else v
        if dst == "f32":  # round to nearest even (ir/rules.py), not the target's conversion
            return f"rust_{src}_to_f32({v})"
        # int(x)/uint(x) are modular conversions, bit for bit; asint() must not be used here:
        # slangpy's CPU target compares its result as unsigned
        if (src, dst) == ("i32", "u32"):
            return f"uint({v})"
        if (src, dst) == ("u32", "i32"):
            return f"int({v})"
        return v

    def e_Call(self, e: N.Call) -> str:
        args = [self.expr(a) for a in e.args]
        f = e.func
        elem = T.elem_of(e.args[0].ty)
        if f == "abs":
            return args[0] if elem == "u32" else (f"wrapping_abs({args[0]})" if elem == "i32" else f"rust_abs({args[0]})")
        if f in ("min", "max"):
            return f"rust_{f}({args[0]}, {args[1]})" if elem == "f32" else f"{f}({args[0]}, {args[1]})"
        if f == "clamp":
            if elem == "f32":
                return f"rust_clamp({', '.join(args)})"
            return f"min(max({args[0]}, {args[1]}), {args[2]})"
        if f == "round":
            return f"rust_round({args[0]})"
        if f in ("length", "dot"):
            return f"rust_{f}({', '.join(args)})"
        if f == "from_bits":
            return f"asfloat({args[0]})"
        if f == "to_bits":
            return f"asuint({args[0]})"
        if f in MATH_FUNCTIONS:
            return self.math_call(f, e.args[0].ty, args)
        rule = call_rule(f, e.args[0].ty)
        if rule is not None:  # one rule of ir/rules.py on scalars, a helper per module
            name = _MATH_SLANG.rule_name(rule)
            if name not in self.helpers:
                self.helpers[name] = _render_rule(rule, _MATH_SLANG)[0]
            return f"{name}({', '.join(args)})"
        return f"{f}({', '.join(args)})"

    def math_call(self, f: str, ty: str, args: list[str]) -> str:
        """A call of the math library's `f` (ir/mathlib.py), the helper defined once per
        module (see `helper_lines`); vectors lane by lane."""
        name = _MATH_SLANG.name(f)
        if name not in self.helpers:
            self.helpers[name] = _render_math(f, _MATH_SLANG)[0]
        if T.is_vector(ty):
            n, vt = T.vec_len(ty), slang_type(ty)
            vname = f"{name}v{n}"
            if vname not in self.helpers:
                params = ", ".join(f"{vt} {a}" for a in "ab"[:len(args)])
                lanes = ", ".join(f"{name}({', '.join(f'{a}.{c}' for a in 'ab'[:len(args)])})" for c in "xyzw"[:n])
                self.helpers[vname] = f"{vt} {vname}({params}) {{ return {vt}({lanes}); }}"
            name = vname
        return f"{name}({', '.join(args)})"

    def helper_lines(self) -> list[str]:
        """The math helpers the rendered code calls, each followed by a blank line."""
        return [line for text in self.helpers.values() for line in text.split("\n") + [""]]

    def e_Construct(self, e: N.Construct) -> str:
        return f"{slang_type(e.ty)}({', '.join(self.expr(a) for a in e.args)})"

    def e_Select(self, e: N.Select) -> str:
        return f"({self.expr(e.cond)} ? {self.expr(e.if_true)} : {self.expr(e.if_false)})"

    # -- statements
    def block(self, body: list[N.Stmt], depth: int) -> list[str]:
        out: list[str] = []
        for s in body:
            out += self.stmt(s, depth)
        return out

    def stmt(self, s: N.Stmt, depth: int) -> list[str]:
        m = getattr(self, "s_" + type(s).__name__, None)
        if m is None:
            raise BackendError(f"kernel `{self.k.name}`: Slang cannot render {type(s).__name__}")
        return m(s, depth)

    def line(self, depth: int, text: str) -> str:
        return INDENT * depth + text

    def s_Let(self, s: N.Let, d: int) -> list[str]:
        decl = f"{slang_type(s.ty, self.names)} {self.local(s.name)}"
        if s.value is None:  # `let x: T;`: assigned before any read, zeroed so Slang sees no uninitialised use
            return [self.line(d, decl + " = {};")]
        return [self.line(d, f"{decl} = {self.expr(s.value)};")]

    def s_Assign(self, s: N.Assign, d: int) -> list[str]:
        return [self.line(d, f"{self.expr(s.target)} = {self.expr(s.value)};")]

    def store(self, resource: str, index: str, value: str, d: int, site: int = -1) -> list[str]:
        w = self.k.workgroup_array(resource)
        name = self.names(resource)
        if w is not None:
            if site >= 0:
                return [self.line(d, f"if ({FAULTS}.in_range({index}, {w.size}u, {site}u)) {{ {name}[{index}] = {value}; }}")]
            if index.endswith("u") and index[:-1].isdigit() and int(index[:-1]) < w.size:
                return [self.line(d, f"{name}[{index}] = {value};")]
            return [self.line(d, f"if ({index} < {w.size}u) {{ {name}[{index}] = {value}; }}")]
        p = self.k.param(resource)
        if p is not None and p.ty == "bool":
            value = f"({value} ? 1u : 0u)"
        if site >= 0:
            return [self.line(d, f"{name}.store_checked({index}, {value}, {site}u, {FAULTS});")]
        return [self.line(d, f"{name}[{index}] = {value};")]

    def s_Store(self, s: N.Store, d: int) -> list[str]:
        idx = self.expr(s.index)
        value = self.expr(s.value)
        pre: list[str] = []
        if _has_site(s.value) and (s.check >= 0 or _has_site(s.index)):
            # Rust evaluates the assigned value before the place: a value that can fault
            # is computed first, so the first failure a thread records is Rust's first
            v = self.fresh("v")
            pre.append(self.line(d, f"{slang_type(s.value.ty, self.names)} {v} = {value};"))
            value = v
        if self.k.workgroup_array(s.resource) is not None and not isinstance(s.index, (N.Var, N.Const)):
            t = self.fresh("i")
            pre.append(self.line(d, f"uint {t} = {idx};"))
            idx = t
        return pre + self.store(s.resource, idx, value, d, s.check)

    def s_If(self, s: N.If, d: int) -> list[str]:
        out = [self.line(d, f"if {self.cond(s.cond)}"), self.line(d, "{")]
        out += self.block(s.then_body, d + 1)
        out.append(self.line(d, "}"))
        if s.else_body:
            if len(s.else_body) == 1 and isinstance(s.else_body[0], N.If):
                nested = self.s_If(s.else_body[0], d)
                nested[0] = self.line(d, "else " + nested[0].lstrip())
                return out + nested
            out += [self.line(d, "else"), self.line(d, "{")]
            out += self.block(s.else_body, d + 1)
            out.append(self.line(d, "}"))
        return out

    def cond(self, e: N.Expr) -> str:
        c = self.expr(e)
        return c if c.startswith("(") and _balanced_outer(c) else f"({c})"

    def s_While(self, s: N.While, d: int) -> list[str]:
        return ([self.line(d, f"while {self.cond(s.cond)}"), self.line(d, "{")]
                + self.block(s.body, d + 1) + [self.line(d, "}")])

    def s_Loop(self, s: N.Loop, d: int) -> list[str]:
        return [self.line(d, "for (;;)"), self.line(d, "{")] + self.block(s.body, d + 1) + [self.line(d, "}")]

    def loop_var_init(self, s: N.For, start: str) -> str:
        return f"{_SCALAR[s.ty]} {self.local(s.var)} = {start}"

    def s_For(self, s: N.For, d: int) -> list[str]:
        """`for v in a..b`: the range is evaluated once (Rust), so an end that reads locals
        is hoisted; `a..=b` steps with a flag so `b == u32::MAX` still ends."""
        v = self.local(s.var)
        one = "1u" if s.ty == "u32" else "1"
        step = f"{v} = {v} + {one}" if s.ty == "u32" else f"{v} = wrapping_add({v}, 1)"
        start, end = self.expr(s.start), self.expr(s.end)
        out: list[str] = []
        if s.inclusive or _reads_locals(s.end, self.k):
            e = self.fresh("end")
            out.append(self.line(d, f"{_SCALAR[s.ty]} {e} = {end};"))
            end = e
        if s.inclusive:
            more = self.fresh("more")
            out.append(self.line(d, f"bool {more} = ({start} <= {end});"))
            head = f"for ({self.loop_var_init(s, start)}; {more}; {more} = ({v} != {end}), {step})"
        else:
            head = f"for ({self.loop_var_init(s, start)}; ({v} < {end}); {step})"
        body = [self.line(d, head), self.line(d, "{")] + self.block(s.body, d + 1) + [self.line(d, "}")]
        if out:
            return [self.line(d, "{")] + [INDENT + x for x in out] + [INDENT + x for x in body] + [self.line(d, "}")]
        return body

    def s_Break(self, s: N.Break, d: int) -> list[str]:
        return [self.line(d, "break;")]

    def s_Continue(self, s: N.Continue, d: int) -> list[str]:
        return [self.line(d, "continue;")]

    def s_Return(self, s: N.Return, d: int) -> list[str]:
        return [self.line(d, "return;")]

    def barrier(self, d: int) -> list[str]:
        return [self.line(d, "GroupMemoryBarrierWithGroupSync();")]

    def s_Barrier(self, s: N.Barrier, d: int) -> list[str]:
        return self.barrier(d)

    def s_Atomic(self, s: N.Atomic, d: int) -> list[str]:
        w = self.k.workgroup_array(s.resource)
        if w is not None:
            return self.wg_atomic(s, w, d)
        cmp = f"{self.expr(s.compare)}, " if s.compare is not None else ""
        if s.op == "add":  # goldy_abi.slang's
            args = f"{self.names(s.resource)}, {self.expr(s.index)}, {self.expr(s.value)}"
            call = f"atomic_add_checked({args}, {s.check}u, {FAULTS})" if s.check >= 0 else f"atomic_add({args})"
        else:
            b = self.names(s.resource)
            args = f"{b}._buf, {b}._off, {b}._len, {self.expr(s.index)}, {cmp}{self.expr(s.value)}"
            fn = self.atomic_helper(s.op, s.value.ty, s.check >= 0)
            call = f"{fn}({args}, {s.check}u, {FAULTS})" if s.check >= 0 else f"{fn}({args})"
        if s.target is None:
            return [self.line(d, f"{call};")]
        return [self.line(d, f"{self.local(s.target)} = {call};")]

    def atomic_helper(self, op: str, ty: str, checked: bool) -> str:
        """`_goldy_atomic_<op>_<type>(buf, off, len, i, [c,] v)`: the previous value; out of
        range changes nothing and gives 0 (the checked form records the failure). The CPU
        target runs one lane at a time, so a plain read-modify-write is atomic there."""
        st = slang_type(ty)
        name = f"_goldy_atomic_{op}_{st}"
        cas = op == "compare_exchange"
        params = f"RWStructuredBuffer<{st}> buf, uint off, uint len, uint i, {f'{st} c, ' if cas else ''}{st} v"
        if name not in self.helpers:
            self.helpers[name] = "\n".join([
                f"{st} {name}({params})", "{", f"    {st} old = {zero_value(ty)};", "    if (i >= len) return old;",
                "    __target_switch", "    {",
                f"    case cpp: old = buf[off + i]; buf[off + i] = {_slang_rmw(op, ty, 'old', 'v')};",
                f"    default: {_slang_interlocked(op, ty, 'buf[off + i]', 'v', 'old')};", "    }",
                "    return old;", "}"])
        if not checked:
            return name
        cname = name + "_checked"
        if cname not in self.helpers:
            args = f"buf, off, len, i, {'c, ' if cas else ''}v"
            self.helpers[cname] = (f"{st} {cname}({params}, uint site, {FAULTS_TYPE} f)\n{{\n"
                                   f"    return f.in_range(i, len, site) ? {name}({args}) : {zero_value(ty)};\n}}")
        return cname

    def wg_atomic(self, s: N.Atomic, w: N.WorkgroupArray, d: int) -> list[str]:
        """An atomic on a workgroup array, inline (its element is passed by reference only to
        the Interlocked intrinsics); the index and operands are evaluated once, in order."""
        st, name = slang_type(w.ty), self.names(w.name)
        i, old, v = self.fresh("i"), self.fresh("old"), self.fresh("v")
        out = [self.line(d, "{"), self.line(d + 1, f"uint {i} = {self.expr(s.index)};")]
        c = None
        if s.compare is not None:
            c = self.fresh("c")
            out.append(self.line(d + 1, f"{st} {c} = {self.expr(s.compare)};"))
        out += [self.line(d + 1, f"{st} {v} = {self.expr(s.value)};"),
                self.line(d + 1, f"{st} {old} = {zero_value(w.ty)};")]
        cond = f"{FAULTS}.in_range({i}, {w.size}u, {s.check}u)" if s.check >= 0 else f"{i} < {w.size}u"
        out.append(self.line(d + 1, f"if ({cond}) {{ {self.wg_rmw(s.op, w.ty, f'{name}[{i}]', v, c, old)} }}"))
        if s.target is not None:
            out.append(self.line(d + 1, f"{self.local(s.target)} = {old};"))
        return out + [self.line(d, "}")]

    def wg_rmw(self, op: str, ty: str, slot: str, v: str, c: Optional[str], old: str) -> str:
        """The read-modify-write of a workgroup-array element, `old` receiving its value."""
        return _slang_interlocked(op, ty, slot, v, old, c) + ";"


def _has_site(e: N.Expr) -> bool:
    return any(getattr(x, "check", -1) >= 0 for x in N.walk_expr(e))


def _reads_locals(e: N.Expr, k: N.Kernel) -> bool:
    return any(isinstance(x, N.Var) and x.name in k.locals for x in N.walk_expr(e))


def _balanced_outer(c: str) -> bool:
    """Whether the leading `(` of c closes at its last character."""
    depth = 0
    for i, ch in enumerate(c):
        depth += ch == "("
        depth -= ch == ")"
        if depth == 0:
            return i == len(c) - 1
    return False


# ---------------------------------------------------------------- shared by the wrapper and the lane-serial form

ENTRY_POINT = "goldy_main"  # the dispatched entry of both; `main` is renamed by some targets


def site_comments(kernel: N.Kernel) -> list[str]:
    """One comment line per trapping-check site: its id, what it checks, the Rust location."""
    if not A.has_error_word(kernel):
        return []
    out = [f"// trapping checks (`{FAULTS}` records the first failure):"]
    for site in check_sites(kernel):
        what = f"`{site.resource}[_]`" if site.kind == "index" else f"`{site.text}` by zero"
        out.append(f"//   site {site.id}: {what} at {kernel.source_file}:{site.span.line}:{site.span.col}")
    return out


def _arg_field(p: N.Param, names) -> str:
    """How a parameter sits in the global argument block (uniform structs as a one-element
    buffer, so their layout is the buffer-element layout on every target)."""
    if p.category == "uniform":
        return f"StructuredBuffer<{slang_type(p.ty, names)}> {names(p.name)};"
    return f"{param_type(p, names)} {names(p.name)};"


def arg_value(p: N.Param, names) -> str:
    v = f"_goldy_args.{names(p.name)}"
    return f"{v}[0]" if p.category == "uniform" else v


def args_block(kernel: N.Kernel, names) -> list[str]:
    """The global `_goldy_args` block every form of a kernel binds its parameters through,
    its fields in the ABI plan's order."""
    fields = []
    for f in A.plan(kernel, "slang").fields:
        if f.param >= 0:
            fields.append(INDENT + _arg_field(kernel.params[f.param], names))
        elif f.role == "nwg":
            fields.append(f"{INDENT}uint3 {A.NWG_FIELD};")
        else:
            fields.append(f"{INDENT}{FAULTS_TYPE} {FAULTS};")
    return ["struct _GoldyArgs", "{"] + fields + ["};", f"ParameterBlock<_GoldyArgs> {A.ARGS_BLOCK};", ""]
