"""The CPU backend's one-pass reduction loops (codegen/cpu/loops.py) against the SIMT loop
they replace: random kernels with reduction loops (tests/kernel_gen.py, `reductions`) run
both ways on fresh random data must give the same bits in every output."""

import random

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.cpu import ckernel
from goldy_import.codegen.cpu import emitter as E
from goldy_import.codegen.cpu.emitter import emit_cpu
from goldy_import.errors import BackendError

import kernel_gen as G
from oracle import kernel_ir, run_kernel
from test_differential_fuzz import assert_bits, trapping_checks


@pytest.fixture(autouse=True)
def numpy_form_only(monkeypatch):
    """These tests are about the numpy form: no dispatch may move to its C form."""
    monkeypatch.setattr(ckernel, "PREFER", False)

GEMV = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 0.0;
        for j in 0..n {
            let wj = w[i * n + j];
            acc = acc + wj * x[j];
        }
        out[i] = acc;
    }
}
"""


def run(src: str, kernel: str, args, grid, one_pass: bool, monkeypatch):
    """One run on a fresh CPU device, the reduction fast path on or off."""
    with monkeypatch.context() as m:
        m.setattr(E._Emitter, "one_pass_loops", one_pass)
        m.setattr(E, "_CACHE", {})
        m.setattr("oracle._devices", {})
        return run_kernel("cpu", src, kernel, args, grid)


def outcome(fn):
    """fn()'s result, or its KernelFault's message (both paths must agree on either)."""
    try:
        return fn()
    except gi.KernelFault as e:
        return str(e)


def both_ways(src: str, kernel: str, args, grid, out: int, checks: bool, monkeypatch) -> list:
    """(one-pass, SIMT) outcome of output `out`, with trapping checks on or off."""
    with trapping_checks(checks):
        return [outcome(lambda: run(src, kernel, args, grid, one_pass, monkeypatch)[out])
                for one_pass in (True, False)]


def assert_same_fault_or_bits(fast, plain, param: str, what: str) -> None:
    """Both faulted with the same report naming `param`, or both ran to the same bits."""
    if isinstance(plain, str):
        assert fast == plain and f"`{param}`" in plain
    else:
        assert not isinstance(fast, str), fast
        assert_bits(fast, plain, what)


@pytest.mark.parametrize("block", [None, 1 << 10])  # one block of iterations; blocks of 8 iterations, of lanes
def test_gemv_loop_is_one_pass_and_exact(monkeypatch, block):
    assert "rt.accumulate(" in emit_cpu(kernel_ir(GEMV, "gemv"))
    if block:
        from goldy_import.codegen.cpu import loops
        monkeypatch.setattr(loops, "BLOCK_ELEMENTS", block)
        monkeypatch.setattr(loops, "LANE_TERMS", 1 << 12)
    r = np.random.default_rng(7)
    rows, n = 100, 300
    w = (r.standard_normal(rows * n) * 10).astype(np.float32)
    x = r.standard_normal(n).astype(np.float32)
    out = np.zeros(rows, np.float32)
    args = [w, x, out, rows, n]
    fast = run(GEMV, "gemv", args, ("over_1d", rows), True, monkeypatch)[2]
    plain = run(GEMV, "gemv", args, ("over_1d", rows), False, monkeypatch)[2]
    assert_bits(fast, plain, "gemv")
    want = np.zeros(rows, np.float32)  # sequential f32 sums, as Rust does them
    for j in range(n):
        want = want + w.reshape(rows, n)[:, j] * x[j]
    assert_bits(fast, want, "gemv vs numpy")


@pytest.mark.parametrize("blocks", ["default", "small"])
def test_one_pass_loops_match_the_simt_loop_on_random_kernels(monkeypatch, blocks):
    if blocks == "small":
        small_blocks(monkeypatch)
    rng = random.Random(20261201)
    used = 0
    for case in range(50):
        gk = G.sample(rng, max_stmts=6, reductions=True)
        used += "rt.accumulate(" in emit_cpu(kernel_ir(gk.source, G.NAME))
        for n in (70,):
            args = gk.inputs(n, case)
            with trapping_checks(not gk.unchecked):
                fast = run(gk.source, G.NAME, args, ("over_1d", n), True, monkeypatch)
                plain = run(gk.source, G.NAME, args, ("over_1d", n), False, monkeypatch)
            for name, f, p in zip(G.PARAMS, fast, plain):
                if p is not None:
                    assert_bits(f, p, f"{name}, case {case}, n={n}\n{gk.source}")
    assert used >= 10, f"only {used} of 50 kernels took the one-pass path"


def test_a_failed_check_in_a_one_pass_loop_reports_what_the_simt_loop_does(monkeypatch):
    r = np.random.default_rng(8)
    rows, n = 70, 50
    w = r.standard_normal(rows * n - 75).astype(np.float32)  # the last rows run past the end
    args = [w, r.standard_normal(n).astype(np.float32), np.zeros(rows, np.float32), rows, n]
    faults = []
    for one_pass in (True, False):
        with pytest.raises(gi.KernelFault) as e:
            run(GEMV, "gemv", args, ("over_1d", rows), one_pass, monkeypatch)
        faults.append(str(e.value))
    assert faults[0] == faults[1] and "`w`" in faults[0]


# The fast GEMV path (rt.span views, rt.accumulate's lane blocks): every shape of its
# operands against the SIMT loop, bit for bit, with specials in the data, lanes whose rows
# run past the end, u32 indices that wrap, and small blocks so that every block path runs.
SPANS = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [WG, 1, 1])]
fn spans(w: &[f32], x: &[f32], b: &[f32], out: gpu::Scattered<f32>, rows: u32, n: u32, off: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = b[i];
        let mut lone = 0.0;
        let mut diff = -0.0;
        for j in 0..n {
            acc = acc + w[off + i * n + j] * x[j];
            lone = lone + w[i * n + j];
            diff = diff + (x[j] - w[j + i * n]);
        }
        let mut inc = 1.5;
        for t in 1..=n {
            inc = inc + w[i * n + t] * 0.5;
        }
        out[i] = acc;
        out[rows + i] = lone;
        out[2 * rows + i] = diff;
        out[3 * rows + i] = inc;
    }
}
"""


