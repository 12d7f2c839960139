"""Trapping checks on the CUDA backend (issue 9), on a GPU (skipped without one).

A failing check is suppressed like an unchecked out-of-range access (load 0, store and
atomic dropped, quotient 0), recorded in the dispatch's error word, and raised at submit
as a KernelFault; the message must be exactly the one the CPU backend (the oracle) gives
for the same kernel and inputs. Every faulting kernel here has one offending lane, so the
index in the message does not depend on the order lanes run in. Written-to parameters
are views into a larger buffer of sentinels: an access that escaped the logical length
would land there. Without a GPU, tests/test_ptx_traps.py covers the emitted code and the
runtime against a fake driver.
"""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.ptx import FAULT_PARAM
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime.backend import CompileOptions, Dispatch, FaultReport, ImageArg, ScalarArg

from oracle import backend_or_skip, device

FILE = "traps.rs"
SRC = """use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn read_past(x: &[f32], y: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        y[i] = x[i + off] * 2.0;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn write_past(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        y[i + 1] = x[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn count_bins(data: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < data.len() {
        let b = data[i];
        gpu::atomic_add(bins, b, 1u32);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn quotients(a: &[u32], b: &[u32], q: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < q.len() && i < a.len() && i < b.len() {
        q[i] = a[i] / b[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn remainders(a: &[i32], b: &[i32], r: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < r.len() && i < a.len() && i < b.len() {
        r[i] = a[i] % b[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shift_left(y: &mut [u32], k: u32) {
    let s = gpu::workgroup_array::<u32, 64>();
    let l = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[l] = l * 10;
    gpu::workgroup_barrier();
    if i < y.len() {
        y[i] = s[l + k];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tensor_copy(t: gpu::Tensor<f32>, y: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        y[i] = t[i + off];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn guarded_by_and(x: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        if i < n && x[i] > 0.0 {
            y[i] = 1.0;
        }
        if i >= n || x[i] < 0.0 {
            y[i] = y[i] + 10.0;
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn sum_rows(x: &[f32], out: &mut [f32], width: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let l = gpu::local_id().x;
    let row = gpu::workgroup_id().x;
    let t = gpu::workgroup_sum::<64>(x[row * width + l], s);
    if l == 0 { out[row] = t; }
}

#[goldy::compute(workgroup_size = [8, 8, 1])]
fn shift_image(src: gpu::DirectSpatial<f32>, img: gpu::DirectSpatial<f32>, dx: u32) {
    let p = gpu::global_id();
    if p.x < img.width() && p.y < img.height() {
        img[gpu::uint2(p.x + dx, p.y)] = src[gpu::uint2(p.x, p.y)] + 1.0;
    }
}
"""
SENTINEL_F = -7.5
SENTINEL_U = 0xDEADBEEF
F32, U32, I32 = np.float32, np.uint32, np.int32


@pytest.fixture(scope="module")
def dev():
    backend_or_skip("cuda")
    return device("cuda")


@pytest.fixture(scope="module")
def cpu():
    return device("cpu")


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, FILE)


@pytest.fixture
def batched_always(dev):
    """Every element-wise dispatch through the batched entry (4 workgroups per block)."""
    saved = dev.backend.batch_min_threads
    dev.backend.batch_min_threads = 0
    yield
    dev.backend.batch_min_threads = saved


def guarded(d, values, lo: int, n: int, dtype):
    """A buffer of sentinels with `values` at [lo, lo + n), and the view of that range."""
    kind = np.dtype(dtype).kind
    sentinel = SENTINEL_F if kind == "f" else (SENTINEL_U if kind == "u" else SENTINEL_U - 2**32)
    full = np.full(lo + n + 4, sentinel, dtype=dtype)
    full[lo:lo + n] = values
    big = d.buffer(full)
    return big, big[lo:lo + n], full


def fault_of(scheme) -> gi.KernelFault:
    with pytest.raises(gi.KernelFault) as info:
        scheme.submit()
    return info.value


