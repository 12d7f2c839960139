"""poot's `#[kernel]` dialect, lowered to the same IR as `#[goldy::compute]` kernels.

A `#[kernel] pub fn name(a: &[f32], out: &mut [f32])` uses poot's accepted subset: slices
and scalars of `bool usize i32 u32 f32`, `usize` as the index type (32 bits on every
target), poot's intrinsics (`thread_index()`, `wg_write(0, i, v)`, ...), `for x in slice`,
and only the float and integer methods poot lists. `PootLowerer` is the Goldy lowerer with
poot's signature, types, calls and loop forms; everything it does not override (operators,
typing, `if`, `while`, ranges, indexing, definite initialisation) is shared, so the two
dialects cannot drift apart. Whatever is outside the subset is reported with its usual
code and a message starting with `unsupported in kernel:`, as poot's importer words it.
docs/dialect.md, "poot kernels", is the prose version.
"""

from __future__ import annotations

import difflib
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import dialect as D
from .lower import KernelLowerer
from .state import Binding
from .syntax import ident, named, node_text, parse_int_digits, plural, split_int_literal

ATTRIBUTE_PATHS = ("kernel", "poot::kernel")
INTRINSIC_PATHS = (("poot_kernel_intrinsics",),)
DEFAULT_WORKGROUP_SIZE = 64
WORKGROUP_SIZE_CONST = "WORKGROUP_SIZE"
# Each literal id of `wg_write`/`wg_read` is one f32 workgroup array of LDS_SLOTS slots;
# MAX_LDS_ARRAYS of them fill WebGPU's guaranteed 16 KiB of workgroup memory.
LDS_SLOTS = 1024
MAX_LDS_ARRAYS = 4

# intrinsic -> (IR builtin, lane): the thread coordinates, all `usize`
ID_INTRINSICS = {
    "thread_index": ("global_id", "x"),
    "local_index": ("local_id", "x"),
    "group_index": ("workgroup_id", "x"),
    "group_index_y": ("workgroup_id", "y"),
}
STATEMENT_INTRINSICS = ("workgroup_barrier", "wg_write", "atomic_add")
INTRINSICS = tuple(ID_INTRINSICS) + STATEMENT_INTRINSICS + ("wg_read", "no_contract_add")

SCALAR_TYPES = {"bool": "bool", "usize": "u32", "i32": "i32", "u32": "u32", "f32": "f32"}
WIDE_FLOATS = ("f64", "f16")
FLOAT_METHODS = ("sqrt", "abs", "floor", "ceil", "trunc", "round", "exp", "ln", "sin", "cos", "max", "min")
INT_METHODS = ("max", "min")
RANGE_ADAPTERS = ("rev", "step_by")
PREFIX = "unsupported in kernel: "
# codes of constructs outside the subset: their messages get poot's prefix
REJECTIONS = {"G0003", "G0004", "G0005", "G0006", "G0007", "G0008", "G0009", "G0010", "G0011", "G0012",
              "G0013", "G0014", "G0015", "G0016", "G0017", "G0018", "G0027", "G0028", "G0031"}
SUBSET_HELP = ("poot kernels take `&[T]` / `&mut [T]` slices and scalars of `bool`, `usize`, `i32`, "
               "`u32`, `f32`")
METHODS_HELP = ("poot kernels call `sqrt abs floor ceil trunc round exp ln sin cos max min` on `f32` "
                "and `max min` on integers")
CALLS_HELP = ("a poot kernel calls only its intrinsics (`thread_index()`, `local_index()`, `group_index()`, "
              "`group_index_y()`, `workgroup_barrier()`, `wg_write`, `wg_read`, `atomic_add`, "
              "`no_contract_add`) and the float and integer methods")
GOLDY_BUILTINS = set(D.ID_BUILTINS) | set(D.STATEMENT_BUILTINS) | set(D.MATH_FUNCTIONS) | set(D.VECTOR_TYPES)


def is_kernel_attribute(path: str) -> bool:
    """Whether an attribute path (`kernel`, `poot::kernel`) marks a poot kernel."""
    return path in ATTRIBUTE_PATHS


