"""Workgroup memory, barriers, collectives and atomics (docs/semantics.md, "Workgroup
operations"): the same results on every backend, bit for bit wherever the contract says so,
checked against pure-numpy models of the contract with fresh random data each run; and the
G0042 diagnostic for barriers and collectives in thread-dependent control flow
("Divergent barriers"), with the other misuse diagnostics, at their exact spans."""

from __future__ import annotations

import os

import numpy as np
import pytest

from goldy_import.examples import matmul_reference
from goldy_import.importer import import_source
from goldy_import.ir.uniformity import Uniformity, divergent_sync_points
from oracle import assert_same, device, run_kernel

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def seed() -> int:
    return int(np.random.SeedSequence().entropy % 2**32)


def fits_or_skip(backend: str, width: int, workgroup_bytes: int) -> None:
    """Skip one size where the device cannot run a [width, 1, 1] workgroup with this much
    workgroup memory (saying which limit); the backend itself skips in `device`."""
    lim = device(backend).backend.limits
    if width > lim.max_workgroup_size[0] or width > lim.max_invocations_per_workgroup:
        pytest.skip(f"{backend}: a workgroup of {width} exceeds max_workgroup_size.x = "
                    f"{lim.max_workgroup_size[0]} / max_invocations_per_workgroup = {lim.max_invocations_per_workgroup}")
    if workgroup_bytes > lim.max_workgroup_storage_bytes:
        pytest.skip(f"{backend}: {workgroup_bytes} bytes of workgroup memory exceed "
                    f"max_workgroup_storage_bytes = {lim.max_workgroup_storage_bytes}")


# ---------------------------------------------------------------- numpy models of the contract


def pairwise_tree(v: np.ndarray, op) -> np.ndarray:
    """The collectives' tree over the last axis: level s combines lane l with lane l + 2^s
    (lower lane on the left) for l a multiple of 2^(s+1); returns lane 0."""
    v = v.copy()
    s = 1
    with np.errstate(over="ignore", invalid="ignore"):
        while s < v.shape[-1]:
            v[..., ::2 * s] = op(v[..., ::2 * s], v[..., s::2 * s])
            s *= 2
    return v[..., 0]


def halving_tree(v: np.ndarray, op) -> np.ndarray:
    """scratch[l] = scratch[l] op scratch[l + stride] for stride = N/2, N/4, ..., 1."""
    v = v.copy()
    stride = v.shape[-1] // 2
    with np.errstate(over="ignore", invalid="ignore"):
        while stride > 0:
            v[..., :stride] = op(v[..., :stride], v[..., stride:2 * stride])
            stride //= 2
    return v[..., 0]


