"""One namer for every target: Rust identifiers -> target identifiers.

Any Rust identifier is a valid kernel name on every target (docs/dialect.md). Each target
declares, in one `Target` below, what a user name must not be: its keywords, reserved words
and built-ins, the prefixes of the names the emitter generates (`gi_`, `_goldy`, ...), and
an emitter may add, per name, the parameters and locals of generated helpers that see
that name (WGSL's per-resource helpers). A `Namer` maps one scope's user names injectively and
deterministically: a name that is already safe keeps its spelling (binding names in
messages and the Slang runtime's by-name binding rely on it); any other one is made ASCII
(`größe` -> `gr_uf6__udf_e`: each non-ASCII character as `_u<hex>_`), prefixed with the
target's `lead` letter where it starts with a generated prefix or `_`-reserved form, and
suffixed with `_` until it is safe and unused.
"""

from __future__ import annotations

import keyword
import re
import unicodedata
from dataclasses import dataclass
from typing import Iterable, Mapping, Optional, Sequence, Union

from goldy_import.ir import nodes as N

__all__ = ["Target", "Namer", "WGSL", "SLANG", "PTX", "PYTHON", "CPU", "ascii_ident", "ascii_text", "kernel_namer",
           "field_namer"]

_ASCII_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_NOT_IDENT_CHAR = re.compile(r"[^A-Za-z0-9_]")


def ascii_ident(name: str) -> str:
    """`name` with each non-ASCII character written `_u<hex>_` (`π` -> `_u3c0_`); ASCII
    names are returned unchanged. Injective on its own; the Namer resolves the rare clash
    with a user name spelled that way."""
    return "".join(c if c.isascii() else f"_u{ord(c):x}_" for c in name)


def ascii_text(text: str) -> str:
    """Free text (comments) with each non-ASCII character as `\\u{hex}`, for targets
    whose assembler rejects any non-ASCII byte (ptxas does, comments included)."""
    return text if text.isascii() else "".join(c if c.isascii() else f"\\u{{{ord(c):x}}}" for c in text)


@dataclass(frozen=True)
class Target:
    """What user names must avoid on one target."""

    name: str
    reserved: frozenset  # keywords, reserved words, built-ins and fixed generated names
    prefixes: tuple = ()  # prefixes of generated names
    lead: str = "u"  # written before a name that starts with a generated prefix
    ascii: bool = True  # False: any Python identifier that NFKC leaves unchanged

    def safe(self, name: str, avoid: frozenset = frozenset()) -> bool:
        if self.ascii:
            if not _ASCII_IDENT.match(name):
                return False
        elif not name.isidentifier() or unicodedata.normalize("NFKC", name) != name:
            return False
        if name in self.reserved or name in avoid:
            return False
        return not name.startswith(self.prefixes)


Entry = Union[str, tuple]  # a name, or (key, name, spellings this name alone must avoid)


class Namer:
    """User names of one scope -> distinct safe names of `target`.

    `entries` are names or `(key, name, avoid)` triples (the key tells apart a struct and a
    value spelled alike, as Rust's two namespaces allow; `avoid` are spellings unsafe for
    this name only; `avoid` of the Namer: spellings no name may take). Safe names keep
    their spelling, the first of equal spellings winning; the rest are then renamed in
    order, so the result depends only on the entries: the same kernel gives the same text."""

    def __init__(self, target: Target, entries: Iterable[Entry], avoid: Iterable[str] = ()):
        self.target = target
        items = [(e, e, frozenset()) if isinstance(e, str) else (e[0], e[1], frozenset(e[2])) for e in entries]
        self.map: dict = {}
        taken = set(avoid)
        for key, name, avoid_one in items:
            if key not in self.map and name not in taken and target.safe(name, avoid_one):
                self.map[key] = name
                taken.add(name)
        for key, name, avoid_one in items:
            if key in self.map:
                continue
            out = self._escape(name)
            while out in taken or not target.safe(out, avoid_one):
                out += "_"
            self.map[key] = out
            taken.add(out)

    def _escape(self, name: str) -> str:
        t = self.target
        if t.ascii or not name.isidentifier() or unicodedata.normalize("NFKC", name) != name:
            name = ascii_ident(name)
        # what no suffix can make safe (a raw `r#loop` that reached here, a leading digit)
        name = _NOT_IDENT_CHAR.sub(lambda m: f"_u{ord(m.group()):x}_", name)
        if not name or name[0].isdigit():
            name = (t.lead or "u") + name
        if t.prefixes and name.startswith(t.prefixes):
            name = t.lead + name
        return name

    def __call__(self, key: str) -> str:
        return self.map[key]

    def get(self, key: str, default: Optional[str] = None) -> Optional[str]:
        return self.map.get(key, default)

    def struct(self, name: str) -> str:
        return self.map["struct:" + name]

    def values(self) -> list[str]:
        return list(self.map.values())


