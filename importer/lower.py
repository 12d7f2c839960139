"""Lowering of one kernel's tree-sitter syntax to IR, with type checking.

One visitor method per syntax node; anything not on the whitelist is rejected with a
diagnostic at its span. Errors never raise: a failed sub-expression returns None and its
parent gives up quietly, so one mistake gives one diagnostic.

Untyped literals take their type from context as in Rust. A `let` bound to an untyped
literal (`let mut acc = 0;`) gets its type from its first typed use; the kernel is lowered
a second time with those hints, which is cheaper and simpler than a full inference engine.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Optional

from fractions import Fraction

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import dialect as D
from .diagnostics import Diagnostic, Label, SourceText

# Nesting levels (expressions and blocks) a kernel may use. Real kernels need ~20; the
# bound keeps lowering, the verifier and every emitter far from Python's recursion limit.
MAX_DEPTH = 100
MAX_KERNEL_ERRORS = 100


class Abort(Exception):
    """Stop lowering this kernel (the diagnostic is already recorded)."""


@dataclass
class Binding:
    ir_name: str
    ty: str
    mutable: bool
    kind: str  # "local" | "param" | "resource" | "wgarray" | "uniform"
    decl: int = -1  # byte offset of the declaring pattern: the key of literal-type hints
    flexible: bool = False  # type defaulted from an untyped literal
    decl_span: Optional[N.Span] = None
    # `let x: T;` without a value: "no" until assigned, "maybe" when assigned on some paths
    init: str = "yes"
    loop_depth: int = 0  # loops around the declaration (an immutable one is assigned once)


def _text(node) -> str:
    return node.text.decode("utf-8", errors="replace")


_INT_SUFFIXES = ("u128", "i128", "usize", "isize", "u16", "i16", "u64", "i64", "u32", "i32",
                 "u8", "i8", "f32", "f64")


def split_int_literal(text: str) -> tuple[str, Optional[str]]:
    """`0xFF_u32` -> ("0xFF", "u32"). In hex literals `f32`/`f64` are digits, not suffixes."""
    s = text.replace("_", "")
    hexa = s[:2] in ("0x", "0X")
    for suf in _INT_SUFFIXES:
        if s.endswith(suf) and len(s) > len(suf) and not (hexa and suf[0] == "f"):
            return s[: -len(suf)], suf
    return s, None


def parse_int_digits(s: str) -> Optional[int]:
    try:
        if s[:2] in ("0x", "0X", "0o", "0O", "0b", "0B"):
            return int(s, 0)
        return int(s, 10)  # leading zeros are decimal in Rust
    except ValueError:
        return None


_FLOAT_TEXT = re.compile(r"^\d+(\.\d*)?([eE][+-]?\d+)?$")


def const_int(node) -> Optional[int]:
    """The value of an integer literal used as a size (`[256, 1, 1]`, `::<f32, 256>`)."""
    digits, suffix = split_int_literal(_text(node))
    return parse_int_digits(digits) if suffix in (None, "u32", "usize") else None


def _ident(node) -> str:
    """An identifier's name; the raw form `r#type` names `type`."""
    return _text(node).removeprefix("r#")


class _Region:
    """A source region from one node to another, where a node is needed for a span."""

    def __init__(self, start_node, end_node):
        self.end_node = end_node
        self.start_byte, self.end_byte = start_node.start_byte, end_node.end_byte
        self.start_point, self.end_point = start_node.start_point, end_node.end_point
        self.type = "region"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _diverges(stmts: list[N.Stmt]) -> bool:
    """Whether control never reaches the end of `stmts` (for definite initialisation)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (N.Return, N.Break, N.Continue)):
        return True
    return isinstance(last, N.If) and _diverges(last.then_body) and _diverges(last.else_body)


_CATEGORY_WORDS = {
    "read": "read-only buffer", "read_write": "read-write buffer", "write": "write-only buffer",
    "tensor": "read-only tensor view", "tensor_mut": "read-write tensor view",
    "tensor_write": "write-only tensor view", "image": "storage image",
}


def _read_write_help(p: N.Param, why: str = "") -> list[str]:
    """How to declare `p` so it can be both read and written."""
    if T.is_struct(p.ty):
        return ["struct buffers are read-only; write the fields to separate `&mut [T]` buffers"]
    elem = T.rust_name(p.ty)
    form = f"gpu::TensorMut<{elem}>" if p.category in N.TENSOR_CATEGORIES else f"&mut [{elem}]"
    return [f"declare `{p.name}` as `{form}`{why}"]


_WRITES = (N.Store, N.AtomicAdd, N.Barrier, N.Reduce, N.Softmax)


def _has_effects(stmts: list[N.Stmt]) -> bool:
    """Whether statements write memory, synchronise, or assign a variable declared outside them."""
    declared = {s.name for s in N.walk_stmts(stmts) if isinstance(s, N.Let)}
    for s in N.walk_stmts(stmts):
        if isinstance(s, _WRITES):
            return True
        if isinstance(s, N.Assign):
            root = s.target
            while isinstance(root, (N.Field, N.Swizzle)):
                root = root.value
            if not (isinstance(root, N.Var) and root.name in declared):
                return True
    return False


def _named(node):
    return [c for c in node.children if c.is_named and c.type not in ("line_comment", "block_comment")]


class Context:
    """What a kernel's lowering needs from the file: source, structs, known functions."""

    def __init__(self, source: SourceText, structs: dict, fn_names: set[str],
                 type_kinds: Optional[dict[str, str]] = None):
        self.source = source
        self.structs = structs  # name -> N.StructDecl (valid #[goldy::gpu] structs)
        self.fn_names = fn_names
        # other type names the file declares -> "enum" | "struct" | "gpu_struct" | "trait" |
        # "union" | "type": for a precise message when a kernel names one
        self.type_kinds = type_kinds or {}


