"""The lane-serial Slang form of a kernel that synchronises its workgroup, for Slang's CPU
target (slangpy's CPU device), which runs a workgroup's threads one after another and has
no barrier: `GroupMemoryBarrierWithGroupSync` does not compile for it.

One invocation runs a whole workgroup. The body is cut at its barriers into segments;
each segment is a loop over the workgroup's lanes, so every lane finishes a segment before
any lane starts the next, which is what a barrier guarantees. Locals live in arrays with
one slot per lane, workgroup arrays are ordinary arrays. Control flow that contains a
barrier must be uniform across the workgroup (it is on GPUs too), so its condition is
evaluated on the first live lane. `return` retires a lane; `break`/`continue` of a loop
that contains a barrier apply to the whole workgroup. Collectives arrive as plain IR
(ir/legalize.py): each level of their tree is one segment.
"""

from __future__ import annotations

from typing import Optional

from goldy_import.errors import BackendError
from goldy_import.ir import abi as A
from goldy_import.ir import layout as L
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.pipeline import for_target

from ..guard import emitter
from .text import (ENTRY_POINT, FAULTS, FAULTS_TYPE, INDENT, Names, Printer, _slang_rmw, args_block,
                         has_sync, param_type, site_comments, slang_type, struct_decl)

LANE = "_goldy_t"
ALIVE = "_goldy_alive"
MAX_LANE_BYTES = 4 << 20  # per-lane local storage lives on the host stack


