"""File constants and constant expressions: `const TILE: u32 = 16;` items at the top level
of a file (or of an inline `mod`), usable as values in kernels and, like any constant
expression (`2 * TILE`, `{ N / 4 }`), as the sizes the dialect needs at import time:
`workgroup_size`, `workgroup_array` lengths and collective sizes.

Evaluation follows Rust's const evaluation: integer arithmetic that overflows, division by
zero and shift amounts past the width are errors (not wrap-around); f32 arithmetic rounds
each step to f32; `as` casts follow Rust. A const item is host code until a kernel uses it,
so a const of another type (`&str`, `u64`) is only an error where a kernel names it.
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from typing import Any, Optional

import tree_sitter
import tree_sitter_rust

from . import dialect as D
from .syntax import ident, named, node_text, parse_int_digits, split_int_literal

VALUE_TYPES = ("u32", "i32", "f32", "bool")  # what a kernel may use as a value
SIZE_TYPES = ("u32", "i32", "usize")  # what may give a size
RANGES = {"u32": (0, 2**32 - 1), "i32": (-(2**31), 2**31 - 1), "usize": (0, 2**64 - 1)}
_F32 = struct.Struct("<f")
_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_rust.language()))


class ConstError(Exception):
    """`node` (a tree-sitter node, or a (start, end) byte pair of the file) cannot be evaluated."""

    def __init__(self, node: Any, message: str, label: str, help: Optional[list[str]] = None):
        super().__init__(message)
        self.node, self.message, self.label, self.help = node, message, label, help or []


@dataclass
class FileConst:
    name: str
    item: Any  # the const_item node
    ty: Optional[str] = None
    value: Any = None
    error: Optional[ConstError] = None
    state: str = "new"  # "new" | "busy" (being evaluated: a cycle) | "done"


def _f32(x: float) -> float:
    try:
        return _F32.unpack(_F32.pack(x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


class Consts:
    """The const items of one file, evaluated on first use."""

    def __init__(self, items: list):
        self.items: dict[str, list[FileConst]] = {}
        for node, _attrs, _doc in items:
            if node.type == "const_item" and node.child_by_field_name("name") is not None:
                name = ident(node.child_by_field_name("name"))
                self.items.setdefault(name, []).append(FileConst(name, node))

    def __contains__(self, name: str) -> bool:
        return name in self.items

    def get(self, name: str, use: Any) -> tuple[str, Any]:
        """(type, value) of const `name`; raises ConstError (at the const, or at `use`)."""
        found = self.items[name]
        if len(found) > 1:
            raise ConstError(use, f"constant `{name}` is defined {len(found)} times in this file",
                             "ambiguous", ["kernels see one namespace of constants per file: rename one of them"])
        c = found[0]
        if c.state == "busy":
            raise ConstError(c.item, f"constant `{name}` is defined in terms of itself", "cycle here")
        if c.state == "new":
            c.state = "busy"
            try:
                c.ty, c.value = self._evaluate_item(c)
            except ConstError as e:
                c.error = e
            c.state = "done"
        if c.error is not None:
            raise c.error
        return c.ty, c.value  # type: ignore[return-value]

    def _evaluate_item(self, c: FileConst) -> tuple[str, Any]:
        tnode, vnode = c.item.child_by_field_name("type"), c.item.child_by_field_name("value")
        ty = node_text(tnode).replace(" ", "") if tnode is not None else ""
        if ty not in VALUE_TYPES + ("usize",):
            raise ConstError(tnode if tnode is not None else c.item,
                             f"constant `{c.name}` has type `{ty}`, which kernels cannot use", "this type",
                             ["declare it `u32`, `i32`, `f32` or `bool` (or `usize` for a size)"])
        if vnode is None:
            raise ConstError(c.item, f"constant `{c.name}` has no value", "no value")
        return ty, self.evaluate(vnode, ty)

    # ---------------------------------------------------------------- expressions

    def evaluate(self, node, expected: Optional[str]) -> Any:
        """The value of constant expression `node` as type `expected` (or its own type)."""
        ty, v = self._eval(node, expected)
        if ty is None:  # an untyped integer: takes the expected type, else i32 as in Rust
            ty = expected if expected in RANGES else "i32"
            _check_range(node, ty, v)
        elif expected is not None and ty != expected:
            raise ConstError(node, "mismatched types", f"expected `{expected}`, found `{ty}`",
                             [f"convert it: `({node_text(node)}) as {expected}`"])
        return v

    def _eval(self, node, expected: Optional[str]) -> tuple[Optional[str], Any]:
        t = node.type
        if t == "integer_literal":
            digits, suffix = split_int_literal(node_text(node))
            v = parse_int_digits(digits)
            if v is None or suffix not in (None, "u32", "i32", "usize"):
                raise ConstError(node, "unsupported integer literal", "expected a `u32`, `i32` or `usize` value")
            ty = suffix or (expected if expected in RANGES else None)
            if expected == "f32" and suffix is None:
                raise ConstError(node, "mismatched types", "expected `f32`, found integer", ["write `1.0`, not `1`"])
            if ty is not None:
                _check_range(node, ty, v)
            return ty, v
        if t == "float_literal":
            s = node_text(node).replace("_", "")
            f = D.f32_nearest(s.removesuffix("f32")) if not s.endswith("f64") else None
            if f is None:
                raise ConstError(node, "unsupported float literal", "expected a finite `f32`")
            return "f32", f
        if t == "boolean_literal":
            return "bool", node_text(node) == "true"
        if t in ("identifier", "type_identifier"):
            name = ident(node)
            if name not in self.items:
                raise ConstError(node, f"cannot find constant `{name}` in this file", "not a constant",
                                 ["sizes are integer literals, `const` items of the file, or expressions of them"])
            return self.get(name, node)
        if t == "scoped_identifier":
            return _associated(node)
        if t == "parenthesized_expression" or (t == "block" and len(named(node)) == 1
                                               and named(node)[0].type not in ("expression_statement",
                                                                               "let_declaration")):
            return self._eval(named(node)[0], expected)
        if t == "unary_expression":
            return self._unary(node, expected)
        if t == "binary_expression":
            return self._binary(node, expected)
        if t == "type_cast_expression":
            return self._cast(node)
        raise ConstError(node, "not a constant expression", "cannot be evaluated when the file is imported",
                         ["use literals, `const` items and arithmetic on them"])

    def _unary(self, node, expected):
        op = node_text(node.child(0))
        ty, v = self._eval(named(node)[0], expected)
        if op == "-":
            if ty in ("u32", "usize") or ty == "bool":
                raise ConstError(node, f"cannot apply unary operator `-` to type `{ty}`", "here")
            if ty == "f32":
                return ty, -v
            v = -v
            if ty is not None:
                _check_range(node, ty, v)
            return ty, v
        if op == "!":
            if ty == "bool":
                return ty, not v
            if ty == "f32":
                raise ConstError(node, "cannot apply unary operator `!` to type `f32`", "here")
            return ty, _wrap(ty or "i32", ~v)
        raise ConstError(node, "not a constant expression", f"operator `{op}`")

    def _binary(self, node, expected):
        lnode, rnode = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node_text(node.child_by_field_name("operator"))
        compare = op in ("==", "!=", "<", "<=", ">", ">=")
        if op in ("&&", "||"):
            _, a = self._typed(lnode, "bool")
            if (op == "&&" and not a) or (op == "||" and a):
                return "bool", a
            return "bool", self._typed(rnode, "bool")[1]
        if op in ("<<", ">>"):
            lt, a = self._eval(lnode, expected)
            _, s = self._eval(rnode, None)
            width = 64 if lt == "usize" else 32
            if not isinstance(s, int) or isinstance(s, bool) or not 0 <= s < width:
                raise ConstError(node, "this arithmetic operation will overflow", f"shift by {s}")
            if lt in ("f32", "bool"):
                raise ConstError(node, f"no implementation for `{lt} {op} {lt}`", "here")
            ty = lt or (expected if expected in RANGES else None)
            v = a << s if op == "<<" else a >> s
            return ty, (_wrap(ty, v) if ty is not None else v)
        lt, a = self._eval(lnode, None if compare else expected)
        rt, b = self._eval(rnode, lt if lt is not None else (None if compare else expected))
        if lt is None and rt is not None:
            lt = rt
        if lt is not None and rt is not None and lt != rt:
            raise ConstError(node, "mismatched types", f"`{lt}` {op} `{rt}`", ["convert one side with `as`"])
        ty = lt
        if ty is not None and lt is not None:
            _check_range(lnode, ty, a)
            _check_range(rnode, ty, b)
        if compare:
            return "bool", {"==": a == b, "!=": a != b, "<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
        if ty == "bool":
            if op in ("&", "|", "^"):
                return ty, {"&": a and b, "|": a or b, "^": a != b}[op]
            raise ConstError(node, f"no implementation for `bool {op} bool`", "here")
        if ty == "f32":
            if op not in ("+", "-", "*", "/", "%"):
                raise ConstError(node, f"no implementation for `f32 {op} f32`", "here")
            if op == "/" and b == 0:
                v = math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
            elif op == "%":
                v = math.fmod(a, b) if b != 0 and math.isfinite(a) else math.nan
            else:
                v = {"+": a + b, "-": a - b, "*": a * b, "/": a / b if b else 0.0}[op]
            return ty, _f32(v)
        if op in ("/", "%") and b == 0:
            raise ConstError(node, "this operation will panic at runtime", "attempt to divide by zero")
        if op == "/":
            v = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
        elif op == "%":
            v = abs(a) % abs(b) * (1 if a >= 0 else -1)
        elif op in ("&", "|", "^"):
            w = ty or "i32"
            v = _signed(w, {"&": _bits(w, a) & _bits(w, b), "|": _bits(w, a) | _bits(w, b),
                            "^": _bits(w, a) ^ _bits(w, b)}[op])
        elif op in ("+", "-", "*"):
            v = {"+": a + b, "-": a - b, "*": a * b}[op]
        else:
            raise ConstError(node, "not a constant expression", f"operator `{op}`")
        if ty is not None:
            _check_range(node, ty, v, overflow=True)
        return ty, v

    def _typed(self, node, ty):
        got, v = self._eval(node, ty)
        if got != ty:
            raise ConstError(node, "mismatched types", f"expected `{ty}`, found `{got or 'integer'}`")
        return got, v

    def _cast(self, node):
        vnode, tnode = node.child_by_field_name("value"), node.child_by_field_name("type")
        to = node_text(tnode).replace(" ", "")
        ty, v = self._eval(vnode, None)
        ty = ty or "i32"
        if to not in ("u32", "i32", "f32", "usize"):
            raise ConstError(tnode, f"cannot cast to `{to}` in a constant", "here")
        if to == "f32":
            if ty == "bool":
                raise ConstError(node, "casting `bool` as `f32` is invalid", "here")
            return "f32", _f32(float(v))
        if ty == "f32":  # truncate toward zero, saturate, NaN gives 0 (Rust)
            lo, hi = RANGES[to]
            return to, 0 if math.isnan(v) else int(max(lo, min(hi, math.trunc(v) if math.isfinite(v) else
                                                                     (hi if v > 0 else lo))))
        return to, _wrap(to, int(v))


def _bits(ty: str, v: int) -> int:
    return v & ((1 << (64 if ty == "usize" else 32)) - 1)


def _signed(ty: str, v: int) -> int:
    return v - (1 << 32) if ty == "i32" and v >= 1 << 31 else v


def _wrap(ty: str, v: int) -> int:
    return _signed(ty, _bits(ty, v))


def _check_range(node, ty: str, v: Any, overflow: bool = False) -> None:
    if ty in RANGES and isinstance(v, int) and not isinstance(v, bool):
        lo, hi = RANGES[ty]
        if not lo <= v <= hi:
            if overflow:
                raise ConstError(node, "this arithmetic operation will overflow", f"{v} does not fit in `{ty}`")
            raise ConstError(node, f"literal out of range for `{ty}`", f"{v} does not fit in `{ty}`")


def _associated(node) -> tuple[str, Any]:
    parts = node_text(node).replace(" ", "").split("::")
    if len(parts) == 2 and (parts[0], parts[1]) in D.ASSOCIATED_CONSTS:
        return D.ASSOCIATED_CONSTS[(parts[0], parts[1])]
    if len(parts) >= 3 and parts[-3:-1] == ["f32", "consts"] and parts[-1] in D.FLOAT_CONSTS:
        return "f32", D.FLOAT_CONSTS[parts[-1]]
    raise ConstError(node, f"`{'::'.join(parts)}` is not a constant the dialect knows", "here",
                     ["see docs/dialect.md, Expressions: Constants"])


def evaluate_text(consts: Consts, text: bytes, expected: str, size: bool = False) -> Any:
    """The value of the expression written as `text` (from an attribute's token tree, which
    tree-sitter does not parse as an expression); errors point into `text` by byte offset."""
    prefix = b"const _: " + expected.encode() + b" = "
    tree = _PARSER.parse(prefix + text + b";")
    item = tree.root_node.child(0)
    value = item.child_by_field_name("value") if item is not None and item.type == "const_item" else None
    if value is None or tree.root_node.has_error:
        raise ConstError((0, len(text)), "not a constant expression", "cannot parse this")
    try:
        return size_of(consts, value) if size else consts.evaluate(value, expected)
    except ConstError as e:
        root = e.node
        while not isinstance(root, tuple) and root.parent is not None:
            root = root.parent
        if root == tree.root_node:  # a node of `text`, not of a const item of the file
            start = max(e.node.start_byte - len(prefix), 0)
            e.node = (start, max(min(e.node.end_byte - len(prefix), len(text)), start + 1))
        raise


# ---------------------------------------------------------------- in the lowering


def _code(e: ConstError) -> str:
    if e.message.startswith("mismatched"):
        return "G0019"
    if "overflow" in e.message or "out of range" in e.message or "panic" in e.message:
        return "G0033"
    if "which kernels cannot use" in e.message:
        return "G0004"
    return "G0038"


def report(lw, e: ConstError, base: Optional[int] = None, use: Any = None) -> None:
    """Report `e` in lowerer `lw`; `base` is the file offset of an attribute's text."""
    from goldy_import.ir.diagnostics import Label
    if isinstance(e.node, tuple):  # inside the use's own text
        where = lw.ctx.source.span(base + e.node[0], base + e.node[1]) if base is not None else lw.span(use)
        inside = True
    else:
        where = e.node
        inside = use is not None and use.start_byte <= e.node.start_byte and e.node.end_byte <= use.end_byte
    extra = [Label(lw.span(use), "constant used here", primary=False)] if use is not None and not inside else []
    lw.error(_code(e), e.message, where, e.label, e.help, extra)


