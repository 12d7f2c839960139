"""What lowering one kernel keeps track of, and the bookkeeping around it: diagnostics,
scopes and unique local names, untyped-literal hints, definite initialisation, nesting
depth and the statements hoisted out of expressions. The lowering mixins (signature,
statements, expressions, builtins) all work on this state; lower.py puts them together.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from goldy_import.ir.diagnostics import Diagnostic, Label, SourceText
from .syntax import named, node_text


# Nesting levels (expressions and blocks) a kernel may use. Real kernels need ~20; the
# bound keeps lowering, the verifier and every emitter far from Python's recursion limit.
MAX_DEPTH = 100
MAX_LOOP_DEPTH = 16  # loops inside loops: the CPU form is Python, whose compiler allows 20 nested loop blocks
MAX_KERNEL_ERRORS = 100  # then the kernel's lowering stops: bounded work on hopeless input


class Abort(Exception):
    """Stop lowering this kernel (the diagnostic is already recorded)."""


@dataclass
class Binding:
    ir_name: str
    ty: str
    mutable: bool
    kind: str  # "local" | "param" | "resource" | "wgarray" | "uniform" | "poisoned"
    decl: int = -1  # byte offset of the declaring pattern: the key of literal-type hints
    flexible: bool = False  # type defaulted from an untyped literal
    decl_span: Optional[N.Span] = None
    # `let x: T;` without a value: "no" until assigned, "maybe" when assigned on some paths
    init: str = "yes"
    loop_depth: int = 0  # loops around the declaration (an immutable one is assigned once)


class Context:
    """What a kernel's lowering needs from the file: source, structs, known functions."""

    def __init__(self, source: SourceText, structs: dict, fn_names: set[str],
                 type_kinds: Optional[dict[str, str]] = None, consts: Any = None):
        from .consts import Consts
        self.source = source
        self.consts = consts if consts is not None else Consts([])  # the file's `const` items
        self.structs = structs  # name -> N.StructDecl (valid #[goldy::gpu] structs)
        self.fn_names = fn_names
        # other type names the file declares -> "enum" | "struct" | "gpu_struct" | "trait" |
        # "union" | "type": for a precise message when a kernel names one
        self.type_kinds = type_kinds or {}


def diverges(stmts: list[N.Stmt]) -> bool:
    """Whether control never reaches the end of `stmts` (for definite initialisation)."""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (N.Return, N.Break, N.Continue)):
        return True
    return isinstance(last, N.If) and diverges(last.then_body) and diverges(last.else_body)


WRITES = (N.Store, N.AtomicAdd, N.Barrier, N.Reduce, N.Softmax)


def has_effects(stmts: list[N.Stmt]) -> bool:
    """Whether statements write memory, synchronise, or assign a variable declared outside them."""
    declared = {s.name for s in N.walk_stmts(stmts) if isinstance(s, N.Let)}
    for s in N.walk_stmts(stmts):
        if isinstance(s, WRITES):
            return True
        if isinstance(s, N.Assign):
            root = s.target
            while isinstance(root, (N.Field, N.Swizzle)):
                root = root.value
            if not (isinstance(root, N.Var) and root.name in declared):
                return True
    return False


CATEGORY_WORDS = {
    "read": "read-only buffer", "read_write": "read-write buffer", "write": "write-only buffer",
    "tensor": "read-only tensor view", "tensor_mut": "read-write tensor view",
    "tensor_write": "write-only tensor view", "image": "storage image",
}


def read_write_help(p: N.Param, why: str = "") -> list[str]:
    """How to declare `p` so it can be both read and written."""
    if T.is_struct(p.ty):
        return ["struct buffers are read-only; write the fields to separate `&mut [T]` buffers"]
    elem = T.rust_name(p.ty)
    form = f"gpu::TensorMut<{elem}>" if p.category in N.TENSOR_CATEGORIES else f"&mut [{elem}]"
    return [f"declare `{p.name}` as `{form}`{why}"]


