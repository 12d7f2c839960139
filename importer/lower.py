"""Lowering of one kernel's tree-sitter syntax to IR, with type checking.

One visitor method per syntax node; anything not on the whitelist is rejected with a
diagnostic at its span. Errors never raise: a failed sub-expression returns None and its
parent gives up quietly, so one mistake gives one diagnostic (and a name whose declaration
failed is "poisoned": its uses stay quiet).

Untyped literals take their type from context as in Rust. A `let` bound to an untyped
literal (`let mut acc = 0;`) gets its type from its first typed use; the kernel is lowered
again with those hints, which is cheaper and simpler than a full inference engine.

The work is split by concern; `KernelLowerer` puts the parts together:

    state.py              diagnostics, scopes, names, hints, initialisation, nesting
    lower_signature.py    attribute, parameters and their categories, written types
    lower_statements.py   blocks, let, assignment, if, loops
    lower_expressions.py  literals, names, operators, casts, fields, indexing, if-values
    lower_builtins.py     builtin statements and calls, math, methods
    lower_operations.py   wrapping arithmetic, bit and sign rules, normalize, cross
"""

from __future__ import annotations

from typing import Optional

from goldy_import.ir import nodes as N

from .lower_expressions import ExpressionLowering
from .lower_operations import OperationLowering
from .lower_signature import SignatureLowering
from .lower_statements import StatementLowering
from .state import MAX_DEPTH, MAX_KERNEL_ERRORS, Abort, Binding, Context
from .syntax import node_text

_text = node_text  # the name the file-level importer uses

__all__ = ["KernelLowerer", "Context", "Binding", "Abort", "MAX_DEPTH", "MAX_KERNEL_ERRORS"]


class KernelLowerer(SignatureLowering, StatementLowering, ExpressionLowering, OperationLowering):
    """Lowers one `#[goldy::compute]` function; `lower()` returns the kernel, or None when
    `diags` holds its errors."""

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
        sp = self.span(self.fn)
        lines = [self.ctx.source.line_text(n) for n in range(sp.line, sp.end_line + 1)]
        return N.Kernel(self.name, self.wg_size, self.params, self.wgarrays, structs, body,
                        builtins, self.ctx.source.filename, self.doc, sp, dict(self.locals), lines)


KernelLowerer.EXPR_METHODS = {name.removeprefix("expr_"): getattr(KernelLowerer, name)
                              for name in dir(KernelLowerer) if name.startswith("expr_")}
