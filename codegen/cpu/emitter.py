"""CPU target: verified IR -> the source of one Python function that runs a chunk of a
dispatch with numpy, every thread of the chunk at once (SIMT with lane masks).

The function `k_<name>(G, R, F)` takes the chunk's lane geometry `G` (codegen.cpu.rt.Geometry),
the bound arguments `R` (a flat list laid out by `CpuKernel.slots`) and the dispatch's
`F` (rt.Faults), where accesses and divisions marked by ir/checks.py record a failure. Every scalar of a
value is one Python variable holding a numpy scalar or an array broadcastable to (W, S);
vectors, matrices and structs are split into one variable per component (`v_pos_x`).

Control flow keeps the structure of the IR. Each block runs under a mask variable (`None`
= all lanes); an `if` runs both arms under complementary masks (an arm no lane takes is
skipped); a loop iterates while any lane is active; `break`/`continue`/`return` add the
active lanes to exit flags that later statements mask out. Statements execute in the same
order on every lane, so barriers need no code: a write before one is already visible.

`emit_cpu(kernel)` gives the source (a debugging aid); `compile_cpu(kernel)` compiles and
caches it. The emitter walks the IR once, at compile time, never per dispatch.
"""

from __future__ import annotations

import hashlib
import linecache
import re
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from goldy_import.ir import nodes as N
from goldy_import.ir.info import kernel_info
from goldy_import.ir import types as T
from goldy_import.ir.pipeline import for_target
from goldy_import.ir.serialize import to_json
from goldy_import.ir import targets as TG
from goldy_import.ir.mathlib import FUNCTIONS
from goldy_import.ir.rules import call_rule

from . import rt
from .loops import lean_terms, reduction_accumulators, span_load, term_parts
from ..guard import emitter, emitting
from ..names import ascii_ident

_SIMPLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.]*$")
_MAX_ATOM = 100  # longer expressions go to a temporary (bounds nesting in the source)
_GUARDED_DEPTH = 48  # indentation past which `if` blocks lose their skip-if-no-lane guard (see s_If)
_SYM = {"add": "+", "sub": "-", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^",
        "eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "&", "or": "|"}
_FLIP = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
_BUILTIN_PREFIX = {"global_id": "gid", "local_id": "lid", "workgroup_id": "wgid",
                   "num_workgroups": "nwg", "workgroup_size": "wgs"}
_NP_TYPE = {"u32": "np.uint32", "i32": "np.int32", "f32": "np.float32"}
_MATH_FUNCS = tuple(FUNCTIONS)  # ir/mathlib.py, via rt.math


@dataclass(frozen=True)
class Slot:
    """One entry of the argument list R: `kind` of parameter `param` (index), bound to the
    Python name `name`. Kinds: view, len, comps, tensor, dims, rank, value, ucomp (component
    `comp` of a uniform struct), width, height."""

    name: str
    param: int
    kind: str
    comp: int = 0


@dataclass
class CpuKernel:
    """A compiled kernel: the generated source and the function it defines."""

    kernel: N.Kernel
    source: str
    fn: Callable
    slots: list[Slot]
    atomics: bool  # chunks must then keep global thread order
    race_sites: Optional[list] = None  # racecheck builds only: what each access site is (codegen.cpu.race)
    # the C build (codegen/cpu/ckernel.py): made after a few submits, used once ready
    native: Optional[Any] = None
    native_state: str = ""  # "", "building", "ready", "off", "unsupported: ...", "build failed"
    submits: int = 0

    @property
    def name(self) -> str:
        return self.kernel.name


def _only_comments(lines: list[str]) -> bool:
    """Whether emitted `lines` hold no statement (a block of them needs a `pass`)."""
    return all(ln.strip().startswith("#") for ln in lines)


def _san(name: str) -> str:
    """A Rust name inside a generated Python name: ASCII (codegen/names.py), since Python
    folds identifiers by NFKC (`ﬁ` would meet `fi`); `fresh` keeps the results distinct."""
    return ascii_ident(name)


class _Emitter:
    one_pass_loops = True  # reduction loops in one pass (codegen/cpu/loops.py); False: the SIMT loop only
    span_var: Optional[str] = None  # the loop variable of the one-pass loop being emitted
    span_operand: Optional[N.Expr] = None  # an operand rt.accumulate takes as it is (rt.span)

    def __init__(self, k: N.Kernel):
        self.k = k
        self.structs = {s.name: s for s in k.structs}
        self.lines: list[str] = []
        self.ind = 1
        self.consts: dict[str, str] = {}
        self.ntmp = 0
        self.nmask = 0
        self.nloop = 0
        self.M = "None"  # the current mask expression
        self.loops: list[tuple[str, str]] = []  # (break flag, continue flag) per loop
        self.guards: list[str] = []  # conditions of the enclosing `&&` / `||` right operands
        self.lin: dict[str, str] = {}  # immutable locals equal to global_id().x ("g") / local_id().x ("l")
        self.views: set[str] = set()  # atoms that may alias memory the kernel writes
        self.written = set(kernel_info(k).written) | {w.name for w in k.workgroup_arrays}
        self.wg1d = k.workgroup_size[1] == 1 and k.workgroup_size[2] == 1
        # workgroup arrays the kernel reads itself: collectives must leave them as a GPU would
        self.read_wg = {x.resource for s in N.walk_stmts(k.body) for e in N.stmt_exprs(s)
                        for x in N.walk_expr(e) if isinstance(x, N.Load) and k.workgroup_array(x.resource)}
        self.slots: list[Slot] = []
        self.used: set[str] = set()  # every Python name given to a value component
        # parameters and workgroup arrays: one base shared by their p_/n_/s_/w_... entries
        self.rnames = {r.name: self.fresh_param(_san(r.name)) for r in k.params + k.workgroup_arrays}
        self.ubases = {p.name: self.fresh("u_" + self.rnames[p.name], p.ty)
                       for p in k.params if p.category == "uniform"}
        self.bases = {name: self.fresh("v_" + _san(name), ty) for name, ty in k.locals.items()}

    # ------------------------------------------------------------ output helpers

    def emit(self, text: str) -> None:
        self.lines.append("    " * self.ind + text)

    def tmp(self) -> str:
        self.ntmp += 1
        return f"_t{self.ntmp}"

    def hoist(self, atom: str) -> str:
        if _SIMPLE.match(atom):
            return atom
        t = self.tmp()
        self.emit(f"{t} = {atom}")
        if atom in self.views:
            self.views.add(t)
        return t

    def mk(self, atom: str) -> str:
        return atom if len(atom) <= _MAX_ATOM else self.hoist(atom)

    def new_mask(self) -> str:
        self.nmask += 1
        return f"m{self.nmask}"

    def block(self, stmts: list[N.Stmt], mask: str, indent: bool = True) -> None:
        saved_m, n0 = self.M, len(self.lines)
        self.M = mask
        self.ind += indent
        self.body(stmts)
        if indent and _only_comments(self.lines[n0:]):  # (a `let` of global_id() is a comment)
            self.emit("pass")
        self.ind -= indent
        self.M = saved_m

    def const(self, ty: str, v) -> str:
        if ty == "bool":
            return "TRUE" if v else "FALSE"
        if ty == "f32":
            v = float(v)
            text = repr(v)
            name = "F" + text.replace("-", "m").replace(".", "_").replace("+", "")
            val = f"np.float32({text!r})" if text in ("inf", "-inf", "nan") else f"np.float32({text})"
        else:
            v = int(v)
            name = ("U" if ty == "u32" else "I") + (f"m{-v}" if v < 0 else str(v))
            val = f"{_NP_TYPE[ty]}({v})"
        self.consts[name] = val
        return name

    def zero(self, ty: str) -> str:
        return self.const(ty, False if ty == "bool" else (0.0 if ty == "f32" else 0))

    def comps(self, ty: str) -> list[tuple[str, str]]:
        return rt.components(ty, self.structs)

    def fresh(self, base: str, ty: str) -> str:
        """A base name whose component names (base + suffix) are all unused: Rust names may
        contain `_`, so `x` (a vector: v_x_x) and `x_x` (a scalar: v_x_x) could meet."""
        sufs = [suf for suf, _ in self.comps(ty)]
        cand, j = base, 1
        while any(cand + suf in self.used for suf in sufs):
            j += 1
            cand = f"{base}_{j}"
        self.used.update(cand + suf for suf in sufs)
        return cand

    def fresh_param(self, n: str) -> str:
        cand, j = n, 1
        while cand in self.used:
            j += 1
            cand = f"{n}_{j}"
        self.used.add(cand)
        return cand

    def local_names(self, name: str) -> list[str]:
        base = self.bases[name]
        return [base + suf for suf, _ in self.comps(self.k.locals[name])]

    def field_range(self, sty: str, fname: str) -> tuple[int, int]:
        start = 0
        for f in self.structs[T.struct_name(sty)].fields:
            n = len(self.comps(f.ty))
            if f.name == fname:
                return start, n
            start += n
        raise AssertionError(f"no field {fname}")  # the verifier guarantees it exists

    def bound(self, atom: str) -> str:
        """An atom about to be stored in a variable: copy views of memory the kernel writes."""
        return f"{atom}.copy()" if atom in self.views else atom

    def masked(self, new: str, old: str) -> str:
        return new if self.M == "None" else f"rt.sel({self.M}, {new}, {old})"

    def lin_kind(self, e: N.Expr) -> Optional[str]:
        """"g" if `e` is global_id().x, "l" if local_id().x, with a 1-D workgroup (where
        buffer[i] / scratch[lid] have slice fast paths)."""
        if not self.wg1d:
            return None
        if isinstance(e, N.Swizzle) and e.lanes == "x" and isinstance(e.value, N.Builtin):
            return {"global_id": "g", "local_id": "l"}.get(e.value.name)
        if isinstance(e, N.Var):
            return self.lin.get(e.name)
        return None

    def lin_offset(self, e: N.Expr) -> Optional[N.Expr]:
        """`o` where `e` is `o + global_id().x` (either order, a wrapping u32 add) and `o`
        is the same on every lane (a constant or scalar parameter): rt.st_lin's `off`."""
        if not (isinstance(e, N.Binary) and e.op == "add" and e.ty == "u32" and e.check < 0):
            return None
        for here, other in ((e.rhs, e.lhs), (e.lhs, e.rhs)):
            if self.lin_kind(here) == "g" and (isinstance(other, N.Const) or (
                    isinstance(other, N.Var) and other.name not in self.k.locals
                    and getattr(self.k.param(other.name), "category", None) == "scalar")):
                return other
        return None

    def scalar(self, e: N.Expr) -> str:
        return self.expr(e)[0]

    def chk(self, site: int, guarded: bool = True) -> str:
        """The trailing `chk` argument of a checked access or division ("" if unchecked)."""
        if site < 0:
            return ""
        guards = "".join(g + ", " for g in self.guards) if guarded else ""
        return f", (F, {site}, {self.M}, ({guards}))"

    # ------------------------------------------------------------ kernel

    def run(self) -> tuple[str, str]:
        k = self.k
        fname = "k_" + _san(k.name)
        for i, p in enumerate(k.params):
            n = self.rnames[p.name]
            if p.category in N.BUFFER_CATEGORIES:
                kind = "comps" if T.is_struct(p.ty) else "view"
                self.slots += [Slot("p_" + n, i, kind), Slot("n_" + n, i, "len")]
            elif p.category in N.TENSOR_CATEGORIES:
                self.slots += [Slot("p_" + n, i, "tensor"), Slot("n_" + n, i, "len"),
                               Slot("d_" + n, i, "dims"), Slot("r_" + n, i, "rank")]
            elif p.category == "scalar":
                self.slots.append(Slot("s_" + n, i, "value"))
            elif p.category == "uniform":
                self.slots += [Slot(self.ubases[p.name] + suf, i, "ucomp", c)
                               for c, (suf, _) in enumerate(self.comps(p.ty))]
            elif p.category == "image":
                self.slots += [Slot("p_" + n, i, "comps"), Slot("iw_" + n, i, "width"),
                               Slot("ih_" + n, i, "height")]
        names = [s.name for s in self.slots]
        if names:
            self.emit(f"({', '.join(names)},) = R")
        for j, w in enumerate(k.workgroup_arrays):
            self.emit(f"w_{self.rnames[w.name]} = G.wg_array({j}, {w.size}, {_NP_TYPE[w.ty]})  # one row per workgroup")
        if any(isinstance(s, N.Return) for s in N.walk_stmts(k.body)):
            self.emit("ret = FALSE  # lanes that returned")
        self.body(k.body)
        if _only_comments(self.lines):  # still a function body
            self.emit("pass")
        body = self.lines
        wg = "x".join(str(d) for d in k.workgroup_size)
        head = [
            f"# goldy-import CPU kernel `{k.name}` from {k.source_file!r} (generated code).",
            f"# Runs workgroups of {wg} threads as a (W, S) lane grid; masks: None = all lanes.",
            "",
        ]
        head += [f"{n} = {v}" for n, v in sorted(self.consts.items())]
        head += ["", "", f"def {fname}(G, R, F):"]
        if k.doc:
            head.append("    " + repr(k.doc))
        return "\n".join(head + body) + "\n", fname

    # ------------------------------------------------------------ statements

    def body(self, stmts: list[N.Stmt]) -> None:
        for s in stmts:
            label = f"atomic{s.op}" if isinstance(s, N.Atomic) else type(s).__name__.lower()
            self.emit(f"# line {s.span.line}: {label}")
            getattr(self, "s_" + type(s).__name__)(s)
            if isinstance(s, (N.Break, N.Continue, N.Return)):
                return  # the rest of the block is unreachable

    def s_Let(self, s: N.Let) -> None:
        names = self.local_names(s.name)
        if s.value is None:
            for n, (_, ty) in zip(names, self.comps(s.ty)):
                self.emit(f"{n} = {self.zero(ty)}")
            return
        kind = None if s.mutable else self.lin_kind(s.value)
        if kind is not None:
            self.lin[s.name] = kind
            self.emit(f"# {names[0]} is {'global_id' if kind == 'g' else 'local_id'}().x: G.{kind}id_x")
            return
        # a let binds every lane: lanes that are inactive here never read the value
        for n, a in zip(names, self.expr(s.value)):
            self.emit(f"{n} = {self.bound(a)}")

    def place(self, e: N.Expr) -> tuple[str, list[int]]:
        """Root local and component indices of an assignment target."""
        if isinstance(e, N.Var):
            return e.name, list(range(len(self.comps(e.ty))))
        if isinstance(e, N.Field):
            root, idx = self.place(e.value)
            start, n = self.field_range(e.value.ty, e.name)
            return root, idx[start:start + n]
        assert isinstance(e, N.Swizzle)
        root, idx = self.place(e.value)
        return root, [idx["xyzw".index(c)] for c in e.lanes]

    def s_Assign(self, s: N.Assign) -> None:
        root, idx = self.place(s.target)
        names = self.local_names(root)
        atoms = self.expr(s.value)
        targets = [names[i] for i in idx]
        if len(targets) > 1:  # evaluate everything before writing any component
            atoms = [self.hoist(a) if a not in targets else self.forced(a) for a in atoms]
        for n, a in zip(targets, atoms):
            self.emit(f"{n} = {self.masked(self.bound(a), n)}")

    def forced(self, atom: str) -> str:
        t = self.tmp()
        self.emit(f"{t} = {atom}")
        return t

    def s_Store(self, s: N.Store) -> None:
        r = self.rnames[s.resource]
        c = self.chk(s.check, guarded=False)
        if self.k.workgroup_array(s.resource) is not None:
            v = self.scalar(s.value)
            if self.lin_kind(s.index) == "l":
                self.emit(f"rt.st_w_lid(w_{r}, G, {v}, {self.M}{c})")
            else:
                if s.check >= 0:  # value before place, as in Rust
                    t = self.tmp()
                    self.emit(f"{t} = {v}")
                    v = t
                self.emit(f"rt.st_w(w_{r}, G, {self.scalar(s.index)}, {v}, {self.M}{c})")
            return
        p = self.k.param(s.resource)
        if p.category == "image":
            x, y = self.expr(s.index)
            vs = self.expr(s.value)
            self.emit(f"rt.st_img(p_{r}, iw_{r}, ih_{r}, {x}, {y}, ({', '.join(vs)},), {self.M}{c})")
            return
        lin = self.lin_kind(s.index) == "g"
        off = None if lin or p.category in N.TENSOR_CATEGORIES else self.lin_offset(s.index)
        lin = lin or off is not None
        v = self.scalar(s.value)
        if not lin and s.check >= 0:
            # Rust evaluates the assigned value before the place: its faults come first
            t = self.tmp()
            self.emit(f"{t} = {v}")
            v = t
        idx = None if lin else self.scalar(s.index)
        if p.ty == "bool":
            v = f"{v}.astype(np.uint32)"
        pre = "rt.st_t" if p.category in N.TENSOR_CATEGORIES else "rt.st"
        if lin:
            at = "" if off is None else f", off={self.scalar(off)}"  # a[off + global_id().x]
            self.emit(f"{pre}_lin(p_{r}, G, {v}, {self.M}{c}{at})")
        else:
            self.emit(f"{pre}(p_{r}, {idx}, {v}, {self.M}{c})")

    def exit_flags(self, stmts: list[N.Stmt]) -> list[str]:
        flags = []
        if any(isinstance(x, N.Return) for x in N.walk_stmts(stmts)):
            flags.append("ret")
        if self.loops:
            brk, cont = self.loops[-1]
            if _exits(stmts, N.Break):
                flags.append(brk)
            if _exits(stmts, N.Continue):
                flags.append(cont)
        return flags

    def leave(self, stmts: list[N.Stmt]) -> None:
        """After a statement some lanes may have left from: mask them out from here on."""
        flags = self.exit_flags(stmts)
        if flags:
            m = self.new_mask()
            self.emit(f"{m} = rt.m_exit({self.M}, {', '.join(flags)})")
            self.M = m

    def s_If(self, s: N.If) -> None:
        c = self.hoist(self.scalar(s.cond))
        mt = self.new_mask()
        self.emit(f"{mt} = rt.m_and({self.M}, {c})")
        me = None
        if s.else_body:
            me = self.new_mask()
            self.emit(f"{me} = rt.m_andnot({self.M}, {c})")
        # `if rt.m_any` only skips work (every statement is masked); deep down, where Python's
        # 100 indentation levels would run out (a 99-branch `else if`), the blocks run unguarded
        guard = self.ind < _GUARDED_DEPTH
        if guard:
            self.emit(f"if rt.m_any({mt}):")
        self.block(s.then_body, mt, guard)
        if me is not None:
            if guard:
                self.emit(f"if rt.m_any({me}):")
            self.block(s.else_body, me, guard)
        self.leave([s])

    def loop(self, s, cond: Optional[N.Expr], start: Optional[str]) -> None:
        """While / Loop / For share this shape: `lm` holds the lanes still iterating."""
        self.nloop += 1
        k = self.nloop
        lm, bm = self.new_mask(), self.new_mask()
        brk, cont = f"brk{k}", f"cont{k}"
        may_break = _exits(s.body, N.Break)
        may_cont = _exits(s.body, N.Continue)
        may_ret = any(isinstance(x, N.Return) for x in N.walk_stmts(s.body))
        if isinstance(s, N.For):
            v = self.local_names(s.var)[0]
            end = self.forced(self.scalar(s.end))
            self.emit(f"{v} = {start}")
            self.emit(f"{lm} = rt.m_and({self.M}, {v} {'<=' if s.inclusive else '<'} {end})")
        else:
            self.emit(f"{lm} = {self.M}")
        if may_break:
            self.emit(f"{brk} = FALSE")
        self.emit("while True:")
        self.ind += 1
        if cond is not None:
            outer, self.M = self.M, lm  # the condition runs on the lanes still looping
            c = self.scalar(cond)
            self.M = outer
            self.emit(f"{lm} = rt.m_and({lm}, {c})")
        self.emit(f"if not rt.m_any({lm}):")
        self.emit("    break")
        if may_cont:
            self.emit(f"{cont} = FALSE")
        self.emit(f"{bm} = {lm}")
        self.loops.append((brk, cont))
        self.ind -= 1
        self.block(s.body, bm)
        self.ind += 1
        self.loops.pop()
        flags = ([brk] if may_break else []) + (["ret"] if may_ret else [])
        if flags:
            self.emit(f"{lm} = rt.m_exit({lm}, {', '.join(flags)})")
        if isinstance(s, N.For):
            one = self.const(s.ty, 1)
            if s.inclusive:
                self.emit(f"{lm} = rt.m_andnot({lm}, {v} == {end})")
                self.emit(f"{v} = rt.sel({lm}, {v} + {one}, {v})")
            else:
                self.emit(f"{v} = rt.sel({lm}, {v} + {one}, {v})")
                self.emit(f"{lm} = rt.m_and({lm}, {v} < {end})")
        self.ind -= 1
        if may_ret:
            m = self.new_mask()
            self.emit(f"{m} = rt.m_exit({self.M}, ret)")
            self.M = m

    def s_While(self, s: N.While) -> None:
        self.loop(s, s.cond, None)

    def s_Loop(self, s: N.Loop) -> None:
        self.loop(s, None, None)

    def s_For(self, s: N.For) -> None:
        accs = reduction_accumulators(self.k, s) if self.one_pass_loops else None
        if accs is None:
            self.loop(s, None, self.scalar(s.start))
            return
        # a reduction loop: in one pass when the trip count is uniform (codegen/cpu/loops.py).
        # Checks record into a private Faults: on a failure the SIMT loop reruns from the
        # saved sums, so the dispatch reports the failure in SIMT order.
        start, end = self.forced(self.scalar(s.start)), self.forced(self.scalar(s.end))
        v = self.local_names(s.var)[0]
        sums = [self.local_names(a)[0] for a in accs]
        self.nloop += 1
        saved, simt = f"_F{self.nloop}", f"simt{self.nloop}"
        self.emit(f"{simt} = not rt.uniform_trips({start}, {end})")
        checked = any(getattr(x, "check", -1) >= 0 for b in s.body for e in N.stmt_exprs(b) for x in N.walk_expr(e))
        self.emit(f"if not {simt}:")
        self.ind += 1
        if checked:
            self.emit(f"{saved} = ({', '.join(['F'] + sums)},)")
            self.emit("F = rt.Faults()")
        lean = ", True" if lean_terms(self.k, s) else ""
        self.emit(f"for {v} in rt.iteration_blocks({start}, {end}, {s.inclusive}, {_NP_TYPE[s.ty]}, G{lean}):")
        self.ind += 1
        self.span_var = s.var
        for b in s.body:
            if isinstance(b, N.Let):
                self.s_Let(b)
            else:
                n = self.local_names(b.target.name)[0]
                self.emit(f"{n} = {self.masked(f'rt.accumulate({n}, {v}.shape[0], {self.term(b.value.rhs)})', n)}")
        self.span_var = None
        self.ind -= 1
        if checked:
            self.emit(f"{simt} = F.hit is not None")
            self.emit(f"F = {saved}[0]")
            self.emit(f"if {simt}:")
            self.emit(f"    ({', '.join(sums)},) = {saved}[1:]")
        self.ind -= 1
        self.emit(f"if {simt}:")
        self.ind += 1
        self.loop(s, None, start)
        self.ind -= 1

    def term(self, e: N.Expr) -> str:
        """rt.accumulate's term arguments: `x, np.multiply, y` (codegen/cpu/loops.py `term_parts`)
        or `x`; an operand that is a span load stays an rt.Span (its view of the buffer)."""
        x, op, y = term_parts(e)
        return self.operand(x) if op is None else f"{self.operand(x)}, {op}, {self.operand(y)}"

    def operand(self, e: N.Expr) -> str:
        self.span_operand = e
        try:
            return self.scalar(e)
        finally:
            self.span_operand = None

    def s_Break(self, s) -> None:
        self.emit(f"{self.loops[-1][0]} = rt.f_or({self.loops[-1][0]}, {self.M})")

    def s_Continue(self, s) -> None:
        self.emit(f"{self.loops[-1][1]} = rt.f_or({self.loops[-1][1]}, {self.M})")

    def s_Return(self, s) -> None:
        self.emit(f"ret = rt.f_or(ret, {self.M})")

    def s_Barrier(self, s) -> None:
        self.emit("pass  # workgroup_barrier: statements run in lock step, writes are visible")

    def s_Reduce(self, s: N.Reduce) -> None:
        ty = s.value.ty
        op = "np.add" if s.op == "sum" else ("np.fmax" if ty == "f32" else "np.maximum")
        v = self.scalar(s.value)
        r = self.tmp()
        keep = s.scratch in self.read_wg
        self.emit(f"{r} = rt.reduce(w_{self.rnames[s.scratch]}, G, {s.n}, {v}, {self.M}, {op}, {keep})")
        t = self.local_names(s.target)[0]
        self.emit(f"{t} = {self.masked(r, t)}")

    def s_Atomic(self, s: N.Atomic) -> None:
        idx, v = self.scalar(s.index), self.scalar(s.value)
        wg = self.k.workgroup_array(s.resource) is not None
        if s.op == "add" and not wg and s.value.ty != "f32":  # the vectorised wrapping sum
            call = (f"rt.atomic_add(p_{self.rnames[s.resource]}, G, {idx}, {v}, {self.M}, {s.target is not None}"
                    f"{self.chk(s.check, guarded=False)})")
        else:
            cmp = f", cmp={self.scalar(s.compare)}" if s.compare is not None else ""
            arr = f"w_{self.rnames[s.resource]}" if wg else f"p_{self.rnames[s.resource]}"
            call = (f"rt.atomic({s.op!r}, {arr}, G, {idx}, {v}, {self.M}, {s.target is not None}, {wg}"
                    f"{self.chk(s.check, guarded=False)}{cmp})")
        if s.target is None:
            self.emit(call)
            return
        r = self.tmp()
        self.emit(f"{r} = {call}")
        t = self.local_names(s.target)[0]
        self.emit(f"{t} = {self.masked(r, t)}")

    # ------------------------------------------------------------ expressions

    def expr(self, e: N.Expr) -> list[str]:
        """The atoms (Python expressions, one per scalar component) of `e`'s value."""
        return getattr(self, "e_" + type(e).__name__)(e)

    def e_Const(self, e: N.Const) -> list[str]:
        return [self.const(e.ty, e.value)]

    def e_Var(self, e: N.Var) -> list[str]:
        if e.name in self.k.locals:
            if e.name in self.lin:
                return [f"G.{self.lin[e.name]}id_x"]
            return self.local_names(e.name)
        p = self.k.param(e.name)
        if p.category == "scalar":
            return ["s_" + self.rnames[p.name]]
        return [self.ubases[p.name] + suf for suf, _ in self.comps(p.ty)]

    def e_Builtin(self, e: N.Builtin) -> list[str]:
        pre = _BUILTIN_PREFIX[e.name]
        return [f"G.{pre}_{c}" for c in "xyz"]

    def e_Load(self, e: N.Load) -> list[str]:
        return self.load(e, 0, None)

    def load(self, e: N.Load, start: int, count: Optional[int]) -> list[str]:
        """Components [start, start + count) of the element `e` loads."""
        r = self.rnames[e.resource]
        written = e.resource in self.written
        c = self.chk(e.check)
        if self.k.workgroup_array(e.resource) is not None:
            if self.lin_kind(e.index) == "l":
                a = f"rt.ld_w_lid(w_{r}, G{c})"
                self.views.add(a)
                return [a]
            return [self.mk(f"rt.ld_w(w_{r}, G, {self.scalar(e.index)}{c})")]
        p = self.k.param(e.resource)
        n_comp = len(self.comps(p.ty))
        count = n_comp - start if count is None else count
        if p.category == "image":
            x, y = self.expr(e.index)
            return self.unpack(f"rt.ld_img(p_{r}[{start}:{start + count}], iw_{r}, ih_{r}, {x}, {y}{c})", count)
        lin = self.lin_kind(e.index) == "g"
        idx = None if lin else self.scalar(e.index)
        if T.is_struct(p.ty):
            comps = f"p_{r}[{start}:{start + count}]"
            call = f"rt.ld_n_lin({comps}, G{c})" if lin else f"rt.ld_n({comps}, {idx}{c})"
            return self.unpack(call, count)
        pre = "rt.ld_t" if p.category in N.TENSOR_CATEGORIES else "rt.ld"
        base = None if lin else span_load(self.k, e, self.span_var)
        if base is not None:  # a run of elements per lane (codegen/cpu/loops.py)
            fn = "rt.span" if e is self.span_operand else "rt.ld_span"
            m = "" if self.M == "None" else f", m={self.M}"  # its lanes (rt._ld_lanes)
            return [self.mk(f"{fn}(p_{r}, {self.scalar(base)}, {self.local_names(self.span_var)[0]}{c}{m})")]
        a = f"{pre}_lin(p_{r}, G{c})" if lin else f"{pre}(p_{r}, {idx}{c})"
        if p.ty == "bool":
            return [self.mk(f"({a} != {self.const('u32', 0)})")]
        if lin and written:
            self.views.add(a)
        return [self.mk(a)]

    def unpack(self, call: str, count: int) -> list[str]:
        names = [self.tmp() for _ in range(count)]
        self.emit(f"({', '.join(names)},) = {call}")
        return names

    def e_Len(self, e: N.Len) -> list[str]:
        w = self.k.workgroup_array(e.resource)
        if w is not None:
            return [self.const("u32", w.size)]
        return ["n_" + self.rnames[e.resource]]

    def e_TensorDim(self, e: N.TensorDim) -> list[str]:
        return [self.mk(f"rt.tdim(d_{self.rnames[e.resource]}, {self.scalar(e.axis)})")]

    def e_TensorRank(self, e: N.TensorRank) -> list[str]:
        return ["r_" + self.rnames[e.resource]]

    def e_ImageSize(self, e: N.ImageSize) -> list[str]:
        return [("iw_" if e.axis == 0 else "ih_") + self.rnames[e.resource]]

    def part(self, e: N.Expr, start: int, count: int) -> list[str]:
        """Components of a struct-valued expression, loading only those needed."""
        if isinstance(e, N.Field):
            s0, _ = self.field_range(e.value.ty, e.name)
            return self.part(e.value, s0 + start, count)
        if isinstance(e, N.Load):
            return self.load(e, start, count)
        return self.expr(e)[start:start + count]

    def e_Field(self, e: N.Field) -> list[str]:
        s0, n = self.field_range(e.value.ty, e.name)
        return self.part(e.value, s0, n)

    def e_Swizzle(self, e: N.Swizzle) -> list[str]:
        atoms = self.expr(e.value)
        if len(set(e.lanes)) < len(e.lanes):
            atoms = [self.hoist(a) for a in atoms]
        return [atoms["xyzw".index(c)] for c in e.lanes]

    def e_Unary(self, e: N.Unary) -> list[str]:
        sym = "-" if e.op == "neg" else "~"
        return [self.mk(f"({sym}{a})") for a in self.expr(e.operand)]

    def e_Binary(self, e: N.Binary) -> list[str]:
        op, lt, rt_ = e.op, e.lhs.ty, e.rhs.ty
        if op in ("lt", "le", "gt", "ge"):
            if self.lin_kind(e.lhs) == "g":
                return [self.mk(f"rt.cmp_lin(G, {self.scalar(e.rhs)}, {op!r})")]
            if self.lin_kind(e.rhs) == "g":
                return [self.mk(f"rt.cmp_lin(G, {self.scalar(e.lhs)}, {_FLIP[op]!r})")]
        if op in N.LOGICAL:  # both sides run on every lane; the right one's checks only where it would
            a0 = self.hoist(self.scalar(e.lhs))
            self.guards.append(a0 if op == "and" else f"(~{a0})")
            b0 = self.scalar(e.rhs)
            self.guards.pop()
            return [self.mk(f"({a0} {_SYM[op]} {b0})")]
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        if op in N.COMPARISONS:
            return [self.mk(f"({a[0]} {_SYM[op]} {b[0]})")]
        if op in ("shl", "shr"):  # ir/rules.py: the amount as u32, modulo 32
            return [self.mk(f"rt.{op}_{T.elem_of(lt)}({x}, {b[0]})") for x in a]
        if T.is_matrix(lt):
            return self.matrix_op(op, lt, rt_, a, b)
        if len(a) != len(b):  # vector op scalar: the scalar goes to every lane
            if len(a) == 1:
                a = [self.hoist(a[0])] * len(b)
            else:
                b = [self.hoist(b[0])] * len(a)
        elem = T.elem_of(e.ty)
        return [self.mk(self.arith(op, elem, x, y, e.check)) for x, y in zip(a, b)]

    def arith(self, op: str, elem: str, x: str, y: str, check: int = -1) -> str:
        if op in ("add", "sub", "mul", "bitand", "bitor", "bitxor"):
            return f"({x} {_SYM[op]} {y})"
        if elem == "f32":
            return f"({x} / {y})" if op == "div" else f"np.fmod({x}, {y})"
        return f"rt.{elem[0]}{op}({x}, {y}{self.chk(check)})"  # ir/rules.py, the trap first

    def matrix_op(self, op: str, lt: str, rt_: str, a: list[str], b: list[str]) -> list[str]:
        n = T.vec_len(lt)
        if op in ("add", "sub"):
            return [self.mk(f"({x} {_SYM[op]} {y})") for x, y in zip(a, b)]
        if rt_ == "f32":
            s = self.hoist(b[0])
            return [self.mk(f"({x} * {s})") for x in a]
        if T.is_vector(rt_):
            return self.mat_vec(n, a, [self.hoist(x) for x in b])
        # mat * mat: column c of the product is a * (column c of b)
        a = [self.hoist(x) for x in a]
        out = []
        for c in range(n):
            out += self.mat_vec(n, a, [self.hoist(x) for x in b[c * n:(c + 1) * n]])
        return out

    def mat_vec(self, n: int, m: list[str], v: list[str]) -> list[str]:
        """Lane r: ((m[0][r]*v.x + m[1][r]*v.y) + m[2][r]*v.z) + ..., rounded at each step."""
        out = []
        for r in range(n):
            acc = f"({m[r]} * {v[0]})"
            for c in range(1, n):
                acc = self.mk(f"({acc} + ({m[c * n + r]} * {v[c]}))")
            out.append(acc)
        return out

    def e_Cast(self, e: N.Cast) -> list[str]:
        x, vt, ty = self.scalar(e.value), e.value.ty, e.ty
        if vt == ty:
            return [x]
        if vt == "f32":
            return [self.mk(f"rt.f2i({x})" if ty == "i32" else f"rt.f2u({x})")]
        if ty == "f32" and vt in T.INTS:
            return [self.mk(f"rt.{vt[0]}2f({x})")]
        return [self.mk(f"{x}.astype({_NP_TYPE[ty]})")]

    def dot(self, a: list[str], b: list[str]) -> str:
        acc = f"({a[0]} * {b[0]})"
        for x, y in zip(a[1:], b[1:]):
            acc = self.mk(f"({acc} + ({x} * {y}))")
        return acc

    def e_Call(self, e: N.Call) -> list[str]:
        args = [self.expr(a) for a in e.args]
        f = e.func
        if f == "dot":
            return [self.mk(self.dot(args[0], args[1]))]
        if f == "length":
            v = [self.hoist(x) for x in args[0]]
            return [self.mk(f"np.sqrt({self.dot(v, v)})")]
        elem = T.elem_of(e.args[0].ty)
        return [self.mk(self.intrinsic(f, elem, [a[i] for a in args])) for i in range(len(args[0]))]

    def intrinsic(self, f: str, elem: str, xs: list[str]) -> str:
        x = xs[0]
        rule = call_rule(f, elem)
        if rule is not None:  # one rule of ir/rules.py on scalars
            return f"rt.rule({rule!r}, {', '.join(xs)})"
        if f == "abs":
            return x if elem == "u32" else f"rt.abs_{elem}({x})"
        if f in ("floor", "ceil", "trunc", "sqrt"):
            return f"np.{f}({x})"
        if f == "round":
            return f"rt.round_away({x})"
        if f in _MATH_FUNCS and self.M != "None":  # ~40 numpy ops: on the active lanes alone where few are
            return f"rt.on_lanes({self.M}, rt.{f}, {', '.join(xs)})"
        if f in _MATH_FUNCS or f in ("fma", "from_bits", "to_bits"):
            return f"rt.{f}({', '.join(xs)})"
        if elem == "f32":  # ir/rules.py: Rust's NaN rules, decided on the bits
            return f"rt.f{f}({', '.join(xs)})"
        if f == "min":
            return f"np.minimum({x}, {xs[1]})"
        if f == "max":
            return f"np.maximum({x}, {xs[1]})"
        assert f == "clamp"
        return f"np.minimum(np.maximum({x}, {xs[1]}), {xs[2]})"

    def e_Construct(self, e: N.Construct) -> list[str]:
        atoms = [a for arg in e.args for a in self.expr(arg)]
        n = T.vec_len(e.ty)
        if len(atoms) == 1 and n > 1:
            return [self.hoist(atoms[0])] * n
        return atoms

    def e_Select(self, e: N.Select) -> list[str]:
        c = self.scalar(e.cond)
        a, b = self.expr(e.if_true), self.expr(e.if_false)
        if len(a) > 1:
            c = self.hoist(c)
        return [self.mk(f"np.where({c}, {x}, {y})") for x, y in zip(a, b)]


def _exits(stmts: list[N.Stmt], kind: type) -> bool:
    """Does a `break`/`continue` of the enclosing loop occur (not one of a nested loop)?"""
    for s in stmts:
        if isinstance(s, kind):
            return True
        if isinstance(s, N.If) and (_exits(s.then_body, kind) or _exits(s.else_body, kind)):
            return True
    return False


@emitter("CPU")
def emit_cpu(kernel: N.Kernel) -> str:
    """The Python source of the CPU function for `kernel` (readable; for debugging)."""
    return _Emitter(for_target(kernel, "cpu").kernel).run()[0]


_CACHE: dict[str, CpuKernel] = {}
_LOCK = threading.Lock()


def compile_cpu(kernel: N.Kernel, emitter_class: Optional[type] = None) -> CpuKernel:
    """Emit, compile and cache (by the kernel's IR and what the target lowers) the CPU function;
    `emitter_class`: a subclass of the emitter (codegen.cpu.race's racecheck build)."""
    cls = emitter_class or _Emitter
    key = hashlib.sha256((" ".join(sorted(TG.target("cpu").native)) + " " + cls.__name__
                          + to_json(kernel, indent=None)).encode()).hexdigest()
    with _LOCK:
        hit = _CACHE.get(key)
    if hit is not None:
        return hit
    with emitting(kernel, "CPU"):
        em = cls(for_target(kernel, "cpu").kernel)  # softmax as plain IR around the native tree (rt.reduce)
        source, fname = em.run()
    filename = f"<goldy-cpu {kernel.name} {key[:12]}>"
    code = compile(source, filename, "exec")
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # readable tracebacks
    ns = {"np": np, "rt": rt, "TRUE": rt.TRUE, "FALSE": rt.FALSE}
    exec(code, ns)
    atomics = bool(kernel_info(kernel).atomic)
    out = CpuKernel(kernel, source, ns[fname], em.slots, atomics, getattr(em, "race_sites", None))
    with _LOCK:
        _CACHE[key] = out
    return out