def specials(r, size: int) -> np.ndarray:
    """Random f32 with a sprinkling of NaN, infinities, signed zeros and subnormals."""
    v = (r.standard_normal(size) * 10.0 ** r.integers(-3, 4, size)).astype(np.float32)
    pick = r.random(size)
    v[pick < 0.02] = np.nan
    v[(pick >= 0.02) & (pick < 0.03)] = np.inf
    v[(pick >= 0.03) & (pick < 0.04)] = -np.inf
    v[(pick >= 0.04) & (pick < 0.06)] = -0.0
    v[(pick >= 0.06) & (pick < 0.08)] = np.float32(1e-40)
    return v


def spans_both_ways(monkeypatch, wg: int, rows: int, n: int, w_len: int, off: int = 0, checks: bool = True,
                    data_seed: int = 9):
    """(one-pass, SIMT) results of SPANS: outputs, or the fault message."""
    r = np.random.default_rng(data_seed)
    src = SPANS.replace("WG", str(wg))
    assert "rt.span(" in emit_cpu(kernel_ir(src, "spans")) and "rt.accumulate(" in emit_cpu(kernel_ir(src, "spans"))
    args = [specials(r, w_len), specials(r, n), specials(r, rows), np.zeros(4 * rows, np.float32), rows, n, off]
    return both_ways(src, "spans", args, ("over_1d", rows), 3, checks, monkeypatch)


def small_blocks(monkeypatch):
    """rt.accumulate in many blocks of lanes and iterations, strided or wide."""
    from goldy_import.codegen.cpu import loops
    for name, v in (("LANE_TERMS", 64), ("MIN_BLOCK_LANES", 2), ("LEAN_BLOCK_ELEMENTS", 300),
                    ("WIDE_LANES", 2), ("WIDE_TERMS", 64)):
        monkeypatch.setattr(loops, name, v)


