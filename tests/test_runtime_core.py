"""The device-independent runtime: buffers, prepare cache, schemes, and record-time
validation (each failure a GoldyError naming kernel, parameter, expected and actual, with
nothing recorded)."""

import threading

import numpy as np
import pytest

import goldy_import as gi

SAXPY = """
use goldy::gpu;
/// y = a * x + y
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale_u32(src: &[u32], dst: gpu::Scattered<u32>, k: u32, s: i32) {
    let i = gpu::global_id().x;
    if i < src.len() { dst[i] = src[i] * k + (s as u32); }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn add2(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { out[i] = a[i] + b[i]; }
}
#[goldy::gpu]
struct Vertex { position: [f32; 3], uv: [f32; 2] }
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn uv_sum(verts: &[Vertex], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() { let v = verts[i]; out[i] = v.uv.x + v.uv.y + v.position.z; }
}
"""


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SAXPY, "core_test.rs")


@pytest.fixture(scope="module")
def dev():
    return gi.Device("cpu")


def rnd(n, seed=None):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_saxpy_end_to_end_and_replay_with_new_scalar(mod, dev):
    x, y = rnd(1000), rnd(1000)
    bx, by = dev.buffer(x), dev.buffer(y)
    k = mod.saxpy.prepare(dev)
    scheme = gi.Scheme(dev)
    node = k.record(scheme, "saxpy", bx, by, 2.0).over_1d(1000)
    scheme.submit()
    y1 = np.float32(2.0) * x + y
    np.testing.assert_array_equal(by.numpy(), y1)
    scheme.set_node_param(node, "a", -1.5)
    scheme.submit()
    np.testing.assert_array_equal(by.numpy(), np.float32(-1.5) * x + y1)
    scheme.set_node_param(node, 2, 0.0)
    scheme.submit()
    np.testing.assert_array_equal(by.numpy(), np.float32(-1.5) * x + y1)
    assert (scheme.stats.records, scheme.stats.submits, scheme.stats.dispatches) == (1, 3, 3)


def test_set_node_param_refusals_hold_after_the_slot_was_accepted(mod, dev):
    """set_node_param remembers a slot or name that passed; the refusals still hold
    afterwards: a bool or float slot, a non-scalar, out-of-range and mistyped values,
    each a BindingError naming kernel and parameter, the node unchanged."""
    k = mod.scale_u32.prepare(dev)
    src, dst = dev.buffer(np.arange(8, dtype=np.uint32)), dev.zeros(8, np.uint32)
    s = gi.Scheme(dev)
    node = k.record(s, "p", src, dst, 2, 0).over_1d(8)
    s.set_node_param(node, 2, 3)
    s.set_node_param(node, "k", 3)
    s.set_node_param(node, 3, -1)
    for slot, value, message in [(True, 3, "slot"), (2.0, 3, "slot"), ("src", 3, "not a scalar"),
                                 (0, 3, "not a scalar"), ("k", -1, "out of range for u32"),
                                 (2, 2 ** 32, "out of range for u32"), ("k", 1.5, "expected an int"),
                                 ("k", True, "expected an int"), (3, 2 ** 31, "out of range for i32"),
                                 ("nope", 1, "no parameter `nope`")]:
        with pytest.raises(gi.BindingError, match=message) as e:
            s.set_node_param(node, slot, value)
        assert "scale_u32" in str(e.value)
    s.submit()
    np.testing.assert_array_equal(dst.numpy(), np.arange(8, dtype=np.uint32) * 3 - 1)


def test_prepare_compiles_once_per_device(mod, monkeypatch):
    dev = gi.Device("cpu")
    calls = []
    real = dev.backend.compile
    monkeypatch.setattr(dev.backend, "compile", lambda k, o: calls.append(k.name) or real(k, o))
    a = mod.saxpy.prepare(dev)
    b = mod.saxpy.prepare(dev)
    assert a.prepared is b.prepared and calls == ["saxpy"]
    mod.saxpy.prepare(dev, checks=False)
    assert calls == ["saxpy", "saxpy"]


