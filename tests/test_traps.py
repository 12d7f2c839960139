"""Trapping checks (issue 9) on every backend: cpu (the oracle), wgpu (lavapipe here), slang
(slangpy's CPU device), cuda (a GPU; skipped without one). wgpu and slang fail instead of
skipping when GOLDY_REQUIRE_BACKENDS names them (tests/oracle.py `device`).

A failing check (an ir/checks.py site) is suppressed like an unchecked out-of-range access
(load 0, store and atomic dropped, quotient 0), recorded in the dispatch's error word, and
raised at submit as a KernelFault whose message the core builds (runtime/core.py). Each test
runs the same kernels (tests/data/traps/traps.rs) and inputs on the backend and on the CPU
oracle, compares the message and every buffer, and then states the values Rust gives. Every
faulting kernel has one offending lane, so the index in a message does not depend on the
order lanes run in. Every array is bound as a view into a larger buffer of sentinels: an
access that escaped the logical length would land there.

What only one backend has (wgpu's growing error buffer and its storage-binding limit,
slang's lane-serial form, CUDA's batched entry) is in tests named after that backend and
parametrised over it alone. The emitted PTX and the CUDA runtime against a fake driver,
without a GPU: tests/test_ptx_traps.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.ir.abi import FAULT_PARAM, FAULT_WORDS
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime.backend import BufferArg, CompileOptions, Dispatch, FaultReport, ImageArg, ScalarArg
from oracle import TRAPS_RS, backend_or_skip, device, rust_loc

FILE = "traps.rs"
with open(TRAPS_RS) as _f:
    SRC = _f.read()
SENTINEL_F = -7.5
SENTINEL_U = 0xDEADBEEF
F32, U32, I32 = np.float32, np.uint32, np.int32
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
GPUS = BACKENDS[1:]  # the backends with an error word


def on(*backends: str):
    """Run a test taking `dev` on these backends only."""
    return pytest.mark.parametrize("dev", backends, indirect=True)


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, FILE)


@pytest.fixture(params=BACKENDS)
def dev(request):
    return device(request.param)  # the session's device; skips (or fails, see above) without one


@pytest.fixture(scope="module")
def cpu():
    return device("cpu")


def loc(needle: str) -> str:
    return rust_loc(SRC, needle, FILE)


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
    """Record `nodes` = [(kernel, args, n)] in one Scheme on `d`, label = kernel name, and
    submit once: the KernelFault (or None) and the contents of every array argument, in
    order, read through guarded views (so nothing may land outside them). A
    ("tensor", array) argument is bound as a tensor."""
    s = gi.Scheme(d)
    outs = []
    for name, args, n in nodes:
        bound = []
        for a in args:
            if isinstance(a, tuple) and a[0] == "tensor":
                bound.append(d.tensor(a[1]))
                outs.append(bound[-1])
            elif isinstance(a, np.ndarray):
                g = Guarded(d, a)
                bound.append(g.view)
                outs.append(g)
            else:
                bound.append(a)
        getattr(mod, name).prepare(d, checks=checks).record(s, name, *bound).over_1d(n)
    fault = None
    if expect_fault:
        fault = fault_of(s)
    else:
        s.submit()
    return fault, [o.numpy() for o in outs]


def same_as_cpu(dev, cpu, mod, nodes, expect_fault=True):
    """`run` on `dev` and on the CPU oracle: the same message, the same buffers."""
    got_fault, got = run(dev, mod, nodes, expect_fault=expect_fault)
    if dev is not cpu:
        want_fault, want = run(cpu, mod, nodes, expect_fault=expect_fault)
        assert str(got_fault) == str(want_fault)
        for j, (g, w) in enumerate(zip(got, want)):
            np.testing.assert_array_equal(g, w, err_msg=f"{dev.backend_name} vs cpu: array argument {j}")
    return got_fault, got


# ---------------------------------------------------------------- each kind of check, against the oracle


@dataclass
class Case:
    nodes: list  # [(kernel, args, over_1d extent)], see `run`
    message: str
    outs: dict  # position among the array arguments -> contents after the submit
    fault: dict = field(default_factory=dict)  # KernelFault attribute (dotted) -> value


ROW_SUMS = np.array([sum(range(64 * r, 64 * r + 64)) - (255 if r == 3 else 0) for r in range(4)], F32)
CASES = {
    "read": Case([("read_past", [np.arange(1, 9, dtype=F32), np.zeros(8, F32), 1], 8)],
                 f"kernel `read_past` (node 0 'read_past'): index out of bounds at {loc('x[i + off]')}: "
                 f"parameter `x` indexed at 8, but its length is 8",
                 {0: np.arange(1, 9, dtype=F32), 1: np.array([4, 6, 8, 10, 12, 14, 16, 0], F32)},  # the lane read 0
                 {"kernel": "read_past", "index": 8, "length": 8, "site.kind": "index"}),
    "write": Case([("write_past", [np.arange(10, 18, dtype=F32), np.zeros(8, F32)], 8)],
                  f"kernel `write_past` (node 0 'write_past'): index out of bounds at {loc('y[i + 1] =')}: "
                  f"parameter `y` indexed at 8, but its length is 8",
                  {1: np.array([0, 10, 11, 12, 13, 14, 15, 16], F32)}),  # y[8] was dropped
    "atomic": Case([("count_bins", [np.array([0, 1, 1, 7, 9, 3, 3, 3], U32), np.zeros(8, U32)], 8)],
                   f"kernel `count_bins` (node 0 'count_bins'): index out of bounds at "
                   f"{loc('gpu::atomic_add(bins')}: parameter `bins` indexed at 9, but its length is 8",
                   {1: np.array([1, 2, 0, 3, 0, 0, 0, 1], U32)}),
    "workgroup": Case([("shift_left", [np.zeros(128, U32), 1], 128)],
                      f"kernel `shift_left` (node 0 'shift_left'): index out of bounds at {loc('s[l + k]')}: "
                      f"workgroup array `s` indexed at 64, but its length is 64",
                      # lanes 63 and 127 read 0; one failure is recorded for the dispatch
                      {0: np.array([(l + 1) * 10 if l < 63 else 0 for l in range(64)] * 2, U32)}),
    "workgroup_place": Case([("both_fault", [np.arange(8, dtype=F32), np.arange(4, dtype=U32), np.zeros(8, F32), 1],
                              1)],
                            f"kernel `both_fault` (node 0 'both_fault'): index out of bounds at {loc('x[i + 9]')}: "
                            f"parameter `x` indexed at 9, but its length is 8",
                            {2: np.zeros(8, F32)}),
    "tensor": Case([("tensor_copy", [("tensor", np.arange(6, dtype=F32).reshape(2, 3)), np.zeros(6, F32), 1], 6)],
                   f"kernel `tensor_copy` (node 0 'tensor_copy'): index out of bounds at {loc('t[i + off]')}: "
                   f"parameter `t` indexed at 6, but its length is 6",  # numel, not a dimension
                   {1: np.array([1, 2, 3, 4, 5, 0], F32)}),
    "div": Case([("quotients", [np.array([7, 8, 9, 10, 11, 12], U32), np.array([2, 3, 4, 0, 5, 6], U32),
                                np.full(6, 99, U32)], 6)],
                f"kernel `quotients` (node 0 'quotients'): integer division by zero at {loc('a[i] / b[i]')}",
                {2: np.array([3, 2, 2, 0, 2, 2], U32)}, {"site.kind": "divide"}),
    # lane 2 divides by zero twice; its first failure (the `%`) is the one reported
    "rem": Case([("remainders", [np.array([7, -7, 9, -9, -2**31, -2**31], I32), np.array([3, 3, 0, -4, -1, 7], I32),
                                 np.full(6, 5, I32), np.full(6, 5, I32)], 6)],
                f"kernel `remainders` (node 0 'remainders'): integer division by zero at {loc('a[i] % b[i]')}",
                {2: np.array([1, -1, 0, -1, 0, -2], I32),  # Rust `%`: the dividend's sign
                 3: np.array([2, -2, 0, 2, -2**31, -306783378], I32)}),  # MIN / -1 wraps
    # a load feeding a workgroup collective: the lane contributes 0, the others' sums are right
    "collective_read": Case([("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),
                             ("sum_rows", [np.arange(4 * 64 - 1, dtype=F32), np.zeros(4, F32), 64], 4 * 64)],
                            f"kernel `sum_rows` (node 1 'sum_rows'): index out of bounds at "
                            f"{loc('x[row * width + l]')}: parameter `x` indexed at 255, but its length is 255",
                            {1: 2 * np.arange(8, dtype=F32), 3: ROW_SUMS}),
    # a clean node, then faulting ones: the first faulted dispatch is reported, with the count
    "second_of_three": Case([("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),
                             ("write_past", [np.arange(8, dtype=F32), np.zeros(8, F32)], 8),
                             ("quotients", [np.ones(4, U32), np.array([1, 0, 1, 1], U32), np.zeros(4, U32)], 4)],
                            f"kernel `write_past` (node 1 'write_past'): index out of bounds at {loc('y[i + 1] =')}: "
                            f"parameter `y` indexed at 8, but its length is 8 (1 more faulted dispatch in this submit)",
                            {1: 2 * np.arange(8, dtype=F32), 6: np.array([1, 0, 1, 1], U32)}),
    "three_of_four": Case([("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 0], 8),
                           ("write_past", [np.arange(8, dtype=F32), np.zeros(8, F32)], 8),
                           ("quotients", [np.ones(4, U32), np.array([1, 0, 1, 0], U32), np.zeros(4, U32)], 4),
                           ("read_past", [np.arange(8, dtype=F32), np.zeros(8, F32), 2], 8)],
                          f"kernel `write_past` (node 1 'write_past'): index out of bounds at {loc('y[i + 1] =')}: "
                          f"parameter `y` indexed at 8, but its length is 8 (2 more faulted dispatches in this submit)",
                          {1: 2 * np.arange(8, dtype=F32), 6: np.array([1, 0, 1, 0], U32)}),
}


def check_case(dev, cpu, mod, case: str) -> None:
    c = CASES[case]
    fault, outs = same_as_cpu(dev, cpu, mod, c.nodes)
    assert str(fault) == c.message
    for attr, want in c.fault.items():
        assert attrgetter(attr)(fault) == want, attr
    for j, want in c.outs.items():
        np.testing.assert_array_equal(outs[j], want, err_msg=f"array argument {j}")


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_kind_of_check(case, dev, cpu, mod):
    """Read, write, atomic, workgroup array (loaded and stored), tensor, division,
    remainder, a load feeding a collective, faults among several nodes."""
    check_case(dev, cpu, mod, case)


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


def test_every_fault_comes_back_in_dispatch_order(dev, mod):
    """The backend contract: one FaultReport per faulted dispatch, in order, with site,
    index and length; several lanes fail in the first and one of them is named."""
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


# ---------------------------------------------------------------- what must not fault, and in which order


def test_short_circuit_guards_do_not_fault(dev, cpu, mod):
    """`i < n && x[i]` and `i >= n || x[i]` with n = x.len() < y.len(): the access is
    checked (the pass does not carry the left operand into the right), so `&&` and `||`
    must short-circuit as in Rust."""
    nodes = [("guarded_by_and", [np.array([1, -1, 1, 1], F32), np.zeros(8, F32), 4], 8)]
    _, (_, y) = same_as_cpu(dev, cpu, mod, nodes, expect_fault=False)
    np.testing.assert_array_equal(y, np.array([1, 10, 1, 1, 10, 10, 10, 10], F32))


def test_returned_threads_record_nothing(dev, cpu, mod):
    """Threads that returned after a barrier may keep running (uniform control flow on a
    GPU) but their loads and divisions are not Rust's and must not fault."""
    nodes = [("late_return", [np.arange(1, 9, dtype=F32), np.zeros(8, F32), 8], 8)]
    _, (_, y) = same_as_cpu(dev, cpu, mod, nodes, expect_fault=False)
    np.testing.assert_array_equal(y, np.arange(1, 9, dtype=F32) * 2 + 8 // (8 - np.arange(8)))
    # a thread that has not returned still faults
    fault, _ = same_as_cpu(dev, cpu, mod, [("late_return", [np.arange(1, 8, dtype=F32), np.zeros(8, F32), 8], 8)])
    assert str(fault).endswith(f"{loc('x[i] / s[l]')}: parameter `x` indexed at 7, but its length is 7")


def test_value_faults_before_the_place(dev, mod):
    """Rust evaluates an assignment's value before its place: when both fail in one
    thread, the value's check is the first failure; also for a workgroup array's place."""
    x = dev.buffer(np.arange(8, dtype=F32))
    k = dev.buffer(np.array([1, 2, 3, 4], U32))
    y = Guarded(dev, np.zeros(8, F32))
    s = gi.Scheme(dev)
    node = mod.both_fault.prepare(dev).record(s, "both", x, k, y.view, 0).over_1d(1)
    e = fault_of(s)  # `k[i + 4]` in the place fails too, but after `x[i + 8]`
    assert str(e) == (f"kernel `both_fault` (node 0 'both'): index out of bounds at {loc('x[i + 8]')}: "
                      f"parameter `x` indexed at 8, but its length is 8")
    np.testing.assert_array_equal(y.numpy(), np.zeros(8, F32))
    s.set_node_param(node, "which", 1)
    e = fault_of(s)
    assert str(e) == (f"kernel `both_fault` (node 0 'both'): index out of bounds at {loc('x[i + 9]')}: "
                      f"parameter `x` indexed at 9, but its length is 8")


# ---------------------------------------------------------------- images (not bound by the core yet)


def test_image_coordinate_reports_x_y_and_width(dev, mod):
    """Driven through the backend contract: a texel site reports x, y and the width."""
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
    # the same dispatch in bounds: no report (the error word was cleared)
    args[2] = ScalarArg("u32", 0)
    be.update_scalar(d, 2)
    assert be.submit([d]) is None
    be.free(src_h)
    be.free(handle)


# ---------------------------------------------------------------- the error word's life


def test_device_keeps_working_and_the_error_word_is_cleared(dev, mod):
    """A fault leaves the device (the CUDA context) usable: replaying faults again, the
    same scheme in bounds reports nothing old, and new schemes and buffers work."""
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
    s3.submit()
    np.testing.assert_array_equal(z.numpy(), np.array([0, 0, 1, 2, 3, 4, 5, 6], F32))
    np.testing.assert_array_equal(dev.buffer(np.arange(4, dtype=F32)).numpy(), np.arange(4, dtype=F32))


def test_buffer_views_report_logical_index_and_length(dev, mod):
    """The reported index is relative to the bound view, the length its logical length."""
    x = dev.buffer(np.arange(20, dtype=F32))
    y = dev.zeros(5)
    s = gi.Scheme(dev)
    mod.read_past.prepare(dev).record(s, "v", x[10:15], y, 1).over_1d(5)
    e = fault_of(s)
    assert (e.index, e.length) == (5, 5)
    np.testing.assert_array_equal(y.numpy(), 2 * np.array([11, 12, 13, 14, 0], F32))
    arg = s.nodes[0].dispatch.args[0]
    assert isinstance(arg, BufferArg) and arg.offset == 10


# Where each GPU backend's compiled kernel shows its error word: (whether it binds one,
# the target text), and words of that text that only a kernel with one has.
def error_word(backend: str, compiled) -> tuple[bool, str]:
    if backend == "wgpu":
        module = compiled.variants[frozenset()].module
        return module.fault_binding is not None, module.code
    if backend == "slang":
        return compiled.checked, compiled.source
    return compiled.checked, compiled.ptx


ERROR_WORDS = {"wgpu": ("gi_faults", "gi_checked_load_x("),
               "slang": ("GoldyFaults", "_goldy_faults", "x.load_checked("),
               "cuda": (FAULT_PARAM, "// check site")}
ERROR_BUFFER_MADE = {"wgpu": lambda be: be._faults is not None,
                     "slang": lambda be: be._fault_buf is not None,
                     "cuda": lambda be: any(g.faults is not None for g in be._graphs.values())}

@on(*GPUS)
def test_error_word_only_where_sites_remain(dev, mod):
    """A kernel whose every access a guard proves binds no error word, even with checks on."""
    proven = mod.proven.prepare(dev)
    assert check_sites(proven.prepared.target_ir) == []
    bound, text = error_word(dev.backend_name, proven.prepared.compiled)
    assert not bound and not any(w in text for w in ERROR_WORDS[dev.backend_name])
    bound, text = error_word(dev.backend_name, mod.read_past.prepare(dev).prepared.compiled)
    assert bound and all(w in text for w in ERROR_WORDS[dev.backend_name])


@pytest.mark.parametrize("how", ["prepare", "env"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_checks_off_suppress_without_faults_or_error_word(backend, how, mod, monkeypatch):
    """`checks=False` or GOLDY_BOUNDS_CHECKS=0: out-of-range accesses are still suppressed
    (nothing lands outside a view), nothing faults, and no error word is bound or made."""
    backend_or_skip(backend)
    if how == "env":
        monkeypatch.setenv("GOLDY_BOUNDS_CHECKS", "0")
    d = gi.Device(backend)  # a fresh device: its error buffer must never be made
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
        if backend == "cpu":
            return
        for name, _, _ in nodes:
            bound, text = error_word(backend, getattr(mod, name).prepare(d, checks=checks).prepared.compiled)
            assert not bound and not any(w in text for w in ERROR_WORDS[backend]), name
        assert not ERROR_BUFFER_MADE[backend](d.backend)
    finally:
        d.close()


# ---------------------------------------------------------------- one backend's own behaviour


@on("wgpu")
def test_wgpu_error_word_binds_after_the_uniform_block(dev, mod):
    module = mod.read_past.prepare(dev).prepared.compiled.variants[frozenset()].module
    assert module.fault_binding == len(module.bindings) + 1
    assert f"var<storage, read_write> gi_faults: array<atomic<u32>, {FAULT_WORDS}>" in module.code


@on("wgpu")
def test_wgpu_return_after_a_barrier_is_the_done_flag(dev, mod):
    """What test_returned_threads_record_nothing exercises on wgpu: the returned threads
    keep running to the barrier, flagged by `gi_done`."""
    k = mod.late_return.prepare(dev)
    assert "var<private> gi_done" in k.prepared.compiled.variants[frozenset()].module.code


@on("wgpu")
def test_wgpu_more_checked_dispatches_than_error_slots(dev, mod):
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


@on("wgpu")
def test_wgpu_the_error_word_counts_against_the_storage_buffer_limit(dev):
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


@on("slang")
def test_slang_workgroup_checks_in_the_lane_serial_form(dev, mod):
    """slangpy's CPU device runs barrier kernels lane by lane; a fixed parameter clears it."""
    k = mod.shift_left.prepare(dev)
    assert k.prepared.compiled.lane_serial
    y = Guarded(dev, np.zeros(128, U32))
    s = gi.Scheme(dev)
    node = k.record(s, "shift", y.view, 1).over_1d(128)
    assert "workgroup array `s` indexed at 64" in str(fault_of(s))
    s.set_node_param(node, "k", 0)
    s.submit()
    np.testing.assert_array_equal(y.numpy(), np.array([l * 10 for l in range(64)] * 2, U32))


@pytest.fixture
def batched_always(dev):
    """Every element-wise dispatch through CUDA's batched entry (4 workgroups per block)."""
    saved = dev.backend.batch_min_threads
    dev.backend.batch_min_threads = 0
    yield
    dev.backend.batch_min_threads = saved


@on("cuda")
@pytest.mark.parametrize("case", sorted(CASES))
def test_cuda_batched_entry_each_kind_of_check(case, dev, cpu, mod, batched_always):
    check_case(dev, cpu, mod, case)


@on("cuda")
def test_cuda_large_dispatch_on_the_default_path(dev, cpu, mod):
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
