"""The operations that are not one math-library call: wrapping arithmetic, the bit and sign
rules of ir/rules.py CALLS (typed here as Rust types them), `normalize` and `cross`.

`normalize(v)` is `v / length(v)` and `cross(a, b)` glam's lane formula, written as plain IR
so every target computes them with the rounding of their parts (docs/semantics.md)."""

from __future__ import annotations

import copy
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.rules import CALL_RESULT, CALLS, RULES, call_rule

from .state import LowererState

WRAPPING = {"wrapping_add": "add", "wrapping_sub": "sub", "wrapping_mul": "mul"}
RULE_TYPES = {f: tuple(t for g, t in CALLS if g == f) for f, _ in CALLS}
OPERATIONS = frozenset(WRAPPING) | frozenset(RULE_TYPES) | {"normalize", "cross"}


def _types(tys) -> str:
    return " or ".join(f"`{t}`" for t in tys)


class OperationLowering(LowererState):
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
