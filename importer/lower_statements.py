"""Statements: blocks and scopes, `let`, assignment, compound assignment, `if`, loops,
`break`/`continue`/`return`, and the places that can be assigned.
"""

from __future__ import annotations

from typing import Optional

from goldy_import.ir import nodes as N
from goldy_import.ir import types as T

from . import dialect as D
from .state import CATEGORY_WORDS, MAX_LOOP_DEPTH, Abort, Binding, LowererState, diverges, read_write_help
from .consts import lower_size
from .syntax import Region, ident, named, node_text


class StatementLowering(LowererState):
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

    def lower_block_items(self, block, top: bool = False):
        """Statements of a block (in a new scope the caller closes), and its tail
        expression node (a final expression without `;`), if any."""
        self.enter(block)
        self.scopes.append({})
        out: list[N.Stmt] = []
        if top and self.pre:
            out += self.pre
            self.pre = []
        items = named(block)
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

    def lower_statement(self, node, top: bool) -> list[N.Stmt]:
        t = node.type
        if t == "expression_statement":
            inner = named(node)
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
            if named(e):
                self.error("G0039", "kernels cannot return a value", named(e)[0], "value returned here",
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

    def lower_let(self, node, top: bool) -> list[N.Stmt]:
        sp = self.span(node)
        pat = node.child_by_field_name("pattern")
        tnode = node.child_by_field_name("type")
        vnode = node.child_by_field_name("value")
        second = node.child(1)  # `let mut`: the specifier follows `let`, unless a comment is between
        mut = second is not None and (second.type == "mutable_specifier" or (
            second.type in ("line_comment", "block_comment")
            and any(c.type == "mutable_specifier" for c in node.children)))
        if node.child_by_field_name("alternative") is not None:
            self.error("G0031", "`let ... else` is not supported", node, "refutable pattern",
                       ["use `if` to test the value"])
            return []
        if pat is None:
            return []
        if pat.type == "mut_pattern":
            mut = True
            pat = named(pat)[-1]
        if pat.type == "_":
            pat_name = None
        elif pat.type == "identifier":
            pat_name = ident(pat)
        elif pat.type in ("tuple_pattern",):
            self.error("G0004", "tuples are not supported", pat, "tuple pattern",
                       ["bind each value with its own `let`"])
            return self.poison(pat)
        else:
            self.error("G0031", "unsupported pattern", pat, "expected a name",
                       ["bind a single name: `let x = ...;`"])
            return self.poison(pat)
        declared_ty = self.value_type(tnode) if tnode is not None else None
        if tnode is not None and declared_ty is None:
            return self.poison(pat)
        decl = pat.start_byte

        def declare(ty: str, flexible: bool = False) -> str:
            ir = self.fresh(pat_name) if pat_name else self.fresh("_")
            self.locals[ir] = ty
            if pat_name:
                self.scopes[-1][pat_name] = Binding(ir, ty, mut, "local", decl, flexible, self.span(pat))
                if flexible:
                    self.flexible_locals[ir] = self.scopes[-1][pat_name]
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
                reported = len(self.diags)
                res = self.lower_statement_call(vnode, (pat, "let", holder, declare_let))
                if res is not None:
                    if pat_name and not holder and len(self.diags) > reported:  # rejected: its name stays quiet
                        self.poison(pat)
                    return res
        if vnode is None:
            if declared_ty is None:
                self.error("G0019", "type annotations needed", pat, "declared without a type or value",
                           [f"give it a type: `let {node_text(pat)}: f32;`"])
                return self.poison(pat)
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
        if flexible and declared_ty is None:  # for _lower_kernel's closure of the hints
            self.hint_edges[decl] = [b.decl for b in self.hinted_by(value, None)]
        return [N.Let(sp, ir, value.ty, value, mut)]

    def poison(self, pat) -> list[N.Stmt]:
        """After a rejected `let`/`const`: bind every name of its pattern as poisoned, so
        later uses report nothing (the first error is the one to fix)."""
        stack = [pat] if pat is not None else []
        while stack:
            n = stack.pop()
            if n.type == "identifier":
                self.scopes[-1][ident(n)] = Binding(ident(n), "", False, "poisoned")
            stack.extend(n.named_children)
        return []

    def lower_const(self, node) -> list[N.Stmt]:
        name_node = node.child_by_field_name("name")
        tnode = node.child_by_field_name("type")
        vnode = node.child_by_field_name("value")
        ty = self.value_type(tnode)
        if ty is None or vnode is None:
            return self.poison(name_node)
        self.set_root(vnode)
        value = self.lower_expr(vnode, ty)
        if value is None or not self.expect(vnode, value, ty):
            return self.poison(name_node)
        name = ident(name_node)
        ir = self.fresh(name)
        self.locals[ir] = ty
        self.scopes[-1][name] = Binding(ir, ty, False, "local", decl_span=self.span(name_node))
        return [N.Let(self.span(node), ir, ty, value, False)]

    def lower_wgarray(self, let_node, pat, pat_name, turbofish, call, top) -> list[N.Stmt]:
        if not top:
            self.error("G0023", "workgroup arrays must be declared at kernel top level", call,
                       "declared inside a nested block",
                       ["move this `let` to the top level of the kernel body, before any branch or loop"])
            return self.poison(pat)
        if pat_name is None:
            self.error("G0031", "a workgroup array needs a name", pat, "name it")
            return []
        targs = named(turbofish) if turbofish is not None else []
        if len(targs) != 2:
            self.error("G0038", "`workgroup_array` takes `::<T, N>`", turbofish or call,
                       "expected an element type and a length",
                       ["write `gpu::workgroup_array::<f32, 256>()`"])
            return self.poison(pat)
        elem = self.value_type(targs[0])
        if elem is None:
            return self.poison(pat)
        if elem not in T.NUMERIC:
            self.error("G0038", "workgroup arrays hold `u32`, `i32` or `f32`", targs[0],
                       f"`{node_text(targs[0])}` here")
            return self.poison(pat)
        size = lower_size(self, targs[1])
        if size is None:
            return self.poison(pat)
        if size <= 0 or size > 16384:
            self.error("G0038", "invalid workgroup array length", targs[1],
                       "must be between 1 and 16384 elements")
            return self.poison(pat)
        if named(call.child_by_field_name("arguments")):
            self.error("G0029", "`workgroup_array` takes no arguments", call, "arguments given")
            return self.poison(pat)
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
            b = self.lookup(node_text(left))
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
        op_tok = node_text(node.child_by_field_name("operator"))
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
            res, index, elem, _ = target
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
            name = node_text(node)
            b = self.resolve(node, name)
            if b is None or not self.assignable(node, name, b):
                return None
            if read_too:
                self.check_init(node, name, b)
            return N.Var(b.ty, self.span(node), b.ir_name)
        if node.type == "index_expression":
            base, idx = named(node)[0], named(node)[1]
            if base.type != "identifier":
                self.error("G0035", "cannot assign through this index expression", base,
                           "expected a buffer or workgroup array name")
                return None
            name = node_text(base)
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
                           f"`{name}` is a {CATEGORY_WORDS[p.category]}", read_write_help(p))
                return None
            if read_too and p.category not in N.READABLE_CATEGORIES:
                self.error("G0022", f"cannot read write-only `{name}`", node,
                           "compound assignment reads the old value", read_write_help(p, " to read it"))
                return None
            index = self.lower_resource_index(p, idx)
            return (p.name, index, p.ty, node) if index is not None else None
        if node.type == "field_expression":
            root = node
            while root.type == "field_expression":
                root = root.child_by_field_name("value")
            if root.type == "index_expression":
                base = named(root)[0]
                self.error("G0022", f"cannot assign to a field of `{node_text(base)}[_]`", node,
                           "struct buffers are read-only", ["write the field to a separate `&mut [T]` buffer"])
                return None
            if root.type != "identifier":
                self.error("G0028", "unsupported assignment target", node, "cannot assign here")
                return None
            name = node_text(root)
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
        if node.type == "unary_expression" and node_text(node).startswith("*"):
            self.error("G0010", "dereferencing is not supported", node, "dereference here")
            return None
        if node.type == "parenthesized_expression":
            return self.lower_place(named(node)[0], read_too)
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
        after_then = None if diverges(then) else self.flow()
        self.set_flow(before)
        els: list[N.Stmt] = []
        alt = node.child_by_field_name("alternative")
        if alt is not None:
            inner = named(alt)[0]
            els = self.lower_if_statement(inner) if inner.type == "if_expression" else self.lower_block(inner)
        self.set_flow(self.join(after_then, None if diverges(els) else self.flow()))
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
        if self.loop_depth > MAX_LOOP_DEPTH:
            at = block if block is not None else self.fn
            self.error("G0040", "loops are nested too deeply", self.ctx.source.span(at.start_byte, at.start_byte + 1),
                       f"more than {MAX_LOOP_DEPTH} loops deep",
                       ["merge nested loops (iterate over a combined index range) or move the inner work "
                        "into fewer levels"])
            raise Abort()
        body = self.lower_block(block)
        self.loop_depth -= 1
        self.set_flow(self.join(before, self.flow()))
        return body

    def lower_for(self, node) -> list[N.Stmt]:
        sp = self.span(node)
        pat = node.child_by_field_name("pattern")
        rng = node.child_by_field_name("value")
        rng_type = self.range_type(node, pat, rng)
        pre, self.pre = self.pre, []
        self.scopes.append({})
        name = self.fresh(ident(pat) if pat is not None and pat.type == "identifier" else "_")
        if pat is not None and pat.type == "identifier":
            flexible = rng_type is not None and all(self.is_flexible_literal(x) for x in named(rng))
            self.scopes[-1][ident(pat)] = (
                Binding(name, rng_type[0], False, "local", pat.start_byte, flexible, self.span(pat)) if rng_type
                else Binding(name, "", False, "poisoned"))  # still check the body
            if flexible:
                self.flexible_locals[name] = self.scopes[-1][ident(pat)]
        body = self.lower_loop_body(node.child_by_field_name("body"))
        self.close_scope()
        if rng_type is None:
            return []
        _, lo, hi, inclusive = rng_type
        self.locals[name] = lo.ty
        if not self.invariant(hi):  # Rust evaluates the bounds once, before the first iteration
            end = self.temp(lo.ty)
            pre.append(N.Let(hi.span, end, lo.ty, hi, False))
            hi = N.Var(lo.ty, hi.span, end)
        return pre + [N.For(sp, name, lo.ty, lo, hi, inclusive, body)]

    def range_type(self, node, pat, rng) -> Optional[tuple[str, N.Expr, N.Expr, bool]]:
        """(type, start, end, inclusive) of a `for` loop's `a..b` / `a..=b`, or None (reported)."""
        negated_end = None
        if rng is not None and rng.type == "binary_expression" and node_text(rng.child_by_field_name("operator")) == "-":
            left = rng.child_by_field_name("left")
            if left.type == "range_expression" and len(named(left)) == 1:
                # tree-sitter reads `a..-b` as `(a..) - b`; Rust reads `a..(-b)`
                negated_end = Region(rng.child_by_field_name("operator"), rng.child_by_field_name("right"))
                rng = left
        if rng is None or rng.type != "range_expression":
            self.error("G0027", "iterators are not supported", rng or node, "not a range",
                       ["loop over indices: `for i in 0..xs.len() { let x = xs[i]; ... }`"])
            return None
        parts = named(rng)
        op = next((c for c in rng.children if not c.is_named), None)
        if negated_end is not None:
            parts.append(negated_end.end_node)
        if len(parts) != 2 or op is None or node_text(op) not in ("..", "..="):
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
        return lo.ty, lo, hi, node_text(op) == "..="
