"""The CPU backend against numpy / pure-Python references of docs/semantics.md.

Most tests drive runtime.cpu.CpuBackend through the backend contract (alloc, write,
compile, record, submit, read) with kernels from tests/data/cpu_semantics.rs; a few go
through the public API. Where chunking matters the test runs with tiny chunks too.
"""

from __future__ import annotations

import math
import os
from fractions import Fraction

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.cpu import rt
from goldy_import.codegen.cpu import compile_cpu, emit_cpu
from goldy_import.importer import import_file
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime import cpu as C
from goldy_import.runtime.backend import (BufferArg, CompileOptions, Dispatch, ImageArg, ScalarArg, TensorArg,
                                          UniformArg)
from goldy_import.runtime.dtypes import struct_gpu_dtype

HERE = os.path.dirname(__file__)
MODULE = import_file(os.path.join(HERE, "data", "cpu_semantics.rs"))
assert MODULE.ok, MODULE.render()
M32 = 0xFFFFFFFF
RNG = np.random.default_rng(1234)


class Harness:
    """Backend-contract plumbing: upload arrays, run one dispatch, read results."""

    ELEM = {np.dtype(np.float32): "f32", np.dtype(np.uint32): "u32", np.dtype(np.int32): "i32"}

    def __init__(self, chunk_threads: int = C.CHUNK_THREADS):
        self.be = C.CpuBackend(chunk_threads)

    def upload(self, arr: np.ndarray):
        arr = np.ascontiguousarray(arr)
        h = self.be.alloc(max(arr.nbytes, 4))
        self.be.write(h, 0, memoryview(arr.reshape(-1)).cast("B"))
        return h

    def buf(self, arr: np.ndarray, elem: str = None) -> BufferArg:
        return BufferArg(self.upload(arr), 0, len(arr), elem or self.ELEM[arr.dtype], arr.dtype.itemsize)

    def read(self, a, dtype, n: int = None, offset: int = 0) -> np.ndarray:
        h = a.handle
        nbytes = (a.length * a.stride) if n is None else n * np.dtype(dtype).itemsize
        return np.frombuffer(self.be.read(h, offset, nbytes), dtype).copy()

    def run(self, name: str, args: list, groups: tuple) -> Dispatch:
        k = MODULE.kernel(name)
        d = Dispatch(k, self.be.compile(k, CompileOptions(checks=False)), args, groups, name)
        self.be.record(d)
        assert self.be.submit([d]) is None
        return d

    def run_checked(self, name: str, args: list, groups: tuple):
        """With trapping checks (ir/checks.py): (fault reports, {site id: Site})."""
        k = insert_checks(MODULE.kernel(name))
        d = Dispatch(k, self.be.compile(k, CompileOptions(checks=True)), args, groups, name)
        self.be.record(d)
        return self.be.submit([d]), {s.id: s for s in check_sites(k)}


@pytest.fixture(params=[C.CHUNK_THREADS, 64], ids=["chunk-default", "chunk-64"])
def h(request) -> Harness:
    return Harness(request.param)


