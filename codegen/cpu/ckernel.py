"""Kernels compiled to C for the CPU backend: the same lowered IR the numpy emitter reads
(codegen/cpu/emitter.py), one C loop over the dispatch's threads, each thread running the
body straight through.

The numpy SIMT form stays the oracle and the fallback; this is its faster twin for
kernels a C compiler can run thread by thread with the same bits:
- only scalar f32/u32/i32/bool values, buffers of them (contiguous views), scalars and
  the builtins; integer atomics whose old value is unused; no workgroup memory (but a
  top-level collective's scratch), barriers (but at the top level beside collectives),
  other atomics, images, tensors, uniforms, structs or vectors (`Unsupported` names what
  keeps a kernel out), so no thread sees another's work within a dispatch except through
  a race, whose result the semantics leave open;
- f32 `+ - * /` are C's, built without contraction or fast-math (codegen/cpu/native.py
  FLAGS): one IEEE rounding each, as numpy's; `%` is `fmodf`, `sqrt` `sqrtf`, floor, ceil
  and trunc C's (all exact or correctly rounded); every Rust rule (integer division,
  shifts, casts, min/max/clamp, abs, round, the bit intrinsics) and every math library
  function is ir/rules.py's or ir/mathlib.py's sequence rendered as C
  (codegen/math_text.py `C`), as for WGSL and Slang; i32 values live as their u32 bits, so
  no C signed overflow happens;
- a trapping check that fails sets a flag; the thread loop stops, every store of the
  dispatch is undone from a log (in reverse), and the backend reruns the dispatch the
  numpy way, which reports the fault in SIMT order. Out-of-range accesses read 0 and
  drop the store, checked or not, as rt.ld/rt.st do. A select evaluates both sides (as
  numpy does), `&&` and `||` short-circuit (as numpy's guards do), so the C run faults
  wherever the numpy run would.

tests/test_cpu_compiled.py runs random kernels (tests/kernel_gen.py) both ways."""

from __future__ import annotations

import time
from typing import Optional

import numpy as np

from goldy_import.ir import nodes as N
from goldy_import.ir.mathlib import FUNCTIONS
from goldy_import.ir.rules import CALL_RESULT, RULES, call_rule

from .. import math_text as MT
from ..names import ascii_ident

TYPES = {"f32": "float", "u32": "uint32_t", "i32": "uint32_t", "bool": "int"}  # i32 as its u32 bits
C = MT.C  # the math library's and rules' helpers as C (codegen/math_text.py)

PRELUDE = r"""#include <float.h>
/* float evaluated as float: 0, or 16 / 32 (only narrower types widened, C23), not x87's 2 */
#if !defined(FLT_EVAL_METHOD) || !(FLT_EVAL_METHOD == 0 || FLT_EVAL_METHOD == 16 || FLT_EVAL_METHOD == 32)
#error "f32 arithmetic with excess precision (x87): the numpy form runs instead"
#endif
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <tgmath.h>

static inline uint32_t gi_f2u(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float gi_u2f(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

typedef struct { uint32_t *at; uint32_t old; } gi_undo;
typedef struct { gi_undo *log; size_t n, cap; int fault; } gi_state;

/* Remember a word before a store (LOGGING: the kernel has a trapping check, so a fault
   may need every store undone); 0 where the log cannot grow (the store is then skipped
   and the run abandoned, as for a fault). */
static int gi_log(gi_state *s, void *p) {
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        gi_undo *log = realloc(s->log, cap * sizeof *log);
        if (!log) return 0;
        s->log = log, s->cap = cap;
    }
    s->log[s->n].at = p;
    memcpy(&s->log[s->n].old, p, 4);
    s->n++;
    return 1;
}

static inline float gi_ld_f(gi_state *st, const float *b, uint32_t n, uint32_t i, int chk) {
    if (i < n) return b[i];
    if (chk) st->fault = 1;
    return 0.0f;
}
static inline uint32_t gi_ld_u(gi_state *st, const uint32_t *b, uint32_t n, uint32_t i, int chk) {
    if (i < n) return b[i];
    if (chk) st->fault = 1;
    return 0u;
}
#define GI_ST(b, n, i, v, chk)                                           \
    do {                                                                 \
        uint32_t gi_i = (i);                                             \
        if (gi_i < (n)) {                                                \
            if (LOGGING && !gi_log(st, &(b)[gi_i])) { st->fault = 1; break; } \
            (b)[gi_i] = (v);                                             \
        } else if (chk) st->fault = 1;                                   \
    } while (0)
static inline uint32_t gi_zero_chk(gi_state *st, uint32_t b, int chk) { if (chk && b == 0) st->fault = 1; return b; }
static inline float gi_sel_f(int c, float a, float b) { return c ? a : b; }
static inline uint32_t gi_sel_u(int c, uint32_t a, uint32_t b) { return c ? a : b; }
static inline int gi_sel_p(int c, int a, int b) { return c ? a : b; }
static inline uint32_t gi_min_u(uint32_t a, uint32_t b) { return a < b ? a : b; }
static inline uint32_t gi_max_u(uint32_t a, uint32_t b) { return a > b ? a : b; }
static inline uint32_t gi_min_i(uint32_t a, uint32_t b) { return (int32_t)a < (int32_t)b ? a : b; }
static inline uint32_t gi_max_i(uint32_t a, uint32_t b) { return (int32_t)a > (int32_t)b ? a : b; }
"""


