"""The caches of the host path (issue 17: launches, submits and replays at the hardware's
pace) keep every check: a repeated launch after a free, a scalar that only compares equal
(-0.0 after 0.0), a replay after set_node_param, pooled error words reused by a fresh
dispatch, record's packed parameters shared by two nodes. Run on every backend against the
CPU oracle where a result is observable; the CUDA driver calls against tests/fake_cuda.py."""

import ctypes
import struct

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir.checks import check_sites
from goldy_import.runtime import cuda as C

from fake_cuda import fake, plan_fault  # noqa: F401  (fake: a fixture)
from oracle import assert_same, backend_or_skip, device

SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scale(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i] / a; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shifted(x: &[f32], y: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i + off]; }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn affine(x: &[f32], y: &mut [f32], a: f32, b: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = x[i] * a + b; }
}
"""
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]


def packed_f32(node, slot: int = 2) -> float:
    """The f32 the cuda backend has packed for a node's parameter `slot` (what a launch passes)."""
    st = node.dispatch.state
    return struct.unpack("<f", ctypes.string_at(int(st.block.pointers[node.dispatch.compiled.slots[slot]]), 4))[0]


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, "host_path.rs")


def _dev(backend):
    backend_or_skip(backend)
    return device(backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_scalar_equal_but_not_the_same_reaches_the_kernel(backend, mod):
    """0.0 then -0.0 (equal floats, different values): the second launch and the second
    record divide by -0.0, as the CPU oracle does."""
    rng = np.random.default_rng(3)
    x = np.abs(rng.standard_normal(256).astype(np.float32)) + 1

    def run(dev):
        k = mod.scale.prepare(dev)
        xb, y1, y2 = dev.buffer(x), dev.buffer(np.full(256, 7, np.float32)), dev.buffer(np.full(256, 7, np.float32))
        k.launch(xb, y1, 0.0).over_1d(256)
        k.launch(xb, y1, -0.0).over_1d(256)
        s = gi.Scheme(dev)
        k.record(s, "pos", xb, y2, 0.0).over_1d(256)
        s.submit()
        s2 = gi.Scheme(dev)
        k.record(s2, "neg", xb, y2, -0.0).over_1d(256)
        s2.submit()
        return y1.numpy(), y2.numpy()

    want = run(gi.Device("cpu"))
    assert np.all(want[0] == -np.inf) and np.all(want[1] == -np.inf)
    got = run(_dev(backend))
    assert_same(got[0], want[0], what=f"{backend} eager -0.0")
    assert_same(got[1], want[1], what=f"{backend} recorded -0.0")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_repeated_launch_after_a_free_is_refused(backend, mod):
    dev = _dev(backend)
    k = mod.scale.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    for _ in range(3):
        k.launch(x, y, 2.0).over_1d(64)
    dev.synchronize()
    other = dev.zeros(4)
    other.free()  # any free: the repeat re-checks its own buffers
    k.launch(x, y, 2.0).over_1d(64)
    x.free()
    with pytest.raises(gi.BindingError, match=r"kernel `scale` parameter `x`.*freed"):
        k.launch(x, y, 2.0).over_1d(64)
    dev.synchronize()
    assert_same(y.numpy(), np.full(64, 0.5, np.float32), what=f"{backend} launches before the free")


# ---------------------------------------------------------------- CUDA driver calls (fake driver)


def test_fake_fresh_schemes_share_pooled_error_words_and_report_their_node(fake, mod):
    drv, dev = fake
    k = mod.shifted.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    allocs = drv.count("cuMemHostAlloc") + drv.count("cuMemAlloc")
    for _ in range(2 * C.SLOTS // 3):
        s = gi.Scheme(dev)
        k.record(s, "fresh", x, y, 0).over_1d(64)
        s.submit()
    # one pool block for every fresh dispatch (the dead ones gave their slots back)
    assert drv.count("cuMemHostAlloc") + drv.count("cuMemAlloc") - allocs <= 2
    assert drv.count("cuGraphLaunch") == 0  # one-node schemes launch without a graph
    (site,) = check_sites(k.prepared.target_ir)
    plan_fault(drv, "shifted", site.id, 64, 64)
    s = gi.Scheme(dev)
    k.record(s, "faulty", x, y, 1).over_1d(64)
    with pytest.raises(gi.KernelFault, match=r"node 0 'faulty'.*indexed at 64"):
        s.submit()
    drv.planned.clear()
    del s
    for _ in range(3):  # the slot the faulty one left comes back clean
        s = gi.Scheme(dev)
        k.record(s, "after", x, y, 0).over_1d(64)
        s.submit()


def test_fake_a_fresh_scheme_takes_the_state_of_the_dead_one(fake, mod):
    """Recording the arguments of a dead scheme's node again takes its parameter block,
    error word and launch arguments instead of packing them anew; a block set_node_param
    changed is never taken, and a fault in a taken one names the new node and is cleared."""
    drv, dev = fake
    k = mod.affine.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    a, b = 2.0, 1.0  # the same objects each time: the same bound arguments
    s = gi.Scheme(dev)
    taken = k.record(s, "first", x, y, a, b).over_1d(64).dispatch.state
    s.submit()
    del s
    s = gi.Scheme(dev)
    n = k.record(s, "second", x, y, a, b).over_1d(64)
    assert n.dispatch.state is taken and packed_f32(n) == 2.0
    s.submit()
    s.set_node_param(n, "a", 3.0)
    s.submit()
    assert packed_f32(n) == 3.0
    del s, n
    s = gi.Scheme(dev)
    n = k.record(s, "third", x, y, a, b).over_1d(64)
    assert n.dispatch.state is not taken and packed_f32(n) == 2.0  # the changed block was dropped
    s.submit()
    taken = n.dispatch.state
    del s, n
    (site,) = check_sites(k.prepared.target_ir)
    plan_fault(drv, "affine", site.id, 64, 64)
    s = gi.Scheme(dev)
    assert k.record(s, "faulty", x, y, a, b).over_1d(64).dispatch.state is taken
    with pytest.raises(gi.KernelFault, match=r"node 0 'faulty'.*indexed at 64"):
        s.submit()
    drv.planned.clear()
    del s
    s = gi.Scheme(dev)
    assert k.record(s, "after", x, y, a, b).over_1d(64).dispatch.state is taken
    s.submit()  # its error word came back clean


@pytest.mark.parametrize("backend", BACKENDS)
def test_fresh_schemes_after_set_node_param_run_their_own_scalars(backend, mod):
    """A fresh scheme recording the arguments of a dead one whose scalar set_node_param
    changed runs the recorded scalar, not the changed one (the CUDA backend reuses only
    unchanged parameter blocks); fresh random data, checked against the CPU oracle."""
    rng = np.random.default_rng()
    x0 = rng.standard_normal(300).astype(np.float32)
    a, b, changed = (np.float32(rng.standard_normal()).item() for _ in range(3))

    def run(dev):
        k = mod.affine.prepare(dev)
        x, y = dev.buffer(x0), dev.empty(300, np.float32)
        poison = np.full(300, np.nan, np.float32)
        outs = []
        for step in range(3):
            s = gi.Scheme(dev)
            n = k.record(s, "affine", x, y, a, b).over_1d(300)
            y.write(poison)  # before every submit: an unwritten element shows
            s.submit()
            outs.append(y.numpy())
            if step == 1:
                s.set_node_param(n, "a", changed)
                y.write(poison)
                s.submit()
                outs.append(y.numpy())
            del s, n
        return np.stack(outs)

    want = run(gi.Device("cpu"))
    assert not np.array_equal(want[1], want[2])  # the change shows
    assert_same(run(_dev(backend)), want, what=f"{backend} fresh schemes around set_node_param")


def test_fake_eager_faults_of_several_dispatches_are_read_at_one_wait(fake, mod):
    drv, dev = fake
    k = mod.shifted.prepare(dev)
    x = dev.buffer(np.ones(64, np.float32))
    ys = [dev.zeros(64) for _ in range(3)]
    for y in ys:
        k.launch(x, y, 0).over_1d(64)
    dev.synchronize()
    copies = drv.count("cuMemcpyDtoHAsync")
    for y in ys:
        k.launch(x, y, 0).over_1d(64)
    dev.synchronize()
    # device words: one copy of the pool block for the three; mapped words: none
    assert drv.count("cuMemcpyDtoHAsync") - copies == (0 if drv.mapped else 1)
    (site,) = check_sites(k.prepared.target_ir)
    plan_fault(drv, "shifted", site.id, 64, 64)
    for y in ys:
        k.launch(x, y, 1).over_1d(64)
    with pytest.raises(gi.KernelFault, match=r"kernel `shifted` \(eager launch\).*\(2 more faulted eager launches"):
        dev.synchronize()
    drv.planned.clear()
    k.launch(x, ys[0], 1).over_1d(64)
    dev.synchronize()


def test_fake_replay_patches_only_after_a_change(fake, mod):
    drv, dev = fake
    k = mod.scale.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    s = gi.Scheme(dev)
    nodes = [k.record(s, f"n{i}", x, y, 1.0 + i).over_1d(64) for i in range(5)]
    s.submit()
    s.submit(wait=False).wait()
    assert drv.count("cuGraphExecKernelNodeSetParams") == 0 and drv.count("cuGraphAddKernelNode") == 5
    s.set_node_param(nodes[2], "a", 9.0)
    s.submit()
    s.submit()
    assert drv.count("cuGraphExecKernelNodeSetParams") == 1  # the changed node, once
    other = gi.Scheme(dev)  # another graph over other dispatches: its own nodes
    for i in range(3):
        k.record(other, f"o{i}", x, y, 1.0).over_1d(64)
    other.submit()
    s.set_node_param(nodes[0], "a", 3.0)
    other.submit()  # a change elsewhere: this graph patches nothing
    assert drv.count("cuGraphExecKernelNodeSetParams") == 1
    s.submit()
    assert drv.count("cuGraphExecKernelNodeSetParams") == 2
    assert drv.count("cuGraphAddKernelNode") == 8


@pytest.mark.parametrize("backend", BACKENDS)
def test_scalars_set_many_times_between_submits_take_their_last_values(backend, mod, monkeypatch):
    """Two scalars of one node set over and over between submits (the other node's left
    alone): the submit runs the last values, as numpy's f32 `x * a + b` does; on wgpu the
    changed scalars of a dispatch are one uniform write."""
    dev = _dev(backend)
    rng = np.random.default_rng(7)
    x = rng.standard_normal(300).astype(np.float32)
    k = mod.affine.prepare(dev)
    xb = dev.buffer(x)
    ys = [dev.buffer(np.full(300, np.nan, np.float32)) for _ in range(2)]
    s = gi.Scheme(dev)
    nodes = [k.record(s, f"n{i}", xb, y, 1.5, -0.25).over_1d(300) for i, y in enumerate(ys)]
    s.submit()
    writes = []
    if backend == "wgpu":
        q = dev.backend.queue
        real = q.write_buffer
        monkeypatch.setattr(q, "write_buffer", lambda *a: (writes.append(a[1:2]), real(*a))[1], raising=False)
    for a, b in ((2.0, 1.0), (-3.0, 0.5), (0.375, -7.0)):
        s.set_node_param(nodes[0], "a", a)
        s.set_node_param(nodes[0], 3, b)
    for y in ys:
        y.write(np.full(300, np.nan, np.float32))
    writes.clear()
    s.submit()
    if backend == "wgpu":
        assert len(writes) == 1, writes  # (the outputs' poison is written before)
    assert_same(ys[0].numpy(), x * np.float32(0.375) + np.float32(-7.0))
    assert_same(ys[1].numpy(), x * np.float32(1.5) + np.float32(-0.25))


def _scale_scheme(mod, dev, count: int):
    """A submitted scheme of `count` `scale` nodes over ones (a = 1.0): (scheme, nodes)."""
    k = mod.scale.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    s = gi.Scheme(dev)
    nodes = [k.record(s, f"n{i}", x, y, 1.0).over_1d(64) for i in range(count)]
    s.submit()
    return s, nodes


def test_fake_set_node_param_reaches_the_backend_once_at_the_next_submit(fake, mod, monkeypatch):
    """A scalar set three times between submits is packed once, at the submit, into the
    node's parameters and its graph node (the last value), and nothing else is touched."""
    drv, dev = fake
    s, nodes = _scale_scheme(mod, dev, 3)
    packed = []
    update = dev.backend.update_scalar
    monkeypatch.setattr(dev.backend, "update_scalar", lambda d, i: (packed.append((d, i)), update(d, i))[1])
    for v in (2.0, 3.0, 4.0):
        s.set_node_param(nodes[1], "a", v)
    assert packed == []
    s.submit()
    assert packed == [(nodes[1].dispatch, 2)]
    assert drv.count("cuGraphExecKernelNodeSetParams") == 1
    assert packed_f32(nodes[1]) == 4.0
    s.submit()  # nothing changed since
    assert len(packed) == 1 and drv.count("cuGraphExecKernelNodeSetParams") == 1


def test_fake_a_failed_scalar_update_is_still_due_at_the_next_submit(fake, mod, monkeypatch):
    """The backend refuses an update at a submit (BackendError): that submit raises and
    runs nothing, and the next one still packs every change, not only those after it."""
    drv, dev = fake
    s, nodes = _scale_scheme(mod, dev, 2)
    s.set_node_param(nodes[0], "a", 2.0)
    s.set_node_param(nodes[1], "a", 3.0)
    update = dev.backend.update_scalars
    calls = []

    def refuse_second(d, slots):
        calls.append(d)
        if len(calls) == 2:
            raise gi.BackendError("refused")
        update(d, slots)
    monkeypatch.setattr(dev.backend, "update_scalars", refuse_second)
    launches = drv.count("cuGraphLaunch")
    with pytest.raises(gi.BackendError, match="refused"):
        s.submit()
    assert drv.count("cuGraphLaunch") == launches
    monkeypatch.setattr(dev.backend, "update_scalars", update)
    s.submit()
    assert (packed_f32(nodes[0]), packed_f32(nodes[1])) == (2.0, 3.0)
    assert drv.count("cuGraphLaunch") == launches + 1


def test_fake_nodes_recorded_with_the_same_arguments_keep_their_own_scalars(fake, mod):
    drv, dev = fake
    k = mod.scale.prepare(dev)
    x, y = dev.buffer(np.ones(64, np.float32)), dev.zeros(64)
    s = gi.Scheme(dev)
    a = k.record(s, "a", x, y, 1.5).over_1d(64)
    s.set_node_param(a, "a", 4.0)
    b = k.record(s, "b", x, y, 1.5).over_1d(64)  # the same bound arguments as a's recording
    s.submit()  # (set_node_param reaches the backend at the next submit)
    assert (packed_f32(a), packed_f32(b)) == (4.0, 1.5)
    x2 = dev.buffer(np.ones(64, np.float32))
    c = k.record(s, "c", x2, y, 1.5).over_1d(64)
    ptr = lambda node: ctypes.c_uint64.from_address(int(node.dispatch.state.block.pointers[0])).value  # noqa: E731
    assert ptr(c) == x2.handle.ptr and ptr(b) == x.handle.ptr
