"""The kernel ABI: how each target receives a kernel's parameters and its error word.

`plan(kernel, target)` says it once, for the emitter that prints it and the runtime that
fills it; both read the plan instead of re-deriving the layout. It is a pure function of
the verified (and, with checks on, check-inserted) kernel and the target name.

What each parameter contributes, by category (the *roles* of its words):

    &[T], &mut [T], Scattered<T>   buffer, off (element offset of element 0), len (logical length)
    Tensor*<T>                     buffer (the parent), layout (12 u32: off, rank, numel,
                                   d0..d3, s0..s3, flags; runtime/tensor.py), blen (parent length)
    DirectSpatial<E>               buffer (row-major texels), width, height
    u32 / i32 / f32 / bool scalar  scalar (its value; bool as u32 0/1)
    Uniform<S>                     uniform (the struct's bytes, ir.layout)

Where each target puts them:

- WGSL (`WgslPlan`), all in bind group 0: one storage binding per buffer, tensor and image
  in parameter order (read_write where the kernel writes it or uses `atomic_add` on it);
  then one uniform block holding, in this order, every Uniform<S> struct (16-aligned, size
  rounded to 16), every tensor's layout record (`array<vec4<u32>, 3>`), then u32 words:
  each buffer's off and len, each tensor's blen, each image's width and height, every
  scalar; then, where the module pins float operations, three runtime zero words. The
  block's size rounds up to 16 bytes. Lengths are explicit rather than arrayLength,
  because a binding may start before the buffer's first element or extend past its end.
  A kernel with an error word binds it last, after the uniform block.
- PTX (`PtxPlan`): `.param`s in IR order, each aligned to its own size: buffers `.u64`
  pointer to element `off` and `.u32` len; scalars `.u32/.s32/.f32/.u32`; tensors `.u64`
  pointer, `.b8[48]` layout by value, `.u32` blen; uniforms a `.u64` pointer to the
  struct's bytes; images `.u64` pointer, `.u32` width, `.u32` height. Then `.u64 p_faults`
  (the error word's address) where the kernel has one, then, in the batched entry only,
  `.u32 p_groups_x`.
- Slang (`SlangPlan`): one global `ParameterBlock<_GoldyArgs> _goldy_args` with one field
  per parameter, in order (resources as goldy_abi.slang structs: `_buf, _off, _len`;
  `_buf, _blen, _layout`; `_buf, _w, _h`; uniforms as a one-element StructuredBuffer),
  then `uint3 _goldy_nwg`, then `GoldyFaults _goldy_faults {_w, _off}` where the kernel
  has an error word. The canonical function takes the same parameters, then the
  builtins it uses, then the error word.

The error word (`ERROR_WORD`): FAULT_WORDS u32 per dispatch, present only when the kernel
has trapping-check sites (`ir.checks.check_sites`). `decode_fault` turns one into a
`FaultReport`, the same way on every backend.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Optional, Sequence, Union, overload

from . import layout as L
from . import nodes as N
from . import types as T
from .info import kernel_info

# ---------------------------------------------------------------- the error word


@dataclass(frozen=True)
class ErrorWord:
    """Layout of a dispatch's error word: `fields[i]` is (name, meaning) of u32 i."""

    fields: tuple[tuple[str, str], ...]

    @property
    def words(self) -> int:
        return len(self.fields)

    def index(self, name: str) -> int:
        return [f for f, _ in self.fields].index(name)


ERROR_WORD = ErrorWord((
    ("flag", "1 once a check failed; the first failure of the dispatch claims it (0 -> 1)"),
    ("site", "the failed check's site id (ir.checks.check_sites)"),
    ("index", "the offending index (x of a texel)"),
    ("length", "the extent it was checked against (an image's width; 0 for a division by zero)"),
    ("index_y", "y of a texel (image sites only)"),
    ("", "spare"), ("", "spare"), ("", "spare"),
))
FAULT_WORDS = ERROR_WORD.words  # u32 per dispatch


@dataclass
class FaultReport:
    """A failed trapping check (ir/checks.py), reported by `Backend.submit`.

    `dispatch` is the index of the dispatch in the submitted list, `site` the check's site
    id in `Dispatch.kernel` (`ir.checks.check_sites`), `index` one offending index (for a
    2-D image coordinate: x, with `index_y` the y) and `length` the extent it was checked
    against (0 for a division by zero). The core turns it into a KernelFault naming the
    kernel, the Rust file:line:col, the parameter, the index and the length."""

    dispatch: int
    site: int
    index: int = 0
    length: int = 0
    index_y: Optional[int] = None