class LowererState:
    """The state of one kernel's lowering and the helpers every lowering step uses."""

    # tree-sitter node type -> the `expr_<type>` method lowering it (filled in by lower.py)
    EXPR_METHODS: dict[str, Any] = {}

    if TYPE_CHECKING:  # implemented by the lowering mixins that share this state
        def lower_expr(self, node, expected: Optional[str]) -> Optional[N.Expr]: ...
        def lower_index(self, node) -> Optional[N.Expr]: ...
        def is_flexible_literal(self, node, depth: int = 0) -> bool: ...
        def lower_block_items(self, block, top: bool = False) -> tuple[list[N.Stmt], Any]: ...
        def lower_statement_call(self, call, target: Optional[tuple]) -> Optional[list[N.Stmt]]: ...
        def callee_name(self, fnode) -> tuple[Optional[str], Any]: ...
        def value_type(self, node) -> Optional[str]: ...
        def lower_negation(self, node, operand_node, expected: Optional[str]) -> Optional[N.Expr]: ...
        def binary_result(self, node, op: str, lhs: N.Expr, rhs: N.Expr, lnode, rnode) -> Optional[N.Expr]: ...

    def __init__(self, ctx: Context, fn_node, attr_node, doc: str, hints: dict[int, str]):
        self.ctx = ctx
        self.fn = fn_node
        self.attr = attr_node
        self.doc = doc
        self.hints = hints
        self.new_hints: dict[int, str] = {}
        self.flexible_locals: dict[str, Binding] = {}  # IR name -> binding, of the untyped-literal locals
        self.hint_edges: dict[int, list[int]] = {}  # flexible `let` -> flexible locals its value is built from
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
        self.name = node_text(fn_node.child_by_field_name("name")).removeprefix("r#")  # `fn r#loop` is `loop`
        self.wg_size = (64, 1, 1)
        self.returns_value = False  # `-> T` reported: a tail value needs no second error
        self.effect_root: Optional[tuple[int, int]] = None  # see set_root
        self.depth = 0  # nesting of expressions and blocks being lowered, see enter
        self.deferred: list[Binding] = []  # `let x: T;` bindings, see check_init
        self.flexible_cache: dict[tuple[int, int, str], bool] = {}  # see is_flexible_literal
        self.span = ctx.source.node_span  # type: ignore[method-assign]  # hot: skip a call layer

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
        for b in self.hinted_by(e, ty):
            if b.decl not in self.new_hints:
                self.new_hints[b.decl] = ty

    def hinted_by(self, e: Optional[N.Expr], ty: Optional[str]) -> list[Binding]:
        """The flexible locals a hint of `e` as `ty` reaches (ty None: as any integer type)."""
        if e is None or e.ty == ty or not (T.is_int(e.ty) and (ty is None or T.is_int(ty))):
            return []
        if isinstance(e, N.Var):
            b = self.flexible_locals.get(e.name)
            return [b] if b is not None else []
        if isinstance(e, N.Binary) and e.op not in N.COMPARISONS and e.op not in N.LOGICAL:
            return self.hinted_by(e.lhs, ty) + (self.hinted_by(e.rhs, ty) if e.op not in ("shl", "shr") else [])
        if isinstance(e, N.Unary):
            return self.hinted_by(e.operand, ty)
        if isinstance(e, N.Select):
            return self.hinted_by(e.if_true, ty) + self.hinted_by(e.if_false, ty)
        return []

    def binding_by_ir_name(self, ir_name: str) -> Optional[Binding]:
        for s in reversed(self.scopes):
            for b in s.values():
                if b.ir_name == ir_name:
                    return b
        return None

    def enter(self, node, counted: bool = False) -> None:
        """One nesting level deeper; past MAX_DEPTH, report and abandon the kernel."""
        if not counted:
            self.depth += 1
        if self.depth > MAX_DEPTH:
            self.error("G0040", "nesting is too deep", self.ctx.source.span(node.start_byte, node.start_byte + 1),
                       f"more than {MAX_DEPTH} levels deep",
                       ["split the expression into several `let` bindings, or the blocks into fewer levels"])
            raise Abort()

    def close_scope(self) -> None:
        self.scopes.pop()
        self.depth -= 1

    def with_pre(self, stmts: list[N.Stmt]) -> list[N.Stmt]:
        pre, self.pre = self.pre, []
        return pre + stmts

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

    def expect(self, node, e: N.Expr, ty: str) -> bool:
        if e.ty == ty:
            return True
        self.hint(e, ty)
        help = None
        if T.is_scalar(ty) and T.is_scalar(e.ty) and "bool" not in (ty, e.ty):
            help = [f"convert with `as {ty}`"]
        self.mismatch(node, ty, e.ty, help)
        return False

    def set_root(self, node) -> None:
        """`node` is a statement's whole value: blocks there may have side effects."""
        while node is not None and node.type == "parenthesized_expression" and named(node):
            node = named(node)[0]
        self.effect_root = (node.start_byte, node.end_byte) if node is not None else None

    def is_root(self, node) -> bool:
        return self.effect_root == (node.start_byte, node.end_byte)
