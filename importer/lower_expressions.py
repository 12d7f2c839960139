"""Expressions: literals and their typing, names, operators with Rust's typing rules,
casts, fields and swizzles, indexing, `if` and blocks used as values.
"""

from __future__ import annotations

import difflib
from fractions import Fraction
from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import dialect as D
from goldy_import.ir.diagnostics import Label
from .consts import lower_file_const
from .state import CATEGORY_WORDS, MAX_DEPTH, LowererState, has_effects, read_write_help
from .syntax import FLOAT_TEXT, named, node_text, split_int_literal, parse_int_digits


class ExpressionLowering(LowererState):
    def is_flexible_literal(self, node, depth: int = 0) -> bool:
        """An expression whose type Rust would infer from context (unsuffixed literals)."""
        key = (node.start_byte, node.end_byte, node.type)
        known = self.flexible_cache.get(key)
        if known is None:
            known = self.flexible_cache[key] = self.flexible_uncached(node, depth)
        return known

    def flexible_uncached(self, node, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return False  # lowering reports the nesting
        depth += 1
        t = node.type
        if t == "integer_literal":
            return split_int_literal(node_text(node))[1] is None
        if t == "if_expression":  # `if c { 1 } else { 2 }`
            alt = node.child_by_field_name("alternative")
            arms = [node.child_by_field_name("consequence")] + (named(alt)[:1] if alt is not None else [])
            return alt is not None and all(a is not None and self.is_flexible_literal(a, depth) for a in arms)
        if t == "block":
            items = named(node)
            return bool(items) and len(items) == 1 and self.is_flexible_literal(items[0], depth)
        if t == "float_literal":
            return True
        if t == "parenthesized_expression":
            return all(self.is_flexible_literal(c, depth) for c in named(node))
        if t == "unary_expression":
            return all(self.is_flexible_literal(c, depth) for c in named(node))
        if t == "binary_expression":
            return (self.is_flexible_literal(node.child_by_field_name("left"), depth)
                    and self.is_flexible_literal(node.child_by_field_name("right"), depth))
        if t == "identifier":
            b = self.lookup(node_text(node))
            return b is not None and b.flexible
        return False

    def lower_expr(self, node, expected: Optional[str]) -> Optional[N.Expr]:
        if node is None:
            return None
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.enter(node, counted=True)  # reports and aborts
        method = self.EXPR_METHODS.get(node.type)
        e = self.reject_expr(node) if method is None else method(self, node, expected)
        self.depth -= 1
        if e is None and not self.diags:  # a failure must never pass silently
            self.error("G0028", "internal error: expression could not be lowered", node,
                       "while lowering this", ["please report this with the kernel's source"])
        return e

    def reject_expr(self, node) -> Optional[N.Expr]:
        """Report an expression outside the dialect. Always None."""
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

    def reject_macro(self, node) -> Optional[N.Expr]:
        m = node.child_by_field_name("macro")
        name = node_text(m) if m is not None else "?"
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
        inner = named(node)
        return self.lower_expr(inner[0], expected) if inner else None

    def expr_integer_literal(self, node, expected, negated=None):
        """An integer literal; `negated` is the enclosing `-` node when folding `-lit`, so
        that `-2147483648` is in range as in Rust."""
        where = negated if negated is not None else node
        digits, suffix = split_int_literal(node_text(node))
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
        s = node_text(node).replace("_", "")
        if s.endswith("f64"):
            self.error("G0004", "unsupported type `f64`", node, "`f64` literal",
                       ["use `f32`: write the literal without a suffix or with `f32`"])
            return None
        s = s.removesuffix("f32")
        try:
            Fraction(s) if not FLOAT_TEXT.match(s) else None
        except (ValueError, ZeroDivisionError):
            self.error("G0033", "invalid float literal", node, "cannot parse")
            return None
        if expected in ("u32", "i32"):
            self.error("G0019", "mismatched types", node, f"expected `{expected}`, found floating-point number",
                       [f"write an integer, or convert: `{node_text(node)} as {expected}`"])
            return None
        f = D.f32_nearest(s)
        if f is None:
            self.error("G0033", "literal out of range for `f32`", node, "rounds to infinity",
                       ["the largest finite `f32` is `f32::MAX` (about 3.4e38)"])
            return None
        return N.Const("f32", self.span(node), f)

    def expr_boolean_literal(self, node, expected):
        return N.Const("bool", self.span(node), node_text(node) == "true")

    def expr_identifier(self, node, expected):
        name = node_text(node)
        b = self.lookup(name)
        if b is not None and b.kind == "poisoned":
            return None
        if b is None:
            if name in self.ctx.consts:  # a `const` item of the file
                return lower_file_const(self, node, name)
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
        parts = node_text(node).replace(" ", "").split("::")
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
        self.error("G0020", f"cannot find `{node_text(node)}`", node, "not a known constant")
        return None

    def expr_unary_expression(self, node, expected):
        op_tok = node_text(node.child(0))
        operand_node = named(node)[0]
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
        op_tok = node_text(node.child_by_field_name("operator"))
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
        fname = node_text(fnode)
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
        parts = named(node)
        base, idx = parts[0], parts[1]
        if base.type != "identifier":
            self.error("G0035", "cannot index this expression", base,
                       "only buffers, tensors and workgroup arrays can be indexed")
            return None
        name = node_text(base)
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
                       f"`{name}` is a {CATEGORY_WORDS[p.category]}", read_write_help(p, " to read it"))
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
        then_node, inner = node.child_by_field_name("consequence"), named(alt)[0]

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
        if not root and has_effects(stmts):
            self.error("G0028", "a block that writes cannot be part of a larger expression", block,
                       "this block has side effects",
                       ["bind the value first: `let v = if ... { ... } else { ... };`, then use `v`"])
            return stmts, None
        return stmts, val

    def expr_block(self, node, expected):
        stmts, val = self.lower_value_block(node, expected, self.is_root(node))
        self.pre += stmts
        return val

    def expr_generic_function(self, node, expected):
        self.error("G0028", "unsupported expression", node, "generic function used as a value")
        return None

    def expr_unit_expression(self, node, expected):
        self.error("G0004", "the unit value `()` is not supported here", node, "unit value")
        return None

    def expr_macro_invocation(self, node, expected):
        return self.reject_macro(node)
