"""The CPU backend's C form (codegen/cpu/ckernel.py) against its numpy SIMT form, the
oracle: random kernels of the whole dialect (tests/kernel_gen.py) on fresh random data
with special values give the same bits in every output, or the same fault; the C form
runs where it can and says why not elsewhere; each dispatch keeps its faster form."""

import random

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.cpu import ckernel, native
from goldy_import.codegen.cpu import emitter as E

import kernel_gen as G
from oracle import c_compiler_or_skip, run_kernel
from test_cpu_loops import outcome, specials
from test_differential_fuzz import assert_bits, trapping_checks

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def c_compiler():
    c_compiler_or_skip()  # fails instead where GOLDY_REQUIRE_BACKENDS names cc (CI)


def run(src, kernel, args, grid, prefer, monkeypatch):
    """One run on a fresh CPU device: the C form always (True) or never (False)."""
    with monkeypatch.context() as m:
        m.setattr(ckernel, "PREFER", prefer)
        m.setattr(E, "_CACHE", {})
        m.setattr("oracle._devices", {})
        ran = []
        real = ckernel.NativeKernel.run
        m.setattr(ckernel.NativeKernel, "run", lambda self, *a: ran.append(1) or real(self, *a))
        out = outcome(lambda: run_kernel("cpu", src, kernel, args, grid))
        return out, bool(ran)


def assert_same(c, plain, what):
    if isinstance(plain, str):
        assert c == plain, what
        return
    assert not isinstance(c, str), f"{what}: {c}"
    for g, w in zip(c, plain):
        if w is not None:
            assert_bits(g, w, what)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_kernels_give_the_numpy_forms_bits(monkeypatch, seed):
    rng = random.Random(20261204 + seed)
    compiled = 0
    for case in range(60):
        gk = G.sample(rng)
        n = rng.choice((1, 63, 64, 70, 300))
        args = gk.inputs(n, case)
        with trapping_checks(not gk.unchecked):
            (c, ran), (plain, _) = (run(gk.source, G.NAME, args, ("over_1d", n), p, monkeypatch) for p in (True, False))
        assert_same(c, plain, f"case {case}, n={n}, seed {seed}\n{gk.source}")
        compiled += ran
    assert compiled >= 8, f"only {compiled} of 60 kernels ran as C"  # ~1 in 4 (most use workgroup memory)


