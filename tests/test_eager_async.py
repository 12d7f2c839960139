"""Eager launches (`pk.launch(...).over_1d(n)`), asynchronous submits (`submit(wait=False)`),
`Device.synchronize()` and faults raised at the wait that observes them (issue 17). Every
backend is checked against the CPU oracle on fresh random data with poisoned outputs; the
CUDA driver calls are checked against tests/fake_cuda.py."""

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime import eager

from fake_cuda import fake, plan_fault  # noqa: F401  (fake: a fixture)
from oracle import assert_same, backend_or_skip, device, rust_loc

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn affine(src: &[u32], dst: gpu::Scattered<u32>, k: u32, s: u32) {
    let i = gpu::global_id().x;
    if i < src.len() { dst[i] = src[i] * k + s; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shifted(x: &[f32], y: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i + off]; }
}
"""
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
POISON = 0xDEADBEEF


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "eager.rs")


def _dev(backend):
    backend_or_skip(backend)
    return device(backend)


def _cpu_affine(src, k, s):
    return (src.astype(np.uint64) * k + s).astype(np.uint32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_eager_launches_match_the_cpu_oracle(backend, mod):
    dev = _dev(backend)
    rng = np.random.default_rng(17)
    n = 1000
    src = rng.integers(0, 2**32, n, dtype=np.uint32)
    dst = dev.buffer(np.full(n, POISON, np.uint32))
    x, y0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    xb, yb = dev.buffer(x), dev.buffer(y0)
    sb = dev.buffer(src)
    aff, sax = mod.affine.prepare(dev), mod.saxpy.prepare(dev)
    for k, a in [(3, 0.5), (7, -1.25), (7, 2.0)]:  # scalars change between launches of one plan
        aff.launch(sb, dst, k, 11).over_1d(n)
        sax.launch(xb, yb, a).over_1d(n)
        assert_same(dst.numpy(), _cpu_affine(src, k, 11), what=f"{backend} affine k={k}")
    cpu = gi.Device("cpu")
    cx, cy = cpu.buffer(x), cpu.buffer(y0)
    s = gi.Scheme(cpu)
    node = mod.saxpy.prepare(cpu).record(s, "oracle", cx, cy, 0.5).over_1d(n)
    for a in (0.5, -1.25, 2.0):
        s.set_node_param(node, "a", a)
        s.submit()
    assert_same(yb.numpy(), cy.numpy(), what=f"{backend} saxpy x3")


@pytest.mark.parametrize("backend", BACKENDS)
def test_back_to_back_launches_with_changing_scalars(backend, mod):
    """No read in between: each launch sees its own scalar (wgpu queues them together)."""
    dev = _dev(backend)
    rng = np.random.default_rng(5)
    x, y0 = rng.standard_normal(512).astype(np.float32), rng.standard_normal(512).astype(np.float32)
    xb, yb = dev.buffer(x), dev.buffer(y0)
    k = mod.saxpy.prepare(dev)
    scalars = [0.5, -1.25, 2.0, 2.0, 3.5]
    for a in scalars:
        k.launch(xb, yb, a).over_1d(512)
    s = gi.Scheme(dev)  # a submit after the launches runs after them
    node = k.record(s, "after", xb, yb, 1.0).over_1d(512)
    s.submit()
    cpu = gi.Device("cpu")
    cx, cy = cpu.buffer(x), cpu.buffer(y0)
    ck = mod.saxpy.prepare(cpu)
    for a in scalars + [1.0]:
        ck.launch(cx, cy, a).over_1d(512)
    assert_same(yb.numpy(), cy.numpy(), what=f"{backend} after {len(scalars)} launches and a submit")
    assert node.index == 0


@pytest.mark.parametrize("backend", BACKENDS)
def test_submit_without_waiting_then_read_sees_the_result(backend, mod):
    dev = _dev(backend)
    rng = np.random.default_rng(3)
    src = rng.integers(0, 2**32, 300, dtype=np.uint32)
    sb, dst = dev.buffer(src), dev.buffer(np.full(300, POISON, np.uint32))
    s = gi.Scheme(dev)
    mod.affine.prepare(dev).record(s, "aff", sb, dst, 5, 1).over_1d(300)
    h = s.submit(wait=False)
    assert isinstance(h, eager.Submission)
    assert_same(dst.numpy(), _cpu_affine(src, 5, 1), what=backend)  # read orders itself after the submit
    h.wait()
    assert h.done()
    assert s.submit() is None  # the default stays synchronous


@pytest.mark.parametrize("backend", BACKENDS)
def test_write_after_a_pending_submit_is_ordered(backend, mod):
    dev = _dev(backend)
    rng = np.random.default_rng(4)
    first, second = (rng.integers(0, 1000, 256, dtype=np.uint32) for _ in range(2))
    sb, dst = dev.buffer(first), dev.buffer(np.full(256, POISON, np.uint32))
    s = gi.Scheme(dev)
    mod.affine.prepare(dev).record(s, "aff", sb, dst, 2, 0).over_1d(256)
    h1 = s.submit(wait=False)
    sb.write(second)  # after the pending submit read `first`
    h2 = s.submit(wait=False)
    dev.synchronize()
    assert h1.done() and h2.done()
    assert_same(dst.numpy(), _cpu_affine(second, 2, 0), what=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_fault_is_raised_at_the_wait_naming_the_node(backend, mod):
    dev = _dev(backend)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    s = gi.Scheme(dev)
    mod.saxpy.prepare(dev).record(s, "fine", x, y, 1.0).over_1d(64)
    mod.shifted.prepare(dev).record(s, "past the end", x, y, 3).over_1d(64)
    h = s.submit(wait=False)  # no error here
    loc = rust_loc(SRC, "x[i + off]", "eager.rs")
    msg = (f"kernel `shifted` (node 1 'past the end'): index out of bounds at {loc}: parameter `x` "
           f"indexed at 64, but its length is 64")
    with pytest.raises(gi.KernelFault) as info:
        h.wait()
    assert str(info.value) == msg
    with pytest.raises(gi.KernelFault):
        h.wait()  # the handle keeps its fault
    dev.synchronize()  # already raised once: not again


@pytest.mark.parametrize("backend", BACKENDS)
def test_eager_fault_is_raised_at_the_next_synchronize_or_read(backend, mod):
    dev = _dev(backend)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    k = mod.shifted.prepare(dev)
    k.launch(x, y, 1).over_1d(64)  # returns without raising
    with pytest.raises(gi.KernelFault, match=r"^kernel `shifted` \(eager launch\): index out of bounds .* "
                                             r"indexed at 64, but its length is 64"):
        dev.synchronize()
    dev.synchronize()  # reported once
    k.launch(x, y, 2).over_1d(64)
    k.launch(x, y, 0).over_1d(64)
    with pytest.raises(gi.KernelFault, match="eager launch"):
        y.numpy()
    assert y.numpy()[0] == 1.0  # the last launch (off = 0) ran after the faulting one


@pytest.mark.parametrize("backend", ["cpu", "wgpu", "slang"])
def test_close_with_pending_work(backend, mod):
    backend_or_skip(backend)
    dev = gi.Device(backend)
    src = np.arange(128, dtype=np.uint32)
    sb, dst = dev.buffer(src), dev.zeros(128, np.uint32)
    s = gi.Scheme(dev)
    pk = mod.affine.prepare(dev)
    pk.record(s, "aff", sb, dst, 3, 0).over_1d(128)
    h = s.submit(wait=False)
    pk.launch(sb, dst, 3, 1).over_1d(128)
    dev.close()  # finishes both first
    assert h.done()
    h.wait()
    with pytest.raises(gi.GoldyError, match="closed"):
        dev.synchronize()
    with pytest.raises(gi.GoldyError, match="closed"):
        pk.launch(sb, dst, 3, 1).over_1d(128)


def test_close_raises_a_fault_nobody_observed(mod):
    dev = gi.Device("cpu")
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    mod.shifted.prepare(dev).launch(x, y, 1).over_1d(64)
    with pytest.raises(gi.KernelFault, match="eager launch"):
        dev.close()
    assert dev.closed


def test_launch_validates_like_record(mod):
    dev = device("cpu")
    k = mod.saxpy.prepare(dev)
    x, y = dev.buffer(np.ones(8, np.float32)), dev.zeros(8)
    with pytest.raises(gi.BindingError, match="parameter `a` .*expected a float"):
        k.launch(x, y, "2").over_1d(8)
    with pytest.raises(gi.BindingError, match="takes 3 arguments"):
        k.prepared.launch(x, y).over_1d(8)
    with pytest.raises(gi.GridError, match="empty grid"):
        k.launch(x, y, 1.0).over_1d(0)
    k.launch(x, y, 1.0).over_1d(8)  # cached now
    with pytest.raises(gi.BindingError, match="parameter `a` .*out of range for f32"):
        k.launch(x, y, 1e39).over_1d(8)  # a changed scalar is checked on the cached plan too
    y.free()
    with pytest.raises(gi.BindingError, match="parameter `y` .*freed"):
        k.launch(x, y, 1.0).over_1d(8)
    s = gi.Scheme(dev)
    with pytest.raises(gi.BindingError, match="temporary"):
        k.launch(x, s.temporary_buffer(8), 1.0).over_1d(8)


def test_borrowed_memory_is_never_held_by_the_plan_cache(mod):
    """A buffer over a producer's memory (from_dlpack, wrap) is bound afresh each time: a
    cache entry would keep the producer's array alive after the caller dropped it."""
    import gc
    import weakref
    dev = gi.Device("cpu")
    pk = mod.saxpy.prepare(dev)
    x, y = np.ones(64, np.float32), np.zeros(64, np.float32)
    alive = weakref.ref(y)
    bx, by = dev.from_dlpack(x), dev.from_dlpack(y)
    pk.launch(bx, by, 2.0).over_1d(64)
    s = gi.Scheme(dev)
    pk.record(s, "s", bx, by, 3.0).over_1d(64)
    s.submit()
    dev.synchronize()
    np.testing.assert_array_equal(y, np.full(64, 5.0, np.float32))  # written in place, both times
    assert not pk.prepared._eager_plans
    del s, by, y
    gc.collect()
    assert alive() is None