class PootLowerer(KernelLowerer):
    """Lowers one `#[kernel]` function (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.element_refs: set[str] = set()  # `for x in slice` elements: `*x` reads them
        self.lds: dict[int, str] = {}  # literal array id -> workgroup array name

    # ------------------------------------------------------------ diagnostics

    def error(self, code, message, node, label="", help=None, extra=None, notes=None) -> None:
        if code in REJECTIONS and not message.startswith((PREFIX, "internal error")):
            message = PREFIX + message
        super().error(code, message, node, label, help, extra, notes)

    # ------------------------------------------------------------ signature and types

    def parse_attribute(self, attr) -> tuple[int, int, int]:
        inner = next((c for c in attr.children if c.type == "attribute"), None)
        args = inner.child_by_field_name("arguments") if inner is not None else None
        if args is not None:
            self.error("G0002", "`#[kernel]` takes no arguments", args, "arguments here",
                       [f"set the workgroup size in the kernel: `const {WORKGROUP_SIZE_CONST}: usize = 256;`"])
        return (self.workgroup_size_const(), 1, 1)

    def workgroup_size_const(self) -> int:
        """`const WORKGROUP_SIZE: usize = N;` at the top of the body, else 64."""
        body = self.fn.child_by_field_name("body")
        for item in named(body) if body is not None else []:
            name = item.child_by_field_name("name") if item.type == "const_item" else None
            if name is None or ident(name) != WORKGROUP_SIZE_CONST:
                continue
            value = item.child_by_field_name("value")
            digits, suffix = split_int_literal(node_text(value)) if value is not None else ("", "?")
            n = parse_int_digits(digits) if value is not None and value.type == "integer_literal" \
                and suffix in (None, "usize", "u32") else None
            if n is None or not 1 <= n <= 1024:
                self.error("G0002", f"invalid `{WORKGROUP_SIZE_CONST}`", value or item,
                           "expected an integer literal from 1 to 1024",
                           [f"write `const {WORKGROUP_SIZE_CONST}: usize = 256;`: a workgroup holds "
                            "at most 1024 threads on every backend"])
                return DEFAULT_WORKGROUP_SIZE
            return n
        return DEFAULT_WORKGROUP_SIZE

    def param_type(self, ty, pname: str) -> Optional[tuple[str, str]]:
        if ty is not None and node_text(ty) in WIDE_FLOATS:  # `f16` is no primitive to tree-sitter
            self.wide_float(ty, node_text(ty))
            return None
        if ty is not None and ty.type == "reference_type":
            inner = ty.child_by_field_name("type")
            if inner is not None and inner.type == "array_type" and inner.child_by_field_name("length") is None:
                elem = inner.child_by_field_name("element")
                if elem is not None and node_text(elem) in WIDE_FLOATS:
                    self.wide_float(elem, node_text(elem))
                    return None
                if elem is not None and node_text(elem) == "usize":
                    self.error("G0003", "`usize` slice elements", elem, "no fixed width on the device",
                               ["use `&[u32]` / `&mut [u32]`: device indices are 32 bits wide"])
                    return None
                if elem is not None and elem.type != "primitive_type":
                    self.error("G0003", f"slice of `{node_text(elem)}`", elem, "not a scalar element",
                               [SUBSET_HELP])
                    return None
        if ty is not None and ty.type in ("generic_type", "type_identifier", "scoped_type_identifier"):
            self.error("G0003", f"parameter type `{node_text(ty)}`", ty, "not a slice or scalar", [SUBSET_HELP])
            return None
        return super().param_type(ty, pname)

    def scalar_type(self, node) -> Optional[str]:
        t = node_text(node)
        if t in SCALAR_TYPES:
            return SCALAR_TYPES[t]
        if t in WIDE_FLOATS:
            self.wide_float(node, t)
            return None
        return super().scalar_type(node)

    def wide_float(self, node, t: str) -> None:
        self.error("G0004", f"`{t}`", node, f"no `{t}` lowering on any target of this toolchain",
                   ["use `f32`; WGSL has no `f64` at all, and the kernel IR holds 32-bit floats only"])

    def value_type(self, node) -> Optional[str]:
        if node is not None and (node.type == "primitive_type" or node_text(node) in WIDE_FLOATS):
            return self.scalar_type(node)
        if node is not None and node.type == "array_type":
            self.error("G0004", f"local array `{node_text(node)}`", node, "no lowering for local arrays",
                       ["use workgroup memory: `wg_write(0, i, v)` and `wg_read(0, i)`"])
            return None
        if node is not None:
            self.error("G0004", f"type `{node_text(node)}`", node, "not a poot kernel type",
                       ["poot kernel values are `bool`, `usize`, `i32`, `u32` and `f32`"])
        return None

    # ------------------------------------------------------------ literals and constants

    def expr_integer_literal(self, node, expected, negated=None):
        digits, suffix = split_int_literal(node_text(node))
        if suffix != "usize":
            return super().expr_integer_literal(node, expected, negated)
        where = negated if negated is not None else node
        v = parse_int_digits(digits)
        if v is None:
            self.error("G0033", "invalid integer literal", node, "cannot parse")
            return None
        if negated is not None:
            self.error("G0019", "cannot apply unary operator `-` to type `usize`", where,
                       "cannot apply unary operator `-`", ["unsigned values cannot be negative; use `i32`"])
            return None
        if v > T.INT_RANGES["u32"][1]:
            self.usize_overflow(where, f"the literal `{v}`")
            return None
        return N.Const("u32", self.span(where), v)

    def usize_overflow(self, node, what: str) -> None:
        self.error("G0033", "literal out of range for the 32-bit `usize`", node,
                   f"{what} does not fit in 32 bits",
                   ["`usize` is the 32-bit index type on every target: values are at most 4294967295"])

    def expr_float_literal(self, node, expected):
        text = node_text(node).replace("_", "")
        if text.endswith("f16"):
            self.wide_float(node, "f16")
            return None
        if text.endswith("f64"):
            self.wide_float(node, "f64")
            return None
        return super().expr_float_literal(node, expected)

    def expr_scoped_identifier(self, node, expected):
        parts = node_text(node).replace(" ", "").split("::")
        if parts == ["usize", "MAX"]:
            self.usize_overflow(node, "`usize::MAX`")
            return None
        if parts == ["usize", "MIN"]:
            return N.Const("u32", self.span(node), 0)
        if parts[0] in WIDE_FLOATS:
            self.wide_float(node, parts[0])
            return None
        return super().expr_scoped_identifier(node, expected)

    # ------------------------------------------------------------ intrinsics and calls

    def callee_name(self, fnode):
        """A poot intrinsic named bare or as `poot_kernel_intrinsics::name`; None for any
        other callee (Goldy's `gpu::` builtins included)."""
        turbofish = None
        if fnode.type == "generic_function":
            turbofish = fnode.child_by_field_name("type_arguments")
            fnode = fnode.child_by_field_name("function")
        name = None
        if fnode.type == "identifier":
            name = node_text(fnode)
        elif fnode.type == "scoped_identifier":
            path = fnode.child_by_field_name("path")
            if path is not None and tuple(node_text(path).replace(" ", "").split("::")) in INTRINSIC_PATHS:
                name = node_text(fnode.child_by_field_name("name"))
        return (name if name in INTRINSICS else None), turbofish

    def lower_statement_call(self, call, target):
        name, turbofish = self.callee_name(call.child_by_field_name("function"))
        if name not in STATEMENT_INTRINSICS or not self.plain_intrinsic(name, turbofish):
            return None
        if name == "wg_write":
            return self.lower_wg_write(call, target)
        if name == "atomic_add":
            args = named(call.child_by_field_name("arguments"))
            p = self.param_arg(args[0]) if args else None
            if p is not None and p.ty != "u32" and p.category in N.BUFFER_CATEGORIES:
                self.error("G0038", "`atomic_add` adds to a `&mut [u32]`", args[0],
                           f"`{p.name}` holds `{T.rust_name(p.ty)}`", ["poot's atomic add is a `u32` add"])
                return []
        return super().lower_statement_call(call, target)

    def plain_intrinsic(self, name: str, turbofish) -> bool:
        if turbofish is None:
            return True
        self.error("G0012", f"`{name}` takes no generic arguments", turbofish, "generic arguments here")
        return False

    def param_arg(self, node) -> Optional[N.Param]:
        b = self.lookup(node_text(node)) if node.type == "identifier" else None
        return self.kernel_param(b.ir_name) if b is not None and b.kind == "resource" else None

    def lower_wg_write(self, call, target) -> list[N.Stmt]:
        if target is not None:
            self.error("G0025", "`wg_write` returns nothing", call, "used as a value",
                       ["call it as a statement: `wg_write(0, i, v);`"])
            return []
        args = named(call.child_by_field_name("arguments"))
        if len(args) != 3:
            self.error("G0029", "`wg_write` takes 3 arguments (array, index, value)", call,
                       f"{plural(len(args), 'argument')} given")
            return []
        array = self.lds_array(args[0])
        index = self.lower_index(args[1])
        value = self.lower_expr(args[2], "f32")
        if array is None or index is None or value is None or not self.expect(args[2], value, "f32"):
            return []
        return [N.Store(self.span(call), array, index, value)]

    def lds_array(self, node) -> Optional[str]:
        """The workgroup array of a literal array id, declared on first use."""
        digits, suffix = split_int_literal(node_text(node))
        n = parse_int_digits(digits) if node.type == "integer_literal" and suffix in (None, "usize") else None
        if n is None:
            self.error("G0038", "the array of `wg_write`/`wg_read` must be a literal array id", node,
                       "not an integer literal", ["write the id itself: `wg_write(0, i, v)`"])
            return None
        if n not in self.lds:
            if len(self.lds) == MAX_LDS_ARRAYS:
                self.error("G0038", f"more than {MAX_LDS_ARRAYS} workgroup-local arrays", node,
                           f"array id {n} would be the {len(self.lds) + 1}th",
                           [f"each id holds {LDS_SLOTS} `f32` slots; share ids between uses"])
                return None
            name = self.fresh(f"lds{n}")
            self.lds[n] = name
            self.wgarrays.append(N.WorkgroupArray(name, "f32", LDS_SLOTS, self.span(node)))
        return self.lds[n]

    def lower_tail(self, node, top: bool) -> list[N.Stmt]:
        if node.type == "call_expression" and self.callee_name(node.child_by_field_name("function"))[0] == "wg_write":
            return self.lower_statement(node, False)
        return super().lower_tail(node, top)

    def expr_call_expression(self, node, expected):
        fnode = node.child_by_field_name("function")
        args = named(node.child_by_field_name("arguments"))
        if fnode.type == "field_expression":
            return self.lower_method(node, fnode, args, expected)
        name, turbofish = self.callee_name(fnode)
        if name is not None and not self.plain_intrinsic(name, turbofish):
            return None
        sp = self.span(node)
        if name in ID_INTRINSICS:
            if args:
                self.error("G0029", f"`{name}` takes no arguments", node, f"{plural(len(args), 'argument')} given")
                return None
            builtin, lane = ID_INTRINSICS[name]
            self.builtins.add(builtin)
            return N.Swizzle("u32", sp, N.Builtin("vec3<u32>", sp, builtin), lane)
        if name == "wg_read":
            if len(args) != 2:
                self.error("G0029", "`wg_read` takes 2 arguments (array, index)", node,
                           f"{plural(len(args), 'argument')} given")
                return None
            array = self.lds_array(args[0])
            index = self.lower_index(args[1])
            return N.Load("f32", sp, array, index) if array is not None and index is not None else None
        if name == "no_contract_add":
            return self.lower_no_contract_add(node, args, expected)
        if name in STATEMENT_INTRINSICS:
            self.error("G0025", f"`{name}` must be a statement of its own" if name != "atomic_add"
                       else "`atomic_add` must be a `let` or plain assignment", node, "nested inside an expression",
                       ["bind it first: `let old = atomic_add(buf, i, v);`"] if name == "atomic_add" else [])
            return None
        return self.reject_call(node, fnode, args, expected)

    def lower_no_contract_add(self, node, args, expected) -> Optional[N.Expr]:
        """`a + b`: every target already keeps `+` and `*` apart (semantics.md, "No contraction")."""
        if len(args) != 2:
            self.error("G0029", "`no_contract_add` takes 2 arguments", node, f"{plural(len(args), 'argument')} given")
            return None
        first = 1 if self.is_flexible_literal(args[0]) and not self.is_flexible_literal(args[1]) else 0
        lead = self.lower_expr(args[first], expected)
        other = self.lower_expr(args[1 - first], lead.ty if lead is not None else expected)
        if lead is None or other is None:
            return None
        lhs, rhs = (lead, other) if first == 0 else (other, lead)
        return self.binary_result(node, "add", lhs, rhs, args[0], args[1])

    def reject_call(self, node, fnode, args, expected):
        inner = fnode.child_by_field_name("function") if fnode.type == "generic_function" else fnode
        parts = node_text(inner).replace(" ", "").split("::")
        if inner.type == "scoped_identifier" and len(parts) == 2 and parts[0] in ("f32", "u32", "i32", "usize"):
            return self.lower_ufcs(node, SCALAR_TYPES[parts[0]], parts[1], args, expected)
        shown = node_text(inner)
        if parts[-1] in GOLDY_BUILTINS and (len(parts) == 1 or tuple(parts[:-1]) in D.GPU_PATHS):
            self.error("G0017", f"`{shown}` is a `#[goldy::compute]` builtin", inner, "not a poot intrinsic",
                       [CALLS_HELP])
            return None
        if inner.type == "identifier" and parts[0] == self.name:
            self.error("G0015", "recursion", inner, "recursive call", ["rewrite the recursion as a loop"])
            return None
        close = difflib.get_close_matches(parts[-1], INTRINSICS, n=1)
        self.error("G0015", f"call to `{shown}`", inner, "not an intrinsic",
                   [f"an intrinsic with a similar name exists: `{close[0]}`"] if close else [CALLS_HELP])
        return None

    # ------------------------------------------------------------ methods

    def lower_method(self, node, fnode, args, expected):
        field = fnode.child_by_field_name("field")
        mname = node_text(field)
        recv_node = fnode.child_by_field_name("value")
        b = self.lookup(node_text(recv_node)) if recv_node.type == "identifier" else None
        if (b is not None and b.kind == "resource") or mname in D.PANICKING_METHODS or mname in D.ITERATOR_METHODS:
            return super().lower_method(node, fnode, args, expected)  # `.len()`, or its rejection
        if mname not in FLOAT_METHODS:
            self.error("G0018", f"method `.{mname}()`", field, "not a poot method", [METHODS_HELP])
            return None
        e = super().lower_method(node, fnode, args, expected)
        return self.float_only(e, mname, field)

    def lower_ufcs(self, node, tyname: str, method: str, args, expected):
        if method == "from_bits" and tyname == "f32":
            return super().lower_ufcs(node, tyname, method, args, expected)
        if method not in FLOAT_METHODS:
            self.error("G0018", f"function `{tyname}::{method}`", node, "not a poot method", [METHODS_HELP])
            return None
        return self.float_only(super().lower_ufcs(node, tyname, method, args, expected), method, node)

    def float_only(self, e: Optional[N.Expr], mname: str, where) -> Optional[N.Expr]:
        """Goldy has `abs` on integers as well; poot has only `max`/`min` there."""
        if e is not None and mname not in INT_METHODS and T.elem_of(e.ty) != "f32":
            self.error("G0018", f"method `.{mname}()` on `{T.rust_name(e.ty)}`", where, "defined on `f32` only",
                       [METHODS_HELP])
            return None
        return e

    # ------------------------------------------------------------ loops and references

    def lower_for(self, node) -> list[N.Stmt]:
        rng = node.child_by_field_name("value")
        if rng is not None and rng.type == "call_expression":
            callee = rng.child_by_field_name("function")
            method = callee.child_by_field_name("field") if callee.type == "field_expression" else None
            if method is not None and node_text(method) in RANGE_ADAPTERS:
                m = node_text(method)
                self.error("G0027", f"`.{m}()` on a loop range", method, f"`.{m}()` here",
                           ["count down with `while`: `let mut k = n; while k > 0 { k -= 1; ... }`"
                            if m == "rev" else "step with `while`: `let mut k = a; while k < b { ...; k += step; }`"])
                return []
        if rng is not None and rng.type == "identifier":
            b = self.lookup(node_text(rng))
            if b is not None and b.kind == "resource":
                return self.lower_for_slice(node, rng, b)
        return super().lower_for(node)

    def lower_for_slice(self, node, rng, b: Binding) -> list[N.Stmt]:
        """`for x in slice { ... }` reads `slice[k]` for `k` in `0..slice.len()`."""
        sp = self.span(node)
        pat = node.child_by_field_name("pattern")
        p = self.kernel_param(b.ir_name)
        assert p is not None
        if p.category not in N.READABLE_CATEGORIES:
            self.error("G0022", f"cannot read write-only `{p.name}`", rng, "iterated here")
            return []
        if pat is None or pat.type not in ("identifier", "_"):
            self.error("G0031", "unsupported pattern", pat or node, "expected a loop variable name",
                       ["bind a single name: `for x in xs`"])
            return []
        counter = self.fresh("_k")
        self.locals[counter] = "u32"
        element = self.fresh(ident(pat) if pat.type == "identifier" else "_")
        self.locals[element] = p.ty
        self.element_refs.add(element)
        self.scopes.append({})
        if pat.type == "identifier":
            self.scopes[-1][ident(pat)] = Binding(element, p.ty, False, "local", decl_span=self.span(pat))
        body = self.lower_loop_body(node.child_by_field_name("body"))
        self.scopes.pop()
        k = N.Var("u32", self.span(pat), counter)
        read = N.Let(self.span(pat), element, p.ty, N.Load(p.ty, self.span(rng), p.name, k), False)
        return [N.For(sp, counter, "u32", N.Const("u32", self.span(rng), 0), N.Len("u32", self.span(rng), p.name),
                      False, [read] + body)]

    def expr_unary_expression(self, node, expected):
        operand = named(node)[0] if named(node) else None
        if node_text(node.child(0)) == "*" and operand is not None and operand.type == "identifier":
            b = self.lookup(node_text(operand))
            if b is not None and b.ir_name in self.element_refs:
                return self.lower_expr(operand, expected)  # `*x` of `for x in slice`
        return super().expr_unary_expression(node, expected)


PootLowerer.EXPR_METHODS = {name.removeprefix("expr_"): getattr(PootLowerer, name)
                            for name in dir(PootLowerer) if name.startswith("expr_")}