def spread_f32(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values over six decades, so that every sum rounds and the order decides the bits."""
    return (rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)).astype(np.float32)


def softmax_model(rows: np.ndarray, count: int, width: int) -> np.ndarray:
    """workgroup_softmax_in_place::<width> on each row, in the documented order: lane l
    covers t = l, l + width, ... < count; its max is x[l] (-1e30 past count) then f32::max
    with its later elements, its sum exp(x[l] - m) (0 past count) plus the later ones left
    to right; m and the sum go through the tree. exp in float64, rounded: compare with the
    transcendental tolerance."""
    out = rows.copy()
    if count == 0:
        return out
    tiles = -(-count // width)
    pad = np.full((rows.shape[0], tiles * width), np.nan, np.float32)
    pad[:, :count] = rows[:, :count]
    lanes = pad.reshape(rows.shape[0], tiles, width)  # [row, tile, lane]
    lane_max = np.where(np.arange(width) < count, lanes[:, 0], np.float32(-1e30))
    for j in range(1, tiles):
        lane_max = np.fmax(lane_max, lanes[:, j])  # NaN slots (past count) leave it as it is
    m = pairwise_tree(lane_max, np.fmax)
    e = np.exp(lanes.astype(np.float64) - m[:, None, None].astype(np.float64)).astype(np.float32)
    e = np.where(np.isnan(lanes), np.float32(0), e)
    lane_sum = e[:, 0].copy()
    for j in range(1, tiles):
        lane_sum = lane_sum + e[:, j]
    s = pairwise_tree(lane_sum, np.add)
    out[:, :count] = (e / s[:, None, None]).reshape(rows.shape[0], -1)[:, :count]
    return out


# ---------------------------------------------------------------- workgroup_sum / workgroup_max

WIDTHS = [32, 64, 128, 256, 512, 1024]

REDUCE = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [{n}, 1, 1])]
fn reduce_{n}(xf: &[f32], xu: &[u32], xi: &[i32], of: &mut [f32], ou: &mut [u32], oi: &mut [i32]) {{
    let sf = gpu::workgroup_array::<f32, {n}>();
    let su = gpu::workgroup_array::<u32, {n}>();
    let si = gpu::workgroup_array::<i32, {n}>();
    let i = gpu::global_id().x;
    let fsum = gpu::workgroup_sum::<{n}>(xf[i], sf);
    let fmax = gpu::workgroup_max::<{n}>(xf[i], sf); // the same scratch at once: the trailing barrier
    let usum = gpu::workgroup_sum(xu[i], su);        // `::<N>` omitted: the workgroup size
    let umax = gpu::workgroup_max::<{n}>(xu[i], su);
    let isum = gpu::workgroup_sum::<{n}>(xi[i], si);
    let imax = gpu::workgroup_max(xi[i], si);
    // every lane stores what it received
    of[2 * i] = fsum;
    of[2 * i + 1] = fmax;
    ou[2 * i] = usum;
    ou[2 * i + 1] = umax;
    oi[2 * i] = isum;
    oi[2 * i + 1] = imax;
}}
"""


def reduce_inputs(rng: np.random.Generator, n: int, groups: int) -> list:
    total = n * groups
    xf = spread_f32(rng, total).reshape(groups, n)
    xf[1, :] = np.nan                                   # max of all-NaN lanes is NaN
    xf[2, rng.choice(n, 3, replace=False)] = np.nan     # max skips NaN operands, the sum is NaN
    xf[3, rng.choice(n, 2, replace=False)] = [np.inf, -np.inf]
    xf[4, :] = -np.abs(xf[4, :]) - 1.0                  # an all-negative group
    if groups > 5:  # a max of zeros of both signs: the tree's order decides which (f32::max: the later of equals)
        xf[5, :] = -np.abs(xf[5, :]) - 1.0
        zeros = rng.choice(n, max(2, n // 4), replace=False)
        xf[5, zeros] = np.where(rng.random(zeros.size) < 0.5, np.float32(-0.0), np.float32(0.0))
    xu = rng.integers(0, 2**32, total, dtype=np.uint64).astype(np.uint32)   # sums wrap
    xi = rng.integers(-2**31, 2**31, total, dtype=np.int64).astype(np.int32)
    return [xf.reshape(-1), xu, xi, np.zeros(2 * total, np.float32), np.zeros(2 * total, np.uint32),
            np.zeros(2 * total, np.int32)]


def reduce_model(args: list, n: int) -> list:
    xf, xu, xi = (a.reshape(-1, n) for a in args[:3])
    out = []
    for x, mx in ((xf, np.fmax), (xu, np.maximum), (xi, np.maximum)):
        pair = np.stack([pairwise_tree(x, np.add), pairwise_tree(x, mx)], axis=1)  # per group
        out.append(np.repeat(pair[:, None, :], n, axis=1).reshape(-1))            # every lane
    return out


@pytest.mark.parametrize("n", WIDTHS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_workgroup_sum_max_every_lane_bit_exact(backend, n):
    fits_or_skip(backend, n, 3 * 4 * n)
    groups = max(6, 2048 // n)
    s = seed()
    args = reduce_inputs(np.random.default_rng(s), n, groups)
    got = run_kernel(backend, REDUCE.format(n=n), f"reduce_{n}", args, ("groups", (groups, 1, 1)))
    for name, g, w in zip(("f32", "u32", "i32"), got[3:], reduce_model(args, n)):
        assert_same(g, w, what=f"{backend} reduce_{n} {name} (seed {s})")
        if name == "f32":  # == does not see a zero's sign
            signs = ~np.isnan(w)
            assert np.array_equal(np.signbit(g[signs]), np.signbit(w[signs])), f"{backend} reduce_{n}: a zero's sign"


def test_integer_sums_wrap_and_float_order_matters():
    """The data above makes the tests meaningful: u32 sums overflow, and summing the same
    floats in another order (left to right) gives other bits in most groups."""
    rng = np.random.default_rng(seed())
    args = reduce_inputs(rng, 256, 8)
    xu = args[1].reshape(-1, 256).astype(np.uint64)
    assert (xu.sum(axis=1) >= 2**32).all()
    xf = args[0].reshape(-1, 256)[5:]
    # cumsum adds strictly left to right (np.add.reduce itself sums pairwise in blocks)
    sequential = np.array([np.cumsum(r, dtype=np.float32)[-1] for r in xf])
    assert (pairwise_tree(xf, np.add) != sequential).any()


# ---------------------------------------------------------------- softmax

SOFTMAX = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [{n}, 1, 1])]
fn softmax_{n}(buf: &mut [f32], stride: u32, count: u32) {{
    let s = gpu::workgroup_array::<f32, {n}>();
    gpu::workgroup_softmax_in_place::<{n}>(buf, gpu::workgroup_id().x * stride, count, s);
}}
"""


@pytest.mark.parametrize("n", [64, 256])
@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_rows(backend, n):
    """count < N, = N, 0 and past N (the lanes stride over the row): rows sum to 1,
    outputs in [0, 1], the largest input keeps the largest output, slots past `count` are
    untouched, and every backend agrees with the model within exp's tolerance."""
    fits_or_skip(backend, n, 4 * n)
    s = seed()
    rng = np.random.default_rng(s)
    rows = 12
    for count in (0, 1, n // 2 + 3, n, n + 1, 2 * n + 5, 3 * n):
        stride = count + 8  # the 8 slots after each row must stay as they are
        x = (rng.standard_normal(rows * stride) * 4).astype(np.float32)
        got = run_kernel(backend, SOFTMAX.format(n=n), f"softmax_{n}", [x, stride, count],
                         ("groups", (rows, 1, 1)))[0].reshape(rows, stride)
        xr = x.reshape(rows, stride)
        what = f"{backend} softmax_{n} count={count} (seed {s})"
        assert_same(got[:, count:], xr[:, count:], what=what + " past count")
        want = softmax_model(xr, count, n)
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-7, err_msg=what)
        if count:
            np.testing.assert_allclose(got[:, :count].sum(axis=1, dtype=np.float64), 1.0, rtol=count * 2e-7)
            assert ((got[:, :count] >= 0) & (got[:, :count] <= 1)).all(), what
            assert (got[np.arange(rows), xr[:, :count].argmax(axis=1)] == got[:, :count].max(axis=1)).all(), what


SOFTMAX_THEN_READ = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [{n}, 1, 1])]
fn softmax_read_{n}(buf: &mut [f32], out: &mut [f32], stride: u32, count: u32) {{
    let s = gpu::workgroup_array::<f32, {n}>();
    let base = gpu::workgroup_id().x * stride;
    gpu::workgroup_softmax_in_place::<{n}>(buf, base, count, s);
    // right after the call, each lane reads entries other lanes normalised (the row reversed)
    let mut t = gpu::local_id().x;
    while t < count {{
        out[base + t] = buf[base + (count - 1 - t)];
        t += {n}u32;
    }}
}}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_softmax_result_is_usable_right_after_the_call(backend):
    """The call ends with a barrier (issue 13): entries written by other lanes, also the
    strided ones past N, are visible at once; `out` starts poisoned."""
    n = 64
    fits_or_skip(backend, n, 4 * n)
    s = seed()
    rng = np.random.default_rng(s)
    rows = 6
    for count in (9, n, 3 * n - 7):
        stride = count + 3
        x = (rng.standard_normal(rows * stride) * 4).astype(np.float32)
        out = np.full(rows * stride, np.float32(1234.5))
        buf, got = run_kernel(backend, SOFTMAX_THEN_READ.format(n=n), f"softmax_read_{n}", [x, out, stride, count],
                              ("groups", (rows, 1, 1)))[:2]
        buf, got = buf.reshape(rows, stride), got.reshape(rows, stride)
        what = f"{backend} softmax then read, count={count} (seed {s})"
        assert_same(got[:, :count], buf[:, count - 1::-1], what=what)
        np.testing.assert_allclose(buf, softmax_model(x.reshape(rows, stride), count, n), rtol=2e-6, atol=1e-7,
                                   err_msg=what)


# ---------------------------------------------------------------- a reduction written by hand

MANUAL = """
use goldy::gpu;

/// Two hand-written trees over workgroup arrays: sequential addressing with a halving
/// stride (`>>=`), and interleaved addressing with `1 << level` (the collectives' tree).
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn manual(x: &[f32], xu: &[u32], halving: &mut [f32], pairwise: &mut [f32], bits: &mut [u32]) {
    let a = gpu::workgroup_array::<f32, 256>();
    let b = gpu::workgroup_array::<f32, 256>();
    let u = gpu::workgroup_array::<u32, 256>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let g = gpu::workgroup_id().x;
    a[lid] = x[i];
    b[lid] = x[i];
    u[lid] = xu[i];
    gpu::workgroup_barrier();
    let mut stride = 128u32;
    while stride > 0 {
        if lid < stride {
            a[lid] = a[lid] + a[lid + stride];
            u[lid] = (u[lid] << 1) ^ u[lid + stride];
        }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    for level in 0..8u32 {
        let step = 1u32 << level;
        if (lid & ((step << 1) - 1)) == 0 {
            b[lid] = b[lid] + b[lid + step];
        }
        gpu::workgroup_barrier();
    }
    if lid == 0 {
        halving[g] = a[0];
        pairwise[g] = b[0];
        bits[g] = u[0];
    }
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_manual_reduction_with_barriers_and_shifts(backend):
    device(backend)
    s = seed()
    rng = np.random.default_rng(s)
    groups = 9
    x = spread_f32(rng, 256 * groups)
    xu = rng.integers(0, 2**32, 256 * groups, dtype=np.uint64).astype(np.uint32)
    got = run_kernel(backend, MANUAL, "manual", [x, xu, np.zeros(groups, np.float32),
                                                 np.zeros(groups, np.float32), np.zeros(groups, np.uint32)],
                     ("groups", (groups, 1, 1)))
    xr = x.reshape(groups, 256)
    assert_same(got[2], halving_tree(xr, np.add), what=f"{backend} halving (seed {s})")
    assert_same(got[3], pairwise_tree(xr, np.add), what=f"{backend} pairwise (seed {s})")
    assert_same(got[4], halving_tree(xu.reshape(groups, 256), lambda p, q: (p << np.uint32(1)) ^ q),
                what=f"{backend} shifts (seed {s})")


# ---------------------------------------------------------------- atomics

HISTOGRAM = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [128, 1, 1])]
fn histogram(values: &[u32], bins: &mut [u32], signed: &mut [i32], counter: &mut [u32], order: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < values.len() {
        let v = values[i];
        let b = v % bins.len();
        gpu::atomic_add(bins, b, 1);
        gpu::atomic_add(signed, b, (v as i32) - 600);
        let slot = gpu::atomic_add(counter, 0, 1);  // the old value: one slot per thread
        order[slot] = i;
    }
}
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_histogram_atomics(backend):
    device(backend)
    s = seed()
    rng = np.random.default_rng(s)
    n, nbins = 5000, 61
    values = rng.integers(0, 1200, n).astype(np.uint32)
    bins, signed, counter, order = run_kernel(
        backend, HISTOGRAM, "histogram",
        [values, np.zeros(nbins, np.uint32), np.full(nbins, -7, np.int32), np.zeros(1, np.uint32),
         np.zeros(n, np.uint32)], ("over_1d", n))[1:]
    what = f"{backend} histogram (seed {s})"
    assert_same(bins, np.bincount(values % nbins, minlength=nbins).astype(np.uint32), what=what)
    want_signed = np.bincount(values % nbins, weights=values.astype(np.int64) - 600, minlength=nbins)
    assert_same(signed, (want_signed.astype(np.int64) - 7).astype(np.int32), what=what + " i32")
    assert counter[0] == n, what
    assert_same(np.sort(order), np.arange(n, dtype=np.uint32), what=what + ": old values are distinct")
    if backend == "cpu":  # the oracle applies atomics in thread order
        assert_same(order, np.arange(n, dtype=np.uint32), what=what)


# ---------------------------------------------------------------- tiled transpose and matmul


def _example(name: str) -> str:
    return os.path.join(REPO, "rust_examples", name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiled_transpose(backend):
    device(backend)
    s = seed()
    rng = np.random.default_rng(s)
    for rows, cols in ((37, 50), (16, 16), (1, 33)):
        x = rng.standard_normal(rows * cols).astype(np.float32)
        got = run_kernel(backend, _example("tiled_transpose.rs"), "tiled_transpose",
                         [x, np.zeros(rows * cols, np.float32), rows, cols],
                         ("groups", (-(-cols // 16), -(-rows // 16), 1)))[1]
        assert_same(got, x.reshape(rows, cols).T.reshape(-1), what=f"{backend} {rows}x{cols} (seed {s})")


@pytest.mark.parametrize("backend", BACKENDS)
def test_tiled_matmul(backend):
    """Bit for bit the documented order (numpy in that order), and within the f32
    error bound of a float64 product."""
    device(backend)
    s = seed()
    rng = np.random.default_rng(s)
    for m, n, k in ((37, 45, 29), (16, 32, 48), (5, 3, 1)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        got = run_kernel(backend, _example("matmul.rs"), "matmul",
                         [a.reshape(-1), b.reshape(-1), np.zeros(m * n, np.float32), m, n, k],
                         ("groups", (-(-n // 16), -(-m // 16), 1)))[2].reshape(m, n)
        what = f"{backend} matmul {m}x{k} @ {k}x{n} (seed {s})"
        assert_same(got, matmul_reference(a, b), what=what)
        exact = a.astype(np.float64) @ b.astype(np.float64)
        bound = 1.01 * k * 2.0**-24 * (np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)) + 1e-30
        assert (np.abs(got - exact) <= bound).all(), what


def test_matmul_reference_order_is_not_numpys_own():
    """The order-faithful model is needed: numpy's float32 matmul (BLAS, blocked) usually
    rounds differently for long sums."""
    rng = np.random.default_rng(seed())
    a = rng.standard_normal((24, 300)).astype(np.float32)
    b = rng.standard_normal((300, 24)).astype(np.float32)
    assert (matmul_reference(a, b) != a @ b).any()


# ---------------------------------------------------------------- diagnostics

HEAD = "use goldy::gpu;\n"


def diag(src: str, code: str):
    r = import_source(src, "k.rs")
    assert [d.code for d in r.diagnostics] == [code], r.render()
    assert not r.kernels
    return r.diagnostics[0]


def assert_span(span, src: str, text: str, nth: int = 0) -> None:
    """`span` covers exactly the nth occurrence of `text` in `src` (bytes, line, columns)."""
    start = -1
    for _ in range(nth + 1):
        start = src.index(text, start + 1)
    end = start + len(text)
    line = src.count("\n", 0, start) + 1
    col = start - (src.rfind("\n", 0, start) + 1) + 1
    end_col = end - (src.rfind("\n", 0, end) + 1) + 1
    assert (span.start, span.end, span.line, span.col, span.end_col) == (start, end, line, col, end_col), \
        (span, src[span.start:span.end], text)


BRANCH = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(out: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    if i < n {
        s[gpu::local_id().x] = out[i];
        gpu::workgroup_barrier();
        out[i] = s[0];
    }
}
"""

AFTER_RETURN = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    if i >= out.len() {
        return;
    }
    s[gpu::local_id().x] = out[i];
    gpu::workgroup_barrier();
    out[i] = s[0];
}
"""

COLLECTIVE_IN_BRANCH = HEAD + """#[goldy::compute(workgroup_size = [128, 1, 1])]
fn k(x: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 128>();
    let v = x[gpu::global_id().x];
    if v > 0.0 {
        let t = gpu::workgroup_sum::<128>(v, s);
        out[gpu::workgroup_id().x] = t;
    }
}
"""

THREAD_LOOP = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(out: &mut [f32], counts: &[u32]) {
    let lid = gpu::local_id().x;
    for j in 0..counts[lid] {
        gpu::workgroup_barrier();
        out[j] = 1.0;
    }
}
"""

