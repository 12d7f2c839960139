"""Trapping checks on the slang backend (issue 9), on slangpy's CPU device.

A failing check (ir/checks.py site) is suppressed like an unchecked out-of-range access
(load 0, store/atomic dropped, quotient 0), recorded in the dispatch's error word, and
raised at submit as a KernelFault whose message the core builds (runtime/core.py
kernel_fault). Every faulting kernel here has exactly one offending lane, so the index in
the message does not depend on the order lanes run in. Written-to parameters are bound
as views into a larger buffer whose other elements hold a sentinel: an access that
escaped the logical length would land there."""

from __future__ import annotations

import os

import numpy as np
import pytest

from oracle import backend_or_skip
import goldy_import as gi
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime.backend import BufferArg, CompileOptions, Dispatch, FaultReport, ImageArg, ScalarArg

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


def _require_slang():
    backend_or_skip("slang")  # fails instead when GOLDY_REQUIRE_BACKENDS names slang

@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, FILE)


@pytest.fixture(scope="module")
def dev():
    _require_slang()
    d = gi.Device("slang")
    yield d
    d.close()


def loc(needle: str, nth: int = 0) -> str:
    """`traps.rs:line:col` of the nth occurrence of `needle` in SRC (1-based, characters)."""
    at = -1
    for _ in range(nth + 1):
        at = SRC.index(needle, at + 1)
    line = SRC.count("\n", 0, at) + 1
    col = at - (SRC.rfind("\n", 0, at) + 1) + 1
    return f"{FILE}:{line}:{col}"


def guarded(dev, values, lo: int, n: int, dtype):
    """A buffer of sentinels with `values` at [lo, lo + n), and the view of that range."""
    sentinel = SENTINEL_F if np.dtype(dtype).kind == "f" else SENTINEL_U
    full = np.full(lo + n + 4, sentinel, dtype=dtype)
    full[lo:lo + n] = values
    big = dev.buffer(full)
    return big, big[lo:lo + n], full


def assert_outside_untouched(big, full, lo: int, n: int) -> None:
    got = big.numpy()
    np.testing.assert_array_equal(got[:lo], full[:lo])
    np.testing.assert_array_equal(got[lo + n:], full[lo + n:])


def fault_of(scheme) -> gi.KernelFault:
    with pytest.raises(gi.KernelFault) as info:
        scheme.submit()
    return info.value


# ---------------------------------------------------------------- each kind of check


def test_out_of_bounds_read(dev, mod):
    x = dev.buffer(np.arange(1, 9, dtype=np.float32))
    big, y, full = guarded(dev, np.zeros(8, np.float32), 4, 8, np.float32)
    k = mod.read_past.prepare(dev)
    s = gi.Scheme(dev)
    k.record(s, "reader", x, y, 1).over_1d(8)
    e = fault_of(s)
    assert str(e) == (f"kernel `read_past` (node 0 'reader'): index out of bounds at {loc('x[i + off]')}: "
                      f"parameter `x` indexed at 8, but its length is 8")
    assert (e.kernel, e.index, e.length) == ("read_past", 8, 8)
    # the faulting lane read 0 and carried on; every other lane is right
    np.testing.assert_array_equal(y.numpy(), np.array([4, 6, 8, 10, 12, 14, 16, 0], np.float32))
    assert_outside_untouched(big, full, 4, 8)
    np.testing.assert_array_equal(x.numpy(), np.arange(1, 9, dtype=np.float32))


def test_out_of_bounds_write(dev, mod):
    x = dev.buffer(np.arange(10, 18, dtype=np.float32))
    big, y, full = guarded(dev, np.zeros(8, np.float32), 4, 8, np.float32)
    s = gi.Scheme(dev)
    mod.write_past.prepare(dev).record(s, "writer", x, y).over_1d(8)
    e = fault_of(s)
    assert str(e) == (f"kernel `write_past` (node 0 'writer'): index out of bounds at {loc('y[i + 1] =')}: "
                      f"parameter `y` indexed at 8, but its length is 8")
    np.testing.assert_array_equal(y.numpy(), np.array([0, 10, 11, 12, 13, 14, 15, 16], np.float32))
    assert big.numpy()[12] == SENTINEL_F  # where y[8] would have landed
    assert_outside_untouched(big, full, 4, 8)