def decode_fault(words: Sequence[int], dispatch: int, texel_sites: frozenset = frozenset()) -> Optional[FaultReport]:
    """The FaultReport one error word (ERROR_WORD layout) holds, None while its flag is 0.
    `texel_sites`: the kernel's sites on an image coordinate, the only ones with a y."""
    if not words[0]:
        return None
    site = int(words[1])
    return FaultReport(dispatch=dispatch, site=site, index=int(words[2]), length=int(words[3]),
                       index_y=int(words[4]) if site in texel_sites else None)


def decode_faults(words: Sequence[int], stride: int, slots: Sequence[tuple[int, "AbiPlan"]]) -> Optional[list[FaultReport]]:
    """The reports of consecutive error words `stride` u32 apart: slot n is dispatch
    `slots[n][0]`, a kernel with plan `slots[n][1]`. None when no flag is set."""
    out = []
    for n, (dispatch, abi) in enumerate(slots):
        f = abi.decode_fault(words[n * stride:n * stride + FAULT_WORDS], dispatch)
        if f is not None:
            out.append(f)
    return out or None


def has_error_word(kernel: N.Kernel) -> bool:
    """Whether the kernel takes an error word: some node still carries a trapping-check site.
    Without one it has no error-word parameter, binding or traffic at all."""
    return kernel_info(kernel).has_checks


def atomic_resources(kernel: N.Kernel) -> frozenset:
    """Names of the resources (buffers, workgroup arrays) the kernel applies atomics to."""
    return kernel_info(kernel).atomic


# ---------------------------------------------------------------- what each parameter contributes

ROLES = {
    "read": ("buffer", "off", "len"), "read_write": ("buffer", "off", "len"), "write": ("buffer", "off", "len"),
    "tensor": ("buffer", "layout", "blen"), "tensor_mut": ("buffer", "layout", "blen"),
    "tensor_write": ("buffer", "layout", "blen"),
    "image": ("buffer", "width", "height"),
    "scalar": ("scalar",),
    "uniform": ("uniform",),
}
# The field of the runtime's bound argument (runtime/backend.py) that carries each role.
ARG_FIELD = {"buffer": "handle", "off": "offset", "len": "length", "layout": "layout", "blen": "buffer_length",
             "width": "width", "height": "height", "scalar": "value", "uniform": "data"}
# The 12 u32 of a tensor's layout record, in order (runtime/tensor.py builds it).
TENSOR_LAYOUT = ("off", "rank", "numel", "d0", "d1", "d2", "d3", "s0", "s1", "s2", "s3", "flags")
LAYOUT_BYTES = 4 * len(TENSOR_LAYOUT)


def element_stride(ty: str, structs: dict[str, N.StructDecl]) -> int:
    """Bytes per element of a buffer of `ty` on the device (bool as u32; ir.layout)."""
    if T.is_struct(ty):
        return L.struct_layout(structs[T.struct_name(ty)]).stride
    if ty == "bool":
        return 4
    return L.round_up(L.size_of(ty), L.align_of(ty))


@dataclass(frozen=True)
class AbiPlan:
    """What every target shares: the error word (None: the kernel has no check sites) and
    the sites whose fault carries a y (image coordinates)."""

    kernel: str
    target: str
    error_word: Optional[ErrorWord]
    texel_sites: frozenset

    @property
    def checked(self) -> bool:
        return self.error_word is not None

    def decode_fault(self, words: Sequence[int], dispatch: int) -> Optional[FaultReport]:
        return decode_fault(words, dispatch, self.texel_sites)


# ---------------------------------------------------------------- WGSL


@dataclass(frozen=True)
class WgslBinding:
    binding: int
    param: int  # index into kernel.params
    writable: bool  # the kernel writes it or uses atomics on it (the runtime may force more)
    atomic: bool  # declared `array<atomic<T>>`
    stride: int  # bytes per element


@dataclass(frozen=True)
class UniformWord:
    """One member of the uniform block."""

    role: str  # "uniform" | "layout" | "off" | "len" | "blen" | "width" | "height" | "scalar" | "zero"
    param: int  # -1 for a zero word
    ty: str  # IR type ("u32" for metadata words)
    offset: int  # bytes
    size: int


