"""Trapping checks on the CUDA backend (issue 9), without a GPU.

- Every example and test-data kernel emitted WITH checks (ir/checks.insert_checks), plain
  and batched entry, assembles with ptxas (warnings are errors) without spills; the
  error-word parameter `p_faults` is there exactly when the IR has check sites, and every
  site the emitter cannot prove has a fault block.
- The emitted text: checks branch out of line once per statement, after its loads; fault
  blocks claim the flag with a compare-and-swap; no `trap`.
- runtime/cuda.py against a fake driver (tests/fake_cuda.py) that plays the fault blocks'
  part: which slot each node is given, when the words are cleared and read back, and the
  FaultReports and KernelFault messages that come out.

The same checks on a real GPU, against the CPU oracle: tests/test_traps.py.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.codegen.ptx import batch_entry, batchable, emit_ptx
from goldy_import.ir.abi import FAULT_PARAM, FAULT_WORDS, has_error_word as has_check_sites
from goldy_import.importer import import_source
from goldy_import.ir import nodes as N
from goldy_import.ir.checks import check_sites, insert_checks
from goldy_import.runtime import cuda as C
from goldy_import.runtime.backend import CompileOptions, Dispatch, FaultReport, ImageArg, ScalarArg

from fake_cuda import FakeDriver, plan_fault
from oracle import TRAPS_RS, rust_loc
from test_ptx import assemble, good_kernels, ptxas  # noqa: F401  (ptxas is a fixture)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SPILLS = re.compile(r"(\d+) bytes spill stores, (\d+) bytes spill loads")
PARAM_NAMES = re.compile(r"\.param (?:\.align \d+ )?\.\w+ (p\w+)")


def checked_kernels():
    return [pytest.param(insert_checks(p.values[0]), id=p.id) for p in good_kernels()]


def entries(text: str) -> dict[str, str]:
    """Entry name -> its text, from `.visible .entry` to the closing brace."""
    out = {}
    for m in re.finditer(r"\.visible \.entry (\w+)\(", text):
        end = text.index("\n}\n", m.start())
        out[m.group(1)] = text[m.start():end + 2]
    return out


def unproven_sites(k: N.Kernel) -> set[int]:
    """Sites the emitter must check: all but workgroup-array ones (it may prove those)."""
    return {s.id for s in check_sites(k) if s.resource is None or k.workgroup_array(s.resource) is None}


@pytest.mark.parametrize("kernel", checked_kernels())
def test_checked_kernels_assemble_without_spills(kernel, ptxas, tmp_path):
    text = emit_ptx(kernel, batch=4)
    log = assemble(ptxas, text, tmp_path)
    spills = SPILLS.findall(log)
    assert spills and all(s == ("0", "0") for s in spills), log
    sites = {s.id for s in check_sites(kernel)}
    assert has_check_sites(kernel) == bool(sites)
    for name, body in entries(text).items():
        params = PARAM_NAMES.findall(body.split(")")[0])
        assert (FAULT_PARAM in params) == bool(sites), name
        recorded = {int(x) for x in re.findall(r"// check site (\d+)", body)}
        assert unproven_sites(kernel) <= recorded <= sites, name
        assert "trap;" not in body and "\ttrap" not in body


def test_no_error_word_without_sites():
    src = open(os.path.join(ROOT, "rust_examples", "saxpy.rs")).read()
    k = import_source(src, "saxpy.rs").kernels[0]
    assert FAULT_PARAM not in emit_ptx(k, batch=4)  # checks off: the IR as imported
    checked = insert_checks(k)
    assert len(check_sites(checked)) == 1  # x[i] under `if i < y.len()`
    text = emit_ptx(checked, batch=4)
    plain, batched = entries(text)["saxpy"], entries(text)[batch_entry(k, 4)]
    assert PARAM_NAMES.findall(plain.split(")")[0])[-1] == FAULT_PARAM
    assert PARAM_NAMES.findall(batched.split(")")[0])[-2:] == [FAULT_PARAM, "p_groups_x"]
    proven = insert_checks(import_source("""
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn proven(x: &[f32], y: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < x.len() && i < y.len() { y[i] = x[i]; }
}
""", "p.rs").kernels[0])
    assert check_sites(proven) == [] and FAULT_PARAM not in emit_ptx(proven, batch=4)


@pytest.mark.parametrize("kernel", checked_kernels())
def test_entry_values_match_both_entries(kernel):
    """runtime/cuda.entry_values packs one value per `.param` of each entry, in order and
    size, with the error word's address where the kernel has sites."""
    from test_cuda_backend import PARAM_RE, fake_args
    from goldy_import.runtime.backend import UniformArg
    args = fake_args(kernel)
    uptrs = {i: 0x5000 for i, a in enumerate(args) if isinstance(a, UniformArg)}
    checked = has_check_sites(kernel)
    values = C.entry_values(kernel, args, uptrs, checked, 0x1234_5678_9ABC, 77)
    for name, body in entries(emit_ptx(kernel, batch=4)).items():
        decl = PARAM_RE.findall(body.split(")")[0] + ")")
        sizes = [int(n) if t == "b8" else (8 if t == "u64" else 4) for t, _name, _i, n in decl]
        assert [len(v) for v in values[:len(sizes)]] == sizes, name
        names = [d[1] for d in decl]
        if checked:
            assert values[names.index(FAULT_PARAM)] == (0x1234_5678_9ABC).to_bytes(8, "little")
        if name != kernel.name:
            assert names[-1] == "p_groups_x" and len(sizes) == len(values)
        else:
            assert len(sizes) == len(values) - 1  # the plain entry never reads the last value