@pytest.mark.parametrize("blocks", ["default", "small"])
@pytest.mark.parametrize("wg,rows,n", [(64, 288, 40), (64, 256, 37), (1, 9, 33), (16, 70, 1), (64, 1, 50), (1, 1, 20)])
def test_span_loops_match_the_simt_loop(monkeypatch, blocks, wg, rows, n):
    if blocks == "small":  # many blocks of lanes and iterations, a lone lane row merged
        small_blocks(monkeypatch)
    fast, plain = spans_both_ways(monkeypatch, wg, rows, n, rows * n + 1)
    assert_bits(fast, plain, f"spans wg={wg} rows={rows} n={n} ({blocks} blocks)")


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("short,off", [(75, 0), (1, 0), (0, 7), (0, (1 << 32) - 3 * 40), (0, (1 << 32) - 5)])
def test_span_loops_past_the_end_fault_or_read_zero_as_the_simt_loop_does(monkeypatch, checks, short, off):
    """Rows running past the end of `w` (the last ones, or a straddling one), and `off`
    making the indices wrap around 2^32: the same fault report, or (checks off) the same
    zeros read, as the SIMT loop."""
    rows, n = 70, 40
    fast, plain = spans_both_ways(monkeypatch, 64, rows, n, rows * n + 1 - short, off, checks)
    assert_same_fault_or_bits(fast, plain, "w", f"spans short={short} off={off} checks={checks}")


def test_accumulate_without_an_in_order_reduce_gives_the_same_bits(monkeypatch):
    """A numpy whose np.add.reduce regrouped the adds (IN_ORDER false) takes the plain loop."""
    from goldy_import.codegen.cpu import loops
    want, _ = spans_both_ways(monkeypatch, 64, 100, 30, 3001)
    monkeypatch.setattr(loops, "IN_ORDER", False)
    got, plain = spans_both_ways(monkeypatch, 64, 100, 30, 3001)
    assert_bits(got, plain, "IN_ORDER off")
    assert_bits(got, want, "IN_ORDER off vs on")


def test_the_in_order_probe_tells_pairwise_from_sequential():
    """loops.IN_ORDER is True on this numpy, and its probe's terms do tell the orders apart."""
    from goldy_import.codegen.cpu import loops
    col = np.tile(np.float32([1.0, 2.0 ** 24, 1.0, -(2.0 ** 24)]), 10)
    assert loops.IN_ORDER
    assert np.add.reduce(col) != np.float32(0)  # pairwise (the contiguous axis)
    seq = np.float32(0)
    for t in col:
        seq = seq + t
    assert seq == 0


# Transposed copies (codegen/cpu/transposed.py): a recorded scheme submitted again reads the
# GEMV operand from a cached copy from its second submit on. Every submit must give the
# SIMT loop's bits on the data the buffer holds then, whatever wrote it.
def spans_repeated(monkeypatch, wg: int, rows: int, n: int, w_len: int, off: int = 0, checks: bool = True,
                   submits: int = 3, between=None, cap=None):
    """One-pass results (outputs or fault messages) of `submits` submits of one recorded
    SPANS scheme, the output poisoned before each; `between(i, w_buffer)` runs before
    submit i; the device (for its cache)."""
    from goldy_import.codegen.cpu import transposed
    monkeypatch.setattr(transposed, "MIN_ELEMENTS", 0)
    r = np.random.default_rng(9)
    src = SPANS.replace("WG", str(wg))
    args = [specials(r, w_len), specials(r, n), specials(r, rows)]
    dev = gi.Device("cpu") if cap is None else gi.Device("cpu", transposed_cache=cap)
    with trapping_checks(checks):
        pk = gi.load_source(src, "test_kernel.rs").spans.prepare(dev)
    w, x, b, out = dev.buffer(args[0]), dev.buffer(args[1]), dev.buffer(args[2]), dev.zeros(4 * rows)
    s = gi.Scheme(dev)
    pk.record(s, "spans", w, x, b, out, rows, n, off).over_1d(rows)
    got = []
    for i in range(submits):
        if between is not None:
            between(i, w)
        out.write(np.full(4 * rows, np.nan, np.float32))
        try:
            s.submit()
            got.append(out.numpy())
        except gi.KernelFault as e:
            got.append(str(e))
    return got, dev


