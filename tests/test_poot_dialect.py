"""poot's `#[kernel]` dialect (importer/poot.py, docs/dialect.md "poot kernels").

Every intrinsic and loop form runs on every backend: the CPU oracle against numpy (Rust's
values), every other backend against the CPU oracle bit for bit, on fresh random inputs
with outputs poisoned first. Rejections are a diagnostic text snapshot; an index out of
range is a failed check, a KernelFault naming the Rust line; and a poot kernel lowers to
exactly the IR of the Goldy kernel that says the same thing.
"""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.importer import import_file, import_source
from oracle import (REPO, assert_same, check_against_cpu, check_snapshot, device, ir_without_origin, kernel_ir,
                    run_kernel)

FORMS = os.path.join(REPO, "tests", "data", "poot", "forms.rs")
REJECTS = REPO / "tests" / "data" / "poot" / "rejects.rs"
SNAP = REPO / "tests" / "snapshots" / "poot" / "rejects.txt"
BACKENDS = ["wgpu", "slang", "cuda"]
F32 = np.float32


def rng():
    return np.random.default_rng(np.random.SeedSequence().entropy % 2**32)


def nan(n: int) -> np.ndarray:
    return np.full(n, np.nan, F32)


def poison(n: int) -> np.ndarray:
    return np.full(n, 0xDEADBEEF, np.uint32)


def f32(r, n: int) -> np.ndarray:
    return r.standard_normal(n).astype(F32)


# kernel -> (inputs(rng), grid, numpy reference of the buffers, rtol)
def _ids(r):
    return [2, poison(384), poison(384), poison(384), poison(384)]


def _ids_ref(a):
    slot = np.arange(384)
    group, lane = slot // 64, slot % 64
    gx, gy = group % 2, group // 2
    return [None, (gx * 64 + lane).astype(np.uint32), lane.astype(np.uint32), gx.astype(np.uint32),
            gy.astype(np.uint32)]


def _lds_ref(a):
    x = a[0].reshape(-1, 64)
    return [None, (x[:, ::-1] + (x * F32(2.0))).reshape(-1)]


def _no_contract_ref(a):
    return [None, None, None, ((a[0] * a[1]).astype(F32) + a[2]).astype(F32)]


def _loops_ref(a):
    x, out = a
    s = F32(0.0)
    for v in x:
        s = F32(s + F32(v * F32(0.5)))
    i = np.arange(len(out))
    t = np.array([sum(range(k % 7)) + sum(3 * j for j in range(2, k % 5 + 1)) for k in i], np.uint32)
    steps = np.array([int(k).bit_length() for k in i], F32)
    return [None, ((s + t.astype(F32)).astype(F32) + (steps * F32(100.0)).astype(F32)).astype(F32)]


def _methods_inputs(r):
    n = 300
    x = (r.standard_normal(n) * 4).astype(F32)
    x[:4] = [2.5, -2.5, 0.5, -0.5]  # round half away from zero
    y = f32(r, n)
    y[:2] = np.nan  # f32::max/min return the other operand
    bits = f32(r, n).view(np.uint32)
    u = r.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    s = r.integers(-20, 20, n).astype(np.int32)
    return [x, y, bits, u, s, nan(12 * n), poison(4 * n)]


def _methods_ref(a):
    x, y, bits, u, s, _out, _ints = a
    with np.errstate(invalid="ignore"):
        cols = [np.sqrt(np.abs(x)), np.floor(x), np.ceil(x), np.trunc(x),
                np.where(x < 0, -np.floor(-x + F32(0.5)), np.floor(x + F32(0.5))),
                np.exp(x * F32(0.25)), np.log(np.abs(x) + F32(1.0)), np.sin(x), np.cos(x),
                np.fmax(x, y), np.fmin(x, y), bits.view(F32)]
    ints = [np.maximum(u, np.roll(u, -1)), np.minimum(u, 1000), np.maximum(s, -5).astype(np.uint32),
            np.minimum(s, 7).astype(np.uint32)]
    out = np.stack([c.astype(F32) for c in cols], 1).reshape(-1)
    return [None] * 5 + [out, np.stack(ints, 1).reshape(-1).astype(np.uint32)]


