"""Host overhead per tiny dispatch (issue 17), goldy-import against its peers in one process.

    python benchmarks/host_overhead.py [--backend cuda|wgpu|cpu|slang] [--n 1024] [--reps 15]

Rows (microseconds per dispatch, median of `reps` repeats of a timed loop of back-to-back
calls after warm-ups; every result checked first):

- launch + wait: one dispatch, then wait for it (goldy: `pk.launch(...).over_1d(n)` then
  `dev.synchronize()`);
- queued launch: `--burst` launches back to back and one wait, divided by `--burst`;
- 1-node submit: a recorded one-node Scheme's `submit()`;
- fresh Scheme + record + submit: a new Scheme, one record, one submit, every time;
- replayed Scheme, per dispatch: a recorded 100-node Scheme's `submit()` divided by 100,
  and with `submit(wait=False)` back to back (`--burst` submits, one wait).

Peers on the cuda backend, where importable: CuPy RawKernel, the driver floor (cuda-python's
`cuLaunchKernel` of CuPy's compiled kernel with a prebuilt parameter array: what any Python
caller pays at least), torch (`y.add_(x, alpha=a)`),
Triton and Numba (`np.row_stack = np.vstack` first, for Numba on numpy 2), each with its own
stream synchronize. Peers that are missing print as "-". Timings only: no assertions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import goldy_import as gi

RUST = """
use goldy::gpu;
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn saxpy(x: &[f32], y: &mut [f32], a: f32) {
    let i = gpu::global_id().x;
    if i < y.len() { y[i] = a * x[i] + y[i]; }
}
"""
CUDA_SAXPY = r"""
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""


# benchmarks/host_stub.py counts CPU time and takes the best repeat instead (a shared machine's other load)
clock, summary = time.perf_counter, statistics.median


def per_call_us(fn, loops: int, reps: int, per: int = 1, warm: int = 3) -> float:
    """Median over `reps` of the time of `loops` calls of `fn`, per call and per `per`."""
    for _ in range(warm):
        fn()
    times = []
    for _ in range(reps):
        t0 = clock()
        for _ in range(loops):
            fn()
        times.append((clock() - t0) / loops / per * 1e6)
    return summary(times)