def simt_spans(monkeypatch, wg: int, rows: int, n: int, w: np.ndarray, off: int = 0, checks: bool = True):
    """The SIMT loop's SPANS output (or fault message) on `w` (x and b as spans_repeated's)."""
    r = np.random.default_rng(9)
    specials(r, w.size)
    args = [w, specials(r, n), specials(r, rows), np.zeros(4 * rows, np.float32), rows, n, off]
    with trapping_checks(checks):
        try:
            return run(SPANS.replace("WG", str(wg)), "spans", args, ("over_1d", rows), False, monkeypatch)[3]
        except gi.KernelFault as e:
            return str(e)


@pytest.mark.parametrize("wg,rows,n,short,off", [(64, 288, 40, 0, 0), (64, 256, 37, 0, 5), (1, 9, 33, 0, 0),
                                                 (16, 70, 2, 0, 0), (64, 70, 40, 75, 0), (64, 70, 40, 1, 0),
                                                 (64, 70, 40, 0, (1 << 32) - 3 * 40)])
@pytest.mark.parametrize("blocks", ["default", "small"])
def test_transposed_copies_give_the_simt_bits_on_every_submit(monkeypatch, wg, rows, n, short, off, blocks):
    """Tails (lanes past the rows, runs past the end of `w`, indices wrapping around
    2^32), specials, faults: submit 1 reads strided, 2 makes the copy, 3 reads it."""
    if blocks == "small":
        small_blocks(monkeypatch)
    w_len = rows * n + 1 - short
    got, dev = spans_repeated(monkeypatch, wg, rows, n, w_len, off)
    r = np.random.default_rng(9)
    want = simt_spans(monkeypatch, wg, rows, n, specials(r, w_len), off)
    for i, g in enumerate(got):
        if isinstance(want, str):
            assert g == want and "`w`" in want, f"submit {i}"
        else:
            assert not isinstance(g, str), g
            assert_bits(g, want, f"spans wg={wg} rows={rows} n={n} short={short} off={off}, submit {i}")
    if off == 0 and short == 0:
        assert dev.backend.transposed.bytes > 0, "the copy was not made"


def test_a_host_write_between_submits_is_seen(monkeypatch):
    rows, n = 288, 40
    fresh = [specials(np.random.default_rng(s), rows * n + 1) for s in (11, 12)]

    def between(i, w):
        if i in (3, 5):
            w.write(fresh[i == 5])
    got, dev = spans_repeated(monkeypatch, 64, rows, n, rows * n + 1, submits=7, between=between)
    first = simt_spans(monkeypatch, 64, rows, n, specials(np.random.default_rng(9), rows * n + 1))
    for i, g in enumerate(got):
        want = first if i < 3 else simt_spans(monkeypatch, 64, rows, n, fresh[i >= 5])
        assert_bits(g, want, f"submit {i}")
    assert dev.backend.transposed.bytes > 0


def test_a_write_through_a_dlpack_export_is_seen(monkeypatch):
    rows, n = 288, 40
    fresh = specials(np.random.default_rng(13), rows * n + 1)
    views = []

    def between(i, w):
        if i == 2:
            views.append(np.from_dlpack(w))  # the buffer's own memory, writable
        if i == 3:
            views[0][:] = fresh
    got, dev = spans_repeated(monkeypatch, 64, rows, n, rows * n + 1, submits=5, between=between)
    assert_bits(got[4], simt_spans(monkeypatch, 64, rows, n, fresh), "after the write through the export")
    assert dev.backend.transposed.bytes == 0  # the export dropped the copy, and no new one is made