def kernel_namer(kernel: N.Kernel, target: Target, avoid: Optional[Mapping[str, Iterable[str]]] = None) -> Namer:
    """The one scope of a kernel's user names: structs (keys `struct:<name>`), parameters,
    workgroup arrays, locals and the kernel itself (key `kernel:<name>`). `avoid`: key ->
    spellings unsafe for that name alone."""
    keys = ([("struct:" + s.name, s.name) for s in kernel.structs] + [(p.name, p.name) for p in kernel.params]
            + [(w.name, w.name) for w in kernel.workgroup_arrays] + [(n, n) for n in kernel.locals]
            + [("kernel:" + kernel.name, kernel.name)])
    extra = avoid or {}
    return Namer(target, [(key, name, extra.get(key, ())) for key, name in keys])


def field_namer(decl: N.StructDecl, target: Target) -> Namer:
    """A struct's field names (their own scope)."""
    return Namer(target, [f.name for f in decl.fields])


def _words(text: str) -> frozenset:
    return frozenset(text.split())


# ---------------------------------------------------------------- WGSL

_WGSL_KEYWORDS = """alias break case const const_assert continue continuing default diagnostic discard else
enable false fn for if let loop override requires return struct switch true var while"""
_WGSL_RESERVED = """NULL Self abstract active alignas alignof as asm asm_fragment async attribute auto await
become binding_array cast catch class co_await co_return co_yield coherent column_major common compile
compile_fragment concept const_cast consteval constexpr constinit crate debugger decltype delete demote
demote_to_helper do dynamic_cast enum explicit export extends extern external fallthrough filter final
finally friend from fxgroup get goto groupshared highp impl implements import inline instanceof interface
layout lowp macro macro_rules match mediump meta mod module move mut noexcept noinline nointerpolation
noperspective null nullptr of operator package packoffset partition pass patch pixelfragment precise
precision premerge priv protected pub public readonly ref regardless register reinterpret_cast require
resource restrict self set shared sizeof smooth snorm static static_assert static_cast std subroutine
super target template this thread_local throw trait try type typedef typeid typename typeof union unless
unorm unsafe unsized use using varying virtual volatile wgsl where with writeonly yield
namespace new nil"""  # the last three: naga reserves them too (found by probing it)
# Predeclared types and built-in functions: shadowing them would break generated code.
_WGSL_PREDECLARED = """bool f16 f32 i32 u32 vec2 vec3 vec4 mat2x2 mat2x3 mat2x4 mat3x2 mat3x3 mat3x4 mat4x2 mat4x3
mat4x4 array atomic ptr sampler sampler_comparison texture_1d texture_2d texture_2d_array texture_3d
texture_cube texture_cube_array texture_multisampled_2d texture_storage_1d texture_storage_2d
texture_storage_2d_array texture_storage_3d texture_depth_2d vec2f vec3f vec4f vec2i vec3i vec4i vec2u
vec3u vec4u vec2h vec3h vec4h mat2x2f mat3x3f mat4x4f read write read_write function private workgroup
uniform storage bitcast all any select arrayLength abs acos acosh asin asinh atan atanh atan2 ceil clamp
cos cosh countLeadingZeros countOneBits countTrailingZeros cross degrees determinant distance dot exp exp2
extractBits faceForward firstLeadingBit firstTrailingBit floor fma fract frexp insertBits inverseSqrt
ldexp length log log2 max min mix modf normalize pow quantizeToF16 radians reflect refract reverseBits
round saturate sign sin sinh smoothstep sqrt step tan tanh transpose trunc atomicLoad atomicStore
atomicAdd workgroupBarrier storageBarrier textureBarrier workgroupUniformLoad main
atomicCompareExchangeWeak atomicSub atomicMax atomicMin atomicAnd atomicOr atomicXor atomicExchange"""

WGSL = Target("wgsl", _words(_WGSL_KEYWORDS) | _words(_WGSL_RESERVED) | _words(_WGSL_PREDECLARED),
              prefixes=("gi_", "__"), lead="u")

