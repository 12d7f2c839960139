"""The wgpu backend: adapter and limits, buffers and bindings, scalar updates, submits,
shader errors, and the exact numerics of the emitted WGSL against numpy references.
Every output is poisoned before the run; inputs are fresh random data each run (the seed
is in the failure message)."""

import os
from fractions import Fraction

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.wgsl import emit_wgsl_module
from oracle import device

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "snapshots", "wgsl", "cases")


@pytest.fixture(scope="module")
def dev():
    return device("wgpu")  # skips, or fails under GOLDY_REQUIRE_BACKENDS=wgpu, without an adapter


class _Rng:
    """A fresh generator that remembers its seed for failure messages."""

    def __init__(self):
        seed = int(np.random.SeedSequence().entropy % 2**32)
        self.gen = np.random.default_rng(seed)
        self.seed_text = f"seed {seed}"

    def __getattr__(self, name):
        return getattr(self.gen, name)


@pytest.fixture
def rng():
    return _Rng()


def _run(dev, src, kernel, args, grid, checks=True):
    mod = gi.load(src) if src.endswith(".rs") else gi.load_source(src, "test.rs")
    k = getattr(mod, kernel).prepare(dev, checks=checks)
    bufs = [dev.buffer(a) if isinstance(a, np.ndarray) else a for a in args]
    s = gi.Scheme(dev)
    b = k.record(s, kernel, *bufs)
    getattr(b, grid[0])(*grid[1:])
    s.submit()
    return [b.numpy() if isinstance(b, gi.Buffer) else None for b in bufs]


def _wide(rng, n):
    """f32 values with uniformly random bit patterns: every exponent, NaNs, infinities, subnormals."""
    return rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32).view(np.float32)


def _same(got, want, what):
    ok = (got == want) | (np.isnan(got) & np.isnan(want)) if got.dtype.kind == "f" else got == want
    bad = np.flatnonzero(~ok)
    assert not len(bad), f"{what}: {len(bad)} of {got.size} differ; first at {bad[0]}: got {got[bad[0]]!r}, want {want[bad[0]]!r}"


# ---------------------------------------------------------------- device


def test_adapter_limits_and_preference(dev):
    be = dev.backend
    lim, dl = be.limits, dict(be.device.limits)
    assert lim.max_workgroup_storage_bytes == dl["max-compute-workgroup-storage-size"]
    assert lim.max_storage_buffers_per_stage == dl["max-storage-buffers-per-shader-stage"]
    assert lim.max_invocations_per_workgroup == dl["max-compute-invocations-per-workgroup"]
    assert be.dispatch_cap == dl["max-compute-workgroups-per-dimension"]
    assert lim.max_workgroups == (2**32 - 1,) * 3  # the logical grid: folded past the cap (test_large_grids.py)
    assert lim.max_buffer_bytes <= dl["max-storage-buffer-binding-size"]
    import wgpu
    kinds = {a.info["backend_type"] for a in wgpu.gpu.enumerate_adapters_sync()}
    if "Vulkan" in kinds and be.info["adapter_type"] == "CPU":
        assert be.info["backend_type"] == "Vulkan"  # lavapipe rather than GL llvmpipe
    assert be.info["backend_type"] in be.describe()


def test_adapter_selection_by_substring(dev):
    with pytest.raises(gi.BackendUnavailable, match="no adapter matches 'no-such-gpu'.*available: "):
        gi.Device("wgpu", adapter="no-such-gpu")
    name = dev.backend.info["backend_type"]
    other = gi.Device("wgpu", adapter=name.lower())
    try:
        assert other.backend.info["backend_type"] == name
    finally:
        other.close()