def _casts_inputs(r):
    n = 500
    fs = (r.standard_normal(n) * 1e9).astype(F32)
    fs[:3] = [np.nan, -1.0, 5e9]  # saturating: 0, 0, u32::MAX
    return [r.integers(-2**31, 2**31, n).astype(np.int32), fs, poison(2 * n)]


def _casts_ref(a):
    xs, fs, _ = a
    sat = np.nan_to_num(np.clip(np.trunc(fs.astype(np.float64)), 0, 2**32 - 1), nan=0.0).astype(np.uint32)
    return [None, None, np.stack([xs.view(np.uint32), sat], 1).reshape(-1)]


CASES = {
    "ids": (_ids, ("groups", (2, 3, 1)), _ids_ref, 0.0),
    "lds_arrays": (lambda r: [f32(r, 640), nan(640)], ("over_1d", 640), _lds_ref, 0.0),
    "no_contract": (lambda r: [f32(r, 1000), f32(r, 1000), f32(r, 1000), nan(1000)], ("over_1d", 1000),
                    _no_contract_ref, 0.0),
    "loops": (lambda r: [f32(r, 37), nan(700)], ("over_1d", 700), _loops_ref, 0.0),
    "methods": (_methods_inputs, ("over_1d", 300), _methods_ref, 3e-7),  # exp ln sin cos: 1 ulp each
    "casts": (_casts_inputs, ("over_1d", 500), _casts_ref, 0.0),
}


@pytest.mark.parametrize("kernel", list(CASES))
def test_cpu_oracle_computes_rust_values(kernel):
    inputs, grid, reference, rtol = CASES[kernel]
    args = inputs(rng())
    got = run_kernel("cpu", FORMS, kernel, args, grid)
    for p, g, w in zip(kernel_ir(FORMS, kernel).params, got, reference(args)):
        if w is not None:
            assert_same(g, w, rtol, 0.0, f"cpu vs numpy: `{kernel}` parameter `{p.name}`")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("kernel", list(CASES))
def test_backend_matches_cpu_oracle(kernel, backend):
    inputs, grid, _reference, _rtol = CASES[kernel]
    args = inputs(rng())
    check_against_cpu(backend, FORMS, kernel, args, grid)


@pytest.mark.parametrize("backend", ["cpu"] + BACKENDS)
def test_atomic_add_returns_each_old_value_once(backend):
    r = rng()
    xs = r.integers(0, 2**32, 3000, dtype=np.uint64).astype(np.uint32)
    counts, olds = run_kernel(backend, FORMS, "atomics", [xs, np.zeros(8, np.uint32), poison(3000)],
                              ("over_1d", 3000))[1:]
    want = np.bincount(xs % 8, minlength=8).astype(np.uint32)
    assert np.array_equal(counts, want)
    for b in range(8):  # the order among threads is unspecified, the old values are not
        assert sorted(olds[xs % 8 == b]) == list(range(want[b]))


@pytest.mark.parametrize("backend", ["cpu"] + BACKENDS)
def test_slice_index_out_of_range_is_a_failed_check(backend):
    dev = device(backend)
    k = gi.load(FORMS).out_of_range.prepare(dev)
    a, out = dev.buffer(f32(rng(), 100)), dev.buffer(nan(100))
    scheme = gi.Scheme(dev)
    k.record(scheme, "oob", a, out).over_1d(100)
    with pytest.raises(gi.KernelFault) as info:
        scheme.submit()
    line = next(n for n, text in enumerate(open(FORMS).read().splitlines(), 1) if "out[i + 1] = a[i];" in text)
    assert f"forms.rs:{line}:" in str(info.value), str(info.value)


