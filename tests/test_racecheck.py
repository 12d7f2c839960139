"""Racecheck (runtime/racecheck.py, docs/semantics.md "Data races"): a CPU run that finds
the data races the lock-step CPU backend hides. Each racy kernel below computes some
answer on the plain CPU backend; under racecheck it raises a RaceError naming the kernel,
the resource, the element, both threads and both Rust lines. Next to each, its race-free
version stays silent and computes what the plain backend computes.
"""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.runtime import racecheck as RC

SRC = """use goldy::gpu;

/// The published attention kernel's bug: every lane reads the row maximum from scratch[0],
/// then lanes overwrite scratch with no barrier between (lane 0 may clobber the maximum
/// before lane 63 has read it).
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn attn_racy(scores: &[f32], out: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let x = scores[i];
    scratch[lid] = x;
    gpu::workgroup_barrier();
    let mut stride = 32u32;
    while stride > 0 {
        if lid < stride {
            scratch[lid] = scratch[lid].max(scratch[lid + stride]);
        }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    let m = scratch[0];
    scratch[lid] = (x - m).exp();
    gpu::workgroup_barrier();
    out[i] = scratch[lid] + scratch[(lid + 1) % 64];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn attn_fixed(scores: &[f32], out: &mut [f32]) {
    let scratch = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let x = scores[i];
    scratch[lid] = x;
    gpu::workgroup_barrier();
    let mut stride = 32u32;
    while stride > 0 {
        if lid < stride {
            scratch[lid] = scratch[lid].max(scratch[lid + stride]);
        }
        gpu::workgroup_barrier();
        stride >>= 1;
    }
    let m = scratch[0];
    gpu::workgroup_barrier();
    scratch[lid] = (x - m).exp();
    gpu::workgroup_barrier();
    out[i] = scratch[lid] + scratch[(lid + 1) % 64];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn neighbour_racy(xs: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[lid] = xs[i] * 2.0;
    out[i] = s[(lid + 1) % 64] - s[lid];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn neighbour_fixed(xs: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[lid] = xs[i] * 2.0;
    gpu::workgroup_barrier();
    out[i] = s[(lid + 1) % 64] - s[lid];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn per_lane_racy(xs: &[f32], out: &mut [f32]) {
    out[gpu::local_id().x] = xs[gpu::global_id().x];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn per_lane_fixed(xs: &[f32], out: &mut [f32]) {
    out[gpu::global_id().x] = xs[gpu::global_id().x];
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn histogram_racy(values: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < values.len() {
        let b = values[i] % bins.len();
        bins[b] = bins[b] + 1;
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn histogram_fixed(values: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < values.len() {
        gpu::atomic_add(bins, values[i] % bins.len(), 1);
    }
}

/// An atomic counter read back without an atomic: races with the other lanes' adds.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn counter_peek(count: &mut [u32], out: &mut [u32]) {
    gpu::atomic_add(count, 0, 1);
    out[gpu::global_id().x] = count[0];
}

/// Stream compaction through an atomic slot: distinct slots, no race.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn compact(xs: &[u32], count: &mut [u32], out: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < xs.len() && xs[i] % 3 == 0 {
        let slot = gpu::atomic_add(count, 0, 1);
        out[slot] = xs[i];
    }
}

/// Only lane 1 evaluates `s[1]` (the `&&` short-circuits elsewhere): its own element.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn short_circuit(xs: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[lid] = xs[i];
    if lid == 1 && s[1] > 0.0 {
        out[i] = 1.0;
    }
}

/// The tile transpose without its barrier: 2-D workgroups.
#[goldy::compute(workgroup_size = [8, 8, 1])]
fn tile_racy(input: &[f32], out: &mut [f32]) {
    let tile = gpu::workgroup_array::<f32, 64>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    tile[ty * 8 + tx] = input[ty * 8 + tx];
    out[ty * 8 + tx] = tile[tx * 8 + ty];
}

/// A collective ends with a barrier, but nothing orders a read before its first store.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn before_collective(xs: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    s[lid] = xs[i];
    gpu::workgroup_barrier();
    let neighbour = s[(lid + 1) % 64];
    let total = gpu::workgroup_sum::<64>(xs[i], s);
    out[i] = neighbour + total;
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn after_collective(xs: &[f32], out: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let lid = gpu::local_id().x;
    let i = gpu::global_id().x;
    let total = gpu::workgroup_sum::<64>(xs[i], s);
    s[lid] = xs[i] / total;
    gpu::workgroup_barrier();
    out[i] = s[(lid + 1) % 64];
}

/// Each workgroup adds into its own element of `acc` (a read-modify-write per lane) and
/// the tensor view's elements are the thread's own: race free.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tensor_own(t: gpu::TensorMut<f32>) {
    let i = gpu::global_id().x;
    if i < t.len() {
        t[i] = t[i] * 2.0;
    }
}

/// Thread i writes logical element i: two logical elements of a broadcast view share storage.
#[goldy::compute(workgroup_size = [4, 1, 1])]
fn tensor_write(t: gpu::TensorMut<f32>) {
    let i = gpu::global_id().x;
    if i < t.len() {
        t[i] = i as f32;
    }
}
"""

