"""The operations that are not one math-library call: wrapping arithmetic, the bit and sign
rules of ir/rules.py CALLS (typed here as Rust types them), `normalize`, `cross`, and the
atomics (`atomic_<op>` on a `&mut [T]` buffer or a workgroup array).

`normalize(v)` is `v / length(v)` and `cross(a, b)` glam's lane formula, written as plain IR
so every target computes them with the rounding of their parts (docs/semantics.md)."""

from __future__ import annotations

import copy
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.rules import CALL_RESULT, RULES, call_rule

from . import dialect as D
from .lower_builtins import BuiltinLowering
from .syntax import node_text, plural

WRAPPING, RULE_TYPES = D.WRAPPING, D.RULE_CALL_TYPES


def _types(tys) -> str:
    return " or ".join(f"`{t}`" for t in tys)


class OperationLowering(BuiltinLowering):
    def lower_operation(self, node, fn: str, vals: list[N.Expr], arg_nodes, shown: str) -> Optional[N.Expr]:
        sp = self.span(node)
        t0 = vals[0].ty
        first = len(vals) - len(arg_nodes)  # 1 when the first value is a method's receiver
        where = arg_nodes[0] if arg_nodes and not first else node

        def arg_node(i: int):
            return arg_nodes[i - first] if i >= first else node

        if fn in WRAPPING:
            if t0 not in T.INTS:
                self.error("G0018", f"no method `{shown}` on `{T.rust_name(t0)}`", where,
                           "defined on `u32` and `i32`", ["f32 arithmetic has no wrapping form: use `+ - *`"])
                return None
            if vals[1].ty != t0:
                self.hint(vals[1], t0)
                self.mismatch(arg_node(1), t0, vals[1].ty)
                return None
            return N.Binary(t0, sp, WRAPPING[fn], vals[0], vals[1])
        if fn in ("normalize", "cross"):
            want = "vec3<f32>" if fn == "cross" else None
            for i, v in enumerate(vals):
                ok = v.ty == want if want else T.is_vector(v.ty) and T.elem_of(v.ty) == "f32"
                if not ok or v.ty != t0:
                    self.error("G0019", f"`{shown}` needs {'`float3` vectors' if want else 'an `f32` vector'}",
                               arg_node(i), f"found `{T.rust_name(v.ty)}`")
                    return None
            if fn == "normalize":
                v = vals[0]
                return N.Binary(t0, sp, "div", v, N.Call("f32", sp, "length", [copy.deepcopy(v)]))
            a, b = vals

            def lane(x: N.Expr, c: str) -> N.Expr:
                return N.Swizzle("f32", sp, copy.deepcopy(x), c)

            def term(i: str, j: str) -> N.Expr:  # a.i * b.j - a.j * b.i
                return N.Binary("f32", sp, "sub", N.Binary("f32", sp, "mul", lane(a, i), lane(b, j)),
                                N.Binary("f32", sp, "mul", lane(a, j), lane(b, i)))
            return N.Construct("vec3<f32>", sp, [term("y", "z"), term("z", "x"), term("x", "y")])
        rule = call_rule(fn, t0)
        if rule is None:
            self.error("G0018", f"no method `{shown}` on `{T.rust_name(t0)}`", where,
                       f"defined on {_types(T.rust_name(t) for t in RULE_TYPES[fn])}")
            return None
        kinds = RULES[rule].args
        for i, (v, k) in enumerate(zip(vals[1:], kinds[1:]), 1):
            if v.ty != CALL_RESULT[k]:
                self.hint(v, CALL_RESULT[k])
                self.mismatch(arg_node(i), CALL_RESULT[k], v.ty)
                return None
        return N.Call(CALL_RESULT[RULES[rule].ret], sp, fn, vals)

    def lower_atomic(self, call, name: str, args, target) -> list[N.Stmt]:
        """`atomic_<op>(buf, i, v)`, `atomic_compare_exchange(buf, i, current, new)`; `target`
        as for collectives (`let old = ...`, `old = ...`, or None when discarded)."""
        op = name.removeprefix("atomic_")
        cas = op == "compare_exchange"
        shape = "(buffer, index, current, new)" if cas else "(buffer, index, value)"
        if len(args) != (4 if cas else 3):
            self.error("G0029", f"`{name}` takes {4 if cas else 3} arguments {shape}", call,
                       f"{plural(len(args), 'argument')} given")
            return []
        res, ty = self.atomic_resource(args[0], name)
        if res is None or ty is None:
            return []
        if ty not in ("u32", "i32") and not (ty == "f32" and op == "add"):
            self.error("G0038", f"`{name}` needs a `u32` or `i32` buffer or workgroup array",
                       args[0], f"`{node_text(args[0])}` holds `{T.rust_name(ty)}`",
                       ["`atomic_add` also adds `f32`, on the backends that have float atomics (docs/semantics.md)"]
                       if ty == "f32" else [])
            return []
        index = self.lower_index(args[1])
        vals = [self.lower_expr(a, ty) for a in args[2:]]
        if index is None or any(v is None for v in vals) or \
                not all(self.expect(a, v, ty) for a, v in zip(args[2:], vals)):
            return []
        tname = None
        pre: list[N.Stmt] = []
        if target is not None:
            tname = self.collective_target(target, ty)
            if tname is None:
                return []
            pre = target[2]
        compare = vals[0] if cas else None
        return pre + [N.Atomic(self.span(call), tname, res, index, vals[-1], op=op, compare=compare)]

    def atomic_resource(self, node, name: str):
        """(resource, element type) of an atomic's first argument: a `&mut [T]` buffer or a
        workgroup array; (None, None) after reporting anything else."""
        inner = node.child_by_field_name("value") if node.type == "reference_expression" else node
        if inner is not None and inner.type == "identifier":
            b = self.lookup(node_text(inner))
            if b is not None and b.kind == "wgarray":
                w = next(w for w in self.wgarrays if w.name == b.ir_name)
                return w.name, w.ty
        buf = self.resource_arg(node, writable=True, readable=True, buffers_only=True)
        if buf is None:
            return None, None
        p = self.kernel_param(buf)
        assert p is not None
        return buf, p.ty
