"""WGSL emitter: verified IR in, one WGSL compute module out.

Module shape: the bindings and the uniform block `gi_u` follow the kernel's ABI plan
(ir/abi.py, `plan(kernel, "wgsl")`, which the runtime fills from as well): one storage
binding per buffer (`array<T>`; `bool` elements as u32 0/1; `array<atomic<T>>` when the
kernel uses `atomic_add` on it), tensor view (the parent buffer) and image (a row-major
storage buffer of texels), then `gi_u` with the uniform structs, tensor layout records
(`array<vec4<u32>, 3>`) and u32 words (offsets, lengths, sizes, scalars) named
`gi_<role>_<param>` (scalars and uniforms under their own names).

Every access goes through a small bounds-checked helper (out-of-range loads give 0,
out-of-range stores are dropped). A load is issued ahead of its check and its value
selected after (`_Emitter.speculable`): no branch in front of a load, so the driver can
batch a thread's loads.

Trapping checks (issue 9): when the IR carries check sites (ir/checks.py: `check >= 0`
on a Load, Store, AtomicAdd or integer div/rem), the module gets one more binding after
the uniform block, `gi_faults: array<atomic<u32>, 8>`, the dispatch's error word (ir/abi.py
`ERROR_WORD`; the runtime binds each dispatch's slot of one shared buffer with a dynamic
offset). A checked node goes through a `gi_checked_*` helper
taking the site id: a failing check is suppressed exactly as above (load 0, store/atomic
dropped, quotient 0), and `gi_fault` records it, the first failure of the dispatch
winning through a compare-exchange on the flag; the thread carries on, so no control flow
is added around barriers. Where `return` is lowered to `gi_done` (below), `gi_done` lives
in the private address space and a returned thread records nothing. A store whose value
can fault evaluates the value before the place (Rust's order). Nodes with `check == -1`
keep the silent helpers; a kernel without sites has no error word at all.

Rust semantics that WGSL leaves open or defines
differently are written out as helper functions: Rust's rules of ir/rules.py rendered by
codegen/math_text.py (`gi_div_i32` ...: integer division and remainder through unsigned
division, shift amounts modulo 32, saturating float->int casts, exact int->float
conversion, round half away from zero, f32 negation, abs, min, max and clamp decided on
the bits), and, in codegen/wgsl/library.wgsl, f32 `/`, `%` and `sqrt` computed exactly in integer arithmetic
(WGSL only promises 2.5 ulp for `/` and less for sqrt); dot / matrix products are summed
left to right.

Float algebra: WGSL lets a driver fuse `a * b + c` into an FMA, reassociate, distribute
and apply identities such as `x * 0 = 0` (Mesa's lavapipe does, as naga emits no
NoContraction). Rust rounds every `+ - *` on its own, so each f32 operation is a helper
(`gi_fadd_res_f32` ...) whose result has its bits XOR-ed with a runtime zero from the
uniform block, which no optimiser can see through (`_Emitter.pins`), and so are the
operands a driver could know something of (`_opaque_origin`: constants, locals, loads, or
two operands that may be one value); the math library's helpers (`gi_fadd_f32` ...) pin
every operand. `mul_add` is computed exactly in integer arithmetic (lavapipe's `fma`
rounds twice).

Barriers are `workgroupBarrier()`, preceded by `storageBarrier()` only where a thread may
read a buffer element another wrote (`_storage_observed`).

Transcendentals (`exp` ... `pow`, and softmax's exp) are the math library's helpers
(`gi_exp_f32` ..., ir/mathlib.py rendered by codegen/math_text.py) built on those pinned
operations, so they return the CPU oracle's bits; no driver built-in is called.

What this relies on from the driver: each f32 `+ - *` instruction correctly rounded (WGSL
guarantees it), integer arithmetic, bit casts, compares and selects.

Constant subexpressions are printed folded with Rust's semantics (`ir.fold.fold`): naga would
evaluate them itself and reject what Rust wraps (`i32::MAX + 1`) or rounds to infinity.

Barrier uniformity: WGSL requires barriers in uniform control flow. When a kernel has both
a `return` and a barrier (or collective), returns are lowered to a flag `gi_done`: a
returned thread keeps following the control flow (so it reaches every barrier the others
reach) but performs no stores, atomics or collective writes; inside loops without barriers
it leaves the loop at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NoReturn, Optional

import numpy as np

from goldy_import.errors import BackendError
from goldy_import.ir import abi as A
from goldy_import.ir.info import kernel_info
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.mathlib import FUNCTIONS as _MATH_FUNCTIONS

from goldy_import.ir.rules import RULES as _RULES, call_rule as _call_rule

from ..math_text import WGSL as _MATH_WGSL, WGSL_FLUSHING as _MATH_WGSL_FLUSHING, render as _render_math, render_rule as _render_rule

from ..guard import emitter
from .batch import Batched, batched_prologue
from .parens import _bare, _strip
from .unroll import reads_first
from .library import LIBRARY
from goldy_import.codegen.ptx.emitter import batchable
from goldy_import.codegen.names import WGSL, field_namer, kernel_namer
from goldy_import.ir.fold import constant_tree, fold
from goldy_import.ir.pipeline import for_target

__all__ = ["emit_wgsl", "emit_wgsl_module", "WgslModule", "ResourceBinding", "UniformField", "WgslEmitError"]


class WgslEmitError(BackendError):
    """The kernel uses something the WGSL emitter cannot express."""


@dataclass(frozen=True)
class ResourceBinding:
    binding: int
    param: int  # index into kernel.params
    name: str  # WGSL variable name
    writable: bool
    stride: int  # bytes per array element in WGSL


@dataclass(frozen=True)
class UniformField:
    """One member of the uniform block: what it holds and where."""

    name: str
    kind: str  # "scalar" | "uniform" | "layout" | "off" | "len" | "blen" | "width" | "height" | "zero"
    param: int  # -1 for "zero" (a runtime 0u, see _Emitter.pins)
    ty: str  # IR type ("u32" for metadata words)
    offset: int
    size: int


@dataclass
class WgslModule:
    code: str
    kernel: str
    entry_point: str
    source_file: str
    bindings: list[ResourceBinding]
    uniform_fields: list[UniformField]
    uniform_binding: Optional[int]
    uniform_size: int
    line_spans: dict[int, N.Span] = field(default_factory=dict)  # 1-based WGSL line -> Rust span
    fault_binding: Optional[int] = None  # the error word's binding (kernels with check sites)
    grid_binding: Optional[int] = None  # folded grids: `gi_grid`, the logical grid (runtime/grid_fold.py)

    def span_of_line(self, line: int) -> Optional[N.Span]:
        return self.line_spans.get(line)


def emit_wgsl(kernel: N.Kernel) -> str:
    return emit_wgsl_module(kernel).code


@emitter("WGSL")
def emit_wgsl_module(kernel: N.Kernel, force_writable: frozenset = frozenset(),
                     abi: Optional[A.WgslPlan] = None, exact_subnormals: bool = False,
                     fold_grid: bool | str = False, batch: int = 1) -> WgslModule:
    """`force_writable`: parameter indices to declare read_write even though the kernel only
    reads them (WebGPU forbids binding one buffer read-only and writable in one dispatch).
    `abi`: the kernel's `ir.abi.plan(kernel, "wgsl")`, where the caller already has it.
    `exact_subnormals`: for a driver that flushes f32 subnormals (the wgpu backend probes
    it), redo `+ - *` exactly where an operand or the result is zero or subnormal (`fop`).
    `fold_grid`: the dispatch grid is a folding of the logical one (grids beyond the device's
    per-dimension cap, runtime/grid_fold.py); the ids are rebuilt from it (`_Emitter.fold_prologue`).
    `fold_grid="1d"`: the same for a logical grid of (n, 1, 1) workgroups only (no division).
    `batch` > 1: the batched entry of a `batchable` kernel on a 1-D grid (codegen/wgsl/batch.py),
    `batch` logical workgroups per dispatched one; it takes `gi_grid` as a folded grid does.
    Collectives are lowered to plain IR first (ir/legalize.py; already-lowered IR is unchanged)."""
    kernel = for_target(kernel, "wgsl").kernel
    em = _Emitter(kernel, force_writable, abi or A.plan(kernel, "wgsl"), exact_subnormals)
    em.fold_grid = fold_grid
    if batch > 1:
        if not batchable(kernel):
            raise WgslEmitError(f"kernel `{kernel.name}`: no batched entry (codegen/ptx/emitter.py `batchable`)")
        em.batch, em.fold_grid = batch, "1d"
    return em.module()


# ---------------------------------------------------------------- types and literals


def wgsl_type(t: str, names: dict[str, str]) -> str:
    if T.is_scalar(t):
        return t
    if T.is_vector(t):
        return f"vec{T.vec_len(t)}<{T.elem_of(t)}>"
    if T.is_matrix(t):
        n = T.vec_len(t)
        return f"mat{n}x{n}<f32>"
    if T.is_struct(t):
        return names["struct:" + T.struct_name(t)]
    raise ValueError(t)


def storage_type(t: str, names: dict[str, str]) -> str:
    """How an element is held in host-shareable memory (bool never is)."""
    return "u32" if t == "bool" else wgsl_type(t, names)


_F32_TEXT: dict = {}  # (value, sign) -> f32_literal text: kernels repeat their constants


def f32_literal(v: float) -> str:
    key = (v, math.copysign(1.0, v))  # -0.0 == 0.0: the sign tells them apart
    text = _F32_TEXT.get(key)
    if text is None:
        text = _f32_literal(v)
        if len(_F32_TEXT) < 4096:
            _F32_TEXT[key] = text
    return text


def _f32_literal(v: float) -> str:
    x = np.float32(v)
    bits = int(x.view(np.uint32))
    if not np.isfinite(x) or (x != 0 and abs(x) < np.finfo(np.float32).tiny):
        return f"bitcast<f32>({bits:#010x}u)"  # inf, nan and subnormals bit-exactly
    if x == 0:
        return "(-0.0f)" if bits >> 31 else "0.0f"
    s = str(abs(x))
    if not any(c in s for c in ".e"):
        s += ".0"
    return f"(-{s}f)" if x < 0 else f"{s}f"


def const_text(value, ty: str) -> str:
    if ty == "bool":
        return "true" if value else "false"
    if ty == "u32":
        return f"{int(value)}u"
    if ty == "i32":
        v = int(value)
        if v == -(2**31):
            return "i32(-2147483648)"
        return f"(-{-v}i)" if v < 0 else f"{v}i"
    if ty == "f32":
        return f32_literal(float(value))
    raise ValueError(ty)


def _suffix(t: str) -> str:
    """Helper-name suffix for a type: f32, u32, v3f32 ..."""
    if T.is_vector(t):
        return f"v{T.vec_len(t)}{T.elem_of(t)}"
    if T.is_matrix(t):
        return f"m{T.vec_len(t)}"
    return t




_MATH = {_MATH_WGSL.name(f): f for f in _MATH_FUNCTIONS}  # helper name -> library function

_PINS: dict[str, tuple[str, str, str]] = {}  # type -> its pins' names (see `_Emitter.pins`)
_PINS_DOC = """// Float operations as Rust rounds them. Drivers may rewrite float algebra (fuse a * b + c,
// reassociate, x * 0 = 0, x - x = 0 ...), so operands and results pass through an XOR
// with runtime zeros (gi_u.gi_zero_*) that no optimiser can see through."""

