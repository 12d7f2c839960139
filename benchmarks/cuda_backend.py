"""CUDA backend benchmark (run on a GPU machine; see benchmarks/RESULTS.md).

    python benchmarks/cuda_backend.py [--mib 256] [--reps 20] [--matmul 4096] [--checks-cost]
                                      [--only stream,softmax,gemv,checks,matmul,host]

Prints one table: device-to-device copy bandwidth (the ceiling), then saxpy, a 3-op
element-wise chain, a workgroup_sum reduction, the complete two-pass sum (block_sum then
sum_partials, one graph), row softmaxes over >= 256 MiB arrays (the collective form on the
lanes entry, codegen/ptx/lanes.py, and on its plain entry), and a GEMV written one row per
thread (64 MiB matrix, vs torch.mv):
GB/s (bytes each kernel must move / median time) and % of the copy ceiling, for the Rust
kernels through goldy-import's CUDA backend, the same algorithms in CUDA C
(benchmarks/cuda_ref/kernels.cu, `nvcc -O3 -arch=sm_90`), CuPy and PyTorch. Element-wise
kernels run through the backend's batched entry (runtime/cuda.py BATCH = 8 workgroups per block); the
"one workgroup per block" rows force the plain entry. The row softmax appears as the
dialect's collective (one element per thread) and as kernels written for speed (several
values per thread in registers), and once more over rows of 1000 on the same 1024-lane
workgroups (the collective's general form; rows of 1024 take its one-tile branch,
ir/legalize.py). The complete sum and the collective softmax also run as
the variants a Scheme with `set_specialization(True)` settles on (every scalar and length
baked, checked bit for bit against the universal program first). Then a second table: f32 matrix multiply at
`--matmul`^3, GFLOP/s of rust_examples/matmul.rs (16 x 16 tiles), of a 4 x 4 register-
blocked kernel with the same product order (so the same bits), of nvcc's build of the
latter, of rust_examples/matmul.rs's `matmul_fast` (128 x 128 per workgroup, 8 x 8 `mul_add`
accumulators per thread; checks on and off), of Triton's tutorial matmul (f32, TF32 off:
`input_precision="ieee"`) and of PyTorch's f32 matmul with TF32 off, and the ratio to
PyTorch; `--only matmul` runs that table alone (about half a minute). Last, host
overhead per dispatch (a Scheme of 100 tiny dispatches vs 100 CuPy RawKernel launches).

Trapping checks (issue 9) are on by default, as in `prepare`. The "cost of checks" table
times saxpy (batched entry) and the workgroup_sum reduction with checks on and with
`prepare(dev, checks=False)`, alternating, and gives the overhead in %. Each timed run is
what a submit puts on the stream: the graph launch, plus the error words' readback for
checked kernels (their clearing happens only after a fault, none here). `--checks-cost`
runs that table alone (no nvcc, CuPy or PyTorch needed).

Method (METHOD.md): random inputs, every result checked before it is timed, 3 warm-ups,
the median of `reps` runs each bracketed by CUDA events on the stream doing the work.
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

import goldy_import as gi
from goldy_import.ir.abi import FAULT_WORDS
from goldy_import.runtime.cuda import ParamBlock

HERE = os.path.dirname(os.path.abspath(__file__))

RUST = """
use goldy::gpu;

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn chain3(x: &[f32], y: &[f32], z: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < z.len() { z[i] = (x[i] + y[i]) * x[i] - 1.0; }
}

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

#[goldy::compute(workgroup_size = [1024, 1, 1])]
fn row_softmax(buf: &mut [f32], count: u32) {
    let s = gpu::workgroup_array::<f32, 1024>();
    let row = gpu::workgroup_id().x;
    gpu::workgroup_softmax_in_place::<1024>(buf, row * count, count, s);
}

/// the second pass of the complete sum: one workgroup of 1024 lanes folds every partial
#[goldy::compute(workgroup_size = [1024, 1, 1])]
fn sum_partials(partial: &[f32], total: &mut [f32]) {
    let s = gpu::workgroup_array::<f32, 1024>();
    let lane = gpu::local_id().x;
    let mut acc = 0.0;
    for j in 0..partial.len() / 1024 { acc += partial[j * 1024 + lane]; }
    let t = gpu::workgroup_sum::<1024>(acc, s);
    if lane == 0 { total[0] = t; }
}

/// y = W x, one row per thread, as a user porting a decode step writes it
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn gemv(w: &[f32], x: &[f32], y: &mut [f32], n: u32) {
    let i = gpu::global_id().x;
    if i < y.len() {
        let mut acc = 0.0;
        for j in 0..n { acc = acc + w[i * n + j] * x[j]; }
        y[i] = acc;
    }
}

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn tiny(y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * y[i] + 1.0; }
}
"""

ROW = 1024
PER_THREAD = 16
SECTIONS = ("stream", "softmax", "gemv", "checks", "matmul", "host")
SOFTMAX_SHAPES = ((32, 32), (128, 8))  # (threads per row, values per thread): 1024-wide rows


def _tree(names: list[str], join) -> str:
    while len(names) > 1:
        names = [join(names[i], names[i + 1]) for i in range(0, len(names), 2)]
    return names[0]


def softmax_source(width: int, per: int) -> str:
    """Row softmax as a performance-minded user writes it in the dialect: one workgroup of
    `width` threads per row of width * per elements, each thread holding `per` values
    (elements t, t + width, ...: every load and store is coalesced) in registers, so each
    element is read once and written once; max and sum combine in a tree per thread, then
    across the workgroup with the collectives."""
    row = width * per
    out = [f"""