# (kernel, arguments, over_1d extent) per node; "tensor" marks a tensor argument. Every
# written buffer is bound as a view between sentinels.
CASES = {
    "read": [("read_past", [np.arange(1, 9, dtype=F32), np.zeros(8, F32), 1], 8)],
    "write": [("write_past", [np.arange(10, 18, dtype=F32), np.zeros(8, F32)], 8)],
    "atomic": [("count_bins", [np.array([0, 1, 1, 7, 9, 3, 3, 3], U32), np.zeros(8, U32)], 8)],
    "div": [("quotients", [np.array([7, 8, 9, 10, 11, 12], U32), np.array([2, 3, 4, 0, 5, 6], U32),
                           np.full(6, 99, U32)], 6)],
    "rem": [("remainders", [np.array([7, -7, 9, -9], I32), np.array([3, 3, 0, -4], I32), np.full(4, 5, I32)], 4)],
    "workgroup": [("shift_left", [np.zeros(128, U32), 1], 128)],
    "tensor": [("tensor_copy", [("tensor", np.arange(6, dtype=F32).reshape(2, 3)), np.zeros(6, F32), 1], 6)],
    "collective_read": [("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),
                        ("sum_rows", [np.arange(4 * 64 - 1, dtype=F32), np.zeros(4, F32), 64], 4 * 64)],
    "second_of_three": [("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),
                        ("write_past", [np.arange(8, dtype=F32), np.zeros(8, F32)], 8),
                        ("quotients", [np.ones(4, U32), np.array([1, 0, 1, 1], U32), np.zeros(4, U32)], 4)],
}
WRITTEN = {"read_past": [1], "write_past": [1], "count_bins": [1], "quotients": [2], "remainders": [2],
           "shift_left": [0], "tensor_copy": [1], "sum_rows": [1]}


def run_case(d, mod, nodes):
    """(KernelFault message, every bound buffer's contents, every guard buffer's contents)."""
    s = gi.Scheme(d)
    views, guards = [], []
    for name, args, n in nodes:
        bound = []
        for pos, a in enumerate(args):
            if isinstance(a, tuple):
                bound.append(d.tensor(a[1]))
            elif isinstance(a, np.ndarray) and pos in WRITTEN[name]:
                big, view, _ = guarded(d, a, 3, len(a), a.dtype)
                bound.append(view)
                views.append(view)
                guards.append(big)
            elif isinstance(a, np.ndarray):
                bound.append(d.buffer(a))
                views.append(bound[-1])
            else:
                bound.append(a)
        getattr(mod, name).prepare(d).record(s, name, *bound).over_1d(n)
    e = fault_of(s)
    return str(e), [v.numpy() for v in views], [g.numpy() for g in guards]


@pytest.mark.parametrize("batched", [False, True], ids=["plain", "batched"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_same_fault_and_results_as_the_cpu_oracle(case, batched, dev, cpu, mod, request):
    """Read, write, atomic, division, remainder, workgroup array, tensor, and a fault among
    several nodes: the same KernelFault message as the CPU backend, the same contents of
    every buffer (in-bounds results right, the faulting access suppressed), and the
    sentinels around each written view untouched. `batched`: element-wise kernels through
    their batched entry."""
    if batched:
        request.getfixturevalue("batched_always")
    got_msg, got, got_guards = run_case(dev, mod, CASES[case])
    want_msg, want, want_guards = run_case(cpu, mod, CASES[case])
    assert got_msg == want_msg
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    for g, w in zip(got_guards, want_guards):
        np.testing.assert_array_equal(g, w)  # the sentinels: nothing landed outside a view


def test_messages_name_the_access(dev, mod):
    """The messages themselves (the oracle comparison above makes them the CPU's)."""
    x = dev.buffer(np.arange(1, 9, dtype=F32))
    big, y, full = guarded(dev, np.zeros(8, F32), 4, 8, F32)
    s = gi.Scheme(dev)
    mod.read_past.prepare(dev).record(s, "reader", x, y, 1).over_1d(8)
    e = fault_of(s)
    line = SRC[:SRC.index("x[i + off]")].count("\n") + 1
    col = SRC.index("x[i + off]") - SRC.rfind("\n", 0, SRC.index("x[i + off]"))
    assert str(e) == (f"kernel `read_past` (node 0 'reader'): index out of bounds at {FILE}:{line}:{col}: "
                      f"parameter `x` indexed at 8, but its length is 8")
    assert (e.kernel, e.index, e.length) == ("read_past", 8, 8)
    np.testing.assert_array_equal(y.numpy(), np.array([4, 6, 8, 10, 12, 14, 16, 0], F32))
    np.testing.assert_array_equal(big.numpy()[:4], full[:4])
    np.testing.assert_array_equal(big.numpy()[12:], full[12:])
    a, b = dev.buffer(np.array([1, 2], U32)), dev.buffer(np.array([1, 0], U32))
    s2 = gi.Scheme(dev)
    mod.quotients.prepare(dev).record(s2, "div", a, b, dev.zeros(2, U32)).over_1d(2)
    e = fault_of(s2)
    assert "integer division by zero at traps.rs:" in str(e) and e.site.kind == "divide"


def test_large_dispatch_on_the_default_path(dev, cpu, mod):
    """A dispatch above the batching threshold (the batched entry, as in production) whose
    last element reads one past the end: the same message and results as the CPU oracle."""
    n = dev.backend.batch_min_threads + 64 * 3 + 5
    x0 = np.random.default_rng(1).standard_normal(n).astype(F32)
    out = {}
    for d in (dev, cpu):
        x, y = d.buffer(x0), d.zeros(n)
        s = gi.Scheme(d)
        node = mod.read_past.prepare(d).record(s, "big", x, y, 1).over_1d(n)
        if d is dev:
            assert node.dispatch.state.batched
        out[d.backend_name] = (str(fault_of(s)), y.numpy())
    assert out["cuda"][0] == out["cpu"][0] and f"indexed at {n}, but its length is {n}" in out["cuda"][0]
    np.testing.assert_array_equal(out["cuda"][1], out["cpu"][1])


def test_short_circuit_guards_do_not_fault(dev, mod):
    """`i < n && x[i]` and `i >= n || x[i]` with n = x.len() < y.len(): x[i] is never
    evaluated past x's end, so nothing faults."""
    x = dev.buffer(np.array([1, -1, 1, 1], F32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    mod.guarded_by_and.prepare(dev).record(s, "sc", x, y, 4).over_1d(8)
    s.submit()
    np.testing.assert_array_equal(y.numpy(), np.array([1, 10, 1, 1, 10, 10, 10, 10], F32))


def test_image_coordinate_reports_x_y_and_width(dev, mod):
    """Images are not bound by the core yet: drive the backend contract directly."""
    kernel = insert_checks(mod.shift_image.definition().ir)
    load, store = check_sites(kernel)
    be = dev.backend
    w, h = 8, 2
    source = np.arange(w * h, dtype=F32)
    pixels = np.zeros(w * h + 8, F32)
    pixels[w * h:] = SENTINEL_F
    src_h, handle = be.alloc(source.nbytes), be.alloc(pixels.nbytes)
    be.write(src_h, 0, memoryview(source.view(np.uint8)))
    be.write(handle, 0, memoryview(pixels.view(np.uint8)))
    args = [ImageArg(src_h, w, h, "f32"), ImageArg(handle, w, h, "f32"), ScalarArg("u32", 3)]
    d = Dispatch(kernel, be.compile(kernel, CompileOptions()), args, (1, 1, 1), "img")
    be.record(d)
    faults = be.submit([d])
    assert len(faults) == 1
    f = faults[0]
    assert (f.dispatch, f.site, f.length) == (0, store.id, w)
    assert f.index in (8, 9, 10) and f.index_y in (0, 1)
    got = np.frombuffer(be.read(handle, 0, pixels.nbytes), F32)
    image = got[:w * h].reshape(h, w)
    np.testing.assert_array_equal(image[:, 3:], source.reshape(h, w)[:, :5] + 1.0)
    np.testing.assert_array_equal(image[:, :3], 0.0)
    np.testing.assert_array_equal(got[w * h:], SENTINEL_F)
    be.free(src_h)
    be.free(handle)


def test_context_survives_and_the_words_are_cleared(dev, mod):
    x = dev.buffer(np.arange(8, dtype=F32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    node = mod.read_past.prepare(dev).record(s, "r", x, y, 1).over_1d(8)
    fault_of(s)
    fault_of(s)  # replaying the graph faults again
    s.set_node_param(node, "off", 0)
    s.submit()  # in bounds now: the earlier fault is not reported again
    np.testing.assert_array_equal(y.numpy(), 2 * np.arange(8, dtype=F32))
    s.submit()
    z = dev.zeros(8)
    s3 = gi.Scheme(dev)
    mod.write_past.prepare(dev).record(s3, "w", x[:7], z).over_1d(7)
    s3.submit()  # a new scheme on the same context
    np.testing.assert_array_equal(z.numpy(), np.array([0, 0, 1, 2, 3, 4, 5, 6], F32))
    np.testing.assert_array_equal(dev.buffer(np.arange(4, dtype=F32)).numpy(), np.arange(4, dtype=F32))


def test_first_failure_wins_per_dispatch(dev, mod):
    """Many lanes fail: one report for the dispatch, naming one of them."""
    x = dev.buffer(np.arange(8, dtype=F32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    node = mod.read_past.prepare(dev).record(s, "r", x, y, 5).over_1d(8)
    faults = dev.backend.submit([node.dispatch])
    assert len(faults) == 1 and isinstance(faults[0], FaultReport)
    assert faults[0].dispatch == 0 and faults[0].length == 8 and 8 <= faults[0].index < 13


@pytest.mark.parametrize("how", ["prepare", "env"])
def test_checks_off_suppresses_without_faults(how, mod, monkeypatch):
    backend_or_skip("cuda")
    if how == "env":
        monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")
    d = gi.Device("cuda")  # a fresh device: no kernel compiled with checks in its cache
    try:
        checks = False if how == "prepare" else None
        w = mod.write_past.prepare(d, checks=checks)
        r = mod.read_past.prepare(d, checks=checks)
        for k in (w, r):
            assert not k.prepared.compiled.checked and FAULT_PARAM not in k.prepared.compiled.ptx
        x = d.buffer(np.arange(10, 18, dtype=F32))
        big, y, full = guarded(d, np.zeros(8, F32), 4, 8, F32)
        out = d.zeros(8)
        s = gi.Scheme(d)
        w.record(s, "writer", x, y).over_1d(8)
        r.record(s, "reader", x, out, 1).over_1d(8)
        s.submit()  # no KernelFault
        np.testing.assert_array_equal(y.numpy(), np.array([0, 10, 11, 12, 13, 14, 15, 16], F32))
        np.testing.assert_array_equal(big.numpy()[:4], full[:4])
        np.testing.assert_array_equal(big.numpy()[12:], full[12:])
        np.testing.assert_array_equal(out.numpy(), 2 * np.array([11, 12, 13, 14, 15, 16, 17, 0], F32))
        assert all(g.faults is None for g in d.backend._graphs.values())  # no words, no memset, no readback
    finally:
        d.close()