def test_the_plan_cache_is_bounded_and_keyed_by_identity(mod):
    dev = gi.Device("cpu")
    k = mod.affine.prepare(dev)
    src = dev.buffer(np.arange(64, dtype=np.uint32))
    outs = [dev.zeros(64, np.uint32) for _ in range(eager.PLANS + 4)]
    for i, o in enumerate(outs):
        k.launch(src, o, i, 0).over_1d(64)
    assert len(k.prepared._eager_plans) == eager.PLANS
    for i, o in enumerate(outs):
        assert_same(o.numpy(), np.arange(64, dtype=np.uint32) * i, what=f"out {i}")
    k.launch(src, outs[0], 2, 0).over_2d(64, 1)
    k.launch(src, outs[0], 2, 1).groups((1, 1, 1))
    assert_same(outs[0].numpy(), np.arange(64, dtype=np.uint32) * 2 + 1)
    k.launch(src, outs[-1], 5, 3).groups((2, 1, 1))  # a new grid of a cached plan: this call's scalars
    assert_same(outs[-1].numpy(), np.arange(64, dtype=np.uint32) * 5 + 3)


def test_generated_module_types_launch(mod):
    from goldy_import.codegen.pymodule import emit_module
    text = emit_module([mod.saxpy.definition().ir], "eager.rs", "0" * 64)
    assert "def launch(\n            self,\n            x: " in text and ") -> LaunchBuilder:" in text