# ---------------------------------------------------------------- the emitter


def _contains(stmts: list[N.Stmt], kinds) -> bool:
    return any(isinstance(s, kinds) for s in N.walk_stmts(stmts))


_BARRIERS = (N.Barrier, N.Reduce, N.Softmax)



def _has_site(e: N.Expr) -> bool:
    return any(getattr(x, "check", -1) >= 0 for x in N.walk_expr(e))


_ATOMIC_FN = {"add": "atomicAdd", "sub": "atomicSub", "min": "atomicMin", "max": "atomicMax", "and": "atomicAnd",
              "or": "atomicOr", "xor": "atomicXor", "exchange": "atomicExchange"}


def _atomic_params(op: str, ty: str) -> str:
    return f"c: {ty}, v: {ty}" if op == "compare_exchange" else f"v: {ty}"


def _rmw(op: str, ptr: str) -> str:
    """The block returning the previous value of `ptr`'s read-modify-write. WGSL's compare-
    exchange may fail spuriously: it is retried until it succeeds or sees another value."""
    if op != "compare_exchange":
        return f"{{ return {_ATOMIC_FN[op]}({ptr}, v); }}"
    return ("{\n        loop {\n"
            f"            let r = atomicCompareExchangeWeak({ptr}, c, v);\n"
            "            if (r.exchanged || r.old_value != c) { return r.old_value; }\n"
            "        }\n    }")


def _helper_locals(k: N.Kernel, atomic: set, checked: bool) -> dict[str, set[str]]:
    """Names a resource, or the struct of its elements, must not be spelled like: the
    parameters and locals of its helpers (`loader`, `storer`, `atomic_adder`, the checked
    forms), which name the resource and its struct and would shadow them."""
    written = set(kernel_info(k).written) | atomic
    cas = {s.resource for s in N.walk_stmts(k.body) if isinstance(s, N.Atomic) and s.op == "compare_exchange"}
    out: dict[str, set[str]] = {}
    for r in list(k.params) + list(k.workgroup_arrays):
        if isinstance(r, N.Param) and r.category in ("scalar", "uniform"):
            continue
        cat = getattr(r, "category", "workgroup")
        names = {"c"} if cat == "image" else {"i"}
        names |= {"j"} if cat in N.TENSOR_CATEGORIES else set()
        names |= {"v"} if r.name in written else set()
        names |= {"site"} if checked else set()
        names |= {"c", "r"} if r.name in cas else set()  # compare-exchange's operand and result
        out.setdefault(r.name, set()).update(names)
        if T.is_struct(r.ty):
            out.setdefault("struct:" + T.struct_name(r.ty), set()).update(names)
    return out


# When a result computed on a driver that flushes f32 subnormals (flush to zero, operands
# and results) is Rust's, judged on its exponent field e alone:
# - a * b: 1 <= e <= 254. A flushed operand gives a product of +-0 (e = 0), or NaN for
#   0 * inf (e = 255); a flushed result has e = 0. Otherwise nothing was flushed.
# - a + b, a - b: e >= 27 (|r| >= 2^-100). A flushed operand b (|b| < 2^-126) leaves
#   r = a (or 0, e = 0, when a is +-0 or flushed too), and for |a| >= 2^-101 the exact
#   a + b rounds to a anyway: |b| is below half the spacing of floats next to a.
# Everything else (zero, tiny or subnormal results, NaN or inf products) is redone exactly.
_TRUSTED = {"mul": "(bitcast<u32>({r}) & 0x7f800000u) - 0x00800000u < 0x7f000000u",
            "add": "(bitcast<u32>({r}) & 0x7f800000u) >= 0x0d800000u"}
_TRUSTED["sub"] = _TRUSTED["add"]


def _opaque_origin(em: "_Emitter", x: N.Expr, ty: str) -> Optional[str]:
    """Where an operand of an f32 `+ - *` comes from, when its value is opaque to the
    driver's algebra: "param" (a scalar parameter, read from the uniform block), "op" (the
    pinned result of another `+ - *`). None for anything else, which gets pinned: constants,
    locals (which may hold constants), loads (a checked load is `select(0.0, v, ok)`, whose
    constant arm a driver may push an operation into: x * 0.0 = 0.0) and the rest. Two
    operands of one origin may be one value (a - a, a CSE'd product): one is pinned."""
    if x.ty != ty:
        return None  # splatted
    if isinstance(x, N.Var):
        p = em.param(x.name)
        return "param" if p is not None and p.category == "scalar" else None
    if (isinstance(x, N.Binary) and x.op in ("add", "sub", "mul") and T.elem_of(x.ty) == "f32"
            and not T.is_matrix(x.lhs.ty) and not T.is_matrix(x.rhs.ty) and fold(x) is None
            and not constant_tree(x)):
        return "op"
    return None


def _storage_observed(k: N.Kernel, force_writable: frozenset) -> bool:
    """Whether a thread may read a buffer element another thread wrote (then a barrier
    orders buffer memory as well, `storageBarrier`, as docs/semantics.md says): a parameter
    both written and read, one under an atomic, or a read-only one bound to a written
    buffer (`force_writable`). Otherwise no thread can tell, and a barrier orders only the
    workgroup arrays (the collectives' scratch): one barrier instead of two."""
    params = {p.name for p in k.params if p.category not in ("scalar", "uniform")}
    info = kernel_info(k)
    if force_writable or params & set(info.atomic):
        return True
    written = params & set(info.written)
    return bool(written) and any(isinstance(x, N.Load) and x.resource in written  # read back?
                                 for s in N.walk_stmts(k.body) for e in N.stmt_exprs(s) for x in N.walk_expr(e))