def test_invoke_gives_an_invocation_recorded_later(mod, dev):
    x, y = rnd(100), rnd(100)
    bx, by = dev.buffer(x), dev.buffer(y)
    inv = mod.saxpy.prepare(dev).invoke(bx, by, 3.0).over_1d(100)
    assert isinstance(inv, gi.Invocation) and inv.groups == (2, 1, 1)
    scheme = gi.Scheme(dev)
    inv.record(scheme, "later")
    scheme.submit()
    np.testing.assert_array_equal(by.numpy(), np.float32(3.0) * x + y)


def test_no_grid_call_records_nothing(mod, dev):
    scheme = gi.Scheme(dev)
    mod.saxpy.prepare(dev).record(scheme, "pending", dev.buffer(rnd(4)), dev.buffer(rnd(4)), 1.0)
    assert scheme.nodes == [] and scheme.stats.records == 0


def expect_error(scheme, exc, match, fn):
    with pytest.raises(exc, match=match):
        fn()
    assert scheme.nodes == [] and scheme.stats.records == 0


def test_wrong_argument_count(mod, dev):
    s = gi.Scheme(dev)
    k = mod.saxpy.prepare(dev)
    expect_error(s, gi.BindingError, r"kernel `saxpy` takes 3 arguments \(x: &\[f32\], y: &mut \[f32\], a: f32\), got 2",
                 lambda: k.prepared.record(s, "n", dev.buffer(rnd(4)), dev.buffer(rnd(4))).over_1d(4))


def test_wrong_element_type(mod, dev):
    s = gi.Scheme(dev)
    k = mod.saxpy.prepare(dev)
    expect_error(s, gi.BindingError,
                 r"kernel `saxpy` parameter `x` \(&\[f32\]\): expected a Buffer of f32, got a Buffer of u32",
                 lambda: k.record(s, "n", dev.buffer(np.arange(4, dtype=np.uint32)), dev.buffer(rnd(4)), 1.0).over_1d(4))
    expect_error(s, gi.BindingError, r"parameter `y` .*numpy array.*device.buffer",
                 lambda: k.record(s, "n", dev.buffer(rnd(4)), rnd(4), 1.0).over_1d(4))


@pytest.mark.parametrize("k_value,s_value,match", [
    (-1, 0, r"parameter `k` \(u32\): value -1 is out of range for u32 \(0..=4294967295\)"),
    (2**32, 0, r"value 4294967296 is out of range for u32"),
    (1.5, 0, r"parameter `k` \(u32\): expected an int .* got float 1.5"),
    (True, 0, r"parameter `k` \(u32\): expected an int"),
    (1, 2**31, r"parameter `s` \(i32\): value 2147483648 is out of range for i32"),
])
def test_scalar_out_of_range(mod, dev, k_value, s_value, match):
    s = gi.Scheme(dev)
    k = mod.scale_u32.prepare(dev)
    src = dev.buffer(np.arange(8, dtype=np.uint32))
    dst = dev.empty(8, np.uint32)
    expect_error(s, gi.BindingError, match, lambda: k.record(s, "n", src, dst, k_value, s_value).over_1d(8))


def test_f32_scalar_overflow_rejected(mod, dev):
    s = gi.Scheme(dev)
    k = mod.saxpy.prepare(dev)
    expect_error(s, gi.BindingError, r"parameter `a` \(f32\): value 1e\+39 is out of range for f32",
                 lambda: k.record(s, "n", dev.buffer(rnd(4)), dev.buffer(rnd(4)), 1e39).over_1d(4))


def test_buffer_from_another_device(mod, dev):
    other = gi.Device("cpu")
    s = gi.Scheme(dev)
    k = mod.saxpy.prepare(dev)
    expect_error(s, gi.BindingError, r"parameter `x` .*: the buffer lives on Device\('cpu'",
                 lambda: k.record(s, "n", other.buffer(rnd(4)), dev.buffer(rnd(4)), 1.0).over_1d(4))


def test_read_only_buffer_bound_to_mut(mod, dev):
    s = gi.Scheme(dev)
    k = mod.saxpy.prepare(dev)
    ro = dev.buffer(rnd(4), read_only=True)
    expect_error(s, gi.BindingError, r"parameter `y` \(&mut \[f32\]\): the kernel writes this parameter, but the buffer is read-only",
                 lambda: k.record(s, "n", dev.buffer(rnd(4)), ro, 1.0).over_1d(4))
    k.record(s, "ok", ro, dev.buffer(rnd(4)), 1.0).over_1d(4)  # read-only into &[f32] is fine
    assert len(s.nodes) == 1


