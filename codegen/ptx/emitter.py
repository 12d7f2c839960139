"""PTX emitter: verified IR in, PTX assembly text out (no NVRTC, no nvcc).

Kernel ABI: the `.param` list is the kernel's ABI plan (ir/abi.py, `plan(kernel, "ptx")`),
which `runtime/cuda.py` packs from as well: one group of `.param`s per IR parameter, in IR
order, named `p<i>_<name><suffix>` (buffers: pointer and length; tensors: pointer, 48-byte
layout record by value, parent length; uniforms: pointer; images: pointer, width, height;
scalars by value), then `p_faults` (the error word's address) where the IR carries check
sites, then `p_groups_x` in the batched entry.
The kernel carries `.reqntid` = the workgroup size, so it must be launched with exactly it.

Trapping checks (ir/checks.py, issue 9): every Load/Store/AtomicAdd and integer div/rem
with `check >= 0` tests its index against the logical length (buffers: the length
parameter; tensors: numel; workgroup arrays: their size, dropped where the index range is
proven inside; images: x < width and y < height) or its divisor against 0. The access is
suppressed as an unchecked one is (load 0, store and atomic skipped, quotient 0) and the
thread carries on; a failing thread branches to an out-of-line block (after the kernel's
`ret`, so the in-range path pays one not-taken branch) that claims the error word with
`atom.global.cas.b32` on its flag (first failure wins) and stores site, index, length and
the y coordinate with plain stores, then branches back. No `trap`: the context survives.
Only threads that really perform the access can fail: active copies of the batched entry,
and the right operand of `&&`/`||` only where the left one does not decide.

What the emitted code guarantees (docs/semantics.md): f32 `+ - * /` and sqrt are `.rn`
(never contracted), `mul_add` is `fma.rn.f32`; Rust's integer and float rules (integer
division and remainder through unsigned division, shift amounts modulo 32, saturating
float->int casts, int->float conversion, abs, round, f32 min/max/clamp) are ir/rules.py's
sequences rendered inline by `ptx_math.PtxOps`, the same function as on every backend
(u32 division by a nonzero constant is the rule's `div.u32` itself); loads out of range read
0 and stores out of range are dropped (explicit compares with the lengths passed in). Transcendentals (softmax's exp too)
are the math library's sequences (ir/mathlib.py, the same bits as every backend) rendered
inline by `ptx/math.py`'s `PtxOps`; f32 `%` is `ptx/math.py`'s `fmod` (exact). Workgroup
collectives follow the dialect's pairwise tree exactly; warp shuffles replace the first five
tree levels only where all threads are known to arrive (they keep the operand order, so the
bits, and leave the scratch array in the same final state, except one that only collectives
touch, `lanes.private_scratch`: there the lanes entry's copies share the shuffles,
`lanes.packed_warp_totals`). Accesses ir/checks.py proves in range (`PROVEN`) drop their
range compare. Buffers the kernel never writes are read with `ld.global.nc`; per-thread
loops of loads arrive unrolled (ir/unroll.py), a trip's runs of consecutive elements read
as `ld.global.v4` where one per-trip test allows, its checks in one branch (vectors.py).
Where barriers and shuffles may use the aligned forms is decided by `ir.uniformity` ("may" mode).

Element-wise kernels (see `batchable`) also get a batched entry with `emit_ptx(...,
batch=4)`: each hardware thread runs the threads of 4 consecutive workgroups statement by
statement, with `if`s as predication, so 4 independent loads per thread are in flight;
runtime/cuda.py launches it for large dispatches. Where every buffer access is at the
thread's own index, the copies are runs of consecutive threads instead (the block's
threads side by side in each run), and the threads of full, aligned blocks run a fast path with vector loads and stores and no per-copy predicates
(codegen/ptx/batched.py). Collective kernels that qualify get a
lanes entry with `emit_ptx(..., lane_threads=128)`, each thread running several lanes of
the workgroup the same way (codegen/ptx/lanes.py). Short constant loops are fully unrolled
(the copies' checks deferred together, as an unrolled trip's are) and consecutive
workgroup-array elements read or written as vectors (codegen/ptx/tiles.py).
"""

from __future__ import annotations

import functools
import os
import re
from typing import Optional

from goldy_import.errors import BackendError, DeviceLimitError
from goldy_import.ir import abi as A
from goldy_import.ir import nodes as N
from goldy_import.ir import types as T
from goldy_import.ir.layout import struct_layout
from goldy_import.ir.checks import PROVEN
from goldy_import.ir.pipeline import for_target
from goldy_import.ir.rules import RULES, call_rule

from . import batched
from . import math as PM
from .lanes import LANES_SM_THREADS, branches as lanes_branches, lanes_for, packed_warp_totals, private_scratch
from . import vectors
from . import tiles
from . import pdl
from . import rowwarp as rowwarp_mod
from .rare import Rare, fast_div
from ..guard import emitter
from ..names import PTX, Namer, ascii_text, kernel_namer
from goldy_import.ir.uniformity import Uniformity
from goldy_import.ir.unroll import trip_of

STATIC_SHARED_BYTES = 48 * 1024  # .shared a kernel may declare statically (no opt-in)

# PTX ISA version that first supports each target; the default for a target is this
# minimum, so the module loads on the oldest driver that knows the GPU.
MIN_PTX_VERSION = {70: "6.0", 72: "6.1", 75: "6.3", 80: "7.0", 86: "7.1", 87: "7.4",
                   89: "7.8", 90: "7.8", 100: "8.6", 101: "8.6", 103: "8.8", 120: "8.7", 121: "8.8"}
KIND_DECL = {"p": ".pred", "r": ".b32", "f": ".f32", "rd": ".b64", "fd": ".f64"}
SCALAR_KIND = {"f32": "f", "u32": "r", "i32": "r", "bool": "p"}
MOV = {"f": "mov.f32", "r": "mov.b32", "p": "mov.pred", "rd": "mov.b64", "fd": "mov.f64"}
ZERO = {"f": "0f00000000", "r": "0"}
CMP = {"eq": "eq", "ne": "ne", "lt": "lt", "le": "le", "gt": "gt", "ge": "ge"}


def ptx_version_for(target: str) -> str:
    return MIN_PTX_VERSION[_sm(target)]


def _sm(target: str) -> int:
    m = re.fullmatch(r"sm_(\d+)a?", target)
    if not m or int(m.group(1)) < 70:
        raise BackendError(f"unsupported PTX target `{target}`: expected sm_70 or newer, e.g. `sm_90`")
    sm = int(m.group(1))
    if sm not in MIN_PTX_VERSION:
        known = [k for k in MIN_PTX_VERSION if k <= sm]
        MIN_PTX_VERSION[sm] = MIN_PTX_VERSION[max(known)]
    return sm




def _expr_has_check(e: N.Expr) -> bool:
    return any(getattr(x, "check", -1) >= 0 for x in N.walk_expr(e))


def entry_name(kernel: N.Kernel) -> str:
    """The kernel's `.entry` name: its Rust name where ptxas takes it (ASCII, codegen/names.py)."""
    return Namer(PTX, [kernel.name])(kernel.name)


def batch_entry(kernel: N.Kernel, batch: int) -> str:
    """Name of the batched entry point (see `batchable`)."""
    return f"{entry_name(kernel)}__batch{batch}"


def lanes_entry(kernel: N.Kernel, lanes: int) -> str:
    """Name of the lanes entry (codegen/ptx/lanes.py): `lanes` lanes per hardware thread."""
    return f"{entry_name(kernel)}__lanes{lanes}"


def rowwarp_entry(kernel: N.Kernel) -> str:
    """Name of the row-warp entry (codegen/ptx/rowwarp.py): one warp per thread."""
    return f"{entry_name(kernel)}__rowwarp"


def lanes_in(ptx: str, kernel: N.Kernel) -> int:
    """Lanes per thread of the kernel's lanes entry in `ptx` (1: it has none)."""
    m = re.search(rf"\.entry {re.escape(entry_name(kernel))}__lanes(\d+)\(", ptx)
    return int(m.group(1)) if m else 1


def batchable(kernel: N.Kernel) -> bool:
    """Whether one thread may run `BATCH` threads of the kernel in lock step: no barrier,
    collective, atomic, workgroup array or loop, and a workgroup of [x, 1, 1] (a `return`
    retires its copy: the copy's later statements are masked off).
    Threads of such a kernel never wait for or observe each other except through memory
    races, whose order is unspecified anyway, so running several of them interleaved
    statement by statement in one hardware thread is one of the executions the GPU could
    have produced. It gives each hardware thread BATCH independent memory accesses in
    flight, where a one-element-per-thread kernel has one: bandwidth-bound kernels need
    that many bytes in flight to approach the copy ceiling."""
    wx, wy, wz = kernel.workgroup_size
    if wy != 1 or wz != 1 or kernel.workgroup_arrays:
        return False
    stmts = list(N.walk_stmts(kernel.body))
    return len(stmts) <= 64 and not any(isinstance(x, _NOT_BATCHABLE) for x in stmts)


