"""Tables of the dialect: which names mean what. docs/dialect.md is the prose version."""

from __future__ import annotations

import math
import re
import struct
from fractions import Fraction
from typing import Optional, Union

from goldy_import.ir import types as T
from goldy_import.ir.rules import CALLS

# Paths through which builtins may be named: `gpu::x`, `goldy::gpu::x`.
GPU_PATHS = (("gpu",), ("goldy", "gpu"))

SCALAR_TYPES = {"u32": "u32", "i32": "i32", "f32": "f32", "bool": "bool"}
# Rust types with no lowering, and what to say about them.
UNSUPPORTED_SCALARS = {
    "u8", "u16", "u64", "u128", "i8", "i16", "i64", "i128", "f16", "f64", "char", "str",
}
POINTER_SIZED = {"usize", "isize"}
ALLOCATING_TYPES = {"Vec", "Box", "String", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque"}

# `gpu::float4` and the capitalised spellings of Goldy's access vocabulary (`gpu::Float4`,
# `gpu::UInt4` or `gpu::Uint4`, `gpu::Int4`) name the same types.
VECTOR_TYPES = {
    f"{prefix}{n}": T.vec(elem, n)
    for prefix, elem in (("float", "f32"), ("uint", "u32"), ("int", "i32"),
                         ("Float", "f32"), ("UInt", "u32"), ("Uint", "u32"), ("Int", "i32"))
    for n in (2, 3, 4)
}

# gpu::<Name><T> parameter types and their ABI category.
RESOURCE_TYPES = {
    "BufRO": "read",
    "Scattered": "write",
    "Tensor": "tensor",
    "TensorMut": "tensor_mut",
    "TensorWrite": "tensor_write",
    "Uniform": "uniform",
    "DirectSpatial": "image",
}

ID_BUILTINS = ("global_id", "local_id", "workgroup_id", "num_workgroups", "workgroup_size")
# `atomic_<op>` for each op of ir/nodes.py ATOMIC_OPS
ATOMICS = tuple(f"atomic_{op}" for op in ("add", "sub", "min", "max", "and", "or", "xor", "exchange",
                                          "compare_exchange"))
STATEMENT_BUILTINS = (
    "workgroup_barrier", "workgroup_array", "workgroup_sum", "workgroup_max",
    "workgroup_softmax_in_place",
) + ATOMICS

# Math functions callable as `gpu::f(...)` / `f(...)`: name -> (IR intrinsic, arity).
MATH_FUNCTIONS = {
    "abs": ("abs", 1), "min": ("min", 2), "max": ("max", 2), "floor": ("floor", 1),
    "ceil": ("ceil", 1), "trunc": ("trunc", 1), "round": ("round", 1), "sqrt": ("sqrt", 1),
    "sin": ("sin", 1), "cos": ("cos", 1), "tan": ("tan", 1), "exp": ("exp", 1),
    "exp2": ("exp2", 1), "log": ("log", 1), "log2": ("log2", 1), "pow": ("pow", 2),
    "length": ("length", 1), "dot": ("dot", 2), "clamp": ("clamp", 3), "fma": ("fma", 3),
    "tanh": ("tanh", 1), "atan2": ("atan2", 2), "hypot": ("hypot", 2), "normalize": ("normalize", 1),
    "cross": ("cross", 2),
}

# Methods on scalars and vectors: method name -> (IR intrinsic, number of args besides self).
SCALAR_METHODS = {
    "abs": ("abs", 0), "floor": ("floor", 0), "ceil": ("ceil", 0), "trunc": ("trunc", 0),
    "round": ("round", 0), "sqrt": ("sqrt", 0), "sin": ("sin", 0), "cos": ("cos", 0),
    "tan": ("tan", 0), "exp": ("exp", 0), "exp2": ("exp2", 0), "ln": ("log", 0),
    "log2": ("log2", 0), "powf": ("pow", 1), "max": ("max", 1), "min": ("min", 1),
    "clamp": ("clamp", 2), "mul_add": ("fma", 2), "to_bits": ("to_bits", 0),
    "length": ("length", 0), "dot": ("dot", 1),
    "tanh": ("tanh", 0), "atan2": ("atan2", 1), "hypot": ("hypot", 1), "signum": ("signum", 0),
    "is_nan": ("is_nan", 0), "is_finite": ("is_finite", 0), "is_infinite": ("is_infinite", 0),
    "count_ones": ("count_ones", 0), "leading_zeros": ("leading_zeros", 0),
    "trailing_zeros": ("trailing_zeros", 0), "rotate_left": ("rotate_left", 1),
    "rotate_right": ("rotate_right", 1), "wrapping_add": ("wrapping_add", 1),
    "wrapping_sub": ("wrapping_sub", 1), "wrapping_mul": ("wrapping_mul", 1),
    "normalize": ("normalize", 0), "cross": ("cross", 1),
}
# Intrinsics lowered by importer/lower_operations.py rather than as one plain call
WRAPPING = {"wrapping_add": "add", "wrapping_sub": "sub", "wrapping_mul": "mul"}
RULE_CALL_TYPES = {f: tuple(t for g, t in CALLS if g == f) for f, _ in CALLS}   # ir/rules.py
OPERATIONS = frozenset(WRAPPING) | frozenset(RULE_CALL_TYPES) | {"normalize", "cross"}
# Arguments whose type is fixed whatever the others' (position, counting a receiver): Rust's
# rotation amounts are `u32`.
FIXED_ARG_TYPES = {"rotate_left": {1: "u32"}, "rotate_right": {1: "u32"}}
# Intrinsics defined only on f32 (and f32 vectors).
FLOAT_ONLY = {
    "floor", "ceil", "trunc", "round", "sqrt", "sin", "cos", "tan", "exp", "exp2", "log",
    "log2", "pow", "fma", "to_bits", "length", "dot", "tanh", "atan2", "hypot",
}
ITERATOR_METHODS = {
    "iter", "iter_mut", "into_iter", "map", "filter", "fold", "sum", "zip", "enumerate",
    "collect", "for_each", "rev", "step_by", "chunks", "windows", "take", "skip",
}
PANICKING_METHODS = {"unwrap", "expect", "unwrap_or", "unwrap_unchecked"}
PANIC_MACROS = {"panic", "unreachable", "todo", "unimplemented", "assert", "assert_eq",
                "assert_ne", "debug_assert", "debug_assert_eq"}


_F32_MAX_BITS = 0x7F7FFFFF
_F32_INF_BITS = 0x7F800000


def _f32_bits_value(bits: int) -> Fraction:
    if bits == _F32_INF_BITS:
        return Fraction(2) ** 128  # where rounding to infinity begins, for the tie rule
    return Fraction(struct.unpack("<f", struct.pack("<I", bits))[0])


def _f32_via_f64(text: str) -> Optional[float]:
    """decimal -> f64 -> f32, when that is provably the single rounding: the f64 is not
    exactly halfway between two normal f32s (only then can double rounding go wrong)."""
    try:
        v = float(text)
    except ValueError:
        return None
    if not (1.1754943508222875e-38 <= abs(v) <= 1.7014118346046923e38):  # 2^-126 .. 2^127
        return 0.0 if v == 0 else None
    if struct.unpack("<Q", struct.pack("<d", v))[0] & 0x1FFFFFFF == 0x10000000:
        return None
    return struct.unpack("<f", struct.pack("<f", v))[0]


_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?)(\d+))?")
_KEPT_DIGITS = 200  # f32 halfway points have at most ~115 significant digits: the rest only decides "above"


