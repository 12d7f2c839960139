"""Fusion on every backend: explicit FusedKernels (forwarding, shared bindings, scalar
slots, ids, each rejection), automatic fusion of a Scheme (promotion, fallback, the
cache, compile failures), scheme temporaries (pooling, lifetime sharing, elision, refused
read-back). Fused, conservative and unfused runs must give the CPU oracle's bits, on
fresh random data, with outputs poisoned before each run."""

import os

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir import pipeline
from goldy_import.runtime.backend import Limits
from goldy_import.runtime.temporaries import TransientPool
from oracle import assert_same, backend_or_skip, device
from test_ptx import ptxas  # noqa: F401  (the fixture: required in CI, else skipped)

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]

SRC = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale(x: &[f32], t: &mut [f32], n: u32, s: f32) {
    let i = gpu::global_id().x;
    if i >= n { return; }
    t[i] = x[i] * s;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn bias(t: &[f32], y: &mut [f32], n: u32, b: f32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = t[i] + b; }
}

/// A loop whose `return` must end only this stage.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn steps(t: &mut [f32], n: u32, limit: f32) {
    let i = gpu::global_id().x;
    if i >= n { return; }
    let mut k = 0u32;
    while k < 6u32 {
        if t[i] > limit { return; }
        t[i] = t[i] * 2.0 + 0.25;
        k += 1u32;
    }
    t[i] = t[i] - 100.0;
}

/// Workgroup memory, a barrier after a uniform `return`.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn rev(x: &[f32], t: &mut [f32], groups: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    if gpu::workgroup_id().x >= groups { return; }
    let l = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[l] = x[i];
    gpu::workgroup_barrier();
    t[i] = s[63u32 - l];
}

/// Reads its neighbour's element: not the thread's own index.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shift(t: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i + 1u32 < n { y[i] = t[i + 1u32]; }
}