@emitter("PTX")
def emit_ptx(kernel: N.Kernel, target: str = "sm_90", ptx_version: Optional[str] = None,
             source: Optional[str] = None, batch: int = 1, abi: Optional[A.PtxPlan] = None,
             lane_threads: int = 0, rowwarp: bool = False) -> str:
    """PTX text for one verified kernel. `source` (the Rust text) feeds the line comments;
    without it the kernel's own lines carried in the IR do (never the file). With `batch`
    above 1, a `batchable` kernel gets a second entry, `batch_entry(kernel, batch)`, in
    which each hardware thread runs the threads of `batch` consecutive workgroups in lock
    step (workgroup x ids b*batch + j; runs of consecutive threads for own-index kernels,
    codegen/ptx/batched.py); it takes one more `.param .u32` after the kernel's,
    the number of workgroups along x, and is launched with ceil(that / batch) blocks.
    `abi`: the kernel's `ir.abi.plan(kernel, "ptx")`, where the caller already has it.
    With `lane_threads` (e.g. lanes.LANE_THREADS), a kernel that qualifies (lanes.py) gets
    a lanes entry, `lanes_entry(kernel, c)`, launched with workgroup_size.x / c threads per
    block (c = `lanes_in(ptx, kernel)`), the kernel's parameters and grid. With `rowwarp`, a
    kernel that qualifies (rowwarp.py) gets the row-warp entry, `rowwarp_entry(kernel)`: one
    warp per thread, ROWWARP_BLOCK threads per block, the batched entry's parameters."""
    abi = abi or A.plan(kernel, "ptx")
    version = ptx_version or ptx_version_for(target)
    dependent = pdl.supported(_sm(target), version)
    kernel = for_target(kernel, "ptx").kernel  # softmax as plain IR around native reductions
    body: list[str] = []
    for b in ([1, batch] if batch > 1 and batchable(kernel) else [1]):
        body += ([""] if body else []) + _Emitter(kernel, source, abi, b, pdl=dependent).run()
    lanes = lanes_for(kernel, lane_threads) if lane_threads else 1
    if lanes > 1:
        body += [""] + _Emitter(kernel, source, abi, 1, lanes, pdl=dependent).run()
    if rowwarp and lanes == 1 and rowwarp_mod.qualifies(kernel):
        body += [""] + _Emitter(kernel, source, abi, 1, pdl=dependent, rowwarp=True).run()
    header = [f"// goldy-import PTX for kernel `{kernel.name}` from {kernel.source_file}",
              f".version {version}", f".target {target}", ".address_size 64", ""]
    return ascii_text("\n".join(header + body) + "\n")  # ptxas rejects any non-ASCII byte, comments too


# ---------------------------------------------------------------- registers and text


class Builder:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.count = {k: 0 for k in KIND_DECL}
        self.kinds: dict[str, str] = {}
        self.nlabels = 0

    def reg(self, kind: str) -> str:
        r = f"%{kind}{self.count[kind]}"
        self.count[kind] += 1
        self.kinds[r] = kind
        return r

    def kind_of(self, v: str) -> str:
        if v.startswith("%"):
            return self.kinds[v]
        if v.startswith("0f"):
            return "f"
        if v.startswith("0d"):
            return "fd"
        return "r"

    def op(self, text: str) -> None:
        self.lines.append("\t" + text)

    def label(self, hint: str) -> str:
        self.nlabels += 1
        return f"$L_{hint}_{self.nlabels}"

    def place(self, label: str) -> None:
        self.lines.append(f"{label}:")

    def comment(self, text: str) -> None:
        self.lines.append("\t// " + text)

    def decls(self) -> list[str]:
        return [f"\t.reg {KIND_DECL[k]} %{k}<{n}>;" for k, n in self.count.items() if n]


def _lanes(k: N.Kernel, ty: str) -> list[str]:
    """Scalar lane types of a value, flattened (matrices column by column)."""
    if T.is_scalar(ty):
        return [ty]
    if T.is_vector(ty):
        return [T.elem_of(ty)] * T.vec_len(ty)
    if T.is_matrix(ty):
        return ["f32"] * T.vec_len(ty) ** 2
    return [t for f in _decl(k, ty).fields for t in _lanes(k, f.ty)]


def _decl(k: N.Kernel, ty: str) -> N.StructDecl:
    decl = k.struct(T.struct_name(ty))
    assert decl is not None, ty  # the verifier checked every struct type
    return decl


def _field_slice(k: N.Kernel, struct_ty: str, name: str) -> tuple[int, int]:
    start = 0
    for f in _decl(k, struct_ty).fields:
        n = len(_lanes(k, f.ty))
        if f.name == name:
            return start, n
        start += n
    raise KeyError(name)


def _pieces(k: N.Kernel, ty: str, off: int = 0) -> list[tuple[int, int]]:
    """Memory pieces of a value in GPU layout: (byte offset, lanes) with lanes 1, 2 or 4
    (a vector access needs that alignment, which the layout guarantees)."""
    if T.is_scalar(ty):
        return [(off, 1)]
    if T.is_vector(ty):
        n = T.vec_len(ty)
        return [(off, n)] if n != 3 else [(off, 1), (off + 4, 1), (off + 8, 1)]
    if T.is_matrix(ty):
        n = T.vec_len(ty)
        col = 8 if n == 2 else 16
        return [p for c in range(n) for p in _pieces(k, T.vec("f32", n), off + c * col)]
    lay = struct_layout(_decl(k, ty))
    return [p for f in lay.fields for p in _pieces(k, f.ty, off + f.offset)]


def _stride(k: N.Kernel, ty: str) -> int:
    if T.is_struct(ty):
        return struct_layout(_decl(k, ty)).stride
    if T.is_vector(ty):
        return 16 if T.vec_len(ty) >= 3 else 8
    return 4


UNROLL = 4
# a `for` body this small (expression nodes in all, no call or division: those expand to
# long sequences) also gets a trip of WIDE_UNROLL first: a reduction loop under a
# collective (block_sum's `acc += x[base + j * 256]`) then keeps eight loads in flight per
# thread, which four at full occupancy fall just short of
WIDE_UNROLL, WIDE_BODY_NODES = 8, 24
MAX_PENDING = 8  # deferred checks per branch to a fault block (bounds the predicates kept live)
_ATOM = {"add": "add", "sub": "add", "min": "min", "max": "max", "and": "and", "or": "or", "xor": "xor",
         "exchange": "exch", "compare_exchange": "cas"}
_NOT_BATCHABLE = (N.Barrier, N.Reduce, N.Softmax, N.AtomicAdd, N.Break, N.Continue, N.While, N.Loop, N.For)


def _cheap(body: list[N.Stmt]) -> bool:
    """A `for` body worth the WIDE_UNROLL trip (see there)."""
    nodes = [e for x in N.walk_stmts(body) for top in N.stmt_exprs(x) for e in N.walk_expr(top)]
    return len(nodes) <= WIDE_BODY_NODES and not any(
        isinstance(e, N.Call) or (isinstance(e, N.Binary) and e.op in ("div", "rem")) for e in nodes)


def _unrollable(body: list[N.Stmt]) -> bool:
    """A `for` body that can simply be repeated: straight-line code and `if`s, small."""
    stmts = list(N.walk_stmts(body))
    return len(stmts) <= 16 and not any(
        isinstance(x, (N.Break, N.Continue, N.Return, N.Barrier, N.Reduce, N.Softmax, N.While, N.Loop, N.For))
        for x in stmts)


class _Loop:
    def __init__(self, cont: str, brk: str):
        self.cont = cont
        self.brk = brk


# ---------------------------------------------------------------- the emitter


@functools.lru_cache(maxsize=64)
def _basename(path: str) -> str:  # per line comment: one per source line emitted
    return os.path.basename(path)