def test_out_of_bounds_atomic(dev, mod):
    data = dev.buffer(np.array([0, 1, 1, 7, 9, 3, 3, 3], np.uint32))
    big, bins, full = guarded(dev, np.zeros(8, np.uint32), 2, 8, np.uint32)
    s = gi.Scheme(dev)
    mod.count_bins.prepare(dev).record(s, "hist", data, bins).over_1d(8)
    e = fault_of(s)
    assert str(e) == (f"kernel `count_bins` (node 0 'hist'): index out of bounds at "
                      f"{loc('gpu::atomic_add(bins')}: parameter `bins` indexed at 9, but its length is 8")
    np.testing.assert_array_equal(bins.numpy(), np.array([1, 2, 0, 3, 0, 0, 0, 1], np.uint32))
    assert big.numpy()[2 + 9] == SENTINEL_U
    assert_outside_untouched(big, full, 2, 8)


def test_division_by_zero(dev, mod):
    a = dev.buffer(np.array([7, 8, 9, 10, 11, 12], np.uint32))
    b = dev.buffer(np.array([2, 3, 4, 0, 5, 6], np.uint32))
    big, q, full = guarded(dev, np.full(6, 99, np.uint32), 1, 6, np.uint32)
    s = gi.Scheme(dev)
    mod.quotients.prepare(dev).record(s, "div", a, b, q).over_1d(6)
    e = fault_of(s)
    assert str(e) == f"kernel `quotients` (node 0 'div'): integer division by zero at {loc('a[i] / b[i]')}"
    assert e.site.kind == "divide"
    np.testing.assert_array_equal(q.numpy(), np.array([3, 2, 2, 0, 2, 2], np.uint32))
    assert_outside_untouched(big, full, 1, 6)


def test_remainder_by_zero_and_two_faulted_dispatches(dev, mod):
    a = dev.buffer(np.array([7, -7, 9, -9], np.int32))
    b = dev.buffer(np.array([3, 3, 0, -4], np.int32))
    r = dev.buffer(np.full(4, 5, np.int32))
    s = gi.Scheme(dev)
    mod.remainders.prepare(dev).record(s, "rem", a, b, r).over_1d(4)
    e = fault_of(s)
    assert str(e) == f"kernel `remainders` (node 0 'rem'): integer division by zero at {loc('a[i] % b[i]')}"
    np.testing.assert_array_equal(r.numpy(), np.array([1, -1, 0, -1], np.int32))  # Rust `%`
    # a clean node first, then two faulting ones: the first faulted dispatch is reported
    x = dev.buffer(np.arange(8, dtype=np.float32))
    y = dev.zeros(8)
    s2 = gi.Scheme(dev)
    mod.read_past.prepare(dev).record(s2, "clean", x, y, 0).over_1d(8)
    mod.remainders.prepare(dev).record(s2, "rem", a, b, r).over_1d(4)
    mod.read_past.prepare(dev).record(s2, "reader", x, y, 1).over_1d(8)
    e = fault_of(s2)
    assert str(e) == (f"kernel `remainders` (node 1 'rem'): integer division by zero at {loc('a[i] % b[i]')} "
                      f"(1 more faulted dispatch in this submit)")