def _bounded_decimal(text: str) -> Union[Fraction, float, None]:
    """Decimal text as a Fraction small enough to compute with, or its f32 outright when
    the exponent alone decides it (1e9999999999: infinity, None; 1e-9999999999: zero). The
    exact value of such a literal would have billions of digits: classify before any arithmetic."""
    m = _DECIMAL.fullmatch(text)
    if m is None:
        return Fraction(text)
    sign, whole, frac, esign, edigits = m.groups()
    frac = frac or ""
    digits = (whole + frac).lstrip("0")
    zero = -0.0 if sign == "-" else 0.0
    if not digits:
        return zero
    edigits = (edigits or "0").lstrip("0") or "0"
    if len(edigits) > 12:  # beyond any digit string a file can hold: the sign decides
        return zero if esign == "-" else None
    exp = (-1 if esign == "-" else 1) * int(edigits) - len(frac)  # value = int(digits) * 10**exp
    lead = exp + len(digits) - 1  # 10**lead <= |value| < 10**(lead + 1)
    if lead > 38:  # >= 1e39 > f32::MAX rounded up
        return None
    if lead < -46:  # < 1e-46, under half the smallest subnormal (2^-150, 7.0e-46)
        return zero
    if len(digits) > _KEPT_DIGITS:  # keep a sticky digit for what is dropped
        tail = digits[_KEPT_DIGITS:]
        exp += len(tail) - 1
        digits = digits[:_KEPT_DIGITS] + ("1" if tail.strip("0") else "0")
    q = Fraction(int(digits)) * Fraction(10) ** exp
    return -q if sign == "-" else q