# ---------------------------------------------------------------- Slang

_SLANG_KEYWORDS = """
operator template typename friend virtual explicit mutable
break case cbuffer tbuffer class const continue default discard do else enum extern false
for if in inout out interface let var namespace return static struct switch this This true
typedef typealias uniform while import module public private internal export extension
associatedtype where property subscript groupshared precise nointerpolation noperspective
linear centroid sample shared volatile register packoffset sizeof alignof new delete throw
try catch throws func as is none void bool int uint float double half dword vector matrix
row_major column_major snorm unorm globallycoherent inline override using implementing
dyn some functype __subscript __init __generic __target_switch __intrinsic_asm
__exported __include spirv_asm asm goto defer lambda mutating nonmutating ref
""".split()
_SLANG_TYPES = [f"{b}{n}" for b in ("float", "int", "uint", "bool", "half", "double", "min16float",
                                    "min16int", "min16uint", "vec", "ivec", "uvec", "bvec", "dvec", "mat")
                for n in ("", "1", "2", "3", "4")]
_SLANG_TYPES += [f"{b}{r}x{c}" for b in ("float", "int", "uint", "bool", "half", "double", "mat")
                 for r in "1234" for c in "1234"]
_SLANG_TYPES += """Buffer RWBuffer StructuredBuffer RWStructuredBuffer ByteAddressBuffer
RWByteAddressBuffer ConstantBuffer ParameterBlock Texture1D Texture2D Texture3D TextureCube
RWTexture1D RWTexture2D RWTexture3D SamplerState SamplerComparisonState Ptr Optional Tuple
Array String NativeString int8_t int16_t int32_t int64_t uint8_t uint16_t uint32_t uint64_t
float16_t float32_t float64_t size_t intptr_t uintptr_t""".split()
# Functions the printer emits by name (a local of the same name would shadow them).
_SLANG_INTRINSICS = """abs floor ceil trunc round sqrt sin cos tan exp exp2 log log2 pow min max fma
asfloat asuint asint GroupMemoryBarrierWithGroupSync""".split()
# The ABI module's public names (codegen/goldy_abi.slang; a test keeps the list complete).
SLANG_ABI_NAMES = """goldy_compute goldy_computeAttribute ThreadId GroupThreadId GroupId GroupCount
Uniform BufRO BufRW Scattered Tensor TensorMut TensorWrite DirectSpatial GoldyTensorLayout
GoldyMat2 GoldyMat3 GoldyMat4 mat_mul mat_scale mat_add mat_sub atomic_add wrapping_add
wrapping_sub wrapping_mul wrapping_neg wrapping_abs wrapping_shl wrapping_shr rust_div
rust_rem rust_min rust_max rust_clamp rust_round rust_f32_to_i32 rust_f32_to_u32 rust_dot
rust_length cs_main goldy_abi GoldyFaults atomic_add_checked rust_div_checked
rust_rem_checked rust_fadd rust_fsub rust_neg rust_abs rust_i32_to_f32 rust_u32_to_f32 rust_lt rust_gt rust_le
rust_ge rust_eq rust_ne""".split()

SLANG = Target("slang", frozenset(_SLANG_KEYWORDS + _SLANG_TYPES + _SLANG_INTRINSICS + SLANG_ABI_NAMES),
               prefixes=("_goldy", "_Goldy", "__", "gl_", "SV_", "SLANG_", "_pad"), lead="r")

# ---------------------------------------------------------------- PTX

# User names appear as `p<i>_<name>...` parameters, `S_<name>` shared arrays and the bare
# entry name; ptxas takes any ASCII identifier there except its predefined constant.
PTX = Target("ptx", frozenset({"WARP_SZ"}))

# ---------------------------------------------------------------- Python

# The launch module (codegen/pymodule.py adds the names its methods already take).
PYTHON = Target("python", frozenset(keyword.kwlist) | frozenset(keyword.softkwlist), lead="", ascii=False)
# The CPU oracle's generated source: every user name is prefixed there (`p_`, `v_`, ...),
# so only ASCII-ness matters (Python's NFKC folding would merge `ﬁ` and `fi`).
CPU = Target("cpu", frozenset(), lead="")


def reserved_words(target: Target) -> Sequence[str]:
    """Everything `target` forbids as a user name, sorted (for tests and docs)."""
    return sorted(target.reserved)