class LanePrinter(Printer):
    def __init__(self, kernel: N.Kernel, names: Names):
        super().__init__(kernel, names)
        x, y, z = kernel.workgroup_size
        self.wg = (x, y, z)
        self.lanes_n = x * y * z
        self.decls: list[str] = []  # extra per-lane arrays, declared at the top
        self.depth = 0  # lane-local loops open inside the current segment
        # flags a segment raises for `break`/`continue` of a loop that holds a barrier
        self.brk: Optional[str] = None
        self.cont: Optional[str] = None

    # -- names
    def local(self, name: str) -> str:
        return f"{self.names(name)}[{LANE}]"

    def builtin(self, name: str) -> str:
        if name == "workgroup_size":
            return super().builtin(name)
        return {"global_id": "_goldy_gid", "local_id": "_goldy_lid", "workgroup_id": "_goldy_wid",
                "num_workgroups": "_goldy_nwg"}[name]

    def lane_array(self, stem: str, ty: str) -> str:
        name = self.fresh(stem)
        self.decls.append(f"{slang_type(ty, self.names)} {name}[{self.lanes_n}] = {{}};")
        return name

    # -- statements inside a segment
    def s_Let(self, s: N.Let, d: int) -> list[str]:
        if s.value is None:
            return []
        return [self.line(d, f"{self.local(s.name)} = {self.expr(s.value)};")]

    def loop_var_init(self, s: N.For, start: str) -> str:
        return f"{self.local(s.var)} = {start}"

    def exit_lane(self, d: int) -> str:
        """Leave this lane's part of the segment: out of a lane-local loop, or on to the
        next lane."""
        return self.line(d, "break;" if self.depth > 0 else "continue;")

    def s_Return(self, s: N.Return, d: int) -> list[str]:
        return [self.line(d, f"{ALIVE}[{LANE}] = false;"), self.exit_lane(d)]

    def s_Break(self, s: N.Break, d: int) -> list[str]:
        if self.depth > 0:
            return super().s_Break(s, d)
        self.brk = self.brk or self.fresh("brk")
        return [self.line(d, f"{self.brk} = true;"), self.exit_lane(d)]

    def s_Continue(self, s: N.Continue, d: int) -> list[str]:
        if self.depth > 0:
            return super().s_Continue(s, d)
        self.cont = self.cont or self.fresh("cont")
        return [self.line(d, f"{self.cont} = true;"), self.exit_lane(d)]

    def lane_loop(self, s: N.Stmt, d: int, render) -> list[str]:
        self.depth += 1
        try:
            out = render(s, d)
        finally:
            self.depth -= 1
        if any(isinstance(x, N.Return) for x in N.walk_stmts([s])):
            out += [self.line(d, f"if (!{ALIVE}[{LANE}])"), self.line(d, "{"), self.exit_lane(d + 1),
                    self.line(d, "}")]
        return out

    def s_While(self, s, d):
        return self.lane_loop(s, d, super().s_While)

    def s_Loop(self, s, d):
        return self.lane_loop(s, d, super().s_Loop)

    def s_For(self, s, d):
        return self.lane_loop(s, d, super().s_For)

    def wg_rmw(self, op: str, ty: str, slot: str, v: str, c: Optional[str], old: str) -> str:
        # lanes run one after another: a plain read-modify-write is atomic
        return f"{old} = {slot}; {slot} = {_slang_rmw(op, ty, old, v, c or 'c')};"

    def barrier(self, d: int) -> list[str]:
        raise BackendError(f"kernel `{self.k.name}`: a barrier inside thread-dependent control flow")

    # -- the workgroup level
    def lanes(self, body: list[str], d: int) -> list[str]:
        """A loop over the live lanes of the workgroup running `body` (already indented
        for depth d + 1)."""
        x, y, z = self.wg
        return [
            self.line(d, f"for (uint {LANE} = 0u; {LANE} < {self.lanes_n}u; {LANE} = {LANE} + 1u)"),
            self.line(d, "{"),
            self.line(d + 1, f"if (!{ALIVE}[{LANE}]) {{ continue; }}"),
            self.line(d + 1, f"uint3 _goldy_lid = uint3({LANE} % {x}u, ({LANE} / {x}u) % {y}u, {LANE} / {x * y}u);"),
            self.line(d + 1, f"uint3 _goldy_gid = _goldy_wid * uint3({x}u, {y}u, {z}u) + _goldy_lid;"),
        ] + body + [self.line(d, "}")]

    def segment(self, stmts: list[N.Stmt], d: int) -> list[str]:
        self.brk = self.cont = None
        body = self.block(stmts, d + 1)
        brk, cont = self.brk, self.cont
        out = []
        if brk:
            out.append(self.line(d, f"bool {brk} = false;"))
        if cont:
            out.append(self.line(d, f"bool {cont} = false;"))
        out += self.lanes(body, d)
        if brk:
            out.append(self.line(d, f"if ({brk}) {{ break; }}"))
        if cont:
            out.append(self.line(d, f"if ({cont}) {{ continue; }}"))
        return out

    def uniform(self, cond: str, d: int) -> tuple[str, list[str]]:
        """Evaluate `cond` (lane-relative text) on the first live lane; if every lane has
        returned there is nothing left to do."""
        c, anyl = self.fresh("c"), self.fresh("any")
        out = [self.line(d, f"bool {c} = false;"), self.line(d, f"bool {anyl} = false;")]
        out += self.lanes([self.line(d + 1, f"{c} = {cond};"), self.line(d + 1, f"{anyl} = true;"),
                           self.line(d + 1, "break;")], d)
        out.append(self.line(d, f"if (!{anyl}) {{ return; }}"))
        return c, out

    def region(self, body: list[N.Stmt], d: int) -> list[str]:
        out: list[str] = []
        seg: list[N.Stmt] = []
        for s in body:
            if not has_sync(s):
                seg.append(s)
                continue
            if seg:
                out += self.segment(seg, d)
                seg = []
            out += self.sync_stmt(s, d)
        if seg:
            out += self.segment(seg, d)
        return out

    def sync_stmt(self, s: N.Stmt, d: int) -> list[str]:
        if isinstance(s, N.Barrier):
            return []  # the segment boundary is the barrier
        if isinstance(s, N.If):
            c, out = self.uniform(self.expr(s.cond), d)
            out += [self.line(d, f"if ({c})"), self.line(d, "{")] + self.region(s.then_body, d + 1) + [self.line(d, "}")]
            if s.else_body:
                out += [self.line(d, "else"), self.line(d, "{")] + self.region(s.else_body, d + 1) + [self.line(d, "}")]
            return out
        if isinstance(s, N.While):
            c, head = self.uniform(self.expr(s.cond), d + 1)
            return ([self.line(d, "for (;;)"), self.line(d, "{")] + head + [self.line(d + 1, f"if (!{c}) {{ break; }}")]
                    + self.region(s.body, d + 1) + [self.line(d, "}")])
        if isinstance(s, N.Loop):
            return [self.line(d, "for (;;)"), self.line(d, "{")] + self.region(s.body, d + 1) + [self.line(d, "}")]
        if isinstance(s, N.For):
            return self.uniform_for(s, d)
        raise BackendError(f"kernel `{self.k.name}`: cannot serialise {type(s).__name__} for the CPU target")

    def uniform_for(self, s: N.For, d: int) -> list[str]:
        v = self.local(s.var)
        end = self.lane_array("end", s.ty)
        one = "1u" if s.ty == "u32" else "1"
        step = f"{v} + {one}" if s.ty == "u32" else f"wrapping_add({v}, 1)"
        init = [self.line(d + 1, f"{v} = {self.expr(s.start)};"), self.line(d + 1, f"{end}[{LANE}] = {self.expr(s.end)};")]
        if s.inclusive:
            more = self.lane_array("more", "bool")
            init.append(self.line(d + 1, f"{more}[{LANE}] = ({v} <= {end}[{LANE}]);"))
            advance = [self.line(d + 3, f"{more}[{LANE}] = ({v} != {end}[{LANE}]);"), self.line(d + 3, f"{v} = {step};")]
            test = f"{more}[{LANE}]"
        else:
            advance = [self.line(d + 3, f"{v} = {step};")]
            test = f"({v} < {end}[{LANE}])"
        first = self.fresh("first")
        out = self.lanes(init, d)
        out += [self.line(d, f"for (bool {first} = true; ; {first} = false)"), self.line(d, "{"),
                self.line(d + 1, f"if (!{first})"), self.line(d + 1, "{")]
        out += self.lanes(advance, d + 2)
        out.append(self.line(d + 1, "}"))
        c, head = self.uniform(test, d + 1)
        out += head + [self.line(d + 1, f"if (!{c}) {{ break; }}")]
        out += self.region(s.body, d + 1) + [self.line(d, "}")]
        return out