class KernelLowerer:
    def __init__(self, ctx: Context, fn_node, attr_node, doc: str, hints: dict[int, str]):
        self.ctx = ctx
        self.fn = fn_node
        self.attr = attr_node
        self.doc = doc
        self.hints = hints
        self.new_hints: dict[int, str] = {}
        self.diags: list[Diagnostic] = []
        self.scopes: list[dict[str, Binding]] = [{}]
        self.used_names: set[str] = set()
        self.suffixes: dict[str, int] = {}  # see fresh
        self.locals: dict[str, str] = {}
        self.params: list[N.Param] = []
        self.wgarrays: list[N.WorkgroupArray] = []
        self.structs_used: list[str] = []
        self.builtins: set[str] = set()
        self.loop_depth = 0
        self.pre: list[N.Stmt] = []  # statements hoisted out of the expression being lowered
        self.tmp_counter = 0
        self.name = _text(fn_node.child_by_field_name("name"))
        self.wg_size = (64, 1, 1)
        self.top_level = True
        self.returns_value = False  # `-> T` reported: a tail value needs no second error
        self.effect_root: Optional[tuple[int, int]] = None  # see set_root
        self.depth = 0  # nesting of expressions and blocks being lowered, see enter
        self.deferred: list[Binding] = []  # `let x: T;` bindings, see check_init

    # ------------------------------------------------------------ diagnostics

    def span(self, node) -> N.Span:
        return self.ctx.source.node_span(node)

    def error(self, code: str, message: str, node, label: str = "", help: Optional[list[str]] = None,
              extra: Optional[list[Label]] = None, notes: Optional[list[str]] = None) -> None:
        labels = [Label(self.span(node) if not isinstance(node, N.Span) else node, label)]
        labels += extra or []
        self.diags.append(Diagnostic(code, message, self.ctx.source.filename, labels,
                                     list(help or []), list(notes or [])))
        if len(self.diags) >= MAX_KERNEL_ERRORS:  # bounded work and output for hopeless input
            self.diags[-1].notes.append(f"stopped after {MAX_KERNEL_ERRORS} errors in kernel `{self.name}`")
            raise Abort()

    def mismatch(self, node, expected: str, found: str, help: Optional[list[str]] = None) -> None:
        self.error("G0019", "mismatched types", node,
                   f"expected `{T.rust_name(expected)}`, found `{T.rust_name(found)}`", help)

    # ------------------------------------------------------------ kernel

    def lower(self) -> Optional[N.Kernel]:
        body: list[N.Stmt] = []
        try:
            self.wg_size = self.parse_attribute(self.attr)
            self.check_signature()
            params = self.fn.child_by_field_name("parameters")
            if params is not None:
                self.lower_params(params)
            body_node = self.fn.child_by_field_name("body")
            if body_node is not None:
                body = self.lower_block(body_node, top=True)
        except Abort:
            pass
        if self.diags:
            return None
        builtins = [b for b in N.BUILTINS if b in self.builtins]
        structs = [self.ctx.structs[s] for s in self.structs_used]
        return N.Kernel(self.name, self.wg_size, self.params, self.wgarrays, structs, body,
                        builtins, self.ctx.source.filename, self.doc, self.span(self.fn),
                        dict(self.locals))

    def parse_attribute(self, attr) -> tuple[int, int, int]:
        inner = next((c for c in attr.children if c.type == "attribute"), None)
        args = inner.child_by_field_name("arguments") if inner is not None else None
        if args is None:
            return (64, 1, 1)
        toks = [c for c in args.children if c.type not in ("(", ")")]
        ok = (len(toks) == 3 and toks[0].type == "identifier" and _text(toks[0]) == "workgroup_size"
              and toks[1].type == "=" and toks[2].type == "token_tree")
        dims: list[int] = []
        if ok:
            inner = [c for c in toks[2].children if c.type not in ("[", "]", ",")]
            for c in inner:
                if c.type != "integer_literal":
                    ok = False
                    break
                v = const_int(c)
                if v is None:
                    ok = False
                    break
                dims.append(v)
            ok = ok and len(dims) == 3 and all(d >= 1 for d in dims)
        if not ok:
            self.error("G0002", "invalid kernel attribute arguments", args,
                       "expected `(workgroup_size = [x, y, z])`",
                       ["write `#[goldy::compute(workgroup_size = [256, 1, 1])]` with three positive integers"])
            return (64, 1, 1)
        if dims[0] * dims[1] * dims[2] > 1024:
            self.error("G0002", "workgroup size is too large", args,
                       f"{dims[0]} * {dims[1]} * {dims[2]} = {dims[0] * dims[1] * dims[2]} threads",
                       ["a workgroup may hold at most 1024 threads on every backend"])
        return (dims[0], dims[1], dims[2])

    def check_signature(self) -> None:
        for c in self.fn.children:
            if c.type == "function_modifiers":
                for m in c.children:
                    t = _text(m)
                    if t == "async":
                        self.error("G0013", "kernels cannot be `async`", m, "`async` here")
                    elif t == "unsafe":
                        self.error("G0014", "kernels cannot be `unsafe`", m, "`unsafe` here",
                                   ["the dialect has no raw pointers, so kernels need no `unsafe`"])
                    elif t in ("const", "extern"):
                        self.error("G0028", f"`{t}` kernels are not supported", m, f"`{t}` here")
        tp = self.fn.child_by_field_name("type_parameters")
        if tp is not None:
            self.error("G0012", "kernels cannot be generic", tp, "generic parameters here",
                       ["write one kernel per element type"])
        for c in self.fn.children:
            if c.type == "where_clause":
                self.error("G0012", "kernels cannot have `where` clauses", c, "`where` clause here")
        rt = self.fn.child_by_field_name("return_type")
        if rt is not None and _text(rt) != "()":
            self.returns_value = True
            self.error("G0039", "kernel functions must not return a value", rt,
                       f"returns `{_text(rt)}`",
                       ["write results into a `&mut [T]` or `gpu::Scattered<T>` parameter"])

    # ------------------------------------------------------------ parameters

    def lower_params(self, params) -> None:
        pending_attrs = []
        seen: dict[str, N.Span] = {}
        for c in params.children:
            if c.type == "attribute_item":
                pending_attrs.append(c)
                continue
            if c.type == "self_parameter":
                self.error("G0003", "kernels cannot take `self`", c, "`self` here")
                continue
            if c.type != "parameter":
                continue
            attrs, pending_attrs = pending_attrs, []
            pat = c.child_by_field_name("pattern")
            ty = c.child_by_field_name("type")
            if pat is None or pat.type != "identifier":
                self.error("G0031", "kernel parameters must be plain names", pat or c, "pattern here")
                continue
            name = _ident(pat)
            if name in seen:
                self.error("G0036", f"parameter `{name}` is declared twice", pat, "second declaration",
                           extra=[Label(seen[name], "first declared here", primary=False)])
                continue
            seen[name] = self.span(pat)
            mut = any(ch.type == "mutable_specifier" for ch in c.children)
            before = len(self.diags)
            param = self.param_type(ty, name)
            if param is None:
                if len(self.diags) == before:  # never drop a parameter without saying why
                    self.error("G0003", f"unsupported parameter type `{_text(ty) if ty else '?'}`",
                               ty or c, "not a kernel parameter type")
                self.scopes[0][name] = Binding(name, "", False, "poisoned")
                continue
            category, elem = param
            shape = None
            for a in attrs:
                shape = self.tensor_attribute(a, category, name, shape)
            if category in N.TENSOR_CATEGORIES and shape is not None and len(shape) > 4:
                pass  # already reported
            p = N.Param(name, category, elem, self.span(pat), shape)
            self.params.append(p)
            self.used_names.add(name)
            if category == "scalar":
                b = Binding(name, elem, False, "param", decl_span=self.span(pat))
                if mut:  # `mut a: f32` is a local copy the body may change
                    local = self.fresh(name)
                    self.locals[local] = elem
                    b = Binding(local, elem, True, "local", decl_span=self.span(pat))
                    self.pre.append(N.Let(self.span(pat), local, elem,
                                          N.Var(elem, self.span(pat), name), True))
            elif category == "uniform":
                b = Binding(name, elem, False, "uniform", decl_span=self.span(pat))
            else:
                b = Binding(name, elem, False, "resource", decl_span=self.span(pat))
            self.scopes[0][name] = b

    def tensor_attribute(self, attr, category: str, pname: str, shape):
        a = attr.child(2) if attr.child_count > 2 else None
        a = next((x for x in attr.children if x.type == "attribute"), None)
        if a is None:
            return shape
        path = a.child(0)
        if _text(path) != "tensor":
            self.error("G0002", f"unknown parameter attribute `{_text(path)}`", attr, "not understood",
                       ["only `#[tensor(shape = [...])]` is accepted on kernel parameters"])
            return shape
        if category not in N.TENSOR_CATEGORIES:
            self.error("G0026", f"`#[tensor]` contract on non-tensor parameter `{pname}`", attr,
                       "shape contracts need a tensor view",
                       ["declare the parameter as `gpu::Tensor<T>`, `gpu::TensorMut<T>` or `gpu::TensorWrite<T>`"])
            return shape
        args = a.child_by_field_name("arguments")
        toks = [c for c in args.children if c.type not in ("(", ")")] if args else []
        if not (len(toks) == 3 and _text(toks[0]) == "shape" and toks[1].type == "=" and toks[2].type == "token_tree"):
            self.error("G0030", "invalid tensor shape contract", args or attr,
                       "expected `shape = [...]`", ["write `#[tensor(shape = [rows, _, 4])]`"])
            return shape
        dims: list = []
        for c in toks[2].children:
            if c.type in ("[", "]", ","):
                continue
            t = _text(c)
            if t == "_":
                dims.append("_")
            elif c.type == "integer_literal":
                try:
                    v = int(t.replace("_", ""), 0)
                    if v < 0:
                        raise ValueError
                    dims.append(v)
                except ValueError:
                    self.error("G0030", "invalid extent in tensor shape contract", c, "not a valid extent")
                    return shape
            elif c.type == "identifier":
                dims.append(t)
            else:
                self.error("G0030", "invalid extent in tensor shape contract", c,
                           "expected `_`, an integer or a name")
                return shape
        if not dims or len(dims) > 4:
            self.error("G0030", f"tensor shape contract has rank {len(dims)}", toks[2],
                       "rank must be 1 to 4")
            return shape
        return dims

    def param_type(self, ty, pname: str) -> Optional[tuple[str, str]]:
        if ty is None:
            return None
        if ty.type == "primitive_type":
            s = self.scalar_type(ty)
            return ("scalar", s) if s else None
        if ty.type == "reference_type":
            mut = any(c.type == "mutable_specifier" for c in ty.children)
            inner = ty.child_by_field_name("type")
            if inner is not None and inner.type == "array_type" and inner.child_by_field_name("length") is None:
                elem = self.element_type(inner.child_by_field_name("element"), allow_struct=not mut)
                return ("read_write" if mut else "read", elem) if elem else None
            if inner is not None and inner.type in ("dynamic_type", "abstract_type"):
                return self.reject_type(inner)
            self.error("G0010", "references are only allowed as slice parameters", ty,
                       f"`{_text(ty)}` is not `&[T]` or `&mut [T]`",
                       ["take a slice `&[T]` / `&mut [T]`, or the value itself for scalars"])
            return None
        if ty.type == "generic_type":
            base = ty.child_by_field_name("type")
            name = self.gpu_type_name(base)
            args = ty.child_by_field_name("type_arguments")
            targs = _named(args) if args is not None else []
            if name in D.RESOURCE_TYPES:
                cat = D.RESOURCE_TYPES[name]
                if len(targs) != 1:
                    self.error("G0003", f"`{name}` takes one type argument", args or ty, "here")
                    return None
                if cat == "uniform":
                    s = self.struct_type(targs[0])
                    return (cat, s) if s else None
                if cat == "image":
                    e = self.value_type(targs[0])
                    if e is None:
                        return None
                    if e not in ("f32", "u32", "i32", "vec4<f32>", "vec4<u32>", "vec4<i32>"):
                        self.error("G0003", "unsupported storage image element", targs[0],
                                   f"`{_text(targs[0])}`",
                                   ["use `f32`, `u32`, `i32` or a four-lane vector such as `gpu::float4`"])
                        return None
                    return (cat, e)
                elem = self.element_type(targs[0], allow_struct=(cat == "read"))
                return (cat, elem) if elem else None
            if name in D.ALLOCATING_TYPES:
                self.error("G0009", f"`{name}` allocates and cannot be a kernel parameter", ty,
                           "heap type", ["pass a slice `&[T]` or `&mut [T]` instead"])
                return None
            self.error("G0003", f"unsupported parameter type `{_text(ty)}`", ty, "not a kernel parameter type",
                       ["kernel parameters are slices, `gpu::` resources or `u32`/`i32`/`f32`/`bool` scalars"])
            return None
        return self.reject_type(ty, parameter=True)

    def gpu_type_name(self, node) -> Optional[str]:
        if node is None:
            return None
        if node.type == "type_identifier":
            return _text(node)
        if node.type == "scoped_type_identifier":
            path = node.child_by_field_name("path")
            pt = tuple(_text(path).replace(" ", "").split("::")) if path else ()
            if pt in D.GPU_PATHS:
                return _text(node.child_by_field_name("name"))
            return _text(node)
        return None

    def scalar_type(self, node) -> Optional[str]:
        t = _text(node)
        if t in D.SCALAR_TYPES:
            return D.SCALAR_TYPES[t]
        if t in D.POINTER_SIZED:
            self.error("G0005", f"`{t}` is not supported", node, "pointer-sized integer",
                       ["use `u32` for indices and lengths (`i32` for signed values); `.len()` and `global_id()` are `u32`"])
            return None
        if t in ("()",):
            self.error("G0004", "the unit type `()` is not a value type here", node, "unit type")
            return None
        self.error("G0004", f"unsupported type `{t}`", node, "no lowering for this type",
                   ["the dialect's scalar types are `u32`, `i32`, `f32` and `bool`"])
        return None

    def element_type(self, node, allow_struct: bool) -> Optional[str]:
        """Element of a buffer or tensor: a scalar, or a #[goldy::gpu] struct when allowed."""
        if node is None:
            return None
        if node.type == "primitive_type":
            return self.scalar_type(node)
        if node.type == "type_identifier" and _text(node) in self.ctx.structs:
            if not allow_struct:
                self.error("G0003", f"struct elements are only supported in read-only slices", node,
                           f"`{_text(node)}` elements here",
                           [f"take `&[{_text(node)}]`, or write the fields to separate `&mut [T]` buffers"])
                return None
            return self.struct_type(node)
        t = self.value_type(node)
        if t is None:
            return None
        self.error("G0003", f"unsupported buffer element type `{_text(node)}`", node,
                   "not a buffer element", ["buffer elements are `u32`, `i32`, `f32`, `bool` or a `#[goldy::gpu]` struct"])
        return None

    def struct_type(self, node) -> Optional[str]:
        name = _text(node)
        if node.type == "type_identifier" and name in self.ctx.structs:
            if name not in self.structs_used:
                self.structs_used.append(name)
            return T.struct(name)
        if name in D.SCALAR_TYPES or self.gpu_type_name(node) in D.VECTOR_TYPES:
            self.error("G0003", "`gpu::Uniform` holds a `#[goldy::gpu]` struct", node, f"`{name}` is not a struct",
                       [f"pass a scalar as a plain parameter (`x: {name}`)" if name in D.SCALAR_TYPES else
                        "wrap the vector in a `#[goldy::gpu]` struct"])
            return None
        return self.unknown_type(node)

    def unknown_type(self, node) -> None:
        """A type name that is not part of the dialect: say what it is, if the file says."""
        name = _text(node)
        kind = self.ctx.type_kinds.get(name)
        if kind == "enum":
            self.error("G0004", f"enums are not supported", node, f"`{name}` is an enum",
                       ["represent the variants as `u32` constants"])
        elif kind == "struct":
            self.error("G0004", f"struct `{name}` is not a `#[goldy::gpu]` struct", node, "host struct",
                       [f"add `#[goldy::gpu]` above `struct {name}` to use it in kernels"])
        elif kind == "gpu_struct":
            self.error("G0004", f"struct `{name}` cannot be used: its declaration has errors", node,
                       "see the error at its declaration")
        elif kind == "trait":
            self.error("G0011", "traits and `dyn` are not supported", node, f"`{name}` is a trait",
                       ["use a concrete type"])
        elif kind is not None:
            self.error("G0004", f"unsupported type `{name}`", node, f"`{name}` is a {kind}")
        else:
            self.error("G0004", f"cannot find type `{name}` in this scope", node, "not a dialect type",
                       ["the dialect's types are `u32`, `i32`, `f32`, `bool`, vectors (`gpu::float4`, "
                        "`[f32; 4]`, ...), `[[f32; N]; N]` matrices and `#[goldy::gpu]` structs"])
        return None

    def value_type(self, node) -> Optional[str]:
        """A type written in a `let`, a cast or a struct field."""
        if node is None:
            return None
        if node.type == "primitive_type":
            return self.scalar_type(node)
        if node.type == "array_type":
            length = node.child_by_field_name("length")
            elem = node.child_by_field_name("element")
            if length is not None and elem is not None and length.type == "integer_literal":
                n = _text(length)
                if elem.type == "primitive_type" and n in ("2", "3", "4") and _text(elem) in ("f32", "u32", "i32"):
                    return T.vec(_text(elem), int(n))
                if elem.type == "array_type":
                    inner = elem.child_by_field_name("length")
                    ie = elem.child_by_field_name("element")
                    if (inner is not None and ie is not None and _text(ie) == "f32"
                            and _text(inner) == n and n in ("2", "3", "4")):
                        return T.mat(int(n))
            self.error("G0004", f"unsupported array type `{_text(node)}`", node,
                       "only `[T; 2..4]` vectors and square `f32` matrices",
                       ["use a `workgroup_array::<T, N>()` for scratch memory"])
            return None
        if node.type in ("type_identifier", "scoped_type_identifier"):
            name = self.gpu_type_name(node)
            if name in D.VECTOR_TYPES:
                return D.VECTOR_TYPES[name]
            if node.type == "type_identifier" and name in self.ctx.structs:
                return self.struct_type(node)
            if name in D.ALLOCATING_TYPES:
                self.error("G0009", f"`{name}` allocates on the heap", node, "heap type",
                           ["kernels cannot allocate; use a `workgroup_array::<T, N>()` or a buffer parameter"])
                return None
            return self.unknown_type(node)
        return self.reject_type(node)

    def reject_type(self, node, parameter: bool = False) -> None:
        t = node.type
        if t == "tuple_type":
            self.error("G0004", "tuples are not supported", node, "tuple type",
                       ["use separate parameters or a `#[goldy::gpu]` struct"])
        elif t == "reference_type" and node.child_by_field_name("type") is not None \
                and node.child_by_field_name("type").type in ("dynamic_type", "abstract_type"):
            self.reject_type(node.child_by_field_name("type"))
        elif t == "reference_type":
            self.error("G0010", "references are only allowed as slice parameters", node, "reference type",
                       ["use the value itself; only kernel parameters may be slices `&[T]` / `&mut [T]`"])
        elif t in ("dynamic_type", "abstract_type", "bounded_type"):
            self.error("G0011", "traits and `dyn` are not supported", node, "trait type",
                       ["use a concrete type"])
        elif t == "generic_type":
            base = node.child_by_field_name("type")
            name = _text(base) if base is not None else _text(node)
            if name in D.ALLOCATING_TYPES:
                self.error("G0009", f"`{name}` allocates on the heap", node, "heap type",
                           ["kernels cannot allocate; use a buffer parameter or a workgroup array"])
            else:
                self.error("G0012", "generic types are not supported", node, "generic type")
        elif t == "pointer_type":
            self.error("G0010", "raw pointers are not supported", node, "pointer type")
        elif t in ("type_identifier", "scoped_type_identifier") and parameter:
            name = self.gpu_type_name(node)
            if name in self.ctx.structs:
                self.error("G0003", f"struct parameter `{name}` must be passed as a uniform", node,
                           "struct by value", [f"declare it as `gpu::Uniform<{name}>`, or read `&[{name}]`"])
            elif name in D.VECTOR_TYPES:
                self.error("G0003", f"vector parameter `{_text(node)}` is not supported", node,
                           "vector by value", ["pass the lanes as scalars, or a `gpu::Uniform<S>` struct"])
            else:
                self.value_type(node)
        elif t == "array_type" and parameter:
            self.error("G0003", f"unsupported parameter type `{_text(node)}`", node,
                       "arrays are not kernel parameters", ["take a slice `&[T]` instead"])
        elif t == "function_type":
            self.error("G0006", "function types are not supported", node, "function type")
        else:
            self.error("G0004", f"unsupported type `{_text(node)}`", node, "no lowering for this type")
        return None

    # ------------------------------------------------------------ scopes

    def fresh(self, name: str) -> str:
        """A local name unique in the kernel (`x`, `x_1`, ...); `_` becomes `_discard`, a
        name every target accepts."""
        if name == "_":
            name = "_discard"
        if name not in self.used_names:
            self.used_names.add(name)
            return name
        i = self.suffixes.get(name, 1)  # where the last search ended: linear, not quadratic
        while f"{name}_{i}" in self.used_names:
            i += 1
        self.suffixes[name] = i + 1
        self.used_names.add(f"{name}_{i}")
        return f"{name}_{i}"

    def temp(self, ty: str) -> str:
        """A fresh local for a value computed by hoisted statements."""
        name = self.fresh(f"_t{self.tmp_counter}")
        self.tmp_counter += 1
        self.locals[name] = ty
        return name

    def lookup(self, name: str) -> Optional[Binding]:
        name = name.removeprefix("r#")
        for s in reversed(self.scopes):
            if name in s:
                return s[name]
        return None

    def resolve(self, node, name: str) -> Optional[Binding]:
        """The binding of `name`, or None after reporting it undeclared. A poisoned binding
        (its declaration failed, already reported) also gives None, quietly."""
        b = self.lookup(name)
        if b is None:
            self.undeclared(node, name)
            return None
        return None if b.kind == "poisoned" else b

    def all_names(self) -> list[str]:
        return [n for s in self.scopes for n in s]

    def undeclared(self, node, name: str) -> None:
        close = difflib.get_close_matches(name, self.all_names(), n=1)
        help = [f"a binding with a similar name exists: `{close[0]}`"] if close else []
        self.error("G0020", f"cannot find value `{name}` in this scope", node, "not found in this scope", help)

    def hint(self, e: Optional[N.Expr], ty: str) -> None:
        """`e` was wanted as integer type `ty`: every flexible-literal local it is built
        from (`let a = 0;`) should have had that type. Remember it for the next pass."""
        if e is None or e.ty == ty or not (T.is_int(e.ty) and T.is_int(ty)):
            return
        if isinstance(e, N.Var):
            b = self.binding_by_ir_name(e.name)
            if b is not None and b.flexible and b.decl not in self.new_hints:
                self.new_hints[b.decl] = ty
        elif isinstance(e, N.Binary) and e.op not in N.COMPARISONS and e.op not in N.LOGICAL:
            self.hint(e.lhs, ty)
            if e.op not in ("shl", "shr"):
                self.hint(e.rhs, ty)
        elif isinstance(e, N.Unary):
            self.hint(e.operand, ty)
        elif isinstance(e, N.Select):
            self.hint(e.if_true, ty)
            self.hint(e.if_false, ty)

    def binding_by_ir_name(self, ir_name: str) -> Optional[Binding]:
        for s in reversed(self.scopes):
            for b in s.values():
                if b.ir_name == ir_name:
                    return b
        return None

    # ------------------------------------------------------------ statements

    def lower_block(self, block, top: bool = False) -> list[N.Stmt]:
        stmts, tail = self.lower_block_items(block, top)
        if tail is not None:
            stmts += self.lower_tail(tail, top)
        self.close_scope()
        return stmts

    TAIL_STATEMENTS = ("if_expression", "while_expression", "loop_expression", "for_expression",
                       "block", "unsafe_block", "assignment_expression", "compound_assignment_expr",
                       "return_expression", "break_expression", "continue_expression", "ERROR")

    def lower_tail(self, node, top: bool) -> list[N.Stmt]:
        """A block's final expression without `;`. In a block of type `()` it must not have
        a value, as in Rust (`{ x + 1 }` there is an error, `{ x + 1; }` is not)."""
        if node.type in self.TAIL_STATEMENTS or (
                node.type == "call_expression"
                and self.callee_name(node.child_by_field_name("function"))[0] in D.STATEMENT_BUILTINS):
            return self.lower_statement(node, False)
        self.set_root(node)
        e = self.lower_expr(node, None)
        if e is not None and top:
            if not self.returns_value:
                self.error("G0039", "kernels cannot return a value", node, "value returned here",
                           ["write results into an output buffer, or end the expression with `;`"])
        elif e is not None:
            self.error("G0019", "mismatched types", node, f"expected `()`, found `{T.rust_name(e.ty)}`",
                       ["this block is a statement; end the expression with `;`"])
        return self.with_pre([])

    STATEMENT_NODES = ("expression_statement", "let_declaration", "const_item", "empty_statement",
                       "attribute_item", "inner_attribute_item", "macro_invocation")

    def enter(self, node) -> None:
        """One nesting level deeper; past MAX_DEPTH, report and abandon the kernel."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.error("G0040", "nesting is too deep", self.ctx.source.span(node.start_byte, node.start_byte + 1),
                       f"more than {MAX_DEPTH} levels deep",
                       ["split the expression into several `let` bindings, or the blocks into fewer levels"])
            raise Abort()

    def lower_block_items(self, block, top: bool = False):
        """Statements of a block (in a new scope the caller closes), and its tail
        expression node (a final expression without `;`), if any."""
        self.enter(block)
        self.scopes.append({})
        out: list[N.Stmt] = []
        if top and self.pre:
            out += self.pre
            self.pre = []
        items = _named(block)
        tail = None
        if items and items[-1].type not in self.STATEMENT_NODES and not items[-1].type.endswith("_item") \
                and items[-1].type != "use_declaration":
            tail = items[-1]
            items = items[:-1]
        elif items and items[-1].type == "expression_statement" and items[-1].child_count == 1:
            # `{ ...; if c { a } else { b } }`: tree-sitter makes the final block-like
            # expression a statement, but without a `;` it is the block's value in Rust
            tail = items[-1].child(0)
            items = items[:-1]
        for it in items:
            out += self.lower_statement(it, top)
        return out, tail

    def close_scope(self) -> None:
        self.scopes.pop()
        self.depth -= 1

    def lower_statement(self, node, top: bool) -> list[N.Stmt]:
        self.top_level = top
        t = node.type
        if t == "expression_statement":
            inner = _named(node)
            if not inner:
                return []
            return self.lower_expression_statement(inner[0])
        if t == "let_declaration":
            return self.with_pre(self.lower_let(node, top))
        if t == "const_item":
            return self.with_pre(self.lower_const(node))
        if t == "empty_statement":
            return []
        if t in ("function_item",):
            self.error("G0015", "nested functions are not supported", node, "function defined here",
                       ["write the helper's body inline in the kernel"])
            return []
        if t in ("struct_item", "enum_item", "impl_item", "trait_item", "use_declaration",
                 "static_item", "mod_item", "type_item", "union_item", "macro_definition"):
            code = "G0011" if t in ("impl_item", "trait_item") else "G0028"
            self.error(code, f"items inside a kernel are not supported", node, "item declared here",
                       ["move it outside the kernel"])
            return []
        if t == "attribute_item":
            return []
        return self.lower_expression_statement(node)

    def with_pre(self, stmts: list[N.Stmt]) -> list[N.Stmt]:
        pre, self.pre = self.pre, []
        return pre + stmts

    def lower_expression_statement(self, e) -> list[N.Stmt]:
        t = e.type
        sp = self.span(e)
        if t == "assignment_expression":
            return self.with_pre(self.lower_assignment(e))
        if t == "compound_assignment_expr":
            return self.with_pre(self.lower_compound(e))
        if t == "if_expression":
            return self.lower_if_statement(e)
        if t == "while_expression":
            return self.lower_while(e)
        if t == "loop_expression":
            return [N.Loop(sp, self.lower_loop_body(e.child_by_field_name("body")))]
        if t == "for_expression":
            return self.lower_for(e)
        if t in ("break_expression", "continue_expression"):
            if any(c.is_named and c.type not in ("label",) for c in e.children):
                self.error("G0028", "`break` with a value is not supported", e, "value here")
                return []
            if any(c.type == "label" for c in e.children):
                self.error("G0028", "loop labels are not supported", e, "label here",
                           ["use a flag variable to leave outer loops"])
                return []
            if self.loop_depth == 0:
                kw = "break" if t == "break_expression" else "continue"
                self.error("G0032", f"`{kw}` outside of a loop", e, f"cannot `{kw}` outside of a loop")
                return []
            return [N.Break(sp) if t == "break_expression" else N.Continue(sp)]
        if t == "return_expression":
            if _named(e):
                self.error("G0039", "kernels cannot return a value", _named(e)[0], "value returned here",
                           ["write results into an output buffer and use a bare `return;`"])
                return []
            return [N.Return(sp)]
        if t == "block":
            return self.lower_block(e)
        if t == "unsafe_block":
            self.error("G0014", "`unsafe` blocks are not supported", e, "`unsafe` here",
                       ["the dialect has no raw pointers, so kernels need no `unsafe`"])
            return []
        if t == "call_expression":
            special = self.lower_statement_call(e, None)
            if special is not None:
                return self.with_pre(special)
        # an expression evaluated for nothing: check it, keep what its blocks do, drop the value
        self.set_root(e)
        self.lower_expr(e, None)
        return self.with_pre([])

    def callee_name(self, fnode) -> tuple[Optional[str], Optional[object]]:
        """Name of a builtin callee (`gpu::x`, `goldy::gpu::x`, bare `x`) and its turbofish node."""
        turbofish = None
        if fnode.type == "generic_function":
            turbofish = fnode.child_by_field_name("type_arguments")
            fnode = fnode.child_by_field_name("function")
        if fnode.type == "identifier":
            return _text(fnode), turbofish
        if fnode.type == "scoped_identifier":
            path = fnode.child_by_field_name("path")
            pt = tuple(_text(path).replace(" ", "").split("::")) if path is not None else ()
            if pt in D.GPU_PATHS:
                return _text(fnode.child_by_field_name("name")), turbofish
        return None, turbofish

    def lower_statement_call(self, call, target: Optional[tuple]) -> Optional[list[N.Stmt]]:
        """Builtins that are statements: barrier, collectives, atomics. `target` is
        (name_node, kind) for `let x = ...`/`x = ...`; returns None for ordinary calls."""
        name, turbofish = self.callee_name(call.child_by_field_name("function"))
        if name not in D.STATEMENT_BUILTINS or name == "workgroup_array":
            return None
        sp = self.span(call)
        args = _named(call.child_by_field_name("arguments"))
        if name == "workgroup_barrier":
            if target is not None:
                self.error("G0025", "`workgroup_barrier` returns nothing", call, "used as a value",
                           ["call it as a statement: `gpu::workgroup_barrier();`"])
                return []
            if args:
                self.error("G0029", "`workgroup_barrier` takes no arguments", call, "arguments given")
                return []
            return [N.Barrier(sp)]
        if name in ("workgroup_sum", "workgroup_max"):
            if target is None:
                self.error("G0025", f"the result of `{name}` must be bound", call, "result unused",
                           [f"write `let total = gpu::{name}::<N>(value, scratch);`"])
                return []
            if len(args) != 2:
                self.error("G0029", f"`{name}` takes 2 arguments (value, scratch)", call,
                           f"{_count(len(args), 'argument')} given")
                return []
            n = self.collective_size(name, turbofish, call)
            scratch = self.wgarray_arg(args[1], None)
            w = next((w for w in self.wgarrays if w.name == scratch), None)
            value = self.lower_expr(args[0], w.ty if w is not None else None)  # `sum(1, s)`: 1 is s's type
            if n is None or value is None or scratch is None:
                return []
            if value.ty not in T.NUMERIC:
                self.error("G0038", f"`{name}` combines scalars", args[0],
                           f"this is `{T.rust_name(value.ty)}`", ["pass a `u32`, `i32` or `f32`"])
                return []
            w = next(w for w in self.wgarrays if w.name == scratch)
            if w.ty != value.ty:
                self.error("G0038", "scratch array element type differs from the value", args[1],
                           f"`{w.name}` holds `{w.ty}`, the value is `{value.ty}`")
                return []
            if w.size < n:
                self.error("G0038", f"scratch array is smaller than the collective", args[1],
                           f"`{w.name}` has {w.size} elements, `{name}` needs {n}")
                return []
            target_name = self.collective_target(target, value.ty)
            if target_name is None:
                return []
            return target[2] + [N.Reduce(sp, target_name, name.removeprefix("workgroup_"), n, value, scratch)]
        if name == "workgroup_softmax_in_place":
            if target is not None:
                self.error("G0025", "`workgroup_softmax_in_place` returns nothing", call, "used as a value")
                return []
            if len(args) != 4:
                self.error("G0029", "`workgroup_softmax_in_place` takes 4 arguments (buf, base, count, scratch)",
                           call, f"{_count(len(args), 'argument')} given")
                return []
            n = self.collective_size(name, turbofish, call)
            buf = self.resource_arg(args[0], writable=True, readable=True)
            base = self.lower_expr(args[1], "u32")
            count = self.lower_expr(args[2], "u32")
            scratch = self.wgarray_arg(args[3], "f32")
            if None in (n, buf, base, count, scratch):
                return []
            p = self.kernel_param(buf)
            if p is not None and p.ty != "f32":
                self.error("G0038", "softmax needs an `f32` buffer", args[0], f"`{buf}` holds `{p.ty}`")
                return []
            if not self.expect(args[1], base, "u32") or not self.expect(args[2], count, "u32"):
                return []
            w = next(w for w in self.wgarrays if w.name == scratch)
            if w.size < n:
                self.error("G0038", "scratch array is smaller than the collective", args[3],
                           f"`{w.name}` has {w.size} elements, the collective needs {n}")
                return []
            return [N.Softmax(sp, n, buf, base, count, scratch)]
        if name == "atomic_add":
            if len(args) != 3:
                self.error("G0029", "`atomic_add` takes 3 arguments (buffer, index, value)", call,
                           f"{_count(len(args), 'argument')} given")
                return []
            buf = self.resource_arg(args[0], writable=True, readable=True, buffers_only=True)
            if buf is None:
                return []
            p = self.kernel_param(buf)
            assert p is not None
            if p.ty not in ("u32", "i32"):
                self.error("G0038", "`atomic_add` needs a `u32` or `i32` buffer", args[0],
                           f"`{buf}` holds `{T.rust_name(p.ty)}`")
                return []
            index = self.lower_index(args[1])
            value = self.lower_expr(args[2], p.ty)
            if index is None or value is None or not self.expect(args[2], value, p.ty):
                return []
            tname = None
            pre: list[N.Stmt] = []
            if target is not None:
                tname = self.collective_target(target, p.ty)
                if tname is None:
                    return []
                pre = target[2]
            return pre + [N.AtomicAdd(sp, tname, buf, index, value)]
        return None

    def collective_target(self, target, ty: str) -> Optional[str]:
        node, kind, _pre, declared = target
        if kind == "let":
            return declared(ty)
        name = _text(node)
        b = self.resolve(node, name)
        if b is None or not self.assignable(node, name, b):
            return None
        if b.ty != ty:
            self.hint(N.Var(b.ty, self.span(node), b.ir_name), ty)
            self.mismatch(node, b.ty, ty)
            return None
        b.init = "yes"
        return b.ir_name

    def collective_size(self, name: str, turbofish, call) -> Optional[int]:
        if turbofish is None:
            n = self.wg_size[0]
            where = call
        else:
            targs = _named(turbofish)
            if len(targs) != 1 or targs[0].type != "integer_literal":
                self.error("G0038", f"`{name}` takes one size argument `::<N>`", turbofish,
                           "expected an integer")
                return None
            n = const_int(targs[0])
            if n is None:
                self.error("G0033", "invalid integer literal", targs[0], "not an integer")
                return None
            where = targs[0]
        if n <= 0 or n & (n - 1):
            self.error("G0024", f"collective size {n} is not a power of two", where,
                       "must be a power of two", ["use 32, 64, 128, 256, 512 or 1024"])
            return None
        if self.wg_size != (n, 1, 1):
            self.error("G0038", f"`{name}::<{n}>` needs workgroup size [{n}, 1, 1]", where,
                       f"the kernel's workgroup size is {list(self.wg_size)}",
                       [f"declare `#[goldy::compute(workgroup_size = [{n}, 1, 1])]`"])
            return None
        return n

    def wgarray_arg(self, node, elem: Optional[str]) -> Optional[str]:
        if node.type != "identifier":
            self.error("G0038", "expected a workgroup array name", node, "not a workgroup array")
            return None
        b = self.resolve(node, _text(node))
        if b is None:
            return None
        if b.kind != "wgarray":
            self.error("G0038", f"`{_text(node)}` is not a workgroup array", node, "expected a workgroup array",
                       ["declare scratch memory with `let scratch = gpu::workgroup_array::<f32, 256>();`"])
            return None
        return b.ir_name

    def resource_arg(self, node, writable: bool, readable: bool, buffers_only: bool = False) -> Optional[str]:
        inner = node
        if inner.type == "reference_expression":
            inner = inner.child_by_field_name("value")
        if inner is None or inner.type != "identifier":
            self.error("G0038", "expected a buffer parameter name", node, "not a buffer")
            return None
        name = _text(inner)
        b = self.resolve(inner, name)
        if b is None:
            return None
        p = self.kernel_param(b.ir_name) if b.kind == "resource" else None
        ok_cats = N.BUFFER_CATEGORIES if buffers_only else N.BUFFER_CATEGORIES + N.TENSOR_CATEGORIES
        if p is None or p.category not in ok_cats:
            self.error("G0038", f"`{name}` is not a buffer parameter", inner, "expected a buffer")
            return None
        if writable and p.category not in N.WRITABLE_CATEGORIES:
            self.error("G0022", f"cannot write to read-only `{name}`", inner, f"{_CATEGORY_WORDS[p.category]}",
                       _read_write_help(p))
            return None
        if readable and p.category not in N.READABLE_CATEGORIES:
            self.error("G0022", f"cannot read write-only `{name}`", inner, f"{_CATEGORY_WORDS[p.category]}",
                       _read_write_help(p, " to read it"))
            return None
        return p.name

    def kernel_param(self, name: str) -> Optional[N.Param]:
        for p in self.params:
            if p.name == name:
                return p
        return None

    def assignable(self, node, name: str, b: Binding) -> bool:
        """Whether `name = ...` may assign `b`: a mutable local, or an immutable `let x: T;`
        on its first assignment (not inside a loop that would repeat it)."""
        if b.kind == "local" and (b.mutable or (b.init == "no" and b.loop_depth == self.loop_depth)):
            return True
        self.immutable(node, name, b)
        return False

    def check_init(self, node, name: str, b: Binding) -> None:
        if b.init == "yes":
            return
        self.error("G0041", f"used binding `{name}` is {'possibly-' if b.init == 'maybe' else ''}uninitialized",
                   node, f"`{name}` used here but it {'may not be' if b.init == 'maybe' else 'is not'} initialized",
                   [f"give it a value where it is declared: `let mut {name}: {T.rust_name(b.ty)} = ...;`"],
                   [Label(b.decl_span, "binding declared here but left uninitialized", primary=False)]
                   if b.decl_span else [])
        b.init = "yes"  # one error per binding

    # Definite initialisation across branches: a snapshot of every deferred binding's state.
    def flow(self) -> dict[int, str]:
        return {id(b): b.init for b in self.deferred}

    def set_flow(self, state: Optional[dict[int, str]]) -> None:
        for b in self.deferred:
            b.init = "yes" if state is None else state.get(id(b), b.init)

    def join(self, *states: Optional[dict[int, str]]) -> Optional[dict[int, str]]:
        """State after paths that meet (None: a path that diverged with return/break/continue)."""
        live = [st for st in states if st is not None]
        if not live:
            return None
        return {k: live[0][k] if all(st.get(k) == live[0][k] for st in live) else "maybe" for k in live[0]}

    def immutable(self, node, name: str, b: Binding) -> None:
        if b.kind in ("param", "uniform"):
            self.error("G0021", f"cannot assign to immutable parameter `{name}`", node,
                       "cannot assign to this parameter",
                       [f"copy it into a local first: `let mut {name} = {name};`"])
        elif b.kind in ("resource", "wgarray"):
            self.error("G0022", f"cannot assign to `{name}` itself", node, "assign to an element instead",
                       [f"write `{name}[i] = value;`"])
        else:
            extra = [Label(b.decl_span, "first assignment / declaration here", primary=False)] if b.decl_span else []
            self.error("G0021", f"cannot assign twice to immutable variable `{name}`", node,
                       "cannot assign twice to immutable variable",
                       [f"make this binding mutable: `let mut {name}`"], extra)

    def lower_let(self, node, top: bool) -> list[N.Stmt]:
        sp = self.span(node)
        pat = node.child_by_field_name("pattern")
        tnode = node.child_by_field_name("type")
        vnode = node.child_by_field_name("value")
        mut = any(c.type == "mutable_specifier" for c in node.children)
        if node.child_by_field_name("alternative") is not None:
            self.error("G0031", "`let ... else` is not supported", node, "refutable pattern",
                       ["use `if` to test the value"])
            return []
        if pat is None:
            return []
        if pat.type == "mut_pattern":
            mut = True
            pat = _named(pat)[-1]
        if pat.type == "_":
            pat_name = None
        elif pat.type == "identifier":
            pat_name = _ident(pat)
        elif pat.type in ("tuple_pattern",):
            self.error("G0004", "tuples are not supported", pat, "tuple pattern",
                       ["bind each value with its own `let`"])
            return []
        else:
            self.error("G0031", "unsupported pattern", pat, "expected a name",
                       ["bind a single name: `let x = ...;`"])
            return []
        declared_ty = self.value_type(tnode) if tnode is not None else None
        if tnode is not None and declared_ty is None:
            return []
        decl = pat.start_byte

        def declare(ty: str, flexible: bool = False) -> str:
            ir = self.fresh(pat_name) if pat_name else self.fresh("_")
            self.locals[ir] = ty
            if pat_name:
                self.scopes[-1][pat_name] = Binding(ir, ty, mut, "local", decl, flexible, self.span(pat))
            return ir

        if vnode is not None and vnode.type == "call_expression":
            cname, tf = self.callee_name(vnode.child_by_field_name("function"))
            if cname == "workgroup_array":
                return self.lower_wgarray(node, pat, pat_name, tf, vnode, top)
            if cname in D.STATEMENT_BUILTINS:
                if declared_ty is not None:
                    def declare_typed(ty: str) -> Optional[str]:
                        if ty != declared_ty:
                            self.mismatch(tnode, declared_ty, ty)
                            return None
                        return declare(ty)
                    d = declare_typed
                else:
                    d = declare
                holder: list[N.Stmt] = []

                def declare_let(ty: str):
                    ir = d(ty)
                    if ir is not None:  # assigned by the collective/atomic just after
                        holder.append(N.Let(sp, ir, ty, None, True))
                    return ir
                res = self.lower_statement_call(vnode, (pat, "let", holder, declare_let))
                if res is not None:
                    return res
        if vnode is None:
            if declared_ty is None:
                self.error("G0019", "type annotations needed", pat, "declared without a type or value",
                           [f"give it a type: `let {_text(pat)}: f32;`"])
                return []
            ir = declare(declared_ty)
            b = self.scopes[-1].get(pat_name) if pat_name else None
            if b is not None:
                b.init, b.loop_depth = "no", self.loop_depth
                self.deferred.append(b)
            # mutable in the IR: targets assign it later (the importer enforces "once")
            return [N.Let(sp, ir, declared_ty, None, True)]
        expected = declared_ty
        flexible = False
        if expected is None and self.is_flexible_literal(vnode):
            flexible = True
            expected = self.hints.get(decl)
        self.set_root(vnode)
        value = self.lower_expr(vnode, expected)
        if value is None or (declared_ty is not None and not self.expect(vnode, value, declared_ty)):
            if pat_name:  # later uses stay quiet instead of cascading into more errors
                self.scopes[-1][pat_name] = Binding(pat_name, declared_ty or "", mut, "poisoned")
            return []
        if expected is not None and flexible:
            self.hint(value, expected)  # `let b = a + 1;` with `b` wanted as u32: so is `a`
        ir = declare(value.ty, flexible and declared_ty is None)
        return [N.Let(sp, ir, value.ty, value, mut)]

    def lower_const(self, node) -> list[N.Stmt]:
        name_node = node.child_by_field_name("name")
        tnode = node.child_by_field_name("type")
        vnode = node.child_by_field_name("value")
        ty = self.value_type(tnode)
        if ty is None or vnode is None:
            return []
        self.set_root(vnode)
        value = self.lower_expr(vnode, ty)
        if value is None or not self.expect(vnode, value, ty):
            return []
        name = _ident(name_node)
        ir = self.fresh(name)
        self.locals[ir] = ty
        self.scopes[-1][name] = Binding(ir, ty, False, "local", decl_span=self.span(name_node))
        return [N.Let(self.span(node), ir, ty, value, False)]

    def lower_wgarray(self, let_node, pat, pat_name, turbofish, call, top) -> list[N.Stmt]:
        if not top:
            self.error("G0023", "workgroup arrays must be declared at kernel top level", call,
                       "declared inside a nested block",
                       ["move this `let` to the top level of the kernel body, before any branch or loop"])
            return []
        if pat_name is None:
            self.error("G0031", "a workgroup array needs a name", pat, "name it")
            return []
        targs = _named(turbofish) if turbofish is not None else []
        if len(targs) != 2 or targs[1].type != "integer_literal":
            self.error("G0038", "`workgroup_array` takes `::<T, N>`", turbofish or call,
                       "expected an element type and a length",
                       ["write `gpu::workgroup_array::<f32, 256>()`"])
            return []
        elem = self.value_type(targs[0])
        if elem is None:
            return []
        if elem not in T.NUMERIC:
            self.error("G0038", "workgroup arrays hold `u32`, `i32` or `f32`", targs[0],
                       f"`{_text(targs[0])}` here")
            return []
        size = const_int(targs[1]) or 0
        if size <= 0 or size > 16384:
            self.error("G0038", "invalid workgroup array length", targs[1],
                       "must be between 1 and 16384 elements")
            return []
        if _named(call.child_by_field_name("arguments")):
            self.error("G0029", "`workgroup_array` takes no arguments", call, "arguments given")
            return []
        name = self.fresh(pat_name)
        self.wgarrays.append(N.WorkgroupArray(name, elem, size, self.span(let_node)))
        self.scopes[-1][pat_name] = Binding(name, elem, False, "wgarray", decl_span=self.span(pat))
        return []

    def lower_assignment(self, node) -> list[N.Stmt]:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        sp = self.span(node)
        if left.type == "identifier" and right.type == "call_expression":
            res = self.lower_statement_call(right, (left, "assign", [], None))
            if res is not None:
                return res
        target = self.lower_place(left)
        self.set_root(right)  # Rust evaluates the right side of `=` first
        if target is None:
            if right.type != "identifier":  # still check it, unless that only repeats the error
                self.lower_expr(right, None)
            return []
        if isinstance(target, tuple):  # (resource, index, elem_ty, node)
            res, index, elem, _ = target
            value = self.lower_expr(right, elem)
            if value is None or not self.expect(right, value, elem):
                return []
            return [N.Store(sp, res, index, value)]
        value = self.lower_expr(right, target.ty)
        if left.type == "identifier":
            b = self.lookup(_text(left))
            if b is not None:
                b.init = "yes"
        if value is None:
            return []
        self.hint(target, value.ty)
        if not self.expect(right, value, target.ty):
            return []
        return [N.Assign(sp, target, value)]

    def lower_compound(self, node) -> list[N.Stmt]:
        left = node.child_by_field_name("left")
        right = node.child_by_field_name("right")
        op_tok = _text(node.child_by_field_name("operator"))
        op = D.COMPOUND_OPERATORS.get(op_tok)
        sp = self.span(node)
        if op is None:
            self.error("G0028", f"unsupported operator `{op_tok}`", node, "not supported")
            return []
        target = self.lower_place(left, read_too=True)
        self.set_root(right)  # for scalars Rust evaluates the right side of `+=` first
        if target is None:
            self.lower_expr(right, None)
            return []
        if isinstance(target, tuple):
            res, index, elem, lnode = target
            current: N.Expr = N.Load(elem, self.span(left), res, index)
        else:
            current = target
        rhs = self.lower_expr(right, current.ty if op not in ("shl", "shr") else None)
        if rhs is None:
            return []
        value = self.binary_result(node, op, current, rhs, left, right)
        if value is None:
            return []
        if value.ty != current.ty:
            self.mismatch(right, current.ty, rhs.ty)
            return []
        if isinstance(target, tuple):
            return [N.Store(sp, target[0], target[1], value)]
        return [N.Assign(sp, target, value)]

    def lower_place(self, node, read_too: bool = False):
        """An assignable place: a mutable local (or a field/lane of one) -> Expr, or a
        resource element -> (resource, index, element type, node)."""
        if node.type == "identifier":
            name = _text(node)
            b = self.resolve(node, name)
            if b is None or not self.assignable(node, name, b):
                return None
            if read_too:
                self.check_init(node, name, b)
            return N.Var(b.ty, self.span(node), b.ir_name)
        if node.type == "index_expression":
            base, idx = _named(node)[0], _named(node)[1]
            if base.type != "identifier":
                self.error("G0035", "cannot assign through this index expression", base,
                           "expected a buffer or workgroup array name")
                return None
            name = _text(base)
            b = self.resolve(base, name)
            if b is None:
                return None
            if b.kind == "wgarray":
                index = self.lower_index(idx)
                return (b.ir_name, index, b.ty, node) if index is not None else None
            if b.kind != "resource":
                self.error("G0035", f"cannot index into `{name}`", base,
                           f"`{T.rust_name(b.ty)}` is not a buffer",
                           ["vector lanes are written with `.x`, `.y`, `.z`, `.w`"])
                return None
            p = self.kernel_param(b.ir_name)
            assert p is not None
            if p.category not in N.WRITABLE_CATEGORIES:
                self.error("G0022", f"cannot assign to `{name}[_]`, which is read-only", node,
                           f"`{name}` is a {_CATEGORY_WORDS[p.category]}", _read_write_help(p))
                return None
            if read_too and p.category not in N.READABLE_CATEGORIES:
                self.error("G0022", f"cannot read write-only `{name}`", node,
                           "compound assignment reads the old value", _read_write_help(p, " to read it"))
                return None
            index = self.lower_resource_index(p, idx)
            return (p.name, index, p.ty, node) if index is not None else None
        if node.type == "field_expression":
            root = node
            while root.type == "field_expression":
                root = root.child_by_field_name("value")
            if root.type == "index_expression":
                base = _named(root)[0]
                self.error("G0022", f"cannot assign to a field of `{_text(base)}[_]`", node,
                           "struct buffers are read-only", ["write the field to a separate `&mut [T]` buffer"])
                return None
            if root.type != "identifier":
                self.error("G0028", "unsupported assignment target", node, "cannot assign here")
                return None
            name = _text(root)
            b = self.resolve(root, name)
            if b is None:
                return None
            if b.kind != "local" or not b.mutable:
                self.immutable(root, name, b)
                return None
            e = self.lower_expr(node, None)
            if isinstance(e, N.Swizzle) and len(e.lanes) > 1:
                self.error("G0028", "cannot assign to several lanes at once", node,
                           "multi-lane swizzle", ["assign each lane: `v.x = ...; v.y = ...;`"])
                return None
            return e
        if node.type == "unary_expression" and _text(node).startswith("*"):
            self.error("G0010", "dereferencing is not supported", node, "dereference here")
            return None
        if node.type == "parenthesized_expression":
            return self.lower_place(_named(node)[0], read_too)
        self.error("G0028", "unsupported assignment target", node, "cannot assign to this expression")
        return None

    def lower_index(self, node) -> Optional[N.Expr]:
        e = self.lower_expr(node, "u32")
        if e is None:
            return None
        if e.ty != "u32":
            self.hint(e, "u32")
            help = ["indices are `u32`; convert with `as u32`"]
            self.error("G0019", "mismatched types", node,
                       f"expected `u32` index, found `{T.rust_name(e.ty)}`", help)
            return None
        return e

    def lower_resource_index(self, p: N.Param, node) -> Optional[N.Expr]:
        if p.category == "image":
            e = self.lower_expr(node, "vec2<u32>")
            if e is None:
                return None
            if e.ty != "vec2<u32>":
                self.error("G0019", "mismatched types", node,
                           f"expected `uint2` texel coordinate, found `{T.rust_name(e.ty)}`",
                           ["index images with `gpu::uint2(x, y)`"])
                return None
            return e
        return self.lower_index(node)

    def lower_if_statement(self, node) -> list[N.Stmt]:
        sp = self.span(node)
        cnode = node.child_by_field_name("condition")
        if cnode is not None and cnode.type == "let_condition":
            self.error("G0031", "`if let` is not supported", cnode, "pattern match",
                       ["test the value with a comparison"])
            return []
        self.set_root(cnode)
        cond = self.lower_expr(cnode, "bool")
        pre, self.pre = self.pre, []
        before = self.flow()
        then = self.lower_block(node.child_by_field_name("consequence"))
        after_then = None if _diverges(then) else self.flow()
        self.set_flow(before)
        els: list[N.Stmt] = []
        alt = node.child_by_field_name("alternative")
        if alt is not None:
            inner = _named(alt)[0]
            els = self.lower_if_statement(inner) if inner.type == "if_expression" else self.lower_block(inner)
        self.set_flow(self.join(after_then, None if _diverges(els) else self.flow()))
        if cond is None or not self.expect(cnode, cond, "bool"):
            return []
        return pre + [N.If(sp, cond, then, els)]

    def lower_while(self, node) -> list[N.Stmt]:
        sp = self.span(node)
        cnode = node.child_by_field_name("condition")
        if cnode is not None and cnode.type == "let_condition":
            self.error("G0031", "`while let` is not supported", cnode, "pattern match")
            return []
        self.set_root(cnode)
        cond = self.lower_expr(cnode, "bool")
        pre, self.pre = self.pre, []
        body = self.lower_loop_body(node.child_by_field_name("body"))
        if cond is None or not self.expect(cnode, cond, "bool"):
            return []
        if pre:  # the condition needed statements: evaluate them on every iteration
            neg = N.Unary("bool", cond.span, "not", cond)
            return [N.Loop(sp, pre + [N.If(sp, neg, [N.Break(sp)], [])] + body)]
        return [N.While(sp, cond, body)]

    def invariant(self, e: N.Expr) -> bool:
        """Whether `e` has the same value wherever it is evaluated in the kernel: no loads,
        no mutable locals."""
        for x in N.walk_expr(e):
            if isinstance(x, N.Load):
                return False
            if isinstance(x, N.Var):
                b = self.binding_by_ir_name(x.name)
                if b is None or b.mutable:
                    return False
        return True

    def lower_loop_body(self, block) -> list[N.Stmt]:
        """A loop body may run any number of times: what it assigns may still be unassigned
        after it (conservative for `loop`, which runs at least once)."""
        before = self.flow()
        self.loop_depth += 1
        body = self.lower_block(block)
        self.loop_depth -= 1
        self.set_flow(self.join(before, self.flow()))
        return body

    def lower_for(self, node) -> list[N.Stmt]:
        sp = self.span(node)
        pat = node.child_by_field_name("pattern")
        rng = node.child_by_field_name("value")
        ty = self.range_type(node, pat, rng)
        lo, hi, inclusive = ty[1:] if ty else (None, None, False)
        pre, self.pre = self.pre, []
        self.scopes.append({})
        name = self.fresh(_ident(pat) if pat is not None and pat.type == "identifier" else "_")
        if pat is not None and pat.type == "identifier":
            flexible = ty is not None and all(self.is_flexible_literal(x) for x in _named(rng))
            self.scopes[-1][_ident(pat)] = (
                Binding(name, lo.ty, False, "local", pat.start_byte, flexible, self.span(pat)) if ty
                else Binding(name, "", False, "poisoned"))  # still check the body
        body = self.lower_loop_body(node.child_by_field_name("body"))
        self.close_scope()
        if ty is None:
            return []
        self.locals[name] = lo.ty
        if not self.invariant(hi):  # Rust evaluates the bounds once, before the first iteration
            end = self.temp(lo.ty)
            pre.append(N.Let(hi.span, end, lo.ty, hi, False))
            hi = N.Var(lo.ty, hi.span, end)
        return pre + [N.For(sp, name, lo.ty, lo, hi, inclusive, body)]

    def range_type(self, node, pat, rng):
        """(type, start, end, inclusive) of a `for` loop's `a..b` / `a..=b`, or None (reported)."""
        negated_end = None
        if rng is not None and rng.type == "binary_expression" and _text(rng.child_by_field_name("operator")) == "-":
            left = rng.child_by_field_name("left")
            if left.type == "range_expression" and len(_named(left)) == 1:
                # tree-sitter reads `a..-b` as `(a..) - b`; Rust reads `a..(-b)`
                negated_end = _Region(rng.child_by_field_name("operator"), rng.child_by_field_name("right"))
                rng = left
        if rng is None or rng.type != "range_expression":
            self.error("G0027", "iterators are not supported", rng or node, "not a range",
                       ["loop over indices: `for i in 0..xs.len() { let x = xs[i]; ... }`"])
            return None
        parts = _named(rng)
        op = next((c for c in rng.children if not c.is_named), None)
        if negated_end is not None:
            parts.append(negated_end.end_node)
        if len(parts) != 2 or op is None or _text(op) not in ("..", "..="):
            self.error("G0028", "only bounded ranges `a..b` and `a..=b` are supported", rng,
                       "unbounded range", ["give both bounds: `for i in 0..n`"])
            return None
        if pat is None or pat.type not in ("identifier", "_"):
            self.error("G0031", "unsupported pattern", pat or node, "expected a loop variable name",
                       ["bind a single name: `for i in 0..n`"])
            return None
        lo_n, hi_n = parts

        def end(expected):
            if negated_end is None:
                return self.lower_expr(hi_n, expected)
            return self.lower_negation(negated_end, hi_n, expected)

        if self.is_flexible_literal(lo_n) and not self.is_flexible_literal(hi_n):
            hi = end(None)
            lo = self.lower_expr(lo_n, hi.ty if hi is not None else None)
        else:
            hint = self.hints.get(pat.start_byte) if self.is_flexible_literal(lo_n) else None
            lo = self.lower_expr(lo_n, hint)
            hi = end(lo.ty if lo is not None else None)
        if lo is None or hi is None:
            return None
        if lo.ty not in T.INTS:
            self.error("G0019", "mismatched types", lo_n,
                       f"expected an integer range, found `{T.rust_name(lo.ty)}`",
                       ["loop over `u32` or `i32` and convert inside the loop"])
            return None
        if hi.ty != lo.ty:
            self.hint(lo, hi.ty)
            self.hint(hi, lo.ty)
            self.mismatch(hi_n, lo.ty, hi.ty, [f"convert with `as {lo.ty}`"])
            return None
        return lo.ty, lo, hi, _text(op) == "..="

    # ------------------------------------------------------------ expressions

    def is_flexible_literal(self, node, depth: int = 0) -> bool:
        """An expression whose type Rust would infer from context (unsuffixed literals)."""
        if depth > MAX_DEPTH:
            return False  # lowering reports the nesting
        depth += 1
        t = node.type
        if t == "integer_literal":
            return split_int_literal(_text(node))[1] is None
        if t == "if_expression":  # `if c { 1 } else { 2 }`
            alt = node.child_by_field_name("alternative")
            arms = [node.child_by_field_name("consequence")] + (_named(alt)[:1] if alt is not None else [])
            return alt is not None and all(a is not None and self.is_flexible_literal(a, depth) for a in arms)
        if t == "block":
            items = _named(node)
            return bool(items) and len(items) == 1 and self.is_flexible_literal(items[0], depth)
        if t == "float_literal":
            return True
        if t == "parenthesized_expression":
            return all(self.is_flexible_literal(c, depth) for c in _named(node))
        if t == "unary_expression":
            return all(self.is_flexible_literal(c, depth) for c in _named(node))
        if t == "binary_expression":
            return (self.is_flexible_literal(node.child_by_field_name("left"), depth)
                    and self.is_flexible_literal(node.child_by_field_name("right"), depth))
        if t == "identifier":
            b = self.lookup(_text(node))
            return b is not None and b.flexible
        return False

    def expect(self, node, e: N.Expr, ty: str) -> bool:
        if e.ty == ty:
            return True
        self.hint(e, ty)
        help = None
        if T.is_scalar(ty) and T.is_scalar(e.ty) and "bool" not in (ty, e.ty):
            help = [f"convert with `as {ty}`"]
        self.mismatch(node, ty, e.ty, help)
        return False

    def lower_expr(self, node, expected: Optional[str]) -> Optional[N.Expr]:
        if node is None:
            return None
        self.enter(node)
        method = getattr(self, "expr_" + node.type, None)
        e = self.reject_expr(node) if method is None else method(node, expected)
        self.depth -= 1
        if e is None and not self.diags:  # a failure must never pass silently
            self.error("G0028", "internal error: expression could not be lowered", node,
                       "while lowering this", ["please report this with the kernel's source"])
        return e

    def reject_expr(self, node) -> None:
        t = node.type
        table = {
            "closure_expression": ("G0006", "closures are not supported", "closure",
                                   ["write the closure's body inline where it is used"]),
            "match_expression": ("G0008", "`match` is not supported", "`match` here",
                                 ["use `if` / `else if` chains"]),
            "reference_expression": ("G0010", "references are only allowed as resource parameters",
                                     "reference taken here", ["use the value directly"]),
            "async_block": ("G0013", "`async` is not supported", "`async` block", []),
            "await_expression": ("G0013", "`async` is not supported", "`.await` here", []),
            "unsafe_block": ("G0014", "`unsafe` blocks are not supported", "`unsafe` here",
                             ["the dialect has no raw pointers, so kernels need no `unsafe`"]),
            "try_expression": ("G0016", "the `?` operator is not supported", "`?` here",
                               ["kernels cannot fail; test values with `if`"]),
            "tuple_expression": ("G0004", "tuples are not supported", "tuple",
                                 ["use separate variables or a vector such as `gpu::float2(a, b)`"]),
            "array_expression": ("G0004", "array values are not supported", "array literal",
                                 ["use a vector constructor such as `gpu::float3(a, b, c)` or a workgroup array"]),
            "struct_expression": ("G0028", "struct literals are not supported", "struct literal",
                                  ["read structs from a `&[S]` buffer or a `gpu::Uniform<S>`"]),
            "range_expression": ("G0028", "ranges are only supported as `for` loop bounds", "range", []),
            "let_condition": ("G0031", "`if let` is not supported", "pattern match", []),
            "loop_expression": ("G0028", "`loop` cannot be used as a value", "loop here", []),
            "while_expression": ("G0028", "`while` cannot be used as a value", "loop here", []),
            "for_expression": ("G0028", "`for` cannot be used as a value", "loop here", []),
            "assignment_expression": ("G0028", "assignments cannot be used as values", "assignment here", []),
            "compound_assignment_expr": ("G0028", "assignments cannot be used as values", "assignment here", []),
            "return_expression": ("G0028", "`return` cannot be used as a value", "here", []),
            "break_expression": ("G0028", "`break` cannot be used as a value", "here", []),
            "continue_expression": ("G0028", "`continue` cannot be used as a value", "here", []),
            "char_literal": ("G0004", "`char` is not supported", "character literal", []),
            "string_literal": ("G0004", "strings are not supported", "string literal", []),
            "raw_string_literal": ("G0004", "strings are not supported", "string literal", []),
            "gen_block": ("G0028", "generators are not supported", "here", []),
            "yield_expression": ("G0028", "generators are not supported", "here", []),
        }
        if t == "macro_invocation":
            return self.reject_macro(node)
        if t == "ERROR" or node.is_missing:
            return None  # reported as a syntax error already
        if t in table:
            code, msg, label, help = table[t]
            self.error(code, msg, node, label, help)
        else:
            self.error("G0028", f"unsupported expression", node, f"`{t.replace('_', ' ')}` is not part of the dialect")
        return None

    def reject_macro(self, node) -> None:
        m = node.child_by_field_name("macro")
        name = _text(m) if m is not None else "?"
        short = name.split("::")[-1]
        if short in D.PANIC_MACROS:
            self.error("G0016", f"`{short}!` can panic, and kernels cannot panic", node, "panics here",
                       ["guard the work with `if` and skip it instead"])
        elif short == "vec":
            self.error("G0009", "`vec!` allocates on the heap", node, "allocation here",
                       ["use a `workgroup_array::<T, N>()` or a buffer parameter"])
        else:
            self.error("G0007", f"macros are not supported", node, f"`{short}!` invoked here",
                       ["kernels cannot print; write diagnostic values to an output buffer"]
                       if short in ("println", "print", "eprintln", "dbg", "format", "write") else [])
        return None

    def expr_parenthesized_expression(self, node, expected):
        inner = _named(node)
        return self.lower_expr(inner[0], expected) if inner else None

    def expr_integer_literal(self, node, expected, negated=None):
        """An integer literal; `negated` is the enclosing `-` node when folding `-lit`, so
        that `-2147483648` is in range as in Rust."""
        where = negated if negated is not None else node
        digits, suffix = split_int_literal(_text(node))
        if suffix in D.POINTER_SIZED:
            self.error("G0005", f"`{suffix}` is not supported", node, "pointer-sized literal",
                       ["use `u32` (the index type) or `i32`"])
            return None
        if suffix is not None and suffix not in ("u32", "i32", "f32"):
            self.error("G0004", f"unsupported type `{suffix}`", node, "literal of an unsupported type",
                       ["the dialect's scalar types are `u32`, `i32`, `f32` and `bool`"])
            return None
        v = parse_int_digits(digits)
        if v is None:
            self.error("G0033", "invalid integer literal", node, "cannot parse")
            return None
        ty = suffix
        if ty is None:
            if expected in ("u32", "i32"):
                ty = expected
            elif expected is not None and T.elem_of(expected) == "f32":
                self.error("G0019", "mismatched types", where, "expected `f32`, found integer",
                           [f"use a float literal: `{'-' if negated is not None else ''}{digits}.0`"])
                return None
            else:
                ty = "i32"
        if ty == "f32":
            f = D.f32_nearest(-v if negated is not None else v)
            if f is None:
                self.error("G0033", "literal out of range for `f32`", where, "rounds to infinity")
                return None
            return N.Const("f32", self.span(where), f)
        if negated is not None:
            if ty == "u32":
                self.error("G0019", "cannot apply unary operator `-` to type `u32`", where,
                           "cannot apply unary operator `-`", ["unsigned values cannot be negative; use `i32`"])
                return None
            v = -v
        return self.int_const(where, v, ty)

    def int_const(self, node, v: int, ty: str) -> Optional[N.Const]:
        lo, hi = T.INT_RANGES[ty]
        if not lo <= v <= hi:
            self.error("G0033", f"literal out of range for `{ty}`", node,
                       f"the literal `{v}` does not fit into `{ty}` whose range is `{lo}..={hi}`")
            return None
        return N.Const(ty, self.span(node), v)

    def expr_float_literal(self, node, expected):
        s = _text(node).replace("_", "")
        if s.endswith("f64"):
            self.error("G0004", "unsupported type `f64`", node, "`f64` literal",
                       ["use `f32`: write the literal without a suffix or with `f32`"])
            return None
        s = s.removesuffix("f32")
        try:
            Fraction(s) if not _FLOAT_TEXT.match(s) else None
        except (ValueError, ZeroDivisionError):
            self.error("G0033", "invalid float literal", node, "cannot parse")
            return None
        if expected in ("u32", "i32"):
            self.error("G0019", "mismatched types", node, f"expected `{expected}`, found floating-point number",
                       [f"write an integer, or convert: `{_text(node)} as {expected}`"])
            return None
        f = D.f32_nearest(s)
        if f is None:
            self.error("G0033", "literal out of range for `f32`", node, "rounds to infinity",
                       ["the largest finite `f32` is `f32::MAX` (about 3.4e38)"])
            return None
        return N.Const("f32", self.span(node), f)

    def expr_boolean_literal(self, node, expected):
        return N.Const("bool", self.span(node), _text(node) == "true")

    def expr_identifier(self, node, expected):
        name = _text(node)
        b = self.lookup(name)
        if b is not None and b.kind == "poisoned":
            return None
        if b is None:
            if name in D.ID_BUILTINS or name in D.MATH_FUNCTIONS:
                self.error("G0028", f"`{name}` is a function", node, "used as a value",
                           [f"call it: `gpu::{name}()`"] if name in D.ID_BUILTINS else [])
                return None
            if name in self.ctx.fn_names:
                self.error("G0028", f"`{name}` is a function", node, "used as a value")
                return None
            self.undeclared(node, name)
            return None
        if b.kind in ("resource", "wgarray"):
            what = "workgroup array" if b.kind == "wgarray" else "buffer"
            self.error("G0028", f"`{name}` is a {what} and cannot be used as a value", node,
                       "index it or call `.len()`", [f"read an element: `{name}[i]`"])
            return None
        self.check_init(node, name, b)
        return N.Var(b.ty, self.span(node), b.ir_name)

    def expr_self(self, node, expected):
        self.error("G0020", "`self` is not available in kernels", node, "`self` here")
        return None

    def expr_scoped_identifier(self, node, expected):
        parts = _text(node).replace(" ", "").split("::")
        if len(parts) == 2 and (parts[0], parts[1]) in D.ASSOCIATED_CONSTS:
            ty, v = D.ASSOCIATED_CONSTS[(parts[0], parts[1])]
            return N.Const(ty, self.span(node), v)
        if len(parts) >= 3 and parts[-3:-1] == ["f32", "consts"] and parts[-1] in D.FLOAT_CONSTS:
            return N.Const("f32", self.span(node), D.FLOAT_CONSTS[parts[-1]])
        if parts[0] in ("usize", "isize"):
            self.error("G0005", f"`{parts[0]}` is not supported", node, "pointer-sized integer",
                       ["use `u32` or `i32`"])
            return None
        name, _ = self.callee_name(node)
        if name in D.ID_BUILTINS or name in D.MATH_FUNCTIONS or name in D.STATEMENT_BUILTINS:
            self.error("G0028", f"`{name}` is a function", node, "used as a value",
                       [f"call it: `gpu::{name}()`"] if name in D.ID_BUILTINS else [])
            return None
        self.error("G0020", f"cannot find `{_text(node)}`", node, "not a known constant")
        return None

    def expr_unary_expression(self, node, expected):
        op_tok = _text(node.child(0))
        operand_node = _named(node)[0]
        if op_tok == "*":
            self.error("G0010", "dereferencing is not supported", node, "dereference here",
                       ["the dialect has no references to dereference"])
            return None
        if op_tok == "-":
            return self.lower_negation(node, operand_node, expected)
        if op_tok == "!":
            e = self.lower_expr(operand_node, expected)
            if e is None:
                return None
            if e.ty not in ("bool", "u32", "i32"):
                self.error("G0019", f"cannot apply unary operator `!` to type `{T.rust_name(e.ty)}`", node,
                           "cannot apply unary operator `!`")
                return None
            return N.Unary(e.ty, self.span(node), "not", e)
        self.error("G0028", f"unsupported unary operator `{op_tok}`", node, "not supported")
        return None

    def lower_negation(self, node, operand_node, expected):
        """`-operand`; `node` spans the whole negation. `-literal` folds, so that
        `-2147483648` is an `i32` as in Rust."""
        if operand_node.type == "integer_literal":
            return self.expr_integer_literal(operand_node, expected, negated=node)
        e = self.lower_expr(operand_node, expected)
        if e is None:
            return None
        if e.ty not in ("i32", "f32") and not (T.is_vector(e.ty) and T.elem_of(e.ty) != "u32"):
            self.error("G0019", f"cannot apply unary operator `-` to type `{T.rust_name(e.ty)}`", node,
                       "cannot apply unary operator `-`",
                       ["unsigned values cannot be negative; use `i32`"] if e.ty == "u32" else [])
            return None
        if isinstance(e, N.Const) and e.ty == "f32":
            return N.Const("f32", self.span(node), -e.value)
        return N.Unary(e.ty, self.span(node), "neg", e)

    def expr_binary_expression(self, node, expected):
        lnode = node.child_by_field_name("left")
        rnode = node.child_by_field_name("right")
        op_tok = _text(node.child_by_field_name("operator"))
        op = D.BINARY_OPERATORS.get(op_tok)
        if op is None:
            self.error("G0028", f"unsupported operator `{op_tok}`", node, "not supported")
            return None
        if op in ("and", "or"):
            root = self.is_root(node)
            if root:
                self.set_root(lnode)
            lhs = self.lower_expr(lnode, "bool")
            outer, self.pre = self.pre, []
            if root:  # the right side runs after the left, under the short circuit
                self.set_root(rnode)
            before = self.flow()
            rhs = self.lower_expr(rnode, "bool")
            self.set_flow(self.join(before, self.flow()))
            rhs_pre, self.pre = self.pre, outer
            if lhs is None or rhs is None:
                return None
            if not (self.expect(lnode, lhs, "bool") & self.expect(rnode, rhs, "bool")):
                return None
            sp = self.span(node)
            if not rhs_pre:
                return N.Binary("bool", sp, op, lhs, rhs)
            # the right side needs statements: run them only when it is evaluated
            tmp = self.temp("bool")
            var = N.Var("bool", sp, tmp)
            test = var if op == "and" else N.Unary("bool", sp, "not", var)
            self.pre += [N.Let(sp, tmp, "bool", lhs, True),
                         N.If(sp, test, rhs_pre + [N.Assign(sp, var, rhs)], [])]
            return var
        arith_expected = expected if op not in N.COMPARISONS else None
        if op in ("shl", "shr"):
            lhs = self.lower_expr(lnode, arith_expected)
            rhs = self.lower_expr(rnode, "u32" if self.is_flexible_literal(rnode) else None)
        elif self.is_flexible_literal(lnode) and not self.is_flexible_literal(rnode):
            rhs = self.lower_expr(rnode, arith_expected)
            lty = rhs.ty if rhs is not None else arith_expected
            if rhs is not None and (T.is_vector(rhs.ty) or T.is_matrix(rhs.ty)):
                lty = T.elem_of(rhs.ty)
            lhs = self.lower_expr(lnode, lty)
        else:
            lhs = self.lower_expr(lnode, arith_expected)
            rty = lhs.ty if lhs is not None else arith_expected
            if lhs is not None and (T.is_vector(lhs.ty) or T.is_matrix(lhs.ty)):
                rty = None if self.is_flexible_literal(rnode) is False else T.elem_of(lhs.ty)
            rhs = self.lower_expr(rnode, rty)
        if lhs is None or rhs is None:
            return None
        return self.binary_result(node, op, lhs, rhs, lnode, rnode)

    def binary_result(self, node, op: str, lhs: N.Expr, rhs: N.Expr, lnode, rnode) -> Optional[N.Expr]:
        sp = self.span(node)
        sym = D.OP_SYMBOL[op]
        lt, rt = lhs.ty, rhs.ty
        if op in ("shl", "shr"):
            if T.elem_of(lt) not in T.INTS or rt not in T.INTS:  # integer (vector) by an integer
                bad, bnode = (lt, lnode) if T.elem_of(lt) not in T.INTS else (rt, rnode)
                self.error("G0019", f"cannot shift by or shift a value of type `{T.rust_name(bad)}`", bnode,
                           f"`{T.rust_name(bad)}` here", ["shifts take integer operands"])
                return None
            return N.Binary(lt, sp, op, lhs, rhs)
        if lt != rt:
            # vector/matrix forms: vec op scalar, scalar op vec, mat * vec, mat * mat
            if op in ("add", "sub", "mul", "div") and T.is_vector(lt) and rt == T.elem_of(lt):
                return N.Binary(lt, sp, op, lhs, rhs)
            if op in ("add", "sub", "mul") and T.is_vector(rt) and lt == T.elem_of(rt):
                return N.Binary(rt, sp, op, lhs, rhs)
            if op == "mul" and T.is_matrix(lt) and T.is_vector(rt) and T.elem_of(rt) == "f32" \
                    and T.vec_len(rt) == T.vec_len(lt):
                return N.Binary(rt, sp, op, lhs, rhs)
            if op == "mul" and T.is_matrix(lt) and rt == "f32":
                return N.Binary(lt, sp, op, lhs, rhs)
            self.hint(lhs, rt)
            self.hint(rhs, lt)
            help = []
            if T.is_scalar(lt) and T.is_scalar(rt) and "bool" not in (lt, rt):
                help = [f"convert one side with `as`, e.g. `(... as {lt})`"]
            self.error("G0019", "mismatched types", rnode,
                       f"expected `{T.rust_name(lt)}`, found `{T.rust_name(rt)}`", help,
                       extra=[Label(self.span(lnode), f"this is `{T.rust_name(lt)}`", primary=False)],
                       notes=[f"no implicit conversion between `{T.rust_name(lt)}` and `{T.rust_name(rt)}` for `{sym}`"])
            return None
        ty = lt
        if op in N.COMPARISONS:
            if not T.is_scalar(ty) or (ty == "bool" and op not in ("eq", "ne")):
                self.error("G0019", f"cannot compare values of type `{T.rust_name(ty)}` with `{sym}`", node,
                           "comparison of non-scalars" if not T.is_scalar(ty) else "bools are only compared with `==` and `!=`",
                           ["compare individual lanes, e.g. `a.x < b.x`"] if T.is_vector(ty) else [])
                return None
            return N.Binary("bool", sp, op, lhs, rhs)
        if op in ("bitand", "bitor", "bitxor"):
            if T.elem_of(ty) not in ("u32", "i32") and ty != "bool":
                self.error("G0019", f"no implementation for `{T.rust_name(ty)} {sym} {T.rust_name(ty)}`", node,
                           "bit operations need integers or bools")
                return None
            return N.Binary(ty, sp, op, lhs, rhs)
        # arithmetic
        if ty == "bool" or T.is_struct(ty) or (T.is_matrix(ty) and op != "mul" and op not in ("add", "sub")):
            self.error("G0019", f"cannot apply `{sym}` to values of type `{T.rust_name(ty)}`", node,
                       f"no implementation for `{T.rust_name(ty)} {sym} {T.rust_name(ty)}`")
            return None
        if op == "rem" and T.is_vector(ty):
            self.error("G0019", "`%` is not supported on vectors", node, "vector remainder")
            return None
        return N.Binary(ty, sp, op, lhs, rhs)

    def expr_type_cast_expression(self, node, expected):
        vnode = node.child_by_field_name("value")
        tnode = node.child_by_field_name("type")
        ty = self.value_type(tnode)
        if ty is None:
            return None
        value = self.lower_expr(vnode, None)
        if value is None:
            return None
        if not T.is_scalar(ty) or not T.is_scalar(value.ty):
            self.error("G0019", f"cannot cast `{T.rust_name(value.ty)}` as `{T.rust_name(ty)}`", node,
                       "only scalar casts are supported")
            return None
        if ty == "bool" and value.ty != "bool":
            self.error("G0019", f"cannot cast `{value.ty}` as `bool`", node, "invalid cast",
                       ["compare with zero instead: `x != 0`"])
            return None
        if value.ty == "bool" and ty == "f32":
            self.error("G0019", "cannot cast `bool` as `f32`", node, "invalid cast",
                       ["cast to an integer first: `b as u32 as f32`"])
            return None
        if value.ty == ty:
            return value
        if isinstance(value, N.Const) and T.is_int(value.ty) and T.is_int(ty):
            v = value.value & 0xFFFFFFFF
            if ty == "i32" and v >= 2**31:
                v -= 2**32
            return N.Const(ty, self.span(node), v)
        return N.Cast(ty, self.span(node), value)

    def expr_field_expression(self, node, expected):
        vnode = node.child_by_field_name("value")
        fnode = node.child_by_field_name("field")
        if fnode is None:
            return None
        fname = _text(fnode)
        if fnode.type == "integer_literal":
            self.error("G0004", "tuples are not supported", node, "tuple field access")
            return None
        value = self.lower_expr(vnode, None)
        if value is None:
            return None
        sp = self.span(node)
        if T.is_struct(value.ty):
            decl = self.ctx.structs[T.struct_name(value.ty)]
            for f in decl.fields:
                if f.name == fname:
                    return N.Field(f.ty, sp, value, fname)
            close = difflib.get_close_matches(fname, [f.name for f in decl.fields], n=1)
            self.error("G0034", f"no field `{fname}` on type `{decl.name}`", fnode, "unknown field",
                       [f"a field with a similar name exists: `{close[0]}`"] if close else
                       [f"available fields: {', '.join('`' + f.name + '`' for f in decl.fields)}"])
            return None
        if T.is_vector(value.ty):
            n = T.vec_len(value.ty)
            letters = D.SWIZZLE_LETTERS[:n]
            if 1 <= len(fname) <= 4 and all(ch in letters for ch in fname):
                elem = T.elem_of(value.ty)
                ty = elem if len(fname) == 1 else T.vec(elem, len(fname))
                return N.Swizzle(ty, sp, value, fname)
            self.error("G0034", f"no lane `{fname}` on `{T.rust_name(value.ty)}`", fnode, "invalid swizzle",
                       [f"this vector has lanes {', '.join('`' + c + '`' for c in letters)}"])
            return None
        self.error("G0034", f"no field `{fname}` on type `{T.rust_name(value.ty)}`", fnode, "unknown field")
        return None

    def expr_index_expression(self, node, expected):
        parts = _named(node)
        base, idx = parts[0], parts[1]
        if base.type != "identifier":
            self.error("G0035", "cannot index this expression", base,
                       "only buffers, tensors and workgroup arrays can be indexed")
            return None
        name = _text(base)
        b = self.resolve(base, name)
        if b is None:
            return None
        if b.kind == "wgarray":
            index = self.lower_index(idx)
            return N.Load(b.ty, self.span(node), b.ir_name, index) if index is not None else None
        if b.kind != "resource":
            self.error("G0035", f"cannot index into a value of type `{T.rust_name(b.ty)}`", base,
                       "not a buffer", ["vector lanes are read with `.x`, `.y`, `.z`, `.w`"]
                       if T.is_vector(b.ty) else [])
            return None
        p = self.kernel_param(b.ir_name)
        assert p is not None
        if p.category not in N.READABLE_CATEGORIES:
            self.error("G0022", f"cannot read write-only `{name}`", node,
                       f"`{name}` is a {_CATEGORY_WORDS[p.category]}", _read_write_help(p, " to read it"))
            return None
        index = self.lower_resource_index(p, idx)
        return N.Load(p.ty, self.span(node), p.name, index) if index is not None else None

    def expr_if_expression(self, node, expected):
        """An `if` used as a value: a Select when both arms are plain values that cannot
        fault, otherwise hoisted into a temporary assigned in an `if` statement."""
        cnode = node.child_by_field_name("condition")
        alt = node.child_by_field_name("alternative")
        if alt is None:
            self.error("G0019", "`if` without `else` has no value", node, "missing `else`",
                       ["add an `else` arm"])
            return None
        root = self.is_root(node)
        cond = self.lower_expr(cnode, "bool")
        cond_ok = cond is not None and self.expect(cnode, cond, "bool")
        outer_pre, self.pre = self.pre, []
        then_node, inner = node.child_by_field_name("consequence"), _named(alt)[0]

        def then_arm(want):
            return self.lower_value_block(then_node, want, root)

        def else_arm(want):
            if inner.type != "if_expression":
                return self.lower_value_block(inner, want, root)
            saved, self.pre = self.pre, []
            if root:
                self.set_root(inner)
            val = self.expr_if_expression(inner, want)
            stmts, self.pre = self.pre, saved
            return stmts, val

        before = self.flow()
        if self.is_flexible_literal(then_node) and not self.is_flexible_literal(inner):
            else_stmts, else_val = else_arm(expected)  # `if c { 0 } else { x }`: x decides
            after_else = self.flow()
            self.set_flow(before)
            then_stmts, then_val = then_arm(expected if else_val is None else else_val.ty)
            self.set_flow(self.join(after_else, self.flow()))
        else:
            then_stmts, then_val = then_arm(expected)
            after_then = self.flow()
            self.set_flow(before)
            else_stmts, else_val = else_arm(expected if then_val is None else then_val.ty)
            self.set_flow(self.join(after_then, self.flow()))
        self.pre = outer_pre
        if then_val is None or else_val is None or not cond_ok:
            return None
        if then_val.ty != else_val.ty:
            self.error("G0019", "`if` and `else` have incompatible types", inner,
                       f"expected `{T.rust_name(then_val.ty)}`, found `{T.rust_name(else_val.ty)}`")
            return None
        sp = self.span(node)
        if not then_stmts and not else_stmts and self.cannot_fault(then_val) and self.cannot_fault(else_val):
            return N.Select(then_val.ty, sp, cond, then_val, else_val)
        tmp = self.temp(then_val.ty)
        var = N.Var(then_val.ty, sp, tmp)
        self.pre.append(N.Let(sp, tmp, then_val.ty, None, True))
        self.pre.append(N.If(sp, cond, then_stmts + [N.Assign(then_val.span, var, then_val)],
                             else_stmts + [N.Assign(else_val.span, var, else_val)]))
        return var

    def cannot_fault(self, e: N.Expr) -> bool:
        for x in N.walk_expr(e):
            if isinstance(x, N.Load):
                return False
            if isinstance(x, N.Binary) and x.op in ("div", "rem") and T.is_int(x.ty):
                return False
        return True

    def lower_value_block(self, block, expected, root: bool = True):
        """Statements and tail value of a block used as a value. Its statements are hoisted
        before the enclosing expression, so unless the block is the statement's whole value
        (`root`) they must not write anything an earlier operand may read."""
        saved = self.pre
        self.pre = []
        stmts, tail = self.lower_block_items(block)
        if tail is None:
            self.close_scope()
            self.pre = saved
            self.error("G0019", "this block has no value", block, "expected a value at the end",
                       ["end the block with an expression without `;`"])
            return stmts, None
        val = self.lower_expr(tail, expected)
        stmts += self.pre
        self.close_scope()
        self.pre = saved
        if not root and _has_effects(stmts):
            self.error("G0028", "a block that writes cannot be part of a larger expression", block,
                       "this block has side effects",
                       ["bind the value first: `let v = if ... { ... } else { ... };`, then use `v`"])
            return stmts, None
        return stmts, val

    def set_root(self, node) -> None:
        """`node` is a statement's whole value: blocks there may have side effects."""
        while node is not None and node.type == "parenthesized_expression" and _named(node):
            node = _named(node)[0]
        self.effect_root = (node.start_byte, node.end_byte) if node is not None else None

    def is_root(self, node) -> bool:
        return self.effect_root == (node.start_byte, node.end_byte)

    def expr_block(self, node, expected):
        stmts, val = self.lower_value_block(node, expected, self.is_root(node))
        self.pre += stmts
        return val

    def expr_call_expression(self, node, expected):
        fnode = node.child_by_field_name("function")
        args = _named(node.child_by_field_name("arguments"))
        if fnode.type == "field_expression":
            return self.lower_method(node, fnode, args, expected)
        name, turbofish = self.callee_name(fnode)
        if fnode.type == "scoped_identifier" and name is None:
            parts = _text(fnode).replace(" ", "").split("::")
            if len(parts) == 2 and parts[0] in ("f32", "u32", "i32"):
                return self.lower_ufcs(node, parts[0], parts[1], args, expected)
            if parts[-1] in D.ALLOCATING_TYPES or (len(parts) >= 2 and parts[-2] in D.ALLOCATING_TYPES):
                self.error("G0009", "heap allocation is not supported", node, "allocates here",
                           ["use a `workgroup_array::<T, N>()` or a buffer parameter"])
                return None
            if parts[0] in ("std", "core"):
                self.error("G0015", f"call to `{_text(fnode)}` is not supported", fnode, "standard library call",
                           ["only the dialect's builtins can be called"])
                return None
            pt = tuple(parts[:-1])
            self.error("G0015", f"call to `{_text(fnode)}` is not supported", fnode, "not a builtin")
            return None
        if name is None:
            inner = fnode.child_by_field_name("function") if fnode.type == "generic_function" else None
            if inner is not None and inner.type == "field_expression":  # `xs.iter().collect::<T>()`
                m = _text(inner.child_by_field_name("field"))
                if m in D.ITERATOR_METHODS:
                    self.error("G0027", "iterators are not supported", node, f"`.{m}()` here",
                               ["loop over indices: `for i in 0..xs.len() { ... }`"])
                else:
                    self.error("G0018", f"no generic method `{m}` in the dialect", inner.child_by_field_name("field"),
                               "unknown method")
                return None
            self.error("G0015", "unsupported call", fnode, "cannot call this",
                       ["only the dialect's builtins can be called"])
            return None
        in_gpu = fnode.type != "identifier" and not (fnode.type == "generic_function"
                                                    and fnode.child_by_field_name("function").type == "identifier")
        if name in D.STATEMENT_BUILTINS:
            if name == "workgroup_array":
                self.error("G0023", "workgroup arrays must be declared at kernel top level", node,
                           "must be bound with `let` at the top of the kernel",
                           ["write `let scratch = gpu::workgroup_array::<f32, 256>();` at the top level"])
            elif name == "workgroup_barrier":
                self.error("G0025", "`workgroup_barrier()` must be a statement of its own", node,
                           "used inside an expression")
            else:
                call = f"gpu::{name}(...)" if name == "atomic_add" else f"gpu::{name}::<N>(...)"
                self.error("G0025", f"`{name}` must be a `let` or plain assignment", node,
                           "nested inside an expression", [f"bind it first: `let r = {call};`, then use `r`"])
            return None
        if name in D.ID_BUILTINS:
            if args:
                self.error("G0029", f"`{name}` takes no arguments", node, f"{_count(len(args), 'argument')} given")
                return None
            self.builtins.add(name)
            return N.Builtin("vec3<u32>", self.span(node), name)
        if name in D.VECTOR_TYPES:
            return self.lower_construct(node, D.VECTOR_TYPES[name], args)
        if name in D.MATH_FUNCTIONS:
            fn, arity = D.MATH_FUNCTIONS[name]
            return self.lower_intrinsic(node, fn, args, arity, expected, name)
        if name == self.name:
            self.error("G0015", "recursion is not supported", fnode, "recursive call",
                       ["rewrite the recursion as a loop"])
            return None
        if name in self.ctx.fn_names:
            self.error("G0015", f"call to function `{name}` is not supported", fnode,
                       "only builtins can be called from kernels",
                       [f"write the body of `{name}` inline in the kernel"])
            return None
        if name in ("Vec", "Box", "String"):
            self.error("G0009", "heap allocation is not supported", node, "allocates here")
            return None
        known = list(D.ID_BUILTINS) + list(D.STATEMENT_BUILTINS) + list(D.MATH_FUNCTIONS) + list(D.VECTOR_TYPES)
        close = difflib.get_close_matches(name, known, n=1)
        if in_gpu:
            self.error("G0017", f"unknown builtin `gpu::{name}`", fnode, "not a dialect builtin",
                       [f"a builtin with a similar name exists: `gpu::{close[0]}`"] if close else
                       ["see docs/dialect.md for the list of builtins"])
        else:
            self.error("G0015", f"cannot find function `{name}`", fnode, "not a builtin",
                       [f"a builtin with a similar name exists: `gpu::{close[0]}`"] if close else [])
        return None

    def lower_construct(self, node, ty: str, args) -> Optional[N.Expr]:
        elem = T.elem_of(ty)
        n = T.vec_len(ty)
        vals = []
        lanes = 0
        for a in args:
            v = self.lower_expr(a, elem)
            if v is None:
                return None
            if v.ty == elem:
                lanes += 1
            elif T.is_vector(v.ty) and T.elem_of(v.ty) == elem:
                lanes += T.vec_len(v.ty)
            else:
                self.mismatch(a, elem, v.ty)
                return None
            vals.append(v)
        if lanes == 1 and len(vals) == 1 and vals[0].ty == elem:
            lanes = n  # splat
        if lanes != n:
            self.error("G0029", f"vector constructor fills {lanes} of {n} lanes", node,
                       f"expected {n} lanes", [f"pass {n} `{elem}` values, or one to fill every lane"])
            return None
        return N.Construct(ty, self.span(node), vals)

    def lower_intrinsic(self, node, fn: str, arg_nodes, arity: int, expected, shown: str,
                        receiver: Optional[N.Expr] = None) -> Optional[N.Expr]:
        total = len(arg_nodes) + (1 if receiver is not None else 0)
        if total != arity:
            self.error("G0029", f"`{shown}` takes {_count(arity - (1 if receiver is not None else 0), 'argument')}",
                       node, f"{len(arg_nodes)} given")
            return None
        # the first non-literal argument sets the type the literals take (`max(0.0, x)`)
        lowered: dict[int, Optional[N.Expr]] = {}
        lead_ty = receiver.ty if receiver is not None else None
        if lead_ty is None:
            for k, a in enumerate(arg_nodes):
                if not self.is_flexible_literal(a):
                    lowered[k] = self.lower_expr(a, "u32" if fn == "from_bits" else expected)
                    lead_ty = lowered[k].ty if lowered[k] is not None else None
                    break
        want = "u32" if fn == "from_bits" else lead_ty if lead_ty is not None else expected
        for k, a in enumerate(arg_nodes):
            if k not in lowered:
                lowered[k] = self.lower_expr(a, want)
        vals = ([receiver] if receiver is not None else []) + [lowered[k] for k in range(len(arg_nodes))]
        if any(v is None for v in vals):
            return None
        return self.intrinsic_result(node, fn, vals, arg_nodes, shown)

    def intrinsic_result(self, node, fn, vals, arg_nodes, shown) -> Optional[N.Expr]:
        sp = self.span(node)
        t0 = vals[0].ty
        where = arg_nodes[0] if arg_nodes else node
        if fn == "from_bits":
            if t0 != "u32":
                self.mismatch(where, "u32", t0)
                return None
            return N.Call("f32", sp, fn, vals)
        if fn == "to_bits":
            if t0 != "f32":
                self.error("G0018", f"no method `to_bits` on `{T.rust_name(t0)}`", node, "needs an `f32`")
                return None
            return N.Call("u32", sp, fn, vals)
        for i, v in enumerate(vals[1:], 1):
            if v.ty != t0:
                n = arg_nodes[i - (len(vals) - len(arg_nodes))] if arg_nodes else node
                self.hint(v, t0)
                self.mismatch(n, t0, v.ty)
                return None
        elem = T.elem_of(t0)
        if not (T.is_scalar(t0) or T.is_vector(t0)) or elem == "bool":
            self.error("G0019", f"`{shown}` needs numbers", where, f"found `{T.rust_name(t0)}`")
            return None
        if fn in D.FLOAT_ONLY and elem != "f32":
            self.error("G0019", f"`{shown}` is only defined for `f32`", where,
                       f"found `{T.rust_name(t0)}`", [f"convert first: `(x as f32).{shown}()`"])
            return None
        if fn in ("length", "dot"):
            if not T.is_vector(t0):
                self.error("G0019", f"`{shown}` needs a vector", where, f"found `{T.rust_name(t0)}`")
                return None
            return N.Call("f32", sp, fn, vals)
        if fn == "abs" and elem == "u32":
            pass  # identity, but legal in WGSL and harmless
        return N.Call(t0, sp, fn, vals)

    def lower_ufcs(self, node, tyname: str, method: str, args, expected):
        if method == "from_bits" and tyname == "f32":
            return self.lower_intrinsic(node, "from_bits", args, 1, "u32", "f32::from_bits")
        if method in D.SCALAR_METHODS:
            fn, extra = D.SCALAR_METHODS[method]
            e = self.lower_intrinsic(node, fn, args, extra + 1, tyname, f"{tyname}::{method}")
            if e is not None and T.elem_of(e.args[0].ty) != tyname:  # `f32::max(1u32, 2)`
                self.mismatch(args[0], tyname, e.args[0].ty)
                return None
            return e
        self.error("G0018", f"no function `{tyname}::{method}` in the dialect", node, "unknown function")
        return None

    def lower_method(self, node, fnode, args, expected):
        recv_node = fnode.child_by_field_name("value")
        mname = _text(fnode.child_by_field_name("field"))
        if mname in D.PANICKING_METHODS:
            self.error("G0016", f"`.{mname}()` can panic, and kernels cannot panic", fnode.child_by_field_name("field"),
                       "panics here", ["kernels have no `Option`/`Result`; test values with `if`"])
            return None
        if mname in D.ITERATOR_METHODS:
            self.error("G0027", "iterators are not supported", node, f"`.{mname}()` here",
                       ["loop over indices: `for i in 0..xs.len() { ... }`"])
            return None
        # resource methods
        if recv_node.type == "identifier":
            b = self.lookup(_text(recv_node))
            if b is not None and b.kind in ("resource", "wgarray"):
                return self.lower_resource_method(node, recv_node, b, mname, args)
        recv = self.lower_expr(recv_node, expected if mname in ("max", "min", "clamp", "abs") else None)
        if recv is None:
            return None
        if mname in D.SCALAR_METHODS:
            fn, extra = D.SCALAR_METHODS[mname]
            return self.lower_intrinsic(node, fn, args, extra + 1, expected, mname, receiver=recv)
        if mname == "len":
            self.error("G0018", f"no method `len` on `{T.rust_name(recv.ty)}`", fnode.child_by_field_name("field"),
                       "only buffers, tensors and workgroup arrays have a length")
            return None
        close = difflib.get_close_matches(mname, list(D.SCALAR_METHODS), n=1)
        self.error("G0018", f"no method `{mname}` on `{T.rust_name(recv.ty)}` in the dialect",
                   fnode.child_by_field_name("field"), "unknown method",
                   [f"a method with a similar name exists: `{close[0]}`"] if close else [])
        return None

    def lower_resource_method(self, node, recv_node, b: Binding, mname: str, args):
        sp = self.span(node)
        name = _text(recv_node)
        p = self.kernel_param(b.ir_name) if b.kind == "resource" else None
        cat = p.category if p else "wgarray"
        if mname == "len" and cat != "image":
            if args:
                self.error("G0029", "`len` takes no arguments", node, "arguments given")
                return None
            if b.kind == "wgarray":
                w = next(w for w in self.wgarrays if w.name == b.ir_name)
                return N.Const("u32", sp, w.size)
            return N.Len("u32", sp, b.ir_name)
        if cat in N.TENSOR_CATEGORIES and mname == "rank" and not args:
            return N.TensorRank("u32", sp, b.ir_name)
        if cat in N.TENSOR_CATEGORIES and mname == "dim":
            if len(args) != 1:
                self.error("G0029", "`dim` takes 1 argument (the axis)", node, f"{len(args)} given")
                return None
            axis = self.lower_index(args[0])
            return N.TensorDim("u32", sp, b.ir_name, axis) if axis is not None else None
        if cat == "image" and mname in ("width", "height") and not args:
            return N.ImageSize("u32", sp, b.ir_name, 0 if mname == "width" else 1)
        kinds = {"wgarray": "workgroup array", "image": "storage image"}
        what = kinds.get(cat, "tensor" if cat in N.TENSOR_CATEGORIES else "buffer")
        avail = {"image": "`.width()`, `.height()`"}.get(cat, "`.len()`, `.dim(axis)`, `.rank()`"
                                                         if cat in N.TENSOR_CATEGORIES else "`.len()`")
        self.error("G0018", f"no method `{mname}` on {what} `{name}`", node, "unknown method",
                   [f"{what}s support {avail}"])
        return None

    def expr_generic_function(self, node, expected):
        self.error("G0028", "unsupported expression", node, "generic function used as a value")
        return None

    def expr_unit_expression(self, node, expected):
        self.error("G0004", "the unit value `()` is not supported here", node, "unit value")
        return None

    def expr_macro_invocation(self, node, expected):
        return self.reject_macro(node)
