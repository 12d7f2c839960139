"""A compact, Rust-like text form of the IR, for reading snapshots, debugging and docs.
Fully parenthesised, with every expression's type where it is not obvious."""

from __future__ import annotations

from . import nodes as N

_SYMBOL = {"add": "+", "sub": "-", "mul": "*", "div": "/", "rem": "%", "bitand": "&",
           "bitor": "|", "bitxor": "^", "shl": "<<", "shr": ">>", "eq": "==", "ne": "!=",
           "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "&&", "or": "||"}


def format_expr(e: N.Expr) -> str:
    if isinstance(e, N.Const):
        v = str(e.value).lower() if isinstance(e.value, bool) else repr(e.value)
        return f"{v}{e.ty}" if e.ty != "bool" else v
    if isinstance(e, N.Var):
        return e.name
    if isinstance(e, N.Builtin):
        return f"{e.name}()"
    if isinstance(e, N.Load):
        return f"{e.resource}[{format_expr(e.index)}]"
    if isinstance(e, N.Len):
        return f"{e.resource}.len()"
    if isinstance(e, N.TensorDim):
        return f"{e.resource}.dim({format_expr(e.axis)})"
    if isinstance(e, N.TensorRank):
        return f"{e.resource}.rank()"
    if isinstance(e, N.ImageSize):
        return f"{e.resource}.{'width' if e.axis == 0 else 'height'}()"
    if isinstance(e, N.Field):
        return f"{format_expr(e.value)}.{e.name}"
    if isinstance(e, N.Swizzle):
        return f"{format_expr(e.value)}.{e.lanes}"
    if isinstance(e, N.Unary):
        return f"{'-' if e.op == 'neg' else '!'}{format_expr(e.operand)}"
    if isinstance(e, N.Binary):
        return f"({format_expr(e.lhs)} {_SYMBOL.get(e.op, e.op)} {format_expr(e.rhs)})"
    if isinstance(e, N.Cast):
        return f"({format_expr(e.value)} as {e.ty})"
    if isinstance(e, N.Call):
        return f"{e.func}({', '.join(format_expr(a) for a in e.args)})"
    if isinstance(e, N.Construct):
        return f"{e.ty}({', '.join(format_expr(a) for a in e.args)})"
    if isinstance(e, N.Select):
        return f"select({format_expr(e.cond)}, {format_expr(e.if_true)}, {format_expr(e.if_false)})"
    return f"<{type(e).__name__}>"


def format_stmts(stmts: list[N.Stmt], indent: int = 1) -> list[str]:
    pad = "    " * indent
    out: list[str] = []
    for s in stmts:
        if isinstance(s, N.Let):
            value = f" = {format_expr(s.value)}" if s.value is not None else ""
            out.append(f"{pad}let {'mut ' if s.mutable else ''}{s.name}: {s.ty}{value};")
        elif isinstance(s, N.Assign):
            out.append(f"{pad}{format_expr(s.target)} = {format_expr(s.value)};")
        elif isinstance(s, N.Store):
            out.append(f"{pad}{s.resource}[{format_expr(s.index)}] = {format_expr(s.value)};")
        elif isinstance(s, N.If):
            out.append(f"{pad}if {format_expr(s.cond)} {{")
            out += format_stmts(s.then_body, indent + 1)
            if s.else_body:
                out.append(f"{pad}}} else {{")
                out += format_stmts(s.else_body, indent + 1)
            out.append(f"{pad}}}")
        elif isinstance(s, (N.While, N.Loop, N.For)):
            if isinstance(s, N.While):
                out.append(f"{pad}while {format_expr(s.cond)} {{")
            elif isinstance(s, N.Loop):
                out.append(f"{pad}loop {{")
            else:
                rng = "..=" if s.inclusive else ".."
                out.append(f"{pad}for {s.var}: {s.ty} in {format_expr(s.start)}{rng}{format_expr(s.end)} {{")
            out += format_stmts(s.body, indent + 1)
            out.append(f"{pad}}}")
        elif isinstance(s, (N.Break, N.Continue, N.Return)):
            out.append(f"{pad}{type(s).__name__.lower()};")
        elif isinstance(s, N.Barrier):
            out.append(f"{pad}workgroup_barrier();")
        elif isinstance(s, N.Reduce):
            out.append(f"{pad}{s.target} = workgroup_{s.op}::<{s.n}>({format_expr(s.value)}, {s.scratch});")
        elif isinstance(s, N.Softmax):
            out.append(f"{pad}workgroup_softmax_in_place::<{s.n}>({s.resource}, {format_expr(s.base)}, "
                       f"{format_expr(s.count)}, {s.scratch});")
        elif isinstance(s, N.Atomic):
            target = f"{s.target} = " if s.target else ""
            cmp = f"{format_expr(s.compare)}, " if s.compare is not None else ""
            out.append(f"{pad}{target}atomic_{s.op}({s.resource}, {format_expr(s.index)}, {cmp}{format_expr(s.value)});")
        else:
            out.append(f"{pad}<{type(s).__name__}>")
    return out


def format_kernel(k: N.Kernel) -> str:
    params = []
    for p in k.params:
        shape = f" shape={p.shape}" if p.shape is not None else ""
        params.append(f"{p.name}: {p.category}<{p.ty}>{shape}")
    lines = [f"kernel {k.name} workgroup_size={list(k.workgroup_size)} builtins={k.builtins}"]
    lines += [f"    param {p}" for p in params]
    lines += [f"    shared {w.name}: [{w.ty}; {w.size}]" for w in k.workgroup_arrays]
    lines += [f"    struct {s.name} {{ {', '.join(f'{f.name}: {f.ty}' for f in s.fields)} }}" for s in k.structs]
    lines.append("{")
    lines += format_stmts(k.body)
    lines.append("}")
    return "\n".join(lines)
