"""Tables of the dialect: which names mean what. docs/dialect.md is the prose version."""

from __future__ import annotations

import math

import numpy as np

from goldy_import.ir import types as T

# Paths through which builtins may be named: `gpu::x`, `goldy::gpu::x`.
GPU_PATHS = (("gpu",), ("goldy", "gpu"))

SCALAR_TYPES = {"u32": "u32", "i32": "i32", "f32": "f32", "bool": "bool"}
# Rust types with no lowering, and what to say about them.
UNSUPPORTED_SCALARS = {
    "u8", "u16", "u64", "u128", "i8", "i16", "i64", "i128", "f16", "f64", "char", "str",
}
POINTER_SIZED = {"usize", "isize"}
ALLOCATING_TYPES = {"Vec", "Box", "String", "Rc", "Arc", "HashMap", "BTreeMap", "VecDeque"}

VECTOR_TYPES = {
    f"{prefix}{n}": T.vec(elem, n)
    for prefix, elem in (("float", "f32"), ("uint", "u32"), ("int", "i32"))
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
STATEMENT_BUILTINS = (
    "workgroup_barrier", "workgroup_array", "workgroup_sum", "workgroup_max",
    "workgroup_softmax_in_place", "atomic_add",
)

# Math functions callable as `gpu::f(...)` / `f(...)`: name -> (IR intrinsic, arity).
MATH_FUNCTIONS = {
    "abs": ("abs", 1), "min": ("min", 2), "max": ("max", 2), "floor": ("floor", 1),
    "ceil": ("ceil", 1), "trunc": ("trunc", 1), "round": ("round", 1), "sqrt": ("sqrt", 1),
    "sin": ("sin", 1), "cos": ("cos", 1), "tan": ("tan", 1), "exp": ("exp", 1),
    "exp2": ("exp2", 1), "log": ("log", 1), "log2": ("log2", 1), "pow": ("pow", 2),
    "length": ("length", 1), "dot": ("dot", 2), "clamp": ("clamp", 3), "fma": ("fma", 3),
}

# Methods on scalars and vectors: method name -> (IR intrinsic, number of args besides self).
SCALAR_METHODS = {
    "abs": ("abs", 0), "floor": ("floor", 0), "ceil": ("ceil", 0), "trunc": ("trunc", 0),
    "round": ("round", 0), "sqrt": ("sqrt", 0), "sin": ("sin", 0), "cos": ("cos", 0),
    "tan": ("tan", 0), "exp": ("exp", 0), "exp2": ("exp2", 0), "ln": ("log", 0),
    "log2": ("log2", 0), "powf": ("pow", 1), "max": ("max", 1), "min": ("min", 1),
    "clamp": ("clamp", 2), "mul_add": ("fma", 2), "to_bits": ("to_bits", 0),
    "length": ("length", 0), "dot": ("dot", 1),
}
# Intrinsics defined only on f32 (and f32 vectors).
FLOAT_ONLY = {
    "floor", "ceil", "trunc", "round", "sqrt", "sin", "cos", "tan", "exp", "exp2", "log",
    "log2", "pow", "fma", "to_bits", "length", "dot",
}
ITERATOR_METHODS = {
    "iter", "iter_mut", "into_iter", "map", "filter", "fold", "sum", "zip", "enumerate",
    "collect", "for_each", "rev", "step_by", "chunks", "windows", "take", "skip",
}
PANICKING_METHODS = {"unwrap", "expect", "unwrap_or", "unwrap_unchecked"}
PANIC_MACROS = {"panic", "unreachable", "todo", "unimplemented", "assert", "assert_eq",
                "assert_ne", "debug_assert", "debug_assert_eq"}


def _f32(x: float) -> float:
    return float(np.float32(x))


# `T::CONST` and `std::f32::consts::X` constants: (type, value).
ASSOCIATED_CONSTS = {
    ("u32", "MAX"): ("u32", 2**32 - 1), ("u32", "MIN"): ("u32", 0),
    ("i32", "MAX"): ("i32", 2**31 - 1), ("i32", "MIN"): ("i32", -(2**31)),
    ("f32", "MAX"): ("f32", _f32(3.4028234663852886e38)),
    ("f32", "MIN"): ("f32", _f32(-3.4028234663852886e38)),
    ("f32", "MIN_POSITIVE"): ("f32", _f32(1.1754943508222875e-38)),
    ("f32", "EPSILON"): ("f32", _f32(1.1920928955078125e-07)),
    ("f32", "INFINITY"): ("f32", math.inf), ("f32", "NEG_INFINITY"): ("f32", -math.inf),
}
FLOAT_CONSTS = {
    "PI": math.pi, "E": math.e, "TAU": math.tau, "LN_2": math.log(2), "LN_10": math.log(10),
    "SQRT_2": math.sqrt(2), "FRAC_PI_2": math.pi / 2, "FRAC_PI_4": math.pi / 4,
    "FRAC_1_SQRT_2": 1 / math.sqrt(2), "LOG2_E": math.log2(math.e),
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