def test_rejections_snapshot():
    """Each construct outside the subset gets its own diagnostic, worded `unsupported in
    kernel: ...` where poot's importer would say so; no kernel of the file is imported."""
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        result = import_file(REJECTS.relative_to(REPO).as_posix())
    finally:
        os.chdir(cwd)
    assert result.kernels == []
    rendered = result.render() + "\n"
    check_snapshot(SNAP, rendered, "GOLDY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q -p no:cacheprovider "
                                   "tests/test_poot_dialect.py")
    kernels = re.findall(r"^pub fn (\w+)", REJECTS.read_text(), re.M)
    lines = {d.span.line for d in result.diagnostics}
    body_lines = [n for n, t in enumerate(REJECTS.read_text().splitlines(), 1)
                  if t.startswith("    ") and not t.strip().startswith("}")]
    assert lines >= set(body_lines), f"lines without a diagnostic: {sorted(set(body_lines) - lines)}"
    assert len(kernels) == 7


GOLDY_TWINS = """
use goldy::gpu;

#[goldy::compute]
fn elementwise_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < out.len() {
        out[i] = a[i] + b[i];
    }
}

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn wg_reduce(a: &[f32], out: &mut [f32]) {
    let lds0 = gpu::workgroup_array::<f32, 1024>();
    let WORKGROUP_SIZE: u32 = 64;
    let lane = gpu::local_id().x;
    let i = gpu::global_id().x;
    let mut v = 0.0f32;
    if i < a.len() {
        v = a[i];
    }
    lds0[lane] = v;
    gpu::workgroup_barrier();
    if lane == 0 {
        let mut acc = 0.0f32;
        for j in 0..WORKGROUP_SIZE {
            acc = acc + lds0[j];
        }
        out[gpu::workgroup_id().x] = acc;
    }
}
"""


@pytest.mark.parametrize("kernel", ["elementwise_add", "wg_reduce"])
def test_poot_kernel_lowers_to_the_goldy_kernels_ir(kernel):
    poot = import_file(os.path.join(REPO, "rust_examples", "poot_elementwise.rs" if kernel == "elementwise_add"
                                    else "poot_reduce.rs")).kernel(kernel)
    goldy = import_source(GOLDY_TWINS, "twins.rs").kernel(kernel)
    assert poot is not None and goldy is not None
    assert ir_without_origin(poot) == ir_without_origin(goldy)


def test_both_dialects_in_one_file():
    src = GOLDY_TWINS.replace("fn elementwise_add", "fn goldy_add") + """
#[kernel]
pub fn poot_add(a: &[f32], b: &[f32], out: &mut [f32]) {
    let i = thread_index();
    if i < out.len() { out[i] = a[i] + b[i]; }
}
"""
    mod = gi.load_source(src, "mixed.rs")
    assert sorted(mod.kernels) == ["goldy_add", "poot_add", "wg_reduce"]
    r = rng()
    args = [f32(r, 300), f32(r, 300), nan(300)]
    dev = device("cpu")
    outs = []
    for name in ("goldy_add", "poot_add"):
        out = dev.buffer(args[2])
        scheme = gi.Scheme(dev)
        getattr(mod, name).prepare(dev).record(scheme, name, dev.buffer(args[0]), dev.buffer(args[1]), out).over_1d(300)
        scheme.submit()
        outs.append(out.numpy())
    assert np.array_equal(outs[0], outs[1]) and np.array_equal(outs[0], args[0] + args[1])


def test_workgroup_size_constant_and_default():
    kernels = {k.name: k for k in import_file(FORMS).kernels}
    assert kernels["lds_arrays"].workgroup_size == (64, 1, 1)
    assert kernels["ids"].workgroup_size == (64, 1, 1)
    src = "#[kernel]\npub fn k(out: &mut [f32]) { const WORKGROUP_SIZE: usize = 256; out[thread_index()] = 1.0; }"
    assert import_source(src, "k.rs").kernels[0].workgroup_size == (256, 1, 1)


def test_dialect_docs_poot_examples_import_cleanly():
    text = (REPO / "docs" / "dialect.md").read_text()
    blocks = [b for b in re.findall(r"```rust\n(.*?)```", text, re.S) if "#[kernel]" in b]
    assert len(blocks) >= 2
    for b in blocks:
        result = import_source(b, "dialect.md")
        assert result.errors == [] and result.kernels, result.render()
    for b in [b for b in re.findall(r"```rust,reject\n(.*?)```", text, re.S) if "#[kernel]" in b]:
        result = import_source(b, "dialect.md")
        assert result.errors and not result.kernels, b