BREAK_IN_LOOP = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(out: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    for t in 0..n {
        let m = gpu::workgroup_max::<64>(out[i], s);
        if out[i] == m {
            break;
        }
        out[i] = out[i] * 0.5;
    }
}
"""

SOFTMAX_AFTER_CONTINUE = HEAD + """#[goldy::compute(workgroup_size = [32, 1, 1])]
fn k(buf: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 32>();
    let mut r = 0u32;
    while r < n {
        r += 1;
        if buf[gpu::global_id().x] < 0.0 {
            continue;
        }
        gpu::workgroup_softmax_in_place::<32>(buf, r * 32, 32, s);
    }
}
"""


def test_barrier_in_thread_dependent_branch():
    d = diag(BRANCH, "G0042")
    assert d.message == "`workgroup_barrier` in control flow that depends on the thread"
    assert_span(d.labels[0].span, BRANCH, "gpu::workgroup_barrier()")
    assert_span(d.labels[1].span, BRANCH, "i < n")
    assert d.labels[1].text == "this condition depends on the thread" and not d.labels[1].primary
    assert d.help and "out of the `if`" in d.help[0]


def test_barrier_after_thread_dependent_return():
    d = diag(AFTER_RETURN, "G0042")
    assert_span(d.labels[0].span, AFTER_RETURN, "gpu::workgroup_barrier()")
    assert_span(d.labels[1].span, AFTER_RETURN, "return")
    assert d.labels[1].text == "some threads may return here"
    assert "instead of returning early" in d.help[0]


def test_collective_in_thread_dependent_branch():
    d = diag(COLLECTIVE_IN_BRANCH, "G0042")
    assert d.message == "`workgroup_sum` in control flow that depends on the thread"
    assert_span(d.labels[0].span, COLLECTIVE_IN_BRANCH, "gpu::workgroup_sum::<128>(v, s)")
    assert_span(d.labels[1].span, COLLECTIVE_IN_BRANCH, "v > 0.0")  # v was loaded at a thread's index
    assert len(d.help) == 2 and "neutral value" in d.help[1]


def test_barrier_in_loop_with_thread_dependent_trip_count():
    d = diag(THREAD_LOOP, "G0042")
    assert_span(d.labels[0].span, THREAD_LOOP, "gpu::workgroup_barrier()")
    assert_span(d.labels[1].span, THREAD_LOOP, "0..counts[lid]")
    assert d.labels[1].text == "the number of iterations depends on the thread"


def test_collective_before_a_thread_dependent_break_in_the_same_loop():
    """After some threads break, later iterations miss them: the collective earlier in
    the body is divergent too."""
    d = diag(BREAK_IN_LOOP, "G0042")
    assert d.message == "`workgroup_max` in control flow that depends on the thread"
    assert_span(d.labels[0].span, BREAK_IN_LOOP, "gpu::workgroup_max::<64>(out[i], s)")
    assert_span(d.labels[1].span, BREAK_IN_LOOP, "break")


def test_softmax_after_thread_dependent_continue():
    d = diag(SOFTMAX_AFTER_CONTINUE, "G0042")
    assert d.message == "`workgroup_softmax_in_place` in control flow that depends on the thread"
    assert_span(d.labels[0].span, SOFTMAX_AFTER_CONTINUE, "gpu::workgroup_softmax_in_place::<32>(buf, r * 32, 32, s)")
    assert_span(d.labels[1].span, SOFTMAX_AFTER_CONTINUE, "continue")


def test_each_divergent_barrier_is_reported():
    src = HEAD + """#[goldy::compute(workgroup_size = [8, 8, 1])]
