"""The kernels of `rust_examples/` with inputs and numpy references: shared by the demo
(`make demo`) and the test suite, so what the demo shows is what the tests check."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

Args = list[Any]


@dataclass
class Example:
    file: str  # under rust_examples/
    kernel: str
    inputs: Callable[[np.random.Generator, int], Args]  # fresh random arguments of a given size
    grid: Callable[[Args], tuple]  # ("over_1d", n) | ("over_2d", w, h) | ("groups", (x, y, z))
    reference: Callable[[Args], list[Optional[np.ndarray]]]  # expected final buffers (None: unchecked)
    rtol: float = 0.0
    atol: float = 0.0
    size: int = 1 << 16  # default problem size for the demo


def _f32(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.standard_normal(n).astype(np.float32)


def _saxpy_ref(a: Args) -> list:
    x, y, alpha = a
    return [None, (np.float32(alpha) * x + y).astype(np.float32), None]


def _hash_ref(a: Args) -> list:
    inp, _out, seed = a
    with np.errstate(over="ignore"):
        h = inp ^ np.uint32(seed)
        h ^= h >> np.uint32(16)
        h = (h * np.uint32(0x7FEB352D)).astype(np.uint32)
        h ^= h >> np.uint32(15)
        h = (h * np.uint32(0x846CA68B)).astype(np.uint32)
        h ^= h >> np.uint32(16)
    return [None, h, None]


def _transpose_inputs(rng: np.random.Generator, n: int) -> Args:
    rows = max(1, int(np.sqrt(n)) - 3)
    cols = max(1, n // rows)
    return [_f32(rng, rows * cols), np.zeros(rows * cols, np.float32), rows, cols]


def _transpose_ref(a: Args) -> list:
    m, _o, rows, cols = a
    return [None, m.reshape(rows, cols).T.reshape(-1).copy(), None, None]


def _laplacian_inputs(rng: np.random.Generator, n: int) -> Args:
    w = max(3, int(np.sqrt(n)) + 5)
    h = max(3, n // w)
    return [_f32(rng, w * h), _f32(rng, w * h), w, h]


def _laplacian_ref(a: Args) -> list:
    g, _o, w, h = a
    grid = g.reshape(h, w)
    out = grid.copy()
    inner = (grid[1:-1, :-2] + grid[1:-1, 2:]) + grid[:-2, 1:-1]
    inner = inner + grid[2:, 1:-1]
    out[1:-1, 1:-1] = inner - np.float32(4.0) * grid[1:-1, 1:-1]
    return [None, out.reshape(-1), None, None]


PARTICLE_DTYPE = np.dtype([("position", "<f4", (3,)), ("velocity", "<f4", (3,)), ("mass", "<f4")])


def _particles_inputs(rng: np.random.Generator, n: int) -> Args:
    p = np.zeros(n, PARTICLE_DTYPE)
    p["position"] = rng.standard_normal((n, 3))
    p["velocity"] = rng.standard_normal((n, 3))
    p["mass"] = rng.uniform(0.5, 2.0, n)
    return [p, _f32(rng, n), _f32(rng, n)]


def _particles_ref(a: Args) -> list:
    p = a[0]
    v = p["velocity"].astype(np.float32)
    vv = (v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]) + v[:, 2] * v[:, 2]
    energy = (np.float32(0.5) * p["mass"]).astype(np.float32) * vv
    x = p["position"].astype(np.float32)
    xx = (x[:, 0] * x[:, 0] + x[:, 1] * x[:, 1]) + x[:, 2] * x[:, 2]
    return [None, energy.astype(np.float32), np.sqrt(xx).astype(np.float32)]


def _tree(values: np.ndarray, op: Callable) -> np.ndarray:
    """The dialect's pairwise tree over the last axis (lane l with l + 2^s)."""
    v = values.astype(np.float32).copy()
    s = 1
    while s < v.shape[-1]:
        v[..., ::2 * s] = op(v[..., ::2 * s], v[..., s::2 * s])
        s *= 2
    return v[..., 0]