def test_aliasing_rule(mod, dev):
    s = gi.Scheme(dev)
    saxpy = mod.saxpy.prepare(dev)
    add2 = mod.add2.prepare(dev)
    buf = dev.buffer(rnd(100))
    expect_error(s, gi.AliasingError, r"kernel `saxpy`: parameters `x` and `y` are bound to overlapping memory",
                 lambda: saxpy.record(s, "n", buf[0:50], buf[1:51], 1.0).over_1d(50))
    # the very same view for `x` and `y` is an in-place saxpy (tests/test_in_place.py)
    expect_error(s, gi.AliasingError, r"`out` is written",
                 lambda: add2.record(s, "n", buf[0:50], buf[10:20], buf[40:90]).over_1d(50))
    # two read parameters may share memory; disjoint views of one buffer are fine
    add2.record(s, "ok", buf[0:50], buf[0:50], buf[50:100]).over_1d(50)
    s.submit()
    host = buf.numpy()
    assert len(s.nodes) == 1
    np.testing.assert_array_equal(host[50:], host[:50] + host[:50])


def test_empty_and_oversized_grids(mod, dev):
    s = gi.Scheme(dev)
    k = mod.saxpy.prepare(dev)
    args = (dev.buffer(rnd(4)), dev.buffer(rnd(4)), 1.0)
    expect_error(s, gi.GridError, r"over_1d\(0\).* is an empty grid", lambda: k.record(s, "n", *args).over_1d(0))
    expect_error(s, gi.GridError, r"groups \(1, 0, 1\) is an empty grid", lambda: k.record(s, "n", *args).groups((1, 0, 1)))
    too_many = dev.limits.max_workgroups[1] + 1  # along y: 1-thread rows, so below 2^32 threads
    expect_error(s, gi.GridError, r"workgroups along axis y exceed .* max_workgroups\[1\]",
                 lambda: k.record(s, "n", *args).groups((1, too_many, 1)))
    expect_error(s, gi.GridError, r"is u32: at most 2\^32 threads along each axis",  # x: 2^31 groups of 64
                 lambda: k.record(s, "n", *args).groups((dev.limits.max_workgroups[0] + 1, 1, 1)))


def test_struct_buffers_use_gpu_layout(mod, dev):
    assert mod.Vertex.host_dtype.itemsize == 20 and mod.Vertex.dtype.itemsize == 32
    assert [mod.Vertex.dtype.fields[f][1] for f in ("position", "uv")] == [0, 16]
    n = 77
    v = np.zeros(n, mod.Vertex.host_dtype)
    rng = np.random.default_rng()
    v["position"] = rng.standard_normal((n, 3))
    v["uv"] = rng.standard_normal((n, 2))
    bv = dev.buffer(v)
    assert bv.nbytes == n * 32
    back = bv.numpy()
    np.testing.assert_array_equal(back["uv"], v["uv"])
    out = dev.empty(n, np.float32)
    s = gi.Scheme(dev)
    mod.uv_sum.prepare(dev).record(s, "uv", bv, out, ).over_1d(n)
    s.submit()
    want = (v["uv"][:, 0] + v["uv"][:, 1]) + v["position"][:, 2]
    np.testing.assert_array_equal(out.numpy(), want.astype(np.float32))
    wrong = dev.buffer(np.zeros(n, [("position", "<f4", (3,)), ("st", "<f4", (2,))]))
    expect_error(gi.Scheme(dev), gi.BindingError, r"parameter `verts` \(&\[Vertex\]\): expected a Buffer of Vertex",
                 lambda: mod.uv_sum.prepare(dev).record(gi.Scheme(dev), "n", wrong, out).over_1d(n))


def test_bool_buffers_round_trip(dev):
    b = dev.buffer(np.array([True, False, True]))
    assert b.elem == "bool" and b.numpy().dtype == np.bool_
    np.testing.assert_array_equal(b.numpy(), [True, False, True])