def groups_1d(n: int, wg: int) -> tuple:
    return (max(1, -(-n // wg)), 1, 1)


def f32(x) -> np.float32:
    return np.float32(x)


# ---------------------------------------------------------------- basics


def test_saxpy_exact(h):
    n = 1000
    x = RNG.standard_normal(n).astype(np.float32)
    y = RNG.standard_normal(n).astype(np.float32)
    xb, yb = h.buf(x), h.buf(y)
    h.run("saxpy", [xb, yb, ScalarArg("f32", 1.5)], groups_1d(n, 64))
    np.testing.assert_array_equal(h.read(yb, np.float32), np.float32(1.5) * x + y)


def test_integer_semantics():
    h = Harness()
    mn, mx = -2**31, 2**31 - 1
    pairs = [(7, 2), (-7, 2), (7, -2), (-7, -2), (5, 0), (-5, 0), (mn, -1), (mn, 1), (mx, 1), (mx, mx),
             (mn, mn), (123456789, 987), (-1, 31), (1, 32), (1, 33), (-8, -1), (3, -29), (0, 0)]
    pairs += [(int(a), int(b)) for a, b in RNG.integers(mn, mx, size=(40, 2), endpoint=True)]
    a = np.array([p[0] for p in pairs], np.int32)
    b = np.array([p[1] for p in pairs], np.int32)
    n = len(pairs)
    oi, ou = h.buf(np.zeros(10 * n, np.int32)), h.buf(np.zeros(10 * n, np.uint32))
    h.run("int_ops", [h.buf(a), h.buf(b), oi, ou], groups_1d(n, 64))
    got_i, got_u = h.read(oi, np.int32), h.read(ou, np.uint32)

    def wi(v):
        v &= M32
        return v - 2**32 if v >= 2**31 else v

    def tdiv(x, y):
        if y == 0:
            return 0
        q = abs(x) // abs(y)
        return q if (x < 0) == (y < 0) else -q

    for k, (x, y) in enumerate(pairs):
        ux, uy = x & M32, y & M32
        want_i = [wi(x + y), wi(x - y), wi(x * y), wi(tdiv(x, y)), wi(x - y * tdiv(x, y)) if y else 0,
                  wi(x << (y & 31)), x >> (uy & 31), wi(-x), wi(abs(x)), wi(min(x, y) + max(x, y) * 3)]
        want_u = [(ux + uy) & M32, (ux - uy) & M32, (ux * uy) & M32, ux // uy if uy else 0,
                  ux % uy if uy else 0, (ux << (y & 31)) & M32, ux >> (uy & 31), ~ux & M32,
                  (ux & uy) | (ux ^ 0xF0F0), min(max(ux, 10), 1000)]
        assert list(got_i[10 * k:10 * k + 10]) == want_i, (x, y)
        assert list(got_u[10 * k:10 * k + 10]) == want_u, (x, y)


def test_casts():
    h = Harness()
    fs = np.array([0.0, -0.0, 1.9, -1.9, 2.5, -2.5, 3e9, -3e9, 5e9, 2147483520.0, 2147483648.0,
                   4294967040.0, 4294967296.0, np.inf, -np.inf, np.nan, 1e-30, -0.99], np.float32)
    ns = np.array([0, 1, -1, 16777217, -16777217, 2**31 - 1, -2**31, 33554435, 7, 8, 9, 10, 11, 12, 13, 14,
                   -123456789, 2**24 + 3], np.int32)
    n = len(fs)
    ti, tu, tf = h.buf(np.zeros(n, np.int32)), h.buf(np.zeros(n, np.uint32)), h.buf(np.zeros(2 * n, np.float32))
    h.run("casts", [h.buf(fs), h.buf(ns), ti, tu, tf], groups_1d(n, 64))

    def sat(x, lo, hi):
        if math.isnan(x):
            return 0
        if math.isinf(x):
            return hi if x > 0 else lo
        return min(max(math.trunc(x), lo), hi)

    assert list(h.read(ti, np.int32)) == [sat(float(x), -2**31, 2**31 - 1) for x in fs]
    assert list(h.read(tu, np.uint32)) == [sat(float(x), 0, M32) for x in fs]
    want_f = np.empty(2 * n, np.float32)
    want_f[0::2] = [np.float32(int(v)) for v in ns]          # int -> f32: nearest even
    want_f[1::2] = [np.float32(int(v) & M32) for v in ns]
    np.testing.assert_array_equal(h.read(tf, np.float32), want_f)


def _rust_round(x: float) -> float:
    if math.isnan(x) or math.isinf(x):
        return x
    return math.copysign(math.floor(abs(x) + 0.5), x)  # exact in f64 for any f32 x


def _rust_min(x, y):
    return y if math.isnan(x) else x if math.isnan(y) else min(x, y)


def _rust_max(x, y):
    return y if math.isnan(x) else x if math.isnan(y) else max(x, y)


def _rust_clamp(x, lo, hi):
    """f32::clamp as Rust writes it: a NaN x stays NaN (issue 13)."""
    x = lo if x < lo else x
    return hi if x > hi else x


def test_float_semantics():
    h = Harness()
    xs = [0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 0.49999997, -0.49999997, 8388607.5, -8388607.5, 1e20, 3.7,
          -3.7, np.nan, 4.0, np.inf, -np.inf, 7.25, -7.25, 0.0]
    ys = [2.0, np.nan, 0.25, 1.0, -2.0, np.nan, 3.0, 3.0, 2.0, 0.75, 3.0, -1.0, 2.0, 1.0, np.nan, 2.0, 5.0,
          0.0, 2.5, 1.0]
    a, b = np.array(xs, np.float32), np.array(ys, np.float32)
    n = len(xs)
    out = h.buf(np.zeros(12 * n, np.float32))
    h.run("float_ops", [h.buf(a), h.buf(b), out], groups_1d(n, 64))
    got = h.read(out, np.float32).reshape(n, 12)
    with np.errstate(all="ignore"):
        quotient = a / b
    for k in range(n):
        x, y = float(a[k]), float(b[k])
        want = [_rust_round(x), _rust_min(x, y), _rust_max(x, y), _rust_clamp(x, -1.0, 1.0),
                math.floor(x) if math.isfinite(x) else x, math.ceil(x) if math.isfinite(x) else x,
                math.trunc(x) if math.isfinite(x) else x, abs(x),
                math.fmod(x, y) if math.isfinite(x) and y != 0 and not math.isnan(y) else math.nan,
                float(quotient[k]), -x, -x]
        np.testing.assert_array_equal(got[k], np.array(want, np.float32), err_msg=f"x={x} y={y}")
    # the sign bit is all negation and to_bits/from_bits touch
    assert np.signbit(got[19, 10]) and np.signbit(got[19, 11])


def test_transcendentals_within_tolerance():
    h = Harness()
    a = np.concatenate([RNG.uniform(-100, 100, 200), [0.5, -1.0, 1.0, 3.14159, 88.0]]).astype(np.float32)
    out = h.buf(np.zeros(6 * len(a), np.float32))
    h.run("transcendental", [h.buf(a), out], groups_1d(len(a), 64))
    got = h.read(out, np.float32).reshape(-1, 6)
    x = a.astype(np.float64)
    want = np.stack([np.sin(x), np.cos(x), np.exp(np.float32(0.5) * a), np.log(np.abs(x)), np.sqrt(np.abs(x)),
                     np.abs(x) ** 0.75], axis=1)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)
    assert got.dtype == np.float32


# ---------------------------------------------------------------- control flow


def test_loops_per_lane_trip_counts(h):
    start = np.concatenate([np.arange(0, 60), RNG.integers(1, 10**6, 40)]).astype(np.uint32)
    n = len(start)
    steps, odd = h.buf(np.zeros(n, np.uint32)), h.buf(np.zeros(n, np.uint32))
    tri = h.buf(np.full(n, 7777, np.uint32))
    h.run("loops", [h.buf(start), steps, odd, tri], groups_1d(n, 32))
    for i, s in enumerate(int(v) for v in start):
        cnt = odds = 0
        m = s
        while m != 1 and cnt < 50:
            cnt += 1
            if m % 2 == 0:
                m //= 2
            else:
                odds += 1
                m = (3 * m + 1) & M32
        want_tri = 7777
        if s % 3 != 0:
            t = sum(k for k in range(s % 7 + 1) if k != 5)
            want_tri = t * 100 + max(1, s % 5)
        assert (h.read(steps, np.uint32)[i], h.read(odd, np.uint32)[i], h.read(tri, np.uint32)[i]) == \
            (cnt, odds, want_tri), s


def test_return_inside_loop():
    h = Harness()
    rows = 37
    data = RNG.integers(0, 40, size=rows * 16).astype(np.uint32)
    out = h.buf(np.zeros(rows, np.uint32))
    h.run("find_first", [h.buf(data), ScalarArg("u32", 7), out], groups_1d(rows, 16))
    want = []
    for r in range(rows):
        hits = np.flatnonzero(data[r * 16:(r + 1) * 16] == 7)
        want.append(int(hits[0]) if hits.size else 1000)
    assert list(h.read(out, np.uint32)) == want
    assert 1000 in want and any(w < 16 for w in want)


def test_if_expression_values():
    h = Harness()
    x = RNG.uniform(-3, 3, 301).astype(np.float32)
    out = h.buf(np.zeros_like(x))
    h.run("if_values", [h.buf(x), out, ScalarArg("f32", 0.25)], groups_1d(len(x), 64))
    a = np.where(x > f32(0.25), x * f32(2), -x)
    b = np.where(x > 0, np.roll(x, -1), f32(0.5))
    c = np.where(x < -1, f32(1), np.where(x < 1, f32(2), f32(3)))
    np.testing.assert_array_equal(h.read(out, np.float32), (a + b * f32(10)) + c * f32(100))


# ---------------------------------------------------------------- structs, uniforms, vectors


def test_struct_buffer_and_uniform():
    h = Harness()
    n = 45
    vdt = struct_gpu_dtype(MODULE.structs["Vertex"])
    pdt = struct_gpu_dtype(MODULE.structs["Params"])
    assert vdt.itemsize == 32 and pdt.itemsize == 96  # vec3 aligned to 16, stride rounded up
    verts = np.zeros(n, vdt)
    verts["position"] = RNG.standard_normal((n, 3))
    verts["uv"] = RNG.standard_normal((n, 2))
    verts["id"] = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    params = np.zeros(1, pdt)
    params["scale"] = 1.25
    params["offset"] = [0.5, -1.0, 2.0]
    cols = RNG.standard_normal((3, 3)).astype(np.float32)  # cols[c] is column c
    params["m"][0][:, :3] = cols
    params["count"] = n - 5
    vbuf = BufferArg(h.upload(verts.view(np.uint8)), 0, n, "struct:Vertex", 32)
    out, ids = h.buf(np.full(4 * n, -9, np.float32)), h.buf(np.zeros(n, np.uint32))
    h.run("structs", [vbuf, UniformArg(params.tobytes(), "Params"), out, ids], groups_1d(n, 32))
    got = h.read(out, np.float32).reshape(n, 4)
    v = verts["position"].astype(np.float32) * f32(1.25) + np.array([0.5, -1.0, 2.0], np.float32)
    for r in range(3):
        want = (cols[0, r] * v[:, 0] + cols[1, r] * v[:, 1]) + cols[2, r] * v[:, 2]
        np.testing.assert_array_equal(got[:n - 5, r], want[:n - 5])
    np.testing.assert_array_equal(got[:n - 5, 3], verts["uv"][:n - 5, 0] - verts["uv"][:n - 5, 1])
    assert (got[n - 5:] == -9).all()
    np.testing.assert_array_equal(h.read(ids, np.uint32)[:n - 5], verts["id"][:n - 5])


def test_vector_swizzle_assignment():
    h = Harness()
    x = RNG.standard_normal(50).astype(np.float32)
    out = h.buf(np.zeros(3 * len(x), np.float32))
    h.run("swizzles", [h.buf(x), out], groups_1d(len(x), 32))
    got = h.read(out, np.float32).reshape(-1, 3)
    vy = x + f32(10)
    w = (f32(4), vy * f32(2), f32(6))                            # v = (3, x + 10, 2); w = v.zyx * 2
    dot = (w[0] * f32(3) + w[1] * vy) + w[2] * f32(2)
    np.testing.assert_array_equal(got[:, 0], np.full_like(x, 4))
    np.testing.assert_array_equal(got[:, 1], w[1])
    np.testing.assert_array_equal(got[:, 2], dot + f32(5))


def test_bool_buffers_and_scalar():
    h = Harness()
    flags = np.array([0, 1, 2, 0, 1] * 9, np.uint32)  # any non-zero word reads as true
    out = h.buf(np.full(len(flags), 5, np.uint32), "bool")
    h.run("bools", [h.buf(flags, "bool"), out, ScalarArg("bool", True)], groups_1d(len(flags), 32))
    np.testing.assert_array_equal(h.read(out, np.uint32), (flags == 0).astype(np.uint32))


# ---------------------------------------------------------------- workgroups and collectives


def _pairwise(vals, op):
    """The collectives' tree in plain Python f32/u32 arithmetic: lane l with l + 2^s."""
    s = list(vals)
    step = 1
    while step < len(s):
        for lane in range(0, len(s), 2 * step):
            s[lane] = op(s[lane], s[lane + step])
        step *= 2
    return s[0]


def test_manual_tree_with_barriers(h):
    x = RNG.standard_normal(128 * 5 + 17).astype(np.float32)
    sums = h.buf(np.zeros(6, np.float32))
    h.run("manual_tree", [h.buf(x), sums], groups_1d(len(x), 128))
    want = []
    for g in range(6):
        s = list(np.concatenate([x[g * 128:(g + 1) * 128], np.zeros(128, np.float32)])[:128])
        stride = 64
        while stride:
            for lane in range(stride):
                s[lane] = s[lane] + s[lane + stride]
            stride //= 2
        want.append(s[0])
    np.testing.assert_array_equal(h.read(sums, np.float32), np.array(want, np.float32))


def test_workgroup_sum_max_bit_identical_to_pairwise_tree(h):
    x = (RNG.standard_normal(256 * 6 + 37) * 10.0 ** RNG.integers(-4, 5, 256 * 6 + 37)).astype(np.float32)
    x[300] = np.nan  # f32::max ignores NaN
    sums, maxes = h.buf(np.zeros(7, np.float32)), h.buf(np.zeros(7, np.float32))
    h.run("group_sum_max", [h.buf(x), sums, maxes], groups_1d(len(x), 256))
    got_s, got_m = h.read(sums, np.float32), h.read(maxes, np.float32)
    differs_from_sequential = False
    for g in range(7):
        chunk = x[g * 256:(g + 1) * 256]
        v = list(chunk) + [f32(0)] * (256 - len(chunk))
        m = list(chunk) + [f32(-np.inf)] * (256 - len(chunk))
        want_s = _pairwise(v, lambda p, q: p + q)
        assert got_s[g].view(np.uint32) == np.float32(want_s).view(np.uint32) or (g == 1 and np.isnan(want_s))
        assert got_m[g] == _pairwise(m, lambda p, q: _rust_max(float(p), float(q)))
        seq = f32(0)
        for t in v:
            seq = seq + t
        differs_from_sequential |= bool(seq != want_s)
    assert differs_from_sequential  # the data is such that summation order shows
    assert not np.isnan(got_m[1])


def test_workgroup_sum_u32_wraps():
    h = Harness()
    x = RNG.integers(2**31, 2**32, 64 * 3, dtype=np.uint64).astype(np.uint32)
    out = h.buf(np.zeros_like(x))
    h.run("group_sum_u32", [h.buf(x), out], (3, 1, 1))
    want = np.concatenate([np.full(64, int(x[g * 64:(g + 1) * 64].astype(np.uint64).sum()) & M32, np.uint64)
                           for g in range(3)])
    np.testing.assert_array_equal(h.read(out, np.uint32), ((want + np.tile(np.arange(64, dtype=np.uint64), 3)) & M32).astype(np.uint32))


@pytest.mark.parametrize("count", [10, 64, 0])
def test_softmax_rows(h, count):
    rows = 3
    buf = (RNG.standard_normal(rows * max(count, 1) + 5) * 4).astype(np.float32)
    b = h.buf(buf)
    h.run("softmax_rows", [b, ScalarArg("u32", count)], (rows, 1, 1))
    got = h.read(b, np.float32)
    want = buf.copy()
    for r in range(rows if count else 0):
        x = buf[r * count:(r + 1) * count]
        mx = x.max()
        e = np.exp((x - mx).astype(np.float64)).astype(np.float32)
        s = _pairwise(list(e) + [f32(0)] * (64 - count), lambda p, q: p + q)
        want[r * count:(r + 1) * count] = e / s
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    if count:
        np.testing.assert_allclose(got[:rows * count].reshape(rows, count).sum(1), 1, rtol=1e-5)
    else:
        np.testing.assert_array_equal(got, buf)


# ---------------------------------------------------------------- atomics


def test_histogram_totals_and_returned_values(h):
    n, nbins = 5000, 37
    values = RNG.integers(0, 1000, n).astype(np.uint32)
    bins, olds = h.buf(np.zeros(nbins, np.uint32)), h.buf(np.zeros(n, np.uint32))
    h.run("histogram", [h.buf(values), bins, olds], groups_1d(n, 128))
    np.testing.assert_array_equal(h.read(bins, np.uint32), np.bincount(values % nbins, minlength=nbins))
    running = np.zeros(nbins, np.int64)
    want = np.empty(n, np.uint32)
    for i, v in enumerate(values % nbins):  # applied in increasing thread index
        want[i] = running[v]
        running[v] += 1
    np.testing.assert_array_equal(h.read(olds, np.uint32), want)


def test_atomics_in_thread_order_with_2d_workgroups(h):
    width, height, nbins = 50, 13, 16
    n = width * height
    values = RNG.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    bins, olds = h.buf(np.zeros(nbins, np.uint32)), h.buf(np.zeros(n, np.uint32))
    total = h.buf(np.zeros(1, np.int32))
    h.run("hist2d", [h.buf(values), ScalarArg("u32", width), bins, olds, total], (7, 4, 1))
    acc = [0] * nbins
    want = []
    for v in (int(v) for v in values):
        want.append(acc[v % nbins])
        acc[v % nbins] = (acc[v % nbins] + v) & M32
    assert list(h.read(olds, np.uint32)) == want
    assert list(h.read(bins, np.uint32)) == acc
    t = sum(int(v) - 10**9 for v in values.astype(np.int32)) & M32
    assert int(h.read(total, np.int32)[0]) == (t - 2**32 if t >= 2**31 else t)


# ---------------------------------------------------------------- tensors, images, bounds


def _tensor_arg(handle, buffer_len, shape, strides, off):
    rank = len(shape)
    dims = list(shape) + [1] * (4 - rank)
    st = list(strides) + [0] * (4 - rank)
    numel = int(np.prod(shape))
    return TensorArg(handle, "f32", (off, rank, numel, *dims, *st, 0), buffer_len)


@pytest.mark.parametrize("case", ["transposed", "contiguous-offset"])
def test_tensor_views(h, case):
    if case == "transposed":  # src: a 4x6 matrix seen as its 6x4 transpose
        src_parent = np.arange(24, dtype=np.float32)
        src_shape, src_strides, src_off = (6, 4), (1, 6), 0
    else:
        src_parent = np.arange(40, dtype=np.float32) * 0.5
        src_shape, src_strides, src_off = (6, 4), (4, 1), 9
    dst_parent = np.arange(60, dtype=np.float32) * 100
    sh, dh = h.upload(src_parent), h.upload(dst_parent)
    src = _tensor_arg(sh, len(src_parent), src_shape, src_strides, src_off)
    dst = _tensor_arg(dh, len(dst_parent), (6, 4), (10, 2), 3)  # strided, not contiguous
    info = h.buf(np.zeros(5, np.uint32))
    h.run("tensor_scale", [src, dst, info], groups_1d(24, 32))
    view = lambda a, shape, strides, off: np.lib.stride_tricks.as_strided(  # noqa: E731
        a[off:], shape, [s * 4 for s in strides])
    want = dst_parent.copy()
    dv = view(want, (6, 4), (10, 2), 3)
    dv[...] = view(src_parent, src_shape, src_strides, src_off) * f32(2) + dv
    got = np.frombuffer(h.be.read(dh, 0, 240), np.float32)
    np.testing.assert_array_equal(got, want)
    assert list(h.read(info, np.uint32)) == [2, 6, 4, 24, 24]


def test_images():
    h = Harness()
    w, hh = 10, 7
    src = RNG.standard_normal(w * hh).astype(np.float32)
    img = ImageArg(h.upload(np.zeros(w * hh * 4, np.float32)), w, hh, "vec4<f32>")
    srcimg = ImageArg(h.upload(src), w, hh, "f32")
    h.run("paint", [img, srcimg], (2, 1, 1))  # 16 x 8 threads cover a 10 x 7 image
    got = np.frombuffer(h.be.read(img.handle, 0, w * hh * 16), np.float32).reshape(hh, w, 4)
    s = src.reshape(hh, w)
    np.testing.assert_array_equal(got[..., 0], s)
    np.testing.assert_array_equal(got[..., 1], s * f32(2))
    np.testing.assert_array_equal(got[..., 2], np.broadcast_to(np.arange(w, dtype=np.float32), (hh, w)))
    np.testing.assert_array_equal(got[..., 3], np.ones((hh, w), np.float32))


def test_out_of_range_loads_zero_and_stores_dropped():
    h = Harness()
    x = np.arange(1, 9, dtype=np.float32) * 10  # 8 elements
    y = h.buf(np.full(10, -1, np.float32))
    guard = h.buf(np.full(4, 42, np.float32))  # the next allocation must stay untouched
    h.run("out_of_range", [h.buf(x), y], (1, 1, 1))
    want = np.full(10, -1, np.float32)
    want[[0, 3, 6]] = x[[5, 6, 7]] + f32(8)       # scratch[lid + 1] = 7 for lid < 3
    want[9] = 0 + f32(1) + 0                        # x[8] and scratch[4] are out of range
    np.testing.assert_array_equal(h.read(y, np.float32), want)
    np.testing.assert_array_equal(h.read(guard, np.float32), np.full(4, 42, np.float32))


def test_builtins_with_3d_workgroups(h):
    groups, wg = (3, 2, 2), (4, 2, 2)
    w, hh, d = 12, 4, 4
    out = h.buf(np.zeros(w * hh * d * 7, np.uint32))
    h.run("ids", [out, ScalarArg("u32", w), ScalarArg("u32", hh)], groups)
    got = h.read(out, np.uint32).reshape(d, hh, w, 7)
    z, y, x = np.meshgrid(np.arange(d), np.arange(hh), np.arange(w), indexing="ij")
    lid = (x % 4) + 10 * (y % 2) + 100 * (z % 2)
    wgid = (x // 4) + 10 * (y // 2) + 100 * (z // 2)
    for k, want in enumerate([x, y, z, lid, wgid, np.full_like(x, 3 + 20 + 200), np.full_like(x, 16)]):
        np.testing.assert_array_equal(got[..., k], want, err_msg=f"field {k}")


# ---------------------------------------------------------------- fused multiply-add


def _round_f32(q: Fraction) -> np.float32:
    """Exact rational -> nearest f32, ties to even (subnormals included)."""
    if q == 0:
        return np.float32(0.0)
    sign, q = (-1 if q < 0 else 1), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    while Fraction(2) ** e > q:
        e -= 1
    while Fraction(2) ** (e + 1) <= q:
        e += 1
    e = max(e, -126)
    mant = round(q * Fraction(2) ** (23 - e))  # round() on a Fraction is half-to-even
    return np.float32(sign * mant * 2.0 ** (e - 23))


def test_mul_add_is_fused_and_correctly_rounded():
    h = Harness()
    e12, e11 = 2.0 ** -12, 2.0 ** -11
    special = [(1 + e12, 1 + e12, -(1 + e11)),        # fused: 2^-24; separate: 0
               (1 + e12, 1 + e12, 2.0 ** -80),         # f64 sum then f32 would double-round down
               (1 + e12, 1 + e12, -(2.0 ** -80)),
               (3.0, 1 / 3, -1.0)]
    rand = RNG.standard_normal((500, 3)) * 2.0 ** RNG.integers(-20, 20, (500, 3))
    rows = np.array(special + [tuple(r) for r in rand], np.float64).astype(np.float32)
    a, b, c = (np.ascontiguousarray(rows[:, j]) for j in range(3))
    n = len(rows)
    f, s = h.buf(np.zeros(n, np.float32)), h.buf(np.zeros(n, np.float32))
    h.run("fused", [h.buf(a), h.buf(b), h.buf(c), f, s], groups_1d(n, 64))
    got_f, got_s = h.read(f, np.float32), h.read(s, np.float32)
    want_f = np.array([_round_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                       for x, y, z in rows], np.float32)
    np.testing.assert_array_equal(got_f, want_f)
    np.testing.assert_array_equal(got_s, a * b + c)
    assert got_f[0] == np.float32(2.0 ** -24) and got_s[0] == 0
    naive = np.float32(np.float64(a[1]) * np.float64(b[1]) + np.float64(c[1]))
    assert got_f[1] != naive and got_f[1] == want_f[1]


# ---------------------------------------------------------------- compile, record, re-submit


def test_generated_source_is_readable_and_cached():
    k = MODULE.kernel("saxpy")
    src = emit_cpu(k)
    assert "def k_saxpy(G, R, F):" in src and "rt.st_lin(p_y, G," in src
    compile(src, "<check>", "exec")
    assert compile_cpu(k) is compile_cpu(k)


def test_update_scalar_and_resubmit():
    h = Harness()
    n = 100
    x, y = np.ones(n, np.float32), np.zeros(n, np.float32)
    yb = h.buf(y)
    k = MODULE.kernel("saxpy")
    d = Dispatch(k, h.be.compile(k, CompileOptions()), [h.buf(x), yb, ScalarArg("f32", 2.0)], (2, 1, 1))
    h.be.record(d)
    h.be.submit([d, d])
    d.args[2] = ScalarArg("f32", 0.5)
    h.be.update_scalar(d, 2)
    h.be.submit([d])
    np.testing.assert_array_equal(h.read(yb, np.float32), np.full(n, 4.5, np.float32))


def test_public_api_saxpy_and_set_node_param():
    kernels = gi.load_source(open(os.path.join(HERE, "data", "cpu_semantics.rs")).read(), "cpu_semantics.rs")
    dev = gi.Device("cpu")
    n = 3000
    x = dev.buffer(np.arange(n, dtype=np.float32))
    y = dev.buffer(np.ones(n, np.float32))
    k = kernels.saxpy.prepare(dev)
    scheme = gi.Scheme(dev)
    node = k.record(scheme, "saxpy", x, y, 2.0).over_1d(n)
    scheme.submit()
    np.testing.assert_array_equal(y.numpy(), np.float32(2) * np.arange(n, dtype=np.float32) + 1)
    scheme.set_node_param(node, "a", -1.0)
    scheme.submit()
    np.testing.assert_array_equal(y.numpy(), np.float32(1) * np.arange(n, dtype=np.float32) + 1)


def test_public_api_collectives_and_tensor_view():
    kernels = gi.load_source(open(os.path.join(HERE, "data", "cpu_semantics.rs")).read(), "cpu_semantics.rs")
    dev = gi.Device("cpu")
    x = RNG.standard_normal(256 * 3).astype(np.float32)
    sums, maxes = dev.zeros(3), dev.zeros(3)
    scheme = gi.Scheme(dev)
    kernels.group_sum_max.prepare(dev).record(scheme, "sum", dev.buffer(x), sums, maxes).over_1d(len(x))
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    src = dev.tensor(a).transpose()
    dst = dev.tensor(np.ones((6, 4), np.float32))
    info = dev.zeros(5, np.uint32)
    kernels.tensor_scale.prepare(dev).record(scheme, "t", src, dst, info).over_1d(24)
    scheme.submit()
    for g in range(3):
        assert sums.numpy()[g] == _pairwise(list(x[g * 256:(g + 1) * 256]), lambda p, q: p + q)
    np.testing.assert_array_equal(maxes.numpy(), x.reshape(3, 256).max(1))
    np.testing.assert_array_equal(dst.numpy(), a.T * f32(2) + f32(1))
    assert list(info.numpy()) == [2, 6, 4, 24, 24]


def test_fma_helper_matches_exact_rounding_on_hard_cases():
    # products whose exact low bits sit at an f32 tie, nudged by c of either sign
    a = np.float32(1 + 2.0 ** -12)
    for c in [2.0 ** -60, -(2.0 ** -60), 2.0 ** -149, 0.0, -(1 + 2.0 ** -11), 2.0 ** 30]:
        c32 = np.float32(c)
        want = _round_f32(Fraction(float(a)) ** 2 + Fraction(float(c32)))
        with np.errstate(all="ignore"):
            assert rt.fma(a, a, c32) == want, c


def test_component_names_do_not_collide():
    h = Harness()
    out = h.buf(np.zeros(40, np.float32))
    h.run("name_clash", [out, ScalarArg("f32", 100.0)], (2, 1, 1))
    np.testing.assert_array_equal(h.read(out, np.float32), np.full(40, 1 + 20 + 500 + 100, np.float32))


def test_1d_workgroups_on_a_2d_grid(h):
    w, rows = 40, 5
    x = RNG.standard_normal(w).astype(np.float32)
    out, first = h.buf(np.zeros(w * rows, np.float32)), h.buf(np.zeros(w, np.float32))
    h.run("rows", [h.buf(x), out, first, ScalarArg("u32", w)], (3, rows, 1))  # 48 x 5 threads
    want = x[None, :] * np.arange(rows, dtype=np.float32)[:, None] + f32(0.5)
    np.testing.assert_array_equal(h.read(out, np.float32), want.reshape(-1))
    np.testing.assert_array_equal(h.read(first, np.float32), x + f32(1))


# ---------------------------------------------------------------- trapping checks


def _site_line(sites, report) -> int:
    return sites[report.site].span.line


def test_checks_pass_when_only_inactive_lanes_are_out_of_range(h):
    x = np.full(50, 7, np.uint32)
    x[0] = 50  # `x[0] > i` keeps lanes 50.. away from x[i]
    out = h.buf(np.zeros(200, np.uint32))
    faults, _ = h.run_checked("checked", [h.buf(x), out, ScalarArg("u32", 40), ScalarArg("u32", 5)], (4, 1, 1))
    assert faults is None  # lanes >= 50 never read x[i]; `i < 40 && x[i]` short-circuits
    got = h.read(out, np.uint32)
    assert got[1] == 20 and (got[2:50] == 7).all() and (got[50:] == 0).all()


def test_checks_report_the_first_offending_lane(h):
    x = np.full(50, 7, np.uint32)
    x[0] = 50
    out = h.buf(np.zeros(200, np.uint32))
    faults, sites = h.run_checked("checked", [h.buf(x), out, ScalarArg("u32", 60), ScalarArg("u32", 5)],
                                  (4, 1, 1))
    assert len(faults) == 1
    f = faults[0]
    assert (f.dispatch, f.index, f.length) == (0, 50, 50)  # lane 50 of `i < 60 && x[i] > ...`
    lines = open(os.path.join(HERE, "data", "cpu_semantics.rs")).read().splitlines()
    assert _site_line(sites, f) == lines.index("    if i < lim && x[i] > 1000000 {") + 1


def test_checks_division_by_zero():
    h = Harness()
    x = np.full(64, 7, np.uint32)
    out = h.buf(np.full(64, 9, np.uint32))
    faults, sites = h.run_checked("checked", [h.buf(x), out, ScalarArg("u32", 0), ScalarArg("u32", 0)], (2, 1, 1))
    assert len(faults) == 1 and faults[0].length == 0 and sites[faults[0].site].kind == "divide"
    assert h.read(out, np.uint32)[1] == 0  # the quotient is 0 and the thread carried on


def test_checks_on_images():
    h = Harness()
    w, hh = 10, 3
    img = ImageArg(h.upload(np.arange(w * hh, dtype=np.float32)), w, hh, "f32")
    out = h.buf(np.zeros(w * 8, np.float32))
    faults, sites = h.run_checked("checked_image", [img, out], (2, 1, 1))  # 16 x 8 threads
    assert len(faults) == 1 and (faults[0].index, faults[0].index_y, faults[0].length) == (0, 3, 10)
    got = h.read(out, np.float32)
    np.testing.assert_array_equal(got[:w * hh], np.arange(w * hh, dtype=np.float32))
    assert (got[w * hh:] == 0).all()


def test_public_api_raises_kernel_fault():
    kernels = gi.load_source(open(os.path.join(HERE, "data", "cpu_semantics.rs")).read(), "cpu_semantics.rs")
    dev = gi.Device("cpu")
    x = np.full(50, 7, np.uint32)
    x[0] = 50
    out = dev.zeros(200, np.uint32)
    scheme = gi.Scheme(dev)
    kernels.checked.prepare(dev).record(scheme, "c", dev.buffer(x), out, 60, 5).over_1d(128)
    with pytest.raises(gi.KernelFault, match=r"index out of bounds at cpu_semantics.rs:\d+:\d+: parameter `x` "
                                             r"indexed at 50, but its length is 50"):
        scheme.submit()
    unchecked = gi.Scheme(dev)
    kernels.checked.prepare(dev, checks=False).record(unchecked, "c", dev.buffer(x), out, 60, 5).over_1d(128)
    unchecked.submit()
