"""IR verifier. Success means every emitter can render the kernel without crashing:
names resolve, types agree, resources are used according to their category, and
`break`/`continue` sit inside loops. Runs after lowering and after every IR pass."""

from __future__ import annotations

from typing import NoReturn, Optional

from . import nodes as N
from . import types as T
from .rules import CALL_RESULT, CALLS, RULES, call_rule

RULE_CALLS = {f for f, _ in CALLS}


class VerifyError(Exception):
    def __init__(self, message: str, span: Optional[N.Span] = None):
        super().__init__(message)
        self.message = message
        self.span = span


def verify(k: N.Kernel) -> None:
    _Verifier(k).run()


class _Verifier:
    def __init__(self, k: N.Kernel):
        self.k = k
        self.params = {p.name: p for p in k.params}
        self.wg = {w.name: w for w in k.workgroup_arrays}
        self.structs = {s.name: s for s in k.structs}
        self.declared: set[str] = set()
        self.valid_types: set[str] = set()

    def fail(self, msg: str, span: Optional[N.Span]) -> NoReturn:
        raise VerifyError(f"kernel `{self.k.name}`: {msg}", span)

    def run(self) -> None:
        k = self.k
        if len(k.workgroup_size) != 3 or any(not isinstance(d, int) or d < 1 for d in k.workgroup_size):
            self.fail(f"bad workgroup size {k.workgroup_size}", k.span)
        names: set[str] = set()
        for p in k.params:
            if p.name in names:
                self.fail(f"duplicate parameter `{p.name}`", p.span)
            names.add(p.name)
            if p.category not in N.PARAM_CATEGORIES:
                self.fail(f"unknown category `{p.category}`", p.span)
            self.check_type(p.ty, p.span)
            if p.category == "scalar" and not T.is_scalar(p.ty):
                self.fail(f"scalar parameter `{p.name}` of type `{p.ty}`", p.span)
            if p.category == "uniform" and not T.is_struct(p.ty):
                self.fail(f"uniform parameter `{p.name}` must be a struct", p.span)
            if p.shape is not None and p.category not in N.TENSOR_CATEGORIES:
                self.fail(f"shape contract on non-tensor `{p.name}`", p.span)
        for w in k.workgroup_arrays:
            if w.name in names:
                self.fail(f"workgroup array `{w.name}` shadows a name", w.span)
            names.add(w.name)
            if w.ty not in T.NUMERIC or w.size < 1:
                self.fail(f"bad workgroup array `{w.name}`", w.span)
        for name, ty in k.locals.items():
            if name in names:
                self.fail(f"local `{name}` collides with a parameter or workgroup array", k.span)
            self.check_type(ty, k.span)
        for b in k.builtins:
            if b not in N.BUILTINS:
                self.fail(f"unknown builtin `{b}`", k.span)
        self.body(k.body, 0)

    def check_type(self, t: str, span) -> None:
        if t in self.valid_types:  # most expressions repeat a handful of types
            return
        if not T.is_valid(t):
            self.fail(f"invalid type `{t}`", span)
        if T.is_struct(t) and T.struct_name(t) not in self.structs:
            self.fail(f"undeclared struct `{t}`", span)
        self.valid_types.add(t)

    def body(self, stmts: list[N.Stmt], loops: int) -> None:
        for s in stmts:
            self.stmt(s, loops)

    def local(self, name: str, span) -> str:
        if name not in self.k.locals:
            self.fail(f"undeclared local `{name}`", span)
        return self.k.locals[name]

    def declare(self, name: str, span) -> None:
        """Locals are unique per kernel: each is declared by exactly one Let or For."""
        if name in self.declared:
            self.fail(f"local `{name}` is declared twice", span)
        self.declared.add(name)

    def stmt(self, s: N.Stmt, loops: int) -> None:
        if isinstance(s, N.Let):
            self.declare(s.name, s.span)
            if self.local(s.name, s.span) != s.ty:
                self.fail(f"`{s.name}` declared as `{s.ty}` but recorded as `{self.k.locals[s.name]}`", s.span)
            if s.value is not None:
                self.same(self.expr(s.value), s.ty, s.span)
            elif not s.mutable:  # assigned later, so targets need a mutable variable
                self.fail(f"`{s.name}` is declared without a value but not mutable", s.span)
        elif isinstance(s, N.Assign):
            root = s.target
            while isinstance(root, (N.Field, N.Swizzle)):
                root = root.value
            if not isinstance(root, N.Var) or root.name not in self.k.locals:
                self.fail("assignment target is not a local", s.span)
            self.same(self.expr(s.value), self.expr(s.target), s.span)
        elif isinstance(s, N.Store):
            elem = self.resource(s.resource, s.span, write=True)
            self.index(s.resource, s.index)
            self.same(self.expr(s.value), elem, s.span)
        elif isinstance(s, N.If):
            self.same(self.expr(s.cond), "bool", s.span)
            self.body(s.then_body, loops)
            self.body(s.else_body, loops)
        elif isinstance(s, N.While):
            self.same(self.expr(s.cond), "bool", s.span)
            self.body(s.body, loops + 1)
        elif isinstance(s, N.Loop):
            self.body(s.body, loops + 1)
        elif isinstance(s, N.For):
            if s.ty not in T.INTS or self.local(s.var, s.span) != s.ty:
                self.fail(f"bad loop variable `{s.var}`", s.span)
            self.declare(s.var, s.span)
            self.same(self.expr(s.start), s.ty, s.span)
            self.same(self.expr(s.end), s.ty, s.span)
            self.body(s.body, loops + 1)
        elif isinstance(s, (N.Break, N.Continue)):
            if loops == 0:
                self.fail("`break`/`continue` outside a loop", s.span)
        elif isinstance(s, (N.Return, N.Barrier)):
            pass
        elif isinstance(s, N.Reduce):
            if s.op not in ("sum", "max") or s.n < 1 or s.n & (s.n - 1):
                self.fail("bad collective", s.span)
            ty = self.expr(s.value)
            self.same(self.local(s.target, s.span), ty, s.span)
            self.scratch(s.scratch, ty, s.n, s.span)
        elif isinstance(s, N.Softmax):
            if s.n < 1 or s.n & (s.n - 1):
                self.fail("bad collective", s.span)
            self.same(self.resource(s.resource, s.span, write=True), "f32", s.span)
            self.same(self.expr(s.base), "u32", s.span)
            self.same(self.expr(s.count), "u32", s.span)
            self.scratch(s.scratch, "f32", s.n, s.span)
        elif isinstance(s, N.Atomic):
            p = self.params.get(s.resource)
            w = self.wg.get(s.resource)
            ty = p.ty if p is not None and p.category in ("read_write", "write") else w.ty if w is not None else None
            if ty not in T.INTS + ("f32",) or s.op not in N.ATOMIC_OPS or (ty == "f32" and s.op != "add") \
                    or (s.compare is not None) != (s.op == "compare_exchange"):
                self.fail(f"`atomic_{s.op}` on `{s.resource}`", s.span)
            self.index(s.resource, s.index)
            self.same(self.expr(s.value), ty, s.span)
            if s.compare is not None:
                self.same(self.expr(s.compare), ty, s.span)
            if s.target is not None:
                self.same(self.local(s.target, s.span), ty, s.span)
        else:
            self.fail(f"unknown statement {type(s).__name__}", s.span)

    def scratch(self, name: str, ty: str, n: int, span) -> None:
        w = self.wg.get(name)
        if w is None or w.ty != ty or w.size < n:
            self.fail(f"bad scratch array `{name}`", span)

    def same(self, got: str, want: str, span) -> None:
        if got != want:
            self.fail(f"type `{got}` where `{want}` is required", span)

    def resource(self, name: str, span, write: bool = False) -> str:
        if name in self.wg:
            return self.wg[name].ty
        p = self.params.get(name)
        if p is None or p.category in ("scalar", "uniform"):
            self.fail(f"`{name}` is not a resource", span)
        cats = N.WRITABLE_CATEGORIES if write else N.READABLE_CATEGORIES
        if p.category not in cats:
            self.fail(f"`{name}` ({p.category}) cannot be {'written' if write else 'read'}", span)
        return p.ty

    def index(self, resource: str, e: N.Expr) -> None:
        p = self.params.get(resource)
        want = "vec2<u32>" if p is not None and p.category == "image" else "u32"
        self.same(self.expr(e), want, e.span)

    def expr(self, e: N.Expr) -> str:
        ty = e.ty
        self.check_type(ty, e.span)
        if isinstance(e, N.Const):
            if ty == "bool" and not isinstance(e.value, bool):
                self.fail("bool constant with non-bool value", e.span)
            if ty in T.INTS:
                lo, hi = T.INT_RANGES[ty]
                if isinstance(e.value, bool) or not isinstance(e.value, int) or not lo <= e.value <= hi:
                    self.fail(f"constant {e.value!r} out of range for `{ty}`", e.span)
            if ty == "f32" and not isinstance(e.value, float):
                self.fail("f32 constant with non-float value", e.span)
        elif isinstance(e, N.Var):
            if e.name in self.k.locals:
                self.same(ty, self.k.locals[e.name], e.span)
            else:
                p = self.params.get(e.name)
                if p is None or p.category not in ("scalar", "uniform"):
                    self.fail(f"unknown variable `{e.name}`", e.span)
                self.same(ty, p.ty, e.span)
        elif isinstance(e, N.Builtin):
            if e.name not in self.k.builtins or ty != "vec3<u32>":
                self.fail(f"builtin `{e.name}` not declared", e.span)
        elif isinstance(e, N.Load):
            self.same(ty, self.resource(e.resource, e.span), e.span)
            self.index(e.resource, e.index)
        elif isinstance(e, N.Len):
            if e.resource not in self.wg:
                self.resource_any(e.resource, e.span)
            self.same(ty, "u32", e.span)
        elif isinstance(e, (N.TensorDim, N.TensorRank)):
            p = self.params.get(e.resource)
            if p is None or p.category not in N.TENSOR_CATEGORIES:
                self.fail(f"`{e.resource}` is not a tensor", e.span)
            if isinstance(e, N.TensorDim):
                self.same(self.expr(e.axis), "u32", e.span)
            self.same(ty, "u32", e.span)
        elif isinstance(e, N.ImageSize):
            p = self.params.get(e.resource)
            if p is None or p.category != "image" or e.axis not in (0, 1):
                self.fail(f"`{e.resource}` is not an image", e.span)
        elif isinstance(e, N.Field):
            st = self.expr(e.value)
            decl = self.structs.get(T.struct_name(st)) if T.is_struct(st) else None
            f = next((f for f in decl.fields if f.name == e.name), None) if decl else None
            if f is None:
                self.fail(f"no field `{e.name}` on `{st}`", e.span)
            self.same(ty, f.ty, e.span)
        elif isinstance(e, N.Swizzle):
            vt = self.expr(e.value)
            if not T.is_vector(vt) or not 1 <= len(e.lanes) <= 4 or \
                    any(c not in "xyzw"[:T.vec_len(vt)] for c in e.lanes):
                self.fail(f"bad swizzle `.{e.lanes}` on `{vt}`", e.span)
            want = T.elem_of(vt) if len(e.lanes) == 1 else T.vec(T.elem_of(vt), len(e.lanes))
            self.same(ty, want, e.span)
        elif isinstance(e, N.Unary):
            ot = self.expr(e.operand)
            self.same(ty, ot, e.span)
            if e.op == "neg" and T.elem_of(ot) not in ("i32", "f32"):
                self.fail(f"negation of `{ot}`", e.span)
            if e.op == "not" and ot not in ("bool", "u32", "i32"):
                self.fail(f"`!` of `{ot}`", e.span)
            if e.op not in N.UNARY_OPS:
                self.fail(f"unknown unary op `{e.op}`", e.span)
        elif isinstance(e, N.Binary):
            self.binary(e)
        elif isinstance(e, N.Cast):
            vt = self.expr(e.value)
            if not T.is_scalar(vt) or not T.is_scalar(ty) or (ty == "bool" and vt != "bool"):
                self.fail(f"cast `{vt}` as `{ty}`", e.span)
        elif isinstance(e, N.Call):
            if e.func not in N.INTRINSICS or len(e.args) != N.INTRINSICS[e.func]:
                self.fail(f"bad intrinsic call `{e.func}`", e.span)
            arg_types = [self.expr(a) for a in e.args]
            if e.func in RULE_CALLS:  # one rule on scalars: its argument and result types
                rule = call_rule(e.func, arg_types[0])
                kinds = RULES[rule].args if rule else ()
                if rule is None or [CALL_RESULT[k] for k in kinds] != arg_types:
                    self.fail(f"`{e.func}` of `{', '.join(arg_types)}`", e.span)
                self.same(ty, CALL_RESULT[RULES[rule].ret], e.span)
        elif isinstance(e, N.Construct):
            if not T.is_vector(ty):
                self.fail("construct of non-vector", e.span)
            lanes = 0
            for a in e.args:
                at = self.expr(a)
                if T.elem_of(at) != T.elem_of(ty):
                    self.fail(f"lane type `{at}` in `{ty}`", e.span)
                lanes += T.vec_len(at) if T.is_vector(at) else 1
            if lanes not in (1, T.vec_len(ty)):
                self.fail(f"{lanes} lanes for `{ty}`", e.span)
        elif isinstance(e, N.Select):
            self.same(self.expr(e.cond), "bool", e.span)
            self.same(self.expr(e.if_true), ty, e.span)
            self.same(self.expr(e.if_false), ty, e.span)
        else:
            self.fail(f"unknown expression {type(e).__name__}", e.span)
        return ty

    def resource_any(self, name: str, span) -> None:
        p = self.params.get(name)
        if p is None or p.category in ("scalar", "uniform", "image"):
            self.fail(f"`{name}` has no length", span)

    def binary(self, e: N.Binary) -> None:
        lt, rt = self.expr(e.lhs), self.expr(e.rhs)
        if e.op not in N.BINARY_OPS:
            self.fail(f"unknown binary op `{e.op}`", e.span)
        if e.op in ("shl", "shr"):
            if T.elem_of(lt) not in T.INTS or rt not in T.INTS or e.ty != lt:
                self.fail(f"shift `{lt}` by `{rt}`", e.span)
            return
        if e.op in N.COMPARISONS or e.op in N.LOGICAL:
            if lt != rt or e.ty != "bool" or (e.op in N.LOGICAL and lt != "bool"):
                self.fail(f"`{e.op}` on `{lt}` and `{rt}`", e.span)
            return
        if lt == rt == e.ty:
            return
        if T.is_vector(e.ty) and {lt, rt} == {e.ty, T.elem_of(e.ty)}:
            return
        if T.is_matrix(lt) and e.op == "mul" and (rt == e.ty == "f32" or (T.is_vector(rt) and rt == e.ty)
                                                   or (rt == "f32" and e.ty == lt)):
            return
        self.fail(f"`{e.op}` of `{lt}` and `{rt}` giving `{e.ty}`", e.span)