_NEAREST: dict[str, Optional[float]] = {}  # literal text -> its f32: a kernel repeats its literals
_NEAREST_MAX = 4096
_MISS = object()


def f32_nearest(q: Union[Fraction, int, str]) -> Optional[float]:
    """The f32 nearest to the exact value `q` (ties to even), as Rust rounds a literal;
    None if it rounds to infinity. Rounding the exact value once avoids the double
    rounding of decimal -> f64 -> f32."""
    if isinstance(q, str):
        hit = _NEAREST.get(q, _MISS)
        if hit is _MISS:
            hit = _f32_nearest(q)
            if len(_NEAREST) < _NEAREST_MAX:
                _NEAREST[q] = hit
        return hit
    return _f32_nearest(q)


def _f32_nearest(q: Union[Fraction, int, str]) -> Optional[float]:
    if isinstance(q, str):
        fast = _f32_via_f64(q)
        if fast is not None:
            return fast
        q = _bounded_decimal(q)
        if not isinstance(q, Fraction):
            return q
    q = Fraction(q)
    if q == 0:
        return 0.0
    mag = abs(q)
    try:
        approx = min(float(mag), 3.4028234663852886e38)
    except OverflowError:
        return None
    bits = struct.unpack("<I", struct.pack("<f", approx))[0]
    cands = [b for b in (bits - 1, bits, bits + 1) if 0 <= b <= _F32_INF_BITS]
    best = min(cands, key=lambda b: (abs(_f32_bits_value(b) - mag), b & 1))
    if best == _F32_INF_BITS:
        return None
    v = struct.unpack("<f", struct.pack("<I", best))[0]
    return -v if q < 0 else v


# `T::CONST` and `std::f32::consts::X` constants: (type, value).
ASSOCIATED_CONSTS = {
    ("u32", "MAX"): ("u32", 2**32 - 1), ("u32", "MIN"): ("u32", 0),
    ("i32", "MAX"): ("i32", 2**31 - 1), ("i32", "MIN"): ("i32", -(2**31)),
    ("f32", "MAX"): ("f32", 3.4028234663852886e38),
    ("f32", "MIN"): ("f32", -3.4028234663852886e38),
    ("f32", "MIN_POSITIVE"): ("f32", 1.1754943508222875e-38),
    ("f32", "EPSILON"): ("f32", 1.1920928955078125e-07),
    ("f32", "INFINITY"): ("f32", math.inf), ("f32", "NEG_INFINITY"): ("f32", -math.inf),
    ("f32", "NAN"): ("f32", math.nan),
}
# The decimal expansions Rust's `core::f32::consts` are written with, rounded once to f32.
FLOAT_CONSTS = {
    name: f32_nearest(text) for name, text in {
        "PI": "3.14159265358979323846264338327950288",
        "TAU": "6.28318530717958647692528676655900577",
        "E": "2.71828182845904523536028747135266250",
        "LN_2": "0.693147180559945309417232121458176568",
        "LN_10": "2.30258509299404568401799145468436421",
        "SQRT_2": "1.41421356237309504880168872420969808",
        "FRAC_PI_2": "1.57079632679489661923132169163975144",
        "FRAC_PI_4": "0.785398163397448309615660845819875721",
        "FRAC_1_SQRT_2": "0.707106781186547524400844362104849039",
        "LOG2_E": "1.44269504088896340735992468100189214",
    }.items()
}

# Rust operator token -> IR binary op.
BINARY_OPERATORS = {
    "+": "add", "-": "sub", "*": "mul", "/": "div", "%": "rem",
    "&": "bitand", "|": "bitor", "^": "bitxor", "<<": "shl", ">>": "shr",
    "==": "eq", "!=": "ne", "<": "lt", "<=": "le", ">": "gt", ">=": "ge",
    "&&": "and", "||": "or",
}
COMPOUND_OPERATORS = {op + "=": ir for op, ir in BINARY_OPERATORS.items()
                      if ir not in ("eq", "ne", "lt", "le", "gt", "ge", "and", "or")}
OP_SYMBOL = {ir: op for op, ir in BINARY_OPERATORS.items()}

SWIZZLE_LETTERS = "xyzw"