fn k(out: &mut [f32]) {
    let p = gpu::global_id();
    if p.y > 3 {
        gpu::workgroup_barrier();
    } else {
        gpu::workgroup_barrier();
    }
}
"""
    r = import_source(src, "k.rs")
    assert [d.code for d in r.diagnostics] == ["G0042", "G0042"]
    for nth, d in enumerate(r.diagnostics):
        assert_span(d.labels[0].span, src, "gpu::workgroup_barrier()", nth)
        assert_span(d.labels[1].span, src, "p.y > 3")


def test_collective_size_not_a_power_of_two():
    src = HEAD + """#[goldy::compute(workgroup_size = [96, 1, 1])]
fn k(out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 96>();
    let t = gpu::workgroup_sum::<96>(1.0, s);
}
"""
    d = diag(src, "G0024")
    assert d.message == "collective size 96 is not a power of two"
    assert_span(d.span, src, "96", 2)


def test_collective_nested_in_an_expression():
    src = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    out[0] = 2.0 * gpu::workgroup_max::<64>(1.0, s);
}
"""
    d = diag(src, "G0025")
    assert_span(d.span, src, "gpu::workgroup_max::<64>(1.0, s)")


def test_workgroup_array_not_at_top_level():
    src = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(out: &mut [f32]) {
    for j in 0..4u32 {
        let s = gpu::workgroup_array::<f32, 64>();
        s[j] = 1.0;
    }
}
"""
    r = import_source(src, "k.rs")
    assert r.diagnostics and r.diagnostics[0].code == "G0023", r.render()
    assert_span(r.diagnostics[0].span, src, "gpu::workgroup_array::<f32, 64>()")


UNIFORM_OK = HEAD + """#[goldy::compute(workgroup_size = [256, 1, 1])]
fn k(out: &mut [f32], xs: &[u32], n: u32) {
    let s = gpu::workgroup_array::<f32, 256>();
    let lid = gpu::local_id().x;
    let g = gpu::global_id();
    let wid = gpu::workgroup_id().x;
    if lid < 256 { gpu::workgroup_barrier(); }              // always true in a workgroup of 256
    if lid / 256 == 0 { gpu::workgroup_barrier(); }         // likewise
    if g.y < n { gpu::workgroup_barrier(); }                // 1-D workgroup: g.y is workgroup_id().y
    if gpu::local_id().z == 0 { gpu::workgroup_barrier(); }
    if wid * 256 >= n { gpu::workgroup_barrier(); }         // workgroup_id, scalars, lengths
    if xs[wid] > out.len() { gpu::workgroup_barrier(); }    // a load at a uniform index
    if s[0] > 0.0 { gpu::workgroup_barrier(); }             // not provable: not reported
    let t = gpu::workgroup_sum::<256>(1.0, s);
    if t > 3.0 { gpu::workgroup_barrier(); }                // collective results are uniform
    let mut stride = 128u32;
    while stride > 0 {
        if lid < stride { s[lid] += s[lid + stride]; }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    for q in 0..n {
        if q == 3 { break; }                                // every thread breaks together
        gpu::workgroup_barrier();
    }
    if n == 7 { return; }                                   // every thread returns together
    gpu::workgroup_barrier();
}
"""


def test_no_report_on_uniform_control_flow():
    r = import_source(UNIFORM_OK, "k.rs")
    assert r.diagnostics == [], r.render()


def test_atomic_read_is_uniform_but_other_atomic_results_are_not():
    base = HEAD + """#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(counts: &mut [u32]) {
    let c = gpu::atomic_add(counts, 0, ADD);
    if c > 10 { gpu::workgroup_barrier(); }
}
"""
    assert import_source(base.replace("ADD", "0"), "k.rs").diagnostics == []
    assert [d.code for d in import_source(base.replace("ADD", "1"), "k.rs").diagnostics] == ["G0042"]


def test_no_report_on_any_example():
    for name in sorted(os.listdir(os.path.join(REPO, "rust_examples"))):
        if name.endswith(".rs"):
            r = import_source(open(_example(name)).read(), name)
            assert r.diagnostics == [], r.render()


def test_may_mode_is_never_more_optimistic_than_must_mode(monkeypatch):
    """What the importer accepts as uniform may still be divergent for codegen; what it
    reports, codegen must treat as divergent (no `bar.sync`, no shuffles)."""
    import goldy_import.importer as importer
    monkeypatch.setattr(importer, "divergence_diagnostics", lambda *a, **k: [])  # keep rejected kernels
    for src in (BRANCH, AFTER_RETURN, COLLECTIVE_IN_BRANCH, THREAD_LOOP, BREAK_IN_LOOP, SOFTMAX_AFTER_CONTINUE,
                UNIFORM_OK):
        kernels = import_source(src, "k.rs").kernels
        assert kernels
        for k in kernels:
            reported = {id(f.stmt) for f in Uniformity(k, "must").findings}
            assert not reported & Uniformity(k, "may").aligned
            assert reported <= {id(f.stmt) for f in Uniformity(k, "may").findings}
    k = import_source(UNIFORM_OK, "k.rs").kernels[0]
    assert divergent_sync_points(k) == [] and Uniformity(k, "may").findings  # `s[0] > 0.0`