def test_workgroup_storage_beyond_the_device_limit_is_refused_before_wgpu(dev):
    # arrays within the dialect's 16384 elements each, together past the device's limit
    limit = dev.limits.max_workgroup_storage_bytes // 4
    per = min(16384, limit)
    count = limit // per + 1
    decls = "\n".join(f"    let s{j} = gpu::workgroup_array::<f32, {per}>();" for j in range(count))
    uses = " + ".join(f"s{j}[i]" for j in range(count))
    src = f"""
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn big(y: &mut [f32]) {{
{decls}
    let i = gpu::global_id().x;
    s0[i] = 1.0;
    gpu::workgroup_barrier();
    if i < y.len() {{ y[i] = {uses}; }}
}}
"""
    with pytest.raises(gi.DeviceLimitError, match="max_workgroup_storage_bytes"):
        gi.load_source(src, "big.rs").big.prepare(dev)


# ---------------------------------------------------------------- memory and bindings

SAXPY = os.path.join(CASES, "saxpy.rs")


def test_unaligned_byte_writes_and_reads(dev, rng):
    be = dev.backend
    h = be.alloc(10)
    try:
        assert h.size == 12
        be.write(h, 0, memoryview(bytes(12)))
        data = rng.integers(0, 256, 5, dtype=np.uint8).tobytes()
        be.write(h, 3, memoryview(data))
        assert be.read(h, 0, 12) == bytes(3) + data + bytes(4)
        assert be.read(h, 5, 2) == data[2:4]
    finally:
        be.free(h)


@pytest.mark.parametrize("xo,yo", [(0, 0), (1, 3), (7, 8), (13, 64), (33, 5)])
def test_views_at_any_element_offset(dev, rng, xo, yo):
    n = 100
    x = rng.standard_normal(200).astype(np.float32)
    y0 = rng.standard_normal(200).astype(np.float32)
    xb, yb = dev.buffer(x), dev.buffer(y0)
    k = gi.load(SAXPY).saxpy.prepare(dev)
    s = gi.Scheme(dev)
    k.record(s, "view", xb[xo:xo + n], yb[yo:yo + n], 2.0).over_1d(n + 50)
    s.submit()
    want = y0.copy()
    want[yo:yo + n] = np.float32(2.0) * x[xo:xo + n] + y0[yo:yo + n]
    _same(yb.numpy(), want, f"offsets {xo}, {yo} ({rng.seed_text})")


def test_struct_elements_at_an_offset_that_is_not_binding_aligned(dev, rng):
    src = """
use goldy::gpu;
#[goldy::gpu]
struct Tri { a: [f32; 3], b: [f32; 3], c: [f32; 3] }
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn area(t: &[Tri], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let q = t[i];
        out[i] = q.a.x + q.b.y * 2.0 + q.c.z * 4.0;
    }
}
"""
    mod = gi.load_source(src, "tri.rs")
    n = 40
    host = np.zeros(n, dtype=mod.Tri.host_dtype)
    for f in ("a", "b", "c"):
        host[f] = rng.standard_normal((n, 3)).astype(np.float32)
    tb = dev.buffer(host)
    assert tb.dtype.itemsize == 48
    out = dev.buffer(np.full(n - 1, np.nan, np.float32))
    s = gi.Scheme(dev)
    mod.area.prepare(dev).record(s, "a", tb[1:], out).over_1d(n - 1)
    s.submit()
    h = host[1:]
    want = (h["a"][:, 0] + h["b"][:, 1] * np.float32(2) + h["c"][:, 2] * np.float32(4)).astype(np.float32)
    _same(out.numpy(), want, rng.seed_text)