@dataclass(frozen=True)
class UniformBlock:
    fields: tuple[UniformWord, ...]
    binding: Optional[int]  # None: no uniform block
    size: int  # bytes, a multiple of 16
    fault_binding: Optional[int]  # the error word's binding, after the block


@dataclass(frozen=True)
class WgslPlan(AbiPlan):
    bindings: tuple[WgslBinding, ...]
    words: tuple[UniformWord, ...]  # the parameters' members of the uniform block
    zeros: tuple[UniformWord, ...]  # three runtime zero words after them (float pins)
    blocks: tuple[UniformBlock, UniformBlock]  # without and with the zero words

    def block(self, pins: bool) -> UniformBlock:
        """The uniform block (and the error word's binding) of a module that does (or does
        not) pin float operations with the zero words."""
        return self.blocks[pins]


def _wgsl(kernel: N.Kernel, base: dict) -> WgslPlan:
    structs = {s.name: s for s in kernel.structs}
    atomic = atomic_resources(kernel)
    bindings: list[WgslBinding] = []
    for i, p in enumerate(kernel.params):
        if p.category not in ("scalar", "uniform"):
            bindings.append(WgslBinding(len(bindings), i, p.category in N.WRITABLE_CATEGORIES or p.name in atomic,
                                        p.name in atomic, element_stride(p.ty, structs)))
    words: list[UniformWord] = []
    off = 0
    for i, p in enumerate(kernel.params):  # 16-aligned members first, so the u32s pack densely
        if p.category == "uniform":
            size = L.round_up(element_stride(p.ty, structs), 16)
            words.append(UniformWord("uniform", i, p.ty, off, size))
            off += size
    for i, p in enumerate(kernel.params):
        if p.category in N.TENSOR_CATEGORIES:
            words.append(UniformWord("layout", i, "u32", off, LAYOUT_BYTES))
            off += LAYOUT_BYTES
    for i, p in enumerate(kernel.params):
        for role in ROLES[p.category]:
            if role not in ("buffer", "layout", "uniform"):
                words.append(UniformWord(role, i, p.ty if role == "scalar" else "u32", off, 4))
                off += 4
    zeros = tuple(UniformWord("zero", -1, "u32", off + 4 * j, 4) for j in range(3))
    checked = base["error_word"] is not None

    def block(fields: tuple[UniformWord, ...]) -> UniformBlock:
        ubinding = len(bindings) if fields else None
        end = fields[-1].offset + fields[-1].size if fields else 0
        fb = len(bindings) + (ubinding is not None) if checked else None
        return UniformBlock(fields, ubinding, L.round_up(max(end, 4), 16), fb)

    plain = tuple(words)
    return WgslPlan(**base, bindings=tuple(bindings), words=plain, zeros=zeros,
                    blocks=(block(plain), block(plain + zeros)))


# ---------------------------------------------------------------- PTX

FAULT_PARAM = "p_faults"
GROUPS_PARAM = "p_groups_x"
_PTX_SCALAR = {"u32": ".u32", "i32": ".s32", "f32": ".f32", "bool": ".u32"}
_PTX_SUFFIX = {"buffer": "_ptr", "uniform": "_ptr", "len": "_len", "layout": "_layout", "blen": "_buflen",
               "width": "_width", "height": "_height", "scalar": ""}


@dataclass(frozen=True)
class PtxParam:
    """One `.param` of the entry: `.param {align}{ty} {name}{[array]}`."""

    param: int  # IR parameter, -1 for the error word and the batched entry's group count
    role: str  # a ROLES role ("buffer" is the pointer to element `off`), "faults" or "groups_x"
    suffix: str  # the name is `p<param>_<rust name><suffix>`, or `suffix` itself where param < 0
    ty: str  # ".u64" | ".u32" | ".s32" | ".f32" | ".b8"
    size: int  # bytes; the value is aligned to its own size (4 for the layout record)
    array: int = 0  # element count of a `.b8` array

    @property
    def align(self) -> int:
        return 8 if self.size == 8 else 4


@dataclass(frozen=True)
class PtxPlan(AbiPlan):
    params: tuple[PtxParam, ...]  # the kernel's parameters' .params, in order
    slots: tuple[int, ...]  # index of each IR parameter's first .param
    fault_param: Optional[PtxParam]  # after them, where the kernel has an error word
    groups_param: PtxParam  # last, in the batched entry only

    def entry(self, batched: bool) -> tuple[PtxParam, ...]:
        """Every .param of the plain or batched entry, in order."""
        extra = (self.fault_param,) if self.fault_param is not None else ()
        return self.params + extra + ((self.groups_param,) if batched else ())