class _Emitter:
    def __init__(self, k: N.Kernel, force_writable: frozenset, abi: A.WgslPlan, exact_subnormals: bool = False):
        self.k = k
        self.exact_subnormals = exact_subnormals
        self.fold_grid = False  # see emit_wgsl_module
        self.batch = 1  # see emit_wgsl_module; the batched entry's copy being emitted (batch.py):
        self.copy_suffix, self.live = "", None  # its ids' suffix, its predicate (None: not batched)
        self.hoisted: dict = {}  # id(Load) -> (index, read) of an unrolled trip's reads ahead (unroll.py)
        self.force_writable = force_writable
        self.abi = abi
        self.structs = {s.name: s for s in k.structs}
        self.lines: list[tuple[str, Optional[N.Span]]] = []
        self.helpers: dict[str, str] = {}  # name -> text, in dependency order
        self.indent = 1
        self.counter = 0
        self.atomic = A.atomic_resources(k)
        self.flag_mode = kernel_info(k).return_before_sync  # a `return` and a barrier (_BARRIERS) somewhere
        self.checked = abi.checked  # trapping-check sites: the module takes an error word
        self.uses_zero = False  # whether the uniform block needs the `gi_zero_*` words (see `pins`)
        self.storage_sync = _storage_observed(k, force_writable)  # barriers order buffer memory too
        self.names = kernel_namer(k, WGSL, _helper_locals(k, self.atomic, self.checked)).map  # structs: `struct:<name>`
        self.entry = self.names["kernel:" + k.name]
        self.field_names = {s.name: field_namer(s, WGSL).map for s in k.structs}

    # -------------------------------------------------------- errors

    def fail(self, msg: str, span: Optional[N.Span]) -> NoReturn:
        sp = span or self.k.span
        raise WgslEmitError(f"kernel `{self.k.name}`: cannot emit WGSL: {msg}\n"
                            f"  --> {self.k.source_file}:{sp.line}:{sp.col}")

    # -------------------------------------------------------- output

    def line(self, text: str, span: Optional[N.Span] = None) -> None:
        self.lines.append(("    " * self.indent + text, span))

    def fresh(self, base: str) -> str:
        self.counter += 1
        return f"gi_{base}{self.counter}"

    def ty(self, t: str) -> str:
        return wgsl_type(t, self.names)

    def need(self, name: str) -> str:
        if name in ("gi_fadd_f32", "gi_fsub_f32", "gi_fmul_f32"):
            return self.fop(name[4:7], "f32")
        if name in ("gi_fadd_raw_f32", "gi_fsub_raw_f32", "gi_fmul_raw_f32"):  # never the exact path
            return self.fop(name[4:7], "f32", raw=True)
        if name in _MATH and name not in self.helpers:  # the one f32 math library (ir/mathlib.py)
            text, uses = _render_math(_MATH[name], _MATH_WGSL_FLUSHING if self.exact_subnormals else _MATH_WGSL)
            for u in sorted(uses):
                self.need(u)
            return self.define(name, text)
        if name[3:] in _RULES and name not in self.helpers:  # Rust's rules (ir/rules.py)
            text, uses = _render_rule(name[3:], _MATH_WGSL)
            for u in sorted(uses):
                self.need(u)
            return self.define(name, text)
        if name not in self.helpers:
            deps, text = LIBRARY[name]
            for d in deps:
                self.need(d)
            self.helpers[name] = text.strip("\n")
        return name

    def define(self, name: str, text: str) -> str:
        if name not in self.helpers:
            self.helpers[name] = text.strip("\n")
        return name

    def lanewise(self, scalar_fn: str, t: str, arity: int, scalar_arg: int = -1) -> str:
        """The helper for type `t`: the scalar one, or a vector wrapper calling it per lane
        (argument `scalar_arg`, a shift amount, stays one u32)."""
        if not T.is_vector(t):
            return self.need(scalar_fn)
        self.need(scalar_fn)
        base = scalar_fn.rsplit("_", 1)[0]
        name = f"{base}_{_suffix(t)}"
        wt = self.ty(t)
        params = ", ".join(f"{'abc'[i]}: {'u32' if i == scalar_arg else wt}" for i in range(arity))
        lanes = ", ".join(f"{scalar_fn}({', '.join(chr(97 + i) if i == scalar_arg else f'{chr(97 + i)}.{c}' for i in range(arity))})"
                          for c in "xyzw"[:T.vec_len(t)])
        return self.define(name, f"fn {name}({params}) -> {wt} {{\n    return {wt}({lanes});\n}}")

    # -------------------------------------------------------- module

    def module(self) -> WgslModule:
        k = self.k
        self.emit_body()  # first: it decides which helpers and uniform words exist
        body = self.lines
        bindings, fields, block = self.plan_bindings()
        ubinding = block.binding
        head: list[str] = [f"// kernel `{k.name}` from {k.source_file}, generated by goldy-import; do not edit.", ""]
        for s in k.structs:
            head.append(f"struct {self.names['struct:' + s.name]} {{")
            for f in s.fields:
                head.append(f"    {self.field_names[s.name][f.name]}: {self.ty(f.ty)},")
            head += ["}", ""]
        if fields:
            head.append("struct gi_Uniforms {")
            for f in fields:
                attrs = ""
                if f.kind == "uniform":
                    attrs = f"@align(16) @size({f.size}) "
                head.append(f"    {attrs}{f.name}: {self.uniform_member_type(f)},")
            head += ["}", ""]
        for b in bindings:
            p = k.params[b.param]
            access = "read_write" if b.writable else "read"
            head.append(f"@group(0) @binding({b.binding}) var<storage, {access}> {b.name}: array<{self.elem_decl(p)}>;")
        if ubinding is not None:
            head.append(f"@group(0) @binding({ubinding}) var<uniform> gi_u: gi_Uniforms;")
        fbinding = block.fault_binding
        gbinding = None
        if self.fold_grid:  # after every other binding: the plan's numbers stay as they are
            gbinding = 1 + max([b.binding for b in bindings] + [x for x in (ubinding, fbinding) if x is not None],
                               default=-1)
            head.append(f"@group(0) @binding({gbinding}) var<uniform> gi_grid: vec4<u32>;  // logical grid, workgroups")
        if fbinding is not None:
            head.append(f"@group(0) @binding({fbinding}) var<storage, read_write> gi_faults: "
                        f"array<atomic<u32>, {A.FAULT_WORDS}>;")
            if self.flag_mode:  # gi_fault reads it: a returned thread records no failure
                head.append("var<private> gi_done: bool = false;")
        for w in k.workgroup_arrays:
            elem = f"atomic<{w.ty}>" if w.name in self.atomic else w.ty
            head.append(f"var<workgroup> {self.names[w.name]}: array<{elem}, {w.size}>;")
        head.append("")
        for text in self.helpers.values():
            head += text.split("\n") + [""]
        wx, wy, wz = k.workgroup_size
        head.append(f"@compute @workgroup_size({wx}, {wy}, {wz})")
        head.append(f"fn {self.entry}({', '.join(self.entry_args())}) {{")
        out = list(head)
        spans: dict[int, N.Span] = {}
        for text, sp in self.fold_prologue() + self.prologue() + body:
            out.append(text)
            if sp is not None:
                spans[len(out)] = sp
        out.append("}")
        return WgslModule("\n".join(out) + "\n", k.name, self.entry, k.source_file, bindings, fields, ubinding,
                          block.size, spans, fbinding, gbinding)

    def elem_decl(self, p: N.Param) -> str:
        st = storage_type(p.ty, self.names)
        return f"atomic<{st}>" if p.name in self.atomic else st

    def uniform_member_type(self, f: UniformField) -> str:
        if f.kind == "layout":
            return "array<vec4<u32>, 3>"
        if f.kind == "uniform":
            return self.ty(f.ty)
        return storage_type(f.ty, self.names)

    def plan_bindings(self) -> tuple[list[ResourceBinding], list[UniformField], A.UniformBlock]:
        """The plan's bindings and uniform block (ir/abi.py), under this module's names."""
        k = self.k
        bindings = [ResourceBinding(b.binding, b.param, self.names[k.params[b.param].name],
                                    b.writable or b.param in self.force_writable, b.stride)
                    for b in self.abi.bindings]
        block = self.abi.block(self.uses_zero)
        fields: list[UniformField] = []
        for w, zero in zip(block.fields, [""] * len(self.abi.words) + ["a", "b", "c"]):
            if zero:
                name = f"gi_zero_{zero}"
            else:
                n = self.names[k.params[w.param].name]
                name = n if w.role in ("scalar", "uniform") else f"gi_{w.role}_{n}"
            fields.append(UniformField(name, w.role, w.param, w.ty, w.offset, w.size))
        return bindings, fields, block

    def entry_args(self) -> list[str]:
        b = set(self.k.builtins)
        args = []
        if self.fold_grid:  # the folded ids; the logical ones are rebuilt (fold_prologue)
            return ["@builtin(workgroup_id) gi_fold_id: vec3<u32>", "@builtin(num_workgroups) gi_fold_n: vec3<u32>",
                    "@builtin(local_invocation_id) gi_local_id: vec3<u32>"]
        for name, wgsl in (("global_id", "global_invocation_id"), ("local_id", "local_invocation_id"),
                           ("workgroup_id", "workgroup_id"), ("num_workgroups", "num_workgroups")):
            if name in b:
                args.append(f"@builtin({wgsl}) gi_{name}: vec3<u32>")
        return args

    def fold_prologue(self) -> list[tuple[str, Optional[N.Span]]]:
        """The logical workgroup of a folded dispatch: its linear index in the folded grid,
        split over the logical grid `gi_grid.xyz` (`gi_grid.w` workgroups in all). A padding
        workgroup returns as a whole (its index is workgroup-uniform), so barriers stay in
        uniform control flow."""
        if not self.fold_grid:
            return []
        wx, wy, wz = self.k.workgroup_size
        # a 1-D logical grid is the linear index itself: no division (u32 division by a
        # runtime value is a dozen instructions, as much as a streaming kernel's whole body)
        split = ("vec3<u32>(gi_fold, 0u, 0u)" if self.fold_grid == "1d" else
                 "vec3<u32>(gi_fold % gi_grid.x, gi_fold / gi_grid.x % gi_grid.y, gi_fold / gi_grid.x / gi_grid.y)")
        lines = ["    let gi_fold = gi_fold_id.x + gi_fold_n.x * (gi_fold_id.y + gi_fold_n.y * gi_fold_id.z);",
                 "    if (gi_fold >= gi_grid.w) { return; }",
                 f"    let gi_workgroup_id = {split};",
                 "    let gi_num_workgroups = gi_grid.xyz;",
                 f"    let gi_global_id = gi_workgroup_id * vec3<u32>({wx}u, {wy}u, {wz}u) + gi_local_id;"]
        if self.batch > 1:
            lines = lines[:2] + batched_prologue(self, self.batch)
        return [(t, None) for t in lines]

    def prologue(self) -> list[tuple[str, Optional[N.Span]]]:
        """Scalar parameters read once from the uniform block, under their Rust names."""
        used = set()
        for s in N.walk_stmts(self.k.body) if any(p.category == "scalar" for p in self.k.params) else ():
            for e in N.stmt_exprs(s):
                for x in N.walk_expr(e):
                    if isinstance(x, N.Var):
                        used.add(x.name)
        out: list[tuple[str, Optional[N.Span]]] = []
        for p in self.k.params:
            if p.category == "scalar" and p.name in used:
                n = self.names[p.name]
                value = f"gi_u.{n} != 0u" if p.ty == "bool" else f"gi_u.{n}"
                out.append((f"    let {n}: {p.ty} = {value};", p.span))
        if self.flag_mode and not self.checked:  # checked: a module-scope private (gi_fault reads it)
            out.append(("    // set by `return`: barriers must stay in uniform control flow", None))
            out.append(("    var gi_done = false;", None))
        return out

    # -------------------------------------------------------- resources

    def param(self, name: str) -> Optional[N.Param]:
        return self.k.param(name)

    def loader(self, res: str, span: N.Span) -> str:
        """Name of the bounds-checked load helper of a resource."""
        n = self.names[res]
        fn = f"gi_load_{n}"
        if fn in self.helpers:
            return fn
        w = self.k.workgroup_array(res)
        if w is not None:
            zero = const_text(0.0 if w.ty == "f32" else 0, w.ty)
            if self.speculable(res, w.ty):
                return self.define(fn, f"fn {fn}(i: u32) -> {w.ty} {{\n    return select({zero}, {self.wg_slot(res)}, i < {w.size}u);\n}}")
            return self.define(fn, f"fn {fn}(i: u32) -> {w.ty} {{\n    if (i < {w.size}u) {{ return {self.wg_slot(res)}; }}\n"
                                   f"    return {zero};\n}}")
        p = self.param(res)
        if p is None:
            self.fail(f"`{res}` is not a resource", span)
        rt = self.ty(p.ty)
        if p.category == "image":
            cond, slot, arg = (f"c.x < gi_u.gi_width_{n} && c.y < gi_u.gi_height_{n}",
                               f"c.y * gi_u.gi_width_{n} + c.x", "c: vec2<u32>")
            pre = ""
        elif p.category in N.TENSOR_CATEGORIES:
            self.tensor_index_helper()
            pre = f"    let j = gi_tensor_index(gi_u.gi_layout_{n}, i);\n"
            cond, slot, arg = f"i < gi_u.gi_layout_{n}[0].z && j < gi_u.gi_blen_{n}", "j", "i: u32"
        else:
            pre = ""
            cond, slot, arg = f"i < gi_u.gi_len_{n}", f"gi_u.gi_off_{n} + i", "i: u32"
        value = f"atomicLoad(&{n}[{slot}])" if res in self.atomic else f"{n}[{slot}]"
        if p.ty == "bool":
            value = f"{value} != 0u"
        if self.speculable(res, p.ty):
            return self.define(fn, f"fn {fn}({arg}) -> {rt} {{\n{pre}    return select({rt}(), {value}, {cond});\n}}")
        return self.define(fn, f"fn {fn}({arg}) -> {rt} {{\n{pre}    if ({cond}) {{ return {value}; }}\n"
                               f"    return {rt}();\n}}")

    def speculable(self, res: str, ty: str) -> bool:
        """Whether a load of `res` may be issued before its bounds check and the result
        selected after: WGSL makes every out-of-range access of a storage or workgroup array
        memory-safe (some value of the buffer, or zero), so the read itself is harmless and
        the checked value is all that is used. A load with no branch in front of it lets the
        driver batch it with the thread's other loads (and an unrolled loop's). `select`
        takes scalars and vectors; atomics keep their branch."""
        return res not in self.atomic and (T.is_scalar(ty) or T.is_vector(ty))

    def wg_slot(self, res: str, value: Optional[str] = None) -> str:
        """Workgroup array `res` at `i`: read (value None) or `value` stored, atomically when
        the kernel applies atomics to it (WGSL then declares its elements atomic)."""
        n = self.names[res]
        if res in self.atomic:
            return f"atomicLoad(&{n}[i])" if value is None else f"atomicStore(&{n}[i], {value});"
        return f"{n}[i]" if value is None else f"{n}[i] = {value};"

    def storer(self, res: str, span: N.Span) -> str:
        n = self.names[res]
        fn = f"gi_store_{n}"
        if fn in self.helpers:
            return fn
        w = self.k.workgroup_array(res)
        if w is not None:
            return self.define(fn, f"fn {fn}(i: u32, v: {w.ty}) {{\n    if (i < {w.size}u) {{ {self.wg_slot(res, 'v')} }}\n}}")
        p = self.param(res)
        if p is None:
            self.fail(f"`{res}` is not a resource", span)
        value = "select(0u, 1u, v)" if p.ty == "bool" else "v"
        pre = ""
        if p.category == "image":
            cond, slot, arg = (f"c.x < gi_u.gi_width_{n} && c.y < gi_u.gi_height_{n}",
                               f"c.y * gi_u.gi_width_{n} + c.x", "c: vec2<u32>")
        elif p.category in N.TENSOR_CATEGORIES:
            self.tensor_index_helper()
            pre = f"    let j = gi_tensor_index(gi_u.gi_layout_{n}, i);\n"
            cond, slot, arg = f"i < gi_u.gi_layout_{n}[0].z && j < gi_u.gi_blen_{n}", "j", "i: u32"
        else:
            cond, slot, arg = f"i < gi_u.gi_len_{n}", f"gi_u.gi_off_{n} + i", "i: u32"
        store = f"atomicStore(&{n}[{slot}], {value});" if res in self.atomic else f"{n}[{slot}] = {value};"
        return self.define(fn, f"fn {fn}({arg}, v: {self.ty(p.ty)}) {{\n{pre}    if ({cond}) {{ {store} }}\n}}")

    def atomic_elem(self, res: str) -> tuple[str, str, str]:
        """(element type, the in-range condition on `i`, the slot) of an atomic's resource."""
        n = self.names[res]
        w = self.k.workgroup_array(res)
        if w is not None:
            return w.ty, f"i < {w.size}u", "i"
        p = self.param(res)
        assert p is not None
        return p.ty, f"i < gi_u.gi_len_{n}", f"gi_u.gi_off_{n} + i"

    def atomic_adder(self, res: str, op: str = "add") -> str:
        """`gi_atomic_<op>_<res>(index, [compare,] value)`: the previous value."""
        n = self.names[res]
        ty, cond, slot = self.atomic_elem(res)
        fn = f"gi_atomic_{op}_{n}"
        zero = const_text(0, ty)
        return self.define(fn, f"// out of range: no effect, returns 0\nfn {fn}(i: u32, {_atomic_params(op, ty)}) -> {ty} {{\n"
                               f"    if ({cond}) {_rmw(op, f'&{n}[{slot}]')}\n"
                               f"    return {zero};\n}}")

    # -------------------------------------------------------- trapping checks

    def fault_helper(self) -> str:
        """`gi_fault(site, index, length, index_y)`: record a failed check in the error word."""
        done = "    if (gi_done) { return; }  // a returned thread's accesses are not Rust's\n" if self.flag_mode else ""
        w = A.ERROR_WORD.index
        return self.define("gi_fault", f"""
// A failed trapping check (ir/checks.py site): the first failure of the dispatch takes the
// flag (a weak compare-exchange may fail spuriously, hence the loop) and then writes the
// site, the index, the length it was checked against and the y of a texel. The caller
// suppresses the access and the thread carries on.
fn gi_fault(site: u32, index: u32, length: u32, index_y: u32) {{
{done}    loop {{
        let r = atomicCompareExchangeWeak(&gi_faults[{w("flag")}], 0u, 1u);
        if (r.exchanged) {{ break; }}
        if (r.old_value != 0u) {{ return; }}
    }}
    atomicStore(&gi_faults[{w("site")}], site);
    atomicStore(&gi_faults[{w("index")}], index);
    atomicStore(&gi_faults[{w("length")}], length);
    atomicStore(&gi_faults[{w("index_y")}], index_y);
}}""")

    def checked_access(self, res: str, span: N.Span) -> tuple[str, str, str, str, str, str]:
        """A checked access of a parameter: (index argument, the check, gi_fault's arguments,
        code computing the slot, the silent guard on the slot or "", the slot)."""
        n = self.names[res]
        p = self.param(res)
        if p is None:
            self.fail(f"`{res}` is not a resource", span)
        if p.category == "image":  # x < width and y < height; reports x, the width and y
            w, h = f"gi_u.gi_width_{n}", f"gi_u.gi_height_{n}"
            return "c: vec2<u32>", f"c.x < {w} && c.y < {h}", f"site, c.x, {w}, c.y", "", "", f"c.y * {w} + c.x"
        if p.category in N.TENSOR_CATEGORIES:  # the logical index against numel
            self.tensor_index_helper()
            numel = f"gi_u.gi_layout_{n}[0].z"
            return ("i: u32", f"i < {numel}", f"site, i, {numel}, 0u",
                    f"    let j = gi_tensor_index(gi_u.gi_layout_{n}, i);\n", f"j < gi_u.gi_blen_{n}", "j")
        length = f"gi_u.gi_len_{n}"
        return "i: u32", f"i < {length}", f"site, i, {length}, 0u", "", "", f"gi_u.gi_off_{n} + i"

    def checked_loader(self, res: str, span: N.Span, live: bool = False) -> str:
        """`gi_checked_load_<res>(index, site)`: a load whose check failure is recorded.
        `live`: `gi_pchecked_load_<res>(index, site, gi_live)` records it only where gi_live
        holds (the batched entry's speculative loads, codegen/wgsl/batch.py)."""
        n = self.names[res]
        fn = f"gi_{'p' if live else ''}checked_load_{n}"
        if fn in self.helpers:
            return fn
        fault = self.fault_helper()
        w = self.k.workgroup_array(res)
        if w is not None and not live:
            zero = const_text(0.0 if w.ty == "f32" else 0, w.ty)
            return self.define(fn, f"fn {fn}(i: u32, site: u32) -> {w.ty} {{\n"
                                   f"    if (i < {w.size}u) {{ return {self.wg_slot(res)}; }}\n"
                                   f"    {fault}(site, i, {w.size}u, 0u);\n    return {zero};\n}}")
        arg, check, fargs, pre, guard, slot = self.checked_access(res, span)
        p = self.param(res)
        assert p is not None
        rt = self.ty(p.ty)
        value = f"atomicLoad(&{n}[{slot}])" if res in self.atomic else f"{n}[{slot}]"
        if p.ty == "bool":
            value = f"{value} != 0u"
        arg, failed = (f"{arg}, site: u32, gi_live: bool", f"gi_live && !({check})") if live else \
            (f"{arg}, site: u32", f"!({check})")
        if self.speculable(res, p.ty):  # the load ahead of the check; the fault in the rare branch
            ok = f"{check} && {guard}" if guard else check
            return self.define(fn, f"fn {fn}({arg}) -> {rt} {{\n{pre}    let gi_v = {value};\n"
                                   f"    if ({failed}) {{ {fault}({fargs}); }}\n"
                                   f"    return select({rt}(), gi_v, {ok});\n}}")
        tail = f"    if ({guard}) {{ return {value}; }}\n    return {rt}();\n" if guard else f"    return {value};\n"
        return self.define(fn, f"fn {fn}({arg}) -> {rt} {{\n"
                               f"    if (!({check})) {{\n        {'if (gi_live) { ' if live else ''}{fault}({fargs});"
                               f"{' }' if live else ''}\n        return {rt}();\n    }}\n"
                               f"{pre}{tail}}}")

    def checked_taker(self, res: str, span: N.Span) -> str:
        """`gi_checked_take_<res>(read, index, site)`: the check of a buffer element read
        ahead (codegen/wgsl/unroll.py), its failure recorded; the element or 0."""
        n = self.names[res]
        fn = f"gi_checked_take_{n}"
        if fn in self.helpers:
            return fn
        fault = self.fault_helper()
        p = self.param(res)
        rt, length = self.ty(p.ty), f"gi_u.gi_len_{n}"
        value = "gi_v != 0u" if p.ty == "bool" else "gi_v"
        return self.define(fn, f"fn {fn}(gi_v: {storage_type(p.ty, self.names)}, i: u32, site: u32) -> {rt} {{\n"
                               f"    if (!(i < {length})) {{ {fault}(site, i, {length}, 0u); }}\n"
                               f"    return select({rt}(), {value}, i < {length});\n}}")

    def checked_storer(self, res: str, span: N.Span) -> str:
        """`gi_checked_store_<res>(index, value, site)`: a store whose check failure is recorded."""
        n = self.names[res]
        fn = f"gi_checked_store_{n}"
        if fn in self.helpers:
            return fn
        fault = self.fault_helper()
        w = self.k.workgroup_array(res)
        if w is not None:
            return self.define(fn, f"fn {fn}(i: u32, v: {w.ty}, site: u32) {{\n"
                                   f"    if (i < {w.size}u) {{ {self.wg_slot(res, 'v')} }} else {{ {fault}(site, i, {w.size}u, 0u); }}\n}}")
        arg, check, fargs, pre, guard, slot = self.checked_access(res, span)
        p = self.param(res)
        assert p is not None
        value = "select(0u, 1u, v)" if p.ty == "bool" else "v"
        store = f"atomicStore(&{n}[{slot}], {value});" if res in self.atomic else f"{n}[{slot}] = {value};"
        tail = f"    if ({guard}) {{ {store} }}\n" if guard else f"    {store}\n"
        return self.define(fn, f"fn {fn}({arg}, v: {self.ty(p.ty)}, site: u32) {{\n"
                               f"    if (!({check})) {{\n        {fault}({fargs});\n        return;\n    }}\n"
                               f"{pre}{tail}}}")

    def checked_atomic_adder(self, res: str, span: N.Span, op: str = "add") -> str:
        """`gi_checked_atomic_<op>_<res>(index, [compare,] value, site)`: out of range changes
        nothing, returns 0 and records the failure."""
        n = self.names[res]
        fn = f"gi_checked_atomic_{op}_{n}"
        if fn in self.helpers:
            return fn
        fault = self.fault_helper()
        w = self.k.workgroup_array(res)
        if w is not None:
            arg, check, fargs, slot = "i: u32", f"i < {w.size}u", f"site, i, {w.size}u, 0u", "i"
        else:
            arg, check, fargs, _, _, slot = self.checked_access(res, span)
        ty = self.atomic_elem(res)[0]
        return self.define(fn, f"fn {fn}({arg}, {_atomic_params(op, ty)}, site: u32) -> {ty} {{\n"
                               f"    if ({check}) {_rmw(op, f'&{n}[{slot}]')}\n"
                               f"    {fault}({fargs});\n    return {const_text(0, ty)};\n}}")

    def checked_division(self, op: str, ty: str, live: bool = False) -> str:
        """`gi_checked_div_u32(a, b, site)` etc.: a zero divisor gives 0 and records the
        failure; otherwise the unchecked helper's Rust semantics (i32::MIN / -1 ...).
        `live`: `gi_pchecked_*(a, b, site, gi_live)` records only where gi_live holds."""
        fn = f"gi_{'p' if live else ''}checked_{op}_{ty}"
        if fn in self.helpers:
            return fn
        fault = self.fault_helper()
        plain = self.need(f"gi_{op}_{ty}")
        zero = const_text(0, ty)
        arg, record = (", gi_live: bool", f"if (gi_live) {{ {fault}(site, 0u, 0u, 0u); }}") if live else \
            ("", f"{fault}(site, 0u, 0u, 0u);")
        return self.define(fn, f"fn {fn}(a: {ty}, b: {ty}, site: u32{arg}) -> {ty} {{\n"
                               f"    if (b == {zero}) {{\n        {record}\n        return {zero};\n    }}\n"
                               f"    return {plain}(a, b);\n}}")

    def tensor_index_helper(self) -> None:
        self.define("gi_tensor_index", """
// Physical element of logical index i of a tensor view: delinearise row-major over the
// rank's extents, then offset + sum(coord * stride). Layout words: off, rank, numel,
// d0..d3, s0..s3, flags.
fn gi_tensor_index(l: array<vec4<u32>, 3>, i: u32) -> u32 {
    let dims = vec4<u32>(l[0].w, l[1].x, l[1].y, l[1].z);
    let strides = vec4<u32>(l[1].w, l[2].x, l[2].y, l[2].z);
    var rest = i;
    var at = l[0].x;
    for (var a = i32(min(l[0].y, 4u)) - 1i; a >= 0i; a = a - 1i) {
        let d = max(dims[a], 1u);
        at = at + (rest % d) * strides[a];
        rest = rest / d;
    }
    return at;
}""")

    def tensor_dim_helper(self) -> str:
        return self.define("gi_tensor_dim", """
// Extent of axis a (axes past 3 read as 0, like any out-of-range load).
fn gi_tensor_dim(l: array<vec4<u32>, 3>, a: u32) -> u32 {
    if (a >= 4u) { return 0u; }
    return vec4<u32>(l[0].w, l[1].x, l[1].y, l[1].z)[a];
}""")

    # -------------------------------------------------------- expressions

    def expr(self, e: N.Expr) -> str:
        if not isinstance(e, N.Const):
            v = fold(e)
            if v is not None:
                return const_text(v, e.ty)
        m = getattr(self, "x_" + type(e).__name__, None)
        if m is None:
            self.fail(f"unsupported expression `{type(e).__name__}`", e.span)
        return m(e)

    def x_Const(self, e: N.Const) -> str:
        return const_text(e.value, e.ty)

    def x_Var(self, e: N.Var) -> str:
        p = self.param(e.name)
        if p is not None and p.category == "uniform":
            return f"gi_u.{self.names[e.name]}"
        return self.names[e.name]

    def x_Builtin(self, e: N.Builtin) -> str:
        if e.name == "workgroup_size":
            wx, wy, wz = self.k.workgroup_size
            return f"vec3<u32>({wx}u, {wy}u, {wz}u)"
        if e.name in ("global_id", "workgroup_id"):
            return f"gi_{e.name}{self.copy_suffix}"  # the batched entry's copy
        return f"gi_{e.name}"

    def x_Load(self, e: N.Load) -> str:
        if id(e) in self.hoisted:  # read ahead by an unrolled loop (unroll.py): its check only
            i, r = self.hoisted[id(e)]
            if e.check >= 0:
                return f"{self.checked_taker(e.resource, e.span)}({r}, {i}, {e.check}u)"
            n, p = self.names[e.resource], self.param(e.resource)
            value = f"{r} != 0u" if p.ty == "bool" else r
            return f"select({self.ty(p.ty)}(), {value}, {i} < gi_u.gi_len_{n})"
        if e.check >= 0 and self.live is not None:  # the batched entry: evaluated for every copy
            return f"{self.checked_loader(e.resource, e.span, True)}({_strip(self.expr(e.index))}, {e.check}u, {self.live})"
        if e.check >= 0:
            return f"{self.checked_loader(e.resource, e.span)}({_strip(self.expr(e.index))}, {e.check}u)"
        return f"{self.loader(e.resource, e.span)}({_strip(self.expr(e.index))})"

    def x_Len(self, e: N.Len) -> str:
        w = self.k.workgroup_array(e.resource)
        if w is not None:
            return f"{w.size}u"
        p = self.param(e.resource)
        n = self.names[e.resource]
        if p is not None and p.category in N.TENSOR_CATEGORIES:
            return f"gi_u.gi_layout_{n}[0].z"
        return f"gi_u.gi_len_{n}"

    def x_TensorDim(self, e: N.TensorDim) -> str:
        return f"{self.tensor_dim_helper()}(gi_u.gi_layout_{self.names[e.resource]}, {_strip(self.expr(e.axis))})"

    def x_TensorRank(self, e: N.TensorRank) -> str:
        return f"gi_u.gi_layout_{self.names[e.resource]}[0].y"

    def x_ImageSize(self, e: N.ImageSize) -> str:
        return f"gi_u.gi_{'width' if e.axis == 0 else 'height'}_{self.names[e.resource]}"

    def x_Field(self, e: N.Field) -> str:
        st = T.struct_name(e.value.ty)
        return f"{self.expr(e.value)}.{self.field_names[st][e.name]}"

    def x_Swizzle(self, e: N.Swizzle) -> str:
        return f"{self.expr(e.value)}.{e.lanes}"

    def x_Unary(self, e: N.Unary) -> str:
        v = self.expr(e.operand)
        if constant_tree(e):
            v = self.opaque(v, e.operand.ty)
        if e.op == "neg":
            if T.elem_of(e.ty) == "f32" and not T.is_matrix(e.ty):  # the sign bit, never flushed
                return f"{self.lanewise('gi_neg_f32', e.ty, 1)}({_strip(v)})"
            return f"(-{v})"
        return f"(!{v})" if e.ty == "bool" else f"(~{v})"

    def x_Select(self, e: N.Select) -> str:
        parts = [_strip(self.expr(x)) for x in (e.if_false, e.if_true, e.cond)]
        # WGSL reads `select(a < b, c >= d, f)` as the template list `a<b, c>`: an argument
        # with a `<` comparison keeps its parentheses when a later one has a `>`
        parts = [f"({p})" if (" < " in p or " <= " in p) and any(">" in q for q in parts[k + 1:]) else p
                 for k, p in enumerate(parts)]
        args = ", ".join(parts)
        if T.is_scalar(e.ty) or T.is_vector(e.ty):
            return f"select({args})"
        # WGSL's select takes scalars and vectors only
        wt = self.ty(e.ty)
        name = f"gi_select_{_suffix(e.ty) if T.is_matrix(e.ty) else wt}"
        self.define(name, f"fn {name}(f: {wt}, t: {wt}, c: bool) -> {wt} {{\n"
                          f"    if (c) {{ return t; }}\n    return f;\n}}")
        return f"{name}({args})"

    def x_Construct(self, e: N.Construct) -> str:
        return f"{self.ty(e.ty)}({', '.join(_strip(self.expr(a)) for a in e.args)})"

    def splat(self, text: str, from_ty: str, to_ty: str) -> str:
        return f"{self.ty(to_ty)}({_strip(text)})" if from_ty != to_ty else _strip(text)

    def x_Binary(self, e: N.Binary) -> str:
        op, lt, rt = e.op, e.lhs.ty, e.rhs.ty
        a, b = self.expr(e.lhs), self.expr(e.rhs)
        if constant_tree(e):  # not foldable here (vectors): keep naga from evaluating it
            a, b = self.opaque(a, lt), self.opaque(b, rt)
        if op in ("shl", "shr"):  # the amount is reinterpreted as u32 (ir/rules.py takes it modulo 32)
            amount = _strip(b) if rt == "u32" else f"bitcast<u32>({_strip(b)})"
            return f"{self.lanewise(f'gi_{op}_{T.elem_of(lt)}', lt, 2, scalar_arg=1)}({_strip(a)}, {amount})"
        if T.is_matrix(lt) and op == "mul" and not T.is_scalar(rt):
            return self.matmul(e, a, b)
        elem = T.elem_of(e.ty) if op not in N.COMPARISONS else T.elem_of(lt)
        if op in ("div", "rem"):
            if e.check >= 0:  # scalar integer division with a trapping check
                if self.live is not None:  # the batched entry: evaluated for every copy
                    return f"{self.checked_division(op, elem, True)}({_strip(a)}, {_strip(b)}, {e.check}u, {self.live})"
                return f"{self.checked_division(op, elem)}({_strip(a)}, {_strip(b)}, {e.check}u)"
            native = self.native_division(e, a)
            if native is not None:
                return native
            if elem == "f32" and op == "rem":
                return f"{self.lanewise('gi_fmod_f32', e.ty, 2)}({self.splat(a, lt, e.ty)}, {self.splat(b, rt, e.ty)})"
            fn = self.lanewise(f"gi_{'fdiv' if elem == 'f32' and op == 'div' else op}_{elem}", e.ty, 2)
            return f"{fn}({self.splat(a, lt, e.ty)}, {self.splat(b, rt, e.ty)})"
        if op in ("add", "sub", "mul") and elem == "f32":
            return self.float_op(op, e, a, b)
        if op in N.COMPARISONS and lt == "f32":  # on the bits (ir/rules.py): NaN and subnormals kept
            return f"{self.need(f'gi_{op}_f32')}({_strip(a)}, {_strip(b)})"
        if op == "bitxor" and e.ty == "bool":
            return f"({a} != {b})"
        sym = {"add": "+", "sub": "-", "mul": "*", "bitand": "&", "bitor": "|", "bitxor": "^", "eq": "==",
               "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "and": "&&", "or": "||"}.get(op)
        if sym is None:
            self.fail(f"unsupported operator `{op}`", e.span)
        return f"({a} {sym} {b})"

    def pins(self, t: str) -> tuple[str, str, str]:
        """Three helpers that pass an f32 (or f32 vector) through unchanged but opaquely.

        Rust rounds every `+ - *` on its own. WGSL lets drivers rewrite float algebra, and
        Mesa does, since naga marks nothing NoContraction: it fuses a * b + c into an FMA,
        reassociates, distributes and applies identities such as x * 0 = 0 (wrong for -x,
        inf, NaN) or x - x = 0. XOR-ing the bits with a runtime zero from the uniform block
        hides every operand and result from that algebra; three different zeros keep equal
        operands from being recognised as equal."""
        self.uses_zero = True
        known = _PINS.get(t)
        if known is not None and "gi_pins_doc" in self.helpers and all(n in self.helpers for n in known):
            return known  # defined already: nothing to build
        sfx = _suffix(t)
        wt = self.ty(t)
        ut = f"vec{T.vec_len(t)}<u32>" if T.is_vector(t) else "u32"  # works for u32/i32 too
        names = []
        for role in "abc":
            name = f"gi_p{role}_{sfx}"
            zero = f"gi_u.gi_zero_{role}" if ut == "u32" else f"{ut}(gi_u.gi_zero_{role})"
            self.define(name, f"fn {name}(x: {wt}) -> {wt} {{\n    return bitcast<{wt}>(bitcast<{ut}>(x) ^ {zero});\n}}")
            names.append(name)
        if "gi_pins_doc" not in self.helpers:  # say once why, ahead of the first pin
            self.helpers = {"gi_pins_doc": _PINS_DOC, **self.helpers}
        _PINS[t] = names = (names[0], names[1], names[2])
        return names

    def opaque(self, text: str, t: str) -> str:
        """`text` (a constant naga would evaluate, and might reject as overflowing or
        infinite) turned into a runtime value."""
        if T.elem_of(t) == "bool" or T.is_matrix(t) or T.is_struct(t):
            return text
        return f"{self.pins(t)[0]}({_strip(text)})"

    def fop(self, op: str, t: str, raw: bool = False, operands: bool = True) -> str:
        """`gi_fadd_f32(a, b)` etc.: one f32 operation rounded exactly where Rust rounds it.
        Its operands and result pass through the pins (`pins`); with `operands=False`,
        `gi_fadd_res_f32` etc., only the result does and the caller pins the operands that
        need it (`float_op`).

        Some drivers flush subnormal operands and results to zero (NVIDIA's Vulkan driver
        does: wgpu asks for no DenormPreserve). Rust keeps them, so on such a driver
        (`exact_subnormals`), where the result may be off (`_TRUSTED`), the operation is
        redone exactly in integer arithmetic through `gi_fma_f32`: a + b = fma(a, 1, b),
        a - b = fma(b, -1, a), a * b = fma(a, b, -0). Only there: inlined at every
        operation, the exact path makes shaders several times slower to compile."""
        pa, pb, pc = self.pins(t)
        name = f"gi_f{op}_{'raw_' if raw else ''}{'' if operands else 'res_'}{_suffix(t)}"
        raw = raw or not self.exact_subnormals
        if name in self.helpers:
            return name
        wt = self.ty(t)
        sym = {"add": "+", "sub": "-", "mul": "*"}[op]
        computed = f"{pc}({pa}(a) {sym} {pb}(b))" if operands else f"{pc}(a {sym} b)"
        if raw:
            return self.define(name, f"fn {name}(a: {wt}, b: {wt}) -> {wt} {{\n    return {computed};\n}}")
        fma = self.need("gi_fma_f32")
        exact = {"add": "{fma}({a}, 1.0f, {b})", "sub": "{fma}({b}, -1.0f, {a})",
                 "mul": "{fma}({a}, {b}, bitcast<f32>(0x80000000u))"}[op]
        lanes = [""] if not T.is_vector(t) else [f"[{i}]" for i in range(T.vec_len(t))]
        body = [f"    var r = {computed};"]
        for c in lanes:
            redo = exact.format(fma=fma, a=f"a{c}", b=f"b{c}")
            body.append(f"    if (!({_TRUSTED[op].format(r=f'r{c}')})) {{ r{c} = {redo}; }}")
        return self.define(name, f"fn {name}(a: {wt}, b: {wt}) -> {wt} {{\n" + "\n".join(body) + "\n    return r;\n}")

    def float_op(self, op: str, e: N.Binary, a: str, b: str) -> str:
        if T.is_matrix(e.ty):  # column by column
            n = T.vec_len(e.ty)
            vt = T.vec("f32", n)
            fn = self.fop(op, vt)
            cols = []
            for c in range(n):
                ca = f"{a}[{c}]" if T.is_matrix(e.lhs.ty) else f"{self.ty(vt)}({_strip(a)})"
                cb = f"{b}[{c}]" if T.is_matrix(e.rhs.ty) else f"{self.ty(vt)}({_strip(b)})"
                cols.append(f"{fn}({ca}, {cb})")
            return f"mat{n}x{n}<f32>({', '.join(cols)})"
        # the result is pinned; an operand only where the driver could know something of it
        # (`_opaque_origin`): a value it might see as a constant, or one it might prove equal
        # to the other operand (x - x = 0)
        a, b = self.splat(a, e.lhs.ty, e.ty), self.splat(b, e.rhs.ty, e.ty)
        oa, ob = _opaque_origin(self, e.lhs, e.ty), _opaque_origin(self, e.rhs, e.ty)
        pa, pb, _ = self.pins(e.ty)
        if oa is None:
            a = f"{pa}({a})"
        if ob is None or ob == oa:
            b = f"{pb}({b})"
        return f"{self.fop(op, e.ty, operands=False)}({a}, {b})"

    def native_division(self, e: N.Binary, a: str) -> Optional[str]:
        """WGSL's own operator where it provably agrees with Rust: u32 division by a nonzero
        constant (ir/rules.py's `udiv` itself; signed `/` and `%` never use the driver's
        operator, which NVIDIA's Vulkan driver gets wrong for negative operands), and f32
        division by a power of two (the same real quotient as multiplying by its exact
        inverse, hence the same rounding)."""
        c = e.rhs
        if not isinstance(c, N.Const) or T.is_vector(e.rhs.ty):
            return None
        if c.ty == "u32" and c.value != 0:
            return f"({a} {'/' if e.op == 'div' else '%'} {self.expr(c)})"
        if c.ty == "f32" and e.op == "div":
            m, x = np.frexp(np.float32(c.value))
            if abs(m) == 0.5 and -124 <= x <= 126:
                inverse = self.splat(f32_literal(1.0 / float(c.value)), "f32", e.ty)  # `float2(..) / 2.0` too
                return f"{self.fop('mul', e.ty)}({_strip(a)}, {inverse})"
        return None

    def matmul(self, e: N.Binary, a: str, b: str) -> str:
        """Column-major products summed left to right, each step rounded (docs/semantics.md)."""
        n = T.vec_len(e.lhs.ty)
        mt, vt = f"mat{n}x{n}<f32>", f"vec{n}<f32>"
        mv = f"gi_mul_m{n}v{n}"
        mul, add = self.fop("mul", T.vec("f32", n)), self.fop("add", T.vec("f32", n))
        acc = f"{mul}(m[0], {vt}(v.x))"
        for c in range(1, n):
            acc = f"{add}({acc}, {mul}(m[{c}], {vt}(v.{'xyzw'[c]})))"
        self.define(mv, f"fn {mv}(m: {mt}, v: {vt}) -> {vt} {{\n    return {acc};\n}}")
        if T.is_vector(e.rhs.ty):
            return f"{mv}({_strip(a)}, {_strip(b)})"
        mm = f"gi_mul_m{n}m{n}"
        cols = ", ".join(f"{mv}(a, b[{c}])" for c in range(n))
        self.define(mm, f"fn {mm}(a: {mt}, b: {mt}) -> {mt} {{\n    return {mt}({cols});\n}}")
        return f"{mm}({_strip(a)}, {_strip(b)})"

    def x_Cast(self, e: N.Cast) -> str:
        src, dst = e.value.ty, e.ty
        text = self.expr(e.value)
        v = _strip(text)
        if src == dst:
            return text
        if src == "bool":
            return f"select({const_text(0, dst) if dst != 'f32' else '0.0f'}, " \
                   f"{const_text(1, dst) if dst != 'f32' else '1.0f'}, {v})"
        if src in T.INTS and dst in T.INTS:
            return f"bitcast<{dst}>({v})"
        if src == "f32":
            return f"{self.need(f'gi_f32_to_{dst}')}({v})"
        return f"{self.need(f'gi_{src}_to_f32')}({v})"

    def x_Call(self, e: N.Call) -> str:
        f, args = e.func, e.args
        vals = [_strip(self.expr(a)) for a in args]
        t0 = args[0].ty
        elem = T.elem_of(t0)
        if f == "from_bits":
            return f"bitcast<f32>({vals[0]})"
        if f == "to_bits":
            return f"bitcast<u32>({vals[0]})"
        if constant_tree(e):  # not foldable here: keep naga from evaluating it
            vals = [self.opaque(v, a.ty) for v, a in zip(vals, args)]
        rule = _call_rule(f, t0)
        if rule is not None:  # one rule of ir/rules.py on scalars
            return f"{self.need('gi_' + rule)}({', '.join(vals)})"
        if f in ("floor", "ceil", "trunc"):
            if not self.exact_subnormals:
                return f"{f}({vals[0]})"
            return f"{self.lanewise(f'gi_{f}_f32', t0, 1)}({vals[0]})"  # subnormal inputs on the bits
        if f in ("sqrt", "round") or f in _MATH_FUNCTIONS or (f == "abs" and elem != "u32"):
            return f"{self.lanewise(f'gi_{f}_{elem}', t0, len(vals))}({', '.join(vals)})"
        if f == "abs":
            return vals[0]
        if f in ("min", "max"):
            if elem == "f32":
                return f"{self.lanewise(f'gi_{f}_f32', t0, 2)}({vals[0]}, {vals[1]})"
            return f"{f}({vals[0]}, {vals[1]})"
        if f == "clamp":
            if elem == "f32":
                return f"{self.lanewise('gi_clamp_f32', t0, 3)}({', '.join(vals)})"
            return f"min(max({vals[0]}, {vals[1]}), {vals[2]})"
        if f == "fma":
            return f"{self.lanewise('gi_fma_f32', t0, 3)}({', '.join(vals)})"
        if f in ("dot", "length"):
            n = T.vec_len(t0)
            fn = f"gi_dot{n}"
            mul, add = self.fop("mul", "f32"), self.fop("add", "f32")
            acc = f"{mul}(a.x, b.x)"
            for c in "yzw"[:n - 1]:
                acc = f"{add}({acc}, {mul}(a.{c}, b.{c}))"
            self.define(fn, f"// lane products summed left to right\nfn {fn}(a: vec{n}<f32>, b: vec{n}<f32>) -> f32 {{\n"
                            f"    return {acc};\n}}")
            if f == "dot":
                return f"{fn}({vals[0]}, {vals[1]})"
            return f"{self.need('gi_sqrt_f32')}({fn}({vals[0]}, {vals[0]}))"
        self.fail(f"unsupported intrinsic `{f}`", e.span)

    # -------------------------------------------------------- statements

    def emit_body(self) -> None:
        if self.batch > 1:
            Batched(self, self.batch).emit()
            return
        self.block(self.k.body, loop=None, maybe_done=False)

    def block(self, stmts: list[N.Stmt], loop: Optional[N.Stmt], maybe_done: bool) -> bool:
        """Emit statements; `loop` is the innermost enclosing loop. Returns whether a
        `return` may have run by the end (flag mode only)."""
        for s in stmts:
            maybe_done = self.stmt(s, loop, maybe_done)
        return maybe_done

    def nested(self, stmts: list[N.Stmt], loop, maybe_done: bool) -> bool:
        self.indent += 1
        try:
            return self.block(stmts, loop, maybe_done)
        finally:
            self.indent -= 1

    def guarded(self, text: str, span: N.Span, maybe_done: bool) -> None:
        """A side effect: skipped by threads that returned (flag mode)."""
        if maybe_done:
            self.line(f"if (!gi_done) {{ {text} }}", span)
        else:
            self.line(text, span)

    def stmt(self, s: N.Stmt, loop, maybe_done: bool) -> bool:
        sp = s.span
        if isinstance(s, N.Let):
            n = self.names[s.name]
            if s.value is None:
                self.line(f"var {n}: {self.ty(s.ty)};", sp)
            else:
                kw = "var" if s.mutable else "let"
                self.line(f"{kw} {n}: {self.ty(s.ty)} = {_bare(self.expr(s.value))};", sp)
        elif isinstance(s, N.Assign):
            self.assign(s)
        elif isinstance(s, N.Store) and self.checked:
            self.guarded(self.checked_store(s), sp, maybe_done)
        elif isinstance(s, N.Store):
            call = f"{self.storer(s.resource, sp)}({_strip(self.expr(s.index))}, {_strip(self.expr(s.value))});"
            self.guarded(call, sp, maybe_done)
        elif isinstance(s, N.If):
            maybe_done = self.if_stmt(s, loop, maybe_done, "if")
        elif isinstance(s, (N.While, N.Loop, N.For)):
            maybe_done = self.loop_stmt(s, loop, maybe_done)
        elif isinstance(s, N.Break):
            self.line("break;", sp)
        elif isinstance(s, N.Continue):
            self.line("continue;", sp)
        elif isinstance(s, N.Return):
            if not self.flag_mode:
                self.line("return;", sp)
            else:
                self.line("gi_done = true;", sp)
                if loop is not None and not _contains([loop], _BARRIERS):
                    self.line("break;", sp)
                maybe_done = True
        elif isinstance(s, N.Barrier):
            if self.storage_sync:
                self.line("storageBarrier();", sp)
            self.line("workgroupBarrier();", sp)
        elif isinstance(s, N.Atomic):
            cmp = f"{_strip(self.expr(s.compare))}, " if s.compare is not None else ""
            args = f"{_strip(self.expr(s.index))}, {cmp}{_strip(self.expr(s.value))}"
            if s.check >= 0:
                call = f"{self.checked_atomic_adder(s.resource, sp, s.op)}({args}, {s.check}u);"
            else:
                call = f"{self.atomic_adder(s.resource, s.op)}({args});"
            if s.target is not None:
                call = f"{self.names[s.target]} = {call}"
            self.guarded(call, sp, maybe_done)
        else:
            self.fail(f"unsupported statement `{type(s).__name__}`", sp)
        return maybe_done

    def checked_store(self, s: N.Store) -> str:
        """A store in a kernel with check sites. Rust evaluates the assigned value before
        the place: a value that can fault is computed first when the place can fault too,
        so a thread's first recorded failure is Rust's first."""
        index, value = _strip(self.expr(s.index)), _strip(self.expr(s.value))
        pre = ""
        if _has_site(s.value) and (s.check >= 0 or _has_site(s.index)):
            v = self.fresh("v")
            pre, value = f"let {v}: {self.ty(s.value.ty)} = {_bare(value)}; ", v
        if s.check >= 0:
            return f"{pre}{self.checked_storer(s.resource, s.span)}({index}, {value}, {s.check}u);"
        return f"{pre}{self.storer(s.resource, s.span)}({index}, {value});"

    def assign(self, s: N.Assign, value_text: Optional[str] = None) -> None:
        lanes = None
        t = s.target
        while isinstance(t, N.Swizzle):  # compose swizzle chains onto the innermost vector
            lanes = t.lanes if lanes is None else "".join(t.lanes["xyzw".index(c)] for c in lanes)
            t = t.value
        base = self.expr(t)
        value = value_text if value_text is not None else _bare(self.expr(s.value))
        if lanes is None:
            self.line(f"{base} = {value};", s.span)
        elif len(lanes) == 1:
            self.line(f"{base}.{lanes} = {value};", s.span)
        else:  # WGSL cannot assign to a multi-lane swizzle
            tmp = self.fresh("lanes")
            self.line(f"let {tmp} = {value};", s.span)
            for i, c in enumerate(lanes):
                self.line(f"{base}.{c} = {tmp}.{'xyzw'[i]};", s.span)

    def if_stmt(self, s: N.If, loop, maybe_done: bool, kw: str) -> bool:
        self.line(f"{kw} ({_bare(self.expr(s.cond))}) {{", s.span)
        after_then = self.nested(s.then_body, loop, maybe_done)
        after = after_then
        if len(s.else_body) == 1 and isinstance(s.else_body[0], N.If):  # `} else if (...) {`
            return self.if_stmt(s.else_body[0], loop, maybe_done, "} else if") or after_then
        if s.else_body:
            self.line("} else {")
            after = self.nested(s.else_body, loop, maybe_done) or after_then
        self.line("}")
        return after

    def loop_stmt(self, s, outer_loop, maybe_done: bool) -> bool:
        has_return = _contains(s.body, N.Return) and self.flag_mode
        inner_done = maybe_done or has_return
        sp = s.span
        if isinstance(s, N.While):
            self.line(f"while ({_bare(self.expr(s.cond))}) {{", sp)
            self.indent += 1
            self.hoisted = reads_first(self, s)  # an unrolled trip's (ir/unroll.py)
            self.indent -= 1
            self.nested(s.body, s, inner_done)
            self.hoisted = {}
            self.line("}")
        elif isinstance(s, N.Loop):
            self.line("loop {", sp)
            self.nested(s.body, s, inner_done)
            self.line("}")
        else:
            self.for_stmt(s, inner_done)
        if has_return and outer_loop is not None and not _contains([outer_loop], _BARRIERS):
            self.line("if (gi_done) { break; }", sp)
        return inner_done

    def for_stmt(self, s: N.For, maybe_done: bool) -> None:
        v, t = self.names[s.var], s.ty
        one = const_text(1, t)
        end = self.fresh("end")
        self.line(f"let {end}: {t} = {_bare(self.expr(s.end))};", s.span)
        start = _bare(self.expr(s.start))
        if not s.inclusive:
            self.line(f"for (var {v}: {t} = {start}; {v} < {end}; {v} = {v} + {one}) {{", s.span)
            self.nested(s.body, s, maybe_done)
            self.line("}")
            return
        # `a..=b` must not overflow when b is the type's maximum: test before incrementing
        self.line(f"var {v}: {t} = {start};", s.span)
        self.line(f"if ({v} <= {end}) {{", s.span)
        self.indent += 1
        self.line("loop {", s.span)
        self.nested(s.body, s, maybe_done)
        self.indent += 1
        last = self.fresh("last")
        self.line("continuing {")
        self.indent += 1
        self.line(f"let {last} = {v} == {end};")
        self.line(f"{v} = {v} + {one};")
        self.line(f"break if {last};")
        self.indent -= 1
        self.line("}")
        self.indent -= 1
        self.line("}")
        self.indent -= 1
        self.line("}")