# ---------------------------------------------------------------- CUDA driver calls (fake driver)


def test_fake_eager_launch_is_one_cuLaunchKernel_and_no_wait(fake, mod):
    drv, dev = fake
    k = mod.shifted.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    k.launch(x, y, 0).over_1d(64)
    before = list(drv.calls)
    k.launch(x, y, 0).over_1d(64)
    k.launch(x, y, 1).over_1d(64)  # a changed scalar patches the prebuilt block
    assert drv.calls[len(before):] == ["cuLaunchKernel", "cuLaunchKernel"]
    assert drv.count("cuGraphLaunch") == 0
    site = k.prepared.target_ir  # the planned fault: what the kernel's check would write
    from goldy_import.ir.checks import check_sites
    (s,) = check_sites(site)
    plan_fault(drv, "shifted", s.id, 64, 64)
    k.launch(x, y, 1).over_1d(64)
    with pytest.raises(gi.KernelFault, match=r"kernel `shifted` \(eager launch\).*indexed at 64"):
        dev.synchronize()
    drv.planned.clear()
    k.launch(x, y, 0).over_1d(64)
    dev.synchronize()  # the word was cleared after the report


def test_fake_async_submits_pipeline_and_report_at_wait(fake, mod):
    drv, dev = fake
    from goldy_import.ir.checks import check_sites
    k = mod.shifted.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    s = gi.Scheme(dev)
    k.record(s, "r", x, y, 0).over_1d(64)
    s.submit()  # builds the graph; the words are known clean afterwards
    n = len(drv.calls)
    h1, h2 = s.submit(wait=False), s.submit(wait=False)
    assert drv.calls[n:].count("cuEventSynchronize") == 0 and drv.calls[n:].count("cuGraphLaunch") == 2
    assert drv.calls[n:].count("cuStreamSynchronize") == 0
    h1.wait(), h2.wait()
    (site,) = check_sites(k.prepared.target_ir)
    plan_fault(drv, "shifted", site.id, 64, 64)
    h3, h4 = s.submit(wait=False), s.submit(wait=False)
    with pytest.raises(gi.KernelFault, match=r"node 0 'r'"):
        h3.wait()
    h4.wait()  # the same flag: reported once
    drv.planned.clear()
    s.submit()  # cleared first, nothing left over