def test_out_of_range_loads_read_zero_and_stores_are_dropped(dev, rng):
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn spill(x: &[f32], y: &mut [f32], shift: u32) {
    let i = gpu::global_id().x;
    y[i + shift] = x[i * 3] + 1.0;
}
"""
    x = rng.standard_normal(300).astype(np.float32)
    big = rng.standard_normal(300).astype(np.float32)
    xb, yb = dev.buffer(x), dev.buffer(big)
    s = gi.Scheme(dev)
    # the silent guard of run-time checks off (with them on this faults: tests/test_traps.py)
    spill = gi.load_source(src, "spill.rs").spill.prepare(dev, checks=False)
    spill.record(s, "s", xb[:20], yb[100:130], 5).groups((2, 1, 1))
    s.submit()
    want = big.copy()
    i = np.arange(25)
    loads = np.where(i * 3 < 20, x[np.minimum(i * 3, 19)], np.float32(0))
    want[105:130] = loads + np.float32(1)
    _same(yb.numpy(), want, rng.seed_text)


def test_empty_buffers_bind(dev, rng):
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn lens(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x.len() as f32 + x[i]; }
}
"""
    y = dev.buffer(np.full(10, np.nan, np.float32))
    s = gi.Scheme(dev)
    lens = gi.load_source(src, "lens.rs").lens.prepare(dev, checks=False)  # x[i] is out of range
    lens.record(s, "e", dev.empty(0, np.float32), y).over_1d(10)
    s.submit()
    _same(y.numpy(), np.zeros(10, np.float32), "empty input")


def test_one_buffer_read_through_one_view_and_written_through_another(dev, rng):
    n = 64
    data = rng.standard_normal(2 * n).astype(np.float32)
    b = dev.buffer(data)
    s = gi.Scheme(dev)
    gi.load(SAXPY).saxpy.prepare(dev).record(s, "alias", b[:n], b[n:], 3.0).over_1d(n)
    s.submit()
    want = data.copy()
    want[n:] = np.float32(3) * data[:n] + data[n:]
    _same(b.numpy(), want, rng.seed_text)


def test_scalar_updates_rewrite_the_uniform_block_without_rerecording(dev, rng):
    n = 1000
    x = rng.standard_normal(n).astype(np.float32)
    xb, yb = dev.buffer(x), dev.buffer(np.zeros(n, np.float32))
    s = gi.Scheme(dev)
    node = gi.load(SAXPY).saxpy.prepare(dev).record(s, "s", xb, yb, 2.0).over_1d(n)
    state = node.dispatch.state
    group = state.bind_group
    s.submit()
    s.set_node_param(node, "a", -0.5)
    s.submit()
    assert node.dispatch.state is state and state.bind_group is group and s.stats.records == 1
    _same(yb.numpy(), np.float32(-0.5) * x + np.float32(2) * x, rng.seed_text)