def _ptx(kernel: N.Kernel, base: dict) -> PtxPlan:
    params: list[PtxParam] = []
    slots = []
    for i, p in enumerate(kernel.params):
        slots.append(len(params))
        for role in ROLES[p.category]:
            if role == "off":
                continue  # folded into the pointer
            sfx = _PTX_SUFFIX[role]
            if role in ("buffer", "uniform"):
                params.append(PtxParam(i, role, sfx, ".u64", 8))
            elif role == "layout":
                params.append(PtxParam(i, role, sfx, ".b8", LAYOUT_BYTES, LAYOUT_BYTES))
            elif role == "scalar":
                params.append(PtxParam(i, role, sfx, _PTX_SCALAR[p.ty], 4))
            else:
                params.append(PtxParam(i, role, sfx, ".u32", 4))
    faults = PtxParam(-1, "faults", FAULT_PARAM, ".u64", 8) if base["error_word"] is not None else None
    return PtxPlan(**base, params=tuple(params), slots=tuple(slots), fault_param=faults,
                   groups_param=PtxParam(-1, "groups_x", GROUPS_PARAM, ".u32", 4))


# ---------------------------------------------------------------- Slang

ARGS_BLOCK = "_goldy_args"
NWG_FIELD = "_goldy_nwg"
FAULTS = "_goldy_faults"
FAULTS_TYPE = "GoldyFaults"
# goldy_abi.slang's members of each resource struct, per role
_SLANG_MEMBER = {"buffer": "_buf", "off": "_off", "len": "_len", "layout": "_layout", "blen": "_blen",
                 "width": "_w", "height": "_h"}
FAULTS_MEMBERS = (("_w", "buffer"), ("_off", "slot"))  # the error buffer and the slot's first word
_SLANG_TENSOR = ("buffer", "blen", "layout")  # goldy_abi.slang declares the parent length first


@dataclass(frozen=True)
class SlangField:
    """One field of the `_goldy_args` block."""

    param: int  # IR parameter; -1 for `_goldy_nwg` and the error word
    role: str  # "resource" (a goldy_abi struct) | "scalar" | "uniform" | "nwg" | "faults"
    members: tuple[tuple[str, str], ...] = ()  # (goldy_abi.slang member, role) of a struct field


@dataclass(frozen=True)
class SlangPlan(AbiPlan):
    fields: tuple[SlangField, ...]  # in block order: parameters, `_goldy_nwg`, the error word


def _slang(kernel: N.Kernel, base: dict) -> SlangPlan:
    fields = []
    for i, p in enumerate(kernel.params):
        roles = _SLANG_TENSOR if p.category in N.TENSOR_CATEGORIES else ROLES[p.category]
        if roles[0] == "buffer":
            fields.append(SlangField(i, "resource", tuple((_SLANG_MEMBER[r], r) for r in roles)))
        else:
            fields.append(SlangField(i, roles[0]))
    fields.append(SlangField(-1, "nwg"))
    if base["error_word"] is not None:
        fields.append(SlangField(-1, "faults", FAULTS_MEMBERS))
    return SlangPlan(**base, fields=tuple(fields))


# ---------------------------------------------------------------- the plan

Target = Literal["wgsl", "ptx", "slang"]
_BUILD = {"wgsl": _wgsl, "ptx": _ptx, "slang": _slang}


@overload
def plan(kernel: N.Kernel, target: Literal["wgsl"]) -> WgslPlan: ...
@overload
def plan(kernel: N.Kernel, target: Literal["ptx"]) -> PtxPlan: ...
@overload
def plan(kernel: N.Kernel, target: Literal["slang"]) -> SlangPlan: ...
@overload
def plan(kernel: N.Kernel, target: str) -> AbiPlan: ...


def plan(kernel: N.Kernel, target: str) -> Union[WgslPlan, PtxPlan, SlangPlan, AbiPlan]:
    """The ABI of `kernel` on `target` ("wgsl", "ptx" or "slang")."""
    if target not in _BUILD:
        raise ValueError(f"no ABI plan for target {target!r} (wgsl, ptx or slang)")
    info = kernel_info(kernel)
    base = dict(kernel=kernel.name, target=target, error_word=ERROR_WORD if info.has_checks else None,
                texel_sites=info.texel_sites)
    return _BUILD[target](kernel, base)