class _Emitter:
    def __init__(self, k: N.Kernel, source: Optional[str], abi: A.PtxPlan, batch: int = 1, lanes: int = 1,
                 pdl: bool = False, rowwarp: bool = False):
        self.k = k
        self.rowwarp = rowwarp  # the row-warp entry: one warp per thread (codegen/ptx/rowwarp.py)
        self.rowwarp_lane = ""  # the lane of the warp
        self.splits: dict = {}  # id(for) -> its rowwarp.Split or None
        self.pdl = pdl  # the programmatic-dependent-launch prologue first (codegen/ptx/pdl.py)
        self.names = kernel_namer(k, PTX)  # ASCII `.param` and `.shared` names (codegen/names.py)
        self.abi = abi
        self.batch = batch
        self.lanes = lanes  # the lanes entry: lanes per hardware thread (codegen/ptx/lanes.py)
        self.pred: Optional[str] = None  # batched mode: the copy's predicate on memory and assignments
        self.b = Builder()
        self.m = PM.PtxOps(self.b)
        self.src_lines = source.splitlines() if source else [k.source_line(n) for n in range(1, k.span.end_line + 1)]
        self.current_line = 0
        self.uni = Uniformity(k, "may")
        self.locals: dict[str, list[str]] = {}
        self.scalars: dict[str, str] = {}
        self.res: dict[str, dict] = {}
        self.loops: list[_Loop] = []
        self.builtin: dict[str, list[str]] = {}
        self.lid = ""
        self.written = set(self.uni.written)
        self.private = private_scratch(k)
        self.checked = abi.checked
        self.traps: list[tuple] = []  # out-of-line fault blocks: (label, back, deferred checks)
        self.guards: list[str] = []  # `&&`/`||` left operands under which the code runs
        self.deferred: list[tuple] = []  # failed-check predicates awaiting flush_traps
        self.max_pending = MAX_PENDING  # (an unrolled trip's loads raise it: vectors.leading)
        self.trips = 0  # unrolled trips emitted (ir/unroll.py trip_of)
        self.sticky: Optional[list[str]] = None  # inside an unrolled loop: [failed, site, index, length, y]
        self.tiles = tiles.Alignment(k)  # for vector workgroup-array access (codegen/ptx/tiles.py)
        self.rare = Rare()  # rare paths out of line, one branch per statement (codegen/ptx/rare.py)
        self.top: Optional[int] = None  # id of the expression that is a statement's whole value

    # ------------------------------------------------------------ kernel

    def run(self) -> list[str]:
        k = self.k
        shared = sum(4 * w.size for w in k.workgroup_arrays)
        if shared > STATIC_SHARED_BYTES:  # ptxas's own limit: refused here, not as its error
            raise DeviceLimitError(f"kernel `{k.name}` ({k.source_file}:{k.span.line}): its workgroup arrays use "
                                   f"{shared} bytes, over the {STATIC_SHARED_BYTES} bytes of static shared memory "
                                   f"a CUDA kernel may declare")
        params = self.params()
        name = entry_name(k)
        if self.batch > 1:
            name = batch_entry(k, self.batch)
            contiguous = batched.plan(k, self.batch)  # codegen/ptx/batched.py: own-index kernels
            if contiguous is not None:
                batched.contiguous_entry(self, contiguous)
            else:
                self.batched_prologue()
            self.batched_block(k.body, list(self.valid))
        elif self.lanes > 1:
            name = lanes_entry(k, self.lanes)
            self.lanes_prologue()
            self.batched_block(k.body, list(self.valid))
        elif self.rowwarp:
            name = rowwarp_entry(k)
            rowwarp_mod.prologue(self)
            self.block(k.body)
        else:
            self.prologue()
            self.block(k.body)
        self.b.op("ret;")
        self.rare.blocks(self)  # first: their checks add fault blocks
        self.fault_blocks()
        wx, wy, wz = k.workgroup_size
        out = [f"// {line}" for line in (k.doc or "").splitlines()]
        if self.batch > 1:
            out.append(f"// {self.batch} workgroups along x per block, in lock step (see `batchable`)")
        if self.lanes > 1:
            out.append(f"// {self.lanes} lanes of the workgroup per thread, in lock step (codegen/ptx/lanes.py)")
        out.append(f".visible .entry {name}(")
        out.append(",\n".join("\t" + p for p in params))
        if self.batch > 1 and self.checked:
            # no .reqntid: given the block size, ptxas aims at full occupancy and would rather
            # spill (in the cold fault blocks) than use the few registers more that the
            # checks of four copies need; the launch uses the workgroup size all the same
            out.append(")")
        elif self.rowwarp:
            out.append(f") .reqntid {rowwarp_mod.ROWWARP_BLOCK}, 1, 1")
        else:
            out.append(f") .reqntid {wx // self.lanes}, {wy}, {wz}")
            if self.trips:  # ptxas would interleave a trip's loads with its uses to save registers
                out.append(".minnctapersm 1")  # (codegen/ptx/vectors.py): let it keep them in flight
            elif self.lanes > 1:  # registers for LANES_SM_THREADS: else ptxas sizes them for the
                # longest arm (softmax's general form: 56, 9 blocks), which the one-tile copy runs at
                out.append(f".minnctapersm {min(16, max(1, LANES_SM_THREADS // (wx // self.lanes)))}")
        out.append("{")
        out += self.b.decls()
        for w in k.workgroup_arrays:
            align = 16 if w.name in self.tiles.vectored else 4  # ld/st.shared.v4 (codegen/ptx/tiles.py)
            out.append(f"\t.shared .align {align} .b8 S_{self.names(w.name)}[{4 * w.size}];")
        out.append("")
        if self.pdl:
            out += pdl.PROLOGUE
        out += self.b.lines
        out.append("}")
        return out

    def params(self) -> list[str]:
        """The entry's `.param` declarations (the ABI plan's, in order), loading each IR
        parameter's values into registers."""
        decl: list[str] = []
        names: dict[tuple[int, str], str] = {}  # (IR parameter, role) -> .param name
        scalar_ty: dict[int, str] = {}  # IR parameter -> ld.param type of a scalar
        for w in self.abi.entry(self.batch > 1 or self.rowwarp):
            name = f"p{w.param}_{self.names(self.k.params[w.param].name)}{w.suffix}" if w.param >= 0 else w.suffix
            names[(w.param, w.role)] = name
            if w.role == "scalar":
                scalar_ty[w.param] = w.ty[1:]
            align = ".align 4 " if w.array else ""
            decl.append(f".param {align}{w.ty} {name}" + (f"[{w.array}]" if w.array else ""))
        for i, p in enumerate(self.k.params):
            nm = {role: names[(i, role)] for role in A.ROLES[p.category] if (i, role) in names}
            if p.category in N.BUFFER_CATEGORIES:
                self.res[p.name] = {"kind": "buffer", "ptr": self._ptr(nm["buffer"]),
                                    "len": self._ld_param("u32", nm["len"]), "param": p}
            elif p.category == "scalar":
                if p.ty == "bool":
                    r = self._ld_param("u32", nm["scalar"])
                    pr = self.b.reg("p")
                    self.b.op(f"setp.ne.u32 {pr}, {r}, 0;")
                    self.scalars[p.name] = pr
                else:
                    self.scalars[p.name] = self._ld_param(scalar_ty[i], nm["scalar"])
            elif p.category in N.TENSOR_CATEGORIES:
                lay = []
                for j in range(len(A.TENSOR_LAYOUT)):
                    r = self.b.reg("r")
                    self.b.op(f"ld.param.u32 {r}, [{nm['layout']}+{4 * j}];")
                    lay.append(r)
                self.res[p.name] = {"kind": "tensor", "ptr": self._ptr(nm["buffer"]), "layout": lay,
                                    "buflen": self._ld_param("u32", nm["blen"]), "param": p}
            elif p.category == "uniform":
                self.res[p.name] = {"kind": "uniform", "ptr": self._ptr(nm["uniform"]), "param": p}
            elif p.category == "image":
                self.res[p.name] = {"kind": "image", "ptr": self._ptr(nm["buffer"]),
                                    "w": self._ld_param("u32", nm["width"]),
                                    "h": self._ld_param("u32", nm["height"]), "param": p}
        return decl

    def _ld_param(self, ty: str, name: str) -> str:
        kind = "f" if ty == "f32" else "r"
        r = self.b.reg(kind)
        self.b.op(f"ld.param.{ty} {r}, [{name}];")
        return r

    def _ptr(self, name: str) -> str:
        a = self.b.reg("rd")
        self.b.op(f"ld.param.u64 {a}, [{name}];")
        g = self.b.reg("rd")
        self.b.op(f"cvta.to.global.u64 {g}, {a};")
        return g

    def prologue(self) -> None:
        b = self.b
        wx, wy, wz = self.k.workgroup_size
        need = set(self.k.builtins)
        uses_collective = any(isinstance(s, (N.Reduce, N.Softmax)) for s in N.walk_stmts(self.k.body))
        tid: list[str] = []
        ctaid: list[str] = []
        if need & {"local_id", "global_id"} or uses_collective:
            tid = [self._sreg(f"%tid.{a}") if d > 1 or a == "x" else "0" for a, d in zip("xyz", (wx, wy, wz))]
        if need & {"workgroup_id", "global_id"}:
            ctaid = [self._sreg(f"%ctaid.{a}") for a in "xyz"]
        if "local_id" in need:
            self.builtin["local_id"] = tid
        if "workgroup_id" in need:
            self.builtin["workgroup_id"] = ctaid
        if "num_workgroups" in need:
            self.builtin["num_workgroups"] = [self._sreg(f"%nctaid.{a}") for a in "xyz"]
        if "workgroup_size" in need:
            self.builtin["workgroup_size"] = [str(wx), str(wy), str(wz)]
        if "global_id" in need:
            g = []
            for c, t, d in zip(ctaid, tid, (wx, wy, wz)):
                r = b.reg("r")
                b.op(f"mad.lo.s32 {r}, {c}, {d}, {t};")
                g.append(r)
            self.builtin["global_id"] = g
        if uses_collective:
            # linear local index, x fastest: the order warps are formed in
            lid = tid[0]
            if wy > 1 or wz > 1:
                yz = b.reg("r")
                b.op(f"mad.lo.s32 {yz}, {tid[2]}, {wy}, {tid[1]};")
                lid = b.reg("r")
                b.op(f"mad.lo.s32 {lid}, {yz}, {wx}, {tid[0]};")
            self.lid = lid

    def batched_prologue(self) -> None:
        """Per copy j: workgroup id x = ctaid.x * batch + j, valid while below p_groups_x."""
        b = self.b
        wx = self.k.workgroup_size[0]
        groups = self._ld_param("u32", A.GROUPS_PARAM)
        tid = self._sreg("%tid.x")
        ctaid = [self._sreg(f"%ctaid.{a}") for a in "xyz"]
        first = self.new("r", f"mul.lo.s32 {{}}, {{}}, {self.batch};", ctaid[0])
        nw = [groups, self._sreg("%nctaid.y"), self._sreg("%nctaid.z")]
        self.copies: list[tuple[dict, dict]] = []
        self.valid: list[str] = []
        for j in range(self.batch):
            wid = self.new("r", f"add.s32 {{}}, {{}}, {j};", first)
            self.valid.append(self.lt_u(wid, groups))
            gid = self.new("r", f"mad.lo.s32 {{}}, {{}}, {wx}, {{}};", wid, tid)
            builtin = {"local_id": [tid, "0", "0"], "workgroup_id": [wid, ctaid[1], ctaid[2]],
                       "num_workgroups": nw, "workgroup_size": [str(wx), "1", "1"],
                       "global_id": [gid, ctaid[1], ctaid[2]]}
            self.copies.append(({}, builtin))
        self.alive: list[Optional[str]] = [None] * self.batch  # None: the copy has not returned
        self.masks: dict[tuple, list[str]] = {}
        b.comment(f"{self.batch} copies of the kernel's threads follow, statement by statement")

    def lanes_prologue(self) -> None:
        """Copy j of hardware thread t is lane t + j * (wx / lanes) of the workgroup; every
        copy is live (the predicate is true)."""
        wx = self.k.workgroup_size[0]
        h = wx // self.lanes
        tid = self._sreg("%tid.x")
        ctaid = [self._sreg(f"%ctaid.{a}") for a in "xyz"]
        nw = [self._sreg(f"%nctaid.{a}") for a in "xyz"]
        self.lid = tid  # the hardware lane: warp 0's shuffles in `warp0_levels`
        live = self.new("p", "setp.eq.u32 {}, 0, 0;")
        self.copies = []
        self.valid = []
        for j in range(self.lanes):
            lane = tid if j == 0 else self.new("r", f"add.s32 {{}}, {{}}, {h * j};", tid)
            gid = self.new("r", f"mad.lo.s32 {{}}, {{}}, {wx}, {{}};", ctaid[0], lane)
            builtin = {"local_id": [lane, "0", "0"], "workgroup_id": ctaid, "num_workgroups": nw,
                       "workgroup_size": [str(wx), "1", "1"], "global_id": [gid, ctaid[1], ctaid[2]]}
            self.copies.append(({}, builtin))
            self.valid.append(live)
        self.alive = [None] * self.lanes
        self.masks = {}
        self.b.comment(f"{self.lanes} lanes of the workgroup follow, statement by statement")

    def batched_for(self, s: N.For, outer: list[str]) -> None:
        """The lanes entry's `for`: its range is the same for every copy (lanes.py), so one
        loop, one induction register, runs the body for all copies."""
        b = self.b
        self.use_copy(0, None)
        start = self.expr(s.start)[0]
        end_val = self.copy(self.expr(s.end)[0])
        self.flush_traps()
        i = self.b.reg("r")
        for regs, _ in self.copies:
            regs[s.var] = [i]
        b.op(f"mov.b32 {i}, {start};")
        self.masks = {}  # predicates made inside the loop are not defined before it
        self.counted_loop(s, i, end_val, lambda cont, brk: self.batched_block(s.body, outer))
        self.masks = {}

    def lanes_branch(self, s: N.If, outer: list[str]) -> None:
        """An `if` of the lanes entry that every copy takes together (lanes.py `branches`):
        copy 0's condition decides one branch for all of them."""
        b = self.b
        self.use_copy(0, None)
        c = self.reg_of(self.expr(s.cond)[0], "p")
        self.flush_traps()
        end = b.label("endif")
        els = b.label("else") if s.else_body else end
        b.op(f"@!{c} bra {els};")
        self.lanes_arm(s.then_body, outer)
        if s.else_body:
            b.op(f"bra.uni {end};")
            b.place(els)
            self.lanes_arm(s.else_body, outer)
        b.place(end)

    def lanes_arm(self, body: list[N.Stmt], outer: list[str]) -> None:
        self.masks = {}  # predicates made in one arm are not defined in the other, nor after
        self.batched_block(body, outer)
        self.pred = None
        self.flush_traps()
        self.masks = {}

    def use_copy(self, j: int, pred: Optional[str]) -> None:
        self.locals, self.builtin = self.copies[j]
        self.pred = pred

    def batched_block(self, stmts: list[N.Stmt], outer: list[str]) -> None:
        """Each statement for every copy before the next statement; an `if` becomes
        predication (copy j runs its body under outer[j] and its condition; a `return`
        clears the copy's `alive` predicate). A store evaluates every copy's value and
        address before any copy writes, so the loads of all copies are in flight together."""
        for s in stmts:
            self.line_comment(s.span)
            key = (tuple(outer), tuple(self.alive))
            if key not in self.masks:
                self.masks[key] = [p if a is None else self.pred_and(p, a) for p, a in zip(outer, self.alive)]
            preds = self.masks[key]
            if isinstance(s, N.Return):
                for j, p in enumerate(outer):
                    gone = self.new("p", "not.pred {}, {};", p)
                    alive = self.alive[j]
                    self.alive[j] = gone if alive is None else self.pred_and(alive, gone)
            elif isinstance(s, N.If) and self.lanes > 1 and lanes_branches(s, self.uni):
                self.lanes_branch(s, outer)
            elif isinstance(s, N.If):
                then_p, else_p = [], []
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    c = self.reg_of(self.expr(s.cond)[0], "p")
                    then_p.append(self.pred_and(p, c))
                    if s.else_body:
                        else_p.append(self.pred_and(p, self.new("p", "not.pred {}, {};", c)))
                self.pred = None
                self.flush_traps()
                self.batched_block(s.then_body, then_p)
                if s.else_body:
                    self.batched_block(s.else_body, else_p)
            elif isinstance(s, N.Store):
                pending, values = [], []
                early = self.defers(s.value)  # every copy's value and rare path before the checks
                for j, p in enumerate(preds if early else []):
                    self.use_copy(j, p)
                    values.append(self.top_expr(s.value))
                self.rare.flush(self)
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    vals = values[j] if early else self.expr(s.value)
                    space, ok, addr, ty, _ = self.access(s.resource, s.index, check=s.check)
                    pending.append((p, space, ok, addr, ty, vals))
                if early:  # the failed-check predicates die before the stores' (fewer spilled)
                    self.pred = None
                    self.flush_traps()
                for p, space, ok, addr, ty, vals in pending:
                    self.pred = p
                    self.store_mem(space, ok, addr, ty, vals)
                self.pred = None
            elif isinstance(s, N.For):
                self.batched_for(s, outer)
            elif isinstance(s, N.Barrier):  # the lanes entry: outside any `if` (lanes.py)
                self.flush_traps()
                self.barrier(True)
            elif isinstance(s, N.Reduce):  # the lanes entry: reached by every copy (lanes.py)
                vals = []
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    vals.append(self.expr(s.value)[0])
                self.pred = None
                self.flush_traps()
                lids = [builtin["local_id"][0] for _, builtin in self.copies]
                r = self.collective(s.op, s.value.ty, s.n, vals, s.scratch, True, lids)
                for j in range(self.lanes):
                    self.use_copy(j, None)
                    self.move(self.local(s.target), [r])
            elif isinstance(s, N.Let) and self.defers(s.value):  # every copy's value, the rare paths, the moves
                vals = []
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    vals.append(self.top_expr(s.value) if s.value is not None else [])
                self.rare.flush(self)
                for j, v in enumerate(vals):
                    self.use_copy(j, None)  # the local is only read under its predicate: no guard needed
                    self.move(self.local(s.name), v)
            elif isinstance(s, N.Let):
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    regs = self.local(s.name)
                    vals = self.expr(s.value) if s.value is not None else []
                    self.pred = None  # the local is only read under this predicate: no guard needed
                    self.move(regs, vals)
            elif self.defers(s.value):  # Assign (batchable() admits nothing else), as Let
                vals = []
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    vals.append(self.top_expr(s.value))
                self.rare.flush(self)
                for j, (p, v) in enumerate(zip(preds, vals)):
                    self.use_copy(j, p)
                    root, lanes = self.place(s.target)
                    regs = self.local(root)
                    self.move([regs[i] for i in lanes], v)  # checks keep snapshots
                self.pred = None
            else:
                for j, p in enumerate(preds):
                    self.use_copy(j, p)
                    root, lanes = self.place(s.target)
                    regs = self.local(root)
                    self.move([regs[i] for i in lanes], self.expr(s.value))  # checks keep snapshots
                self.pred = None
        self.pred = None
        self.flush_traps()  # every copy's loads and stores of the straight-line code in one block

    def _sreg(self, name: str) -> str:
        r = self.b.reg("r")
        self.b.op(f"mov.u32 {r}, {name};")
        return r

    # ------------------------------------------------------------ helpers

    def local(self, name: str) -> list[str]:
        regs = self.locals.get(name)
        if regs is None:
            regs = [self.b.reg(SCALAR_KIND[t]) for t in _lanes(self.k, self.k.locals[name])]
            self.locals[name] = regs
        return regs

    def reg_of(self, v: str, kind: str) -> str:
        """A register holding v (immediates are moved in)."""
        if v.startswith("%"):
            return v
        r = self.b.reg(kind)
        if kind == "p":
            self.b.op(f"setp.ne.u32 {r}, {v}, 0;")
        else:
            self.b.op(f"{MOV[kind]} {r}, {v};")
        return r

    def move(self, dst: list[str], src: list[str]) -> None:
        if set(src) & set(dst):  # v = v.yx: read every source before writing
            src = [self.copy(s) if s in dst else s for s in src]
        guard = f"@{self.pred} " if self.pred else ""
        for d, s in zip(dst, src):
            if d != s:
                kind = self.b.kinds[d]
                if kind == "p" and not s.startswith("%"):
                    self.b.op(f"{guard}setp.ne.u32 {d}, {s}, 0;")
                else:
                    self.b.op(f"{guard}{MOV[kind]} {d}, {s};")

    def copy(self, s: str) -> str:
        kind = self.b.kind_of(s)
        r = self.b.reg(kind)
        self.b.op(f"{MOV[kind]} {r}, {s};")
        return r

    def new(self, kind: str, text: str, *srcs: str) -> str:
        d = self.b.reg(kind)
        self.b.op(text.format(d, *srcs))
        return d

    def const_u32(self, e: N.Expr) -> Optional[int]:
        return int(e.value) & 0xFFFFFFFF if isinstance(e, N.Const) and e.ty in T.INTS else None

    def pred_and(self, a: str, b: str) -> str:
        return self.new("p", "and.pred {}, {}, {};", a, b)

    def lt_u(self, a: str, b: str) -> str:
        return self.new("p", "setp.lt.u32 {}, {}, {};", self.reg_of(a, "r"), b)

    def line_comment(self, span: N.Span) -> None:
        if span.line == self.current_line or span is N.NO_SPAN:
            return
        self.current_line = span.line
        text = self.src_lines[span.line - 1].strip() if 0 < span.line <= len(self.src_lines) else ""
        self.b.comment(f"{_basename(self.k.source_file)}:{span.line}  {text}".rstrip())

    # ------------------------------------------------------------ trapping checks

    def trap(self, site: int, ok: str = "", bad: str = "", index: str = "0", length: str = "0",
             y: str = "0") -> None:
        """Check `site` fails where `ok` is false (or `bad` true), in a thread that really
        runs it (the batched entry's copy predicate, `&&`/`||` guards). The branch to the
        block that records it is deferred (`flush_traps`) to the end of the straight-line
        code (before the next branch, label, barrier or collective) or until MAX_PENDING
        checks wait: a check must not split the code into basic blocks that ptxas cannot
        schedule across, or the loads of later statements, unrolled loop iterations and
        batched copies would wait for the values of earlier ones instead of being in
        flight together."""
        assert self.checked and (ok or bad)
        f = bad or self.new("p", "not.pred {}, {};", ok)
        for c in self.guards + ([self.pred] if self.pred else []):
            f = self.pred_and(f, c)
        self.deferred.append((f, site, self.snapshot(index), length, self.snapshot(y)))
        if len(self.deferred) >= self.max_pending:
            self.flush_traps()

    def snapshot(self, v: str) -> str:
        """`v`, copied if it is a local's register (that local may be assigned before the
        check is flushed)."""
        if v.startswith("%") and any(v in regs for regs in self.locals.values()):
            return self.copy(v)
        return v

    def flush_traps(self) -> None:
        """One branch for the checks deferred so far: where any failed, to an out-of-line
        block that records the first of them (evaluation order); then on from here."""
        pending, self.deferred = self.deferred, []
        if not pending:
            return
        if self.sticky is not None:  # fold into the loop's fault registers; one branch after the loop
            acc = self.sticky
            for f, site, index, length, y in pending:
                take = self.new("p", "and.pred {}, {}, {};", f, self.new("p", "not.pred {}, {};", acc[0]))
                for reg, v in zip(acc[1:], (str(site), index, length, y)):
                    self.b.op(f"@{take} mov.b32 {reg}, {v};")
                self.b.op(f"or.pred {acc[0]}, {acc[0]}, {take};")
            return
        anyf = pending[0][0]
        for f, *_ in pending[1:]:
            anyf = self.new("p", "or.pred {}, {}, {};", anyf, f)
        fail, back = self.b.label("fault"), self.b.label("checked")
        self.b.op(f"@{anyf} bra {fail};")
        self.b.place(back)
        self.traps.append((fail, back, pending))

    def fault_blocks(self) -> None:
        """After the kernel's last `ret`: for each failed check of a flush, in evaluation
        order, claim the dispatch's error word (flag 0 -> 1: the first failure wins) and
        store site, index, length and y; then go back."""
        b, W = self.b, A.ERROR_WORD.index
        for fail, back, pending in self.traps:
            b.place(fail)
            raw = self.new("rd", f"ld.param.u64 {{}}, [{A.FAULT_PARAM}];")
            word = self.new("rd", "cvta.to.global.u64 {}, {};", raw)
            for f, site, index, length, y in pending:
                b.comment(f"check site {site}" if not str(site).startswith("%") else "the first failed check of an unrolled loop")
                skip = b.label("nofault")
                if len(pending) > 1:
                    b.op(f"@!{f} bra {skip};")
                old = self.new("r", "atom.global.cas.b32 {}, [{}], 0, 1;", word)
                first = self.new("p", "setp.eq.u32 {}, {}, 0;", old)
                b.op(f"@!{first} bra {skip};")
                for off, v in ((4 * W("site"), str(site)), (4 * W("index"), index), (4 * W("length"), length),
                               (4 * W("index_y"), y)):
                    b.op(f"st.global.u32 [{word}+{off}], {self.reg_of(v, 'r')};")
                b.place(skip)
            b.op(f"bra.uni {back};")

    # ------------------------------------------------------------ statements

    def block(self, stmts: list[N.Stmt], flush: bool = True) -> None:
        """The statements; deferred checks are flushed at the end unless `flush` is false
        (the unrolled copies of a loop body share one flush)."""
        if self.rowwarp:
            stmts = rowwarp_mod.without_trips(self, stmts)
        i = 0
        while i < len(stmts):
            s = stmts[i]  # a local: an internal error names its Rust line (codegen/guard.py)
            n = tiles.vector_group(self, stmts, i)  # consecutive elements as one ld/st.shared.v4
            if not n:
                self.stmt(s)
            i += n or 1
        if flush:
            self.flush_traps()

    def stmt(self, s: N.Stmt) -> None:
        """Straight-line statements (let, assignment, store, atomic) leave their checks
        deferred; any statement that branches, places a label or synchronises flushes them
        first (after evaluating its own expressions)."""
        b = self.b
        self.line_comment(s.span)
        if isinstance(s, N.Let):
            regs = self.local(s.name)
            if s.value is not None:
                self.move(regs, self.expr(s.value))
        elif isinstance(s, N.Assign):
            root, lanes = self.place(s.target)
            regs = self.local(root)
            self.move([regs[i] for i in lanes], self.expr(s.value))
        elif isinstance(s, N.Store):
            self.store(s.resource, s.index, self.expr(s.value), s.check)
        elif isinstance(s, N.If):
            c = self.reg_of(self.expr(s.cond)[0], "p")
            self.flush_traps()
            end = b.label("endif")
            if s.else_body:
                els = b.label("else")
                b.op(f"@!{c} bra {els};")
                self.block(s.then_body)
                b.op(f"bra.uni {end};")
                b.place(els)
                self.block(s.else_body)
            else:
                b.op(f"@!{c} bra {end};")
                self.block(s.then_body)
            b.place(end)
        elif isinstance(s, N.While):
            self.flush_traps()
            top, end = b.label("while"), b.label("wend")
            b.place(top)
            c = self.reg_of(self.expr(s.cond)[0], "p")
            self.flush_traps()
            b.op(f"@!{c} bra {end};")
            trip = trip_of(self.k, s) if self.batch == 1 and self.lanes == 1 else None
            self.loop_body(s.body, top, end, trip)
            b.op(f"bra.uni {top};")
            b.place(end)
        elif isinstance(s, N.Loop):
            self.flush_traps()
            top, end = b.label("loop"), b.label("lend")
            b.place(top)
            self.loop_body(s.body, top, end)
            b.op(f"bra.uni {top};")
            b.place(end)
        elif isinstance(s, N.For):
            self.for_loop(s)
        elif isinstance(s, N.Break):
            self.flush_traps()
            b.op(f"bra.uni {self.loops[-1].brk};")
        elif isinstance(s, N.Continue):
            self.flush_traps()
            b.op(f"bra.uni {self.loops[-1].cont};")
        elif isinstance(s, N.Return):
            self.flush_traps()
            b.op("ret;")
        elif isinstance(s, N.Barrier):
            self.flush_traps()
            self.barrier(id(s) in self.uni.aligned)
        elif isinstance(s, N.Reduce):
            v = self.expr(s.value)[0]
            self.flush_traps()
            r = self.collective(s.op, s.value.ty, s.n, [v], s.scratch, id(s) in self.uni.aligned)
            self.move(self.local(s.target), [r])
        elif isinstance(s, N.Atomic):
            self.atomic(s)
        else:  # the verifier admits nothing else
            raise BackendError(f"PTX emitter: unsupported statement {type(s).__name__}")

    def loop_body(self, body: list[N.Stmt], cont: str, brk: str, trip=None) -> None:
        self.loops.append(_Loop(cont, brk))
        if trip is not None:  # an unrolled trip (ir/unroll.py): its loads together, as vectors where they may be
            self.trips += 1
            vectors.trip(self, trip, brk)
        else:
            self.block(body)
        self.loops.pop()

    def split(self, s: N.For):
        """The row-warp entry's Split of loop `s` (rowwarp.py), or None."""
        if id(s) not in self.splits:
            self.splits[id(s)] = rowwarp_mod.split_of(self.k, s, self.written)
        return self.splits[id(s)]

    def for_loop(self, s: N.For) -> None:
        sp = self.split(s) if self.rowwarp else None
        if sp is not None:
            rowwarp_mod.emit(self, s, sp, lambda: self.plain_for(s))
        else:
            self.plain_for(s)

    def plain_for(self, s: N.For) -> None:
        b = self.b
        sty = "s32" if s.ty == "i32" else "u32"
        i = self.local(s.var)[0]
        start = self.expr(s.start)[0]
        end_val = self.copy(self.expr(s.end)[0])  # evaluated once, before the first iteration
        self.flush_traps()
        trips = tiles.full_trips(s)
        if trips is not None:  # short and constant: one copy of the body per value
            # the copies' checks share flushes, as the four-iteration trip's do: a branch per
            # copy would keep ptxas from issuing later copies' loads before it
            for v in trips:
                b.op(f"mov.b32 {i}, {v};")
                self.block(s.body, flush=False)
            self.flush_traps()
            return
        b.op(f"mov.b32 {i}, {start};")
        if not s.inclusive and _unrollable(s.body):
            for u in ((WIDE_UNROLL, UNROLL) if _cheap(s.body) else (UNROLL,)):
                self.unrolled_trips(s, i, end_val, u)  # (after the first, fewer than its u remain)
        self.counted_loop(s, i, end_val, lambda cont, brk: self.loop_body(s.body, cont, brk))

    def unrolled_trips(self, s: N.For, i: str, end_val: str, u: int) -> None:
        """`u` iterations of `s` per trip while at least `u` remain, so that ptxas can issue
        their loads together; what follows finishes the rest."""
        b = self.b
        sty = "s32" if s.ty == "i32" else "u32"
        top, rest = b.label(f"for{u}"), b.label("frest")
        outer, sticky = self.sticky, None
        if self.checked:
            # failed checks accumulate in registers (the first in evaluation order wins)
            # and one branch after the loop records it: no side exit inside the loop
            sticky = [self.new("p", "setp.ne.u32 {}, {}, {};", i, i)]
            sticky += [self.new("r", "mov.b32 {}, 0;") for _ in range(4)]
            self.sticky = sticky
        b.place(top)
        more = self.new("p", f"setp.lt.{sty} {{}}, {{}}, {{}};", i, end_val)
        left = self.new("r", "sub.s32 {}, {}, {};", end_val, i)
        enough = self.pred_and(more, self.new("p", f"setp.gt.u32 {{}}, {{}}, {u - 1};", left))
        b.op(f"@!{enough} bra {rest};")
        for _ in range(u):
            self.block(s.body, flush=False)  # the copies' checks share one branch
            b.op(f"add.s32 {i}, {i}, 1;")
        self.flush_traps()
        b.op(f"bra.uni {top};")
        b.place(rest)
        if sticky is not None:
            self.sticky = outer
            self.deferred.append((sticky[0], sticky[1], sticky[2], sticky[3], sticky[4]))
            self.flush_traps()

    def counted_loop(self, s: N.For, i: str, end_val: str, body) -> None:
        """`i` from its value now while below (`..=`: up to) `end_val`, by one; `body(cont,
        brk)` emits the body, given the labels `continue` and `break` go to."""
        b = self.b
        sty = "s32" if s.ty == "i32" else "u32"
        top, cont, brk = b.label("for"), b.label("fnext"), b.label("fend")
        b.place(top)
        c = self.new("p", f"setp.{'le' if s.inclusive else 'lt'}.{sty} {{}}, {{}}, {{}};", i, end_val)
        b.op(f"@!{c} bra {brk};")
        body(cont, brk)
        b.place(cont)
        if s.inclusive:  # stop at the bound itself: `0..=u32::MAX` must not wrap around
            last = self.new("p", "setp.eq.s32 {}, {}, {};", i, end_val)
            b.op(f"@{last} bra {brk};")
        b.op(f"add.s32 {i}, {i}, 1;")
        b.op(f"bra.uni {top};")
        b.place(brk)

    def place(self, e: N.Expr) -> tuple[str, list[int]]:
        """The root local of an assignment target and the lanes of it written."""
        if isinstance(e, N.Var):
            return e.name, list(range(len(_lanes(self.k, e.ty))))
        if isinstance(e, N.Field):
            root, lanes = self.place(e.value)
            start, n = _field_slice(self.k, e.value.ty, e.name)
            return root, lanes[start:start + n]
        if isinstance(e, N.Swizzle):
            root, lanes = self.place(e.value)
            return root, [lanes["xyzw".index(c)] for c in e.lanes]
        raise BackendError(f"PTX emitter: cannot assign to {type(e).__name__}")

    def barrier(self, aligned: bool) -> None:
        self.b.op("bar.sync 0;" if aligned else "barrier.sync 0;")

    # ------------------------------------------------------------ memory

    def address(self, base: str, index: str, stride: int) -> str:
        off = self.new("rd", "mul.wide.u32 {}, {}, {};", self.reg_of(index, "r"), str(stride))
        return self.new("rd", "add.s64 {}, {}, {};", base, off)

    def access(self, name: str, index: Optional[N.Expr], vals: Optional[list[str]] = None, check: int = -1):
        """(space, pred in range, address register, element type, cache op) of one element;
        the index is an expression or already evaluated (`vals`). With `check` >= 0 (a
        trapping-check site) an index out of the logical range is recorded as a fault."""
        def ev() -> list[str]:
            if vals is not None:
                return vals
            assert index is not None
            return self.expr(index)
        w = self.k.workgroup_array(name)
        if w is not None:
            idx = ev()[0]
            bounds = self.uni.range(index) if index is not None else None
            # in range whatever the thread (tile indices from local_id and constant loops): no check
            ok = "" if bounds is not None and bounds[1] < w.size else self.lt_u(idx, str(w.size))
            if ok and check >= 0:
                self.trap(check, ok, index=idx, length=str(w.size))
            base = self.new("r", f"mov.u32 {{}}, S_{self.names(name)};")
            addr = self.new("r", "mad.lo.s32 {}, {}, 4, {};", self.reg_of(idx, "r"), base)
            return "shared", ok, addr, w.ty, ""
        r = self.res[name]
        p = r["param"]
        nc = ".nc" if name not in self.written else ""
        if r["kind"] == "buffer":
            idx = ev()[0]
            ok = "" if check == PROVEN else self.lt_u(idx, r["len"])  # ir/checks.py proved it
            if check >= 0:
                self.trap(check, ok, index=idx, length=r["len"])
            return "global", ok, self.address(r["ptr"], idx, _stride(self.k, p.ty)), p.ty, nc
        if r["kind"] == "image":
            x, y = ev()
            ok = self.pred_and(self.lt_u(x, r["w"]), self.lt_u(y, r["h"]))
            if check >= 0:
                self.trap(check, ok, index=x, length=r["w"], y=y)
            lin = self.new("rd", "mul.wide.u32 {}, {}, {};", self.reg_of(y, "r"), r["w"])
            x64 = self.new("rd", "cvt.u64.u32 {}, {};", self.reg_of(x, "r"))
            lin = self.new("rd", "add.s64 {}, {}, {};", lin, x64)
            off = self.new("rd", "mul.lo.s64 {}, {}, {};", lin, str(_stride(self.k, p.ty)))
            return "global", ok, self.new("rd", "add.s64 {}, {}, {};", r["ptr"], off), p.ty, nc
        # tensor: logical row-major index -> element offset through the layout record
        idx = self.reg_of(ev()[0], "r")
        lay = r["layout"]
        ok = self.lt_u(idx, lay[2])
        if check >= 0:  # the logical index against numel; the parent-buffer guard below stays silent
            self.trap(check, ok, index=idx, length=lay[2])
        phys = self.new("r", "add.s32 {}, {}, {};", lay[0], idx)
        contig = self.new("p", "setp.ne.b32 {}, {}, 0;", self.new("r", "and.b32 {}, {}, 1;", lay[11]))
        done = self.b.label("tdone")
        self.b.op(f"@{contig} bra {done};")
        rem = idx
        acc = lay[0]
        for axis in (3, 2, 1, 0):
            d = lay[3 + axis]
            dd = self.new("r", "max.u32 {}, {}, 1;", d)  # extents are >= 1 when idx < numel
            c = self.new("r", "rem.u32 {}, {}, {};", rem, dd) if axis else rem
            if axis:
                rem = self.new("r", "div.u32 {}, {}, {};", rem, dd)
            acc = self.new("r", "mad.lo.s32 {}, {}, {}, {};", c, lay[7 + axis], acc)
        self.b.op(f"mov.b32 {phys}, {acc};")
        self.b.place(done)
        ok = self.pred_and(ok, self.lt_u(phys, r["buflen"]))
        return "global", ok, self.address(r["ptr"], phys, 4), p.ty, nc

    def load_mem(self, space: str, ok: str, addr: str, ty: str, nc: str, off: int = 0) -> list[str]:
        """`ok` is the predicate of an access in range, "" for one always in range."""
        if self.pred:
            ok = self.pred_and(ok, self.pred) if ok else self.pred
        lane_tys = _lanes(self.k, ty)
        out: list[str] = []
        li = 0
        for poff, n in _pieces(self.k, ty, off):
            tys = lane_tys[li:li + n]
            li += n
            regs = []
            for t in tys:
                kind = "r" if t == "bool" else SCALAR_KIND[t]
                r = self.b.reg(kind)
                self.b.op(f"{MOV[kind]} {r}, {ZERO[kind]};")
                regs.append(r)
            pty = {"f32": "f32", "u32": "u32", "i32": "u32", "bool": "u32"}[tys[0]]
            vec = "" if n == 1 else f".v{n}"
            dst = regs[0] if n == 1 else "{" + ", ".join(regs) + "}"
            a = f"[{addr}+{poff}]" if poff else f"[{addr}]"
            self.b.op(f"{'@' + ok + ' ' if ok else ''}ld.{space}{nc}{vec}.{pty} {dst}, {a};")
            for t, r in zip(tys, regs):
                out.append(self.new("p", "setp.ne.u32 {}, {}, 0;", r) if t == "bool" else r)
        return out

    def store_mem(self, space: str, ok: str, addr: str, ty: str, vals: list[str]) -> None:
        if self.pred:
            ok = self.pred_and(ok, self.pred) if ok else self.pred
        lane_tys = _lanes(self.k, ty)
        li = 0
        for poff, n in _pieces(self.k, ty):
            tys = lane_tys[li:li + n]
            vs = vals[li:li + n]
            li += n
            vs = [self.new("r", "selp.u32 {}, 1, 0, {};", v) if t == "bool" else v for t, v in zip(tys, vs)]
            pty = {"f32": "f32", "u32": "u32", "i32": "u32", "bool": "u32"}[tys[0]]
            vec = "" if n == 1 else f".v{n}"
            src = vs[0] if n == 1 else "{" + ", ".join(vs) + "}"
            a = f"[{addr}+{poff}]" if poff else f"[{addr}]"
            self.b.op(f"{'@' + ok + ' ' if ok else ''}st.{space}{vec}.{pty} {a}, {src};")

    def load(self, name: str, index: N.Expr, check: int = -1) -> list[str]:
        space, ok, addr, ty, nc = self.access(name, index, check=check)
        return self.load_mem(space, ok, addr, ty, nc)

    def store(self, name: str, index: N.Expr, vals: list[str], check: int = -1) -> None:
        """`vals` were evaluated first (Rust evaluates an assignment's value before its place)."""
        space, ok, addr, ty, _ = self.access(name, index, check=check)
        self.store_mem(space, ok, addr, ty, vals)

    def uniform_field(self, e: N.Field) -> Optional[list[str]]:
        """`p.f` / `p.a.b` on a Uniform or `buf[i].f` on a struct buffer: load just that field."""
        path = []
        root: N.Expr = e
        while isinstance(root, N.Field):
            path.append(root)
            root = root.value
        if isinstance(root, N.Var) and root.name in self.res:
            ok, addr, nc, space = "1", self.res[root.name]["ptr"], ".nc", "global"
        elif isinstance(root, N.Load) and root.resource in self.res and self.res[root.resource]["kind"] == "buffer":
            space, ok, addr, _, nc = self.access(root.resource, root.index, check=root.check)
        else:
            return None
        off = 0
        ty = root.ty
        for f in reversed(path):
            lay = struct_layout(_decl(self.k, ty))
            fl = next(x for x in lay.fields if x.name == f.name)
            off += fl.offset
            ty = fl.ty
        if ok == "1":
            ok = self.new("p", "setp.eq.u32 {}, 0, 0;")
        return self.load_mem(space, ok, addr, ty, nc, off)

    # ------------------------------------------------------------ collectives

    def collective(self, op: str, ty: str, n: int, vs: list[str], scratch: str, aligned: bool,
                   lids: Optional[list[str]] = None) -> str:
        """The tree over the lanes' values `vs`, lane `lids[c]` holding `vs[c]` (one lane per
        thread: [self.lid]; the lanes entry: the thread's copies, see codegen/ptx/lanes.py)."""
        b = self.b
        kind = SCALAR_KIND[ty]
        st = ty if ty != "i32" else "u32"
        vs = [self.reg_of(v, kind) for v in vs]
        lids = [self.reg_of(x, "r") for x in (lids or [self.lid])]
        arr = self.k.workgroup_array(scratch)
        assert arr is not None  # the verifier checked the name
        size = arr.size
        base = self.new("r", f"mov.u32 {{}}, S_{self.names(scratch)};")
        mys = [self.new("r", "mad.lo.s32 {}, {}, 4, {};", lid, base) for lid in lids]
        ins = [self.lt_u(lid, str(size)) for lid in lids]
        wg = self.k.workgroup_size[0] * self.k.workgroup_size[1] * self.k.workgroup_size[2]
        levels = n.bit_length() - 1
        first = 0
        keeps = list(vs)
        private = scratch in self.private  # lanes.private_scratch: only the tree's own slots matter
        shuffles = aligned and n >= 32 and wg % 32 == 0 and wg >= n
        if shuffles and private and len(vs) > 1:  # the lanes entry's copies share shuffles
            ins, mys, keeps = (list(x) for x in zip(packed_warp_totals(self, op, ty, kind, vs, lids, n, base)))
            first = 5
        elif shuffles:
            # levels 0..4 in registers: lane l combines with lane l + 2^s (lower lane left),
            # and remembers the value the tree would leave in scratch[l]
            for c, (v, lid) in enumerate(zip(vs, lids)):
                acc = v
                in_n = self.lt_u(lid, str(n))
                keeps[c] = keep = self.copy(v)
                for s in range(5):
                    other = self.new(kind, f"shfl.sync.down.b32 {{}}, {{}}, {1 << s}, 31, 0xffffffff;", acc)
                    acc = self.combine(op, ty, acc, other)
                    if private and s < 4:
                        continue
                    low = self.new("r", f"and.b32 {{}}, {{}}, {(2 << s) - 1};", lid)
                    hit = self.pred_and(in_n, self.new("p", "setp.eq.u32 {}, {}, 0;", low))
                    if private:  # the warp totals, in lanes 32j, are all the later levels read
                        ins[c], keeps[c] = hit, acc
                    else:
                        b.op(f"@{hit} {MOV[kind]} {keep}, {acc};")
            first = 5
        for in_scratch, my, keep in zip(ins, mys, keeps):
            b.op(f"@{in_scratch} st.shared.{st} [{my}], {keep};")
        self.barrier(aligned)
        if first and levels > first:
            # levels 5.. combine scratch[32j] with scratch[32j + 2^s]: the same tree over the
            # n/32 warp totals, run by warp 0 with shuffles (one barrier instead of one a level)
            self.warp0_levels(op, ty, n, levels - first, base, private)
            first = levels
            self.barrier(aligned)
        for s in range(first, levels):
            # a level's writes (lanes l % 2^(s+1) == 0) and reads (l + 2^s) are disjoint slots:
            # the copies of the lanes entry may take their turns in any order
            for lid, my in zip(lids, mys):
                low = self.new("r", f"and.b32 {{}}, {{}}, {(2 << s) - 1};", lid)
                hit = self.pred_and(self.lt_u(lid, str(n)), self.new("p", "setp.eq.u32 {}, {}, 0;", low))
                skip = b.label("tree")
                b.op(f"@!{hit} bra {skip};")
                a = self.new(kind, f"ld.shared.{st} {{}}, [{my}];")
                c = self.new(kind, f"ld.shared.{st} {{}}, [{my}+{4 << s}];")
                b.op(f"st.shared.{st} [{my}], {self.combine(op, ty, a, c)};")
                b.place(skip)
            self.barrier(aligned)
        r = self.new(kind, f"ld.shared.{st} {{}}, [{base}];")
        self.barrier(aligned)
        return r

    def warp0_levels(self, op: str, ty: str, n: int, levels: int, base: str, private: bool = False) -> None:
        b = self.b
        kind = SCALAR_KIND[ty]
        st = ty if ty != "i32" else "u32"
        skip = b.label("warp0")
        w0 = self.lt_u(self.lid, "32")
        b.op(f"@!{w0} bra {skip};")
        j = self.lid
        valid = self.lt_u(j, str(n // 32))
        addr = self.new("r", "mad.lo.s32 {}, {}, 128, {};", self.reg_of(j, "r"), base)
        acc = self.b.reg(kind)
        b.op(f"{MOV[kind]} {acc}, {ZERO[kind]};")
        b.op(f"@{valid} ld.shared.{st} {acc}, [{addr}];")
        keep = self.copy(acc)
        for s in range(levels):
            other = self.new(kind, f"shfl.sync.down.b32 {{}}, {{}}, {1 << s}, 31, 0xffffffff;", acc)
            acc = self.combine(op, ty, acc, other)
            if private:
                continue
            low = self.new("r", f"and.b32 {{}}, {{}}, {(2 << s) - 1};", j)
            hit = self.pred_and(valid, self.new("p", "setp.eq.u32 {}, {}, 0;", low))
            b.op(f"@{hit} {MOV[kind]} {keep}, {acc};")
        if private:  # only the total, scratch[0], is read after the tree
            valid, keep = self.new("p", "setp.eq.u32 {}, {}, 0;", self.reg_of(j, "r")), acc
        b.op(f"@{valid} st.shared.{st} [{addr}], {keep};")
        b.place(skip)

    def combine(self, op: str, ty: str, a: str, c: str) -> str:
        if op == "sum":
            return self.new(SCALAR_KIND[ty], "add.rn.f32 {}, {}, {};" if ty == "f32" else "add.s32 {}, {}, {};", a, c)
        if ty == "f32":  # f32::max (ir/rules.py `max_f32`): of equal values the right one, where
            # max.f32 alone would prefer +0 to -0; NaN operands as max.f32 has them (the other)
            m = self.new("f", "max.f32 {}, {}, {};", a, c)
            return self.new("f", "selp.f32 {}, {}, {}, {};", c, m, self.new("p", "setp.eq.f32 {}, {}, {};", a, c))
        t = {"u32": "u32", "i32": "s32"}[ty]
        return self.new(SCALAR_KIND[ty], f"max.{t} {{}}, {{}}, {{}};", a, c)

    def atomic(self, s: N.Atomic) -> None:
        # the arguments in order (index, [compare,] value), then the access and its check
        idx = self.expr(s.index)
        kind = "f" if s.value.ty == "f32" else "r"
        cmp = self.reg_of(self.expr(s.compare)[0], "r") if s.compare is not None else None
        v = self.reg_of(self.expr(s.value)[0], kind)
        space, ok, addr, ty, _ = self.access(s.resource, None, idx, check=s.check)
        op = _ATOM[s.op]
        if s.op == "sub":  # atom has no sub: add the wrapping negation
            v = self.new("r", "sub.u32 {}, 0, {};", v)
        suffix = {"f32": "f32", "i32": "s32", "u32": "u32"}[ty] if op in ("add", "min", "max") else "b32"
        old = self.b.reg(kind)
        self.b.op(f"mov.{'f32' if kind == 'f' else 'b32'} {old}, {'0f00000000' if kind == 'f' else '0'};")
        operands = f"{cmp}, {v}" if cmp is not None else v
        self.b.op(f"{f'@{ok} ' if ok else ''}atom.{space}.{op}.{suffix} {old}, [{addr}], {operands};")
        if s.target is not None:
            self.move(self.local(s.target), [old])

    # ------------------------------------------------------------ expressions

    def expr(self, e: N.Expr) -> list[str]:
        m = getattr(self, "e_" + type(e).__name__)
        return m(e)

    def top_expr(self, e: N.Expr) -> list[str]:
        """A statement's whole value: its rare path may wait for `self.rare.flush`."""
        self.top = id(e)
        try:
            return self.expr(e)
        finally:
            self.top = None

    def defers(self, e: Optional[N.Expr]) -> bool:
        """Whether a statement's whole value `e` may put its rare path out of line: exp, a
        division by a divisor every copy shares (the lanes entry)."""
        if isinstance(e, N.Call):
            return e.func == "exp" and e.ty == "f32"
        return (isinstance(e, N.Binary) and e.op == "div" and e.lhs.ty == e.rhs.ty == "f32" and self.lanes > 1
                and not self.uni.varies(e.rhs))

    def rare_pred(self, p: str) -> str:
        """`p` where this copy really runs the code (its predicate, `&&`/`||` guards)."""
        for c in self.guards + ([self.pred] if self.pred else []):
            p = self.pred_and(p, c)
        return p

    def e_Const(self, e: N.Const) -> list[str]:
        if e.ty == "f32":
            return [PM.fimm(e.value)]
        if e.ty == "bool":
            return [self.new("p", f"setp.eq.u32 {{}}, 0, {0 if e.value else 1};")]
        return [str(e.value)]  # i32 signed, u32 unsigned: in range for the instruction type

    def e_Var(self, e: N.Var) -> list[str]:
        if e.name in self.k.locals or e.name in self.locals:
            return list(self.local(e.name))
        if e.name in self.scalars:
            return [self.scalars[e.name]]
        p = self.k.param(e.name)  # a whole uniform struct
        assert p is not None  # the verifier checked the name
        one = self.new("p", "setp.eq.u32 {}, 0, 0;")
        return self.load_mem("global", one, self.res[e.name]["ptr"], p.ty, ".nc")

    def e_Builtin(self, e: N.Builtin) -> list[str]:
        return list(self.builtin[e.name])

    def e_Load(self, e: N.Load) -> list[str]:
        return self.load(e.resource, e.index, e.check)

    def e_Len(self, e: N.Len) -> list[str]:
        w = self.k.workgroup_array(e.resource)
        if w is not None:
            return [str(w.size)]
        r = self.res[e.resource]
        return [r["layout"][2]] if r["kind"] == "tensor" else [r["len"]]

    def e_TensorRank(self, e: N.TensorRank) -> list[str]:
        return [self.res[e.resource]["layout"][1]]

    def e_TensorDim(self, e: N.TensorDim) -> list[str]:
        lay = self.res[e.resource]["layout"]
        axis = self.expr(e.axis)[0]
        out = "0"  # past the fourth axis (an out-of-range read of the record's extents)
        for a in range(4):
            hit = self.new("p", "setp.eq.u32 {}, {}, {};", self.reg_of(axis, "r"), str(a))
            out = self.new("r", "selp.b32 {}, {}, {}, {};", lay[3 + a], out, hit)
        return [out]

    def e_ImageSize(self, e: N.ImageSize) -> list[str]:
        r = self.res[e.resource]
        return [r["w"] if e.axis == 0 else r["h"]]

    def e_Field(self, e: N.Field) -> list[str]:
        direct = self.uniform_field(e)
        if direct is not None:
            return direct
        vals = self.expr(e.value)
        start, n = _field_slice(self.k, e.value.ty, e.name)
        return vals[start:start + n]

    def e_Swizzle(self, e: N.Swizzle) -> list[str]:
        vals = self.expr(e.value)
        return [vals["xyzw".index(c)] for c in e.lanes]

    def e_Unary(self, e: N.Unary) -> list[str]:
        out = []
        elem = T.elem_of(e.ty)
        for v in self.expr(e.operand):
            if e.op == "neg":
                out.append(self.m.neg(v) if elem == "f32" else self.new("r", "neg.s32 {}, {};", self.reg_of(v, "r")))
            elif elem == "bool":
                out.append(self.new("p", "not.pred {}, {};", v))
            else:
                out.append(self.new("r", "not.b32 {}, {};", self.reg_of(v, "r")))
        return out

    def e_Cast(self, e: N.Cast) -> list[str]:
        v = self.expr(e.value)[0]
        src, dst = e.value.ty, e.ty
        if src == dst or (src in T.INTS and dst in T.INTS):
            return [v]
        if src == "bool":
            return [self.new("r", "selp.u32 {}, 1, 0, {};", v)]
        return [PM.rule(self.m, f"{src}_to_{dst}", v)]  # ir/rules.py: saturating, round to nearest

    def e_Construct(self, e: N.Construct) -> list[str]:
        vals = [v for a in e.args for v in self.expr(a)]
        n = T.vec_len(e.ty)
        return vals * n if len(vals) == 1 and n > 1 else vals

    def e_Select(self, e: N.Select) -> list[str]:
        c = self.reg_of(self.expr(e.cond)[0], "p")
        a, bb = self.expr(e.if_true), self.expr(e.if_false)
        return [self.m.sel(c, x, y) for x, y in zip(a, bb)]

    def e_Binary(self, e: N.Binary) -> list[str]:
        lt, rt = e.lhs.ty, e.rhs.ty
        a = self.expr(e.lhs)
        if e.op in N.LOGICAL and self.checked and _expr_has_check(e.rhs):
            # both operands are evaluated (predicates), but the right one's checks count only
            # where Rust would evaluate it: the left operand true for `&&`, false for `||`
            left = self.reg_of(a[0], "p")
            self.guards.append(left if e.op == "and" else self.new("p", "not.pred {}, {};", left))
            c = self.expr(e.rhs)
            self.guards.pop()
        else:
            c = self.expr(e.rhs)
        if T.is_matrix(lt) and e.op == "mul" and rt != "f32":
            n = T.vec_len(lt)
            if T.is_vector(rt):
                return self.mat_vec(a, c, n)
            return [x for col in range(n) for x in self.mat_vec(a, c[col * n:(col + 1) * n], n)]
        if len(a) == 1 and len(c) > 1:
            a = a * len(c)
        if len(c) == 1 and len(a) > 1:
            c = c * len(a)
        elem = T.elem_of(lt)
        if self.top == id(e) and self.defers(e):  # a divisor every copy shares (codegen/ptx/rare.py)
            x, y = self.reg_of(a[0], "f"), self.reg_of(c[0], "f")
            q, rare = fast_div(self, x, y)
            self.rare.defer(self, self.rare_pred(rare), lambda: self.b.op(f"div.rn.f32 {q}, {x}, {y};"))
            return [q]
        return [self.scalar_binary(e.op, elem, x, y, rhs_const=self.const_u32(e.rhs), check=e.check)
                for x, y in zip(a, c)]

    def mat_vec(self, m: list[str], v: list[str], n: int) -> list[str]:
        out = []
        for r in range(n):
            acc = self.new("f", "mul.rn.f32 {}, {}, {};", m[r], v[0])
            for col in range(1, n):
                t = self.new("f", "mul.rn.f32 {}, {}, {};", m[col * n + r], v[col])
                acc = self.new("f", "add.rn.f32 {}, {}, {};", acc, t)
            out.append(acc)
        return out

    def scalar_binary(self, op: str, ty: str, a: str, c: str, rhs_const: Optional[int] = None,
                      check: int = -1) -> str:
        if ty == "bool":
            if op in ("and", "bitand"):
                return self.new("p", "and.pred {}, {}, {};", a, c)
            if op in ("or", "bitor"):
                return self.new("p", "or.pred {}, {}, {};", a, c)
            x = self.new("p", "xor.pred {}, {}, {};", a, c)
            return x if op in ("ne", "bitxor") else self.new("p", "not.pred {}, {};", x)
        if op in CMP:
            if ty == "f32":
                cmp = "neu" if op == "ne" else CMP[op]
                return self.new("p", f"setp.{cmp}.f32 {{}}, {{}}, {{}};", self.reg_of(a, "f"), c)
            return self.new("p", f"setp.{CMP[op]}.{'s32' if ty == 'i32' else 'u32'} {{}}, {{}}, {{}};",
                            self.reg_of(a, "r"), c)
        if ty == "f32":
            if op == "rem":
                return PM.fmod(self.m, self.reg_of(a, "f"), self.reg_of(c, "f"))
            return self.new("f", f"{op}.rn.f32 {{}}, {{}}, {{}};", a, c)
        s = "s32" if ty == "i32" else "u32"
        a = self.reg_of(a, "r")
        if op in ("add", "sub"):  # wrapping: the same bits for both signednesses
            return self.new("r", f"{op}.{s} {{}}, {{}}, {{}};", a, c)
        if op == "mul":
            return self.new("r", f"mul.lo.{s} {{}}, {{}}, {{}};", a, c)
        if op in ("bitand", "bitor", "bitxor"):
            return self.new("r", f"{op[3:]}.b32 {{}}, {{}}, {{}};", a, c)
        if op in ("shl", "shr"):
            return PM.rule(self.m, f"{op}_{ty}", a, c)
        if op in ("div", "rem"):
            return self.int_divide(op, s, a, c, rhs_const, check)
        raise BackendError(f"PTX emitter: unsupported operator `{op}` on `{ty}`")

    def int_divide(self, op: str, s: str, a: str, c: str, rhs_const: Optional[int], check: int = -1) -> str:
        """ir/rules.py's division and remainder; the trapping check records a zero divisor
        first (the rule then gives 0)."""
        if s == "u32" and rhs_const:  # the rule's unsigned division by a nonzero divisor itself
            return self.new("r", f"{op}.u32 {{}}, {{}}, {{}};", a, c)
        if check >= 0 and not rhs_const:
            self.trap(check, bad=self.new("p", "setp.eq.s32 {}, {}, 0;", self.reg_of(c, "r")))
        return PM.rule(self.m, f"{op}_{'i32' if s == 's32' else 'u32'}", a, c)

    def e_Call(self, e: N.Call) -> list[str]:
        f = e.func
        args = [self.expr(a) for a in e.args]
        elem = T.elem_of(e.args[0].ty)
        if f == "dot":
            return [self.dot(args[0], args[1])]
        if f == "length":
            return [self.new("f", "sqrt.rn.f32 {}, {};", self.dot(args[0], args[0]))]
        n = max(len(a) for a in args)
        args = [a * n if len(a) == 1 else a for a in args]
        if self.top == id(e) and self.defers(e):  # its `when` is its result: out of line
            self.m.defer = lambda p, emit: self.rare.defer(self, self.rare_pred(p), emit)
        try:
            return [self.scalar_call(f, elem, [a[i] for a in args]) for i in range(n)]
        finally:
            self.m.defer = None

    def dot(self, a: list[str], c: list[str]) -> str:
        acc = self.new("f", "mul.rn.f32 {}, {}, {};", a[0], c[0])
        for x, y in zip(a[1:], c[1:]):
            acc = self.new("f", "add.rn.f32 {}, {}, {};", acc, self.new("f", "mul.rn.f32 {}, {}, {};", x, y))
        return acc

    def scalar_call(self, f: str, ty: str, a: list[str]) -> str:
        m = self.m
        t = {"f32": "f32", "u32": "u32", "i32": "s32"}.get(ty, "u32")
        if f in PM.FUNCTIONS:
            return PM.FUNCTIONS[f](m, *[self.reg_of(x, "f") for x in a])
        rule = call_rule(f, ty)
        if rule is not None:  # one rule of ir/rules.py on scalars
            return PM.rule(m, rule, *[self.reg_of(x, "f" if k == "f" else "r") for x, k in zip(a, RULES[rule].args)])
        if f == "abs":
            return a[0] if ty == "u32" else PM.rule(m, f"abs_{ty}", a[0])
        if f in ("floor", "ceil", "trunc"):
            mode = {"floor": "rmi", "ceil": "rpi", "trunc": "rzi"}[f]
            return self.new("f", f"cvt.{mode}.f32.f32 {{}}, {{}};", self.reg_of(a[0], "f"))
        if f == "round":
            return PM.rule(m, "round_f32", a[0])
        if f == "sqrt":
            return self.new("f", "sqrt.rn.f32 {}, {};", self.reg_of(a[0], "f"))
        if f == "fma":
            return self.new("f", "fma.rn.f32 {}, {}, {}, {};", self.reg_of(a[0], "f"), a[1], a[2])
        if ty == "f32" and f in ("min", "max", "clamp"):  # Rust's NaN and signed-zero rules
            return PM.rule(m, f"{f}_f32", *a)
        if f in ("min", "max"):  # integers: exact
            return self.new(SCALAR_KIND[ty], f"{f}.{t} {{}}, {{}}, {{}};", self.reg_of(a[0], SCALAR_KIND[ty]), a[1])
        if f == "clamp":
            k = SCALAR_KIND[ty]
            lo = self.new(k, f"max.{t} {{}}, {{}}, {{}};", self.reg_of(a[0], k), a[1])
            return self.new(k, f"min.{t} {{}}, {{}}, {{}};", lo, a[2])
        if f == "from_bits":
            return self.new("f", "mov.b32 {}, {};", self.reg_of(a[0], "r"))
        if f == "to_bits":
            return self.new("r", "mov.b32 {}, {};", self.reg_of(a[0], "f"))
        raise BackendError(f"PTX emitter: unsupported intrinsic `{f}`")