def test_all_dispatches_of_a_submit_share_one_command_buffer_in_order(dev):
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn step(y: &mut [u32], k: u32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = y[i] * 3 + k; }
}
"""
    n = 200
    yb = dev.buffer(np.zeros(n, np.uint32))
    k = gi.load_source(src, "step.rs").step.prepare(dev)
    s = gi.Scheme(dev)
    for j in range(12):
        k.record(s, f"step{j}", yb, j).over_1d(n)
    be = dev.backend
    calls = []
    real = be.queue

    class Counting:
        def __getattr__(self, name):
            return getattr(real, name)

        def submit(self, buffers):
            calls.append(len(buffers))
            real.submit(buffers)

    be.queue = Counting()
    try:
        s.submit()
    finally:
        be.queue = real
    assert calls == [1]
    want = 0
    for j in range(12):
        want = (want * 3 + j) & 0xFFFFFFFF
    _same(yb.numpy(), np.full(n, want, np.uint32), "chained dispatches")


def test_a_rejected_shader_names_the_wgsl_line_and_the_rust_span(dev):
    k = gi.load(SAXPY).saxpy.definition().ir
    module = emit_wgsl_module(k)
    lines = module.code.split("\n")
    ln = next(i + 1 for i, t in enumerate(lines) if "gi_store_y(" in t and module.span_of_line(i + 1))
    lines[ln - 1] = "        let broken: u32 = 1.5f;"
    module.code = "\n".join(lines)
    with pytest.raises(gi.BackendError) as e:
        dev.backend.shader_module(module)
    msg = str(e.value)
    sp = module.span_of_line(ln)
    assert f"generated WGSL line {ln}: let broken: u32 = 1.5f;" in msg
    assert f"saxpy.rs:{sp.line}:{sp.col}" in msg and sp.line == 8
    assert "kernel `saxpy`" in msg


# ---------------------------------------------------------------- numerics

NUMERICS = os.path.join(CASES, "numerics.rs")


@pytest.fixture(scope="module")
def flushing_dev(dev):
    """A wgpu device that computes as on a driver flushing f32 subnormals (NVIDIA's Vulkan
    driver): the exact path for zero and subnormal operands and results, run here too."""
    d = gi.Device("wgpu")
    d.backend.__dict__["flushes_subnormals"] = True  # the probe's answer, overridden
    yield d
    d.close()


def test_the_subnormal_probe_answers():
    assert isinstance(device("wgpu").backend.flushes_subnormals, bool)


@pytest.mark.parametrize("mode", ["plain", "exact_subnormals"])
def test_floor_ceil_trunc_of_subnormals(mode, request):
    dev = request.getfixturevalue("dev" if mode == "plain" else "flushing_dev")
    src = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rounding(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() { y[3 * i] = x[i].floor(); y[3 * i + 1] = x[i].ceil(); y[3 * i + 2] = x[i].trunc(); }
}
"""
    x = np.array([1.1754942e-38, -1.4e-45, 1e-40, -1e-40, 0.5, -0.5, -0.0, 0.0, 2.5, -2.5], np.float32)
    k = gi.load_source(src, "rounding.rs").rounding.prepare(dev)
    xb, yb = dev.buffer(x), dev.buffer(np.full(3 * len(x), np.nan, np.float32))
    s = gi.Scheme(dev)
    k.record(s, "r", xb, yb).over_1d(len(x))
    s.submit()
    want = np.stack([np.floor(x), np.ceil(x), np.trunc(x)], axis=1).reshape(-1)
    assert yb.numpy().tobytes() == want.tobytes()  # signed zeros included