def test_workgroup_array_in_the_lane_serial_form(dev, mod):
    k = mod.shift_left.prepare(dev)
    assert k.prepared.compiled.lane_serial  # slangpy's CPU device runs barrier kernels lane by lane
    big, y, full = guarded(dev, np.zeros(128, np.uint32), 3, 128, np.uint32)
    s = gi.Scheme(dev)
    node = k.record(s, "shift", y, 1).over_1d(128)
    e = fault_of(s)
    assert str(e) == (f"kernel `shift_left` (node 0 'shift'): index out of bounds at {loc('s[l + k]')}: "
                      f"workgroup array `s` indexed at 64, but its length is 64")
    want = np.array([(l + 1) * 10 if l < 63 else 0 for l in range(64)] * 2, np.uint32)
    np.testing.assert_array_equal(y.numpy(), want)
    assert_outside_untouched(big, full, 3, 128)
    s.set_node_param(node, "k", 0)
    s.submit()
    np.testing.assert_array_equal(y.numpy(), np.array([l * 10 for l in range(64)] * 2, np.uint32))


def test_tensor_index_checked_against_numel(dev, mod):
    t = dev.tensor(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = dev.zeros(6)
    s = gi.Scheme(dev)
    mod.tensor_copy.prepare(dev).record(s, "t", t, y, 1).over_1d(6)
    e = fault_of(s)
    assert str(e) == (f"kernel `tensor_copy` (node 0 't'): index out of bounds at {loc('t[i + off]')}: "
                      f"parameter `t` indexed at 6, but its length is 6")
    np.testing.assert_array_equal(y.numpy(), np.array([1, 2, 3, 4, 5, 0], np.float32))


def test_image_coordinate_reports_x_y_and_width(dev, mod):
    """Images are not bound by the core yet: drive the backend contract directly."""
    kernel = insert_checks(mod.shift_image.definition().ir)
    load, store = check_sites(kernel)  # coordinates are always checked: the read too
    assert (store.resource, load.resource) == ("img", "src")
    be = dev.backend
    w, h = 8, 2
    source = np.arange(w * h, dtype=np.float32)
    pixels = np.zeros(w * h + 8, np.float32)
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
    assert f.index in (8, 9, 10) and f.index_y in (0, 1)  # some lane x in 5..8 of row 0 or 1
    got = np.frombuffer(be.read(handle, 0, pixels.nbytes), np.float32).reshape(-1)
    image = got[:w * h].reshape(h, w)
    np.testing.assert_array_equal(image[:, 3:], source.reshape(h, w)[:, :5] + 1.0)
    np.testing.assert_array_equal(image[:, :3], 0.0)
    np.testing.assert_array_equal(got[w * h:], SENTINEL_F)


def test_short_circuit_guards_do_not_fault(dev, mod):
    """`i < n && x[i]` and `i >= n || x[i]`: the access is checked (the pass does not
    carry the left operand into the right), so `&&`/`||` must short-circuit."""
    x = dev.buffer(np.array([1, -1, 1, 1], np.float32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    mod.guarded_by_and.prepare(dev).record(s, "sc", x, y, 4).over_1d(8)
    s.submit()
    np.testing.assert_array_equal(y.numpy(), np.array([1, 10, 1, 1, 10, 10, 10, 10], np.float32))


def test_value_faults_before_the_place(dev, mod):
    """Rust evaluates an assignment's value before its place: when both fail, the
    value's check is the thread's first failure. (The CPU backend, at this writing,
    evaluates a buffer store's index before its value and reports `k` here.)"""
    x = dev.buffer(np.arange(8, dtype=np.float32))
    k = dev.buffer(np.array([1, 2, 3, 4], np.uint32))
    big, y, full = guarded(dev, np.zeros(8, np.float32), 4, 8, np.float32)
    s = gi.Scheme(dev)
    node = mod.both_fault.prepare(dev).record(s, "both", x, k, y, 0).over_1d(1)
    e = fault_of(s)  # `k[i + 4]` in the place fails too, but after `x[i + 8]`
    assert str(e) == (f"kernel `both_fault` (node 0 'both'): index out of bounds at {loc('x[i + 8]')}: "
                      f"parameter `x` indexed at 8, but its length is 8")
    assert_outside_untouched(big, full, 4, 8)
    np.testing.assert_array_equal(y.numpy(), np.zeros(8, np.float32))
    s.set_node_param(node, "which", 1)
    e = fault_of(s)  # a workgroup array's place: the value is still evaluated first
    assert str(e) == (f"kernel `both_fault` (node 0 'both'): index out of bounds at {loc('x[i + 9]')}: "
                      f"parameter `x` indexed at 9, but its length is 8")


# ---------------------------------------------------------------- against the CPU oracle

F32, U32, I32 = np.float32, np.uint32, np.int32
ORACLE_CASES = {
    "read": [("read_past", [np.arange(1, 9, dtype=F32), np.zeros(8, F32), 1], 8)],
    "write": [("write_past", [np.arange(8, dtype=F32), np.zeros(8, F32)], 8)],
    "atomic": [("count_bins", [np.array([0, 1, 1, 7, 9, 3, 3, 3], U32), np.zeros(8, U32)], 8)],
    "div": [("quotients", [np.array([7, 8, 9, 10, 11, 12], U32), np.array([2, 3, 4, 0, 5, 6], U32),
                           np.zeros(6, U32)], 6)],
    "rem": [("remainders", [np.array([7, -7, 9, -9], I32), np.array([3, 3, 0, -4], I32), np.zeros(4, I32)], 4)],
    "workgroup": [("shift_left", [np.zeros(128, U32), 1], 128)],
    "tensor": [("tensor_copy", [("tensor", np.arange(6, dtype=F32).reshape(2, 3)), np.zeros(6, F32), 1], 6)],
    "workgroup_place": [("both_fault", [np.arange(8, dtype=F32), np.arange(4, dtype=U32), np.zeros(8, F32), 1], 1)],
    "second_of_three": [("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),
                        ("write_past", [np.arange(8, dtype=F32), np.zeros(8, F32)], 8),
                        ("quotients", [np.ones(4, U32), np.array([1, 0, 1, 0], U32), np.zeros(4, U32)], 4)],
}


@pytest.fixture(scope="module")
def cpu():
    d = gi.Device("cpu")
    yield d
    d.close()


def _run_case(d, mod, nodes):
    s = gi.Scheme(d)
    buffers = []
    for name, args, n in nodes:
        bound = []
        for a in args:
            if isinstance(a, tuple):
                bound.append(d.tensor(a[1]))
            elif isinstance(a, np.ndarray):
                bound.append(d.buffer(a))
                buffers.append(bound[-1])
            else:
                bound.append(a)
        getattr(mod, name).prepare(d).record(s, name, *bound).over_1d(n)
    e = fault_of(s)
    return str(e), [b.numpy() for b in buffers]


@pytest.mark.parametrize("case", sorted(ORACLE_CASES))
def test_same_fault_and_results_as_the_cpu_oracle(case, dev, cpu, mod):
    """The same kernel and inputs on the CPU backend (the oracle, with its own checks):
    the same KernelFault message and the same contents of every buffer afterwards."""
    got_msg, got = _run_case(dev, mod, ORACLE_CASES[case])
    want_msg, want = _run_case(cpu, mod, ORACLE_CASES[case])
    assert got_msg == want_msg
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


# ---------------------------------------------------------------- the error word's life


def test_device_keeps_working_and_the_error_word_is_cleared(dev, mod):
    x = dev.buffer(np.arange(8, dtype=np.float32))
    y = dev.zeros(8)
    k = mod.read_past.prepare(dev)
    s = gi.Scheme(dev)
    node = k.record(s, "r", x, y, 1).over_1d(8)
    fault_of(s)
    fault_of(s)  # replaying the graph faults again
    s.set_node_param(node, "off", 0)
    s.submit()  # the same scheme, now in bounds: the previous fault is not reported again
    np.testing.assert_array_equal(y.numpy(), 2 * np.arange(8, dtype=np.float32))
    s3 = gi.Scheme(dev)
    z = dev.zeros(8)
    mod.write_past.prepare(dev).record(s3, "w", x[:7], z).over_1d(7)
    s3.submit()
    np.testing.assert_array_equal(z.numpy(), np.array([0, 0, 1, 2, 3, 4, 5, 6], np.float32))


def test_first_failure_wins_per_dispatch(dev, mod):
    """Many lanes fail; one report per dispatch, naming one of them."""
    x = dev.buffer(np.arange(8, dtype=np.float32))
    y = dev.zeros(8)
    s = gi.Scheme(dev)
    node = mod.read_past.prepare(dev).record(s, "r", x, y, 5).over_1d(8)
    faults = dev.backend.submit([node.dispatch])
    assert len(faults) == 1 and isinstance(faults[0], FaultReport)
    assert faults[0].dispatch == 0 and faults[0].length == 8 and 8 <= faults[0].index < 13


# ---------------------------------------------------------------- checks off


@pytest.mark.parametrize("how", ["prepare", "env"])
def test_checks_off_suppresses_without_faults_or_error_word(how, mod, monkeypatch):
    _require_slang()
    if how == "env":
        monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")
    d = gi.Device("slang")  # a fresh device: its error buffer must never be made
    try:
        checks = False if how == "prepare" else None
        k = mod.write_past.prepare(d, checks=checks)
        assert not k.prepared.compiled.checked
        for word in ("GoldyFaults", "_goldy_faults", "_checked"):
            assert word not in k.prepared.compiled.source
        x = d.buffer(np.arange(10, 18, dtype=np.float32))
        big, y, full = guarded(d, np.zeros(8, np.float32), 4, 8, np.float32)
        r = mod.read_past.prepare(d, checks=checks)
        out = d.zeros(8)
        s = gi.Scheme(d)
        k.record(s, "writer", x, y).over_1d(8)
        r.record(s, "reader", x, out, 1).over_1d(8)
        s.submit()  # no KernelFault
        np.testing.assert_array_equal(y.numpy(), np.array([0, 10, 11, 12, 13, 14, 15, 16], np.float32))
        assert_outside_untouched(big, full, 4, 8)  # the dropped store did not land outside
        np.testing.assert_array_equal(out.numpy(), 2 * np.array([11, 12, 13, 14, 15, 16, 17, 0], np.float32))
        assert d.backend._fault_buf is None
    finally:
        d.close()


def test_checked_and_unchecked_sources_differ_only_when_sites_remain(dev, mod):
    """A kernel whose every access a guard proves binds no error word even with checks on."""
    proven = gi.load_source("""
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn proven(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() && i < y.len() { y[i] = x[i]; }
}
""", "p.rs").proven.prepare(dev)
    assert check_sites(proven.prepared.target_ir) == []
    assert not proven.prepared.compiled.checked and "_goldy_faults" not in proven.prepared.compiled.source
    checked = mod.read_past.prepare(dev)
    assert checked.prepared.compiled.checked
    assert "x.load_checked(" in checked.prepared.compiled.source


def test_buffer_arg_offsets_are_logical(dev, mod):
    """The reported index is relative to the bound view, the length its logical length."""
    x = dev.buffer(np.arange(20, dtype=np.float32))
    y = dev.zeros(5)
    s = gi.Scheme(dev)
    mod.read_past.prepare(dev).record(s, "v", x[10:15], y, 1).over_1d(5)
    e = fault_of(s)
    assert (e.index, e.length) == (5, 5)
    np.testing.assert_array_equal(y.numpy(), 2 * np.array([11, 12, 13, 14, 0], np.float32))
    assert isinstance(s.nodes[0].dispatch.args[0], BufferArg) and s.nodes[0].dispatch.args[0].offset == 10
