"""The kernel's signature: the `#[goldy::compute]` attribute, modifiers, parameters with
their ABI categories and shape contracts, and the types written in the source.
"""

from __future__ import annotations

from typing import Optional, Union

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import dialect as D
from goldy_import.ir.diagnostics import Label
from .state import Binding, LowererState
from .consts import ConstError, report, size_of_text
from .syntax import Region, const_int, ident, named, node_text


class SignatureLowering(LowererState):
    def parse_attribute(self, attr) -> tuple[int, int, int]:
        inner = next((c for c in attr.children if c.type == "attribute"), None)
        args = inner.child_by_field_name("arguments") if inner is not None else None
        if args is None:
            return (64, 1, 1)
        toks = [c for c in args.children if c.type not in ("(", ")")]
        ok = (len(toks) == 3 and toks[0].type == "identifier" and node_text(toks[0]) == "workgroup_size"
              and toks[1].type == "=" and toks[2].type == "token_tree")
        dims: list[int] = []
        if ok:
            inner = toks[2].children[1:-1] if toks[2].children and toks[2].children[0].type == "[" else []
            groups: list[list] = [[]]
            for c in inner:  # tokens, split at commas: each group is one constant expression
                if c.type == ",":
                    groups.append([])
                else:
                    groups[-1].append(c)
            groups = [g for g in groups if g] if inner and inner[-1].type == "," else groups
            for g in groups:
                v = self.attribute_size(g) if g else None
                if v is None or v is False:
                    ok = False
                    break
                if v is True:
                    return (64, 1, 1)  # the constant's error is reported
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

    def attribute_size(self, tokens: list) -> Union[int, bool, None]:
        """One `workgroup_size` extent: a literal, a `const` or a constant expression.
        None when it is not one; True when its error was reported."""
        if len(tokens) == 1 and tokens[0].type == "integer_literal":
            return const_int(tokens[0])
        if len(tokens) == 1 and tokens[0].type != "identifier":
            return None
        start, end = tokens[0].start_byte, tokens[-1].end_byte
        try:
            return size_of_text(self.ctx.consts, self.ctx.source.data[start:end])
        except ConstError as e:
            report(self, e, base=start, use=Region(tokens[0], tokens[-1]))
            return True

    def check_signature(self) -> None:
        for c in self.fn.children:
            if c.type == "function_modifiers":
                for m in c.children:
                    t = node_text(m)
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
        if rt is not None and node_text(rt) != "()":
            self.returns_value = True
            self.error("G0039", "kernel functions must not return a value", rt,
                       f"returns `{node_text(rt)}`",
                       ["write results into a `&mut [T]` or `gpu::Scattered<T>` parameter"])

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
            name = ident(pat)
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
                    self.error("G0003", f"unsupported parameter type `{node_text(ty) if ty else '?'}`",
                               ty or c, "not a kernel parameter type")
                self.scopes[0][name] = Binding(name, "", False, "poisoned")
                continue
            category, elem = param
            shape, fact = None, False
            for a in attrs:
                if self.fact_attribute(a, category, name):
                    fact = True
                else:
                    shape = self.tensor_attribute(a, category, name, shape)
            p = N.Param(name, category, elem, self.span(pat), shape, fact)
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

    def fact_attribute(self, attr, category: str, pname: str) -> bool:
        """`#[fact]`: a scalar fixed when the op is recorded (always baked: runtime/specialization.py)."""
        a = next((x for x in attr.children if x.type == "attribute"), None)
        if a is None or node_text(a.child(0)) != "fact":
            return False
        if a.child_by_field_name("arguments") is not None or a.child_by_field_name("value") is not None:
            self.error("G0002", "`#[fact]` takes no arguments", attr, "not understood", ["write `#[fact]`"])
        elif category != "scalar":
            self.error("G0002", f"`#[fact]` on non-scalar parameter `{pname}`", attr,
                       "only scalar parameters can be facts",
                       ["a tensor's shape is baked by specialization without an attribute; drop `#[fact]`"])
        return True

    def tensor_attribute(self, attr, category: str, pname: str, shape):
        a = next((x for x in attr.children if x.type == "attribute"), None)
        if a is None:
            return shape
        path = a.child(0)
        if node_text(path) != "tensor":
            self.error("G0002", f"unknown parameter attribute `{node_text(path)}`", attr, "not understood",
                       ["only `#[tensor(shape = [...])]` is accepted on kernel parameters"])
            return shape
        if category not in N.TENSOR_CATEGORIES:
            self.error("G0026", f"`#[tensor]` contract on non-tensor parameter `{pname}`", attr,
                       "shape contracts need a tensor view",
                       ["declare the parameter as `gpu::Tensor<T>`, `gpu::TensorMut<T>` or `gpu::TensorWrite<T>`"])
            return shape
        args = a.child_by_field_name("arguments")
        toks = [c for c in args.children if c.type not in ("(", ")")] if args else []
        if not (len(toks) == 3 and node_text(toks[0]) == "shape" and toks[1].type == "=" and toks[2].type == "token_tree"):
            self.error("G0030", "invalid tensor shape contract", args or attr,
                       "expected `shape = [...]`", ["write `#[tensor(shape = [rows, _, 4])]`"])
            return shape
        dims: list = []
        for c in toks[2].children:
            if c.type in ("[", "]", ","):
                continue
            t = node_text(c)
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
                self.reject_type(inner)
                return None
            self.error("G0010", "references are only allowed as slice parameters", ty,
                       f"`{node_text(ty)}` is not `&[T]` or `&mut [T]`",
                       ["take a slice `&[T]` / `&mut [T]`, or the value itself for scalars"])
            return None
        if ty.type == "generic_type":
            base = ty.child_by_field_name("type")
            name = self.gpu_type_name(base)
            args = ty.child_by_field_name("type_arguments")
            targs = named(args) if args is not None else []
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
                                   f"`{node_text(targs[0])}`",
                                   ["use `f32`, `u32`, `i32` or a four-lane vector such as `gpu::float4`"])
                        return None
                    return (cat, e)
                elem = self.element_type(targs[0], allow_struct=(cat == "read"))
                return (cat, elem) if elem else None
            if name in D.ALLOCATING_TYPES:
                self.error("G0009", f"`{name}` allocates and cannot be a kernel parameter", ty,
                           "heap type", ["pass a slice `&[T]` or `&mut [T]` instead"])
                return None
            self.error("G0003", f"unsupported parameter type `{node_text(ty)}`", ty, "not a kernel parameter type",
                       ["kernel parameters are slices, `gpu::` resources or `u32`/`i32`/`f32`/`bool` scalars"])
            return None
        self.reject_type(ty, parameter=True)
        return None

    def gpu_type_name(self, node) -> Optional[str]:
        if node is None:
            return None
        if node.type == "type_identifier":
            return node_text(node)
        if node.type == "scoped_type_identifier":
            path = node.child_by_field_name("path")
            pt = tuple(node_text(path).replace(" ", "").split("::")) if path else ()
            if pt in D.GPU_PATHS:
                return node_text(node.child_by_field_name("name"))
            return node_text(node)
        return None

    def scalar_type(self, node) -> Optional[str]:
        t = node_text(node)
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
        if node.type == "type_identifier" and node_text(node) in self.ctx.structs:
            if not allow_struct:
                self.error("G0003", f"struct elements are only supported in read-only slices", node,
                           f"`{node_text(node)}` elements here",
                           [f"take `&[{node_text(node)}]`, or write the fields to separate `&mut [T]` buffers"])
                return None
            return self.struct_type(node)
        t = self.value_type(node)
        if t is None:
            return None
        self.error("G0003", f"unsupported buffer element type `{node_text(node)}`", node,
                   "not a buffer element", ["buffer elements are `u32`, `i32`, `f32`, `bool` or a `#[goldy::gpu]` struct"])
        return None

    def struct_type(self, node) -> Optional[str]:
        name = node_text(node)
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

    def unknown_type(self, node) -> Optional[str]:
        """Report a type name that is not part of the dialect, saying what it is if the file
        declares it. Always None."""
        name = node_text(node)
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
                n = node_text(length)
                if elem.type == "primitive_type" and n in ("2", "3", "4") and node_text(elem) in ("f32", "u32", "i32"):
                    return T.vec(node_text(elem), int(n))
                if elem.type == "array_type":
                    inner = elem.child_by_field_name("length")
                    ie = elem.child_by_field_name("element")
                    if (inner is not None and ie is not None and node_text(ie) == "f32"
                            and node_text(inner) == n and n in ("2", "3", "4")):
                        return T.mat(int(n))
            self.error("G0004", f"unsupported array type `{node_text(node)}`", node,
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

    def reject_type(self, node, parameter: bool = False) -> Optional[str]:
        """Report a type the dialect does not have. Always None (typed so callers can return it)."""
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
            name = node_text(base) if base is not None else node_text(node)
            if name in D.ALLOCATING_TYPES:
                self.error("G0009", f"`{name}` allocates on the heap", node, "heap type",
                           ["kernels cannot allocate; use a buffer parameter or a workgroup array"])
            else:
                self.error("G0012", "generic types are not supported", node, "generic type")
        elif t == "pointer_type":
            self.error("G0010", "raw pointers are not supported", node, "pointer type")
        elif t in ("type_identifier", "scoped_type_identifier") and parameter:
            name = self.gpu_type_name(node) or ""
            if name in self.ctx.structs:
                self.error("G0003", f"struct parameter `{name}` must be passed as a uniform", node,
                           "struct by value", [f"declare it as `gpu::Uniform<{name}>`, or read `&[{name}]`"])
            elif name in D.VECTOR_TYPES:
                self.error("G0003", f"vector parameter `{node_text(node)}` is not supported", node,
                           "vector by value", ["pass the lanes as scalars, or a `gpu::Uniform<S>` struct"])
            else:
                self.value_type(node)
        elif t == "array_type" and parameter:
            self.error("G0003", f"unsupported parameter type `{node_text(node)}`", node,
                       "arrays are not kernel parameters", ["take a slice `&[T]` instead"])
        elif t == "function_type":
            self.error("G0006", "function types are not supported", node, "function type")
        else:
            self.error("G0004", f"unsupported type `{node_text(node)}`", node, "no lowering for this type")
        return None