@pytest.mark.parametrize("mode", ["plain", "exact_subnormals"])
def test_float_ops_are_bit_exact(mode, request, rng):
    dev = request.getfixturevalue("dev" if mode == "plain" else "flushing_dev")
    n = 20000
    a = np.concatenate([rng.standard_normal(n // 2).astype(np.float32), _wide(rng, n - n // 2)])
    b = np.concatenate([rng.standard_normal(n // 2).astype(np.float32), _wide(rng, n - n // 2)])
    a[:8] = [0, -0.0, np.inf, -np.inf, np.nan, 1.0, 5e-45, 3.4e38]
    b[:8] = [0, 1, np.inf, 2, 3, 0, 3e-45, 1e-38]
    # quotients exactly halfway between two subnormals: ties go to even
    a[8:12] = np.array([3, 1, 5, 0x00800001], np.uint32).view(np.float32)
    b[8:12] = [2, 2, -2, 2]
    out, ints = _run(dev, NUMERICS, "float_ops",
                     [a, b, np.full(10 * n, np.nan, np.float32), np.full(2 * n, -7, np.int32), n],
                     ("over_1d", n))[2:4]
    got = out.reshape(n, 10)
    with np.errstate(all="ignore"):
        x64 = a.astype(np.float64)
        t = np.trunc(x64)
        rnd = np.where(np.abs(x64 - t) >= 0.5, t + np.sign(x64), t).astype(np.float32)
        lo, hi = np.float32(-1), np.abs(b)  # Rust's f32::clamp: `x < lo`, then `x > hi` (NaN stays NaN)
        clamp = np.where(a < lo, lo, np.where(a > hi, hi, a))
        flip = (a.view(np.uint32) ^ np.uint32(0x80000000)).view(np.float32)
        want = [a / b, np.sqrt(a), np.fmod(a, b), np.fmin(a, b), np.fmax(a, b), rnd, a * b + b, None, clamp, flip]
        sat_i = np.clip(np.trunc(np.nan_to_num(x64, nan=0.0)), -2**31, 2**31 - 1).astype(np.int64)
        sat_u = np.clip(np.trunc(np.nan_to_num(b.astype(np.float64), nan=0.0)), 0, 2**32 - 1).astype(np.int64)
    names = ["/", "sqrt", "%", "min", "max", "round", "a*b+b (no contraction)", "fma", "clamp", "bits"]
    for j, w in enumerate(want):
        if w is not None:
            _same(got[:, j], w.astype(np.float32), f"{names[j]} ({rng.seed_text})")
    fin = np.isfinite(a) & np.isfinite(b) & (np.abs(a) < 1e18) & (np.abs(b) < 1e18)
    want_fma = np.array([_fma_exact(x, y, y) for x, y in zip(a[fin][:2000], b[fin][:2000])], np.float32)
    _same(got[fin, 7][:2000], want_fma, f"mul_add ({rng.seed_text})")
    _same(ints[0::2], sat_i.astype(np.int32), f"f32 as i32 ({rng.seed_text})")
    _same(ints[1::2], sat_u.astype(np.uint32).view(np.int32), f"f32 as u32 ({rng.seed_text})")


def _fma_exact(x, y, z) -> float:
    """a * b + c rounded once to f32 (ties to even), from exact rationals."""
    v = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
    if v == 0:
        return float(np.float32(float(x) * float(y) + float(z)))
    if abs(v) >= Fraction(2**128 - 2**103):
        return float("inf") if v > 0 else float("-inf")
    f = np.float32(float(v))
    cands = [np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))]
    return float(min(cands, key=lambda c: (abs(Fraction(float(c)) - v), int(c.view(np.uint32)) & 1)))


def test_mul_add_is_fused_and_rounds_once(dev, rng):
    src = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn f(a: &[f32], b: &[f32], c: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = a[i].mul_add(b[i], c[i]); }
}
"""
    n = 3000
    third = n // 3
    a = np.concatenate([rng.standard_normal(third).astype(np.float32), _wide(rng, third),
                        rng.standard_normal(n - 2 * third).astype(np.float32)])
    b = np.concatenate([rng.standard_normal(third).astype(np.float32), _wide(rng, third),
                        rng.standard_normal(n - 2 * third).astype(np.float32)])
    c = np.concatenate([rng.standard_normal(third).astype(np.float32), _wide(rng, third),
                        -(a[2 * third:] * b[2 * third:])])  # cancellation leaves only the product's error
    a[:50] *= np.float32(1e-20)
    b[:50] *= np.float32(1e-20)  # products in the subnormal range
    got = _run(dev, src, "f", [a, b, c, np.full(n, np.nan, np.float32)], ("over_1d", n))[3]
    fin = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    with np.errstate(all="ignore"):
        special = (a.astype(np.float64) * b + c).astype(np.float32)  # inf/nan propagation
    want = np.array([_fma_exact(x, y, z) if f else s for x, y, z, f, s in zip(a, b, c, fin, special)], np.float32)
    _same(got, want, rng.seed_text)


def _trunc_divmod(x: int, y: int) -> tuple[int, int]:
    if y == 0:
        return 0, 0
    q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
    return q, x - q * y


def test_int_ops_follow_rust(dev, rng):
    n = 20000
    a = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    b = rng.integers(-2**31, 2**31, n, dtype=np.int64).astype(np.int32)
    b[: n // 4] = rng.integers(-40, 40, n // 4)
    a[:4], b[:4] = [-2**31, -2**31, 7, -7], [-1, 0, 0, -1]
    u = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    v = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    v[: n // 4] = rng.integers(0, 70, n // 4)
    v[4] = 0
    out, uout = _run(dev, NUMERICS, "int_ops", [a, b, u, v, np.full(8 * n, -3, np.int32),
                                                  np.full(8 * n, 0xDEADBEEF, np.uint32), n], ("over_1d", n),
                    checks=False)[4:6]  # division by zero gives 0 without run-time checks
    out, uout = out.reshape(n, 8), uout.reshape(n, 8)
    qr = np.array([_trunc_divmod(x, y) for x, y in zip(a.tolist(), b.tolist())], np.int64)

    def wrap(x):
        return (np.asarray(x, np.int64) & 0xFFFFFFFF).astype(np.uint32).view(np.int32)

    a64, b64 = a.astype(np.int64), b.astype(np.int64)
    with np.errstate(all="ignore"):
        want = [wrap(qr[:, 0]), wrap(qr[:, 1]), wrap(a64 << (b64 & 31)), a >> (v & 31).astype(np.int32),
                wrap(np.abs(a64)), wrap(-a64 * 3 + b64), np.maximum(np.minimum(a, b), -5), ~a]
        vz = np.where(v == 0, 1, v)
        uwant = [np.where(v == 0, 0, u // vz), np.where(v == 0, 0, u % vz),
                 (u.astype(np.uint64) << (b64 & 31).astype(np.uint64)).astype(np.uint32), u >> (v & 31),
                 a.astype(np.float32).view(np.uint32), u.astype(np.float32).view(np.uint32),
                 np.clip(u, 10, 1000000), (a.view(np.uint32).astype(np.uint64) + u).astype(np.uint32)]
    for j in range(8):
        _same(out[:, j], np.asarray(want[j], np.int32), f"i32 op {j} ({rng.seed_text})")
        _same(uout[:, j], np.asarray(uwant[j], np.uint32), f"u32 op {j} ({rng.seed_text})")


TRANSCENDENTAL_RTOL, TRANSCENDENTAL_ATOL = 2e-6, 1e-6  # docs/semantics.md


def test_vector_ops_and_transcendentals(dev, rng):
    n = 4000
    x = (rng.uniform(-100, 100, n)).astype(np.float32)
    got = _run(dev, NUMERICS, "vector_ops", [x, np.full(12 * n, np.nan, np.float32), n], ("over_1d", n))[1]
    got = got.reshape(n, 12)
    f = np.float32
    v = np.stack([x, x * f(0.5), f(1) - x, np.full(n, 2, f)], 1)
    w = np.stack([np.full(n, 0.25, f), x, -x, np.full(n, 3, f)], 1)
    d = v[:, 0] * w[:, 0] + v[:, 1] * w[:, 1]
    d = d + v[:, 2] * w[:, 2]
    d = d + v[:, 3] * w[:, 3]
    ln = v[:, 0] * v[:, 0] + v[:, 1] * v[:, 1]
    ln = np.sqrt(ln + v[:, 2] * v[:, 2])
    s = (v + w * f(2)) / f(3)
    exact = {3: d, 4: ln, 5: v[:, 2] + f(7), 6: (v * w - v)[:, 3], 7: s[:, 1] + s[:, 2],
             8: np.fmax(v, w)[:, 0] + np.fmin(v, w)[:, 1], 11: np.floor(x) + np.ceil(x) * f(2) + np.trunc(x) * f(4)}
    for j, want in exact.items():
        _same(got[:, j], want.astype(np.float32), f"column {j} ({rng.seed_text})")
    x64 = x.astype(np.float64)
    approx = {0: np.sin(x64) + np.cos(x64),
              1: np.exp(x64 * 0.1) + np.log(np.abs(x64)) - np.log2(np.abs(x64) + 1),
              2: np.abs(x64) ** 1.5 - 8.0, 9: np.tan(x64 * 0.01), 10: np.exp2(x64 * 0.5)}
    for j, want in approx.items():
        np.testing.assert_allclose(got[:, j], want, rtol=TRANSCENDENTAL_RTOL * 4, atol=TRANSCENDENTAL_ATOL * 4,
                                   err_msg=f"column {j} ({rng.seed_text})")
