"""Goldy's own code imports as Goldy writes it: the capitalised vector names of its access
vocabulary (`gpu::Float4`), top-level `const` items used in kernels, and constant
expressions as `workgroup_size`, `workgroup_array` lengths and collective sizes. Each
kernel runs on every backend against the CPU oracle on fresh random data; the error
texts are the contract."""

from __future__ import annotations

import numpy as np
import pytest

import goldy_import as gi
from goldy_import.importer import import_source
from oracle import check_against_cpu, kernel_ir

BACKENDS = ["cpu", "wgpu", "slang", "cuda"]

SRC = """
use goldy::gpu;

const TILE: u32 = 16;
const LANES: usize = 64;
const WG: u32 = TILE * 4;
const HALF: f32 = 1.0 / 2.0;
const SHIFT: u32 = (1 << 3) - 1;
const FLIP: bool = !(TILE > 100);
mod tuning {
    pub const BIAS: i32 = -3;
}

#[goldy::gpu]
struct Tint {
    color: gpu::Float4,
}

/// Capitalised vector spellings in parameters, locals and constructors.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn tint(xs: &[f32], out: &mut [f32], t: gpu::Uniform<Tint>) {
    let i = gpu::global_id().x;
    if i < out.len() {
        let v: gpu::Float4 = gpu::Float4(xs[4 * i], xs[4 * i + 1], xs[4 * i + 2], xs[4 * i + 3]);
        let w = gpu::Float4(v.x, v.y, v.z, v.w) * t.color;
        let u = gpu::UInt2(i, 2) + gpu::Uint2(1, 1);
        let s = gpu::Int3(1, -2, 3);
        out[i] = w.x + w.y + w.z + w.w + (u.y as f32) + (s.y as f32);
    }
}

/// File constants as values and as every kind of size.
#[goldy::compute(workgroup_size = [WG, 1, 1])]
fn sized(xs: &[f32], out: &mut [f32], ints: &mut [i32]) {
    let scratch = gpu::workgroup_array::<f32, WG>();
    let wide = gpu::workgroup_array::<f32, { LANES * 2 }>();
    let i = gpu::global_id().x;
    let l = gpu::local_id().x;
    let x = if i < xs.len() { xs[i] } else { 0.0 };
    wide[l + TILE] = x;
    let total = gpu::workgroup_sum::<WG>(x * HALF, scratch);
    if i < out.len() {
        out[i] = total + wide[l + TILE] + ((i & SHIFT) as f32);
        ints[i] = if FLIP { BIAS } else { 0 };
    }
}

#[goldy::compute(workgroup_size = [TILE, TILE / 4, 1])]
fn grid2d(out: &mut [u32]) {
    let x = gpu::global_id().x;
    let y = gpu::global_id().y;
    let w = gpu::num_workgroups().x * TILE;
    if y * w + x < out.len() {
        out[y * w + x] = x * TILE + y + gpu::workgroup_size().y;
    }
}
"""