#[goldy::compute(workgroup_size = [128, 1, 1])]
fn bias128(t: &[f32], y: &mut [f32], n: u32, b: f32) {
    let i = gpu::global_id().x;
    if i < n { y[i] = t[i] + b; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mix_u32(a: &[u32], b: &mut [u32], n: u32, k: u32) {
    let i = gpu::global_id().x;
    if i < n { b[i] = (a[i] ^ b[i]) * k + (b[i] >> 3u32); }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn big_shared(x: &[f32], y: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 8192>();
    let l = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[l] = x[i];
    gpu::workgroup_barrier();
    y[i] = s[l];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tscale(#[tensor(shape = [n])] x: gpu::Tensor<f32>, #[tensor(shape = [n])] y: gpu::TensorWrite<f32>) {
    let i = gpu::global_id().x;
    if i < x.len() { y[i] = x[i] * 2.0; }
}
"""

N = 640  # 10 workgroups of 64


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "fusion_test.rs")


def rng_data(n=N, seed=None):
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def poisoned(dev, n=N):
    return dev.buffer(np.full(n, np.nan, np.float32))


def chain(mod, dev, x, t, y):
    """rev -> steps -> bias -> scale: barrier, loop returns, forwarding of t twice."""
    k = {name: getattr(mod, name).prepare(dev) for name in ("rev", "steps", "bias", "scale")}
    return [k["rev"].invoke(x, t, 8).over_1d(N), k["steps"].invoke(t, N, 1.5).over_1d(N),
            k["bias"].invoke(t, y, N, 0.5).over_1d(N), k["scale"].invoke(y, t, N, -3.0).over_1d(N)]


def run_chain(mod, backend, how, x_host):
    dev = device(backend)
    x, t, y = dev.buffer(x_host), poisoned(dev), poisoned(dev)
    # rows past `groups` workgroups are never written by rev: give t defined contents there
    t.write(np.zeros(N, np.float32))
    stages = chain(mod, dev, x, t, y)
    scheme = gi.Scheme(dev)
    if how == "unfused":
        for n, inv in enumerate(stages):
            inv.record(scheme, f"stage{n}")
    else:
        fk = (gi.FusedKernel.prepare if how == "fused" else gi.FusedKernel.prepare_conservative)(dev, stages)
        fk.record(scheme, "chain", stages)
        assert scheme.stats.records == 1
    scheme.submit()
    return t.numpy(), y.numpy()


@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_conservative_and_unfused_give_the_same_bits(mod, backend):
    backend_or_skip(backend)
    x = rng_data()
    want = run_chain(mod, "cpu", "unfused", x)
    for how in ("unfused", "fused", "conservative"):
        got = run_chain(mod, backend, how, x)
        for g, w, name in zip(got, want, ("t", "y")):
            assert_same(g, w, what=f"{backend} {how} `{name}`")


def test_forwarding_and_shared_bindings(mod):
    dev = device("cpu")
    x, t, y = dev.buffer(rng_data()), poisoned(dev), poisoned(dev)
    stages = chain(mod, dev, x, t, y)
    fk = gi.FusedKernel.prepare(dev, stages)
    assert fk.forwarded == ("t", "y")
    ir = fk.definition.ir
    buffers = [p.name for p in ir.params if p.category not in ("scalar", "uniform")]
    assert buffers == ["x", "t", "y"]  # t bound by four stages, y by two: one binding each
    assert [p.category for p in ir.params if p.name in ("t", "y")] == ["read_write", "read_write"]
    cons = gi.FusedKernel.prepare_conservative(dev, stages)
    assert cons.forwarded == () and cons.id != fk.id
    # every stage's scalars, in order
    assert [p.name for p in ir.params if p.category == "scalar"] == ["groups", "n", "limit", "n_s2", "b", "n_s3", "s"]


def test_fused_ir_goes_through_the_pipeline_for_every_target(mod, ptxas, tmp_path):
    dev = device("cpu")
    x, t, y = dev.buffer(rng_data()), poisoned(dev), poisoned(dev)
    k = gi.FusedKernel.prepare(dev, chain(mod, dev, x, t, y)).definition.ir
    from goldy_import.codegen.ptx import emit_ptx
    from goldy_import.codegen.slang import emit_slang
    from goldy_import.codegen.wgsl import emit_wgsl
    for target, emit in (("wgsl", emit_wgsl), ("slang", emit_slang), ("ptx", emit_ptx)):
        text = emit(pipeline.lower(k, target).kernel)
        assert "fused_rev_steps_bias_scale" in text
    from test_ptx import assemble
    assemble(ptxas, emit_ptx(pipeline.lower(k, "ptx").kernel), tmp_path)


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalar_slot_and_set_node_param(mod, backend):
    backend_or_skip(backend)
    dev = device(backend)
    xh = rng_data()
    x, t, y = dev.buffer(xh), poisoned(dev), poisoned(dev)
    sc, bi = mod.scale.prepare(dev), mod.bias.prepare(dev)
    stages = [sc.invoke(x, t, N, 2.0).over_1d(N), bi.invoke(t, y, N, 1.0).over_1d(N)]
    fk = gi.FusedKernel.prepare(dev, stages)
    scheme = gi.Scheme(dev)
    node = fk.record(scheme, "scale+bias", stages)
    assert fk.scalar_slot(1, "b") == 6 and fk.scalar_slot(0, "s") == 3 and fk.scalar_slot(1, "nope") is None
    scheme.submit()
    assert_same(y.numpy(), xh * np.float32(2.0) + np.float32(1.0), what="y")
    scheme.set_node_param(node, fk.scalar_slot(1, "b"), 3.0)
    scheme.set_node_param(node, fk.scalar_slot(0, "s"), -0.5)
    scheme.submit()
    assert_same(t.numpy(), xh * np.float32(-0.5), what="t")
    assert_same(y.numpy(), xh * np.float32(-0.5) + np.float32(3.0), what="y")


def test_id_is_the_shape_and_one_fused_kernel_records_any_sequence_of_it(mod):
    dev = device("cpu")
    sc, bi = mod.scale.prepare(dev), mod.bias.prepare(dev)

    def stages(same_t=True, n=N):
        x, t, y = dev.buffer(rng_data(n)), poisoned(dev, n), poisoned(dev, n)
        return x, y, [sc.invoke(x, t, n, 2.0).over_1d(n), bi.invoke(t if same_t else poisoned(dev, n), y, n, 1.0).over_1d(n)]

    _, _, first = stages()
    a = gi.FusedKernel.prepare(dev, first)
    xb, yb, other = stages(n=2 * N)
    b = gi.FusedKernel.prepare(dev, other)
    assert a.id == b.id and a.prepared is b.prepared  # one compiled program
    scheme = gi.Scheme(dev)
    a.record(scheme, "other buffers, same shape", other)
    scheme.submit()
    assert_same(yb.numpy(), xb.numpy() * np.float32(2.0) + np.float32(1.0), what="y")
    _, _, apart = stages(same_t=False)
    c = gi.FusedKernel.prepare(dev, apart)
    assert c.id != a.id and c.forwarded == ()
    with pytest.raises(gi.BindingError, match="another shape"):
        a.record(scheme, "wrong", apart)


# ---------------------------------------------------------------- rejections


def rejection(fn, reason, match):
    with pytest.raises(gi.FusionError, match=match) as e:
        fn()
    assert e.value.reason is reason
    return e.value


@pytest.mark.parametrize("backend", BACKENDS)
def test_each_rejection_reason(mod, backend):
    backend_or_skip(backend)
    dev = device(backend)
    R = gi.FusionRejection
    x, t, y = dev.buffer(rng_data()), poisoned(dev), poisoned(dev)
    sc, bi = mod.scale.prepare(dev), mod.bias.prepare(dev)
    a = sc.invoke(x, t, N, 2.0).over_1d(N)
    prep = gi.FusedKernel.prepare
    # tensors
    tx, ty = dev.tensor(rng_data()), dev.tensor(np.zeros(N, np.float32))
    rejection(lambda: prep(dev, [a, mod.tscale.prepare(dev).invoke(tx, ty).over_1d(N)]), R.TENSOR,
              r"stage 1 \(`tscale`\) binds the tensor `x`")
    # workgroup size and grid
    rejection(lambda: prep(dev, [a, mod.bias128.prepare(dev).invoke(t, y, N, 1.0).over_1d(N)]), R.WORKGROUP_SIZE,
              r"workgroup size \[128, 1, 1\]")
    rejection(lambda: prep(dev, [a, bi.invoke(t, y, N, 1.0).over_1d(N - 64)]), R.GRID, r"runs \(9, 1, 1\) workgroups")
    # overlapping different ranges of one buffer, one written
    whole = dev.buffer(rng_data(2 * N))
    rejection(lambda: prep(dev, [sc.invoke(x, whole[0:N], N, 2.0).over_1d(N),
                                 bi.invoke(whole[32:N + 32], y, N, 1.0).over_1d(N)]), R.OVERLAP,
              r"`t` of stage 0 \(`scale`\) and `t` of stage 1 \(`bias`\) are different but overlapping")
    # disjoint ranges of one buffer are fine
    prep(dev, [sc.invoke(x, whole[0:N], N, 2.0).over_1d(N), bi.invoke(whole[N:2 * N], y, N, 1.0).over_1d(N)])
    # a neighbour's element
    rejection(lambda: prep(dev, [a, mod.shift.prepare(dev).invoke(t, y, N).over_1d(N)]), R.CROSS_THREAD,
              r"stage 1 \(`shift`\) accesses `t` at fusion_test.rs:\d+:\d+, not at the thread's own index")
    # a 2-D grid has no own index along x alone
    rejection(lambda: prep(dev, [sc.invoke(x, t, N, 2.0).over_2d(N, 2), bi.invoke(t, y, N, 1.0).over_2d(N, 2)]),
              R.CROSS_THREAD, "not at the thread's own index")
    # workgroup memory over the device limit (32 KiB each, 64 KiB together)
    big = mod.big_shared.prepare(dev)
    rejection(lambda: prep(dev, [big.invoke(x, y).over_1d(N), big.invoke(y, t).over_1d(N)]), R.LIMITS,
              "max_workgroup_storage_bytes")


def test_binding_limit_is_a_rejection(mod):
    dev = gi.Device("cpu")
    dev.backend.limits = Limits(max_storage_buffers_per_stage=4)
    x, t, y, z = (poisoned(dev) for _ in range(4))
    sc, bi = mod.scale.prepare(dev), mod.bias.prepare(dev)
    stages = [sc.invoke(x, t, N, 2.0).over_1d(N), bi.invoke(y, z, N, 1.0).over_1d(N)]
    e = rejection(lambda: gi.FusedKernel.prepare(dev, stages), gi.FusionRejection.LIMITS,
                  r"5 storage buffers \(one of them the trapping-check error word\).*allows 4")
    assert "max_storage_buffers_per_stage" in str(e)


def test_hand_written_slang_has_no_definition(mod):
    backend_or_skip("slang")
    from test_load_slang import SRC as HAND
    dev = device("slang")
    x, t, y = dev.buffer(rng_data()), poisoned(dev), poisoned(dev)
    hand = gi.load_slang(HAND).prepare(dev).invoke(x, t, 0.5, N).over_1d(N)
    rejection(lambda: gi.FusedKernel.prepare(dev, [hand, mod.bias.prepare(dev).invoke(t, y, N, 1.0).over_1d(N)]),
              gi.FusionRejection.NO_DEFINITION, r"stage 0 \(`twice_plus`\) is hand-written Slang")


def test_a_fault_in_a_fused_stage_names_the_rust_line(mod):
    dev = device("cpu")
    x, t, y = dev.buffer(rng_data()), poisoned(dev), poisoned(dev, N - 8)
    sc, bi = mod.scale.prepare(dev), mod.bias.prepare(dev)
    stages = [sc.invoke(x, t, N, 2.0).over_1d(N), bi.invoke(t, y, N, 1.0).over_1d(N)]
    scheme = gi.Scheme(dev)
    gi.FusedKernel.prepare(dev, stages).record(scheme, "sb", stages)
    with pytest.raises(gi.KernelFault, match=r"kernel `fused_scale_bias` \(node 0 'sb'\): index out of bounds at "
                                             r"fusion_test.rs:14:\d+: parameter `y` indexed at 632, but its length is 632"):
        scheme.submit()


# ---------------------------------------------------------------- automatic fusion


def auto_scheme(mod, dev, xh, temporary=True):
    """scale -> bias through t, then a node over twice the grid (the run stops there)."""
    x, y = dev.buffer(xh), poisoned(dev)
    scheme = gi.Scheme(dev)
    scheme.set_automatic_fusion(True)
    t = scheme.temporary_buffer(N) if temporary else poisoned(dev)
    n0 = mod.scale.prepare(dev).record(scheme, "scale", x, t, N, 2.0).over_1d(N)
    n1 = mod.bias.prepare(dev).record(scheme, "bias", t, y, N, 1.0).over_1d(N)
    z = poisoned(dev)
    mod.bias.prepare(dev).record(scheme, "bias_wide", y, z, N, 0.25).over_1d(2 * N)
    return scheme, (n0, n1), y, z


@pytest.mark.parametrize("backend", BACKENDS)
def test_automatic_fusion_promotion_fallback_and_cache(mod, backend, monkeypatch):
    backend_or_skip(backend)
    dev = device(backend)
    xh = rng_data()
    scheme, (n0, n1), y, z = auto_scheme(mod, dev, xh)

    def check(b=1.0, s=2.0):
        assert_same(y.numpy(), xh * np.float32(s) + np.float32(b), what=f"{backend} y")
        assert_same(z.numpy(), (xh * np.float32(s) + np.float32(b)) + np.float32(0.25), what=f"{backend} z")

    scheme.submit()  # the recorded graph; planning starts after it
    check()
    assert scheme.wait_for_fusion(60)
    rep = scheme.fusion_report()
    assert rep.enabled and [r.nodes for r in rep.regions] == [(0, 1)] and rep.regions[0].status == "ready"
    assert rep.regions[0].elided == 1 and rep.regions[0].storage == 2  # x and y: t lives in registers
    assert [(s.nodes, s.next, s.reason) for s in rep.stopped] == [((0, 1), 2, gi.FusionRejection.GRID)]
    scheme.submit()
    check()
    assert scheme.fusion_report().regions[0].status == "active"
    assert (scheme.stats.fusion_promotions, scheme.stats.dispatches) == (1, 3 + 2)
    scheme.set_node_param(n1, "b", -4.0)  # addresses the recorded node; the fused dispatch follows
    scheme.submit()
    check(b=-4.0)
    # recording returns to the recorded graph; the same region comes back from the cache
    w = poisoned(dev)
    mod.bias.prepare(dev).record(scheme, "late", z, w, N, 0.0).over_1d(3 * N)
    calls = []
    real = dev.backend.compile
    monkeypatch.setattr(dev.backend, "compile", lambda k, o: calls.append(k.name) or real(k, o))
    scheme.submit()
    check(b=-4.0)
    assert scheme.stats.fusion_fallbacks == 1 and scheme.stats.dispatches == 5 + 2 + 4
    assert scheme.fusion_report().regions[0].status == "ready"  # a cache hit: no compile, no wait
    scheme.set_node_param(n0, "s", 0.5)
    scheme.submit()
    check(b=-4.0, s=0.5)
    assert scheme.stats.fusion_promotions == 2 and calls == [] and scheme.stats.dispatches == 11 + 3
    assert "fused_scale_bias" in str(scheme.fusion_report())


def test_a_failed_compile_stays_unfused_and_is_reported(mod, monkeypatch):
    dev = gi.Device("cpu")
    real = dev.backend.compile

    def compile_(k, o):
        if k.name.startswith("fused_"):
            raise gi.BackendError(f"injected failure compiling `{k.name}`")
        return real(k, o)

    monkeypatch.setattr(dev.backend, "compile", compile_)
    xh = rng_data()
    scheme, _, y, _ = auto_scheme(mod, dev, xh)
    for _ in range(3):
        scheme.submit()
        scheme.wait_for_fusion(60)
        assert_same(y.numpy(), xh * np.float32(2.0) + np.float32(1.0), what="y")
    rep = scheme.fusion_report()
    assert rep.regions[0].status == "failed" and "injected failure" in rep.regions[0].error
    assert scheme.stats.fusion_compile_failures == 1 and scheme.stats.fusion_promotions == 0


def test_goldy_fusion_env_turns_it_on_for_schemes_that_never_choose(mod, monkeypatch):
    monkeypatch.setenv("GOLDY_FUSION", "1")
    dev = device("cpu")
    x, t, y = dev.buffer(rng_data()), poisoned(dev), poisoned(dev)
    for choice, fused in ((None, True), (False, False)):
        scheme = gi.Scheme(dev)
        if choice is not None:
            scheme.set_automatic_fusion(choice)
        mod.scale.prepare(dev).record(scheme, "scale", x, t, N, 2.0).over_1d(N)
        mod.bias.prepare(dev).record(scheme, "bias", t, y, N, 1.0).over_1d(N)
        scheme.submit()
        scheme.wait_for_fusion(60)
        scheme.submit()
        assert scheme.stats.fusion_promotions == fused and scheme.fusion_report().enabled == fused


def test_plain_buffers_are_forwarded_but_still_stored(mod):
    dev = device("cpu")
    xh = rng_data()
    scheme, _, y, _ = auto_scheme(mod, dev, xh, temporary=False)
    scheme.submit()
    scheme.wait_for_fusion(60)
    scheme.submit()
    r = scheme.fusion_report().regions[0]
    assert r.status == "active" and r.forwarded == ("t",) and r.elided == 0 and r.storage == 3


# ---------------------------------------------------------------- temporaries


def test_temporaries_share_storage_when_lifetimes_do_not_overlap(mod):
    dev = gi.Device("cpu")
    pool = TransientPool.of(dev)
    xh = rng_data()
    x, y, z = dev.buffer(xh), poisoned(dev), poisoned(dev)
    sc, bi = mod.scale.prepare(dev), mod.bias.prepare(dev)
    scheme = gi.Scheme(dev)
    t1, t2, t3 = (scheme.temporary_buffer(N) for _ in range(3))
    sc.record(scheme, "a", x, t1, N, 2.0).over_1d(N)
    bi.record(scheme, "b", t1, y, N, 1.0).over_1d(N)   # t1 ends here
    sc.record(scheme, "c", y, t2, N, 3.0).over_1d(N)   # t2 may reuse t1's storage
    sc.record(scheme, "d", t2, t3, N, 0.5).over_1d(N)  # t3 overlaps t2: its own storage
    bi.record(scheme, "e", t3, z, N, 0.0).over_1d(N)
    scheme.submit()
    want_y = xh * np.float32(2.0) + np.float32(1.0)
    assert_same(y.numpy(), want_y, what="y")
    assert_same(z.numpy(), (want_y * np.float32(3.0)) * np.float32(0.5), what="z")
    assert pool.allocated == 2
    scheme.submit()
    assert pool.allocated == 2  # storage stays with the structure
    del scheme, t1, t2, t3
    import gc
    gc.collect()
    again = gi.Scheme(dev)
    u = again.temporary_buffer(N)
    sc.record(again, "a", x, u, N, 2.0).over_1d(N)
    bi.record(again, "b", u, y, N, 1.0).over_1d(N)
    again.submit()
    assert pool.allocated == 2  # the dropped scheme's storage came back to the pool
    assert_same(y.numpy(), want_y, what="y again")


@pytest.mark.parametrize("backend", BACKENDS)
def test_temporaries_on_every_backend(mod, backend):
    backend_or_skip(backend)
    dev = device(backend)
    xh = rng_data()
    x, y = dev.buffer(xh), poisoned(dev)
    scheme = gi.Scheme(dev)
    t = scheme.temporary_buffer(N)
    mod.scale.prepare(dev).record(scheme, "scale", x, t, N, 2.0).over_1d(N)
    node = mod.bias.prepare(dev).record(scheme, "bias", t, y, N, 1.0).over_1d(N)
    scheme.set_node_param(node, "b", 2.0)  # before the node has storage
    scheme.submit()
    assert_same(y.numpy(), xh * np.float32(2.0) + np.float32(2.0), what=f"{backend} y")


def test_temporaries_cannot_be_observed_or_bound_elsewhere(mod):
    dev = device("cpu")
    scheme, other = gi.Scheme(dev), gi.Scheme(dev)
    t = scheme.temporary_buffer(N)
    for fn, what in ((t.numpy, "cannot be read back"), (lambda: t.write(np.zeros(N, np.float32)), "written"),
                     (lambda: t[0:4], "cannot be sliced")):
        with pytest.raises(gi.BindingError, match=what):
            fn()
    inv = mod.scale.prepare(dev).invoke(dev.buffer(rng_data()), t, N, 2.0).over_1d(N)
    with pytest.raises(gi.BindingError, match=r"kernel `scale`: Temporary\(640 x f32.*belongs to another scheme"):
        inv.record(other, "elsewhere")
    assert other.nodes == []
    with pytest.raises(gi.BindingError, match="positive element count"):
        scheme.temporary_buffer(0)


def test_explicit_fusion_forwards_temporaries_but_stores_them(mod):
    dev = device("cpu")
    xh = rng_data()
    x, y = dev.buffer(xh), poisoned(dev)
    scheme = gi.Scheme(dev)
    t = scheme.temporary_buffer(N)
    stages = [mod.scale.prepare(dev).invoke(x, t, N, 2.0).over_1d(N),
              mod.bias.prepare(dev).invoke(t, y, N, 1.0).over_1d(N)]
    fk = gi.FusedKernel.prepare(dev, stages)
    fk.record(scheme, "sb", stages)
    scheme.submit()
    assert fk.forwarded == ("t",) and any(p.name == "t" for p in fk.definition.ir.params)
    assert_same(y.numpy(), xh * np.float32(2.0) + np.float32(1.0), what="y")


def test_disjoint_fused_uint_stages_on_cpu_match_unfused(mod):
    dev = device("cpu")
    rng = np.random.default_rng()
    a = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    b0 = rng.integers(0, 2**32, N, dtype=np.uint64).astype(np.uint32)
    outs = []
    for fused in (False, True):
        ba, bb = dev.buffer(a), dev.buffer(b0)
        k = mod.mix_u32.prepare(dev)
        st = [k.invoke(ba, bb, N, 3).over_1d(N), k.invoke(ba, bb, N, 5).over_1d(N)]
        scheme = gi.Scheme(dev)
        if fused:
            gi.FusedKernel.prepare(dev, st).record(scheme, "mix", st)
        else:
            for inv in st:
                inv.record(scheme, "mix")
        scheme.submit()
        outs.append(bb.numpy())
    np.testing.assert_array_equal(outs[0], outs[1])


def test_environment_is_clean():
    assert os.environ.get("GOLDY_FUSION", "0") in ("0", "")