@emitter("Slang")
def emit_lane_serial(kernel: N.Kernel) -> str:
    """A complete Slang module for the CPU target: one `[numthreads(1, 1, 1)]` invocation per
    workgroup, dispatched with the kernel's group count as its thread count."""
    kernel = for_target(kernel, "slang").kernel  # collectives as plain IR: segments and lane loops
    names = Names(kernel)
    pr = LanePrinter(kernel, names)
    n = pr.lanes_n
    per_lane = sum(4 * _words(ty, kernel) for ty in kernel.locals.values()) * n
    if per_lane > MAX_LANE_BYTES:
        raise BackendError(f"kernel `{kernel.name}`: {per_lane} bytes of per-lane locals for a workgroup of {n} "
                           f"exceed the CPU target's {MAX_LANE_BYTES} byte budget")
    body = pr.region(kernel.body, 1)
    out = [f"// kernel `{kernel.name}` from {kernel.source_file}: lane-serial form for Slang's CPU target"]
    out += site_comments(kernel) + ["import goldy_abi;", ""] + pr.helper_lines()
    for s in kernel.structs:
        out += struct_decl(s, names) + [""]
    out += args_block(kernel, names)
    out += ['[shader("compute")]', "[numthreads(1, 1, 1)]",
            f"void {ENTRY_POINT}(uint3 _goldy_sv_gid : SV_DispatchThreadID)", "{",
            f"{INDENT}uint3 _goldy_wid = _goldy_sv_gid;  // one invocation per workgroup",
            f"{INDENT}uint3 _goldy_nwg = _goldy_args._goldy_nwg;"]
    for p in kernel.params:
        if p.category == "uniform":
            out.append(f"{INDENT}{slang_type(p.ty, names)} {names(p.name)} = _goldy_args.{names(p.name)}[0];")
        else:
            out.append(f"{INDENT}{param_type(p, names)} {names(p.name)} = _goldy_args.{names(p.name)};")
    if A.has_error_word(kernel):
        out.append(f"{INDENT}{FAULTS_TYPE} {FAULTS} = _goldy_args.{FAULTS};")
    for w in kernel.workgroup_arrays:
        out.append(f"{INDENT}{slang_type(w.ty)} {names(w.name)}[{w.size}] = {{}};")
    for name, ty in kernel.locals.items():  # zeroed: Slang cannot see that every lane writes before it reads
        out.append(f"{INDENT}{slang_type(ty, names)} {names(name)}[{n}] = {{}};")
    out += [INDENT + x for x in pr.decls]
    out.append(f"{INDENT}bool {ALIVE}[{n}] = {{}};")
    out.append(f"{INDENT}for (uint _goldy_i = 0u; _goldy_i < {n}u; _goldy_i = _goldy_i + 1u) {{ {ALIVE}[_goldy_i] = true; }}")
    out += body
    out.append("}")
    return "\n".join(out) + "\n"


def _words(ty: str, kernel: N.Kernel) -> int:
    if T.is_struct(ty):
        decl = kernel.struct(T.struct_name(ty))
        return L.struct_layout(decl).stride // 4 if decl else 1
    return max(1, L.size_of(ty) // 4)