def rnd(n: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(n).astype(np.float32)


def test_workgroup_sizes_come_from_constants():
    assert kernel_ir(SRC, "sized").workgroup_size == (64, 1, 1)
    assert kernel_ir(SRC, "grid2d").workgroup_size == (16, 4, 1)
    wg = {w.size for w in kernel_ir(SRC, "sized").workgroup_arrays}
    assert wg == {64, 128}


@pytest.mark.parametrize("backend", BACKENDS)
def test_capitalised_vectors_run_like_lowercase(backend):
    n = 100
    xs = np.random.default_rng(1).standard_normal((n, 4)).astype(np.float32)
    color = rnd(4, 2)
    got = check_against_cpu(backend, SRC, "tint", [xs.reshape(-1), np.zeros(n, np.float32), {"color": color}],
                            ("over_1d", n))
    want = ((xs * color).sum(axis=1, dtype=np.float32) + np.float32(3.0) - np.float32(2.0))
    np.testing.assert_allclose(got[1], want, rtol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
def test_constants_as_values_and_sizes(backend):
    n = 256
    xs = rnd(n, 3)
    got = check_against_cpu(backend, SRC, "sized", [xs, rnd(n, 4), np.zeros(n, np.int32)], ("over_1d", n))
    np.testing.assert_array_equal(got[2], np.full(n, -3, np.int32))
    group_sums = [np.float32(sum(np.float32(v) * np.float32(0.5) for v in xs[g:g + 64])) for g in range(0, n, 64)]
    assert abs(got[1][0] - (group_sums[0] + xs[0])) < 1e-3


@pytest.mark.parametrize("backend", BACKENDS)
def test_constant_workgroup_size_on_a_2d_grid(backend):
    got = check_against_cpu(backend, SRC, "grid2d", [np.zeros(32 * 8, np.uint32)], ("groups", (2, 2, 1)))
    x, y = np.arange(256) % 32, np.arange(256) // 32
    np.testing.assert_array_equal(got[0], (x * 16 + y + 4).astype(np.uint32))


def errors(src: str) -> list[str]:
    r = import_source(src, "consts.rs")
    return [f"{d.code} {d.message} @{d.span.line}: {d.labels[0].text}" for d in r.errors]


@pytest.mark.parametrize("src,want", [
    ("const BIG: u32 = 4000000000 * 2;\n#[goldy::compute(workgroup_size = [BIG, 1, 1])]\nfn k() {}",
     ["G0033 this arithmetic operation will overflow @1: 8000000000 does not fit in `u32`"]),
    ("const Z: u32 = 0;\nconst Q: u32 = 8 / Z;\n#[goldy::compute]\nfn k(o: &mut [u32]) "
     "{ let s = gpu::workgroup_array::<u32, Q>(); s[0] = 1; o[0] = s[0]; }",
     ["G0033 this operation will panic at runtime @2: attempt to divide by zero"]),
    ("#[goldy::compute(workgroup_size = [NOPE, 1, 1])]\nfn k() {}",
     ["G0038 cannot find constant `NOPE` in this file @1: not a constant"]),
    ("const S: &str = \"x\";\n#[goldy::compute]\nfn k(o: &mut [u32]) { o[0] = S; }",
     ["G0004 constant `S` has type `&str`, which kernels cannot use @1: this type"]),
    ("const L: usize = 4;\n#[goldy::compute]\nfn k(o: &mut [u32]) { o[0] = L; }",
     ["G0005 constant `L` is a `usize`, which kernels cannot use as a value @3: `usize` constant"]),
    ("const A: u32 = B;\nconst B: u32 = A;\n#[goldy::compute]\nfn k(o: &mut [u32]) { o[0] = A; }",
     ["G0038 constant `A` is defined in terms of itself @1: cycle here"]),
    ("const F: f32 = 2.0;\n#[goldy::compute]\nfn k(o: &mut [u32]) { let s = gpu::workgroup_array::<u32, F>(); "
     "s[0] = 1; o[0] = s[0]; }",
     ["G0019 mismatched types @3: expected an integer size, found `f32`"]),
    ("#[goldy::compute(workgroup_size = [2 *, 1, 1])]\nfn k() {}",
     ["G0038 not a constant expression @1: cannot parse this"]),
])
def test_constant_errors(src, want):
    assert errors(src) == want


def test_host_constants_of_other_types_are_ignored_until_used():
    src = "const NAME: &str = \"saxpy\";\nconst N: u64 = 1 << 40;\n#[goldy::compute]\nfn k(o: &mut [u32]) { o[0] = 1; }"
    assert errors(src) == []


def test_a_rejected_let_is_reported_once():
    """The uses of a name whose `let` failed stay quiet: no G0020 cascade."""
    src = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(xs: &[f32], out: &mut [f32]) {
    let i = gpu::global_id().x;
    let (a, b) = (1.0, 2.0);
    let s = gpu::workgroup_array::<f64, 64>();
    let y;
    let z: usize = 3;
    const C: f64 = 2.0;
    s[i] = a;
    out[i] = a + b + y + C + xs[z];
}
"""
    got = [e.split(" @")[0] for e in errors(src)]
    assert got == ["G0004 tuples are not supported", "G0004 unsupported type `f64`",
                   "G0019 type annotations needed", "G0005 `usize` is not supported",
                   "G0004 unsupported type `f64`"]


def test_a_rejected_collective_or_atomic_let_is_reported_once():
    src = """
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(xs: &[f32], out: &mut [f32], flags: &mut [bool]) {
    let s = gpu::workgroup_array::<f32, 64>();
    let i = gpu::global_id().x;
    let r = gpu::workgroup_sum::<100>(xs[i], s);
    let o = gpu::atomic_add(flags, i, true);
    out[i] = r + o;
}
"""
    got = [e.split(" @")[0] for e in errors(src)]
    assert got[0] == "G0024 collective size 100 is not a power of two"
    assert len(got) == 2 and got[1].startswith("G0038 `atomic_add`")  # and no G0020 for `r` or `o`
