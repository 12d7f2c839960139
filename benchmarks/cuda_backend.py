"""CUDA backend benchmark (run on a GPU machine; see benchmarks/RESULTS.md).

    python benchmarks/cuda_backend.py [--mib 256] [--reps 20]

Prints one table: device-to-device copy bandwidth (the ceiling), then saxpy, a 3-op
element-wise chain, a workgroup_sum reduction and a row softmax over >= 256 MiB arrays:
GB/s (bytes each kernel must move / median time) and % of the copy ceiling, for the Rust
kernels through goldy-import's CUDA backend, the same algorithms in CUDA C
(benchmarks/cuda_ref/kernels.cu, `nvcc -O3 -arch=sm_90`), CuPy and PyTorch; then host
overhead per dispatch (a Scheme of 100 tiny dispatches vs 100 CuPy RawKernel launches).

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

#[goldy::compute(workgroup_size = [256, 1, 1])]
fn tiny(y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * y[i] + 1.0; }
}
"""

ROW = 1024
PER_THREAD = 16


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


def event_elapsed(a, b) -> float:
    import cupy as cp
    return cp.cuda.get_elapsed_time(a, b)


def softmax_ref(x: np.ndarray) -> np.ndarray:
    r = x.reshape(-1, ROW).astype(np.float64)
    e = np.exp(r - r.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).reshape(-1)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mib", type=int, default=256, help="size of each array in MiB (>= 256 for the table)")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
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

    # ------------------------------------------------------------ CUDA C references
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "k.cubin")
        subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-cubin", "-o", cubin,
                        os.path.join(HERE, "cuda_ref", "kernels.cu")], check=True)
        with open(cubin, "rb") as f:
            image = np.frombuffer(f.read(), dtype=np.uint8)
    ref_mod = b._cu("cuModuleLoadData", image.ctypes.data)
    ref_fn = {k: b._cu("cuModuleGetFunction", ref_mod, k.encode())
              for k in ("saxpy", "chain3", "block_sum", "row_softmax", "tiny")}
    keep = []

    def launch_ref(name, grid, block, values):
        pb = ParamBlock(values)
        keep.append(pb)
        return lambda: b._cu("cuLaunchKernel", ref_fn[name], grid, 1, 1, block, 1, 1, 0, stream,
                             pb.address, 0, kernel=name)

    P = lambda v: struct.pack("<Q", v)  # noqa: E731
    U = lambda v: struct.pack("<I", v)  # noqa: E731
    F = lambda v: struct.pack("<f", v)  # noqa: E731

    # ------------------------------------------------------------ data
    x0 = rng.standard_normal(n).astype(np.float32)
    y0 = rng.standard_normal(n).astype(np.float32)
    x, y, z = dev.buffer(x0), dev.buffer(y0), dev.empty(n, np.float32)
    ptr = lambda buf: buf.handle.ptr + buf.offset * 4  # noqa: E731
    rows = n // ROW
    blocks = n // (256 * PER_THREAD)
    partial = dev.empty(blocks, np.float32)

    # copy ceiling
    copy_ms = ev.median_ms(lambda: b._cu("cuMemcpyDtoDAsync", b.drv.CUdeviceptr(ptr(z)),
                                         b.drv.CUdeviceptr(ptr(x)), 4 * n, stream), stream, reps)
    ceiling = 2 * 4 * n / copy_ms / 1e6
    fmt = lambda v: f"{v:8.0f}" if v is not None else "       -"  # noqa: E731
    pct = lambda v: f"{100 * v / ceiling:5.1f}%" if v is not None else "     -"  # noqa: E731
    print()
    print(f"{'kernel':26} {'ours GB/s':>9} {'%copy':>6} {'nvcc GB/s':>9} {'%copy':>6} {'ours/nvcc':>9} "
          f"{'CuPy GB/s':>9} {'torch GB/s':>10}  note")

    class Rows(list):
        def append(self, row):
            name, o, r, c, t, note = row
            ratio = f"{o / r:9.2f}" if r else "        -"
            print(f"{name:26} {fmt(o)} {pct(o)} {fmt(r)} {pct(r)} {ratio} {fmt(c)} {fmt(t):>10}  {note or ''}",
                  flush=True)
            super().append(row)

    rows_out = Rows()
    rows_out.append(("d2d copy (ceiling)", ceiling, None, None, None, "cuMemcpyDtoDAsync, read + write"))

    def ours(kernel, bind, groups):
        """Record one dispatch, submit it once (builds its graph), return a replay thunk."""
        pk = getattr(mod, kernel).prepare(dev)
        scheme = gi.Scheme(dev)
        pk.record(scheme, kernel, *bind).groups(groups)
        scheme.submit()
        g = b._graphs[tuple(id(nd.dispatch) for nd in scheme.nodes)]
        return (lambda: b._cu("cuGraphLaunch", g.exec, stream)), scheme

    def gbps(nbytes, ms):
        return nbytes / ms / 1e6

    try:
        import cupy as cp
    except ImportError:
        cp = None
    try:
        import torch
    except ImportError:
        torch = None
    cp_time = (lambda fn: lib_median_ms(cp.cuda.Event, cp.cuda.Device().synchronize, fn, reps)) if cp else None
    th_time = (lambda fn: lib_median_ms(lambda: torch.cuda.Event(enable_timing=True), torch.cuda.synchronize,
                                        fn, reps)) if torch else None
    cx = cp.asarray(x0) if cp else None
    cy = cp.asarray(y0) if cp else None
    tx = torch.from_numpy(x0).cuda() if torch else None
    ty = torch.from_numpy(y0).cuda() if torch else None

    # ------------------------------------------------------------ saxpy: y = a*x + y
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
                     gbps(nb, t_th) if torch else None, "cupy: 2 kernels (2*x, add)"))

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
                     gbps(nb, t_th) if torch else None, "cupy/torch: 3 kernels"))

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

    # ------------------------------------------------------------ row softmax (in place)
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
    rows_out.append((f"row softmax ({ROW})", gbps(nb, t_ours), gbps(nb, t_ref), gbps(nb, t_cp) if cp else None,
                     gbps(nb, t_th) if torch else None, "torch out of place; cupy 5 kernels"))

    # ------------------------------------------------------------ host overhead
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