class Unsupported(Exception):
    """What keeps a kernel on the numpy path."""


# integer read-modify-writes (u32 bits; `{t}`: the signedness of min and max)
_RMW = {"add": "({a} + {b})", "sub": "({a} - {b})", "and": "({a} & {b})", "or": "({a} | {b})",
        "xor": "({a} ^ {b})", "min": "gi_min_{t}({a}, {b})", "max": "gi_max_{t}({a}, {b})"}
_BUILTINS = {"local_id": "l{c}", "workgroup_id": "w{c}", "num_workgroups": "g{c}", "workgroup_size": "ws{c}",
             "global_id": "(w{c} * ws{c} + l{c})"}


def _name(s: str) -> str:
    return "v_" + ascii_ident(s)


class _Emitter:
    def __init__(self, k: N.Kernel, slots: list):
        self.k, self.slots = k, slots
        self.lines: list[str] = []
        self.ind = 2
        self.rules: set[str] = set()
        self.funcs: set[str] = set()
        self.loops: list[Optional[str]] = []  # per loop: the label `continue` jumps to, or None
        self.workgroup_form = False  # locals are arrays over the workgroup's threads (`phases`)
        self.nlabel = 0
        self.checked = False

    def local(self, name: str) -> str:
        return _name(name) + ("[gi_t]" if self.workgroup_form else "")

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.ind + line)

    # ------------------------------------------------------------ kernel

    def run(self) -> str:
        k = self.k
        if k.structs:
            raise Unsupported("structs")
        head = self.arguments()
        for name, ty in k.locals.items():
            if ty not in TYPES:
                raise Unsupported(f"a local of {ty}")
        kinds: dict = {}
        for st in N.walk_stmts(k.body):
            if isinstance(st, N.Atomic):  # one commutative kind per buffer, or the order would show
                kind = "add" if st.op in ("add", "sub") else st.op
                if kinds.setdefault(st.resource, kind) != kind:
                    raise Unsupported(f"atomics of different kinds on `{st.resource}`")
        wx, wy, wz = k.workgroup_size
        self.S = wx * wy * wz
        phased = any(isinstance(st, N.Reduce) for st in k.body)
        self.workgroup_form = phased
        if k.workgroup_arrays and not phased:
            raise Unsupported("workgroup memory")
        if phased:
            loops = self.phases()
        else:
            self.ind = 2
            self.block(k.body)
            loops = [f"    for (uint32_t lz = 0; lz < {wz}u; lz++)",
                     f"    for (uint32_t ly = 0; ly < {wy}u; ly++)",
                     f"    for (uint32_t lx = 0; lx < {wx}u; lx++) {{",
                     "        {",
                     *["        " + f"{TYPES[ty]} {_name(n)} = 0;" for n, ty in k.locals.items()],
                     *self.lines,
                     "        }",
                     "    gi_ret:",
                     "        if (st->fault) goto gi_undo;",
                     "    }"]
        helpers = [MT.render_rule(r, C)[0] for r in sorted(self.rules)]
        helpers += [MT.render(f, C)[0] for f in sorted(self.funcs)]
        src = [f"#define LOGGING {int(self.checked)}", PRELUDE, *helpers, "",
               "int goldy_kernel(void **bufs, const uint32_t *lens, const uint32_t *sc,",
               "                 uint32_t gx, uint32_t gy, uint32_t gz) {",
               "    gi_state state = {0}, *st = &state;",
               *["    " + h for h in head],
               f"    const uint32_t wsx = {wx}u, wsy = {wy}u, wsz = {wz}u;",
               "    (void)wsx; (void)wsy; (void)wsz;",
               "    for (uint32_t wz = 0; wz < gz; wz++)",
               "    for (uint32_t wy = 0; wy < gy; wy++)",
               "    for (uint32_t wx = 0; wx < gx; wx++) {",
               *loops,
               "    }",
               "    free(state.log);",
               "    return 0;",
               "gi_undo:",
               "    for (size_t i = state.n; i-- > 0;) memcpy(state.log[i].at, &state.log[i].old, 4);",
               "    free(state.log);",
               "    return 1;",
               "}", ""]
        return "\n".join(src)

    def arguments(self) -> list[str]:
        """The entry's views, lengths and scalars, in the numpy form's slot order."""
        k, head = self.k, []
        nb = nl = ns = 0
        for s in self.slots:
            p = k.params[s.param]
            if s.kind == "view":
                if p.ty not in TYPES:
                    raise Unsupported(f"a buffer of {p.ty}")
                ct = "float" if p.ty == "f32" else "uint32_t"  # bool elements are u32 words
                head.append(f"{ct} *b_{ascii_ident(p.name)} = ({ct} *)bufs[{nb}];")
                nb += 1
            elif s.kind == "len":
                head.append(f"const uint32_t n_{ascii_ident(p.name)} = lens[{nl}];")
                nl += 1
            elif s.kind == "value":
                if p.ty not in TYPES:
                    raise Unsupported(f"a scalar of {p.ty}")
                v = {"f32": f"gi_u2f(sc[{ns}])", "bool": f"(sc[{ns}] != 0u)"}.get(p.ty, f"sc[{ns}]")
                head.append(f"const {TYPES[p.ty]} s_{ascii_ident(p.name)} = {v};")
                ns += 1
            else:
                raise Unsupported(f"a {p.category} parameter")
        return head

    def phases(self) -> list[str]:
        """The workgroup form: the body split at its top-level `workgroup_sum`s; each phase a
        loop over the workgroup's threads in local-index order, each local an array over
        them; a sum is the numpy form's tree (rt.reduce: lane l adds lane l + 2^s), the same
        pairs and roundings. Only for bodies with no `return` (every lane takes part), sums
        over the whole workgroup, and workgroup memory used as their scratch alone."""
        k, S = self.k, self.S
        for st in N.walk_stmts(k.body):
            if isinstance(st, N.Return):
                raise Unsupported("a return beside a collective")
            if isinstance(st, N.Reduce) and st not in k.body:
                raise Unsupported("a collective inside control flow")
            for e in N.stmt_exprs(st):
                for x in N.walk_expr(e):
                    if isinstance(x, N.Load) and k.workgroup_array(x.resource) is not None:
                        raise Unsupported("workgroup memory read by the kernel")
            if isinstance(st, N.Store) and k.workgroup_array(st.resource) is not None:
                raise Unsupported("workgroup memory written by the kernel")
        if 4 * S * (len(k.locals) + 2) > MAX_STACK_BYTES:
            raise Unsupported(f"{len(k.locals)} locals over {S} threads (more stack than a thread may have)")
        wx, wy = k.workgroup_size[:2]
        ids = [f"const uint32_t lx = gi_t % {wx}u, ly = (gi_t / {wx}u) % {wy}u, lz = gi_t / {wx * wy}u;",
               "(void)lx; (void)ly; (void)lz;"]
        out = [f"        {TYPES[ty]} {_name(n)}[{S}];" for n, ty in k.locals.items()]
        out += [f"        memset({_name(n)}, 0, sizeof {_name(n)});" for n in k.locals]
        out.append(f"        float gi_redf[{S}]; uint32_t gi_redu[{S}]; (void)gi_redf; (void)gi_redu;")
        phase: list = []

        def flush():
            if not phase:
                return
            self.lines, self.ind = [], 3
            self.block(phase)
            out.extend([f"        for (uint32_t gi_t = 0; gi_t < {S}u; gi_t++) {{",
                        *["            " + i for i in ids], *self.lines,
                        "            if (st->fault) goto gi_undo;", "        }"])
            phase.clear()
        for st in k.body:
            if isinstance(st, N.Barrier):  # a phase boundary: what came before is seen by all after
                flush()
                continue
            if not isinstance(st, N.Reduce):
                phase.append(st)
                continue
            flush()
            ty = st.value.ty
            if st.op not in ("sum", "max") or st.n != S or ty not in ("f32", "u32", "i32"):
                raise Unsupported(f"workgroup_{st.op}::<{st.n}> over {S} threads")
            red = "gi_redf" if ty == "f32" else "gi_redu"
            if st.op == "sum":
                step = f"{red}[l] + {red}[l + h]"
            elif ty == "f32":  # f32::max (ir/rules.py): a NaN operand yields the other, of equals the later
                step = self.rule("max_f32", f"{red}[l]", f"{red}[l + h]")
            else:
                step = f"gi_max_{ty[0]}({red}[l], {red}[l + h])"
            self.lines, self.ind = [], 3
            v = self.expr(st.value)
            out.extend([f"        for (uint32_t gi_t = 0; gi_t < {S}u; gi_t++) {{",
                        *["            " + i for i in ids], *self.lines,
                        f"            {red}[gi_t] = {v};",
                        "            if (st->fault) goto gi_undo;", "        }",
                        f"        for (uint32_t h = 1; h < {S}u; h *= 2)",
                        f"            for (uint32_t l = 0; l + h < {S}u; l += 2 * h) {red}[l] = {step};"])
            out.append(f"        for (uint32_t gi_t = 0; gi_t < {S}u; gi_t++) {_name(st.target)}[gi_t] = {red}[0];")
        flush()
        return out

    # ------------------------------------------------------------ statements

    def block(self, stmts: list) -> None:
        for s in stmts:
            fn = getattr(self, "s_" + type(s).__name__, None)
            if fn is None:
                raise Unsupported(f"{type(s).__name__} statements")
            fn(s)

    def s_Let(self, s: N.Let) -> None:
        if s.value is not None:
            self.emit(f"{self.local(s.name)} = {self.expr(s.value)};")

    def s_Assign(self, s: N.Assign) -> None:
        if not isinstance(s.target, N.Var):
            raise Unsupported("an assignment to a part of a value")
        self.emit(f"{self.local(s.target.name)} = {self.expr(s.value)};")

    def s_Store(self, s: N.Store) -> None:
        p = self.param_buffer(s.resource)
        v = self.expr(s.value)
        if p.ty == "bool":
            v = f"(({v}) ? 1u : 0u)"
        self.checked |= s.check >= 0
        self.emit(f"GI_ST(b_{ascii_ident(p.name)}, n_{ascii_ident(p.name)}, {self.expr(s.index)}, {v}, "
                  f"{int(s.check >= 0)});")
        self.emit("if (st->fault) goto gi_undo;")

    def s_Atomic(self, s: N.Atomic) -> None:
        """An integer read-modify-write whose old value nobody reads, of one kind per buffer
        (adds and subs, or min, or max, ... `run` checks): the memory after the dispatch is
        then the same in any order of the threads (the numpy form applies them statement by
        statement, in increasing thread index), so the thread-serial loop may run them as it
        meets them. f32 adds (rounding order), exchanges, old values and mixed kinds keep
        the kernel in numpy."""
        p = self.param_buffer(s.resource)
        if s.target is not None or s.compare is not None or s.op not in _RMW or p.ty not in ("u32", "i32"):
            raise Unsupported(f"an atomic {s.op} on {p.ty}{' whose old value is read' if s.target else ''}")
        r = ascii_ident(p.name)
        self.checked |= s.check >= 0
        op = _RMW[s.op].replace("{t}", "i" if p.ty == "i32" else "u").format(a=f"b_{r}[gi_i]", b="gi_v")
        self.emit(f"{{ const uint32_t gi_i = {self.expr(s.index)}, gi_v = {self.expr(s.value)};")
        self.emit(f"  if (gi_i < n_{r}) {{ if (LOGGING && !gi_log(st, &b_{r}[gi_i])) st->fault = 1; "
                  f"else b_{r}[gi_i] = {op}; }} else if ({int(s.check >= 0)}) st->fault = 1; }}")
        self.emit("if (st->fault) goto gi_undo;")

    def s_If(self, s: N.If) -> None:
        self.emit(f"if ({self.expr(s.cond)}) {{")
        self.nested(s.then_body)
        if s.else_body:
            self.emit("} else {")
            self.nested(s.else_body)
        self.emit("}")

    def nested(self, body: list, loop: Optional[tuple] = None) -> None:
        self.ind += 1
        if loop is not None:
            self.loops.append(loop[0])
        self.block(body)
        if loop is not None:
            self.loops.pop()
            if loop[1]:
                self.emit(loop[1])
        self.ind -= 1

    def s_While(self, s: N.While) -> None:
        self.emit(f"while ({self.expr(s.cond)}) {{")
        self.nested(s.body, (None, ""))
        self.emit("}")

    def s_Loop(self, s: N.Loop) -> None:
        self.emit("for (;;) {")
        self.nested(s.body, (None, ""))
        self.emit("}")

    def s_For(self, s: N.For) -> None:
        if s.ty not in ("u32", "i32"):
            raise Unsupported(f"a for loop over {s.ty}")
        v = self.local(s.var)
        self.nlabel += 1
        lo, hi = f"gi_lo{self.nlabel}", f"gi_hi{self.nlabel}"
        self.emit("{")
        self.ind += 1
        self.emit(f"const uint32_t {lo} = {self.expr(s.start)}, {hi} = {self.expr(s.end)};")
        lt = (lambda a, b: f"((int32_t){a} < (int32_t){b})") if s.ty == "i32" else (lambda a, b: f"({a} < {b})")
        if not s.inclusive:
            self.emit(f"for ({v} = {lo}; {lt(v, hi)}; {v}++) {{")
            self.nested(s.body, (None, ""))
        else:  # `a..=b`: the last iteration is b itself (b may be the type's largest value)
            cont = f"gi_cont{self.nlabel}"
            self.emit(f"if (!{lt(hi, lo)}) for ({v} = {lo};; {v}++) {{")
            self.nested(s.body, (cont, f"{cont}: if ({v} == {hi}) break;"))
        self.emit("}")
        self.ind -= 1
        self.emit("}")

    def s_Break(self, s) -> None:
        self.emit("break;")

    def s_Continue(self, s) -> None:
        label = self.loops[-1]
        self.emit("continue;" if label is None else f"goto {label};")

    def s_Return(self, s) -> None:
        self.emit("goto gi_ret;")

    # ------------------------------------------------------------ expressions

    def param_buffer(self, resource: str) -> N.Param:
        p = self.k.param(resource)
        if p is None or p.category not in N.BUFFER_CATEGORIES:
            raise Unsupported(f"an access of `{resource}`")
        return p

    def expr(self, e: N.Expr) -> str:
        if e.ty not in TYPES and not isinstance(e, N.Builtin):
            raise Unsupported(f"a value of {e.ty}")
        fn = getattr(self, "e_" + type(e).__name__, None)
        if fn is None:
            raise Unsupported(f"{type(e).__name__} expressions")
        return fn(e)

    def e_Const(self, e: N.Const) -> str:
        if e.ty == "f32":
            return C.fconst(float(e.value))
        if e.ty == "bool":
            return "1" if e.value else "0"
        return f"0x{int(e.value) & 0xFFFFFFFF:08x}u"

    def e_Var(self, e: N.Var) -> str:
        if e.name in self.k.locals:
            return self.local(e.name)
        p = self.k.param(e.name)
        if p is None or p.category != "scalar":
            raise Unsupported(f"the name `{e.name}`")
        return f"s_{ascii_ident(p.name)}"

    def e_Swizzle(self, e: N.Swizzle) -> str:
        if not isinstance(e.value, N.Builtin) or len(e.lanes) != 1:
            raise Unsupported("a vector swizzle")
        return self.builtin(e.value.name, e.lanes)

    def e_Field(self, e: N.Field) -> str:
        if not isinstance(e.value, N.Builtin) or e.name not in ("x", "y", "z"):
            raise Unsupported("a field")
        return self.builtin(e.value.name, e.name)

    def e_Builtin(self, e: N.Builtin) -> str:
        raise Unsupported("a builtin used as a vector")

    def builtin(self, name: str, c: str) -> str:
        """Component `c` of a builtin from the thread loops' counters (u32: global ids wrap)."""
        return _BUILTINS[name].format(c=c)

    def e_Len(self, e: N.Len) -> str:
        return f"n_{ascii_ident(self.param_buffer(e.resource).name)}"

    def e_Load(self, e: N.Load) -> str:
        p = self.param_buffer(e.resource)
        self.checked |= e.check >= 0
        r = ascii_ident(p.name)
        v = f"gi_ld_{'f' if p.ty == 'f32' else 'u'}(st, b_{r}, n_{r}, {self.expr(e.index)}, {int(e.check >= 0)})"
        return f"({v} != 0u)" if p.ty == "bool" else v

    def e_Unary(self, e: N.Unary) -> str:
        a = self.expr(e.operand)
        if e.op == "neg":
            return f"(-{a})" if e.ty == "f32" else f"(0u - {a})"
        return f"(!{a})" if e.ty == "bool" else f"(~{a})"

    def e_Binary(self, e: N.Binary) -> str:
        op, ty, lt = e.op, e.ty, e.lhs.ty
        if op in N.LOGICAL:
            return f"({self.expr(e.lhs)} {'&&' if op == 'and' else '||'} {self.expr(e.rhs)})"
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        if op in N.COMPARISONS:
            sym = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}[op]
            if lt == "i32":
                return f"((int32_t){a} {sym} (int32_t){b})"
            return f"({a} {sym} {b})"
        if op in ("shl", "shr"):
            return self.rule(f"{op}_{lt}", a, b)
        if op in ("add", "sub", "mul", "bitand", "bitor", "bitxor"):
            sym = {"add": "+", "sub": "-", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^"}[op]
            return f"({a} {sym} {b})"
        if ty == "f32":
            return f"({a} / {b})" if op == "div" else f"fmodf({a}, {b})"
        if op in ("div", "rem"):
            self.checked |= e.check >= 0
            return self.rule(f"{op}_{ty}", a, f"gi_zero_chk(st, {b}, {int(e.check >= 0)})")
        raise Unsupported(f"the operator {op}")

    def rule(self, name: str, *args: str) -> str:
        if name not in RULES:
            raise Unsupported(f"the rule {name}")
        self.rules.add(name)
        return f"{C.rule_name(name)}({', '.join(args)})"

    def e_Cast(self, e: N.Cast) -> str:
        x, vt, ty = self.expr(e.value), e.value.ty, e.ty
        if vt == ty or {vt, ty} == {"u32", "i32"}:
            return x
        if vt == "bool":
            return f"(({x}) ? 1u : 0u)" if ty in ("u32", "i32") else f"(({x}) ? 1.0f : 0.0f)"
        if vt == "f32" and ty in ("u32", "i32"):
            return self.rule(f"f32_to_{ty}", x)
        if ty == "f32" and vt in ("u32", "i32"):
            return self.rule(f"{vt}_to_f32", x)
        raise Unsupported(f"a cast from {vt} to {ty}")

    def e_Select(self, e: N.Select) -> str:
        kind = {"f32": "f", "bool": "p"}.get(e.ty, "u")
        return f"gi_sel_{kind}({self.expr(e.cond)}, {self.expr(e.if_true)}, {self.expr(e.if_false)})"

    def e_Call(self, e: N.Call) -> str:
        f = e.func
        if any(a.ty not in TYPES for a in e.args):
            raise Unsupported(f"{f} of a vector")
        xs = [self.expr(a) for a in e.args]
        elem = e.args[0].ty
        rule = call_rule(f, elem)
        if rule is not None:
            assert CALL_RESULT[RULES[rule].ret] == e.ty
            return self.rule(rule, *xs)
        if f == "abs":
            return xs[0] if elem == "u32" else self.rule(f"abs_{elem}", xs[0])
        if f in ("floor", "ceil", "trunc", "sqrt"):
            return f"{f}f({xs[0]})"
        if f == "round":
            return self.rule("round_f32", xs[0])
        if f in FUNCTIONS:
            self.funcs.add(f)
            return f"{C.name(f)}({', '.join(xs)})"
        if f == "fma":
            return f"fmaf({xs[0]}, {xs[1]}, {xs[2]})"
        if f == "to_bits":
            return f"gi_f2u({xs[0]})"
        if f == "from_bits":
            return f"gi_u2f({xs[0]})"
        if f in ("min", "max", "clamp") and elem == "f32":
            return self.rule(f"{f}_f32", *xs)
        if f in ("min", "max", "clamp"):  # numpy's minimum / maximum (clamp: min(max(x, lo), hi))
            t = elem[0]
            if f == "clamp":
                return f"gi_min_{t}(gi_max_{t}({xs[0]}, {xs[1]}), {xs[2]})"
            return f"gi_{f}_{t}({xs[0]}, {xs[1]})"
        raise Unsupported(f"the call {f}")


def emit_c(kernel: N.Kernel, slots: list) -> str:
    """The C source of `kernel` (lowered for the cpu target; `slots`: the numpy form's
    argument list, whose views, lengths and scalars the entry takes in order), or raises
    Unsupported."""
    return _Emitter(kernel, slots).run()


# ---------------------------------------------------------------- build and run

MAX_STACK_BYTES = 256 << 10  # the workgroup form's arrays live on the calling thread's stack
NATIVE_AFTER = 4  # a kernel's dispatches submitted this often get a C build (in the background)
SLOW_RUN_S = 0.05  # or one numpy run this long (a compile costs ~0.2 s of the background thread)
DECIDE_RUNS = 2  # runs of each form, per dispatch, before the faster one is kept
WARMUP_RUNS = 2  # numpy runs not timed for that: the first make transposed copies (transposed.py)
PREFER: Optional[bool] = None  # tests: True builds at the first submit and always runs C, False never


class NativeKernel:
    """A compiled kernel's entry, called with a dispatch's R (the numpy form's arguments)."""

    def __init__(self, lib, slots: list, params: list):
        import ctypes
        self.lib, self.ct = lib, ctypes
        self.fn = lib.goldy_kernel
        P, U = ctypes.c_void_p, ctypes.c_uint32
        self.fn.argtypes = [P, P, P, U, U, U]
        self.fn.restype = ctypes.c_int
        self.kinds = [(s.kind, params[s.param].ty) for s in slots]

    def pack(self, R: list):
        """(buffer pointers, lengths, scalar bits) as ctypes arrays, or None where a view is
        not contiguous (a strided binding: the numpy form takes it)."""
        ct = self.ct
        ptrs, lens, sc = [], [], []
        for (kind, ty), v in zip(self.kinds, R):
            if kind == "view":
                if v.ndim != 1 or (v.size > 1 and v.strides[0] != v.itemsize):
                    return None
                ptrs.append(v.ctypes.data)
            elif kind == "len":
                lens.append(int(v))
            elif ty == "f32":
                sc.append(int(np.float32(v).view(np.uint32)))
            else:
                sc.append(int(v) & 0xFFFFFFFF)
        return ((ct.c_void_p * max(1, len(ptrs)))(*ptrs), (ct.c_uint32 * max(1, len(lens)))(*lens),
                (ct.c_uint32 * max(1, len(sc)))(*sc))

    def run(self, packed, groups: tuple) -> bool:
        """True: the dispatch ran. False: a trapping check failed, every store was undone,
        and the numpy form must run it (and report the fault)."""
        return self.fn(*packed, *groups) == 0


def build_now(ck) -> Optional[NativeKernel]:
    """`ck`'s (a CpuKernel's) C build, made now: sets and returns ck.native, or None where
    the kernel is unsupported or no compiler builds it (ck.native_state says which)."""
    from . import native
    from goldy_import.ir.pipeline import for_target
    if native.library() is None:  # no compiler, or GOLDY_CPU_NATIVE=0
        ck.native_state = "off"
        return None
    try:
        k = for_target(ck.kernel, "cpu").kernel
        source = emit_c(k, ck.slots)
    except Unsupported as e:
        ck.native_state = f"unsupported: {e}"
        return None
    except Exception as e:  # a gap in this emitter must never stop the numpy form
        ck.native_state = f"emitter failed: {type(e).__name__}: {e}"
        return None
    lib = native.build(source)
    if lib is None:
        ck.native_state = "build failed"
        return None
    ck.native = NativeKernel(lib, ck.slots, k.params)
    ck.native_state = "ready"
    return ck.native


class Form:
    """Which form runs one dispatch (a recorded dispatch's state on the cpu backend): the
    numpy form until the kernel's C build is ready, then each form timed DECIDE_RUNS
    times (numpy's after WARMUP_RUNS: its first runs make transposed copies) and the
    faster kept. A thread-serial C loop loses to the numpy form's lane-parallel sums
    where the threads' loops are long (a big GEMV) and wins where the interpreter's cost
    per statement dominates."""

    __slots__ = ("choice", "packed", "numpy_runs", "numpy_best", "c_runs", "c_best")

    def __init__(self):
        self.choice: Optional[bool] = None  # None until decided, then True (C) or False (numpy)
        self.packed = None  # NativeKernel.pack of R; False: not packable; None: (again) to pack
        self.numpy_runs, self.numpy_best = 0, float("inf")
        self.c_runs, self.c_best = 0, float("inf")

    def timing(self) -> bool:
        """Whether the numpy form's next run should be timed (`numpy_ran`)."""
        return self.choice is None


def run(ck, form: Form, R: list, groups: tuple) -> bool:
    """Run the dispatch as C where its form says so: True if it ran. False: the numpy form
    runs it, also after a failed check (the C run's stores undone), so that it reports
    the fault in SIMT order."""
    if ck.race_sites is not None or form.choice is False or PREFER is False:
        return False
    nk = ck.native
    if nk is None and PREFER and not ck.native_state:
        nk = build_now(ck)
    if nk is None:
        if ck.native_state not in ("", "building"):
            form.choice = False  # no C form: no more timing
        return False
    if PREFER:
        form.choice = True
    elif form.choice is None and form.numpy_runs < WARMUP_RUNS + DECIDE_RUNS:
        return False  # numpy's times first
    if form.packed is None:
        form.packed = nk.pack(R) or False
    if form.packed is False:
        form.choice = False
        return False
    t0 = time.perf_counter()
    if not nk.run(form.packed, groups):
        return False
    if form.choice is None:
        form.c_best, form.c_runs = min(form.c_best, time.perf_counter() - t0), form.c_runs + 1
        if form.c_runs >= DECIDE_RUNS:
            form.choice = form.c_best < form.numpy_best
    return True


def numpy_ran(ck, form: Form, seconds: float) -> None:
    """The numpy form ran the dispatch in `seconds` (timed while `form.timing()`): counts
    towards the kernel's C build, started on the background thread at NATIVE_AFTER
    submits or after a run slower than SLOW_RUN_S (the numpy form runs meanwhile)."""
    form.numpy_runs += 1
    if form.numpy_runs > WARMUP_RUNS:
        form.numpy_best = min(form.numpy_best, seconds)
    if PREFER is False or ck.native_state or ck.race_sites is not None:
        return
    ck.submits += 1
    if ck.submits < NATIVE_AFTER and seconds < SLOW_RUN_S:
        return
    ck.native_state = "building"
    _worker().submit(build_now, ck)


def _worker():
    from . import native
    return native.one_thread("cpu-native")


def wait_for_builds() -> None:
    """Block until every requested C build is done (benchmarks and tests)."""
    _worker().submit(lambda: None).result()