def _blocks(x: np.ndarray, width: int, fill: float) -> np.ndarray:
    groups = -(-len(x) // width)
    padded = np.full(groups * width, fill, np.float32)
    padded[: len(x)] = x
    return padded.reshape(groups, width)


def _halving_tree(block: np.ndarray) -> np.ndarray:
    v = block.copy()
    stride = v.shape[-1] // 2
    while stride > 0:
        v[..., :stride] = v[..., :stride] + v[..., stride:2 * stride]
        stride //= 2
    return v[..., 0]


def _block_sum_inputs(rng: np.random.Generator, n: int) -> Args:
    return [_f32(rng, n), np.zeros(-(-n // 256), np.float32)]


def _block_sum_ref(a: Args) -> list:
    return [None, _halving_tree(_blocks(a[0], 256, 0.0))]


def _sum_max_inputs(rng: np.random.Generator, n: int) -> Args:
    g = -(-n // 256)
    return [_f32(rng, n), np.zeros(g, np.float32), np.zeros(g, np.float32)]


def _sum_max_ref(a: Args) -> list:
    return [None, _tree(_blocks(a[0], 256, 0.0), np.add), _tree(_blocks(a[0], 256, -np.inf), np.fmax)]


def _softmax_inputs(rng: np.random.Generator, n: int) -> Args:
    cols = 200
    rows = max(1, n // cols)
    return [_f32(rng, rows * cols) * np.float32(4.0), cols]


def softmax_reference(x: np.ndarray, cols: int, width: int = 256) -> np.ndarray:
    """Row softmax computed with the collectives' tree order (max, then exp, then sum)."""
    rows = x.reshape(-1, cols)
    pad_max = np.full((rows.shape[0], width), np.float32(-1e30), np.float32)
    pad_max[:, :cols] = rows
    m = _tree(pad_max, np.fmax)
    e = np.exp((rows - m[:, None]).astype(np.float32)).astype(np.float32)
    pad_sum = np.zeros((rows.shape[0], width), np.float32)
    pad_sum[:, :cols] = e
    s = _tree(pad_sum, np.add)
    return (e / s[:, None]).astype(np.float32).reshape(-1)


def _softmax_ref(a: Args) -> list:
    return [softmax_reference(a[0], a[1]), None]


def _hist_inputs(rng: np.random.Generator, n: int) -> Args:
    return [rng.integers(0, 256, n).astype(np.uint32), np.zeros(64, np.uint32)]


def _hist_ref(a: Args) -> list:
    return [None, np.bincount(a[0] % 64, minlength=64).astype(np.uint32)]


def _collatz_inputs(rng: np.random.Generator, n: int) -> Args:
    return [rng.integers(0, 100000, n).astype(np.uint32), np.zeros(n, np.uint32), 300]


def _collatz_ref(a: Args) -> list:
    starts, _s, limit = a
    out = np.zeros(len(starts), np.uint32)
    n = starts.astype(np.uint64).copy()
    active = n > 1
    count = np.zeros(len(starts), np.uint64)
    while active.any():
        even = (n % 2 == 0) & active
        odd = active & ~even
        n[even] //= 2
        n[odd] = (3 * n[odd] + 1) & 0xFFFFFFFF
        count[active] += 1
        active = active & (n != 1) & (count < limit)
    out[:] = count
    return [None, out, None]


def _rmsnorm_inputs(rng: np.random.Generator, n: int) -> Args:
    dim = 300
    rows = max(1, n // dim)
    x = rng.standard_normal((rows, dim)).astype(np.float32)
    w = rng.uniform(0.5, 1.5, dim).astype(np.float32)
    return [x, w, np.zeros((rows, dim), np.float32), 1e-5]


def _rmsnorm_ref(a: Args) -> list:
    x, w, _o, eps = a
    rows, dim = x.shape
    lanes = np.zeros((rows, 256), np.float32)
    for c in range(dim):  # lane c % 256 accumulates columns c, c + 256, ... in order
        lanes[:, c % 256] += x[:, c] * x[:, c]
    total = _tree(lanes, np.add)
    inv = np.float32(1.0) / np.sqrt((total / np.float32(dim) + np.float32(eps)).astype(np.float32))
    return [None, None, ((x * inv[:, None]) * w[None, :]).astype(np.float32), None]


def _tiled_transpose_inputs(rng: np.random.Generator, n: int) -> Args:
    rows = max(1, int(np.sqrt(n)) - 5)  # not multiples of the 16 x 16 tile
    cols = max(1, n // rows + 3)
    return [_f32(rng, rows * cols), np.zeros(rows * cols, np.float32), rows, cols]


def _tiles(cols: int, rows: int) -> tuple:
    return ("groups", (-(-cols // 16), -(-rows // 16), 1))


def matmul_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b in rust_examples/matmul.rs's order: acc = acc + a[r, p] * b[p, c] for p = 0, 1, ...,
    the product and the sum each rounded to f32 (numpy's float32 operations round the same)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        acc = acc + np.multiply.outer(a[:, p], b[p, :])
    return acc


def _matmul_inputs(rng: np.random.Generator, n: int) -> Args:
    m = max(1, int(np.sqrt(n)) - 7)  # sizes off the 16 x 16 tile on every axis
    cols = max(1, n // m + 5)
    k = max(1, int(np.sqrt(n)) // 2 + 3)
    return [_f32(rng, m * k), _f32(rng, k * cols), np.zeros(m * cols, np.float32), m, cols, k]


def _matmul_ref(a: Args) -> list:
    x, y, _c, m, n, k = a
    return [None, None, matmul_reference(x.reshape(m, k), y.reshape(k, n)).reshape(-1), None, None, None]



def _poot_add_inputs(rng: np.random.Generator, n: int) -> Args:
    return [_f32(rng, n), _f32(rng, n), np.full(n, np.nan, np.float32)]


def _poot_add_ref(a: Args) -> list:
    return [None, None, (a[0] + a[1]).astype(np.float32)]


def _scale_bias_inputs(rng: np.random.Generator, n: int) -> Args:
    meta = np.array([rng.normal(), rng.normal()], np.float32).view(np.uint32)
    return [_f32(rng, n), meta, np.full(n, np.nan, np.float32)]


def _scale_bias_ref(a: Args) -> list:
    scale, bias = a[1].view(np.float32)
    return [None, None, ((a[0] * scale).astype(np.float32) + bias).astype(np.float32)]


def _poly_inputs(rng: np.random.Generator, n: int) -> Args:
    cols = max(1, int(np.sqrt(n)) + 3)  # not a multiple of the 64-lane workgroup
    rows = max(1, n // cols)
    x = rng.uniform(-1.5, 1.5, rows * cols).astype(np.float32)
    return [x, _f32(rng, 5), np.full(rows * cols, np.nan, np.float32), cols]


def _poly_ref(a: Args) -> list:
    x, coeffs, _out, _n = a
    acc = np.zeros_like(x)
    power = np.ones_like(x)
    for c in coeffs:  # the kernel's order: acc + c * power, then power * x, each rounded
        acc = (acc + (c * power).astype(np.float32)).astype(np.float32)
        power = (power * x).astype(np.float32)
    return [None, None, acc, None]


def _poly_grid(a: Args) -> tuple:
    cols = a[3]
    return ("groups", (-(-cols // 64), len(a[0]) // cols, 1))


def _wg_reduce_inputs(rng: np.random.Generator, n: int) -> Args:
    return [_f32(rng, n), np.full(-(-n // 64), np.nan, np.float32)]


def _wg_reduce_ref(a: Args) -> list:
    blocks = _blocks(a[0], 64, 0.0)
    acc = np.zeros(blocks.shape[0], np.float32)
    for j in range(64):  # lane 0 adds the slots left to right
        acc = (acc + blocks[:, j]).astype(np.float32)
    return [None, acc]


def _bucket_inputs(rng: np.random.Generator, n: int) -> Args:
    return [rng.uniform(-0.1, 1.1, n).astype(np.float32), np.zeros(16, np.uint32)]


def _bucket_ref(a: Args) -> list:
    xs, counts = a
    b = np.clip(np.floor((xs * np.float32(len(counts))).astype(np.float32)), 0, len(counts) - 1)
    return [None, np.bincount(b.astype(np.int64), minlength=len(counts)).astype(np.uint32)]

EXAMPLES: list[Example] = [
    Example("saxpy.rs", "saxpy", lambda r, n: [_f32(r, n), _f32(r, n), float(np.float32(r.normal()))],
            lambda a: ("over_1d", len(a[1])), _saxpy_ref, size=1 << 20),
    Example("map_u32.rs", "hash_u32",
            lambda r, n: [r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32), np.zeros(n, np.uint32),
                          int(r.integers(0, 2**32))],
            lambda a: ("over_1d", len(a[1])), _hash_ref, size=1 << 20),
    Example("transpose.rs", "transpose", _transpose_inputs, lambda a: ("over_2d", a[3], a[2]), _transpose_ref),
    Example("tiled_transpose.rs", "tiled_transpose", _tiled_transpose_inputs, lambda a: _tiles(a[3], a[2]),
            _transpose_ref),
    Example("matmul.rs", "matmul", _matmul_inputs, lambda a: _tiles(a[4], a[3]), _matmul_ref, size=1 << 14),
    Example("transpose.rs", "laplacian", _laplacian_inputs, lambda a: ("over_2d", a[2], a[3]), _laplacian_ref),
    Example("particles.rs", "particle_stats", _particles_inputs, lambda a: ("over_1d", len(a[0])), _particles_ref),
    Example("reduce_manual.rs", "block_sum", _block_sum_inputs, lambda a: ("over_1d", len(a[0])), _block_sum_ref),
    Example("collectives.rs", "group_sum_max", _sum_max_inputs, lambda a: ("over_1d", len(a[0])), _sum_max_ref),
    Example("softmax.rs", "row_softmax", _softmax_inputs, lambda a: ("groups", (len(a[0]) // a[1], 1, 1)),
            _softmax_ref, rtol=2e-6, atol=1e-7),
    Example("histogram.rs", "histogram", _hist_inputs, lambda a: ("over_1d", len(a[0])), _hist_ref),
    Example("rmsnorm.rs", "rmsnorm", _rmsnorm_inputs, lambda a: ("groups", (a[0].shape[0], 1, 1)), _rmsnorm_ref,
            rtol=1e-6, atol=1e-7, size=1 << 16),
    Example("collatz.rs", "collatz_steps", _collatz_inputs, lambda a: ("over_1d", len(a[0])), _collatz_ref,
            size=1 << 14),
    # poot's `#[kernel]` dialect (docs/dialect.md, "poot kernels")
    Example("poot_elementwise.rs", "elementwise_add", _poot_add_inputs, lambda a: ("over_1d", len(a[0])),
            _poot_add_ref, size=1 << 20),
    Example("poot_elementwise.rs", "scale_bias", _scale_bias_inputs, lambda a: ("over_1d", len(a[0])),
            _scale_bias_ref, size=1 << 20),
    Example("poot_elementwise.rs", "poly_rows", _poly_inputs, _poly_grid, _poly_ref),
    Example("poot_reduce.rs", "wg_reduce", _wg_reduce_inputs, lambda a: ("over_1d", len(a[0])), _wg_reduce_ref),
    Example("poot_reduce.rs", "bucket_count", _bucket_inputs, lambda a: ("over_1d", len(a[0])), _bucket_ref),
]


# ---------------------------------------------------------------- multi-stage examples


@dataclass
class Pipeline:
    """Several kernels of one file run in order over named buffers: the demo runs them
    unfused (one dispatch each) and as one FusedKernel (runtime/fusion.py)."""

    file: str  # under rust_examples/
    name: str
    inputs: Callable[[np.random.Generator, int], dict]  # name -> array (a buffer) or scalar
    stages: list[tuple[str, list[str]]]  # (kernel, argument names) in order
    reference: Callable[[dict], dict]  # name -> expected final contents
    rtol: float = 0.0
    atol: float = 0.0
    size: int = 1 << 20


def _mlp_inputs(rng: np.random.Generator, n: int) -> dict:
    return {"gate": _f32(rng, n) * np.float32(3), "up": _f32(rng, n), "residual": _f32(rng, n),
            "h": np.zeros(n, np.float32), "y": np.zeros(n, np.float32), "n": n,
            "alpha": float(np.float32(rng.uniform(0.5, 2.0))), "limit": 1.5}


def _mlp_ref(d: dict) -> dict:
    f = np.float32
    with np.errstate(over="ignore"):
        g = d["gate"]
        h = (g / (f(1) + np.exp(-g)) * d["up"]).astype(np.float32)
    y = (d["residual"] + f(d["alpha"]) * h).astype(np.float32)
    return {"h": h, "y": np.clip(y, -f(d["limit"]), f(d["limit"]))}


PIPELINES: list[Pipeline] = [
    Pipeline("gated_mlp.rs", "gated_mlp", _mlp_inputs,
             [("swiglu", ["gate", "up", "h", "n"]), ("residual_add", ["h", "residual", "y", "n", "alpha"]),
              ("clamp_inplace", ["y", "n", "limit"])],
             _mlp_ref, rtol=2e-6, atol=1e-6),
]