def test_buffer_write_and_errors(dev):
    b = dev.buffer(np.zeros(5, np.float32))
    b.write(np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(b.numpy(), np.arange(5))
    with pytest.raises(gi.BindingError, match="buffer has 5 elements, got 4"):
        b.write(np.zeros(4, np.float32))
    with pytest.raises(gi.BindingError, match="unsupported buffer element type float64"):
        dev.buffer(np.zeros(3))


def test_freed_buffer_and_closed_device(mod):
    dev = gi.Device("cpu")
    x, y = dev.buffer(rnd(8)), dev.buffer(rnd(8))
    k = mod.saxpy.prepare(dev)
    s = gi.Scheme(dev)
    k.record(s, "n", x, y, 1.0).over_1d(8)
    x.free()
    with pytest.raises(gi.BindingError, match="freed"):
        s.submit()
    with pytest.raises(gi.BindingError, match="freed"):
        k.record(gi.Scheme(dev), "n", x, y, 1.0)
    dev.close()
    with pytest.raises(gi.GoldyError, match="closed"):
        gi.Scheme(dev).submit()
    with pytest.raises(gi.GoldyError, match="closed"):
        dev.buffer(rnd(3))
    # the process keeps working
    fresh = gi.Device("cpu")
    assert fresh.buffer(rnd(3)).numpy().shape == (3,)


def test_recording_from_two_threads(mod, dev):
    k = mod.saxpy.prepare(dev)
    results, errors = {}, []

    def work(tid):
        try:
            x, y = rnd(500, tid), rnd(500, tid + 100)
            bx, by = dev.buffer(x), dev.buffer(y)
            s = gi.Scheme(dev)
            for _ in range(20):
                k.record(s, f"t{tid}", bx, by, 1.0).over_1d(500)
            s.submit()
            results[tid] = (by.numpy(), x, y)
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(2)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert not errors
    for got, x, y in results.values():
        want = y.copy()
        for _ in range(20):
            want = x + want
        np.testing.assert_array_equal(got, want)


def test_unknown_and_missing_backends():
    with pytest.raises(gi.BackendUnavailable, match="unknown backend 'metal'"):
        gi.Device("metal")
    if not gi.backend_available("cuda"):
        with pytest.raises(gi.BackendUnavailable, match="cuda"):
            gi.Device("cuda")


def test_auto_picks_an_available_backend():
    d = gi.Device("auto")
    assert d.backend_name in ("cpu", "wgpu", "cuda", "slang")


def test_allocation_beyond_device_limit(dev):
    with pytest.raises(gi.DeviceLimitError, match="max_buffer_bytes"):
        dev.empty(dev.limits.max_buffer_bytes // 4 + 1, np.float32)
    assert dev.buffer(rnd(3)).numpy().shape == (3,)


def test_bad_source_raises_diagnostic_error():
    with pytest.raises(gi.DiagnosticError) as e:
        gi.load_source("#[goldy::compute]\nfn k(x: &[f64]) {}\n", "bad.rs")
    assert "error[G0" in str(e.value) and "bad.rs:2:" in str(e.value)
    assert e.value.diagnostics


def test_recording_on_a_closed_device_fails_at_record(mod):
    dev = gi.Device("cpu")
    k = mod.saxpy.prepare(dev)
    x, y = dev.buffer(rnd(4)), dev.buffer(rnd(4))
    s = gi.Scheme(dev)
    dev.close()
    with pytest.raises(gi.GoldyError, match="closed"):
        k.record(s, "late", x, y, 1.0)
    assert s.nodes == []


@pytest.mark.parametrize("raw,on", [("0", False), ("false", False), (" OFF ", False), ("No", False),
                                    ("1", True), ("yes", True), ("", None)])
def test_on_off_variables_read_one_way(mod, dev, monkeypatch, raw, on):
    """GOLDY_BOUNDS_CHECKS (default on) and GOLDY_FUSION (default off) take the same
    spellings of off, in any case; empty means the default."""
    from goldy_import.runtime.autofusion import fusion_enabled_by_env
    monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", raw)
    monkeypatch.setenv("GOLDY_FUSION", raw)
    assert mod.saxpy.prepare(gi.Device("cpu")).prepared.options.checks is (True if on is None else on)
    assert fusion_enabled_by_env() is (False if on is None else on)