#[goldy::compute(workgroup_size = [{width}, 1, 1])]
fn softmax_{width}x{per}(buf: &mut [f32]) {{
    let s = gpu::workgroup_array::<f32, {width}>();
    let base = gpu::workgroup_id().x * {row} + gpu::local_id().x;"""]
    out += [f"    let x{j} = buf[base + {width * j}];" for j in range(per)]
    out.append(f"    let m = {_tree([f'x{j}' for j in range(per)], lambda a, b: f'max({a}, {b})')};")
    out.append(f"    let row_max = gpu::workgroup_max::<{width}>(m, s);")
    out += [f"    let e{j} = exp(x{j} - row_max);" for j in range(per)]
    out.append(f"    let part = {_tree([f'e{j}' for j in range(per)], lambda a, b: f'({a} + {b})')};")
    out.append(f"    let total = gpu::workgroup_sum::<{width}>(part, s);")
    out.append("    let inv = 1.0 / total;")
    out += [f"    buf[base + {width * j}] = e{j} * inv;" for j in range(per)]
    return "\n".join(out) + "\n}\n"


def matmul_4x4_source() -> str:
    """c = a * b like rust_examples/matmul.rs and in its product order (so the same bits),
    written for speed: a workgroup computes a 64 x 64 block of c, each thread 4 x 4 outputs
    (rows ty + 16 r, columns tx + 16 q) from 64 x 16 and 16 x 64 tiles of a and b in
    workgroup memory; per k step a thread reads 8 values for 16 products."""
    out = ["""
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn matmul_4x4(a: &[f32], b: &[f32], c: gpu::Scattered<f32>, m: u32, n: u32, k: u32) {
    let ta = gpu::workgroup_array::<f32, 1024>();
    let tb = gpu::workgroup_array::<f32, 1024>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    let row0 = gpu::workgroup_id().y * 64;
    let col0 = gpu::workgroup_id().x * 64;"""]
    rq = [(r, q) for r in range(4) for q in range(4)]
    out += [f"    let mut acc{r}{q} = 0.0;" for r, q in rq]
    out += ["    for t in 0..(k + 15) / 16 {", "        let ka = t * 16 + tx;", "        let kb = t * 16 + ty;"]
    for r in range(4):
        out += [f"        let mut va{r} = 0.0;",
                f"        if row0 + ty + {16 * r} < m && ka < k {{ va{r} = a[(row0 + ty + {16 * r}) * k + ka]; }}",
                f"        ta[(ty + {16 * r}) * 16 + tx] = va{r};"]
    for q in range(4):
        out += [f"        let mut vb{q} = 0.0;",
                f"        if kb < k && col0 + tx + {16 * q} < n {{ vb{q} = b[kb * n + col0 + tx + {16 * q}]; }}",
                f"        tb[ty * 64 + tx + {16 * q}] = vb{q};"]
    out += ["        gpu::workgroup_barrier();", "        for kk in 0..16 {"]
    out += [f"            let a{r} = ta[(ty + {16 * r}) * 16 + kk];" for r in range(4)]
    out += [f"            let b{q} = tb[kk * 64 + tx + {16 * q}];" for q in range(4)]
    out += [f"            acc{r}{q} = acc{r}{q} + a{r} * b{q};" for r, q in rq]
    out += ["        }", "        gpu::workgroup_barrier();", "    }"]
    out += [f"    if row0 + ty + {16 * r} < m && col0 + tx + {16 * q} < n {{ "
            f"c[(row0 + ty + {16 * r}) * n + col0 + tx + {16 * q}] = acc{r}{q}; }}" for r, q in rq]
    return "\n".join(out) + "\n}\n"


def matmul_fma_source() -> str:
    """c = a * b with `mul_add` (one rounding per step: acc = a[row][p].mul_add(b[p][col],
    acc) for p = 0, 1, ..., k - 1 in order, acc from 0.0; the same bits on every backend,
    the CPU oracle's exact fma included): a workgroup computes a 128 x 128 block of c, each
    thread 8 x 8 outputs (rows ty + 16 r, columns tx + 16 q) from 128 x 8 and 8 x 128 tiles
    of a and b in workgroup memory; per k step a thread reads 16 values for 64 fmas.
    Padding past the edges is 0.0, and fma(0, 0, acc) is acc (acc is never -0.0)."""
    out = ["""
#[goldy::compute(workgroup_size = [16, 16, 1])]
fn matmul_fma(a: &[f32], b: &[f32], c: gpu::Scattered<f32>, m: u32, n: u32, k: u32) {
    let ta = gpu::workgroup_array::<f32, 1024>();
    let tb = gpu::workgroup_array::<f32, 1024>();
    let tx = gpu::local_id().x;
    let ty = gpu::local_id().y;
    let l = ty * 16 + tx;
    let row0 = gpu::workgroup_id().y * 128;
    let col0 = gpu::workgroup_id().x * 128;"""]
    rq = [(r, q) for r in range(8) for q in range(8)]
    out += [f"    let mut acc{r}{q} = 0.0;" for r, q in rq]
    out += ["    for t in 0..(k + 7) / 8 {"]
    for e in range(4):  # element l + 256 e of each tile: a row-major 128 x 8, b 8 x 128
        out += [f"        let ar{e} = row0 + (l + {256 * e}) / 8;",
                f"        let ak{e} = t * 8 + (l + {256 * e}) % 8;",
                f"        let mut va{e} = 0.0;",
                f"        if ar{e} < m && ak{e} < k {{ va{e} = a[ar{e} * k + ak{e}]; }}",
                f"        ta[l + {256 * e}] = va{e};",
                f"        let bk{e} = t * 8 + (l + {256 * e}) / 128;",
                f"        let bc{e} = col0 + (l + {256 * e}) % 128;",
                f"        let mut vb{e} = 0.0;",
                f"        if bk{e} < k && bc{e} < n {{ vb{e} = b[bk{e} * n + bc{e}]; }}",
                f"        tb[l + {256 * e}] = vb{e};"]
    out += ["        gpu::workgroup_barrier();", "        for kk in 0..8 {"]
    out += [f"            let a{r} = ta[(ty + {16 * r}) * 8 + kk];" for r in range(8)]
    out += [f"            let b{q} = tb[kk * 128 + tx + {16 * q}];" for q in range(8)]
    out += [f"            acc{r}{q} = a{r}.mul_add(b{q}, acc{r}{q});" for r, q in rq]
    out += ["        }", "        gpu::workgroup_barrier();", "    }"]
    out += [f"    if row0 + ty + {16 * r} < m && col0 + tx + {16 * q} < n {{ "
            f"c[(row0 + ty + {16 * r}) * n + col0 + tx + {16 * q}] = acc{r}{q}; }}" for r, q in rq]
    return "\n".join(out) + "\n}\n"


def fma_order(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """acc = fma(a[p], b[p], acc) over the last axis of a and the first of b, in order,
    rounded once per step (the CPU oracle's exact f32 fma)."""
    from goldy_import.codegen.cpu.rt import fma
    acc = np.zeros(a.shape[0], np.float32)
    for p in range(a.shape[1]):
        acc = fma(a[:, p], b[p], acc)
    return acc


RUST += "".join(softmax_source(w, p) for w, p in SOFTMAX_SHAPES) + matmul_4x4_source() + matmul_fma_source()


class Events:
    """Median device time of `fn` between two driver events recorded on `stream`."""

    def __init__(self, backend):
        self.b = backend
        self.e0 = backend._cu("cuEventCreate", 0)
        self.e1 = backend._cu("cuEventCreate", 0)

    def median_ms(self, fn, stream, reps: int, warm: int = 3) -> float:
        for _ in range(warm):
            fn()
        self.b._cu("cuStreamSynchronize", stream)
        times = []
        for _ in range(reps):
            self.b._cu("cuEventRecord", self.e0, stream)
            fn()
            self.b._cu("cuEventRecord", self.e1, stream)
            self.b._cu("cuEventSynchronize", self.e1)
            times.append(self.b._cu("cuEventElapsedTime", self.e0, self.e1))
        return statistics.median(times)


def lib_median_ms(event_cls, sync, fn, reps: int, warm: int = 3) -> float:
    """The same with a library's own events (CuPy, PyTorch) on its current stream."""
    for _ in range(warm):
        fn()
    sync()
    times = []
    for _ in range(reps):
        a, b = event_cls(), event_cls()
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) if hasattr(a, "elapsed_time") else event_elapsed(a, b))
    return statistics.median(times)


def torch_timer(reps: int):
    """(torch or None, a median-of-`reps` timer of a callable on torch's stream or None)."""
    try:
        import torch
    except ImportError:
        return None, None
    return torch, lambda fn: lib_median_ms(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize,
                                           fn, reps)


def event_elapsed(a, b) -> float:
    import cupy as cp
    return cp.cuda.get_elapsed_time(a, b)


def softmax_ref(x: np.ndarray, row: int = ROW) -> np.ndarray:
    r = x.reshape(-1, row).astype(np.float64)
    e = np.exp(r - r.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(-1)


def matmul_table(size, dev, b, stream, ev, ours, launch_ref, P, U, ptr, rng, torch, th_time) -> None:
    """GFLOP/s of f32 c = a * b at size^3 (2 size^3 operations per product)."""
    from goldy_import.examples import matmul_reference  # noqa: F401  (documents the order checked below)
    m = n = k = size
    reps = 10
    a0 = rng.standard_normal((m, k)).astype(np.float32)
    b0 = rng.standard_normal((k, n)).astype(np.float32)
    A, B = dev.buffer(a0.reshape(-1)), dev.buffer(b0.reshape(-1))
    C1, C2 = dev.empty(m * n, np.float32), dev.empty(m * n, np.float32)
    example = gi.load(os.path.join(HERE, "..", "rust_examples", "matmul.rs"))
    flops = 2.0 * m * n * k
    gf = lambda ms: flops / ms / 1e6  # noqa: E731

    # sampled checks: the documented order bit for bit, and the float64 error bound
    si, sj = rng.integers(0, m, 256), rng.integers(0, n, 256)
    seq = np.zeros(256, np.float32)
    for p in range(k):
        seq = seq + a0[si, p] * b0[p, sj]
    exact = np.einsum("ij,ji->i", a0[si].astype(np.float64), b0[:, sj].astype(np.float64))
    bound = 1.01 * k * 2.0**-24 * np.einsum("ij,ji->i", np.abs(a0[si]).astype(np.float64),
                                            np.abs(b0[:, sj]).astype(np.float64))

    def check(c: np.ndarray, what: str) -> None:
        got = c.reshape(m, n)[si, sj]
        assert np.array_equal(got, seq), f"{what}: not the documented product order"
        assert (np.abs(got - exact) <= bound).all(), f"{what}: beyond the f32 error bound"

    print(f"\nf32 matrix multiply {m} x {k} @ {k} x {n}, median of {reps} after 3 warm-ups")
    print(f"{'kernel':34} {'GFLOP/s':>9} {'vs torch':>9}  note")
    rows = []
    run, _s = ours("matmul", [A, B, C1, m, n, k], (-(-n // 16), -(-m // 16), 1), module=example)
    check(C1.numpy(), "matmul.rs")
    rows.append(("rust_examples/matmul.rs (16x16 tiles)", ev.median_ms(run, stream, reps, warm=3), "1 output/thread"))
    run, _s = ours("matmul_4x4", [A, B, C2, m, n, k], (-(-n // 64), -(-m // 64), 1))
    c2 = C2.numpy()
    assert np.array_equal(c2, C1.numpy()), "matmul_4x4 differs from matmul.rs"
    rows.append(("matmul_4x4 (dialect, 4x4/thread)", ev.median_ms(run, stream, reps, warm=3), "same bits as matmul.rs"))
    C2.write(np.zeros(m * n, np.float32))
    ref = launch_ref("matmul_4x4", (-(-n // 64), -(-m // 64)), (16, 16),
                     [P(ptr(A)), P(ptr(B)), P(ptr(C2)), U(m), U(n), U(k)])
    ref()
    b._cu("cuStreamSynchronize", stream)
    assert np.array_equal(C2.numpy(), c2), "nvcc matmul_4x4 differs"
    rows.append(("nvcc matmul_4x4 (same algorithm)", ev.median_ms(ref, stream, reps, warm=3), "CUDA C, -O3"))
    C2.write(np.zeros(m * n, np.float32))
    run, _s = ours("matmul_fma", [A, B, C2, m, n, k], (-(-n // 128), -(-m // 128), 1))
    got = C2.numpy().reshape(m, n)[si, sj]
    assert np.array_equal(got, fma_order(a0[si], b0[:, sj])), \
        "matmul_fma: not the documented fma order"
    assert (np.abs(got - exact) <= bound).all(), "matmul_fma: beyond the f32 error bound"
    rows.append(("matmul_fma (dialect, 8x8/thread)", ev.median_ms(run, stream, reps, warm=3),
                 "mul_add, 128x128 per workgroup"))
    # matmul_fast: bit for bit the CPU oracle at a small ragged size, then at size^3 the fma
    # order on the samples and torch's f32 product within the error bound (below)
    fast_small_check(dev, example, rng)
    groups = (-(-n // 128), -(-m // 128), 1)
    fast = {}
    for checks in (True, False):
        C2.write(np.zeros(m * n, np.float32))
        run, _s = ours("matmul_fast", [A, B, C2, m, n, k], groups, module=example, checks=checks)
        got = C2.numpy().reshape(m, n)
        assert np.array_equal(got[si, sj], fma_order(a0[si], b0[:, sj])), "matmul_fast: not the documented fma order"
        fast[checks] = got
        rows.append((f"matmul_fast{'' if checks else ', checks off'}", ev.median_ms(run, stream, reps, warm=3),
                     "rust_examples/matmul.rs: 128x128/workgroup, 8x8 mul_add/thread, v4 tile loads"
                     + ("" if checks else "; prepare(checks=False)")))
    assert np.array_equal(fast[True], fast[False])
    t_th = None
    if torch is not None:
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.set_float32_matmul_precision("highest")
        ta, tb = torch.from_numpy(a0).cuda(), torch.from_numpy(b0).cuda()
        tc = torch.empty((m, n), dtype=torch.float32, device="cuda")
        torch.mm(ta, tb, out=tc)
        want = tc.cpu().numpy()
        assert (np.abs(want[si, sj] - exact) <= bound).all(), "torch beyond the f32 error bound (TF32 on?)"
        # both within k * 2^-24 * |a| |b| of the exact product: within twice that of each other
        scale = 2.02 * k * 2.0**-24 * (torch.from_numpy(np.abs(a0)).cuda() @ torch.from_numpy(np.abs(b0)).cuda())
        assert (np.abs(fast[True] - want) <= scale.cpu().numpy()).all(), "matmul_fast differs from torch"
        t_th = th_time(lambda: torch.mm(ta, tb, out=tc))
        rows.append(("torch.mm f32, TF32 off", t_th, f"cuBLAS; allow_tf32={torch.backends.cuda.matmul.allow_tf32}"))
        tri = triton_matmul()
        if tri is not None:
            tc.zero_()
            tri(ta, tb, tc)  # autotunes once (a few configurations)
            got = tc.cpu().numpy()
            assert (np.abs(got[si, sj] - exact) <= bound).all(), "Triton beyond the f32 error bound (TF32?)"
            rows.append(("Triton tutorial matmul, f32", th_time(lambda: tri(ta, tb, tc)),
                         "tl.dot(input_precision='ieee'), autotuned"))
    for name, ms, note in rows:
        ratio = f"{t_th / ms:9.3f}" if t_th else "        -"
        print(f"{name:34} {gf(ms):9.0f} {ratio}  {note}", flush=True)


def fast_small_check(dev, example, rng) -> None:
    """matmul_fast on this GPU and on the CPU oracle, ragged on every side (odd sizes: its
    scalar loads; rows multiples of 4: its vector loads, then the edges): the same bits."""
    for m, n, k in ((197, 261, 75), (130, 136, 20)):
        a = rng.standard_normal(m * k).astype(np.float32)
        b = rng.standard_normal(k * n).astype(np.float32)
        outs = []
        for d in (dev, gi.Device("cpu")):
            c = d.buffer(np.full(m * n, np.nan, np.float32))
            scheme = gi.Scheme(d)
            example.matmul_fast.prepare(d).record(scheme, "matmul_fast", d.buffer(a), d.buffer(b), c, m, n, k) \
                .groups((-(-n // 128), -(-m // 128), 1))
            scheme.submit()
            outs.append(c.numpy())
        assert np.array_equal(outs[0].view(np.uint32), outs[1].view(np.uint32)), \
            f"matmul_fast differs from the CPU oracle at {m}x{n}x{k}"


def triton_matmul():
    """Triton's tutorial matmul (03-matrix-multiplication) in f32 with TF32 off, as a
    callable (a, b, c); None without Triton."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return None

    configs = [triton.Config({"BLOCK_SIZE_M": bm, "BLOCK_SIZE_N": bn, "BLOCK_SIZE_K": bk, "GROUP_SIZE_M": 8},
                             num_stages=st, num_warps=w)
               for bm, bn, bk, st, w in ((128, 128, 32, 3, 8), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4))]

    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm,
                      stride_cn, BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                      BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr):
        pid = tl.program_id(axis=0)
        num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
        num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
        num_pid_in_group = GROUP_SIZE_M * num_pid_n
        group_id = pid // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
        pid_n = (pid % num_pid_in_group) // group_size_m
        offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
        offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
        offs_k = tl.arange(0, BLOCK_SIZE_K)
        a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
        b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
        acc = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for kk in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
            a = tl.load(a_ptrs, mask=offs_k[None, :] < K - kk * BLOCK_SIZE_K, other=0.0)
            b = tl.load(b_ptrs, mask=offs_k[:, None] < K - kk * BLOCK_SIZE_K, other=0.0)
            acc = tl.dot(a, b, acc, input_precision="ieee")
            a_ptrs += BLOCK_SIZE_K * stride_ak
            b_ptrs += BLOCK_SIZE_K * stride_bk
        offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
        offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
        c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
        tl.store(c_ptrs, acc, mask=(offs_cm[:, None] < M) & (offs_cn[None, :] < N))

    def run(a, b, c):
        M, K = a.shape
        N = b.shape[1]
        grid = lambda meta: (triton.cdiv(M, meta["BLOCK_SIZE_M"]) * triton.cdiv(N, meta["BLOCK_SIZE_N"]),)  # noqa: E731
        matmul_kernel[grid](a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                            c.stride(0), c.stride(1))
    return run


def checks_cost_table(dev, mod, x, y, x0, y0, partial, n, blocks, reps, ours, ev, stream, rounds: int = 5) -> None:
    """saxpy and the workgroup_sum reduction with trapping checks on and off: the median
    over `rounds` alternating rounds of each one's median of `reps` event-timed submits."""
    from goldy_import.ir.checks import check_sites
    print(f"\ncost of trapping checks (issue 9): device time per submit, {rounds} alternating rounds "
          f"x median of {reps}")
    print(f"{'kernel':32} {'sites':>5} {'on us':>9} {'off us':>9} {'overhead':>9}  note")
    want_y = (np.float32(2.0) * x0 + y0).astype(np.float32)
    want_sum = x0.astype(np.float64).reshape(blocks, PER_THREAD, 256).sum(axis=(1, 2))
    for name, bind, groups, check, note in (
            ("saxpy", [x, y, 2.0], (n // 256, 1, 1), lambda: np.array_equal(y.numpy(), want_y),
             "batched entry; x[i] checked (the guard is on y.len())"),
            ("block_sum", [x, partial, PER_THREAD], (blocks, 1, 1),
             lambda: np.allclose(partial.numpy(), want_sum, rtol=1e-4, atol=1e-3),
             "workgroup_sum reduction; x[...] in a loop and partial[g]")):
        runs = {}
        for checks in (True, False):
            y.write(y0)
            run, scheme = ours(name, bind, groups, checks=checks)
            assert check(), f"{name} wrong with checks={checks}"
            node = scheme.nodes[0]
            runs[checks] = run
            if checks:
                sites = len(check_sites(node.dispatch.kernel))
                assert node.dispatch.compiled.checked == (sites > 0)
            else:
                assert not node.dispatch.compiled.checked
        on, off = [], []
        for _ in range(rounds):
            on.append(ev.median_ms(runs[True], stream, reps))
            off.append(ev.median_ms(runs[False], stream, reps))
        t_on, t_off = statistics.median(on), statistics.median(off)
        label = "saxpy" if name == "saxpy" else "workgroup_sum reduction"
        print(f"{label:32} {sites:5d} {1e3 * t_on:9.1f} {1e3 * t_off:9.1f} {100 * (t_on / t_off - 1):+8.2f}%  {note}",
              flush=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256, help="size of each array in MiB (>= 256 for the table)")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--matmul", type=int, default=4096, help="square matrix size for the matmul table (0: skip)")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help=f"comma-separated sections to run, of {','.join(SECTIONS)} (one call each fits a short bound)")
    ap.add_argument("--checks-cost", action="store_true",
                    help="only the cost-of-checks table (saxpy and the reduction, checks on vs off)")
    args = ap.parse_args()
    only = set(args.only.split(","))
    if only - set(SECTIONS):
        ap.error(f"unknown sections {sorted(only - set(SECTIONS))}: expected some of {','.join(SECTIONS)}")
    if only == {"matmul"}:
        args.mib = 16  # the element-wise arrays are not used (16 MiB: one multiple of their shape)
    n = args.mib * (1 << 20) // 4
    n -= n % (ROW * 256 * PER_THREAD)
    reps = args.reps
    rng = np.random.default_rng()

    dev = gi.Device("cuda")
    b = dev.backend
    stream = b.stream
    ev = Events(b)
    mod = gi.load_source(RUST, "bench.rs")
    print(f"# {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC  {b.describe()}")
    print(f"# arrays of {n} f32 ({n * 4 / 2**20:.0f} MiB), median of {reps} after 3 warm-ups", flush=True)

    def ours(kernel, bind, groups, module=None, batched=True, checks=None, lanes=True, then=None, specialize=False):
        """Record one dispatch, submit it once (builds its graph), return a thunk doing what
        each later submit puts on the stream (graph launch, error-word readback if
        checked), and the scheme. `batched=False` keeps element-wise kernels on their plain
        entry, `lanes=False` collective kernels on theirs (one lane per thread: no lanes
        entry, codegen/ptx/lanes.py); `checks` goes to prepare (None: the default, on);
        `then` (kernel, bind, groups) records a second dispatch into the same scheme;
        `specialize` turns the scheme's specialization on and times the variants it settles
        on (its scalars baked, as a Scheme whose scalars never change runs them)."""
        pk = getattr(module or mod, kernel).prepare(dev, checks=checks)
        scheme = gi.Scheme(dev)
        if specialize:
            scheme.set_specialization(True)
        saved = b.batch_min_threads
        if not batched:
            b.batch_min_threads = 1 << 62
        try:
            node = pk.record(scheme, kernel, *bind).groups(groups)
            if then is not None:
                getattr(module or mod, then[0]).prepare(dev, checks=checks).record(scheme, then[0], *then[1]).groups(then[2])
        finally:
            b.batch_min_threads = saved
        assert node.dispatch.state.batched == (batched and node.dispatch.compiled.batched is not None)
        if not lanes:
            for nd in scheme.nodes:
                nd.dispatch.state.lanes = False
        scheme.submit(wait=False)  # an asynchronous submit goes through the scheme's graph (a waiting
        dev.synchronize()          # one-node submit launches directly and builds none)
        if specialize:  # the variants compile in the background; the next submit switches to them
            assert scheme.wait_for_specialization(300)
            scheme.submit(wait=False)
            dev.synchronize()
            assert scheme.stats.specializations >= 1, scheme.specialization_report()
        runs = scheme._specialized(scheme._entries()) if specialize else scheme.nodes  # what a submit runs
        g = b._graphs[tuple(id(nd.dispatch) for nd in runs)]
        assert g.faults is None or g.faults.clean  # steady state: no clearing before a launch
        return (lambda: b._enqueue(g)), scheme

    # ------------------------------------------------------------ data
    x0 = rng.standard_normal(n, dtype=np.float32)
    y0 = rng.standard_normal(n, dtype=np.float32)
    x, y, z = dev.buffer(x0), dev.buffer(y0), dev.empty(n, np.float32)
    ptr = lambda buf: buf.handle.ptr + buf.offset * 4  # noqa: E731
    rows = n // ROW
    blocks = n // (256 * PER_THREAD)
    partial = dev.empty(blocks, np.float32)

    if args.checks_cost:
        checks_cost_table(dev, mod, x, y, x0, y0, partial, n, blocks, reps, ours, ev, stream)
        return 0

    # ------------------------------------------------------------ CUDA C references
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "k.cubin")
        subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-cubin", "-o", cubin,
                        os.path.join(HERE, "cuda_ref", "kernels.cu")], check=True)
        with open(cubin, "rb") as f:
            image = np.frombuffer(f.read(), dtype=np.uint8)
    ref_mod = b._cu("cuModuleLoadData", image.ctypes.data)
    ref_fn = {k: b._cu("cuModuleGetFunction", ref_mod, k.encode())
              for k in ("saxpy", "chain3", "block_sum", "row_softmax", "tiny", "row_softmax_regs", "matmul_4x4")}
    keep = []

    def launch_ref(name, grid, block, values):
        pb = ParamBlock(values)
        keep.append(pb)
        gx, gy = grid if isinstance(grid, tuple) else (grid, 1)
        bx, by = block if isinstance(block, tuple) else (block, 1)
        return lambda: b._cu("cuLaunchKernel", ref_fn[name], gx, gy, 1, bx, by, 1, 0, stream,
                             pb.address, 0, kernel=name)

    P = lambda v: struct.pack("<Q", v)  # noqa: E731
    U = lambda v: struct.pack("<I", v)  # noqa: E731
    F = lambda v: struct.pack("<f", v)  # noqa: E731
    if only == {"matmul"}:
        torch, th_time = torch_timer(reps)
        matmul_table(args.matmul, dev, b, stream, ev, ours, launch_ref, P, U, ptr, rng, torch, th_time)
        return 0

    # copy ceiling
    copy_ms = ev.median_ms(lambda: b._cu("cuMemcpyDtoDAsync", b.drv.CUdeviceptr(ptr(z)),
                                         b.drv.CUdeviceptr(ptr(x)), 4 * n, stream), stream, reps)
    ceiling = 2 * 4 * n / copy_ms / 1e6
    fmt = lambda v: f"{v:8.0f}" if v is not None else "       -"  # noqa: E731
    pct = lambda v: f"{100 * v / ceiling:5.1f}%" if v is not None else "     -"  # noqa: E731
    print()
    print(f"{'kernel':32} {'ours GB/s':>9} {'%copy':>6} {'nvcc GB/s':>9} {'%copy':>6} {'ours/nvcc':>9} "
          f"{'CuPy GB/s':>9} {'torch GB/s':>10}  note")

    class Rows(list):
        def append(self, row):
            name, o, r, c, t, note = row
            ratio = f"{o / r:9.2f}" if r else "        -"
            print(f"{name:32} {fmt(o)} {pct(o)} {fmt(r)} {pct(r)} {ratio} {fmt(c)} {fmt(t):>10}  {note or ''}",
                  flush=True)
            super().append(row)

    rows_out = Rows()
    rows_out.append(("d2d copy (ceiling)", ceiling, None, None, None, "cuMemcpyDtoDAsync, read + write"))

    def gbps(nbytes, ms):
        return nbytes / ms / 1e6

    try:
        import cupy as cp
    except ImportError:
        cp = None
    torch, th_time = torch_timer(reps)
    cp_time = (lambda fn: lib_median_ms(cp.cuda.Event, cp.cuda.Device().synchronize, fn, reps)) if cp else None
    cx = cp.asarray(x0) if cp else None
    cy = cp.asarray(y0) if cp else None
    tx = torch.from_numpy(x0).cuda() if torch else None
    ty = torch.from_numpy(y0).cuda() if torch else None

    # ------------------------------------------------------------ saxpy: y = a*x + y
    if "stream" in only:
        nb = 12 * n
        run, _s = ours("saxpy", [x, y, 2.0], (n // 256, 1, 1))
        assert np.array_equal(y.numpy(), (np.float32(2.0) * x0 + y0).astype(np.float32)), "saxpy wrong"
        t_ours = ev.median_ms(run, stream, reps)
        y.write(y0)
        ref = launch_ref("saxpy", n // 256, 256, [P(ptr(x)), P(ptr(y)), U(n), F(2.0)])
        ref()
        b._cu("cuStreamSynchronize", stream)
        assert np.array_equal(y.numpy(), (np.float32(2.0) * x0 + y0).astype(np.float32)), "nvcc saxpy wrong"
        t_ref = ev.median_ms(ref, stream, reps)
        t_cp = cp_time(lambda: cp.add(2.0 * cx, cy, out=cy)) if cp else None
        t_th = th_time(lambda: ty.add_(tx, alpha=2.0)) if torch else None
        rows_out.append(("saxpy", gbps(nb, t_ours), gbps(nb, t_ref), gbps(nb, t_cp) if cp else None,
                         gbps(nb, t_th) if torch else None, "batched entry; cupy: 2 kernels (2*x, add)"))
        y.write(y0)
        run, _s = ours("saxpy", [x, y, 2.0], (n // 256, 1, 1), batched=False)
        assert np.array_equal(y.numpy(), (np.float32(2.0) * x0 + y0).astype(np.float32)), "plain saxpy wrong"
        t_plain = ev.median_ms(run, stream, reps)
        rows_out.append(("saxpy, 1 workgroup/block", gbps(nb, t_plain), gbps(nb, t_ref), None, None,
                         "the plain entry, as before batching"))

        # ------------------------------------------------------------ chain: z = (x + y) * x - 1
        run, _s = ours("chain3", [x, y, z], (n // 256, 1, 1))
        yv = y.numpy()
        want = ((x0 + yv) * x0 - np.float32(1.0)).astype(np.float32)
        assert np.array_equal(z.numpy(), want), "chain3 wrong"
        t_ours = ev.median_ms(run, stream, reps)
        ref = launch_ref("chain3", n // 256, 256, [P(ptr(x)), P(ptr(y)), P(ptr(z)), U(n)])
        ref()
        b._cu("cuStreamSynchronize", stream)
        assert np.array_equal(z.numpy(), want), "nvcc chain3 wrong"
        t_ref = ev.median_ms(ref, stream, reps)
        t_cp = cp_time(lambda: (cx + cy) * cx - 1.0) if cp else None
        t_th = th_time(lambda: (tx + ty) * tx - 1.0) if torch else None
        rows_out.append(("chain (x+y)*x-1", gbps(nb, t_ours), gbps(nb, t_ref), gbps(nb, t_cp) if cp else None,
                         gbps(nb, t_th) if torch else None, "batched entry; cupy/torch: 3 kernels"))
        z.write(np.zeros(n, np.float32))
        run, _s = ours("chain3", [x, y, z], (n // 256, 1, 1), batched=False)
        assert np.array_equal(z.numpy(), want), "plain chain3 wrong"
        t_plain = ev.median_ms(run, stream, reps)
        rows_out.append(("chain, 1 workgroup/block", gbps(nb, t_plain), gbps(nb, t_ref), None, None,
                         "the plain entry"))

        # ------------------------------------------------------------ reduction
        nb = 4 * n
        run, _s = ours("block_sum", [x, partial, PER_THREAD], (blocks, 1, 1))
        want = x0.astype(np.float64).reshape(blocks, PER_THREAD, 256).sum(axis=(1, 2))
        np.testing.assert_allclose(partial.numpy(), want, rtol=1e-4, atol=1e-3)
        t_ours = ev.median_ms(run, stream, reps)
        ref = launch_ref("block_sum", blocks, 256, [P(ptr(x)), U(n), P(ptr(partial)), U(PER_THREAD)])
        ref()
        b._cu("cuStreamSynchronize", stream)
        np.testing.assert_allclose(partial.numpy(), want, rtol=1e-4, atol=1e-3)
        t_ref = ev.median_ms(ref, stream, reps)
        t_cp = cp_time(lambda: cx.sum()) if cp else None
        t_th = th_time(lambda: tx.sum()) if torch else None
        rows_out.append(("workgroup_sum reduction", gbps(nb, t_ours), gbps(nb, t_ref), gbps(nb, t_cp) if cp else None,
                         gbps(nb, t_th) if torch else None, "cupy/torch: full sum"))
        # the complete sum: block_sum, then sum_partials (one 1024-lane workgroup), one graph
        total = dev.empty(1, np.float32)
        run, _s = ours("block_sum", [x, partial, PER_THREAD], (blocks, 1, 1),
                       then=("sum_partials", [partial, total], (1, 1, 1)))
        np.testing.assert_allclose(total.numpy()[0], x0.astype(np.float64).sum(), rtol=1e-4, atol=1e-2)
        t_two = ev.median_ms(run, stream, reps)
        rows_out.append(("full sum, both passes", gbps(nb, t_two), None, gbps(nb, t_cp) if cp else None,
                         gbps(nb, t_th) if torch else None, "block_sum + sum_partials (1 workgroup), one graph"))
        got = total.numpy()[0]
        run, _s = ours("block_sum", [x, partial, PER_THREAD], (blocks, 1, 1),
                       then=("sum_partials", [partial, total], (1, 1, 1)), specialize=True)
        assert total.numpy()[0].view(np.uint32) == got.view(np.uint32), "specialized sum bits differ"
        t_two = ev.median_ms(run, stream, reps)
        rows_out.append(("full sum, both passes, baked", gbps(nb, t_two), None, None, None,
                         "Scheme.set_specialization(True): per-thread count and lengths baked"))

    # ------------------------------------------------------------ row softmax (in place)
    if "softmax" in only:
        nb = 8 * n
        sm = dev.buffer(x0)
        run, _s = ours("row_softmax", [sm, ROW], (rows, 1, 1))
        want = softmax_ref(x0)
        np.testing.assert_allclose(sm.numpy(), want, rtol=1e-5, atol=1e-9)
        t_ours = ev.median_ms(run, stream, reps)
        sm.write(x0)
        ref = launch_ref("row_softmax", rows, 1024, [P(ptr(sm)), U(n), U(ROW)])
        ref()
        b._cu("cuStreamSynchronize", stream)
        np.testing.assert_allclose(sm.numpy(), want, rtol=1e-5, atol=1e-9)
        t_ref = ev.median_ms(ref, stream, reps)
        if cp:
            c2 = cx.reshape(-1, ROW)

            def cp_softmax():
                e = cp.exp(c2 - c2.max(axis=1, keepdims=True))
                return e / e.sum(axis=1, keepdims=True)
            t_cp = cp_time(cp_softmax)
        t_th = th_time(lambda: torch.softmax(tx.view(-1, ROW), dim=1)) if torch else None
        rows_out.append((f"row softmax ({ROW}), collective", gbps(nb, t_ours), gbps(nb, t_ref),
                         gbps(nb, t_cp) if cp else None, gbps(nb, t_th) if torch else None,
                         "1 element/lane, lanes entry; torch out of place; cupy 5 kernels"))
        sm.write(x0)  # (the timed runs ran it again and again in place: compare one run)
        run, _s = ours("row_softmax", [sm, ROW], (rows, 1, 1))
        once = sm.numpy()
        sm.write(x0)
        run, _s = ours("row_softmax", [sm, ROW], (rows, 1, 1), specialize=True)  # ran twice: in place
        sm.write(x0)
        run()
        b._cu("cuStreamSynchronize", stream)
        assert np.array_equal(sm.numpy().view(np.uint32), once.view(np.uint32)), "specialized softmax bits differ"
        t_spec = ev.median_ms(run, stream, reps)
        rows_out.append(("row softmax, count baked", gbps(nb, t_spec), gbps(nb, t_ref), None, None,
                         "Scheme.set_specialization(True): the variant with count = 1024"))
        # rows of 1000 on the same 1024-lane workgroups: the general form (lanes past the row
        # idle), not the branch to the one-tile copy that count == 1024 takes (ir/legalize.py)
        r1000 = n // 1000
        sm.write(x0)
        run, _s = ours("row_softmax", [sm, 1000], (r1000, 1, 1))
        got = sm.numpy()
        want1000 = softmax_ref(x0[:r1000 * 1000], 1000)
        np.testing.assert_allclose(got[:r1000 * 1000], want1000, rtol=1e-5, atol=1e-9)
        assert np.array_equal(got[r1000 * 1000:].view(np.uint32), x0[r1000 * 1000:].view(np.uint32))
        t_1000 = ev.median_ms(run, stream, reps)
        rows_out.append(("row softmax, rows of 1000", gbps(8 * r1000 * 1000, t_1000), None, None, None,
                         "count = 1000 < 1024 lanes: the general form"))
        sm.write(x0)
        run, _s = ours("row_softmax", [sm, ROW], (rows, 1, 1), lanes=False)
        np.testing.assert_allclose(sm.numpy(), want, rtol=1e-5, atol=1e-9)
        t_plain = ev.median_ms(run, stream, reps)
        rows_out.append(("row softmax, 1 lane/thread", gbps(nb, t_plain), gbps(nb, t_ref), None, None,
                         "the plain entry: 1024 threads per block, as before the lanes entry"))
        # the lanes entry at other block sizes (the backend uses cuda.LANE_THREADS), launched by hand
        from goldy_import.codegen.ptx import emit_ptx, lanes_entry, lanes_in
        k_sm = mod.row_softmax.prepare(dev).prepared.target_ir  # the lowered IR the backend compiles
        fault_words = dev.zeros(FAULT_WORDS, np.uint32)
        for threads in (256, 64):
            text = emit_ptx(k_sm, target=b.target, ptx_version=b.ptx_version, lane_threads=threads)
            c = lanes_in(text, k_sm)
            image = np.frombuffer(text.encode() + b"\0", dtype=np.uint8)
            fn = b._cu("cuModuleGetFunction", b._cu("cuModuleLoadData", image.ctypes.data), lanes_entry(k_sm, c).encode())
            ref_fn[f"lanes{threads}"] = fn
            regs = b._cu("cuFuncGetAttribute", b.drv.CUfunction_attribute.CU_FUNC_ATTRIBUTE_NUM_REGS, fn)
            sm.write(x0)
            values = [P(ptr(sm)), U(n), U(ROW)]
            declared = text.split(f".entry {lanes_entry(k_sm, c)}(")[1].split(")")[0].count(".param")
            if declared == len(values) + 1:  # checked: the error word's address last (ir/abi.py)
                values.append(P(ptr(fault_words)))
            assert len(values) == declared, f"the lanes entry takes {declared} parameters, {len(values)} given"
            run = launch_ref(f"lanes{threads}", rows, threads, values)
            run()
            b._cu("cuStreamSynchronize", stream)
            np.testing.assert_allclose(sm.numpy(), want, rtol=1e-5, atol=1e-9)
            t_l = ev.median_ms(run, stream, reps)
            rows_out.append((f"row softmax, lanes {threads} thr x {c}", gbps(nb, t_l), gbps(nb, t_ref), None, None,
                             f"the lanes entry at {threads} threads per block ({regs} registers)"))
        for width, per in SOFTMAX_SHAPES:
            sm.write(x0)
            run, _s = ours(f"softmax_{width}x{per}", [sm], (rows, 1, 1))
            np.testing.assert_allclose(sm.numpy(), want, rtol=1e-5, atol=1e-9)
            t_ours = ev.median_ms(run, stream, reps)
            t_ref = None
            if width == 32:
                sm.write(x0)
                ref = launch_ref("row_softmax_regs", rows, 32, [P(ptr(sm))])
                ref()
                b._cu("cuStreamSynchronize", stream)
                np.testing.assert_allclose(sm.numpy(), want, rtol=1e-5, atol=1e-9)
                t_ref = ev.median_ms(ref, stream, reps)
            rows_out.append((f"row softmax {width} thr x {per} val", gbps(nb, t_ours), gbps(nb, t_ref) if t_ref else None,
                             None, None, "values in registers, 1 read + 1 write"))

    # ------------------------------------------------------------ GEMV, one row per thread
    if "gemv" in only:
        gn = 4096  # W: gn x gn f32 (64 MiB), read once per run
        w0 = rng.standard_normal(gn * gn, dtype=np.float32)
        v0 = rng.standard_normal(gn, dtype=np.float32)
        gw, gv, gy = dev.buffer(w0), dev.buffer(v0), dev.empty(gn, np.float32)
        run, _s = ours("gemv", [gw, gv, gy, gn], (gn // 256, 1, 1))
        exact = w0.reshape(gn, gn).astype(np.float64) @ v0.astype(np.float64)
        bound = 1.01 * gn * 2.0**-24 * (np.abs(w0.reshape(gn, gn)).astype(np.float64) @ np.abs(v0).astype(np.float64))
        assert (np.abs(gy.numpy() - exact) <= bound).all(), "gemv wrong"
        t_ours = ev.median_ms(run, stream, reps)
        t_th = None
        if torch:
            tw, tv = torch.from_numpy(w0).cuda().view(gn, gn), torch.from_numpy(v0).cuda()
            t_th = th_time(lambda: torch.mv(tw, tv))
        rows_out.append((f"GEMV {gn}x{gn}, 1 row/thread", gbps(4 * gn * gn, t_ours), None, None,
                         gbps(4 * gn * gn, t_th) if torch else None, "naive loop as users write it; torch.mv"))

    # ------------------------------------------------------------ cost of trapping checks
    if "checks" in only:
        y.write(y0)
        checks_cost_table(dev, mod, x, y, x0, y0, partial, n, blocks, reps, ours, ev, stream)

    # ------------------------------------------------------------ matrix multiply
    if "matmul" in only:
        if args.matmul:
            matmul_table(args.matmul, dev, b, stream, ev, ours, launch_ref, P, U, ptr, rng, torch, th_time)

    # ------------------------------------------------------------ host overhead
    if "host" in only:
        small = dev.buffer(rng.standard_normal(256).astype(np.float32))
        pk = mod.tiny.prepare(dev)
        scheme = gi.Scheme(dev)
        for _ in range(100):
            pk.record(scheme, "tiny", small, 1.0).over_1d(256)
        scheme.submit()

        def wall(fn, rounds=50):
            fn()
            ts = []
            for _ in range(rounds):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
            return statistics.median(ts) * 1e6 / 100  # us per dispatch

        us_ours = wall(scheme.submit)
        us_cp = None
        if cp:
            src = open(os.path.join(HERE, "cuda_ref", "kernels.cu")).read()
            rk = cp.RawKernel(src, "tiny")
            cs = cp.asarray(rng.standard_normal(256).astype(np.float32))

            def cp_100():
                for _ in range(100):
                    rk((1,), (256,), (cs, np.uint32(256), np.float32(1.0)))
                cp.cuda.Device().synchronize()
            us_cp = wall(cp_100)

        print(f"\nhost overhead per dispatch: Scheme of 100 tiny dispatches {us_ours:.2f} us"
              + (f", 100 CuPy RawKernel launches {us_cp:.2f} us" if us_cp is not None else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
