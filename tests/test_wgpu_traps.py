"""Trapping checks on the wgpu backend (issue 9), on whatever adapter wgpu finds (lavapipe
here).

A failing check (ir/checks.py site) is suppressed like an unchecked out-of-range access
(load 0, store/atomic dropped, quotient 0), recorded in the dispatch's error word
(codegen/wgsl.py `gi_faults`, a slot of one shared buffer) and raised at submit as a
KernelFault whose message the core builds. Each kind of check runs the same kernel and
inputs on the CPU backend (the oracle) and compares the message and every buffer. Every
faulting kernel here has exactly one offending lane, so the index in the message does not
depend on the order lanes run in. Written-to parameters are bound as views into a larger
buffer whose other elements hold a sentinel: an access that escaped the logical length
would land there."""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.wgsl import FAULT_WORDS
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime.backend import CompileOptions, Dispatch, FaultReport, ImageArg, ScalarArg
from oracle import device

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
fn remainders(a: &[i32], b: &[i32], r: &mut [i32], q: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < r.len() && i < q.len() && i < a.len() && i < b.len() {
        r[i] = a[i] % b[i];
        q[i] = a[i] / b[i];
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
fn tensor_fill(t: gpu::TensorMut<f32>, off: u32) {
    let i = gpu::global_id().x;
    if i < t.len() {
        t[i + off] = 5.0;
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
fn both_fault(x: &[f32], k: &[u32], y: &mut [f32], which: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    if i == 0 {
        if which == 0 {
            y[k[i + 4]] = x[i + 8];
        } else {
            s[i + 64] = x[i + 9];
        }
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn late_return(x: &[f32], y: &mut [f32], n: u32) {
    let s = gpu::workgroup_array::<f32, 64>();
    let l = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[l] = 0.5;
    gpu::workgroup_barrier();
    if i >= n {
        return;
    }
    let v = x[i] / s[l];
    let d = 8 / (n - i);
    y[i] = v + (d as f32);
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
def mod():
    return gi.load_source(SRC, FILE)


@pytest.fixture(scope="module")
def dev():
    return device("wgpu")  # the session's device; skips (or fails under GOLDY_REQUIRE_BACKENDS) without one


@pytest.fixture(scope="module")
def cpu():
    d = gi.Device("cpu")
    yield d
    d.close()


def loc(needle: str) -> str:
    """`traps.rs:line:col` of `needle` in SRC (1-based, characters)."""
    at = SRC.index(needle)
    line = SRC.count("\n", 0, at) + 1
    col = at - (SRC.rfind("\n", 0, at) + 1) + 1
    return f"{FILE}:{line}:{col}"


def fault_of(scheme) -> gi.KernelFault:
    with pytest.raises(gi.KernelFault) as info:
        scheme.submit()
    return info.value


class Guarded:
    """`values` as the view [lo, lo + n) of a buffer whose other elements are sentinels."""

    def __init__(self, d, values, lo: int = 3):
        values = np.asarray(values)
        sentinel = SENTINEL_F if values.dtype.kind == "f" else np.uint32(SENTINEL_U).view(values.dtype)
        self.full = np.full(lo + len(values) + 5, sentinel, dtype=values.dtype)
        self.full[lo:lo + len(values)] = values
        self.lo, self.n = lo, len(values)
        self.big = d.buffer(self.full)
        self.view = self.big[lo:lo + len(values)]

    def numpy(self) -> np.ndarray:
        got = self.big.numpy()
        np.testing.assert_array_equal(got[:self.lo], self.full[:self.lo], err_msg="written before the view")
        np.testing.assert_array_equal(got[self.lo + self.n:], self.full[self.lo + self.n:],
                                      err_msg="written past the view")
        return got[self.lo:self.lo + self.n]


def run(d, mod, nodes, *, expect_fault=True, checks=None):
    """Record `nodes` = [(kernel, args, n)] in one Scheme on `d` and submit once: the
    KernelFault's message (or None) and the contents of every array argument, read
    through guarded views (so nothing may land outside them)."""
    s = gi.Scheme(d)
    outs = []
    for name, args, n in nodes:
        bound = []
        for a in args:
            if isinstance(a, tuple) and a[0] == "tensor":
                t = d.tensor(a[1])
                bound.append(t)
                outs.append(("tensor", t))
            elif isinstance(a, np.ndarray):
                g = Guarded(d, a)
                bound.append(g.view)
                outs.append(("buffer", g))
            else:
                bound.append(a)
        getattr(mod, name).prepare(d, checks=checks).record(s, name, *bound).over_1d(n)
    msg = None
    if expect_fault:
        msg = str(fault_of(s))
    else:
        s.submit()
    return msg, [o.numpy() for _, o in outs]


def same_as_cpu(dev, cpu, mod, nodes):
    """The same nodes on wgpu and on the CPU oracle: the same message, the same buffers."""
    got_msg, got = run(dev, mod, nodes)
    want_msg, want = run(cpu, mod, nodes)
    assert got_msg == want_msg
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    return got_msg, got


# ---------------------------------------------------------------- each kind of check, against the oracle


def test_out_of_bounds_read(dev, cpu, mod):
    msg, (x, y) = same_as_cpu(dev, cpu, mod, [("read_past", [np.arange(1, 9, dtype=F32), np.zeros(8, F32), 1], 8)])
    assert msg == (f"kernel `read_past` (node 0 'read_past'): index out of bounds at {loc('x[i + off]')}: "
                   f"parameter `x` indexed at 8, but its length is 8")
    np.testing.assert_array_equal(y, np.array([4, 6, 8, 10, 12, 14, 16, 0], F32))  # the faulting lane read 0
    np.testing.assert_array_equal(x, np.arange(1, 9, dtype=F32))


def test_out_of_bounds_write(dev, cpu, mod):
    msg, (_, y) = same_as_cpu(dev, cpu, mod, [("write_past", [np.arange(10, 18, dtype=F32), np.zeros(8, F32)], 8)])
    assert msg == (f"kernel `write_past` (node 0 'write_past'): index out of bounds at {loc('y[i + 1] =')}: "
                   f"parameter `y` indexed at 8, but its length is 8")
    np.testing.assert_array_equal(y, np.array([0, 10, 11, 12, 13, 14, 15, 16], F32))  # y[8] was dropped


def test_out_of_bounds_atomic(dev, cpu, mod):
    data = np.array([0, 1, 1, 7, 9, 3, 3, 3], U32)
    msg, (_, bins) = same_as_cpu(dev, cpu, mod, [("count_bins", [data, np.zeros(8, U32)], 8)])
    assert msg == (f"kernel `count_bins` (node 0 'count_bins'): index out of bounds at "
                   f"{loc('gpu::atomic_add(bins')}: parameter `bins` indexed at 9, but its length is 8")
    np.testing.assert_array_equal(bins, np.array([1, 2, 0, 3, 0, 0, 0, 1], U32))


def test_workgroup_array_index(dev, cpu, mod):
    msg, (y,) = same_as_cpu(dev, cpu, mod, [("shift_left", [np.zeros(128, U32), 1], 128)])
    assert msg == (f"kernel `shift_left` (node 0 'shift_left'): index out of bounds at {loc('s[l + k]')}: "
                   f"workgroup array `s` indexed at 64, but its length is 64")
    # lanes 63 and 127 read 0 and one failure is recorded for the dispatch; one is reported
    np.testing.assert_array_equal(y, np.array([(l + 1) * 10 if l < 63 else 0 for l in range(64)] * 2, U32))


def test_tensor_index_against_numel(dev, cpu, mod):
    msg, (_, y) = same_as_cpu(dev, cpu, mod, [
        ("tensor_copy", [("tensor", np.arange(6, dtype=F32).reshape(2, 3)), np.zeros(6, F32), 1], 6)])
    assert msg == (f"kernel `tensor_copy` (node 0 'tensor_copy'): index out of bounds at {loc('t[i + off]')}: "
                   f"parameter `t` indexed at 6, but its length is 6")
    np.testing.assert_array_equal(y, np.array([1, 2, 3, 4, 5, 0], F32))


def test_tensor_view_store_checked_against_the_view(dev, cpu, mod):
    """A strided view: numel is the view's, and a store past it lands nowhere in the parent."""
    def once(d):
        parent = d.tensor(np.arange(12, dtype=F32).reshape(3, 4))
        view = parent.narrow(1, 1, 2)  # columns 1 and 2: 6 elements, strided
        s = gi.Scheme(d)
        mod.tensor_fill.prepare(d).record(s, "fill", view, 1).over_1d(view.numel)
        return str(fault_of(s)), parent.numpy()

    got_msg, got = once(dev)
    want_msg, want = once(cpu)
    assert got_msg == want_msg
    assert got_msg == (f"kernel `tensor_fill` (node 0 'fill'): index out of bounds at {loc('t[i + off] =')}: "
                       f"parameter `t` indexed at 6, but its length is 6")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, [[0, 1, 5, 3], [4, 5, 5, 7], [8, 5, 5, 11]])


def test_division_by_zero(dev, cpu, mod):
    a, b = np.array([7, 8, 9, 10, 11, 12], U32), np.array([2, 3, 4, 0, 5, 6], U32)
    msg, (_, _, q) = same_as_cpu(dev, cpu, mod, [("quotients", [a, b, np.full(6, 99, U32)], 6)])
    assert msg == f"kernel `quotients` (node 0 'quotients'): integer division by zero at {loc('a[i] / b[i]')}"
    np.testing.assert_array_equal(q, np.array([3, 2, 2, 0, 2, 2], U32))


def test_remainder_by_zero_keeps_rust_semantics_elsewhere(dev, cpu, mod):
    a = np.array([7, -7, 9, -9, -2**31, -2**31], I32)
    b = np.array([3, 3, 0, -4, -1, 7], I32)
    msg, (_, _, r, q) = same_as_cpu(dev, cpu, mod, [("remainders", [a, b, np.full(6, 5, I32), np.full(6, 5, I32)], 6)])
    # lane 2 divides by zero twice; its first failure (the `%`) is the one reported
    assert msg == f"kernel `remainders` (node 0 'remainders'): integer division by zero at {loc('a[i] % b[i]')}"
    np.testing.assert_array_equal(r, np.array([1, -1, 0, -1, 0, -2], I32))  # Rust `%`: the dividend's sign
    np.testing.assert_array_equal(q, np.array([2, -2, 0, 2, -2**31, -306783378], I32))  # MIN / -1 wraps


def test_several_faulting_dispatches_report_the_first_and_the_count(dev, cpu, mod):
    nodes = [("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),  # clean
             ("write_past", [np.arange(8, dtype=F32), np.zeros(8, F32)], 8),
             ("quotients", [np.ones(4, U32), np.array([1, 0, 1, 0], U32), np.zeros(4, U32)], 4),
             ("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 2], 8)]
    msg, outs = same_as_cpu(dev, cpu, mod, nodes)
    assert msg == (f"kernel `write_past` (node 1 'write_past'): index out of bounds at {loc('y[i + 1] =')}: "
                   f"parameter `y` indexed at 8, but its length is 8 (2 more faulted dispatches in this submit)")
    np.testing.assert_array_equal(outs[1], np.arange(8, dtype=F32) * 2)  # the clean node
    np.testing.assert_array_equal(outs[6], np.array([1, 0, 1, 0], U32))


def test_every_fault_comes_back_in_dispatch_order(dev, mod):
    """The backend contract: one FaultReport per faulted dispatch, in order, with site,
    index and length; several lanes fail in one of them and one is named."""
    x = dev.buffer(np.arange(8, dtype=F32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    k = mod.read_past.prepare(dev)
    k.record(s, "many", x, y, 5).over_1d(8)
    k.record(s, "clean", x, y, 0).over_1d(8)
    k.record(s, "one", x, y, 1).over_1d(8)
    faults = dev.backend.submit([n.dispatch for n in s.nodes])
    assert [type(f) for f in faults] == [FaultReport, FaultReport]
    (site,) = check_sites(s.nodes[0].dispatch.kernel)
    assert [(f.dispatch, f.site, f.length, f.index_y) for f in faults] == [(0, site.id, 8, None), (2, site.id, 8, None)]
    assert 8 <= faults[0].index < 13 and faults[1].index == 8


def test_more_checked_dispatches_than_error_slots(dev, mod):
    """The shared error buffer grows (bind groups follow it); the last of many nodes faults."""
    x = dev.buffer(np.arange(8, dtype=F32))
    ys = [dev.zeros(8) for _ in range(3)]
    s = gi.Scheme(dev)
    k = mod.read_past.prepare(dev)
    k.record(s, "n0", x, ys[0], 0).over_1d(8)  # a checked record makes the error buffer
    n = 2 * dev.backend._fault_slots + 7
    assert n > 7
    for j in range(1, n):
        k.record(s, f"n{j}", x, ys[j % 3], 1 if j == n - 1 else 0).over_1d(8)
    e = fault_of(s)
    assert str(e).startswith(f"kernel `read_past` (node {n - 1} 'n{n - 1}'): index out of bounds")
    assert "more faulted" not in str(e)
    assert dev.backend._fault_slots >= n
    s.set_node_param(s.nodes[-1], "off", 0)
    s.submit()
    for y in ys:
        np.testing.assert_array_equal(y.numpy(), 2 * np.arange(8, dtype=F32))


# ---------------------------------------------------------------- what must not fault


def test_short_circuit_guards_do_not_fault(dev, cpu, mod):
    """`i < n && x[i]` and `i >= n || x[i]`: the access is checked, so `&&`/`||` must
    short-circuit in the WGSL as in Rust."""
    nodes = [("guarded_by_and", [np.array([1, -1, 1, 1], F32), np.zeros(8, F32), 4], 8)]
    _, (_, y) = run(dev, mod, nodes, expect_fault=False)
    np.testing.assert_array_equal(y, np.array([1, 10, 1, 1, 10, 10, 10, 10], F32))
    np.testing.assert_array_equal(run(cpu, mod, nodes, expect_fault=False)[1][1], y)


def test_returned_threads_record_nothing(dev, cpu, mod):
    """A `return` after a barrier becomes the `gi_done` flag: the returned threads keep
    running (uniform control flow) but their loads and divisions are not Rust's and must
    not fault."""
    k = mod.late_return.prepare(dev)
    assert "var<private> gi_done" in k.prepared.compiled.variants[frozenset()].module.code
    nodes = [("late_return", [np.arange(1, 9, dtype=F32), np.zeros(8, F32), 8], 8)]
    _, (_, y) = run(dev, mod, nodes, expect_fault=False)
    np.testing.assert_array_equal(y, np.arange(1, 9, dtype=F32) * 2 + 8 // (8 - np.arange(8)))
    np.testing.assert_array_equal(run(cpu, mod, nodes, expect_fault=False)[1][1], y)
    # a thread that has not returned still faults
    msg, _ = same_as_cpu(dev, cpu, mod, [("late_return", [np.arange(1, 8, dtype=F32), np.zeros(8, F32), 8], 8)])
    assert msg.endswith(f"{loc('x[i] / s[l]')}: parameter `x` indexed at 7, but its length is 7")


def test_value_faults_before_the_place(dev, mod):
    """Rust evaluates an assignment's value before its place: when both fail in one thread,
    the value's check is the first failure (as on the slang backend)."""
    x = dev.buffer(np.arange(8, dtype=F32))
    k = dev.buffer(np.array([1, 2, 3, 4], U32))
    y = Guarded(dev, np.zeros(8, F32))
    s = gi.Scheme(dev)
    node = mod.both_fault.prepare(dev).record(s, "both", x, k, y.view, 0).over_1d(1)
    e = fault_of(s)
    assert str(e) == (f"kernel `both_fault` (node 0 'both'): index out of bounds at {loc('x[i + 8]')}: "
                      f"parameter `x` indexed at 8, but its length is 8")
    np.testing.assert_array_equal(y.numpy(), np.zeros(8, F32))
    s.set_node_param(node, "which", 1)
    e = fault_of(s)
    assert str(e) == (f"kernel `both_fault` (node 0 'both'): index out of bounds at {loc('x[i + 9]')}: "
                      f"parameter `x` indexed at 9, but its length is 8")


# ---------------------------------------------------------------- images (not bound by the core yet)


def test_image_coordinate_reports_x_y_and_width(dev, mod):
    kernel = insert_checks(mod.shift_image.definition().ir)
    load, store = check_sites(kernel)  # coordinates are always checked: the read too
    assert (store.resource, load.resource) == ("img", "src")
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
    (f,) = be.submit([d])
    assert (f.dispatch, f.site, f.length) == (0, store.id, w)
    assert f.index in (8, 9, 10) and f.index_y in (0, 1)  # some lane x in 5..8 of row 0 or 1
    got = np.frombuffer(be.read(handle, 0, pixels.nbytes), F32)
    image = got[:w * h].reshape(h, w)
    np.testing.assert_array_equal(image[:, 3:], source.reshape(h, w)[:, :5] + 1.0)
    np.testing.assert_array_equal(image[:, :3], 0.0)
    np.testing.assert_array_equal(got[w * h:], SENTINEL_F)
    # the same dispatch in bounds: no report (the slot was cleared)
    args[2] = ScalarArg("u32", 0)
    be.update_scalar(d, 2)
    assert be.submit([d]) is None


# ---------------------------------------------------------------- the error word's life


def test_device_keeps_working_and_the_error_word_is_cleared(dev, mod):
    x = dev.buffer(np.arange(8, dtype=F32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    node = mod.read_past.prepare(dev).record(s, "r", x, y, 1).over_1d(8)
    fault_of(s)
    fault_of(s)  # replaying the graph faults again
    s.set_node_param(node, "off", 0)
    s.submit()  # the same scheme in bounds: the previous fault is not reported again
    np.testing.assert_array_equal(y.numpy(), 2 * np.arange(8, dtype=F32))
    s3 = gi.Scheme(dev)
    z = dev.zeros(8)
    mod.write_past.prepare(dev).record(s3, "w", x[:7], z).over_1d(7)
    s3.submit()
    np.testing.assert_array_equal(z.numpy(), np.array([0, 0, 1, 2, 3, 4, 5, 6], F32))


def test_buffer_views_report_logical_index_and_length(dev, mod):
    x = dev.buffer(np.arange(20, dtype=F32))
    y = dev.zeros(5)
    s = gi.Scheme(dev)
    mod.read_past.prepare(dev).record(s, "v", x[10:15], y, 1).over_1d(5)
    e = fault_of(s)
    assert (e.index, e.length) == (5, 5)
    np.testing.assert_array_equal(y.numpy(), 2 * np.array([11, 12, 13, 14, 0], F32))


def test_error_word_only_where_sites_remain(dev, mod):
    proven = gi.load_source("""
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn proven(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() && i < y.len() { y[i] = x[i]; }
}
""", "p.rs").proven.prepare(dev)
    assert check_sites(proven.prepared.target_ir) == []
    module = proven.prepared.compiled.variants[frozenset()].module
    assert module.fault_binding is None and "gi_fault" not in module.code
    module = mod.read_past.prepare(dev).prepared.compiled.variants[frozenset()].module
    assert module.fault_binding == len(module.bindings) + 1  # after the uniform block
    assert f"var<storage, read_write> gi_faults: array<atomic<u32>, {FAULT_WORDS}>" in module.code
    assert "gi_checked_load_x(" in module.code


# ---------------------------------------------------------------- checks off


@pytest.mark.parametrize("how", ["prepare", "env"])
def test_checks_off_suppress_without_faults_or_error_word(how, mod, monkeypatch):
    if how == "env":
        monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")
    device("wgpu")  # skips without an adapter
    d = gi.Device("wgpu")  # a fresh device: its error buffer must never be made
    try:
        checks = False if how == "prepare" else None
        nodes = [("write_past", [np.arange(10, 18, dtype=F32), np.zeros(8, F32)], 8),
                 ("read_past", [np.arange(10, 18, dtype=F32), np.zeros(8, F32), 1], 8),
                 ("count_bins", [np.array([0, 9, 1], U32), np.zeros(8, U32)], 3),
                 ("quotients", [np.array([7, 8], U32), np.array([0, 2], U32), np.full(2, 9, U32)], 2),
                 ("shift_left", [np.zeros(64, U32), 1], 64)]
        _, outs = run(d, mod, nodes, expect_fault=False, checks=checks)  # no KernelFault
        np.testing.assert_array_equal(outs[1], np.array([0, 10, 11, 12, 13, 14, 15, 16], F32))
        np.testing.assert_array_equal(outs[3], 2 * np.array([11, 12, 13, 14, 15, 16, 17, 0], F32))
        np.testing.assert_array_equal(outs[5], np.array([1, 1, 0, 0, 0, 0, 0, 0], U32))
        np.testing.assert_array_equal(outs[8], np.array([0, 4], U32))
        np.testing.assert_array_equal(outs[9], np.array([(l + 1) * 10 if l < 63 else 0 for l in range(64)], U32))
        for name, _, _ in nodes:
            module = getattr(mod, name).prepare(d, checks=checks).prepared.compiled.variants[frozenset()].module
            assert module.fault_binding is None
            for word in ("gi_faults", "gi_fault", "gi_checked"):
                assert word not in module.code
        assert d.backend._faults is None
    finally:
        d.close()


# ---------------------------------------------------------------- limits


def test_the_error_word_counts_against_the_storage_buffer_limit(dev):
    """A kernel using every storage binding the device has: checked, the error word is one
    too many (refused at prepare, before wgpu sees it); unchecked, it runs."""
    most = dev.limits.max_storage_buffers_per_stage
    if most > 64:
        pytest.skip(f"the device allows {most} storage buffers per stage")
    ins = [f"a{j}" for j in range(most - 1)]
    src = ("use goldy::gpu;\n#[goldy::compute(workgroup_size = [64, 1, 1])]\n"
           f"fn wide({', '.join(f'{a}: &[u32]' for a in ins)}, y: &mut [u32], k: u32) {{\n"
           "    let i = gpu::global_id().x;\n"
           f"    if i < y.len() {{ y[i] = {' + '.join(f'{a}[i + k]' for a in ins)}; }}\n}}\n")
    wide = gi.load_source(src, "wide.rs").wide
    with pytest.raises(gi.DeviceLimitError, match=f"{most + 1} storage buffers \\(one of them the trapping-check "
                                                  f"error word.*max_storage_buffers_per_stage = {most}"):
        wide.prepare(dev)
    k = wide.prepare(dev, checks=False)
    bufs = [dev.buffer(np.arange(4, dtype=U32) + j) for j in range(len(ins))]
    y = dev.zeros(4, np.uint32)
    s = gi.Scheme(dev)
    k.record(s, "wide", *bufs, y, 1).over_1d(4)
    s.submit()
    np.testing.assert_array_equal(y.numpy(), [sum(i + 1 + j if i < 3 else 0 for j in range(len(ins)))
                                              for i in range(4)])