def size_of(consts: Consts, node) -> int:
    """A size (`256`, `TILE`, `{ 2 * TILE }`): a non-negative integer of any integer type."""
    ty, v = consts._eval(node, "u32")
    if ty not in (None,) + SIZE_TYPES:
        raise ConstError(node, "mismatched types", f"expected an integer size, found `{ty}`")
    _check_range(node, ty or "u32", v)
    return v


def size_of_text(consts: Consts, text: bytes) -> int:
    """A size written as attribute tokens (`[TILE, 2 * TILE, 1]` is not parsed as expressions)."""
    return evaluate_text(consts, text, "u32", size=True)


def lower_size(lw, node) -> Optional[int]:
    """A size at `node` in kernel lowering `lw`, or None after reporting why not."""
    try:
        return size_of(lw.ctx.consts, node)
    except ConstError as e:
        report(lw, e, use=node)
        return None


def lower_file_const(lw, node, name: str):
    """A kernel's use of file constant `name` as a value: an IR constant."""
    from goldy_import.ir import nodes as N
    try:
        ty, v = lw.ctx.consts.get(name, node)
    except ConstError as e:
        report(lw, e, use=node)
        return None
    if ty not in VALUE_TYPES:
        lw.error("G0005", f"constant `{name}` is a `{ty}`, which kernels cannot use as a value", node,
                 f"`{ty}` constant", [f"declare it `const {name}: u32` (sizes accept `u32` constants too)"])
        return None
    return N.Const(ty, lw.span(node), v)
