"""rust_examples/matmul.rs's `matmul_fast` (128 x 128 per workgroup, 8 x 8 `mul_add`
accumulators per thread, double-buffered workgroup tiles): bit for bit the documented fma
order on every backend, ragged edges included; a short buffer's one out-of-range access
reported as the CPU oracle reports it; and the PTX it needs from the emitter
(codegen/ptx/tiles.py): a fully unrolled inner loop, vector shared-memory loads, vector
global loads of a step's floats, no checks left on its workgroup arrays, no spills."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

import goldy_import as gi

from goldy_import.codegen.cpu.rt import fma
from goldy_import.codegen.ptx import emit_ptx
from goldy_import.importer import import_file, import_source
from oracle import REPO, device, run_kernel
from test_ptx import assemble, ptxas  # noqa: F401  (the fixture: required in CI, else skipped)

# slang runs on slangpy's CPU device, built without the C++ optimiser (runtime/slang.py)
BACKENDS = ["cpu", "wgpu", "slang", "cuda"]
SRC = os.path.join(REPO, "rust_examples", "matmul.rs")


def fma_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """c[r][j]: acc = fma(a[r][p], b[p][j], acc) for p = 0, 1, ..., k - 1, acc from 0.0,
    one rounding per step (the CPU oracle's exact f32 fma)."""
    acc = np.zeros((a.shape[0], b.shape[1]), np.float32)
    for p in range(a.shape[1]):
        acc = fma(a[:, p:p + 1], b[p:p + 1, :], acc)
    return acc


def run_fast(backend: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    (m, k), n = a.shape, b.shape[1]
    out = run_kernel(backend, SRC, "matmul_fast",
                     [a.reshape(-1), b.reshape(-1), np.zeros(m * n, np.float32), m, n, k],
                     ("groups", (-(-n // 128), -(-m // 128), 1)))
    return out[2].reshape(m, n)


def same_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    bad = got.view(np.uint32) != want.view(np.uint32)  # -0.0 and 0.0 differ here
    assert not bad.any(), (f"{what}: {bad.sum()} of {bad.size} differ; first at "
                           f"{np.argwhere(bad)[0]}: got {got[bad][0]!r}, want {want[bad][0]!r}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_fast_is_the_fma_order(backend):
    """Ragged on every side (m, n past one 128 tile, k not a multiple of the step of 8 and
    over three steps, so both buffers are reused; 197 x 261 x 75 odd everywhere); rows of a
    and b that are multiples of 4 (the CUDA backend's vector loads of a step's floats, then
    the edge path); fresh random data, poisoned output."""
    device(backend)
    s = int(np.random.SeedSequence().entropy % 2**32)
    rng = np.random.default_rng(s)
    for m, n, k in ((131, 130, 27), (3, 5, 1), (197, 261, 75), (130, 136, 20)):
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        same_bits(run_fast(backend, a, b), fma_order(a, b), f"{backend} {m}x{k} @ {k}x{n} (seed {s})")


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_fast_padding_keeps_negative_zero(backend):
    """Products that round to -0.0 leave acc = -0.0; the padding past k (a: -0.0, b: 0.0)
    must keep it (0.0 * 0.0 padding would make it +0.0)."""
    device(backend)
    m, n, k = 9, 6, 3
    a = np.full((m, k), -1e-30, np.float32)
    b = np.full((k, n), 1e-30, np.float32)
    want = fma_order(a, b)
    assert (want.view(np.uint32) == 0x80000000).all()
    same_bits(run_fast(backend, a, b), want, f"{backend} -0.0 sums")


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_fast_fault_on_a_short_buffer(backend):
    """`a` one element short of m x k: the one access past its end, a[m k - 1], read by one
    thread in a step inside the matrix (on CUDA its vector load's range test fails and the
    four floats are read one by one), is the fault reported, as by the CPU oracle."""
    m, n, k = 130, 136, 16
    rng = np.random.default_rng(7)
    a = rng.standard_normal(m * k - 1).astype(np.float32)
    b = rng.standard_normal(k * n).astype(np.float32)
    msgs = []
    for be in ("cpu", backend):
        device(be)
        with pytest.raises(gi.KernelFault) as info:
            run_kernel(be, SRC, "matmul_fast", [a, b, np.zeros(m * n, np.float32), m, n, k],
                       ("groups", (-(-n // 128), -(-m // 128), 1)))
        msgs.append(str(info.value))
    assert f"parameter `a` indexed at {m * k - 1}, but its length is {m * k - 1}" in msgs[0], msgs[0]
    assert msgs[1] == msgs[0]


def test_matmul_fast_ptx(ptxas, tmp_path):  # noqa: F811
    k = next(x for x in import_file(SRC).kernels if x.name == "matmul_fast")
    text = emit_ptx(k)
    body = text[text.index("// matmul.rs"):]
    assert body.count("ld.shared.v4.f32") == 32, "4 vector loads per inner step, 8 steps unrolled"
    assert "ld.shared.f32" not in body
    assert body.count("fma.rn.f32") == 512
    # a step's 4 + 4 floats of a and b: one vector load each, in the first step and in the loop
    assert body.count("ld.global.nc.v4.f32") == 4
    assert not re.search(r"setp\.\w+\.u32 %p\d+, %r\d+, 2048;", body), "a check left on a workgroup array"
    log = assemble(ptxas, text, tmp_path)
    assert "0 bytes spill stores, 0 bytes spill loads" in log, log
    regs = int(re.search(r"Used (\d+) registers", log).group(1))
    assert regs <= 128, f"{regs} registers: fewer than 2 workgroups per SM"


TILE_SRC = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn quads(x: &[f32], y: gpu::Scattered<f32>, s: u32) {
    let w = gpu::workgroup_array::<f32, 260>();
    let l = gpu::local_id().x;
    let g = gpu::global_id().x;
    w[l * 4] = x[g * 4];
    w[l * 4 + 1] = x[g * 4 + 1];
    w[l * 4 + 2] = x[g * 4 + 2];
    w[l * 4 + 3] = x[g * 4 + 3];
    gpu::workgroup_barrier();
    let base = ((l + s) % 64) * 4;
    for j in 0..2 {
        let v0 = w[base + 0];
        let v1 = w[base + 1];
        let v2 = w[base + 2];
        let v3 = w[base + 3];
        let u0 = w[base + 1];
        let u1 = w[base + 2];
        let u2 = w[base + 3];
        let u3 = w[base + 4];
        y[g * 8 + j * 4] = v0 + u3 + v1 * u0 + v2 * u1 + v3 * u2;
    }
}
"""


def test_vector_groups_only_where_aligned_and_in_range():
    """base + 0..3 (base a multiple of 4, in range) is one ld.shared.v4; of base + 1..4 only
    the pair base + 2, 3 is aligned (a v2); the four stores w[4 l + 0..3] are one st.shared.v4; the loop of
    two constant trips is unrolled."""
    k = import_source(TILE_SRC, "quads.rs").kernels[0]
    text = emit_ptx(k)
    assert text.count("st.shared.v4.f32") == 1 and "st.shared.f32" not in text
    assert text.count("ld.shared.v4.f32") == 2  # once per unrolled trip
    assert text.count("ld.shared.v2.f32") == 2  # base + 2, base + 3: 8-byte aligned
    assert text.count("ld.shared.f32") == 4  # base + 1, base + 4
    assert "$L_for" not in text


@pytest.mark.parametrize("backend", ["cpu", "cuda"])
def test_vector_groups_give_the_same_values(backend):
    device(backend)
    rng = np.random.default_rng(int(np.random.SeedSequence().entropy % 2**32))
    x = rng.standard_normal(256).astype(np.float32)
    out = run_kernel(backend, TILE_SRC, "quads", [x, np.zeros(512, np.float32), 5], ("groups", (1, 1, 1)))[1]
    want = run_kernel("cpu", TILE_SRC, "quads", [x, np.zeros(512, np.float32), 5], ("groups", (1, 1, 1)))[1]
    same_bits(out, want, f"{backend} quads")
