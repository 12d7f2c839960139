"""Calls: the builtin statements (barrier, collectives, atomics), thread builtins, vector
constructors, math functions and methods, UFCS forms and resource methods.
"""

from __future__ import annotations

from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import dialect as D
from .state import CATEGORY_WORDS, Binding, LowererState, read_write_help
from .consts import lower_size
from .suggest import closest
from .syntax import named, node_text, plural


class BuiltinLowering(LowererState):
    def callee_name(self, fnode) -> tuple[Optional[str], Optional[object]]:
        """Name of a builtin callee (`gpu::x`, `goldy::gpu::x`, bare `x`) and its turbofish node."""
        turbofish = None
        if fnode.type == "generic_function":
            turbofish = fnode.child_by_field_name("type_arguments")
            fnode = fnode.child_by_field_name("function")
        if fnode.type == "identifier":
            return node_text(fnode), turbofish
        if fnode.type == "scoped_identifier":
            path = fnode.child_by_field_name("path")
            pt = tuple(node_text(path).replace(" ", "").split("::")) if path is not None else ()
            if pt in D.GPU_PATHS:
                return node_text(fnode.child_by_field_name("name")), turbofish
        return None, turbofish

    def lower_statement_call(self, call, target: Optional[tuple]) -> Optional[list[N.Stmt]]:
        """Builtins that are statements: barrier, collectives, atomics. `target` is
        (name_node, kind) for `let x = ...`/`x = ...`; returns None for ordinary calls."""
        name, turbofish = self.callee_name(call.child_by_field_name("function"))
        if name not in D.STATEMENT_BUILTINS or name == "workgroup_array":
            return None
        sp = self.span(call)
        args = named(call.child_by_field_name("arguments"))
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
                           f"{plural(len(args), 'argument')} given")
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
                           call, f"{plural(len(args), 'argument')} given")
                return []
            n = self.collective_size(name, turbofish, call)
            buf = self.resource_arg(args[0], writable=True, readable=True)
            base = self.lower_expr(args[1], "u32")
            count = self.lower_expr(args[2], "u32")
            scratch = self.wgarray_arg(args[3], "f32")
            if n is None or buf is None or base is None or count is None or scratch is None:
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
        if name in D.ATOMICS:
            return self.lower_atomic(call, name, args, target)
        return None

    def collective_target(self, target, ty: str) -> Optional[str]:
        node, kind, _pre, declared = target
        if kind == "let":
            return declared(ty)
        name = node_text(node)
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
        n: Optional[int]
        if turbofish is None:
            n = self.wg_size[0]
            where = call
        else:
            targs = named(turbofish)
            if len(targs) != 1:
                self.error("G0038", f"`{name}` takes one size argument `::<N>`", turbofish,
                           "expected an integer")
                return None
            n = lower_size(self, targs[0])
            if n is None:
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
        b = self.resolve(node, node_text(node))
        if b is None:
            return None
        if b.kind != "wgarray":
            self.error("G0038", f"`{node_text(node)}` is not a workgroup array", node, "expected a workgroup array",
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
        name = node_text(inner)
        b = self.resolve(inner, name)
        if b is None:
            return None
        p = self.kernel_param(b.ir_name) if b.kind == "resource" else None
        ok_cats = N.BUFFER_CATEGORIES if buffers_only else N.BUFFER_CATEGORIES + N.TENSOR_CATEGORIES
        if p is None or p.category not in ok_cats:
            self.error("G0038", f"`{name}` is not a buffer parameter", inner, "expected a buffer")
            return None
        if writable and p.category not in N.WRITABLE_CATEGORIES:
            self.error("G0022", f"cannot write to read-only `{name}`", inner, f"{CATEGORY_WORDS[p.category]}",
                       read_write_help(p))
            return None
        if readable and p.category not in N.READABLE_CATEGORIES:
            self.error("G0022", f"cannot read write-only `{name}`", inner, f"{CATEGORY_WORDS[p.category]}",
                       read_write_help(p, " to read it"))
            return None
        return p.name

    def expr_call_expression(self, node, expected):
        fnode = node.child_by_field_name("function")
        args = named(node.child_by_field_name("arguments"))
        if fnode.type == "field_expression":
            return self.lower_method(node, fnode, args, expected)
        name, turbofish = self.callee_name(fnode)
        if fnode.type == "scoped_identifier" and name is None:
            parts = node_text(fnode).replace(" ", "").split("::")
            if len(parts) == 2 and parts[0] in ("f32", "u32", "i32"):
                return self.lower_ufcs(node, parts[0], parts[1], args, expected)
            if parts[-1] in D.ALLOCATING_TYPES or (len(parts) >= 2 and parts[-2] in D.ALLOCATING_TYPES):
                self.error("G0009", "heap allocation is not supported", node, "allocates here",
                           ["use a `workgroup_array::<T, N>()` or a buffer parameter"])
                return None
            if parts[0] in ("std", "core"):
                self.error("G0015", f"call to `{node_text(fnode)}` is not supported", fnode, "standard library call",
                           ["only the dialect's builtins can be called"])
                return None
            self.error("G0015", f"call to `{node_text(fnode)}` is not supported", fnode, "not a builtin")
            return None
        if name is None:
            inner = fnode.child_by_field_name("function") if fnode.type == "generic_function" else None
            if inner is not None and inner.type == "field_expression":  # `xs.iter().collect::<T>()`
                m = node_text(inner.child_by_field_name("field"))
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
        if turbofish is not None and name not in D.STATEMENT_BUILTINS:
            self.error("G0012", f"`{name}` takes no generic arguments", turbofish, "generic arguments here",
                       ["the types follow from the arguments; remove `::<...>`"])
            return None
        if name in D.STATEMENT_BUILTINS:
            if name == "workgroup_array":
                self.error("G0023", "workgroup arrays must be declared at kernel top level", node,
                           "must be bound with `let` at the top of the kernel",
                           ["write `let scratch = gpu::workgroup_array::<f32, 256>();` at the top level"])
            elif name == "workgroup_barrier":
                self.error("G0025", "`workgroup_barrier()` must be a statement of its own", node,
                           "used inside an expression")
            else:
                call = f"gpu::{name}(...)" if name in D.ATOMICS else f"gpu::{name}::<N>(...)"
                self.error("G0025", f"`{name}` must be a `let` or plain assignment", node,
                           "nested inside an expression", [f"bind it first: `let r = {call};`, then use `r`"])
            return None
        if name in D.ID_BUILTINS:
            if args:
                self.error("G0029", f"`{name}` takes no arguments", node, f"{plural(len(args), 'argument')} given")
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
        known = list(D.ID_BUILTINS) + list(D.STATEMENT_BUILTINS) + list(D.MATH_FUNCTIONS) + [
            v for v in D.VECTOR_TYPES if v.islower()]
        close = closest(name, known, "builtin", "gpu::")
        if in_gpu:
            self.error("G0017", f"unknown builtin `gpu::{name}`", fnode, "not a dialect builtin",
                       [close] if close else ["see docs/dialect.md for the list of builtins"])
        else:
            self.error("G0015", f"cannot find function `{name}`", fnode, "not a builtin",
                       [close] if close else [])
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
            self.error("G0029", f"`{shown}` takes {plural(arity - (1 if receiver is not None else 0), 'argument')}",
                       node, f"{len(arg_nodes)} given")
            return None
        # the first non-literal argument sets the type the literals take (`max(0.0, x)`)
        lowered: dict[int, Optional[N.Expr]] = {}
        lead_ty = receiver.ty if receiver is not None else None
        offset = 1 if receiver is not None else 0
        fixed = D.FIXED_ARG_TYPES.get(fn, {})  # position -> type, whatever the others are
        if lead_ty is None:
            for k, a in enumerate(arg_nodes):
                if not self.is_flexible_literal(a) and k + offset not in fixed:
                    lead = lowered[k] = self.lower_expr(a, "u32" if fn == "from_bits" else expected)
                    lead_ty = lead.ty if lead is not None else None
                    break
        want = "u32" if fn == "from_bits" else lead_ty if lead_ty is not None else expected
        for k, a in enumerate(arg_nodes):
            if k not in lowered:
                lowered[k] = self.lower_expr(a, fixed.get(k + offset, want))
        vals = ([receiver] if receiver is not None else []) + [lowered[k] for k in range(len(arg_nodes))]
        if any(v is None for v in vals):
            return None
        return self.intrinsic_result(node, fn, vals, arg_nodes, shown)

    def intrinsic_result(self, node, fn, vals, arg_nodes, shown) -> Optional[N.Expr]:
        if fn in D.OPERATIONS:  # lower_operations.py
            return self.lower_operation(node, fn, vals, arg_nodes, shown)
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
        close = closest(method, D.SCALAR_METHODS, "function", f"{tyname}::")
        self.error("G0018", f"no function `{tyname}::{method}` in the dialect", node, "unknown function",
                   [close] if close else [])
        return None

    def lower_method(self, node, fnode, args, expected):
        recv_node = fnode.child_by_field_name("value")
        mname = node_text(fnode.child_by_field_name("field"))
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
            b = self.lookup(node_text(recv_node))
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
        close = closest(mname, D.SCALAR_METHODS, "method")
        self.error("G0018", f"no method `{mname}` on `{T.rust_name(recv.ty)}` in the dialect",
                   fnode.child_by_field_name("field"), "unknown method", [close] if close else [])
        return None

    def lower_resource_method(self, node, recv_node, b: Binding, mname: str, args):
        sp = self.span(node)
        name = node_text(recv_node)
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