FILE = "races.rs"


@pytest.fixture(scope="module")
def mod():
    return gi.load_source(SRC, FILE)


@pytest.fixture(scope="module")
def rdev():
    return gi.Device("cpu", racecheck=True)


@pytest.fixture(scope="module")
def pdev():
    return gi.Device("cpu")


def _loc_at(at: int) -> str:
    line = SRC.count("\n", 0, at) + 1
    col = at - (SRC.rfind("\n", 0, at) + 1) + 1
    return f"{FILE}:{line}:{col}"


def in_kernel(kernel: str, needle: str) -> str:
    """The location of `needle` inside the body of `kernel`."""
    return _loc_at(SRC.index(needle, SRC.index(f"fn {kernel}(")))


def run(dev, mod, kernel: str, arrays: list, grid: int, scalars: tuple = ()):
    bufs = [dev.buffer(a) for a in arrays]
    s = gi.Scheme(dev)
    getattr(mod, kernel).prepare(dev).record(s, kernel, *bufs, *scalars).over_1d(grid)
    s.submit()
    return [b.numpy() for b in bufs]


def race_of(dev, mod, kernel, arrays, grid) -> gi.RaceError:
    with pytest.raises(gi.RaceError) as info:
        run(dev, mod, kernel, arrays, grid)
    e = info.value
    assert isinstance(e, gi.KernelFault) and isinstance(e, gi.GoldyError)
    assert e.kernel == kernel and f"kernel `{kernel}` (node 0 '{kernel}')" in str(e)
    return e


def locations(e: gi.RaceError) -> list[tuple[str, str]]:
    return [(a.kind, a.location) for a in e.accesses]