GEMV_RW = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn bump(w: &mut [f32], k: f32) {
    let i = gpu::global_id().x;
    if i < w.len() { w[i] = w[i] * 0.75 + k; }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv(w: &[f32], x: &[f32], out: &mut [f32], rows: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut acc = 0.0;
        for j in 0..n { acc = acc + w[i * n + j] * x[j]; }
        out[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn gemv_rw(w: &mut [f32], x: &[f32], out: &mut [f32], rows: u32, n: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut a = 0.0;
        for j in 0..n { a = a + w[i * n + j] * x[j]; }
        let mut b = 0.0;
        for j in 0..n { b = b + w[i * n + j] * x[j]; }
        w[i * n] = a + b;
        let mut c = 0.0;
        for j in 0..n { c = c + w[i * n + j] * x[j]; }
        out[i] = c;
    }
}
"""


def test_a_buffer_written_by_the_same_scheme_is_never_read_stale(monkeypatch):
    """`w` bumped by a dispatch before the GEMV in each submit, and a GEMV writing the
    matrix it reads between its loops (bound writably: never copied while it runs, though
    it reads the same rows a second and third time): every submit as numpy's sequential
    sums of what `w` holds then."""
    from goldy_import.codegen.cpu import transposed
    monkeypatch.setattr(transposed, "MIN_ELEMENTS", 0)
    r = np.random.default_rng(14)
    rows, n = 200, 48
    w0, x0 = specials(r, rows * n), r.standard_normal(n).astype(np.float32)
    dev = gi.Device("cpu")
    m = gi.load_source(GEMV_RW, "gemv_rw.rs")
    w, x, out, out2 = dev.buffer(w0), dev.buffer(x0), dev.zeros(rows), dev.zeros(rows)
    s = gi.Scheme(dev)
    node = m.bump.prepare(dev).record(s, "bump", w, 0.5).over_1d(rows * n)
    m.gemv.prepare(dev).record(s, "gemv", w, x, out, rows, n).over_1d(rows)
    m.gemv.prepare(dev).record(s, "gemv again", w, x, out, rows, n).over_1d(rows)
    m.gemv_rw.prepare(dev).record(s, "gemv_rw", w, x, out2, rows, n).over_1d(rows)

    def sums(wm):
        acc = np.zeros(rows, np.float32)
        with np.errstate(all="ignore"):  # specials: inf - inf
            for j in range(n):
                acc = acc + wm.reshape(rows, n)[:, j] * x0[j]
        return acc
    host = w0.copy()
    for i in range(6):
        k = np.float32(0.5 if i < 4 else 0.25)
        if i == 4:
            s.set_node_param(node, "k", 0.25)
        out.write(np.full(rows, np.nan, np.float32))
        out2.write(np.full(rows, np.nan, np.float32))
        s.submit()
        host = host * np.float32(0.75) + k
        a = sums(host)
        assert_bits(out.numpy(), a, f"gemv, submit {i}")
        host.reshape(rows, n)[:, 0] = a + a
        assert_bits(out2.numpy(), sums(host), f"gemv_rw, submit {i}")
        assert_bits(w.numpy(), host, f"gemv_rw's w, submit {i}")


def test_the_cache_is_bounded_and_freed_with_its_buffers(monkeypatch):
    rows, n = 288, 40
    want = simt_spans(monkeypatch, 64, rows, n, specials(np.random.default_rng(9), rows * n + 1))
    for cap in (0, 4 * n * rows - 1):  # none; too small for the copy (the strided read stays)
        got, dev = spans_repeated(monkeypatch, 64, rows, n, rows * n + 1, cap=cap)
        assert dev.backend.transposed.bytes == 0
        assert_bits(got[-1], want, f"cap {cap}")
    kept = []
    got, dev = spans_repeated(monkeypatch, 64, rows, n, rows * n + 1, between=lambda i, w: kept.append(w))
    assert dev.backend.transposed.bytes >= 4 * n * rows
    kept[0].free()
    assert dev.backend.transposed.bytes == 0
    with pytest.raises(BackendError, match="transposed_cache"):
        gi.Device("cpu", transposed_cache=-1)


# Gathers on the active lanes alone (rt._ld_lanes): a non-affine run per lane (attention
# scores: the base jumps from head to head) under a mask that few lanes pass.
SCORES = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn scores(q: &[f32], k: &[f32], out: gpu::Scattered<f32>, pos: u32, heads: u32, hs: u32, seq: u32, lim: u32) {
    let g = gpu::global_id().x;
    let h = g / seq;
    let t = g % seq;
    if h < heads && t <= pos {
        let mut s = 0.0;
        let mut c = 0.0;
        for d in 0..hs {
            s = s + q[h * hs + d] * k[t * heads * hs + h * hs + d];
            let ok = d < lim && k[(t + 1) * heads * hs + h * hs + d] > 0.0;
            c = c + if ok { 1.0 } else { 0.5 };
        }
        out[g] = s;
        out[heads * seq + g] = c;
    }
}
"""


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("pos,rows,lim", [(0, 129, 99), (5, 129, 3), (40, 129, 99), (126, 128, 99), (9, 10, 99),
                                          (9, 10, 0), (9, 10, 7), (100, 127, 99)])
def test_gathers_on_the_active_lanes_alone_match_the_simt_loop(monkeypatch, checks, pos, rows, lim):
    """Few lanes active (pos small) and most (pos large); `k` holding `rows` rows, too few
    for the guarded load of row t + 1 where t = pos (and a little more): the same fault
    (checks on; only where `d < lim`) or zeros (off) as the SIMT loop."""
    heads, hs, seq = 3, 20, 128
    r = np.random.default_rng(15)
    args = [specials(r, heads * hs), specials(r, rows * heads * hs - (rows == 127)),
            np.zeros(2 * heads * seq, np.float32), pos, heads, hs, seq, lim]
    src = SCORES
    assert "m=m" in emit_cpu(kernel_ir(src, "scores"))  # the mask reaches rt.span
    fast, plain = both_ways(src, "scores", args, ("over_1d", heads * seq), 2, checks, monkeypatch)
    assert_same_fault_or_bits(fast, plain, "k", f"scores pos={pos} rows={rows} lim={lim} checks={checks}")


GUARDED = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn guarded(w: &[f32], out: gpu::Scattered<f32>, rows: u32, n: u32, lim: u32) {
    let i = gpu::global_id().x;
    if i < rows {
        let mut c = 0.0;
        for j in 0..n {
            let ok = j < lim && w[i * n + j] > 0.0;
            c = c + if ok { 1.0 } else { 0.5 };
        }
        out[i] = c;
    }
}
"""


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("w_len,lim", [(68 * 40, 0), (68 * 40, 3), (68 * 40, 99), (70 * 40 - 75, 0), (70 * 40 - 75, 7)])
def test_a_guarded_span_load_past_the_end_faults_where_the_simt_loop_does(monkeypatch, checks, w_len, lim):
    """The guard (`j < lim &&`) varies by iteration: the first fault is the first
    iteration at which it holds on an active lane whose run is past the end."""
    rows, n = 70, 40
    args = [specials(np.random.default_rng(16), w_len), np.zeros(rows, np.float32), rows, n, lim]
    fast, plain = both_ways(GUARDED, "guarded", args, ("over_1d", rows), 1, checks, monkeypatch)
    assert_same_fault_or_bits(fast, plain, "w", f"guarded w_len={w_len} lim={lim} checks={checks}")


PUT = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn put(x: &[f32], out: &mut [f32], off: u32) {
    let i = gpu::global_id().x;
    if i < x.len() {
        out[off + i] = x[i] * 2.0;
        out[i + 7u32] = x[i];
    }
}
"""


@pytest.mark.parametrize("checks", [True, False])
@pytest.mark.parametrize("off", [0, 5, 200 - 70, 200 - 3, 1000, (1 << 32) - 3, (1 << 32) - 200])
@pytest.mark.parametrize("grid", [("over_1d", 70), ("groups", (2, 2, 1))])
def test_stores_at_an_offset_plus_global_id_as_slices(monkeypatch, checks, off, grid):
    """`out[off + i]` (rt.st_lin's `off`) against the general scatter (rt.st): in range,
    past the end (faults, or dropped), wrapping around 2^32, a 2-D grid."""
    assert ", off=s_off)" in emit_cpu(kernel_ir(PUT, "put"))
    r = np.random.default_rng(17)
    args = [specials(r, 70), specials(r, 200), off]
    got = []
    with trapping_checks(checks):
        for lin in (True, False):
            with monkeypatch.context() as m:
                if not lin:
                    m.setattr(E._Emitter, "lin_offset", lambda self, e: None)
                got.append(outcome(lambda: run(PUT, "put", args, grid, True, monkeypatch)[1]))
    fast, plain = got
    assert_same_fault_or_bits(fast, plain, "out", f"put off={off} grid={grid} checks={checks}")