def test_fake_use_stream_orders_after_queued_work(fake, mod):
    drv, dev = fake
    k = mod.saxpy.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)

    class TorchLikeStream:
        cuda_stream = 4242

    k.launch(x, y, 1.0).over_1d(64)  # queued, not waited for: the switch orders it with an event
    dev.use_stream(TorchLikeStream())
    assert drv.calls[-2:] == ["cuEventRecord", "cuStreamWaitEvent"] and drv.streams[-1] == 4242
    k.launch(x, y, 1.0).over_1d(64)
    assert drv.streams[-1] == 4242
    dev.synchronize()
    calls = len(drv.calls)
    dev.use_stream(None)  # nothing unwaited: a plain switch (a capturing stream refuses events)
    assert "cuStreamWaitEvent" not in drv.calls[calls:]
    k.launch(x, y, 1.0).over_1d(64)
    assert drv.streams[-1] == 7  # the backend's own stream (fake_cuda's cuStreamCreate)
    with pytest.raises(gi.BindingError, match="use_stream"):
        dev.use_stream("a string")
    with pytest.raises(gi.BindingError, match="cuda"):
        gi.Device("cpu").use_stream(0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_pipelined_submits_of_one_scheme_match_the_cpu_oracle(backend, mod):
    """Back-to-back `submit(wait=False)` of one scheme (overlapping replays on CUDA), with a
    scalar changed in between, equal the same submits run one by one on the CPU."""
    rng = np.random.default_rng(6)
    x, y0 = rng.standard_normal(2048).astype(np.float32), rng.standard_normal(2048).astype(np.float32)

    def run(dev, wait):
        xb, yb = dev.buffer(x), dev.buffer(y0)
        k = mod.saxpy.prepare(dev)
        s = gi.Scheme(dev)
        nodes = [k.record(s, f"n{i}", xb, yb, 0.25 * (i + 1)).over_1d(2048) for i in range(10)]
        handles = []
        for rep in range(5):
            s.set_node_param(nodes[3], "a", float(rep) - 1.5)
            handles.append(s.submit(wait=wait))
        if not wait:
            dev.synchronize()
            assert all(h.done() for h in handles)
        return yb.numpy()

    want = run(gi.Device("cpu"), True)
    assert_same(run(_dev(backend), False), want, what=f"{backend} pipelined submits")


def test_cuda_use_stream_orders_with_torch():
    backend_or_skip("cuda")
    torch = pytest.importorskip("torch")
    mod = gi.load_source(SRC, "eager.rs")
    dev = device("cuda")
    n = 1 << 20
    x0 = torch.randn(n, device="cuda")
    y = torch.zeros(n, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    dev.use_stream(side)
    try:
        with torch.cuda.stream(side):
            x = x0 * 2.0  # the producer, on the side stream
            mod.saxpy.prepare(dev).launch(x, y, 1.0).over_1d(n)  # after it, on the same stream
            out = y * 1.0  # torch's consumer, after our launch
        side.synchronize()
    finally:
        dev.use_stream(None)
    assert torch.equal(out, x0 * 2.0)