KERNELS = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn norm(x: &[f32], out: &mut [f32], n: u32, eps: f32) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let base = gpu::workgroup_id().x * n;
    let mut acc = 0.0;
    let mut c = lid;
    while c < n {
        acc += x[base + c] * x[base + c];
        c += 64;
    }
    let total = gpu::workgroup_sum::<64>(acc, scratch);
    let inv = 1.0 / (total / (n as f32) + eps).sqrt();
    gpu::workgroup_barrier();
    c = lid;
    while c < n {
        out[base + c] = x[base + c] * inv;
        c += 64;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn counts(x: &[u32], out: &mut [u32]) {
    let scratch = gpu::workgroup_array::<u32, 64>();
    let i = gpu::global_id().x;
    let v = if i < x.len() { x[i] % 7 } else { 0 };
    let total = gpu::workgroup_sum::<64>(v, scratch);
    if gpu::local_id().x == 0 {
        out[gpu::workgroup_id().x] = total;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tail(x: &[f32], out: &mut [f32], lo: u32, hi: u32, skip: u32) {
    let i = gpu::global_id().x;
    let mut s = 0.0;
    for j in lo..=hi {
        if j == skip { continue; }
        if j > lo + 40 { break; }
        s = s + x[(i + j) % x.len()];
    }
    out[i] = s.exp() - (s * 0.5).tanh();
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn shift(x: &[f32], out: &mut [f32], by: u32) {
    let i = gpu::global_id().x;
    out[i + by] = x[i] * 2.0;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn biggest(x: &[f32], y: &[i32], out: &mut [f32], iout: &mut [i32]) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let iscratch = gpu::workgroup_array::<i32, 64>();
    let i = gpu::global_id().x;
    let m = gpu::workgroup_max::<64>(x[i], scratch);
    let k = gpu::workgroup_max::<64>(y[i], iscratch);
    out[gpu::workgroup_id().x] = m;
    iout[gpu::workgroup_id().x] = k;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn bins(x: &[u32], counts: &mut [u32], hi: &mut [u32], lo: &mut [u32], bits: &mut [u32], ors: &mut [u32],
        ands: &mut [u32], shi: &mut [i32], slo: &mut [i32], nbins: u32) {
    let i = gpu::global_id().x;
    if i < x.len() {
        let b = x[i] % nbins;
        gpu::atomic_add(counts, b, 1);
        gpu::atomic_sub(counts, b + 8, x[i]);
        gpu::atomic_max(hi, b % 4, x[i]);
        gpu::atomic_min(lo, b % 4, x[i]);
        gpu::atomic_xor(bits, b % 2, x[i]);
        gpu::atomic_or(ors, 0, x[i] & 0xff);
        gpu::atomic_and(ands, 0, x[i] | 0xff);
        gpu::atomic_max(shi, b % 4, x[i] as i32);
        gpu::atomic_min(slo, b % 4, x[i] as i32);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn mixed(x: &[u32], counts: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        gpu::atomic_add(counts, x[i] % 4, x[i]);
        gpu::atomic_max(counts, x[i] % 4, x[i]);
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tickets(x: &[u32], counter: &mut [u32], out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < x.len() {
        let t = gpu::atomic_add(counter, 0, 1);
        out[i] = t;
    }
}
"""


def both(monkeypatch, kernel, args, grid, checks=True):
    with trapping_checks(checks):
        (c, ran), (plain, _) = (run(KERNELS, kernel, args, grid, p, monkeypatch) for p in (True, False))
    assert_same(c, plain, kernel)
    return c, ran


@pytest.mark.parametrize("n", [1, 63, 64, 200])
def test_workgroup_sums_and_barriers_run_phase_by_phase(monkeypatch, n):
    r = np.random.default_rng(n)
    _, ran = both(monkeypatch, "norm", [specials(r, 3 * n), np.zeros(3 * n, np.float32), n, 1e-5],
                  ("groups", (3, 1, 1)))
    assert ran
    _, ran = both(monkeypatch, "counts", [r.integers(0, 2**32, 5 * n, dtype=np.uint32),
                                          np.zeros(-(-5 * n // 64), np.uint32)], ("over_1d", 5 * n))
    assert ran


@pytest.mark.parametrize("lo,hi,skip", [(0, 10, 3), (5, 4, 0), (2**32 - 3, 2**32 - 1, 2**32 - 2), (0, 100, 100)])
def test_inclusive_loops_with_break_and_continue(monkeypatch, lo, hi, skip):
    r = np.random.default_rng(lo)
    _, ran = both(monkeypatch, "tail", [specials(r, 100), np.zeros(128, np.float32), lo, hi, skip], ("over_1d", 128))
    assert ran


@pytest.mark.parametrize("checks", [True, False])
def test_a_fault_undoes_the_c_run_and_the_numpy_form_reports_it(monkeypatch, checks):
    r = np.random.default_rng(5)
    x = specials(r, 128)
    out, ran = both(monkeypatch, "shift", [x, np.zeros(140, np.float32), 20], ("over_1d", 128), checks)
    assert ran
    if checks:
        assert isinstance(out, str) and "`out`" in out
    else:  # the stores past the end dropped, the rest made
        assert_bits(out[1][20:140], x[:120] * np.float32(2), "shifted")


@pytest.mark.parametrize("zeros", [False, True])
def test_workgroup_max_is_the_numpy_forms(monkeypatch, zeros):
    """NaN ignored; of equal values (zeros of both signs) the later lane's, in the tree's
    order, as the numpy form and docs/semantics.md have it."""
    r = np.random.default_rng(7)
    x = specials(r, 256)
    if zeros:  # workgroups whose largest value is a zero of either sign
        x[:64] = -np.abs(x[:64])
        x[0:64:3], x[1:64:5] = np.float32(0.0), np.float32(-0.0)
        x[64:128] = np.where(np.arange(64) % 2, np.float32(-0.0), np.float32(0.0))
    y = r.integers(-2**31, 2**31, 256).astype(np.int32)
    _, ran = both(monkeypatch, "biggest", [x, y, np.zeros(4, np.float32), np.zeros(4, np.int32)],
                  ("over_1d", 256))
    assert ran


@pytest.mark.parametrize("nbins", [8, 9])  # 9: bin 8's add and sub meet on counts[8..16]
def test_integer_atomics_whose_old_value_is_unused_run_as_c(monkeypatch, nbins):
    r = np.random.default_rng(nbins)
    u = lambda n: r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)  # noqa: E731
    s = lambda n: r.integers(-2**31, 2**31, n).astype(np.int32)  # noqa: E731
    x = u(500)
    args = [x, u(17), u(4), u(4), u(2), u(1), u(1), s(4), s(4), nbins]
    _, ran = both(monkeypatch, "bins", args, ("over_1d", 500))
    assert ran
    # past the end: the C run is undone, the numpy form reports the fault
    out, ran = both(monkeypatch, "bins", [x, u(12)] + args[2:], ("over_1d", 500))
    assert ran and isinstance(out, str) and "`counts`" in out


def test_atomics_of_two_kinds_on_one_buffer_stay_in_numpy(monkeypatch):
    """An add and a max on the same element do not commute: the numpy form's statement order decides."""
    r = np.random.default_rng(3)
    _, ran = both(monkeypatch, "mixed", [r.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32),
                                         np.zeros(4, np.uint32)], ("over_1d", 300))
    assert not ran


def test_what_stays_in_numpy_says_why():
    dev = gi.Device("cpu")
    m = gi.load_source(KERNELS, "ckernel_cases.rs")
    ck = m.tickets.prepare(dev).prepared.compiled  # the old value is read: the order shows
    assert ckernel.build_now(ck) is None and ck.native_state == "unsupported: an atomic add on u32 whose old value is read"
    ck = m.mixed.prepare(dev).prepared.compiled
    assert ckernel.build_now(ck) is None and ck.native_state == "unsupported: atomics of different kinds on `counts`"
    ck = m.norm.prepare(dev).prepared.compiled
    assert ckernel.build_now(ck) is not None and ck.native_state == "ready"


def test_each_dispatch_keeps_its_faster_form(monkeypatch):
    monkeypatch.setattr(ckernel, "PREFER", None)
    monkeypatch.setattr(E, "_CACHE", {})  # a CpuKernel of its own: no state from other tests
    dev = gi.Device("cpu")
    m = gi.load_source(KERNELS, "ckernel_cases.rs")
    pk = m.shift.prepare(dev)
    ck = pk.prepared.compiled
    x, out = dev.buffer(np.arange(64, dtype=np.float32)), dev.zeros(64)
    s = gi.Scheme(dev)
    node = pk.record(s, "shift", x, out, 0).over_1d(64)
    for _ in range(ckernel.NATIVE_AFTER + ckernel.WARMUP_RUNS + 2 * ckernel.DECIDE_RUNS + 2):
        s.submit()
        ckernel.wait_for_builds()
    form = node.dispatch.state.form
    assert ck.native_state == "ready" and form.choice is not None, (ck.native_state, form.numpy_runs)
    assert form.c_runs == ckernel.DECIDE_RUNS and form.numpy_best < float("inf")
    assert np.array_equal(out.numpy(), np.arange(64, dtype=np.float32) * 2)
    x.write(np.arange(64, dtype=np.float32) + 1)
    s.set_node_param(node, "by", 0)  # repacked where C runs it, the same choice
    s.submit()
    assert (form.packed is not None) == form.choice
    assert np.array_equal(out.numpy(), (np.arange(64, dtype=np.float32) + 1) * 2)


def test_off_keeps_every_kernel_in_numpy(monkeypatch):
    monkeypatch.setattr(native, "_tried", False)
    monkeypatch.setattr(native, "_lib", None)
    monkeypatch.setenv("GOLDY_CPU_NATIVE", "0")
    dev = gi.Device("cpu")
    ck = gi.load_source(KERNELS, "ckernel_cases.rs").shift.prepare(dev).prepared.compiled
    ck.native_state = ""
    assert ckernel.build_now(ck) is None and ck.native_state == "off"


def _child(conn):
    dev = gi.Device("cpu")
    pk = gi.load_source(KERNELS, "ckernel_fork.rs").shift.prepare(dev)
    ck = pk.prepared.compiled
    ck.native, ck.native_state, ck.submits = None, "", ckernel.NATIVE_AFTER - 1
    s = gi.Scheme(dev)
    out = dev.zeros(64)
    pk.record(s, "shift", dev.buffer(np.arange(64, dtype=np.float32)), out, 0).over_1d(64)
    s.submit()  # the NATIVE_AFTER-th: a build on this process's worker
    ckernel.wait_for_builds()
    conn.send((ck.native_state, out.numpy().tolist()))


@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded")  # the fork is the point
def test_a_forked_child_builds_on_a_thread_of_its_own():
    import multiprocessing
    ckernel._worker().submit(lambda: None).result()  # the parent's worker thread exists
    ctx = multiprocessing.get_context("fork")
    a, b = ctx.Pipe()
    p = ctx.Process(target=_child, args=(b,))
    p.start()
    assert a.poll(120), "the child's build never ran"
    state, out = a.recv()
    p.join(30)
    assert state == "ready" and out == [2.0 * i for i in range(64)]


def test_one_slow_numpy_run_is_enough_to_start_a_build(monkeypatch):
    monkeypatch.setattr(ckernel, "PREFER", None)
    monkeypatch.setattr(ckernel, "SLOW_RUN_S", 0.0)  # every run is slow
    monkeypatch.setattr(E, "_CACHE", {})
    dev = gi.Device("cpu")
    pk = gi.load_source(KERNELS, "ckernel_slow.rs").shift.prepare(dev)
    s = gi.Scheme(dev)
    pk.record(s, "shift", dev.buffer(np.ones(64, np.float32)), dev.zeros(64), 0).over_1d(64)
    s.submit()
    ckernel.wait_for_builds()
    assert pk.prepared.compiled.native_state == "ready"