def goldy_rows(args) -> dict:
    dev = gi.Device(args.backend)
    mod = gi.load_source(RUST, "host_overhead.rs")
    pk = mod.saxpy.prepare(dev)
    n, rng = args.n, np.random.default_rng(0)
    x0, y0 = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    x, y = dev.buffer(x0), dev.buffer(y0)
    pk.launch(x, y, 0.5).over_1d(n)
    if getattr(args, "check", True):  # (benchmarks/host_stub.py runs nothing: nothing to check)
        assert np.array_equal(y.numpy(), np.float32(0.5) * x0 + y0), "eager saxpy disagrees with numpy"
    rows: dict = {"device": dev.describe(), "backend": dev.backend_name}
    burst, loops, reps = args.burst, args.loops, args.reps

    def launch_wait():
        pk.launch(x, y, 0.5).over_1d(n)
        dev.synchronize()

    def queued():
        for _ in range(burst):
            pk.launch(x, y, 0.5).over_1d(n)
        dev.synchronize()

    one = gi.Scheme(dev)
    pk.record(one, "one", x, y, 0.5).over_1d(n)

    def fresh():
        s = gi.Scheme(dev)
        pk.record(s, "fresh", x, y, 0.5).over_1d(n)
        s.submit()

    many = gi.Scheme(dev)
    for i in range(100):
        pk.record(many, f"n{i}", x, y, 0.5).over_1d(n)

    def replay_async():
        for _ in range(burst // 10 or 1):
            many.submit(wait=False)
        dev.synchronize()

    cases = {  # row: (the timed call, calls per repeat, dispatches per call)
        "launch + wait": (launch_wait, loops, 1),
        "queued launch": (queued, max(1, loops // burst), burst),
        "1-node submit": (one.submit, loops, 1),
        "fresh Scheme + record + submit": (fresh, loops, 1),
        "replayed Scheme, per dispatch (100 nodes)": (many.submit, max(1, loops // 20), 100),
        "replayed Scheme, per dispatch (100 nodes, wait=False)": (replay_async, max(1, loops // 50),
                                                                   100 * (burst // 10 or 1)),
    }
    measure = getattr(args, "measure", None) or (lambda fn, n, per: per_call_us(fn, n, reps, per=per))
    only = getattr(args, "only", None)  # one row (benchmarks/host_stub.py --profile)
    for row, (fn, calls, per) in cases.items():
        if only is None or row == only:
            rows[row] = measure(fn, calls, per)
    dev.close()
    return rows


def cupy_rows(args) -> dict:
    import cupy as cp
    k = cp.RawKernel(CUDA_SAXPY, "saxpy")
    n = args.n
    x, y = cp.random.standard_normal(n, dtype=cp.float32), cp.random.standard_normal(n, dtype=cp.float32)
    grid, a, nn = ((n + 255) // 256,), np.float32(0.5), np.uint32(n)
    stream = cp.cuda.get_current_stream()
    return _peer(args, lambda: k(grid, (256,), (x, y, a, nn)), stream.synchronize)


def driver_rows(args) -> dict:
    """The floor for any Python caller: cuda-python's cuLaunchKernel of CuPy's compiled
    saxpy with a prebuilt parameter array, nothing else per call."""
    import ctypes

    import cupy as cp

    from goldy_import.runtime.cuda import _driver
    drv = _driver()
    k = cp.RawKernel(CUDA_SAXPY, "saxpy")
    n = args.n
    x, y = cp.random.standard_normal(n, dtype=cp.float32), cp.random.standard_normal(n, dtype=cp.float32)
    vals = [ctypes.c_void_p(x.data.ptr), ctypes.c_void_p(y.data.ptr), ctypes.c_float(0.5), ctypes.c_uint(n)]
    params = (ctypes.c_void_p * 4)(*[ctypes.addressof(v) for v in vals])
    fn, stream = drv.CUfunction(k.kernel.ptr), cp.cuda.get_current_stream()
    st, gx, addr = drv.CUstream(stream.ptr), (n + 255) // 256, ctypes.addressof(params)
    return _peer(args, lambda: drv.cuLaunchKernel(fn, gx, 1, 1, 256, 1, 1, 0, st, addr, 0), stream.synchronize)


def torch_rows(args) -> dict:
    import torch
    x, y = torch.randn(args.n, device="cuda"), torch.randn(args.n, device="cuda")
    return _peer(args, lambda: y.add_(x, alpha=0.5), torch.cuda.synchronize)


def triton_rows(args) -> dict:
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def saxpy_t(x, y, a, n, BLOCK: tl.constexpr):
        o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        m = o < n
        tl.store(y + o, a * tl.load(x + o, mask=m) + tl.load(y + o, mask=m), mask=m)

    n = args.n
    x, y = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    grid = ((n + 255) // 256,)
    return _peer(args, lambda: saxpy_t[grid](x, y, 0.5, n, BLOCK=256), torch.cuda.synchronize)


def numba_rows(args) -> dict:
    np.row_stack = np.vstack  # type: ignore[attr-defined]  # numba on numpy 2 still imports it
    from numba import cuda

    @cuda.jit
    def saxpy_n(x, y, a):
        i = cuda.grid(1)
        if i < y.size:
            y[i] = a * x[i] + y[i]

    n = args.n
    x = cuda.to_device(np.random.default_rng(1).standard_normal(n).astype(np.float32))
    y = cuda.to_device(np.random.default_rng(2).standard_normal(n).astype(np.float32))
    blocks = (n + 255) // 256
    return _peer(args, lambda: saxpy_n[blocks, 256](x, y, np.float32(0.5)), cuda.synchronize)


def _peer(args, launch, sync) -> dict:
    burst = args.burst

    def launch_wait():
        launch()
        sync()

    def queued():
        for _ in range(burst):
            launch()
        sync()

    return {"launch + wait": per_call_us(launch_wait, args.loops, args.reps),
            "queued launch": per_call_us(queued, max(1, args.loops // burst), args.reps, per=burst)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--n", type=int, default=1024, help="elements per dispatch (tiny)")
    ap.add_argument("--reps", type=int, default=15)
    ap.add_argument("--loops", type=int, default=1000, help="calls per timed repeat")
    ap.add_argument("--burst", type=int, default=100, help="launches queued before one wait")
    args = ap.parse_args()
    ours = goldy_rows(args)
    print(f"# host overhead per tiny dispatch ({args.n} elements), us, median of {args.reps}: {ours.pop('device')}")
    columns = {"goldy-import": ours}
    if ours.pop("backend") == "cuda":
        for name, fn in (("CuPy RawKernel", cupy_rows), ("driver floor", driver_rows), ("torch", torch_rows), ("Triton", triton_rows),
                         ("Numba", numba_rows)):
            try:
                columns[name] = fn(args)
            except Exception as e:  # a missing or broken peer: its column shows "-"
                print(f"# {name} skipped: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160])
                columns[name] = {}
    print("| per tiny dispatch | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for row in ours:
        cells = [f"{c[row]:.2f}" if row in c else "-" for c in columns.values()]
        print(f"| {row} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