def test_random_kernels_with_checks_assemble(ptxas, tmp_path):
    """Random well-typed kernels (tests/kernel_gen.py) with checks, both entries, through
    ptxas: deferred checks, snapshots and fault blocks in code the examples lack."""
    from hypothesis import HealthCheck, given, settings
    import kernel_gen as G

    @settings(max_examples=12, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(G.kernels())
    def run(gk):
        (k,) = import_source(gk.source, "fuzz.rs").kernels
        k = insert_checks(k)
        text = emit_ptx(k, batch=4)
        assemble(ptxas, text, tmp_path)
        assert (FAULT_PARAM in text) == bool(check_sites(k)), gk.source

    run()


# ---------------------------------------------------------------- the emitted text

READS = """use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn two_reads(x: &[f32], y: &[f32], z: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < z.len() {
        z[i] = x[i + 1] * 2.0 + y[i + 2];
    }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn guarded(x: &[f32], y: &mut [f32], n: u32, d: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        if i < n && x[i] > 0.0 { y[i] = 1.0; }
        if i >= n || x[i] < 0.0 { y[i] = 2.0; }
        y[i] = y[i] + (i / d) as f32;
    }
}
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn move_index(x: &[u32], y: &mut [u32]) {
    let mut i = gpu::global_id().x;
    i = x[i];
    y[0] = i;
}
"""


def test_one_branch_for_straight_line_code_after_its_loads():
    k = insert_checks(import_source(READS, "r.rs").kernel("two_reads"))
    assert len(check_sites(k)) == 2  # x[i + 1] and y[i + 2]
    body = entries(emit_ptx(k))["two_reads"]
    hot = body[:body.index("\tret;")]
    branches = re.findall(r"@%p\d+ bra \$L_fault_\d+;", hot)
    assert len(branches) == 1
    before = hot[:hot.index(branches[0])]
    assert before.count("ld.global.nc.f32") == 2 and "st.global" in before  # the whole statement first
    cold = body[body.index("\tret;"):]
    assert cold.count("atom.global.cas.b32") == 2 and re.search(r"atom\.global\.cas\.b32 %r\d+, \[%rd\d+\], 0, 1;", cold)
    assert cold.count("// check site") == 2 and "bra.uni $L_checked_" in cold
    for off in (4, 8, 12, 16):
        assert cold.count(f"+{off}], %r") == 2


def test_short_circuit_operand_checks_only_where_evaluated():
    """`i < n && x[i]`: the fault predicate of x[i] includes `i < n` (and `!(i >= n)` for
    `||`); the division check of `i / d` is unconditional."""
    k = insert_checks(import_source(READS, "r.rs").kernel("guarded"))
    kinds = [(s.kind, s.resource) for s in check_sites(k)]
    assert kinds.count(("index", "x")) == 2 and ("divide", None) in kinds
    text = entries(emit_ptx(k))["guarded"]
    ands = text.split("// r.rs:13")[1].split("// r.rs:14")[0]
    n_cmp = re.search(r"setp\.lt\.u32 (%p\d+), %r\d+, %r2;", ands).group(1)  # i < n (n is p2)
    assert re.search(rf"and\.pred %p\d+, %p\d+, {n_cmp};", ands)
    ors = text.split("// r.rs:14")[1].split("// r.rs:15")[0]
    n_ge = re.search(r"setp\.ge\.u32 (%p\d+), %r\d+, %r2;", ors).group(1)
    not_ge = re.search(rf"not\.pred (%p\d+), {n_ge};", ors).group(1)
    assert re.search(rf"and\.pred %p\d+, %p\d+, {not_ge};", ors)


def test_index_register_is_kept_when_the_statement_assigns_it():
    """`i = x[i]`: the check's branch comes after `i` changed, so the fault block reports
    the index from a copy taken at the check."""
    k = insert_checks(import_source(READS, "r.rs").kernel("move_index"))
    body = entries(emit_ptx(k))["move_index"]
    hot = body[:body.index("\tret;")]
    stmt = hot.split("// r.rs:21")[1].split("// r.rs:22")[0]
    local = re.search(r"mul\.wide\.u32 %rd\d+, (%r\d+), 4;", stmt).group(1)  # i's register
    snap = re.search(rf"mov\.b32 (%r\d+), {local};", stmt).group(1)
    assert hot.index(f"mov.b32 {local}, %r") < hot.index("bra $L_fault")  # i is assigned first
    assert re.search(rf"st\.global\.u32 \[%rd\d+\+8\], {snap};", body)
    assert not re.search(rf"st\.global\.u32 \[%rd\d+\+8\], {local};", body)


LOOP = """use goldy::gpu;
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn block_sum(x: &[f32], partial: &mut [f32], per_thread: u32) {
    let s = gpu::workgroup_array::<f32, 256>();
    let g = gpu::workgroup_id().x;
    let base = g * 256 * per_thread + gpu::local_id().x;
    let mut acc = 0.0;
    for j in 0..per_thread { acc += x[base + j * 256]; }
    let t = gpu::workgroup_sum::<256>(acc, s);
    if gpu::local_id().x == 0 { partial[g] = t; }
}
"""


def test_unrolled_loop_loads_stay_in_flight():
    """The reduction loop unrolled by four: the four checked loads and no branch to a fault
    block inside the loop (a side exit per trip, or worse per load, keeps ptxas from
    overlapping the loads): failed checks accumulate in registers, the first one kept, and
    one branch after the loop records it."""
    k = insert_checks(import_source(LOOP, "l.rs").kernels[0])
    sites = check_sites(k)
    assert [s.resource for s in sites] == ["x", "partial"]
    body = entries(emit_ptx(k))["block_sum"]
    four = body[body.index("$L_for4_"):body.index("bra.uni $L_for4_")]
    assert four.count("ld.global.nc.f32") == 4 and "bra $L_fault" not in four
    assert four.count("or.pred") == 4  # each copy's failure folded into the sticky predicate
    after = body[body.index("bra.uni $L_for4_"):]
    assert after.index("bra $L_fault") < after.index("$L_for_")  # one branch once the trips are done


def test_batched_checked_entry_keeps_every_copy_in_flight():
    src = open(os.path.join(ROOT, "rust_examples", "saxpy.rs")).read()
    k = insert_checks(import_source(src, "saxpy.rs").kernels[0])
    assert batchable(k)
    body = entries(emit_ptx(k, batch=4))[batch_entry(k, 4)]
    assert ") .reqntid" not in body  # see _Emitter.run: ptxas would spill to keep full occupancy
    general = body.index("the general path")  # after the fast path for full threads (codegen/ptx/batched.py)
    hot = body[general:body.index("\tret;", general)]
    stmt = hot.split("saxpy.rs:8")[1]
    first_branch = stmt.index("bra $L_fault")
    # every copy's loads and stores, then one branch for the four copies' checks
    assert stmt[:first_branch].count("ld.global.nc.f32") == 4 and stmt[:first_branch].count("st.global.f32") == 4
    assert stmt.count("bra $L_fault") == 1 and stmt[:first_branch].count("or.pred") == 3


# ---------------------------------------------------------------- runtime against a fake driver

with open(TRAPS_RS) as _f:
    SRC = _f.read()  # the kernels of tests/test_traps.py


@pytest.fixture
def fake(monkeypatch):
    drv = FakeDriver()
    monkeypatch.setattr(C, "_driver", lambda: drv)
    dev = gi.Device("cuda")
    yield drv, dev
    dev.close()


def _loc(needle: str) -> str:
    return rust_loc(SRC, needle, "traps.rs")


def test_fake_unchecked_submit_has_no_error_word_traffic(fake):
    drv, dev = fake
    mod = gi.load_source(SRC, "traps.rs")
    x, y = dev.buffer(np.zeros(8, np.float32)), dev.zeros(8)
    s = gi.Scheme(dev)
    node = mod.proven.prepare(dev).record(s, "c", x, y).over_1d(8)
    unchecked = mod.read_past.prepare(dev, checks=False)
    unchecked.record(s, "r", x, y, 1).over_1d(8)
    assert not node.dispatch.compiled.checked and not unchecked.prepared.compiled.checked
    assert FAULT_PARAM not in unchecked.prepared.compiled.ptx
    s.submit()
    s.submit()
    assert drv.count("cuGraphLaunch") == 2
    assert drv.count("cuMemsetD32Async") == drv.count("cuMemcpyDtoHAsync") == drv.count("cuMemAllocHost") == 0


def test_fake_fault_reports_message_and_clearing(fake):
    drv, dev = fake
    mod = gi.load_source(SRC, "traps.rs")
    r = mod.read_past.prepare(dev)
    assert r.prepared.compiled.checked
    (site,) = check_sites(r.prepared.target_ir)
    x, y = dev.buffer(np.zeros(8, np.float32)), dev.zeros(8)
    s = gi.Scheme(dev)
    mod.proven.prepare(dev).record(s, "clean", x, y).over_1d(8)
    r.record(s, "reader", x, y, 1).over_1d(8)
    r.record(s, "again", x, y, 2).over_1d(8)
    s.submit()  # a fresh buffer is cleared first; nothing faults
    assert drv.calls[-4:] == ["cuMemsetD32Async", "cuGraphLaunch", "cuMemcpyDtoHAsync", "cuStreamSynchronize"]
    s.submit()  # known clean: no memset, one launch, one readback
    assert drv.calls[-3:] == ["cuGraphLaunch", "cuMemcpyDtoHAsync", "cuStreamSynchronize"]
    assert drv.count("cuMemsetD32Async") == 1 and drv.count("cuMemAllocHost") == 1
    plan_fault(drv, "read_past", site.id, 8, 8)  # both read_past nodes fault; each its own slot
    with pytest.raises(gi.KernelFault) as info:
        s.submit()
    assert str(info.value) == (f"kernel `read_past` (node 1 'reader'): index out of bounds at "
                               f"{_loc('x[i + off]')}: parameter `x` indexed at 8, but its length is 8 "
                               f"(1 more faulted dispatch in this submit)")
    faults = dev.backend.submit([n.dispatch for n in s.nodes])  # the words were cleared before this one
    assert drv.calls[-4] == "cuMemsetD32Async"
    assert faults == [FaultReport(1, site.id, 8, 8, None), FaultReport(2, site.id, 8, 8, None)]
    drv.planned.clear()
    s.submit()  # cleared again, nothing left over from the fault
    assert drv.calls[-4] == "cuMemsetD32Async"
    s.submit()
    assert drv.calls[-3] == "cuGraphLaunch"


def test_fake_mapped_error_words_need_no_memset_or_copy(fake):
    """With mapped host memory the kernels write the error words straight to the host: a
    submit is the launch and the synchronize alone, faults still come back, and the words
    are cleared on the host before the next launch."""
    drv, dev = fake
    drv.mapped = True
    mod = gi.load_source(SRC, "traps.rs")
    r = mod.read_past.prepare(dev)
    (site,) = check_sites(r.prepared.target_ir)
    x, y = dev.buffer(np.zeros(8, np.float32)), dev.zeros(8)
    s = gi.Scheme(dev)
    r.record(s, "reader", x, y, 1).over_1d(8)
    r.record(s, "again", x, y, 2).over_1d(8)
    s.submit()
    assert drv.calls[-2:] == ["cuGraphLaunch", "cuStreamSynchronize"]
    g = next(iter(dev.backend._graphs.values()))
    assert g.faults.device is None and drv.count("cuMemHostAlloc") == 1
    slots = [n["faults"] for n in drv.execs[g.exec]]
    assert slots == [g.faults.host_ptr, g.faults.host_ptr + 4 * FAULT_WORDS]
    plan_fault(drv, "read_past", site.id, 8, 8)
    faults = dev.backend.submit([n.dispatch for n in s.nodes])
    assert faults == [FaultReport(0, site.id, 8, 8, None), FaultReport(1, site.id, 8, 8, None)]
    drv.planned.clear()
    assert dev.backend.submit([n.dispatch for n in s.nodes]) is None  # cleared on the host, no fault left
    s.submit()
    assert drv.count("cuMemsetD32Async") == drv.count("cuMemcpyDtoHAsync") == drv.count("cuMemAllocHost") == 0
    assert drv.count("cuMemAlloc") == 2  # x and y only: no device buffer for the words
    words = g.faults.host_ptr
    dev.close()
    assert drv.count("cuMemFreeHost") == 1 and words not in drv.mem


def test_fake_each_graph_gives_its_nodes_their_own_slots(fake):
    """One dispatch in two graphs (a scheme, and a direct backend submit): each node points
    at its own graph's slot, also after update_scalar patched the node."""
    drv, dev = fake
    mod = gi.load_source(SRC, "traps.rs")
    x, y = dev.buffer(np.zeros(8, np.float32)), dev.zeros(8)
    s = gi.Scheme(dev)
    k = mod.read_past.prepare(dev)
    first = k.record(s, "a", x, y, 0).over_1d(8)
    second = k.record(s, "b", x, y, 0).over_1d(8)
    s.submit()
    g = dev.backend._graphs[(id(first.dispatch), id(second.dispatch))]
    slots = [n["faults"] for n in drv.execs[g.exec]]
    base = g.faults.device.ptr
    assert slots == [base, base + 4 * FAULT_WORDS]
    dev.backend.submit([second.dispatch, first.dispatch])  # a graph of its own, with its own words
    g2 = dev.backend._graphs[(id(second.dispatch), id(first.dispatch))]
    assert drv.execs[g2.exec][0]["faults"] == g2.faults.device.ptr != slots[1]
    s.set_node_param(second, "off", 3)
    s.submit()  # patched through cuGraphExecKernelNodeSetParams, with this graph's slot
    assert drv.count("cuGraphExecKernelNodeSetParams") == 1
    assert [n["faults"] for n in drv.execs[g.exec]] == slots


def test_fake_image_sites_report_x_and_y(fake):
    drv, dev = fake
    be = dev.backend
    kernel = insert_checks(gi.load_source(SRC, "traps.rs").shift_image.definition().ir)
    load, store = check_sites(kernel)
    comp = be.compile(kernel, CompileOptions())
    assert comp.checked and comp.texel_sites == frozenset({load.id, store.id})
    src, mem = be.alloc(4 * 64), be.alloc(4 * 64)
    d = Dispatch(kernel, comp, [ImageArg(src, 8, 8, "f32"), ImageArg(mem, 8, 8, "f32"), ScalarArg("u32", 3)],
                 (1, 1, 1), "img")
    be.record(d)
    plan_fault(drv, "shift_image", store.id, 9, 8, y=5)
    assert be.submit([d]) == [FaultReport(0, store.id, 9, 8, 5)]


def test_fake_batched_entry_reports_through_the_same_word(fake):
    drv, dev = fake
    be = dev.backend
    be.batch_min_threads = 0
    mod = gi.load_source(SRC, "traps.rs")
    x, y = dev.buffer(np.zeros(300, np.float32)), dev.zeros(300)
    s = gi.Scheme(dev)
    node = mod.read_past.prepare(dev).record(s, "r", x, y, 1).over_1d(300)
    assert node.dispatch.state.batched
    (site,) = check_sites(node.dispatch.kernel)
    plan_fault(drv, "read_past", site.id, 300, 300, batched=C.BATCH)
    with pytest.raises(gi.KernelFault, match="indexed at 300, but its length is 300"):
        s.submit()
    assert drv.launches[-1] == [batch_entry(node.dispatch.kernel, C.BATCH)]


def test_fake_close_frees_the_words(fake):
    drv, dev = fake
    mod = gi.load_source(SRC, "traps.rs")
    s = gi.Scheme(dev)
    mod.read_past.prepare(dev).record(s, "r", dev.zeros(8), dev.zeros(8), 0).over_1d(8)
    s.submit()
    allocated = len(drv.mem)
    dev.close()
    assert drv.count("cuMemFreeHost") == 1 and len(drv.mem) == allocated - 1



SUM16 = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn sum16(x: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    let mut acc = 0.0;
    for j in 0..16u32 { acc += x[i * 16 + j]; }
    let t = gpu::workgroup_sum::<64>(acc, s);
    if i < out.len() { out[i] = t + acc; }
}
"""


def test_a_fully_unrolled_loop_shares_its_checks_branches_and_faults_at_the_first_access():
    """A short constant loop in a kernel with a collective (which ir/unroll.py leaves to the
    emitter on PTX) is emitted as 16 copies of its body; their checks share a branch per
    MAX_PENDING, not one per copy, which kept ptxas from issuing later copies' loads before
    it (a specialized per-thread count ran at 60% of copy instead of 93% on the H200). The
    bits are the oracle's, and the fault reported is still the first out-of-range access."""
    import ptx_sim
    from oracle import run_kernel
    from goldy_import.codegen.ptx import entry_name
    from goldy_import.ir.pipeline import lower
    k = lower(import_source(SUM16, "sum16.rs").kernels[0], "ptx", checks=True).kernel
    text = emit_ptx(k)
    body = entries(text)[entry_name(k)]
    assert body.count("ld.global.nc.f32") == 16
    assert len(re.findall(r"bra \$L_fault", body)) <= 4  # the 16 loads' checks in two flushes
    rng = np.random.default_rng(3)
    for n in (64 * 16, 64 * 16 - 5):  # in range; thread 63 reads past the end from its 12th term on
        x = rng.standard_normal(n).astype(np.float32)
        out = np.full(64, np.float32(-7.5))
        words: list = []
        got = ptx_sim.run(text, entry_name(k), [x, out.copy()], {}, (1, 1, 1), faults=words)[1]
        if n == 64 * 16:
            want = run_kernel("cpu", SUM16, "sum16", [x, out.copy()], ("over_1d", 64))[1]
            np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
            assert not words or words[0][0] == 0
        else:
            (word,) = words
            assert word[0] == 1 and word[2] == n and word[3] == n, word  # index n: the first past the end
            with pytest.raises(gi.KernelFault, match=f"indexed at {n}, but its length is {n}"):  # as the oracle
                run_kernel("cpu", SUM16, "sum16", [x, out.copy()], ("over_1d", 64))