def rng_f32(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


# ---------------------------------------------------------------- each kind of race, reported with both lines


def test_read_then_overwrite_without_a_barrier(mod, rdev, pdev):
    x = rng_f32(128)
    run(pdev, mod, "attn_racy", [x, np.zeros(128, np.float32)], 128)  # the lock-step run is silent
    e = race_of(rdev, mod, "attn_racy", [x, np.zeros(128, np.float32)], 128)
    assert e.resource == "scratch" and e.element == 0
    assert locations(e) == [("read", in_kernel("attn_racy", "scratch[0]")),
                            ("write", in_kernel("attn_racy", "scratch[lid] = (x - m).exp()"))]
    reader, writer = e.accesses
    assert writer.local_id == (0, 0, 0) and reader.local_id != (0, 0, 0)
    assert reader.workgroup_id == writer.workgroup_id == (0, 0, 0)
    assert "no barrier of workgroup (0, 0, 0) lies between them" in str(e)
    assert "1 more racing element in this dispatch" in str(e)  # the same race in workgroup 1


def test_the_report_reads_like_the_readme(mod, rdev):
    e = race_of(rdev, mod, "attn_racy", [rng_f32(64), np.zeros(64, np.float32)], 64)
    assert str(e) == (
        "data race in kernel `attn_racy` (node 0 'attn_racy') on workgroup array `scratch`, element 0\n"
        f"  read at {in_kernel('attn_racy', 'scratch[0]')} by thread (63, 0, 0) "
        "(local (63, 0, 0) of workgroup (0, 0, 0))\n"
        f"  write at {in_kernel('attn_racy', 'scratch[lid] = (x - m).exp()')} by thread (0, 0, 0) "
        "(local (0, 0, 0) of workgroup (0, 0, 0))\n"
        "  no barrier of workgroup (0, 0, 0) lies between them")


def test_missing_barrier_before_a_neighbour_read(mod, rdev):
    e = race_of(rdev, mod, "neighbour_racy", [rng_f32(64), np.zeros(64, np.float32)], 64)
    assert e.resource == "s"
    assert locations(e) == [("write", in_kernel("neighbour_racy", "s[lid] = xs[i] * 2.0")),
                            ("read", in_kernel("neighbour_racy", "s[(lid + 1) % 64]"))]
    w, r = e.accesses
    assert w.local_id[0] == e.element and r.local_id[0] == (e.element - 1) % 64


def test_two_workgroups_writing_one_output(mod, rdev):
    e = race_of(rdev, mod, "per_lane_racy", [rng_f32(128), np.zeros(64, np.float32)], 128)
    assert (e.resource, e.element) == ("out", 0)
    site = in_kernel("per_lane_racy", "out[gpu::local_id().x] = xs[gpu::global_id().x]")
    assert locations(e) == [("write", site), ("write", site)]
    assert [a.workgroup_id for a in e.accesses] == [(0, 0, 0), (1, 0, 0)]
    assert [a.global_id for a in e.accesses] == [(0, 0, 0), (64, 0, 0)]
    assert "different workgroups" in str(e) and "63 more racing elements" in str(e)


def test_a_non_atomic_histogram(mod, rdev):
    values = np.random.default_rng(3).integers(0, 1000, 500).astype(np.uint32)
    e = race_of(rdev, mod, "histogram_racy", [values, np.zeros(16, np.uint32)], 500)
    assert e.resource == "bins"
    assert sorted(locations(e)) == sorted([("write", in_kernel("histogram_racy", "bins[b] = bins[b] + 1")),
                                           ("read", in_kernel("histogram_racy", "bins[b] + 1"))])
    assert e.accesses[0].global_id != e.accesses[1].global_id


def test_an_atomic_counter_read_without_an_atomic(mod, rdev):
    e = race_of(rdev, mod, "counter_peek", [np.zeros(1, np.uint32), np.zeros(64, np.uint32)], 64)
    assert sorted(a.kind for a in e.accesses) == ["atomic_add", "read"]
    assert in_kernel("counter_peek", "gpu::atomic_add(count, 0, 1)") in [a.location for a in e.accesses]


def test_a_2d_workgroup_names_both_coordinates(mod, rdev):
    e = race_of(rdev, mod, "tile_racy", [rng_f32(64), np.zeros(64, np.float32)], 8)
    w, r = e.accesses
    assert (w.kind, r.kind) == ("write", "read")
    # element ty * 8 + tx written by (tx, ty), read by the transposed thread
    assert (w.local_id[1] * 8 + w.local_id[0]) == e.element == (r.local_id[0] * 8 + r.local_id[1])
    assert w.local_id != r.local_id


def test_a_read_before_a_collective_races_with_its_first_store(mod, rdev):
    e = race_of(rdev, mod, "before_collective", [rng_f32(64), np.zeros(64, np.float32)], 64)
    assert locations(e) == [("read", in_kernel("before_collective", "s[(lid + 1) % 64]")),
                            ("write", in_kernel("before_collective", "gpu::workgroup_sum::<64>(xs[i], s)"))]


def test_racecheck_can_be_switched_on_by_the_environment(mod, monkeypatch):
    monkeypatch.setenv("GOLDY_RACECHECK", "1")
    dev = gi.Device("cpu")
    assert "racecheck" in dev.describe()
    race_of(dev, mod, "neighbour_racy", [rng_f32(64), np.zeros(64, np.float32)], 64)
    monkeypatch.setenv("GOLDY_RACECHECK", "0")
    run(gi.Device("cpu"), mod, "neighbour_racy", [rng_f32(64), np.zeros(64, np.float32)], 64)


def test_races_across_chunks_and_after_compaction(mod, monkeypatch):
    """Workgroups in different chunks still race; compacting a long log loses nothing."""
    dev = gi.Device("cpu", racecheck=True, chunk_threads=64)
    e = race_of(dev, mod, "per_lane_racy", [rng_f32(256), np.zeros(64, np.float32)], 256)
    assert [a.workgroup_id for a in e.accesses] == [(0, 0, 0), (3, 0, 0)]  # the lowest and the highest
    monkeypatch.setattr(RC, "COMPACT_AT", 100)
    values = np.random.default_rng(4).integers(0, 1000, 3000).astype(np.uint32)
    race_of(gi.Device("cpu", racecheck=True), mod, "histogram_racy", [values, np.zeros(7, np.uint32)], 3000)
    dev = gi.Device("cpu", racecheck=True)
    x = rng_f32(640)
    got = run(dev, mod, "attn_fixed", [x, np.zeros(640, np.float32)], 640)
    assert np.array_equal(got[1], run(gi.Device("cpu"), mod, "attn_fixed", [x, np.zeros(640, np.float32)], 640)[1])


# ---------------------------------------------------------------- race-free versions: silent, same results


@pytest.mark.parametrize("kernel, arrays, grid", [
    ("attn_fixed", lambda: [rng_f32(192), np.zeros(192, np.float32)], 192),
    ("neighbour_fixed", lambda: [rng_f32(128), np.zeros(128, np.float32)], 128),
    ("per_lane_fixed", lambda: [rng_f32(192), np.zeros(192, np.float32)], 192),
    ("histogram_fixed", lambda: [np.random.default_rng(5).integers(0, 999, 700).astype(np.uint32),
                                 np.zeros(16, np.uint32)], 700),
    ("compact", lambda: [np.random.default_rng(6).integers(0, 999, 300).astype(np.uint32),
                         np.zeros(1, np.uint32), np.zeros(300, np.uint32)], 300),
    ("short_circuit", lambda: [rng_f32(64), np.zeros(64, np.float32)], 64),
    ("after_collective", lambda: [np.abs(rng_f32(128)) + 1, np.zeros(128, np.float32)], 128),
])
def test_race_free_versions_are_silent_and_compute_the_same(mod, rdev, pdev, kernel, arrays, grid):
    want = run(pdev, mod, kernel, arrays(), grid)
    got = run(rdev, mod, kernel, arrays(), grid)
    for g, w in zip(got, want):
        assert np.array_equal(g.view(np.uint32), w.view(np.uint32)), kernel


def test_tensor_views_are_checked_at_their_storage(mod, rdev):
    """Elements are storage elements: a transposed view is race free, a view whose rows
    overlap (strides (2, 1) over rows of 4) makes threads 2 and 4 write one element."""
    data = rdev.buffer(rng_f32(40))
    s = gi.Scheme(rdev)
    mod.tensor_own.prepare(rdev).record(s, "own", gi.TensorView.strided(data, (8, 5), (1, 8))).over_1d(40)
    s.submit()
    base = rdev.buffer(np.zeros(6, np.float32))
    s = gi.Scheme(rdev)
    mod.tensor_write.prepare(rdev).record(s, "overlap", gi.TensorView.strided(base, (2, 4), (2, 1))).over_1d(8)
    with pytest.raises(gi.RaceError) as info:
        s.submit()
    e = info.value
    assert (e.resource, e.element) == ("t", 2)
    assert [a.global_id[0] for a in e.accesses] == [2, 4] and "tensor `t`" in str(e)


def test_the_readme_report_is_what_racecheck_prints():
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = text[text.index("## Finding data races"):]
    src = re.search(r"```rust\n(.*?)```", section, re.S).group(1)
    report = re.search(r"```text\n(.*?)```", section, re.S).group(1)
    k = gi.load_source(src, "shift.rs").shift
    dev = gi.Device("cpu", racecheck=True)
    x, y = dev.buffer(np.ones(256, np.float32)), dev.zeros(256)
    s = gi.Scheme(dev)
    k.prepare(dev).record(s, "shift", x, y).over_1d(256)
    with pytest.raises(gi.RaceError) as e:
        s.submit()
    assert f"{type(e.value).__module__}.RaceError: {e.value}\n" == report


def test_an_if_whose_only_statement_names_global_id():
    """The racecheck build of an `if` holding only `let v = i;` (i = global_id().x, which
    the CPU emitter keeps as a name, not a statement) compiles: found by the racecheck
    fuzz on the H200 (2026-12-03)."""
    src = """use goldy::gpu;
#[goldy::compute(workgroup_size = [8, 1, 1])]
fn k(xu: &[u32], ou: &mut [u32]) {
    let i = gpu::global_id().x;
    if true {
        let v5: u32 = i;
    }
    ou[i] = xu.len() + i;
}
"""
    for racecheck in (False, True):
        dev = gi.Device("cpu", racecheck=racecheck)
        out = dev.buffer(np.full(16, 7, np.uint32))
        s = gi.Scheme(dev)
        gi.load_source(src, "alias_if.rs").k.prepare(dev).record(s, "k", dev.buffer(np.arange(3, dtype=np.uint32)),
                                                                 out).over_1d(16)
        s.submit()
        assert out.numpy().tolist() == [3 + i for i in range(16)]
